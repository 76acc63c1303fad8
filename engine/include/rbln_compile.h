/* SPDX-License-Identifier: MIT */
/*
 * rbln-compile: a Hugging Face Llama checkpoint in, a compiled model
 * directory out.
 *
 * The compiled directory holds everything the runtime needs and nothing it
 * has to derive again: rbln_config.json (the compile parameters, resolved
 * and validated), the model's config/tokenizer/template files copied
 * verbatim, and per tensor-parallel rank a weight file laid out for the
 * device kernels and one command-stream program per step shape (prefill and
 * decoder_batch_N).  Documentation/engine-guide.md describes the format.
 *
 * The parameters and their rules are those of the RBLN SDK's
 * RBLNLlamaForCausalLM.from_pretrained(rbln_*=...) (see the tutorials),
 * minus the limits that only exist for the real chip's memory sizes.
 */
#ifndef RBLN_COMPILE_H
#define RBLN_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_compiled_config.h"
#include "rbln_config.h"
#include "rbln_dtype.h"
#include "rbln_error.h"

#define RBLN_MAX_TENSOR_PARALLEL 64

/*
 * What the user asked for.  Zero (or an empty list, or RBLN_TENSOR_UNKNOWN)
 * means "the default", which rbln_compile_resolve() fills in.
 */
struct rbln_compile_options {
	uint32_t tensor_parallel_size;		/* default 1 */
	uint32_t batch_size;			/* default 1 */
	uint32_t max_seq_len;			/* default max_position_embeddings */
	uint32_t kvcache_partition_len;		/* default: none (eager attention) */
	uint32_t kvcache_block_size;		/* default: partition len, else max_seq_len */
	uint32_t kvcache_num_blocks;		/* default: batch_size full sequences */
	uint32_t decoder_batch_sizes[RBLN_MAX_DECODER_BATCHES];
	size_t n_decoder_batch_sizes;		/* default: { batch_size } */
	uint32_t prefill_chunk_size;		/* default 128 */
	enum rbln_dtype dtype;			/* weights; default: the checkpoint's */
	enum rbln_dtype kv_cache_dtype;		/* default float32 */
	enum rbln_quantize quantize;		/* default none */
	enum rbln_matmul_precision matmul_precision;	/* default float32 */
	enum rbln_weight_layout weight_layout;		/* default auto: this host's */
	bool dummy_weights;			/* random weights from config.json alone */
	uint64_t dummy_seed;			/* their seed */
	bool progress;				/* progress bar on stderr (a terminal) */
};

/*
 * Applies the defaults and every rule to `opt` for this model; on success
 * `out` holds the parameters to compile with.  Errors name the parameter
 * by its command-line spelling (--kvcache-partition-len ...).
 */
int rbln_compile_resolve(const struct rbln_llama_config *model,
			 const struct rbln_compile_options *opt,
			 struct rbln_compiled_config *out, struct rbln_error *err);

/*
 * Compiles HF_DIR into OUT_DIR.  Everything is written into a fresh staging
 * directory beside OUT_DIR, moved into place only when complete: OUT_DIR
 * is then the new build, or (after a failure or a kill) still what it was.
 * OUT_DIR may be missing, empty or a compiled model; anything else is
 * refused rather than replaced.
 */
int rbln_compile(const char *hf_dir, const char *out_dir,
		 const struct rbln_compile_options *opt, struct rbln_error *err);

/*
 * Reads and validates DIR/rbln_config.json and DIR/config.json, the
 * compile rules applied again: what the runtime loads.
 */
int rbln_compiled_config_load(const char *dir, struct rbln_compiled_config *cc,
			      struct rbln_error *err);

/*
 * The least ISA minor version (major 1) of a device that runs the programs
 * of cc (config.json included, as rbln_compiled_config_load() gives it):
 * the version the ISA encoder's stream header claims for them as the
 * compiler encodes them (libnpu/isa/isa_encode.h), so 2 (compute opcodes,
 * head-major KV cache, int8 weights), 3 with bf16 MATMUL activations
 * (RBLN_MATMUL_A_BF16).  The encoder's current minor where cc's shape or
 * memory fails.
 */
unsigned int rbln_compiled_isa_minor(const struct rbln_compiled_config *cc);

/* Parses a decoder batch-size list such as "8,4,1" into opt. */
int rbln_compile_parse_batch_sizes(const char *text, struct rbln_compile_options *opt,
				   struct rbln_error *err);

/* "eager" / "flash_attn", as rbln_config.json spells them. */

#endif
