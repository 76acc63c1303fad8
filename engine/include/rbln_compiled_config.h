/* SPDX-License-Identifier: MIT */
/*
 * rbln_config.json: what a compile resolved and recorded, and the one
 * reader of the file. Its home is the front-end library, which every
 * front end links (rbln-serve checks model.json against it without
 * linking the compiler or the runtime); rbln_compile.h builds on it.
 */
#ifndef RBLN_COMPILED_CONFIG_H
#define RBLN_COMPILED_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_config.h"
#include "rbln_dtype.h"
#include "rbln_error.h"

#define RBLN_MAX_DECODER_BATCHES 16
/* rbln_config.json "format": bumped on any incompatible change. */
#define RBLN_COMPILED_FORMAT 1
/*
 * A compile's staging directory beside OUT_DIR is ".<OUT_DIR's name>" + this
 * + six random characters; it only ever holds an unfinished build.
 */
#define RBLN_COMPILE_PARTIAL_TAG ".rbln-partial-"

/*
 * Weight quantisation (--quantize, rbln_config.json "quantize"): w8a16
 * stores every MATMUL's weights (attention, MLP, lm_head) as int8 with one
 * float32 scale per output channel (absmax / 127, rounded to nearest);
 * activations stay float32, the embedding table and norms in dtype.
 */
enum rbln_quantize {
	RBLN_QUANT_NONE,
	RBLN_QUANT_W8A16,
};

/*
 * The precision of the activations MATMUL multiplies (--matmul-precision,
 * rbln_config.json "matmul_precision"). bf16 sets RBLN_MATMUL_A_BF16 on
 * every MATMUL of the programs: the device may round each activation to
 * bfloat16 (a relative error of at most 2^-8: bfloat16 keeps 8
 * significant bits) and use its bfloat16 dot-product units; products, sums
 * and everything else stay float32. The programs then need a device of
 * ISA 1.3.
 */
enum rbln_matmul_precision {
	RBLN_MATMUL_F32,
	RBLN_MATMUL_BF16,
};

/*
 * How the matrices of weights.bin are laid out (--weight-layout,
 * rbln_config.json "weight_layout"): "spaced", MATMUL's
 * RBLN_LAYOUT_PACKED16_SPACED (a gap of RBLN_ISA_PANEL_GAP bytes after
 * every 16-column panel, which lets the panels the engines stream side by
 * side spread over the memory's banks; needs an ISA 1.4 device), or
 * "packed16", RBLN_LAYOUT_PACKED16 (no gaps; what directories compiled
 * before the key existed have). "auto", the compile options' default and
 * never a compiled value, is the one the emulated devices stream faster on
 * the compiling host's CPU (rbln_compile_resolve()).
 */
enum rbln_weight_layout {
	RBLN_WEIGHTS_AUTO,
	RBLN_WEIGHTS_SPACED,
	RBLN_WEIGHTS_PACKED16,
};

enum rbln_attn_impl {
	RBLN_ATTN_EAGER,	/* one KV partition of max_seq_len; block = max_seq_len */
	RBLN_ATTN_FLASH,	/* partitions of kvcache_partition_len; block = partition */
};

/* The resolved parameters: what rbln_config.json records. */
struct rbln_compiled_config {
	uint32_t format;
	uint32_t tensor_parallel_size;
	uint32_t batch_size;
	uint32_t max_seq_len;
	enum rbln_attn_impl attn_impl;
	uint32_t kvcache_partition_len;		/* max_seq_len in eager mode */
	uint32_t kvcache_block_size;
	uint32_t kvcache_num_blocks;
	uint32_t decoder_batch_sizes[RBLN_MAX_DECODER_BATCHES];	/* descending */
	size_t n_decoder_batch_sizes;
	uint32_t prefill_chunk_size;
	enum rbln_dtype dtype;
	enum rbln_dtype kv_cache_dtype;
	enum rbln_quantize quantize;
	enum rbln_matmul_precision matmul_precision;
	enum rbln_weight_layout weight_layout;
	bool dummy_weights;
	uint64_t compile_id;			/* ties the files of one compile together */
	struct rbln_llama_config model;		/* config.json as compiled */
};

enum rbln_compiled_keys {
	/* Every key this engine's compiler writes; format and model_type checked. */
	RBLN_COMPILED_ALL_KEYS,
	/*
	 * The keys of the programs' shape that are present (batch_size,
	 * max_seq_len, tensor_parallel_size, kvcache_*, prefill_chunk_size,
	 * decoder_batch_sizes), absent ones read as 0: a directory compiled by
	 * the RBLN SDK, which rbln-serve checks model.json against.
	 */
	RBLN_COMPILED_KEYS_PRESENT,
};

/*
 * DIR/rbln_config.json as recorded: no rule applied, config.json not read
 * (cc->model stays zero).  The one parser of the file (the front-end
 * library's; rbln_compiled_config_load() builds on it).
 */
int rbln_compiled_config_read(const char *dir, enum rbln_compiled_keys keys,
			      struct rbln_compiled_config *cc, struct rbln_error *err);

const char *rbln_attn_impl_name(enum rbln_attn_impl a);
/* "none" or "w8a16", as rbln_config.json and --quantize spell them. */
const char *rbln_quantize_name(enum rbln_quantize q);
/* Parses that spelling; -EINVAL for anything else. */
int rbln_quantize_parse(const char *s, enum rbln_quantize *q);
/* "float32" or "bf16", as rbln_config.json and --matmul-precision spell them. */
const char *rbln_matmul_precision_name(enum rbln_matmul_precision p);
/* Parses that spelling; -EINVAL for anything else. */
int rbln_matmul_precision_parse(const char *s, enum rbln_matmul_precision *p);
/* "spaced" or "packed16", as rbln_config.json and --weight-layout spell them. */
const char *rbln_weight_layout_name(enum rbln_weight_layout l);
/* Parses that spelling; -EINVAL for anything else. */
int rbln_weight_layout_parse(const char *s, enum rbln_weight_layout *l);

#endif
