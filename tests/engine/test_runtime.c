// SPDX-License-Identifier: MIT
/*
 * The runtime API on tiny-llama3: explicit steps mixing prefill chunks and
 * decodes, the checks of rbln_runtime_run(), preemption when the KV cache
 * is full (same tokens as with room to spare), the end conditions
 * (stop_token_ids, max_tokens, min_tokens, max_seq_len, abort) and seeded
 * sampling end to end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine_helpers.h"

struct fixture {
	char *dir;		/* batch 4, partition 256, 32 blocks */
	char *small_dir;	/* the same with 9 KV blocks */
	struct rbln_runtime *e;
	int32_t *long_ids;	/* the reference's long prompt */
	size_t n_long;
	int32_t *prompt;	/* "The quick brown fox" */
	size_t n_prompt;
	int32_t *greedy;
	size_t n_greedy;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct rbln_compile_options o = {
		.batch_size = 4, .max_seq_len = 2048, .kvcache_partition_len = 256,
		.decoder_batch_sizes = { 1 }, .n_decoder_batch_sizes = 1,
	};
	json_object *ref = test_reference("tiny-llama3"), *gen, *g, *a;
	size_t n;

	assert_non_null(f);
	f->dir = eh_compile("tiny-llama3", &o);
	o.kvcache_num_blocks = 9;
	f->small_dir = eh_compile("tiny-llama3", &o);
	f->e = eh_open(f->dir);
	assert_true(json_object_object_get_ex(ref, "generate", &gen));
	n = json_object_array_length(gen);
	g = json_object_array_get_idx(gen, n - 1);
	assert_true(json_object_object_get_ex(g, "input_ids", &a));
	f->long_ids = eh_json_ids(a, &f->n_long);
	g = json_object_array_get_idx(gen, 4);
	assert_true(json_object_object_get_ex(g, "input_ids", &a));
	f->prompt = eh_json_ids(a, &f->n_prompt);
	assert_true(json_object_object_get_ex(g, "greedy_ids", &a));
	f->greedy = eh_json_ids(a, &f->n_greedy);
	json_object_put(ref);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	rbln_runtime_close(f->e);
	test_rmtree(f->dir);
	test_rmtree(f->small_dir);
	free(f->dir);
	free(f->small_dir);
	free(f->long_ids);
	free(f->prompt);
	free(f->greedy);
	free(f);
	return 0;
}

static struct rbln_seq *add(struct rbln_runtime *e, const int32_t *ids, size_t n,
			    const struct rbln_sampling_params *sp)
{
	struct rbln_error err = { 0 };
	struct rbln_seq *s = NULL;

	if (rbln_runtime_add(e, ids, n, sp, 0, &s, &err))
		fail_msg("add: %s", err.msg);
	return s;
}

static void run(struct rbln_runtime *e, const struct rbln_step_item *items, size_t n)
{
	struct rbln_error err = { 0 };

	if (rbln_runtime_run(e, items, n, NULL, &err))
		fail_msg("run: %s", err.msg);
}

/* A decode and a prefill chunk in one step equal each run on its own. */
static void test_mixed_step(void **state)
{
	struct fixture *f = *state;
	struct rbln_sampling_params sp;
	struct rbln_seq *a, *b;
	const int32_t *out;
	size_t n;

	eh_greedy(&sp, 4);
	a = add(f->e, f->prompt, f->n_prompt, &sp);
	b = add(f->e, f->long_ids, 300, &sp);
	run(f->e, &(struct rbln_step_item){ a, (uint32_t)f->n_prompt }, 1);
	assert_int_equal(rbln_seq_pending(a), 1);
	/* a decodes while b's first 100 tokens prefill, then a with b's next 27. */
	run(f->e, (struct rbln_step_item[]){ { a, 1 }, { b, 100 } }, 2);
	run(f->e, (struct rbln_step_item[]){ { b, 27 }, { a, 1 } }, 2);
	eh_run_all(f->e);
	out = rbln_seq_output(a, &n);
	assert_int_equal(n, 4);
	assert_memory_equal(out, f->greedy, 4 * sizeof(int32_t));
	rbln_seq_release(a);
	rbln_seq_release(b);
}

static void expect_run_error(struct rbln_runtime *e, const struct rbln_step_item *items, size_t n,
			     int code, const char *text)
{
	struct rbln_error err = { 0 };

	assert_int_equal(rbln_runtime_run(e, items, n, NULL, &err), code);
	test_assert_contains_all(err.msg, text, NULL);
}

static void test_run_checks(void **state)
{
	struct fixture *f = *state;
	struct rbln_sampling_params sp;
	struct rbln_seq *a, *b, *c, *d, *x;
	struct rbln_runtime_info info;

	eh_greedy(&sp, 4);
	a = add(f->e, f->prompt, f->n_prompt, &sp);
	b = add(f->e, f->long_ids, 1000, &sp);
	expect_run_error(f->e, &(struct rbln_step_item){ a, 6 }, 1, -EINVAL, "has 5 to compute");
	expect_run_error(f->e, (struct rbln_step_item[]){ { a, 1 }, { a, 1 } }, 2, -EINVAL,
			 "same sequence");
	expect_run_error(f->e, &(struct rbln_step_item){ b, 200 }, 1, -E2BIG,
			 "prefill_chunk_size (128)");
	c = add(f->e, f->prompt, f->n_prompt, &sp);
	d = add(f->e, f->prompt, f->n_prompt, &sp);
	x = add(f->e, f->prompt, f->n_prompt, &sp);
	expect_run_error(f->e, (struct rbln_step_item[]){ { a, 1 }, { b, 1 }, { c, 1 }, { d, 1 },
							   { x, 1 } }, 5, -EINVAL, "batch_size");
	rbln_runtime_get_info(f->e, &info);
	assert_int_equal(info.kv_blocks_free, info.kv_blocks_total);
	rbln_seq_release(a);
	rbln_seq_release(b);
	rbln_seq_release(c);
	rbln_seq_release(d);
	rbln_seq_release(x);
}

/* Four long sequences in 9 blocks of 256 tokens: preemption, and the same tokens. */
static void test_preemption_same_tokens(void **state)
{
	struct fixture *f = *state;
	struct rbln_runtime *small = eh_open(f->small_dir);
	struct rbln_runtime *engines[2] = { f->e, small };
	struct rbln_seq *s[2][4];
	struct rbln_sampling_params sp;
	uint32_t preempted = 0;
	size_t i, k, n0, n1;

	eh_greedy(&sp, 300);
	for (k = 0; k < 2; k++)
		for (i = 0; i < 4; i++)
			s[k][i] = add(engines[k], f->long_ids + 50 * i, 400, &sp);
	for (k = 0; k < 2; k++)
		eh_run_all(engines[k]);
	for (i = 0; i < 4; i++) {
		const int32_t *o0 = rbln_seq_output(s[0][i], &n0);
		const int32_t *o1 = rbln_seq_output(s[1][i], &n1);

		assert_int_equal(n0, 300);
		assert_int_equal(n1, 300);
		assert_memory_equal(o0, o1, 300 * sizeof(int32_t));
		preempted += rbln_seq_preemptions(s[1][i]);
		assert_int_equal(rbln_seq_preemptions(s[0][i]), 0);
	}
	assert_true(preempted > 0);
	for (k = 0; k < 2; k++)
		for (i = 0; i < 4; i++)
			rbln_seq_release(s[k][i]);
	rbln_runtime_close(small);
}

static void test_end_conditions(void **state)
{
	struct fixture *f = *state;
	struct rbln_runtime_info info;
	struct rbln_sampling_params sp;
	struct rbln_seq *s;
	const int32_t *out;
	int32_t stop_id;
	size_t n;

	/* A stop id ends the sequence; it is not in the output. */
	eh_greedy(&sp, 48);
	stop_id = f->greedy[5];
	sp.stop_token_ids = &stop_id;
	sp.n_stop_token_ids = 1;
	s = add(f->e, f->prompt, f->n_prompt, &sp);
	eh_run_all(f->e);
	out = rbln_seq_output(s, &n);
	assert_int_equal(rbln_seq_end(s), RBLN_SEQ_END_STOP);
	assert_int_equal(rbln_seq_stop_token(s), f->greedy[5]);
	assert_true(n <= 5);
	assert_memory_equal(out, f->greedy, n * sizeof(int32_t));
	rbln_seq_release(s);
	/* min_tokens masks it until then. */
	stop_id = f->greedy[0];
	sp.min_tokens = 1;
	s = add(f->e, f->prompt, f->n_prompt, &sp);
	eh_run_all(f->e);
	out = rbln_seq_output(s, &n);
	assert_true(n >= 1);
	assert_int_not_equal(out[0], f->greedy[0]);
	rbln_seq_release(s);
	/* max_tokens. */
	eh_greedy(&sp, 3);
	s = add(f->e, f->prompt, f->n_prompt, &sp);
	eh_run_all(f->e);
	rbln_seq_output(s, &n);
	assert_int_equal(n, 3);
	assert_int_equal(rbln_seq_end(s), RBLN_SEQ_END_LENGTH);
	rbln_seq_release(s);
	/* max_seq_len: a prompt one short of it gets one token. */
	eh_greedy(&sp, 100);
	{
		int32_t *ids = malloc(2047 * sizeof(int32_t));
		size_t i;

		for (i = 0; i < 2047; i++)
			ids[i] = f->long_ids[i % f->n_long];
		s = add(f->e, ids, 2047, &sp);
		free(ids);
	}
	eh_run_all(f->e);
	rbln_seq_output(s, &n);
	assert_int_equal(n, 1);
	assert_int_equal(rbln_seq_end(s), RBLN_SEQ_END_LENGTH);
	rbln_seq_release(s);
	/* Abort frees the blocks at once. */
	s = add(f->e, f->long_ids, 600, &sp);
	assert_true(rbln_runtime_step(f->e, NULL, NULL) > 0);
	rbln_runtime_get_info(f->e, &info);
	assert_true(info.kv_blocks_free < info.kv_blocks_total);
	rbln_seq_abort(s);
	assert_int_equal(rbln_seq_end(s), RBLN_SEQ_END_ABORT);
	assert_int_equal(rbln_seq_pending(s), 0);
	rbln_runtime_get_info(f->e, &info);
	assert_int_equal(info.kv_blocks_free, info.kv_blocks_total);
	assert_int_equal(rbln_runtime_step(f->e, NULL, NULL), 0);
	rbln_seq_release(s);
}

static void test_add_checks(void **state)
{
	struct fixture *f = *state;
	struct rbln_error err = { 0 };
	struct rbln_seq *s = NULL;
	int32_t bad[] = { 1, 4096 };
	int32_t *big = calloc(2048, sizeof(int32_t));

	assert_int_equal(rbln_runtime_add(f->e, bad, 2, NULL, 0, &s, &err), -EINVAL);
	test_assert_contains_all(err.msg, "prompt token 1 is 4096", NULL);
	assert_int_equal(rbln_runtime_add(f->e, bad, 0, NULL, 0, &s, &err), -E2BIG);
	assert_int_equal(rbln_runtime_add(f->e, big, 2048, NULL, 0, &s, &err), -E2BIG);
	test_assert_contains_all(err.msg, "2048 tokens", "max_seq_len", NULL);
	assert_null(s);
	free(big);
}

/* What the runtime does not apply is refused, not ignored; the params are checked. */
static void test_add_params(void **state)
{
	struct fixture *f = *state;
	struct rbln_token_seq word = { .ids = f->prompt, .len = 1 };
	const char *stop[] = { "fox" };
	struct rbln_sampling_params sp;
	struct rbln_error err = { 0 };
	struct rbln_seq *s = NULL;

	eh_greedy(&sp, 4);
	sp.bad_words = &word;
	sp.n_bad_words = 1;
	assert_int_equal(rbln_runtime_add(f->e, f->prompt, f->n_prompt, &sp, 0, &s, &err), -EINVAL);
	test_assert_contains_all(err.msg, "bad_words", "logits hook", NULL);
	eh_greedy(&sp, 4);
	sp.logprobs = 2;
	assert_int_equal(rbln_runtime_add(f->e, f->prompt, f->n_prompt, &sp, 0, &s, &err), -EINVAL);
	test_assert_contains_all(err.msg, "logprobs", NULL);
	eh_greedy(&sp, 4);
	sp.stop = stop;
	sp.n_stop = 1;
	assert_int_equal(rbln_runtime_add(f->e, f->prompt, f->n_prompt, &sp, 0, &s, &err), -EINVAL);
	test_assert_contains_all(err.msg, "stop strings", NULL);
	eh_greedy(&sp, 4);
	sp.top_p = 1.5;
	assert_int_equal(rbln_runtime_add(f->e, f->prompt, f->n_prompt, &sp, 0, &s, &err), -EINVAL);
	test_assert_contains_all(err.msg, "field 'top_p'", NULL);
	assert_null(s);
}

/* The same seed gives the same tokens; sampled sequences batch like greedy ones. */
static void test_seeded_sampling(void **state)
{
	struct fixture *f = *state;
	struct rbln_sampling_params sp;
	struct rbln_seq *s[3];
	const int32_t *o[3];
	size_t n[3], i;

	rbln_sampling_params_init(&sp);
	sp.temperature = 0.8;
	sp.top_p = 0.95;
	sp.top_k = 40;
	sp.has_seed = true;
	sp.seed = 99;
	sp.max_tokens = 32;
	sp.ignore_eos = true;
	s[0] = add(f->e, f->prompt, f->n_prompt, &sp);
	s[1] = add(f->e, f->prompt, f->n_prompt, &sp);
	sp.seed = 100;
	s[2] = add(f->e, f->prompt, f->n_prompt, &sp);
	eh_run_all(f->e);
	for (i = 0; i < 3; i++)
		o[i] = rbln_seq_output(s[i], &n[i]);
	assert_int_equal(n[0], 32);
	assert_memory_equal(o[0], o[1], 32 * sizeof(int32_t));
	assert_memory_not_equal(o[0], o[2], 32 * sizeof(int32_t));
	for (i = 0; i < 3; i++)
		rbln_seq_release(s[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mixed_step),
		cmocka_unit_test(test_run_checks),
		cmocka_unit_test(test_preemption_same_tokens),
		cmocka_unit_test(test_end_conditions),
		cmocka_unit_test(test_add_checks),
		cmocka_unit_test(test_add_params),
		cmocka_unit_test(test_seeded_sampling),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
