/* SPDX-License-Identifier: MIT */
/*
 * An HTTP generation request, parsed but not yet tokenized: the prompt(s),
 * the sampling options and what the response must contain.  One struct
 * for the four generating endpoints (KServe generate and infer, OpenAI
 * completions and chat); each parser fills the parts its API has.  Parsers
 * need no tokenizer and no engine, so every request body can be tested.
 */
#ifndef RBLN_SERVE_REQUEST_H
#define RBLN_SERVE_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_error.h"
#include "serve/repository/model_config.h"
#include "serve/repository/params.h"

enum serve_api {
	SERVE_API_GENERATE,	/* POST v2/models/M/generate[_stream] */
	SERVE_API_INFER,	/* POST v2/models/M/infer */
	SERVE_API_COMPLETIONS,	/* POST v1/completions */
	SERVE_API_CHAT,		/* POST v1/chat/completions */
};

struct serve_prompt {
	char *text;		/* NULL when the prompt came as token ids */
	int32_t *ids;
	size_t n_ids;
};

/* An output an infer request asked for. */
struct serve_infer_output {
	const struct serve_tensor *tensor;	/* in the model configuration */
	bool binary;				/* binary tensor data extension */
};

struct serve_request {
	enum serve_api api;
	struct serve_gen_options opts;
	struct serve_prompt *prompts;
	size_t n_prompts;
	size_t n;			/* sequences per prompt (OpenAI n) */
	bool sse;			/* the response is a server-sent event stream */
	bool stream;			/* output in pieces as it is generated */
	int64_t timeout_us;		/* 0 = the model's default */
	char *id;			/* the request's "id" (KServe), echoed back */

	/* KServe (generate, infer) */
	bool prepend_input;		/* vLLM backend: not exclude_input_in_output */
	bool ret_finish_reason;
	bool ret_cumulative_logprob;
	bool ret_logprobs;
	bool ret_num_input_tokens;
	bool ret_num_output_tokens;

	/* infer */
	int64_t prompt_shape[SERVE_MAX_DIMS];	/* shape of the prompt tensor */
	size_t prompt_rank;
	struct serve_infer_output *outputs;	/* requested (NULL: the defaults) */
	size_t n_outputs;
	bool binary_output;		/* parameters.binary_data_output */

	/* OpenAI */
	char *model;			/* "model" (NULL: the only model served) */
	bool echo;			/* completions: prompt before the text */
	bool include_usage;		/* stream_options.include_usage */
	bool add_special_tokens;	/* BOS when tokenizing the prompt */
	bool chat_logprobs;		/* chat: logprobs: true */
	char *messages_json;		/* chat: messages, normalized, as JSON text */
	char *chat_kwargs_json;		/* chat_template_kwargs, or NULL */
	bool add_generation_prompt;
	bool continue_final_message;
};

void serve_request_free(struct serve_request *r);

/*
 * KServe generate, with the vLLM backend's and TensorRT-LLM's inputs
 * (text_input, stream, sampling_parameters, exclude_input_in_output,
 * return_*, max_tokens, stop_words, bad_words, end_id, ...), top level or
 * in "parameters".  stream_endpoint: generate_stream.
 */
int serve_parse_generate(const struct serve_model_config *cfg, const char *body, size_t len,
			 bool stream_endpoint, struct serve_request *r, struct rbln_error *err);

/*
 * KServe infer: JSON tensors, or the binary tensor data extension when
 * json_len < len (Inference-Header-Content-Length).
 */
int serve_parse_infer(const struct serve_model_config *cfg, const char *body, size_t len,
		      size_t json_len, struct serve_request *r, struct rbln_error *err);

/* OpenAI /v1/completions and /v1/chat/completions (with vLLM's extra fields). */
int serve_parse_completions(const char *body, size_t len, struct serve_request *r,
			    struct rbln_error *err);
int serve_parse_chat(const char *body, size_t len, struct serve_request *r,
		     struct rbln_error *err);

#endif
