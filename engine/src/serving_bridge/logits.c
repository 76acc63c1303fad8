// SPDX-License-Identifier: MIT
/*
 * What the serving interface asks of sampling beyond the runtime's
 * sampler: bad words and log-probabilities.  Both go through the
 * runtime's per-sequence logits hook (rbln_seq_set_logits_fn), which sees
 * the full logits row each token is sampled from, on the scheduler thread.
 *
 * Bad words follow vLLM's NoBadWordsLogitsProcessor: a one-token word is
 * never sampled; the last token of a longer word is forbidden when the
 * output so far ends with the rest of the word.
 *
 * Log-probabilities are vLLM's default (raw) ones: the log-softmax of the
 * model's logits before bad words, penalties, temperature or truncation,
 * for the sampled token and the top k alternatives.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serving_bridge/binding.h"

static bool ends_with(const int32_t *out, size_t n_out, const int32_t *w, size_t len)
{
	return n_out >= len && !memcmp(out + n_out - len, w, len * sizeof(*w));
}

static void on_logits(void *user, const struct rbln_seq *s, float *logits, size_t vocab)
{
	struct rbln_gen_handle *h = user;
	const int32_t *out;
	size_t i, n_out;

	if (h->lp_row) {
		memcpy(h->lp_row, logits, vocab * sizeof(*logits));
		h->lp_valid = true;
	}
	if (!h->n_bad)
		return;
	out = rbln_seq_output(s, &n_out);
	for (i = 0; i < h->n_bad; i++) {
		const struct rbln_bridge_bad_word *w = &h->bad[i];

		if (ends_with(out, n_out, w->ids, w->len - 1))
			logits[w->ids[w->len - 1]] = -INFINITY;
	}
}

int rbln_bridge_logits_attach(struct rbln_serving_model *e, struct rbln_gen_handle *h)
{
	if (h->logprobs < 0 && !h->n_bad)
		return 0;
	if (h->logprobs >= 0 && !h->lp_row) {
		h->lp_row = malloc((size_t)e->vocab * sizeof(*h->lp_row));
		h->lp_out = calloc(1, sizeof(*h->lp_out));
		if (h->lp_out) {
			h->lp_out->logprobs = malloc(sizeof(float));
			h->lp_out->top = malloc(((size_t)h->logprobs + 1) * sizeof(*h->lp_out->top));
		}
		if (!h->lp_row || !h->lp_out || !h->lp_out->logprobs || !h->lp_out->top)
			return -ENOMEM;
		h->lp_out->cap = 1;
	}
	rbln_seq_set_logits_fn(h->seq, on_logits, h);
	return 0;
}

/* log(sum(exp(row))), stable. */
static double log_sum_exp(const float *row, size_t n)
{
	double m = -INFINITY, sum = 0.0;
	size_t i;

	for (i = 0; i < n; i++)
		if (row[i] > m)
			m = row[i];
	if (!isfinite(m))
		return m;
	for (i = 0; i < n; i++)
		sum += exp((double)row[i] - m);
	return m + log(sum);
}

/* The k best ids of row, best first, lower id first on ties (k is small: <= 20). */
static void top_k(const float *row, size_t vocab, size_t k, double lse,
		  struct rbln_token_logprob *top)
{
	size_t i, j, have = 0;

	for (i = 0; i < vocab; i++) {
		float v = row[i];

		if (have == k && !(v > top[k - 1].logprob))
			continue;
		j = have < k ? have++ : k - 1;
		while (j > 0 && v > top[j - 1].logprob) {
			top[j] = top[j - 1];
			j--;
		}
		top[j].id = (int32_t)i;
		top[j].logprob = v;
	}
	for (i = 0; i < have; i++)
		top[i].logprob = (float)((double)top[i].logprob - lse);
}

void rbln_bridge_logprobs_take(struct rbln_serving_model *e, struct rbln_gen_handle *h,
		      const int32_t *ids, size_t n)
{
	double lse;

	if (!h->lp_out)
		return;
	h->lp_out->n = 0;
	/* One step samples one token: the row is that token's. */
	if (!h->lp_valid || n != 1)
		return;
	h->lp_valid = false;
	lse = log_sum_exp(h->lp_row, e->vocab);
	h->lp_out->logprobs[0] = (float)((double)h->lp_row[ids[0]] - lse);
	if (h->logprobs > 0)
		top_k(h->lp_row, e->vocab, (size_t)h->logprobs, lse, h->lp_out->top);
	h->lp_out->n = 1;
}
