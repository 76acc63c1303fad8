// SPDX-License-Identifier: MIT
/*
 * The sampler on hand-made logits: greedy and ties, seed determinism,
 * what top_k, top_p and min_p leave possible, the penalties' arithmetic,
 * min_tokens masking, the observed distribution, parameter validation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rbln_sample.h"
#include "test_common.h"

#define V 16
#define DRAWS 4000

static void base_logits(float *l)
{
	size_t i;

	/* Token i has logit i / 4: later tokens are likelier, none dominates. */
	for (i = 0; i < V; i++)
		l[i] = (float)i / 4.0f;
}

static struct rbln_sampler *new_sampler(const struct rbln_sampling_params *p, const int32_t *prompt,
					size_t n)
{
	struct rbln_sampler *s = NULL;

	assert_int_equal(rbln_sampler_new(p, prompt, n, &s), 0);
	return s;
}

/* Draws DRAWS tokens from fresh copies of base logits and counts them. */
static void histogram(const struct rbln_sampling_params *params, unsigned *count)
{
	struct rbln_sampling_params p = *params;
	struct rbln_sampler *s;
	float l[V];
	int i;

	/* Seeded, so a run repeats exactly. */
	p.has_seed = true;
	p.seed = 42;
	s = new_sampler(&p, NULL, 0);
	memset(count, 0, V * sizeof(*count));
	for (i = 0; i < DRAWS; i++) {
		base_logits(l);
		count[rbln_sampler_next(s, l, V, NULL, 0, 0)]++;
	}
	rbln_sampler_free(s);
}

static void test_greedy_argmax_lowest_tie(void **state)
{
	struct rbln_sampling_params p;
	struct rbln_sampler *s;
	float l[V] = { 0 };

	(void)state;
	rbln_sampling_params_init(&p);
	p.temperature = 0.0;
	s = new_sampler(&p, NULL, 0);
	l[3] = 5.0f;
	l[9] = 5.0f;
	assert_int_equal(rbln_sampler_next(s, l, V, NULL, 0, 0), 3);
	rbln_sampler_free(s);
	assert_true(rbln_sampling_params_is_greedy(&p));
	assert_false(rbln_sampling_params_need_logits(&p));
	p.repetition_penalty = 1.2;
	assert_true(rbln_sampling_params_need_logits(&p));
}

static void test_argmax_nan_and_inf(void **state)
{
	float x[5] = { 1.0f, INFINITY, 2.0f, NAN, NAN };

	(void)state;
	assert_int_equal(rbln_argmax(x, 5), 3);
	assert_int_equal(rbln_argmax(x, 3), 1);
}

static void test_seed_determinism(void **state)
{
	struct rbln_sampling_params p;
	struct rbln_sampler *a, *b, *c;
	int32_t ta[64], tb[64], tc[64];
	float l[V];
	int i, differ = 0;

	(void)state;
	rbln_sampling_params_init(&p);
	p.has_seed = true;
	p.seed = 1234;
	a = new_sampler(&p, NULL, 0);
	b = new_sampler(&p, NULL, 0);
	p.seed = 1235;
	c = new_sampler(&p, NULL, 0);
	for (i = 0; i < 64; i++) {
		base_logits(l);
		ta[i] = rbln_sampler_next(a, l, V, NULL, 0, 0);
		base_logits(l);
		tb[i] = rbln_sampler_next(b, l, V, NULL, 0, 0);
		base_logits(l);
		tc[i] = rbln_sampler_next(c, l, V, NULL, 0, 0);
		differ += ta[i] != tc[i];
	}
	assert_memory_equal(ta, tb, sizeof(ta));
	assert_true(differ > 10);
	rbln_sampler_free(a);
	rbln_sampler_free(b);
	rbln_sampler_free(c);
}

/* At temperature 1 the draws follow softmax(logits) (within a few sigma). */
static void test_distribution_matches_softmax(void **state)
{
	struct rbln_sampling_params p;
	unsigned count[V];
	double z = 0, pr;
	int i;

	(void)state;
	rbln_sampling_params_init(&p);
	p.has_seed = true;
	p.seed = 7;
	histogram(&p, count);
	for (i = 0; i < V; i++)
		z += exp(i / 4.0);
	for (i = 0; i < V; i++) {
		pr = exp(i / 4.0) / z;
		assert_true(fabs(count[i] - DRAWS * pr) < 5 * sqrt(DRAWS * pr * (1 - pr)) + 2);
	}
}

static void test_top_k(void **state)
{
	struct rbln_sampling_params p;
	unsigned count[V];
	int i;

	(void)state;
	rbln_sampling_params_init(&p);
	p.top_k = 3;
	histogram(&p, count);
	for (i = 0; i < V - 3; i++)
		assert_int_equal(count[i], 0);
	for (; i < V; i++)
		assert_true(count[i] > 0);
}

/* top_p keeps the most probable tokens until their mass reaches p. */
static void test_top_p(void **state)
{
	struct rbln_sampling_params p;
	unsigned count[V];
	double z = 0, cum = 0;
	int i, keep;

	(void)state;
	for (i = 0; i < V; i++)
		z += exp(i / 4.0);
	rbln_sampling_params_init(&p);
	p.top_p = 0.5;
	for (keep = V - 1; keep >= 0; keep--) {
		cum += exp(keep / 4.0) / z;
		if (cum >= p.top_p)
			break;
	}
	histogram(&p, count);
	for (i = 0; i < keep; i++)
		assert_int_equal(count[i], 0);
	for (i = keep; i < V; i++)
		assert_true(count[i] > 0);
}

/* min_p drops tokens less likely than min_p times the most likely one. */
static void test_min_p(void **state)
{
	struct rbln_sampling_params p;
	unsigned count[V];
	int i;

	(void)state;
	rbln_sampling_params_init(&p);
	p.min_p = exp(-1.0) - 1e-4;	/* e^(l - 15/4) >= ~e^-1 keeps l >= 11/4 */
	histogram(&p, count);
	for (i = 0; i < 11; i++)
		assert_int_equal(count[i], 0);
	for (i = 11; i < V; i++)
		assert_true(count[i] > 0);
}

static void test_penalties(void **state)
{
	struct rbln_sampling_params p;
	struct rbln_sampler *s;
	int32_t prompt[] = { 1, 2 };
	float l[V] = { 0 };

	(void)state;
	rbln_sampling_params_init(&p);
	p.temperature = 0.0;
	p.repetition_penalty = 2.0;
	p.frequency_penalty = 0.5;
	p.presence_penalty = 0.25;
	s = new_sampler(&p, prompt, 2);
	rbln_sampler_accept(s, 2);
	rbln_sampler_accept(s, 2);
	rbln_sampler_accept(s, 5);
	l[1] = 4.0f;	/* prompt: 4 / 2 */
	l[2] = -4.0f;	/* prompt and output twice: -4 * 2 - (0.5 * 2 + 0.25) */
	l[5] = 3.0f;	/* output once: 3 / 2 - (0.5 + 0.25) */
	l[7] = 2.5f;	/* untouched: the argmax once the penalties apply */
	assert_int_equal(rbln_sampler_next(s, l, V, NULL, 0, 0), 7);
	assert_true(fabsf(l[1] - 2.0f) < 1e-6f);
	assert_true(fabsf(l[2] - (-9.25f)) < 1e-6f);
	assert_true(fabsf(l[5] - 0.75f) < 1e-6f);
	assert_true(fabsf(l[7] - 2.5f) < 1e-6f);
	rbln_sampler_free(s);
}

static void test_min_tokens_masks(void **state)
{
	struct rbln_sampling_params p;
	struct rbln_sampler *s;
	int32_t eos[] = { 9 };
	float l[V] = { 0 };

	(void)state;
	rbln_sampling_params_init(&p);
	p.temperature = 0.0;
	p.min_tokens = 2;
	s = new_sampler(&p, NULL, 0);
	l[9] = 10.0f;
	l[4] = 1.0f;
	assert_int_equal(rbln_sampler_next(s, l, V, eos, 1, 1), 4);
	memset(l, 0, sizeof(l));
	l[9] = 10.0f;
	assert_int_equal(rbln_sampler_next(s, l, V, eos, 1, 2), 9);
	rbln_sampler_free(s);
}

/* A low temperature concentrates the draws on the argmax. */
static void test_temperature(void **state)
{
	struct rbln_sampling_params p;
	unsigned count[V];

	(void)state;
	rbln_sampling_params_init(&p);
	p.temperature = 0.05;
	histogram(&p, count);
	assert_true(count[V - 1] > DRAWS * 0.99);
}

static void test_params_check(void **state)
{
	struct rbln_sampling_limits lim = { .vocab_size = 100 };
	struct rbln_sampling_params p;
	struct rbln_error err = { 0 };
	int32_t too_big = 100;

	(void)state;
	rbln_sampling_params_init(&p);
	assert_int_equal(rbln_sampling_params_validate(&p, &lim, NULL, &err), 0);
	p.top_p = 0.0;
	assert_int_not_equal(rbln_sampling_params_validate(&p, &lim, NULL, &err), 0);
	test_assert_contains_all(err.msg, "top_p", NULL);
	rbln_sampling_params_init(&p);
	p.temperature = -1;
	assert_int_not_equal(rbln_sampling_params_validate(&p, &lim, NULL, &err), 0);
	test_assert_contains_all(err.msg, "temperature", NULL);
	rbln_sampling_params_init(&p);
	p.min_p = 1.5;
	assert_int_not_equal(rbln_sampling_params_validate(&p, &lim, NULL, &err), 0);
	test_assert_contains_all(err.msg, "min_p", NULL);
	rbln_sampling_params_init(&p);
	p.presence_penalty = 3;
	assert_int_not_equal(rbln_sampling_params_validate(&p, &lim, NULL, &err), 0);
	test_assert_contains_all(err.msg, "presence_penalty", NULL);
	rbln_sampling_params_init(&p);
	p.repetition_penalty = 0;
	assert_int_not_equal(rbln_sampling_params_validate(&p, &lim, NULL, &err), 0);
	test_assert_contains_all(err.msg, "repetition_penalty", NULL);
	rbln_sampling_params_init(&p);
	p.max_tokens = 0;
	assert_int_not_equal(rbln_sampling_params_validate(&p, &lim, NULL, &err), 0);
	test_assert_contains_all(err.msg, "max_tokens", NULL);
	rbln_sampling_params_init(&p);
	p.stop_token_ids = &too_big;
	p.n_stop_token_ids = 1;
	assert_int_not_equal(rbln_sampling_params_validate(&p, &lim, NULL, &err), 0);
	test_assert_contains_all(err.msg, "stop_token_ids", "100", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_greedy_argmax_lowest_tie),
		cmocka_unit_test(test_argmax_nan_and_inf),
		cmocka_unit_test(test_seed_determinism),
		cmocka_unit_test(test_distribution_matches_softmax),
		cmocka_unit_test(test_top_k),
		cmocka_unit_test(test_top_p),
		cmocka_unit_test(test_min_p),
		cmocka_unit_test(test_penalties),
		cmocka_unit_test(test_min_tokens_masks),
		cmocka_unit_test(test_temperature),
		cmocka_unit_test(test_params_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
