// SPDX-License-Identifier: MIT
/*
 * The sampler (see rbln_sample.h).  Order of the steps, as vLLM's sampler:
 *   1. repetition penalty (prompt and output tokens: positive logits
 *      divided by it, negative ones multiplied), then frequency and
 *      presence penalties (output tokens: logit -= f * count + p);
 *   2. min_tokens: EOS and stop ids made impossible;
 *   3. greedy (temperature 0): the argmax;
 *   4. else logits / temperature, top_k (keep logits >= the k-th largest),
 *      softmax, top_p (the most probable tokens until their mass reaches
 *      top_p, at least one), min_p (drop p < min_p * max p), and a draw
 *      with the sequence's xoshiro256** generator.
 */
#include "rbln_sample.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* One token the penalties know: its output count and whether the prompt has it. */
struct token_count {
	int32_t id;		/* -1: empty slot */
	uint32_t count;		/* in the output */
	bool in_prompt;
};

struct rbln_sampler {
	struct rbln_sampling_params p;	/* numbers only: pointers cleared */
	uint64_t rng[4];
	struct token_count *map;	/* open addressing, power-of-two size */
	size_t map_cap, map_len;
	uint32_t *order;		/* scratch: candidate ids */
	float *prob;			/* scratch: their weights */
	size_t scratch_cap;
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (Blackman and Vigna). */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

/* Uniform in [0, 1) with 53 random bits. */
static double rng_uniform(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

static size_t slot_of(int32_t id, size_t cap)
{
	return ((uint32_t)id * 2654435761u) & (cap - 1);
}

static struct token_count *lookup(struct rbln_sampler *s, int32_t id, bool insert)
{
	size_t i;

	if (insert && (s->map_len + 1) * 2 > s->map_cap) {
		size_t ncap = s->map_cap ? s->map_cap * 2 : 64, j;
		struct token_count *nm = malloc(ncap * sizeof(*nm));

		if (!nm)
			return NULL;
		for (j = 0; j < ncap; j++)
			nm[j].id = -1;
		for (j = 0; j < s->map_cap; j++) {
			if (s->map[j].id < 0)
				continue;
			i = slot_of(s->map[j].id, ncap);
			while (nm[i].id >= 0)
				i = (i + 1) & (ncap - 1);
			nm[i] = s->map[j];
		}
		free(s->map);
		s->map = nm;
		s->map_cap = ncap;
	}
	if (!s->map_cap)
		return NULL;
	for (i = slot_of(id, s->map_cap); s->map[i].id >= 0; i = (i + 1) & (s->map_cap - 1))
		if (s->map[i].id == id)
			return &s->map[i];
	if (!insert)
		return NULL;
	s->map[i] = (struct token_count){ .id = id };
	s->map_len++;
	return &s->map[i];
}

int rbln_sampler_new(const struct rbln_sampling_params *p, const int32_t *prompt,
		     size_t n_prompt, struct rbln_sampler **out)
{
	struct rbln_sampler *s = calloc(1, sizeof(*s));
	uint64_t seed;
	size_t i;

	if (!s)
		return -ENOMEM;
	s->p = *p;
	s->p.stop_token_ids = NULL;
	s->p.n_stop_token_ids = 0;
	s->p.bad_words = NULL;
	s->p.n_bad_words = 0;
	s->p.stop = NULL;
	s->p.n_stop = 0;
	if (p->has_seed)
		seed = p->seed;
	else if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (uint64_t)(uintptr_t)s ^ 0x5851f42d4c957f2dull;
	for (i = 0; i < 4; i++)
		s->rng[i] = splitmix64(&seed);
	/* Only the repetition penalty looks at the prompt. */
	if (p->repetition_penalty != 1.0) {
		for (i = 0; i < n_prompt; i++) {
			struct token_count *c = lookup(s, prompt[i], true);

			if (!c) {
				rbln_sampler_free(s);
				return -ENOMEM;
			}
			c->in_prompt = true;
		}
	}
	*out = s;
	return 0;
}

void rbln_sampler_free(struct rbln_sampler *s)
{
	if (!s)
		return;
	free(s->map);
	free(s->order);
	free(s->prob);
	free(s);
}

void rbln_sampler_accept(struct rbln_sampler *s, int32_t id)
{
	struct token_count *c;

	/* Counts matter only to the penalties; skip the map when none is on. */
	if (s->p.repetition_penalty == 1.0 && s->p.presence_penalty == 0.0 &&
	    s->p.frequency_penalty == 0.0)
		return;
	c = lookup(s, id, true);
	if (c)
		c->count++;
}

size_t rbln_argmax(const float *x, size_t n)
{
	size_t i, best = 0;

	for (i = 0; i < n; i++) {
		if (x[i] != x[i])
			return i;	/* the first NaN wins, as the device's ARGMAX */
		if (x[i] > x[best])
			best = i;
	}
	return best;
}

static void apply_penalties(struct rbln_sampler *s, float *logits, size_t vocab)
{
	float rp = (float)s->p.repetition_penalty;
	float fp = (float)s->p.frequency_penalty, pp = (float)s->p.presence_penalty;
	size_t i;

	for (i = 0; i < s->map_cap; i++) {
		const struct token_count *c = &s->map[i];
		float *l;

		if (c->id < 0 || (size_t)c->id >= vocab)
			continue;
		l = &logits[c->id];
		if (rp != 1.0f && (c->in_prompt || c->count))
			*l = *l > 0 ? *l / rp : *l * rp;
		if (c->count)
			*l -= fp * (float)c->count + pp;
	}
}

static int cmp_float_desc(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Candidates sorted by weight, heaviest first; ties by lower id. */
static int cmp_by_prob(const void *a, const void *b, void *ctx)
{
	const float *prob = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (prob[x] != prob[y])
		return prob[x] < prob[y] ? 1 : -1;
	return x < y ? -1 : x > y;
}

static int ensure_scratch(struct rbln_sampler *s, size_t vocab)
{
	if (s->scratch_cap >= vocab)
		return 0;
	free(s->order);
	free(s->prob);
	s->order = malloc(vocab * sizeof(*s->order));
	s->prob = malloc(vocab * sizeof(*s->prob));
	if (!s->order || !s->prob) {
		s->scratch_cap = 0;
		return -ENOMEM;
	}
	s->scratch_cap = vocab;
	return 0;
}

/* The k-th largest logit (k < vocab), found on a sorted copy. */
static float kth_largest(struct rbln_sampler *s, const float *logits, size_t vocab, size_t k)
{
	memcpy(s->prob, logits, vocab * sizeof(float));
	qsort(s->prob, vocab, sizeof(float), cmp_float_desc);
	return s->prob[k - 1];
}

static int32_t sample_random(struct rbln_sampler *s, float *logits, size_t vocab)
{
	float inv_t = (float)(1.0 / s->p.temperature), m = -INFINITY, thr = -INFINITY;
	size_t i, n = 0, keep;
	double total = 0.0, cum, u;

	if (ensure_scratch(s, vocab))
		return (int32_t)rbln_argmax(logits, vocab);
	for (i = 0; i < vocab; i++)
		logits[i] *= inv_t;
	if (s->p.top_k > 0 && (size_t)s->p.top_k < vocab)
		thr = kth_largest(s, logits, vocab, (size_t)s->p.top_k);
	for (i = 0; i < vocab; i++) {
		if (logits[i] >= thr && logits[i] > -INFINITY) {
			s->order[n++] = (uint32_t)i;
			if (logits[i] > m)
				m = logits[i];
		}
	}
	if (!n || !isfinite(m))
		return (int32_t)rbln_argmax(logits, vocab);
	/* Weights relative to the most probable token: softmax without the sum. */
	for (i = 0; i < vocab; i++)
		s->prob[i] = 0.0f;
	for (i = 0; i < n; i++)
		s->prob[s->order[i]] = expf(logits[s->order[i]] - m);
	for (i = 0; i < n; i++)
		total += s->prob[s->order[i]];
	if (s->p.top_p < 1.0) {
		qsort_r(s->order, n, sizeof(*s->order), cmp_by_prob, s->prob);
		cum = 0.0;
		for (keep = 0; keep < n; keep++) {
			cum += s->prob[s->order[keep]];
			if (cum >= s->p.top_p * total) {
				keep++;
				break;
			}
		}
		n = keep;
	}
	if (s->p.min_p > 0.0) {
		size_t j = 0;

		/* The largest weight is 1 (it is e^0), so the cut is min_p itself. */
		for (i = 0; i < n; i++)
			if (s->prob[s->order[i]] >= (float)s->p.min_p)
				s->order[j++] = s->order[i];
		n = j;
	}
	total = 0.0;
	for (i = 0; i < n; i++)
		total += s->prob[s->order[i]];
	u = rng_uniform(s->rng) * total;
	cum = 0.0;
	for (i = 0; i < n; i++) {
		cum += s->prob[s->order[i]];
		if (u < cum)
			return (int32_t)s->order[i];
	}
	return (int32_t)s->order[n - 1];	/* rounding at the very end */
}

int32_t rbln_sampler_next(struct rbln_sampler *s, float *logits, size_t vocab,
			  const int32_t *mask_ids, size_t n_mask, size_t n_output)
{
	int32_t id;
	size_t i;

	apply_penalties(s, logits, vocab);
	if ((int64_t)n_output < s->p.min_tokens)
		for (i = 0; i < n_mask; i++)
			if (mask_ids[i] >= 0 && (size_t)mask_ids[i] < vocab)
				logits[mask_ids[i]] = -INFINITY;
	if (rbln_sampling_params_is_greedy(&s->p))
		id = (int32_t)rbln_argmax(logits, vocab);
	else
		id = sample_random(s, logits, vocab);
	rbln_sampler_accept(s, id);
	return id;
}
