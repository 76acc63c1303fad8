// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_sem.c - SEM_SIGNAL and SEM_WAIT: set/add (wrapping), conditions,
 * timeouts and cancellation through a scripted clock, the back-off
 * callback's contract, a real timeout on CLOCK_MONOTONIC, and
 * release/acquire hand-over of data between two threads running streams.
 */
#include <pthread.h>
#include <time.h>

#include "model_test.h"

#define RW	(RBLN_MODEL_READ | RBLN_MODEL_WRITE)

static void test_signal(void **state)
{
	uint64_t sems[4] = { 5, 6, UINT64_MAX - 1, 8 };
	struct rbln_model_bo bo = { (uint8_t *)sems, sizeof(sems), RW };
	struct fake_env f;
	struct sb sb;

	(void)state;
	fake_env_init(&f, 1);
	sb_init(&sb);
	sb_signal(&sb, OPND(0, 0, 8), RBLN_SEM_SET, 42);
	sb_signal(&sb, OPND(0, 8, 8), RBLN_SEM_ADD, 10);
	sb_signal(&sb, OPND(0, 16, 8), RBLN_SEM_ADD, 3);	/* wraps */
	sb_signal(&sb, OPND(0, 24, 8), RBLN_SEM_SET, 0);
	sb_signal(&sb, OPND(0, 8, 8), RBLN_SEM_ADD, 1);
	run_ok(&sb, &bo, 1, &f.env);
	assert_int_equal(sems[0], 42);
	assert_int_equal(sems[1], 17);
	assert_int_equal(sems[2], 1);
	assert_int_equal(sems[3], 0);
	/* No waiting involved: no back-off, no clock. */
	assert_int_equal(f.relax_calls, 0);
	assert_int_equal(f.now_calls, 0);
	sb_free(&sb);
}

static void test_wait_satisfied(void **state)
{
	uint64_t sems[2] = { 7, UINT64_MAX };
	struct rbln_model_bo bo = { (uint8_t *)sems, sizeof(sems),
				    RBLN_MODEL_READ };
	struct fake_env f;
	struct sb sb;

	(void)state;
	fake_env_init(&f, 1);
	sb_init(&sb);
	sb_wait(&sb, OPND(0, 0, 8), RBLN_SEM_GEQ, 7, 1);
	sb_wait(&sb, OPND(0, 0, 8), RBLN_SEM_GEQ, 0, 1);
	sb_wait(&sb, OPND(0, 0, 8), RBLN_SEM_EQ, 7, 1);
	sb_wait(&sb, OPND(0, 8, 8), RBLN_SEM_EQ, UINT64_MAX, 1);
	sb_wait(&sb, OPND(0, 8, 8), RBLN_SEM_GEQ, UINT64_MAX, 1);
	/* A huge tick: the deadline has passed by the first clock read, but
	 * a satisfied counter is seen first. */
	f.tick = 1ULL << 50;
	run_ok(&sb, &bo, 1, &f.env);
	assert_int_equal(f.relax_calls, 0);
	sb_free(&sb);
}

/* Runs [FILL 1, SEM_WAIT, FILL 2] and checks how far it got. */
static int wait_job(struct fake_env *f, uint64_t *sem, uint32_t cond,
		    uint64_t value, uint64_t timeout, int *after_ran)
{
	struct rbln_model_diag diag;
	uint32_t data[2] = { 0, 0 };
	struct rbln_model_bo bos[2] = {
		{ (uint8_t *)sem, 8, RW },
		{ (uint8_t *)data, sizeof(data), RW },
	};
	struct sb sb;
	int ret;

	sb_init(&sb);
	sb_fill(&sb, OPND(1, 0, 4), 1);
	sb_wait(&sb, OPND(0, 0, 8), cond, value, timeout);
	sb_fill(&sb, OPND(1, 4, 4), 2);
	assert_int_equal(rbln_model_validate(sb.buf, sb.len, bos, 2, NULL), 0);
	memset(&diag, 0xa5, sizeof(diag));
	ret = rbln_model_execute(sb.buf, sb.len, bos, 2, &f->env, &diag);
	assert_int_equal(data[0], 1);
	*after_ran = data[1] == 2;
	if (ret) {
		assert_int_equal(diag.reason, RBLN_ISA_OK);
		assert_int_equal(diag.cmd_index, 1);
		assert_int_equal(diag.cmd_offset, sb.offsets[1]);
		assert_int_equal(diag.opcode, RBLN_OP_SEM_WAIT);
		assert_int_equal(diag.operand, RBLN_ISA_NO_INDEX);
	}
	sb_free(&sb);
	return ret;
}

static void test_wait_timeout(void **state)
{
	struct fake_env f;
	uint64_t sem = 3;
	int after;

	(void)state;
	fake_env_init(&f, 1);
	f.tick = 100;
	assert_int_equal(wait_job(&f, &sem, RBLN_SEM_GEQ, 4, 1000, &after),
			 -RBLN_ETIMEDOUT);
	assert_false(after);
	/* Clock reads at 100 (start), 200, ..., 1100: 10 polls, 9 relaxes
	 * between them, spins counting 1, 2, 3, ... */
	assert_int_equal(f.now_calls, 11);
	assert_int_equal(f.relax_calls, 9);
	assert_int_equal(f.last_spins, 9);
	assert_true(f.spins_monotonic);

	/* The longest timeout times out too, and the model never spins
	 * without calling back. */
	fake_env_init(&f, 1);
	f.tick = RBLN_ISA_SEM_WAIT_MAX_NS / 1000;
	assert_int_equal(wait_job(&f, &sem, RBLN_SEM_EQ, 0,
				  RBLN_ISA_SEM_WAIT_MAX_NS, &after),
			 -RBLN_ETIMEDOUT);
	assert_int_equal(f.relax_calls, 999);
	assert_int_equal(sem, 3);
}

static void test_wait_later(void **state)
{
	struct fake_env f;
	uint64_t sem = 0;
	int after;

	(void)state;
	/* The counter reaches the value during the fifth back-off. */
	fake_env_init(&f, 1);
	f.set_sem = &sem;
	f.set_at = 5;
	f.set_value = 9;
	assert_int_equal(wait_job(&f, &sem, RBLN_SEM_GEQ, 9, 1000000, &after),
			 0);
	assert_true(after);
	assert_int_equal(f.relax_calls, 5);

	/* EQ is not GEQ: overshooting the value never satisfies it. */
	sem = 0;
	fake_env_init(&f, 1);
	f.set_sem = &sem;
	f.set_at = 2;
	f.set_value = 10;
	f.tick = 1000;
	assert_int_equal(wait_job(&f, &sem, RBLN_SEM_EQ, 9, 100000, &after),
			 -RBLN_ETIMEDOUT);
	assert_false(after);
}

static void test_wait_cancel(void **state)
{
	struct fake_env f;
	uint64_t sem = 0;
	int after;

	(void)state;
	fake_env_init(&f, 1);
	/* Calls: before FILL, before SEM_WAIT, then one per poll. */
	f.cancel_after = 6;
	assert_int_equal(wait_job(&f, &sem, RBLN_SEM_GEQ, 1,
				  RBLN_ISA_SEM_WAIT_MAX_NS, &after),
			 -RBLN_ECANCELED);
	assert_false(after);
	assert_int_equal(f.cancel_calls, 6);
	assert_int_equal(f.relax_calls, 3);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void test_wait_real_clock(void **state)
{
	struct rbln_model_diag diag;
	uint64_t sem = 0, t0, t1;
	struct rbln_model_bo bo = { (uint8_t *)&sem, 8, RW };
	struct sb sb;

	(void)state;
	sb_init(&sb);
	sb_wait(&sb, OPND(0, 0, 8), RBLN_SEM_GEQ, 1, 20000000);	/* 20 ms */
	t0 = mono_ns();
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, &bo, 1,
					    real_env(1), &diag),
			 -RBLN_ETIMEDOUT);
	t1 = mono_ns();
	assert_true(t1 - t0 >= 20000000);
	sb_free(&sb);
}

/*
 * Two streams on two threads, as on two devices sharing buffers: the
 * producer fills a block and signals, the consumer waits and copies the
 * block out. Acquire/release order means the consumer never sees stale
 * data; each round uses a new value and a new semaphore target.
 */
struct handover {
	uint64_t sem;
	uint8_t *data;
	uint8_t *out;
	uint64_t size;
	uint32_t rounds;
	int producer_err;
};

static void *producer(void *arg)
{
	struct handover *h = arg;
	struct rbln_model_bo bos[2] = {
		{ (uint8_t *)&h->sem, 8, RW },
		{ h->data, h->size, RW },
	};
	struct sb sb;
	uint32_t r;

	for (r = 1; r <= h->rounds; r++) {
		sb_init(&sb);
		/* Wait until the consumer took the previous round. */
		sb_wait(&sb, OPND(0, 0, 8), RBLN_SEM_EQ, 2 * (r - 1),
			RBLN_ISA_SEM_WAIT_MAX_NS);
		sb_fill(&sb, OPND(1, 0, h->size), r * 0x01000193U);
		sb_signal(&sb, OPND(0, 0, 8), RBLN_SEM_ADD, 1);
		/* No cmocka assertions off the test's thread: report back. */
		if (!h->producer_err)
			h->producer_err = rbln_model_validate(sb.buf, sb.len,
							      bos, 2, NULL);
		if (!h->producer_err)
			h->producer_err = rbln_model_execute(sb.buf, sb.len,
							     bos, 2,
							     real_env(1),
							     NULL);
		sb_free(&sb);
	}
	return NULL;
}

static void test_handover_threads(void **state)
{
	struct handover h = { .size = 256 * 1024, .rounds = 50 };
	struct rbln_model_bo bos[3];
	pthread_t thread;
	uint8_t *want;
	struct sb sb;
	uint32_t r;

	(void)state;
	h.data = malloc(h.size);
	h.out = malloc(h.size);
	want = malloc(h.size);
	assert_non_null(h.data);
	assert_non_null(h.out);
	assert_non_null(want);
	memset(h.data, 0, h.size);
	bos[0] = (struct rbln_model_bo){ (uint8_t *)&h.sem, 8, RW };
	bos[1] = (struct rbln_model_bo){ h.data, h.size, RBLN_MODEL_READ };
	bos[2] = (struct rbln_model_bo){ h.out, h.size, RW };
	assert_int_equal(pthread_create(&thread, NULL, producer, &h), 0);
	for (r = 1; r <= h.rounds; r++) {
		sb_init(&sb);
		sb_wait(&sb, OPND(0, 0, 8), RBLN_SEM_GEQ, 2 * r - 1,
			RBLN_ISA_SEM_WAIT_MAX_NS);
		sb_copy(&sb, OPND(2, 0, h.size), OPND(1, 0, h.size));
		sb_signal(&sb, OPND(0, 0, 8), RBLN_SEM_ADD, 1);
		run_ok(&sb, bos, 3, real_env(1));
		sb_free(&sb);
		ref_fill(want, h.size, r * 0x01000193U);
		assert_memory_equal(h.out, want, h.size);
	}
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(h.producer_err, 0);
	assert_int_equal(h.sem, 2 * h.rounds);
	free(h.data);
	free(h.out);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signal),
		cmocka_unit_test(test_wait_satisfied),
		cmocka_unit_test(test_wait_timeout),
		cmocka_unit_test(test_wait_later),
		cmocka_unit_test(test_wait_cancel),
		cmocka_unit_test(test_wait_real_clock),
		cmocka_unit_test(test_handover_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
