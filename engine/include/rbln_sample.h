/* SPDX-License-Identifier: MIT */
/*
 * Sampling the next token from a row of logits, with vLLM's semantics
 * (SamplingParams): penalties on the raw logits, then temperature, top_k,
 * top_p and min_p, then a draw from the remaining distribution with a
 * per-sequence random generator.  temperature 0 is greedy (argmax, lowest
 * id on ties), as in vLLM.  The same seed gives the same tokens.
 *
 * The parameters are struct rbln_sampling_params (rbln_sampling.h).  Stop
 * strings are text and live with the detokenizer (rbln_stop.h).
 */
#ifndef RBLN_SAMPLE_H
#define RBLN_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_error.h"
#include "rbln_sampling.h"

/* One sequence's sampler: its generator and the token counts penalties use. */
struct rbln_sampler;

/* Keeps the numbers of p (its pointers are not used after the call). */
int rbln_sampler_new(const struct rbln_sampling_params *p, const int32_t *prompt,
		     size_t n_prompt, struct rbln_sampler **out);
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
