/* SPDX-License-Identifier: MIT */
/*
 * Sampling parameters: the one type every part of the engine takes, with
 * its defaults and validation (src/config/sampling_params.c, in the
 * front-end library every front end links).
 */
#ifndef RBLN_SAMPLING_H
#define RBLN_SAMPLING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_error.h"

/* vLLM's default bound on logprobs (--max-logprobs). */
#define RBLN_SAMPLING_MAX_LOGPROBS 20
/* stop_token_ids a request may give (the runtime masks them every step). */
#define RBLN_SAMPLING_MAX_STOP_IDS 64

/* One bad word, already tokenized (the serving layer tokenizes it). */
struct rbln_token_seq {
	const int32_t *ids;
	size_t len;
};

/*
 * What to sample and when to stop: vLLM's SamplingParams (the reference
 * the tutorials' clients assume), the one type of the whole engine (the
 * serving API, the runtime, the sampler, the command-line tools).
 * Pointers are borrowed by the call that takes the params
 * (rbln_serving_ops.submit(), rbln_runtime_add(), rbln_sampler_new());
 * each copies what it keeps.
 */
struct rbln_sampling_params {
	double temperature;		/* >= 0; 0 = greedy (argmax), as in vLLM */
	int32_t top_k;			/* 0 or -1 = off, else >= 1 */
	double top_p;			/* (0, 1]; 1 = off */
	double min_p;			/* [0, 1]; 0 = off */
	double repetition_penalty;	/* > 0; 1 = off (prompt and output tokens) */
	double presence_penalty;	/* [-2, 2]; 0 = off (output tokens) */
	double frequency_penalty;	/* [-2, 2]; 0 = off (output tokens) */
	bool has_seed;			/* same seed, same tokens */
	uint64_t seed;
	int64_t max_tokens;		/* >= 1, or -1: until max_model_len (max_seq_len) */
	int64_t min_tokens;		/* EOS and stop_token_ids masked before this many */
	bool ignore_eos;		/* do not stop at the model's EOS ids */
	const int32_t *stop_token_ids;	/* extra ids that end the sequence (at most 64) */
	size_t n_stop_token_ids;

	/* Applied around the runtime (rbln-serve: the logits hook, its events). */
	const struct rbln_token_seq *bad_words;	/* sequences never to complete */
	size_t n_bad_words;
	int32_t logprobs;		/* -1 = none; 0 = the sampled token's; k: plus top k */

	/* Read by the serving layer's text stream, not by the engine. */
	const char *const *stop;	/* stop strings, matched on the decoded text */
	size_t n_stop;
	bool include_stop_str_in_output;
	bool skip_special_tokens;	/* leave special tokens out of the text */
};

/* Fields, for error messages that use the name the client sent. */
enum rbln_sampling_field {
	RBLN_SP_TEMPERATURE,
	RBLN_SP_TOP_K,
	RBLN_SP_TOP_P,
	RBLN_SP_MIN_P,
	RBLN_SP_REPETITION_PENALTY,
	RBLN_SP_PRESENCE_PENALTY,
	RBLN_SP_FREQUENCY_PENALTY,
	RBLN_SP_SEED,
	RBLN_SP_MAX_TOKENS,
	RBLN_SP_MIN_TOKENS,
	RBLN_SP_STOP_TOKEN_IDS,
	RBLN_SP_BAD_WORDS,
	RBLN_SP_LOGPROBS,
	RBLN_SP_STOP,
	RBLN_SP_FIELD_COUNT,
};

/* What the validation checks against. */
struct rbln_sampling_limits {
	int64_t vocab_size;		/* token ids must be below it */
	int64_t max_model_len;		/* max_tokens above it can never be reached */
	int32_t max_logprobs;		/* RBLN_SAMPLING_MAX_LOGPROBS unless configured */
};

/*
 * vLLM's defaults: temperature 1, no truncation, no penalties, no
 * logprobs, max_tokens -1 (the caller's length bound), special tokens
 * left out of the text.
 */
void rbln_sampling_params_init(struct rbln_sampling_params *p);

/* The canonical (vLLM) name of a field. */
const char *rbln_sampling_field_name(enum rbln_sampling_field f);

/*
 * Checks every field; the first bad one gives -EINVAL and a message naming
 * it ("field 'top_p' must be in (0, 1], got 1.5").  names[f], when names and
 * the entry are non-NULL, replaces the canonical name (a client that sent
 * TensorRT-LLM's "random_seed" reads about "random_seed").
 */
int rbln_sampling_params_validate(const struct rbln_sampling_params *p,
				  const struct rbln_sampling_limits *lim,
				  const char *const *names, struct rbln_error *err);

/* Greedy: the logits' argmax is the whole answer (no penalty can change it). */
bool rbln_sampling_params_is_greedy(const struct rbln_sampling_params *p);
/* Whether sampling needs the full logits (penalties, masks, randomness). */
bool rbln_sampling_params_need_logits(const struct rbln_sampling_params *p);

#endif
