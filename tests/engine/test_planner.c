// SPDX-License-Identifier: MIT
/*
 * The runtime's planner (rbln_runtime_plan) under its policies, on
 * tiny-llama3 with 9 KV blocks of 256 tokens: the policy's checks, the
 * max_seqs and step_tokens bounds, FCFS against first-fit admission, the
 * prefill deferral of a server, and the preemption callback.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_helpers.h"

struct fixture {
	char *dir;
	struct rbln_runtime *e;
	int32_t *ids;		/* 2000 ids from the reference's long prompt */
};

#define N_IDS 2000

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct rbln_compile_options o = {
		.batch_size = 4, .max_seq_len = 2048, .kvcache_partition_len = 256,
		.kvcache_num_blocks = 9, .decoder_batch_sizes = { 1 },
		.n_decoder_batch_sizes = 1,
	};
	json_object *ref = test_reference("tiny-llama3"), *gen, *g, *a;
	int32_t *long_ids;
	size_t n, i;

	assert_non_null(f);
	f->dir = eh_compile("tiny-llama3", &o);
	f->e = eh_open(f->dir);
	assert_true(json_object_object_get_ex(ref, "generate", &gen));
	g = json_object_array_get_idx(gen, json_object_array_length(gen) - 1);
	assert_true(json_object_object_get_ex(g, "input_ids", &a));
	long_ids = eh_json_ids(a, &n);
	f->ids = malloc(N_IDS * sizeof(*f->ids));
	assert_non_null(f->ids);
	for (i = 0; i < N_IDS; i++)
		f->ids[i] = long_ids[i % n];
	free(long_ids);
	json_object_put(ref);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	rbln_runtime_close(f->e);
	test_rmtree(f->dir);
	free(f->dir);
	free(f->ids);
	free(f);
	return 0;
}

static struct rbln_seq *add(struct fixture *f, size_t n, int64_t max_tokens)
{
	struct rbln_error err = { 0 };
	struct rbln_sampling_params sp;
	struct rbln_seq *s = NULL;

	eh_greedy(&sp, max_tokens);
	if (rbln_runtime_add(f->e, f->ids, n, &sp, 0, &s, &err))
		fail_msg("add: %s", err.msg);
	return s;
}

static void set_policy(struct rbln_runtime *e, const struct rbln_plan_policy *p)
{
	struct rbln_error err = { 0 };

	if (rbln_runtime_set_policy(e, p, &err))
		fail_msg("set_policy: %s", err.msg);
}

static void run(struct rbln_runtime *e, const struct rbln_step_item *items, size_t n)
{
	struct rbln_error err = { 0 };

	if (rbln_runtime_run(e, items, n, NULL, &err))
		fail_msg("run: %s", err.msg);
}

/* Steps until s has its first output token (its prompt is in the cache). */
static void run_until_decoding(struct rbln_runtime *e, const struct rbln_seq *s)
{
	size_t n_out = 0;

	while (!n_out) {
		assert_true(rbln_runtime_step(e, NULL, NULL) > 0);
		rbln_seq_output(s, &n_out);
	}
}

static bool has_item(const struct rbln_step_item *items, size_t n, const struct rbln_seq *s,
		     uint32_t tokens)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (items[i].seq == s)
			return items[i].n_tokens == tokens;
	return false;
}

static void release_all(struct rbln_seq **s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		rbln_seq_release(s[i]);
}

static void expect_policy_error(struct rbln_runtime *e, const struct rbln_plan_policy *p,
				const char *a, const char *b)
{
	struct rbln_error err = { 0 };

	assert_int_equal(rbln_runtime_set_policy(e, p, &err), -EINVAL);
	test_assert_contains_all(err.msg, a, b, NULL);
}

static void test_policy_checks(void **state)
{
	struct fixture *f = *state;

	expect_policy_error(f->e, &(struct rbln_plan_policy){ .max_seqs = 5 }, "max_seqs 5",
			    "batch_size 4");
	expect_policy_error(f->e, &(struct rbln_plan_policy){ .step_tokens = 129 },
			    "step_tokens 129", "prefill_chunk_size 128");
	expect_policy_error(f->e, &(struct rbln_plan_policy){ .admission = 7 }, "admission 7",
			    "RBLN_ADMIT_FCFS");
	set_policy(f->e, &(struct rbln_plan_policy){ 0 });
}

/* At most max_seqs sequences hold blocks; a step holds at most step_tokens tokens. */
static void test_max_seqs_and_step_tokens(void **state)
{
	struct fixture *f = *state;
	struct rbln_step_item items[4];
	struct rbln_runtime_info info;
	struct rbln_seq *s[3];
	size_t n, i;

	set_policy(f->e, &(struct rbln_plan_policy){ .max_seqs = 2, .step_tokens = 32 });
	for (i = 0; i < 3; i++)
		s[i] = add(f, 20, 4);
	n = rbln_runtime_plan(f->e, items);
	assert_int_equal(n, 2);
	assert_true(has_item(items, n, s[0], 20));
	assert_true(has_item(items, n, s[1], 12));
	rbln_runtime_get_info(f->e, &info);
	assert_int_equal(info.n_running, 2);
	run(f->e, items, n);
	/* s[0] decodes, s[1] finishes its prompt; s[2] waits for a slot. */
	n = rbln_runtime_plan(f->e, items);
	assert_int_equal(n, 2);
	assert_true(has_item(items, n, s[0], 1));
	assert_true(has_item(items, n, s[1], 8));
	run(f->e, items, n);
	eh_run_all(f->e);
	for (i = 0; i < 3; i++) {
		rbln_seq_output(s[i], &n);
		assert_int_equal(n, 4);
	}
	release_all(s, 3);
	set_policy(f->e, &(struct rbln_plan_policy){ 0 });
}

/*
 * a holds 6 of the 9 blocks; b (4 blocks) does not fit, c (1 block) does:
 * FCFS makes c wait behind b, first-fit admits c.
 */
static void test_admission_order(void **state)
{
	struct fixture *f = *state;
	struct rbln_step_item items[4];
	struct rbln_seq *s[3];
	size_t n;

	s[0] = add(f, 1500, 100);
	run_until_decoding(f->e, s[0]);
	s[1] = add(f, 1000, 4);
	s[2] = add(f, 100, 4);
	n = rbln_runtime_plan(f->e, items);
	assert_int_equal(n, 1);
	assert_true(has_item(items, n, s[0], 1));
	run(f->e, items, n);
	set_policy(f->e, &(struct rbln_plan_policy){ .admission = RBLN_ADMIT_FIRST_FIT });
	n = rbln_runtime_plan(f->e, items);
	assert_int_equal(n, 2);
	assert_true(has_item(items, n, s[0], 1));
	assert_true(has_item(items, n, s[2], 100));
	run(f->e, items, n);
	release_all(s, 3);
	set_policy(f->e, &(struct rbln_plan_policy){ 0 });
}

/*
 * With defer_prefill, a small prompt arriving while another decodes waits
 * (at most a measured prefill step) for company; a full step's worth of
 * prefill work runs at once.
 */
static void test_defer_prefill(void **state)
{
	struct fixture *f = *state;
	struct timespec ms = { 0, 1000000 };
	struct rbln_step_item items[4];
	struct rbln_seq *s[3];
	size_t n, tries;

	set_policy(f->e, &(struct rbln_plan_policy){ .defer_prefill = true });
	s[0] = add(f, 40, 1000);
	run_until_decoding(f->e, s[0]);
	s[1] = add(f, 10, 4);
	n = rbln_runtime_plan(f->e, items);
	assert_int_equal(n, 1);
	assert_true(has_item(items, n, s[0], 1));
	run(f->e, items, n);
	for (tries = 0; tries < 5000; tries++) {
		nanosleep(&ms, NULL);
		n = rbln_runtime_plan(f->e, items);
		run(f->e, items, n);
		if (has_item(items, n, s[1], 10))
			break;
	}
	assert_true(tries < 5000);
	/* 127 prompt tokens fill the step beside the decodes: no waiting. */
	s[2] = add(f, 127, 4);
	n = rbln_runtime_plan(f->e, items);
	assert_true(has_item(items, n, s[2], 126) || has_item(items, n, s[2], 127));
	run(f->e, items, n);
	release_all(s, 3);
	set_policy(f->e, &(struct rbln_plan_policy){ 0 });
}

static void count_preemption(void *user, struct rbln_seq *s)
{
	(void)s;
	(*(uint32_t *)user)++;
}

/* Four sequences that outgrow the cache: the callback hears of every preemption. */
static void test_preemption_callback(void **state)
{
	struct fixture *f = *state;
	uint32_t heard = 0, counted = 0;
	struct rbln_seq *s[4];
	size_t i, n;

	set_policy(f->e, &(struct rbln_plan_policy){ .preempted = count_preemption,
						     .user = &heard });
	for (i = 0; i < 4; i++)
		s[i] = add(f, 400, 200);
	eh_run_all(f->e);
	for (i = 0; i < 4; i++) {
		rbln_seq_output(s[i], &n);
		assert_int_equal(n, 200);
		counted += rbln_seq_preemptions(s[i]);
	}
	assert_true(counted > 0);
	assert_int_equal(heard, counted);
	release_all(s, 4);
	set_policy(f->e, &(struct rbln_plan_policy){ 0 });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_checks),
		cmocka_unit_test(test_max_seqs_and_step_tokens),
		cmocka_unit_test(test_admission_order),
		cmocka_unit_test(test_defer_prefill),
		cmocka_unit_test(test_preemption_callback),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
