// SPDX-License-Identifier: MIT
/* Sampling parameters: vLLM's defaults and ranges. */
#include "rbln_sample.h"

#include <errno.h>
#include <math.h>
#include <string.h>

void rbln_sample_params_default(struct rbln_sample_params *p)
{
	memset(p, 0, sizeof(*p));
	p->temperature = 1.0;
	p->top_k = 0;
	p->top_p = 1.0;
	p->min_p = 0.0;
	p->repetition_penalty = 1.0;
	p->max_tokens = 16;
}

static bool in(double v, double lo, double hi)
{
	return isfinite(v) && v >= lo && v <= hi;
}

int rbln_sample_params_check(const struct rbln_sample_params *p, int64_t vocab_size,
			     struct rbln_error *err)
{
	size_t i;

	if (!in(p->temperature, 0.0, 1e6))
		return rbln_error_set(err, -EINVAL, "temperature must be a number >= 0, got %g",
				      p->temperature);
	if (p->top_k < -1)
		return rbln_error_set(err, -EINVAL, "top_k must be -1, 0 (off) or >= 1, got %d",
				      p->top_k);
	if (!in(p->top_p, 0.0, 1.0) || p->top_p == 0.0)
		return rbln_error_set(err, -EINVAL, "top_p must be in (0, 1], got %g", p->top_p);
	if (!in(p->min_p, 0.0, 1.0))
		return rbln_error_set(err, -EINVAL, "min_p must be in [0, 1], got %g", p->min_p);
	if (!in(p->repetition_penalty, 0.0, 1e6) || p->repetition_penalty == 0.0)
		return rbln_error_set(err, -EINVAL, "repetition_penalty must be > 0, got %g",
				      p->repetition_penalty);
	if (!in(p->presence_penalty, -2.0, 2.0))
		return rbln_error_set(err, -EINVAL, "presence_penalty must be in [-2, 2], got %g",
				      p->presence_penalty);
	if (!in(p->frequency_penalty, -2.0, 2.0))
		return rbln_error_set(err, -EINVAL, "frequency_penalty must be in [-2, 2], got %g",
				      p->frequency_penalty);
	if (p->max_tokens != -1 && p->max_tokens < 1)
		return rbln_error_set(err, -EINVAL, "max_tokens must be >= 1 (or -1: until "
				      "max_seq_len), got %lld", (long long)p->max_tokens);
	if (p->min_tokens < 0 || (p->max_tokens != -1 && p->min_tokens > p->max_tokens))
		return rbln_error_set(err, -EINVAL, "min_tokens must be 0 to max_tokens, got %lld",
				      (long long)p->min_tokens);
	if (p->n_stop_token_ids > RBLN_SAMPLE_MAX_STOP_IDS)
		return rbln_error_set(err, -EINVAL, "stop_token_ids: at most %d ids",
				      RBLN_SAMPLE_MAX_STOP_IDS);
	for (i = 0; i < p->n_stop_token_ids; i++)
		if (p->stop_token_ids[i] < 0 || p->stop_token_ids[i] >= vocab_size)
			return rbln_error_set(err, -EINVAL, "stop_token_ids: %d is not a token id "
					      "(vocabulary of %lld)", p->stop_token_ids[i],
					      (long long)vocab_size);
	return 0;
}

bool rbln_sample_params_is_greedy(const struct rbln_sample_params *p)
{
	/* vLLM treats temperatures below 1e-5 as greedy. */
	return p->temperature < 1e-5;
}

bool rbln_sample_params_need_logits(const struct rbln_sample_params *p)
{
	return !rbln_sample_params_is_greedy(p) || p->repetition_penalty != 1.0 ||
	       p->presence_penalty != 0.0 || p->frequency_penalty != 0.0 || p->min_tokens > 0;
}
