// SPDX-License-Identifier: MIT
/*
 * Defaults and validation of struct rbln_sampling_params, the one
 * sampling type of the engine.  The rules are vLLM's SamplingParams
 * checks, so a request vLLM accepts is accepted here and one it rejects is
 * rejected with the same field named.
 */
#include "rbln_sampling.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const field_names[RBLN_SP_FIELD_COUNT] = {
	[RBLN_SP_TEMPERATURE] = "temperature",
	[RBLN_SP_TOP_K] = "top_k",
	[RBLN_SP_TOP_P] = "top_p",
	[RBLN_SP_MIN_P] = "min_p",
	[RBLN_SP_REPETITION_PENALTY] = "repetition_penalty",
	[RBLN_SP_PRESENCE_PENALTY] = "presence_penalty",
	[RBLN_SP_FREQUENCY_PENALTY] = "frequency_penalty",
	[RBLN_SP_SEED] = "seed",
	[RBLN_SP_MAX_TOKENS] = "max_tokens",
	[RBLN_SP_MIN_TOKENS] = "min_tokens",
	[RBLN_SP_STOP_TOKEN_IDS] = "stop_token_ids",
	[RBLN_SP_BAD_WORDS] = "bad_words",
	[RBLN_SP_LOGPROBS] = "logprobs",
	[RBLN_SP_STOP] = "stop",
};

void rbln_sampling_params_init(struct rbln_sampling_params *p)
{
	memset(p, 0, sizeof(*p));
	p->temperature = 1.0;
	p->top_k = -1;
	p->top_p = 1.0;
	p->min_p = 0.0;
	p->repetition_penalty = 1.0;
	p->max_tokens = -1;
	p->logprobs = -1;
	p->skip_special_tokens = true;
}

const char *rbln_sampling_field_name(enum rbln_sampling_field f)
{
	if ((unsigned)f >= RBLN_SP_FIELD_COUNT)
		return "?";
	return field_names[f];
}

static const char *name_of(const char *const *names, enum rbln_sampling_field f)
{
	if (names && names[f])
		return names[f];
	return field_names[f];
}

static int bad_field(struct rbln_error *err, const char *const *names,
		     enum rbln_sampling_field f, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int bad_field(struct rbln_error *err, const char *const *names,
		     enum rbln_sampling_field f, const char *fmt, ...)
{
	char msg[RBLN_ERROR_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return rbln_error_set(err, -EINVAL, "field '%s' %s", name_of(names, f), msg);
}

#define BAD(f, ...) bad_field(err, names, f, __VA_ARGS__)

static int check_ids(const int32_t *ids, size_t n, const struct rbln_sampling_limits *lim,
		     const char *const *names, enum rbln_sampling_field f, size_t word,
		     struct rbln_error *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (ids[i] < 0 || (lim && lim->vocab_size > 0 && ids[i] >= lim->vocab_size)) {
			if (f == RBLN_SP_BAD_WORDS)
				return BAD(f, "entry %zu has token id %d outside the vocabulary "
					   "(0..%lld)", word, ids[i],
					   (long long)(lim ? lim->vocab_size - 1 : 0));
			return BAD(f, "entry %zu is %d, outside the vocabulary (0..%lld)", i,
				   ids[i], (long long)(lim ? lim->vocab_size - 1 : 0));
		}
	}
	return 0;
}

int rbln_sampling_params_validate(const struct rbln_sampling_params *p,
				  const struct rbln_sampling_limits *lim,
				  const char *const *names, struct rbln_error *err)
{
	int32_t max_lp = lim && lim->max_logprobs > 0 ? lim->max_logprobs
						       : RBLN_SAMPLING_MAX_LOGPROBS;
	size_t i;
	int rc;

	if (!isfinite(p->temperature) || p->temperature < 0)
		return BAD(RBLN_SP_TEMPERATURE, "must be a number >= 0 (0 = greedy), got %g",
			   p->temperature);
	if (p->top_k < -1)
		return BAD(RBLN_SP_TOP_K, "must be -1 or 0 (off) or at least 1, got %d",
			   (int)p->top_k);
	if (!isfinite(p->top_p) || p->top_p <= 0 || p->top_p > 1)
		return BAD(RBLN_SP_TOP_P, "must be in (0, 1], got %g", p->top_p);
	if (!isfinite(p->min_p) || p->min_p < 0 || p->min_p > 1)
		return BAD(RBLN_SP_MIN_P, "must be in [0, 1], got %g", p->min_p);
	if (!isfinite(p->repetition_penalty) || p->repetition_penalty <= 0)
		return BAD(RBLN_SP_REPETITION_PENALTY, "must be a number > 0 (1 = off), got %g",
			   p->repetition_penalty);
	if (!isfinite(p->presence_penalty) || p->presence_penalty < -2 || p->presence_penalty > 2)
		return BAD(RBLN_SP_PRESENCE_PENALTY, "must be in [-2, 2], got %g",
			   p->presence_penalty);
	if (!isfinite(p->frequency_penalty) || p->frequency_penalty < -2 ||
	    p->frequency_penalty > 2)
		return BAD(RBLN_SP_FREQUENCY_PENALTY, "must be in [-2, 2], got %g",
			   p->frequency_penalty);
	if (p->max_tokens != -1 && p->max_tokens < 1)
		return BAD(RBLN_SP_MAX_TOKENS, "must be at least 1, got %lld",
			   (long long)p->max_tokens);
	if (p->min_tokens < 0)
		return BAD(RBLN_SP_MIN_TOKENS, "must be >= 0, got %lld",
			   (long long)p->min_tokens);
	if (p->max_tokens != -1 && p->min_tokens > p->max_tokens)
		return BAD(RBLN_SP_MIN_TOKENS, "(%lld) must not exceed %s (%lld)",
			   (long long)p->min_tokens, name_of(names, RBLN_SP_MAX_TOKENS),
			   (long long)p->max_tokens);
	if (p->n_stop_token_ids && !p->stop_token_ids)
		return BAD(RBLN_SP_STOP_TOKEN_IDS, "is missing its ids");
	if (p->n_stop_token_ids > RBLN_SAMPLING_MAX_STOP_IDS)
		return BAD(RBLN_SP_STOP_TOKEN_IDS, "has %zu ids; the engine takes at most %d",
			   p->n_stop_token_ids, RBLN_SAMPLING_MAX_STOP_IDS);
	rc = check_ids(p->stop_token_ids, p->n_stop_token_ids, lim, names,
		       RBLN_SP_STOP_TOKEN_IDS, 0, err);
	if (rc)
		return rc;
	for (i = 0; i < p->n_bad_words; i++) {
		const struct rbln_token_seq *w = &p->bad_words[i];

		if (!w->len || !w->ids)
			return BAD(RBLN_SP_BAD_WORDS, "entry %zu is empty", i);
		rc = check_ids(w->ids, w->len, lim, names, RBLN_SP_BAD_WORDS, i, err);
		if (rc)
			return rc;
	}
	if (p->logprobs < -1 || p->logprobs > max_lp)
		return BAD(RBLN_SP_LOGPROBS, "must be between 0 and %d, got %d", (int)max_lp,
			   (int)p->logprobs);
	for (i = 0; i < p->n_stop; i++)
		if (!p->stop[i] || !p->stop[i][0])
			return BAD(RBLN_SP_STOP, "entry %zu is an empty string, which would "
				   "stop before any output", i);
	return 0;
}

bool rbln_sampling_params_is_greedy(const struct rbln_sampling_params *p)
{
	/* vLLM treats temperatures below 1e-5 as greedy. */
	return p->temperature < 1e-5;
}

bool rbln_sampling_params_need_logits(const struct rbln_sampling_params *p)
{
	return !rbln_sampling_params_is_greedy(p) || p->repetition_penalty != 1.0 ||
	       p->presence_penalty != 0.0 || p->frequency_penalty != 0.0 || p->min_tokens > 0;
}
