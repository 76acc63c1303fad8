/* SPDX-License-Identifier: MIT */
/*
 * Sampling the next token from a row of logits, with vLLM's semantics
 * (SamplingParams): penalties on the raw logits, then temperature, top_k,
 * top_p and min_p, then a draw from the remaining distribution with a
 * per-sequence random generator.  temperature 0 is greedy (argmax, lowest
 * id on ties), as in vLLM.  The same seed gives the same tokens.
 *
 * Stop strings are text and live with the detokenizer (rbln_stop.h).
 */
#ifndef RBLN_SAMPLE_H
#define RBLN_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_error.h"

#define RBLN_SAMPLE_MAX_STOP_IDS 64

struct rbln_sample_params {
	double temperature;		/* >= 0; 0 = greedy */
	int32_t top_k;			/* <= 0: off */
	double top_p;			/* (0, 1]; 1 = off */
	double min_p;			/* [0, 1]; 0 = off */
	double repetition_penalty;	/* > 0; 1 = off; prompt and output tokens */
	double presence_penalty;	/* [-2, 2]; output tokens */
	double frequency_penalty;	/* [-2, 2]; output tokens */
	bool has_seed;
	uint64_t seed;
	int64_t max_tokens;		/* >= 1, or -1: until max_seq_len */
	int64_t min_tokens;		/* EOS and stop ids masked before this many */
	bool ignore_eos;
	int32_t stop_token_ids[RBLN_SAMPLE_MAX_STOP_IDS];
	size_t n_stop_token_ids;
};

/* vLLM's defaults: temperature 1, nothing else, max_tokens 16. */
void rbln_sample_params_default(struct rbln_sample_params *p);
/* Checks ranges; token ids against vocab_size.  Messages name the field. */
int rbln_sample_params_check(const struct rbln_sample_params *p, int64_t vocab_size,
			     struct rbln_error *err);
/* Greedy: the logits' argmax is the whole answer (no penalty can change it). */
bool rbln_sample_params_is_greedy(const struct rbln_sample_params *p);
/* Whether sampling needs the full logits (penalties, masks, randomness). */
bool rbln_sample_params_need_logits(const struct rbln_sample_params *p);

/* One sequence's sampler: its generator and the token counts penalties use. */
struct rbln_sampler;

int rbln_sampler_new(const struct rbln_sample_params *p, const int32_t *prompt, size_t n_prompt,
		     struct rbln_sampler **out);
void rbln_sampler_free(struct rbln_sampler *s);
/*
 * Picks the next token from logits[vocab] (modified in place) given the
 * output so far (n_output tokens; mask_ids, when n_output < min_tokens, are
 * made impossible), and records it for the penalties.
 */
int32_t rbln_sampler_next(struct rbln_sampler *s, float *logits, size_t vocab,
			  const int32_t *mask_ids, size_t n_mask, size_t n_output);
/* Records a token chosen elsewhere (e.g. by the device's ARGMAX). */
void rbln_sampler_accept(struct rbln_sampler *s, int32_t id);

/* argmax with the lowest id on ties; NaN counts above everything, as ARGMAX. */
size_t rbln_argmax(const float *x, size_t n);

#endif
