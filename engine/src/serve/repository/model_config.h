/* SPDX-License-Identifier: MIT */
/*
 * A Triton model configuration (config.pbtxt) read for serving an LLM: the
 * whole file is checked against ModelConfig's schema, then the parts
 * rbln-serve acts on are taken out: name, backend, batching, the inputs
 * and outputs and what each one means, queue policy, version policy.
 */
#ifndef RBLN_SERVE_MODEL_CONFIG_H
#define RBLN_SERVE_MODEL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "rbln_error.h"

#define SERVE_MAX_DIMS 8

/* What an input tensor (or generate request key) means. */
enum serve_io_role {
	SERVE_IN_PROMPT,		/* the text to continue (text_input, prompt, ...) */
	SERVE_IN_STREAM,
	SERVE_IN_SAMPLING_PARAMETERS,	/* JSON string of vLLM SamplingParams */
	SERVE_IN_EXCLUDE_INPUT,		/* exclude_input_in_output */
	SERVE_IN_RETURN_FINISH_REASON,
	SERVE_IN_RETURN_CUMULATIVE_LOGPROB,
	SERVE_IN_RETURN_LOGPROBS,
	SERVE_IN_RETURN_NUM_INPUT_TOKENS,
	SERVE_IN_RETURN_NUM_OUTPUT_TOKENS,
	SERVE_IN_PARAM,			/* a sampling parameter (max_tokens, top_k, ...) */
	SERVE_OUT_TEXT,			/* the generated text (text_output, generated_text) */
	SERVE_OUT_FINISH_REASON,
	SERVE_OUT_CUMULATIVE_LOGPROB,
	SERVE_OUT_LOGPROBS,
	SERVE_OUT_NUM_INPUT_TOKENS,
	SERVE_OUT_NUM_OUTPUT_TOKENS,
};

/* Triton data types as KServe v2 names them ("BYTES" for TYPE_STRING). */
enum serve_dtype {
	SERVE_DT_INVALID,
	SERVE_DT_BOOL,
	SERVE_DT_UINT8, SERVE_DT_UINT16, SERVE_DT_UINT32, SERVE_DT_UINT64,
	SERVE_DT_INT8, SERVE_DT_INT16, SERVE_DT_INT32, SERVE_DT_INT64,
	SERVE_DT_FP16, SERVE_DT_FP32, SERVE_DT_FP64,
	SERVE_DT_BYTES,
	SERVE_DT_BF16,
};

struct serve_tensor {
	char *name;
	enum serve_dtype dtype;
	int64_t dims[SERVE_MAX_DIMS];	/* -1 = any size */
	size_t n_dims;
	bool optional;
	enum serve_io_role role;
	int line;			/* in config.pbtxt */
};

enum serve_version_policy {
	SERVE_VERSIONS_LATEST,
	SERVE_VERSIONS_ALL,
	SERVE_VERSIONS_SPECIFIC,
};

struct serve_model_config {
	char *file;			/* path, for messages */
	char *name;
	char *backend;			/* "vllm", "rbln", "python" */
	char *platform;
	int32_t max_batch_size;		/* 0: no batch dimension */
	struct serve_tensor *inputs;
	size_t n_inputs;
	struct serve_tensor *outputs;
	size_t n_outputs;
	size_t prompt_input;		/* index in inputs */
	size_t text_output;		/* index in outputs */
	bool decoupled;
	uint32_t max_queue_size;	/* dynamic_batching.default_queue_policy; 0 = unset */
	uint64_t default_timeout_us;	/* same place; 0 = none */
	bool exclude_input_default;	/* parameters { key: "exclude_input_in_output" } */
	enum serve_version_policy version_policy;
	uint32_t latest_versions;	/* LATEST: how many */
	int64_t *versions;		/* SPECIFIC */
	size_t n_versions;
	json_object *json;		/* the configuration as GET .../config prints it */
};

/*
 * Parses config.pbtxt text.  dir_name is the model directory's name: the
 * config's name must match it (or be absent, then it is taken from it).
 * Errors read "PATH:LINE: ..." and name the field.
 */
int serve_model_config_parse(const char *text, size_t len, const char *path,
			     const char *dir_name, struct serve_model_config *cfg,
			     struct rbln_error *err);
int serve_model_config_load(const char *path, const char *dir_name,
			    struct serve_model_config *cfg, struct rbln_error *err);

/*
 * The configuration of `rbln-serve --model PATH`: the inputs and outputs of
 * Triton's vLLM backend (text_input, stream, sampling_parameters,
 * exclude_input_in_output, return_*; text_output), everything optional
 * except text_input.
 */
int serve_model_config_default(const char *name, struct serve_model_config *cfg,
			       struct rbln_error *err);

void serve_model_config_free(struct serve_model_config *cfg);

/* Lookups by name; NULL when absent. */
const struct serve_tensor *serve_model_input(const struct serve_model_config *cfg,
					     const char *name);
const struct serve_tensor *serve_model_output(const struct serve_model_config *cfg,
					      const char *name);

/* KServe name ("BYTES", "INT32", ...) of a data type, and back (INVALID if unknown). */
const char *serve_dtype_name(enum serve_dtype t);
enum serve_dtype serve_dtype_from_name(const char *name);
/* Bytes per element, 0 for BYTES and INVALID. */
size_t serve_dtype_size(enum serve_dtype t);

#endif
