/* SPDX-License-Identifier: MIT */
/*
 * Where a served model's files are and how it is to be loaded: model.json's
 * "model" resolved (absolute, or relative to the version directory as in the
 * RBLN tutorial), a compiled directory told from a Hugging Face one, the
 * compiled rbln_config.json read, and model.json checked against it, with
 * the defaults filled in.  The result is everything the engine's open()
 * needs (struct rbln_serving_model_spec).
 */
#ifndef RBLN_SERVE_MODEL_SOURCE_H
#define RBLN_SERVE_MODEL_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model_json.h"
#include "rbln_compiled_config.h"
#include "rbln_error.h"
#include "rbln_fingerprint.h"
#include "rbln_serving.h"

enum serve_source_kind {
	SERVE_SRC_COMPILED,	/* holds rbln_config.json */
	SERVE_SRC_HF,		/* config.json + safetensors: compiled on first load */
};

struct serve_model_plan {
	enum serve_source_kind kind;
	char *source_dir;	/* model.json "model", resolved */
	char *compiled_dir;	/* source_dir, or where an HF model is compiled to */
	char *tokenizer_dir;	/* tokenizer.json and the chat template */
	struct rbln_compiled_config compiled;	/* rbln_config.json, keys present */
	int64_t max_position_embeddings;	/* HF: from config.json */
	/* effective engine arguments */
	uint32_t max_num_seqs;
	uint32_t max_num_batched_tokens;
	uint32_t max_model_len;
	uint32_t block_size;		/* 0 = as compiled */
	uint32_t tensor_parallel_size;	/* 0 = as compiled */
	bool has_seed;
	uint64_t seed;
	int32_t max_logprobs;
	/* HF: rbln_checkpoint_fingerprint() of source_dir, the cache's key */
	char fingerprint[RBLN_FINGERPRINT_LEN + 1];
};

/*
 * Resolves and classifies model.json's model, fills the defaults and, for a
 * compiled model, checks model.json against rbln_config.json.  version_dir
 * anchors relative paths.
 */
int serve_model_plan(const struct serve_model_json *mj, const char *version_dir,
		     struct serve_model_plan *plan, struct rbln_error *err);

/*
 * After an HF model was compiled: reads the output's rbln_config.json and
 * applies the same checks as for a compiled model.
 */
int serve_model_plan_compiled(const struct serve_model_json *mj, struct serve_model_plan *plan,
			      struct rbln_error *err);

void serve_model_plan_free(struct serve_model_plan *plan);

/* The engine's open() arguments of a plan (pointers into plan). */
void serve_model_plan_spec(const struct serve_model_plan *plan, const char *name,
			   uint32_t max_waiting, struct rbln_serving_model_spec *spec);

/*
 * THE place where rbln-serve compiles a Hugging Face checkpoint on its
 * first load (model_compile.c): calls the engine's compiler through
 * ops->compile into plan->compiled_dir, unless a compilation with the same
 * arguments is already there.
 */
int serve_compile_on_first_load(const struct rbln_serving_ops *ops,
				const struct serve_model_json *mj, struct serve_model_plan *plan,
				struct rbln_error *err);

#endif
