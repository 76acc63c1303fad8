/* SPDX-License-Identifier: MIT */
/*
 * Response bodies, built from what a request produced: KServe generate
 * (one JSON object per response, the vLLM backend's outputs), KServe
 * infer (JSON or binary tensors), OpenAI completions and chat (whole or
 * as stream chunks) and the error objects.  Pure functions of their
 * arguments, so every shape is tested without a server.
 */
#ifndef RBLN_SERVE_RESPONSES_H
#define RBLN_SERVE_RESPONSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "rbln_serving.h"
#include "request.h"
#include "util/strbuf.h"

/* One alternative of a top-logprobs list, its text decoded. */
struct serve_lp_top {
	int32_t id;
	float logprob;
	const char *token;
	size_t token_len;
};

/* The log-probability of one generated token. */
struct serve_lp_entry {
	int32_t id;
	float logprob;
	const char *token;
	size_t token_len;
	const struct serve_lp_top *top;	/* best first */
	size_t n_top;
};

/* What one response says about one sequence ("choice"). */
struct serve_piece {
	size_t index;			/* choice index (OpenAI), row (infer) */
	const char *text;		/* this response's text: a delta when streaming */
	size_t text_len;
	size_t n_tokens;		/* output tokens this response covers */
	const struct serve_lp_entry *lps;	/* their log-probabilities, or NULL */
	size_t n_lps;
	size_t text_offset;		/* where text starts in the sequence's text */
	bool first;			/* the first response of the sequence */
	bool final;			/* the sequence is finished */
	enum rbln_finish_reason reason;	/* when final */
	const char *stop_str;		/* the stop string that ended it, or NULL */
	int32_t stop_token_id;		/* the stop token that ended it, or -1 */
	size_t n_prompt_tokens;
	size_t n_output_tokens;		/* all output tokens so far */
	double cumulative_logprob;	/* over all output tokens so far */
};

/* What every response of a request shares. */
struct serve_resp_ctx {
	const char *model_name;
	const char *model_version;
	const char *id;			/* OpenAI "cmpl-..." id; infer's request id or NULL */
	int64_t created;		/* Unix seconds */
	const struct serve_request *req;
};

/* "stop", "length", "abort"; vLLM's str(None) while not finished. */
const char *serve_finish_reason_name(enum rbln_finish_reason r, bool final);

/* KServe generate: {"model_name", "model_version", "text_output", ...}. */
json_object *serve_generate_json(const struct serve_resp_ctx *c, const struct serve_piece *p);

/*
 * KServe infer: the outputs for the request's pieces (one per prompt, in
 * order), JSON or binary as requested.  *json_len is the length of the JSON
 * part; it equals body->len unless binary outputs follow it.
 */
int serve_infer_body(const struct serve_resp_ctx *c, const struct serve_model_config *cfg,
		     const struct serve_piece *pieces, size_t n, struct rbln_strbuf *body,
		     size_t *json_len);

/* OpenAI usage over the request's sequences. */
struct serve_usage {
	size_t prompt_tokens;
	size_t completion_tokens;
};

/* OpenAI whole responses (text_completion / chat.completion). */
json_object *serve_openai_json(const struct serve_resp_ctx *c, const struct serve_piece *pieces,
			       size_t n, const struct serve_usage *u);
/* One stream chunk for one piece (text_completion / chat.completion.chunk). */
json_object *serve_openai_chunk_json(const struct serve_resp_ctx *c, const struct serve_piece *p);
/* The usage chunk of stream_options.include_usage. */
json_object *serve_openai_usage_chunk_json(const struct serve_resp_ctx *c,
					   const struct serve_usage *u);

/* {"error": msg}: Triton's error body. */
json_object *serve_error_json(const char *msg);
/* {"error": {"message", "type", "param", "code"}}: OpenAI's. */
json_object *serve_openai_error_json(const char *msg, int http_status);

/* Appends the n low bytes of x, little-endian (binary tensor data). */
int serve_put_le(struct rbln_strbuf *b, uint64_t x, size_t n);

/* Compact JSON text of o, appended to sb. */
int serve_json_append(struct rbln_strbuf *sb, json_object *o);

#endif
