/* SPDX-License-Identifier: MIT */
/*
 * <model>/<version>/model.json: the vLLM engine arguments of Triton's vLLM
 * backend, as the RBLN tutorial writes them (model, max_num_seqs,
 * max_num_batched_tokens, max_model_len, block_size, device "rbln", ...).
 * Each field is checked on its own here; checks against the compiled model
 * (max_num_seqs equals the compiled batch size, ...) come once the model
 * directory is known (model_check.c).
 */
#ifndef RBLN_SERVE_MODEL_JSON_H
#define RBLN_SERVE_MODEL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_error.h"

struct serve_model_json {
	char *file;			/* path, for messages */
	char *model;			/* as written: absolute, or relative to the version dir */
	char *tokenizer;		/* NULL: the model directory */
	int64_t max_num_seqs;		/* 0 = not given (taken from the compiled model) */
	int64_t max_num_batched_tokens;
	int64_t max_model_len;
	int64_t block_size;
	int64_t tensor_parallel_size;
	char *device;			/* "rbln" (or "auto") */
	char *dtype;			/* NULL or "auto", "bfloat16", ... */
	bool has_seed;
	int64_t seed;
	int64_t max_logprobs;		/* 0 = default (20) */
	bool disable_log_requests;
	bool disable_log_stats;
};

/* Parses model.json text; `path` names the file in errors. */
int serve_model_json_parse(const char *text, size_t len, const char *path,
			   struct serve_model_json *mj, struct rbln_error *err);
int serve_model_json_load(const char *path, struct serve_model_json *mj,
			  struct rbln_error *err);
void serve_model_json_free(struct serve_model_json *mj);

#endif
