/* SPDX-License-Identifier: MIT */
/*
 * A parsed request made ready for the engine: defaults applied (the
 * model's generation_config.json, as vLLM's --generation-config auto), the
 * chat template rendered, prompts and bad words tokenized, lengths checked
 * against max_model_len, and the sampling parameters validated.  Every
 * failure here is the client's (HTTP 400) and names the field or numbers.
 */
#ifndef RBLN_SERVE_REQUEST_BUILD_H
#define RBLN_SERVE_REQUEST_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_chat.h"
#include "rbln_serving.h"
#include "rbln_tokenizer.h"
#include "request.h"

/* Sampling defaults a model ships in generation_config.json (present fields only). */
struct serve_gen_defaults {
	bool has_temperature, has_top_p, has_top_k, has_min_p, has_repetition_penalty;
	bool has_max_new_tokens;
	double temperature, top_p, min_p, repetition_penalty;
	int64_t top_k, max_new_tokens;
};

/* Reads DIR/generation_config.json if there is one. */
int serve_gen_defaults_load(const char *dir, struct serve_gen_defaults *d,
			    struct rbln_error *err);

/* What building needs to know about the model. */
struct serve_model_text {
	const char *name;
	const struct rbln_tokenizer *tok;
	const struct rbln_chat_template *chat;	/* NULL: the model has none */
	struct serve_gen_defaults defaults;
	int64_t max_model_len;
	int64_t vocab_size;
	int32_t max_logprobs;
	size_t longest_token;	/* bytes of the longest token string (serve_longest_token) */
};

/*
 * The longest token string of the vocabulary, in bytes.  A token covers at
 * most that many bytes of (normalized) text, so a prompt of more than
 * max_model_len * longest_token bytes cannot fit: it is refused before it
 * is tokenized, which bounds the time a request can spend in the tokenizer.
 */
size_t serve_longest_token(const struct rbln_tokenizer *tok);

struct serve_built_prompt {
	int32_t *ids;
	size_t n_ids;
	char *text;		/* the prompt as text (for echo and prepending) */
};

struct serve_built {
	struct serve_built_prompt *prompts;	/* one per request prompt */
	size_t n_prompts;
	struct rbln_sampling_params sp;		/* final; points into this and the request */
	struct rbln_token_seq *bad_words;
	size_t n_bad_words;
	int32_t *stop_ids;			/* stop_token_ids plus TensorRT-LLM's end_id */
	size_t n_stop_ids;
};

/*
 * Builds r for the model.  The request stays borrowed (sp.stop points into
 * r->opts), so r must outlive b.
 */
int serve_request_build(const struct serve_model_text *m, struct serve_request *r,
			struct serve_built *b, struct rbln_error *err);
void serve_built_free(struct serve_built *b);

#endif
