// SPDX-License-Identifier: MIT
/*
 * Fences: timeouts, job errors, dependencies across devices, buffers
 * becoming idle.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/*
 * A SEM_WAIT nobody satisfies: waiting on the fence briefly times out
 * (-ETIME, the job goes on), the job itself ends with -ETIMEDOUT. Its one
 * second leaves room for slow machines (a VM under TCG) between the
 * submission and the checks that expect it still running.
 */
static void test_fence_timeout(void **state)
{
	struct fixture *fx = *state;
	npu_stream *s = fx->stream[0];
	npu_buffer *sem = conf_alloc(fx->dev[0], 4096, 0);
	npu_buffer *marker = conf_alloc(fx->dev[0], 4096, 0);
	uint32_t *m = conf_map(marker);

	npu_stream_sem_wait(s, sem, 0, NPU_SEM_GEQ, 1, 1000 * CONF_MS);
	/* Commands after the failed wait must not run. */
	npu_stream_fill(s, marker, 0, 4096, 0xdeadbeef);
	npu_fence *f = conf_submit(s, fx->queue[0], NULL, 0);

	npu_stream_reset(s);
	assert_npu(npu_fence_wait(f, 10 * CONF_MS), -ETIME);
	assert_npu(npu_fence_poll(f), -EBUSY);
	assert_npu(npu_buffer_wait_idle(sem, 1 * CONF_MS), -ETIME);
	assert_npu(npu_fence_wait(f, CONF_WAIT_NS), -ETIMEDOUT);
	assert_npu(npu_fence_poll(f), -ETIMEDOUT);
	assert_ok(npu_buffer_wait_idle(sem, 0));
	assert_int_equal(m[0], 0);

	/* An extra reference outlives the first one. */
	npu_fence *again = npu_fence_ref(f);

	assert_ptr_equal(again, f);
	npu_fence_release(f);
	assert_npu(npu_fence_wait(again, 0), -ETIMEDOUT);
	npu_fence_release(again);
	npu_fence_release(NULL);

	/* The queue goes on with the next job. */
	npu_stream_fill(s, marker, 0, 4, 1);
	conf_run(s, fx->queue[0]);
	assert_int_equal(m[0], 1);
	npu_buffer_free(marker);
	npu_buffer_free(sem);
}

/*
 * A job on device 1 that waits for a job of device 0 starts only after it:
 * device 0's job is held back by a semaphore the CPU releases.
 */
static void test_cross_device_dependency(void **state)
{
	struct fixture *fx = *state;

	if (fx->count < 2)
		skip();
	npu_buffer *gate = conf_alloc(fx->dev[0], 4096, NPU_BUFFER_HOST);
	npu_buffer *x = conf_alloc(fx->dev[0], 4096, 0);
	npu_buffer *x_on_1, *y = conf_alloc(fx->dev[1], 4096, 0);
	uint32_t *py = conf_map(y);

	assert_ok(npu_buffer_share(x, fx->dev[1], &x_on_1));
	npu_stream_sem_wait(fx->stream[0], gate, 0, NPU_SEM_EQ, 1, 20000 * CONF_MS);
	npu_stream_fill(fx->stream[0], x, 0, 4096, 7);
	npu_fence *f0 = conf_submit(fx->stream[0], fx->queue[0], NULL, 0);

	npu_stream_copy(fx->stream[1], y, 0, x_on_1, 0, 4096);
	npu_fence *f1 = conf_submit(fx->stream[1], fx->queue[1], &f0, 1);

	/* Device 1 is idle, yet its job waits for device 0's. */
	assert_npu(npu_fence_wait(f1, 50 * CONF_MS), -ETIME);
	assert_int_equal(py[0], 0);
	__atomic_store_n((uint64_t *)conf_map(gate), 1, __ATOMIC_RELEASE);
	assert_ok(npu_fence_wait(f1, CONF_WAIT_NS));
	assert_ok(npu_fence_poll(f0));
	for (unsigned int i = 0; i < 1024; i++)
		assert_int_equal(py[i], 7);

	npu_fence_release(f0);
	npu_fence_release(f1);
	npu_stream_reset(fx->stream[0]);
	npu_stream_reset(fx->stream[1]);
	npu_buffer_free(x_on_1);
	npu_buffer_free(y);
	npu_buffer_free(x);
	npu_buffer_free(gate);
}

/*
 * A job whose dependency failed does not run: it ends with -ECANCELED and
 * its commands leave no trace. Dependencies chain across all devices.
 */
static void test_failed_dependency(void **state)
{
	struct fixture *fx = *state;
	unsigned int n = fx->count;
	npu_buffer *sem = conf_alloc(fx->dev[0], 4096, 0);
	npu_buffer *out[CONF_MAX_DEVICES];
	npu_fence *fences[CONF_MAX_DEVICES];

	npu_stream_sem_wait(fx->stream[0], sem, 0, NPU_SEM_GEQ, 1, 20 * CONF_MS);
	fences[0] = conf_submit(fx->stream[0], fx->queue[0], NULL, 0);
	npu_stream_reset(fx->stream[0]);
	for (unsigned int i = 1; i < n; i++) {
		out[i] = conf_alloc(fx->dev[i], 4096, 0);
		npu_stream_fill(fx->stream[i], out[i], 0, 4096, 0x55);
		fences[i] = conf_submit(fx->stream[i], fx->queue[i],
					&fences[i - 1], 1);
		npu_stream_reset(fx->stream[i]);
	}
	assert_npu(npu_fence_wait(fences[0], CONF_WAIT_NS), -ETIMEDOUT);
	for (unsigned int i = 1; i < n; i++) {
		assert_npu(npu_fence_wait(fences[i], CONF_WAIT_NS), -ECANCELED);
		assert_int_equal(((uint32_t *)conf_map(out[i]))[0], 0);
	}
	/* wait_all reports the first failure after waiting for all. */
	assert_npu(npu_fence_wait_all(fences, n, CONF_WAIT_NS), -ETIMEDOUT);
	for (unsigned int i = 0; i < n; i++) {
		npu_fence_release(fences[i]);
		if (i > 0)
			npu_buffer_free(out[i]);
	}
	npu_buffer_free(sem);
}

/* A dependency on a fence that has long signalled costs nothing. */
static void test_signalled_dependency(void **state)
{
	struct fixture *fx = *state;
	unsigned int last = fx->count - 1;
	npu_buffer *buf = conf_alloc(fx->dev[last], 4096, 0);

	npu_stream_nop(fx->stream[0]);
	npu_fence *done = conf_submit(fx->stream[0], fx->queue[0], NULL, 0);

	npu_stream_reset(fx->stream[0]);
	assert_ok(npu_fence_wait(done, CONF_WAIT_NS));
	npu_fence *deps[3] = { done, done, done };

	npu_stream_fill(fx->stream[last], buf, 0, 4, 9);
	npu_fence *f = conf_submit(fx->stream[last], fx->queue[last], deps, 3);

	npu_stream_reset(fx->stream[last]);
	assert_ok(npu_fence_wait(f, CONF_WAIT_NS));
	assert_int_equal(*(uint32_t *)conf_map(buf), 9);
	npu_fence_release(f);
	npu_fence_release(done);
	npu_buffer_free(buf);
}

/* npu_buffer_free() waits for the jobs that use the buffer. */
static void test_free_waits_for_jobs(void **state)
{
	struct fixture *fx = *state;
	npu_buffer *gate = conf_alloc(fx->dev[0], 4096, 0);
	npu_buffer *busy = conf_alloc(fx->dev[0], 1 << 20, 0);

	npu_stream_sem_wait(fx->stream[0], gate, 0, NPU_SEM_GEQ, 1, 1000 * CONF_MS);
	npu_stream_fill(fx->stream[0], busy, 0, 1 << 20, 1);
	npu_fence *f = conf_submit(fx->stream[0], fx->queue[0], NULL, 0);

	npu_stream_reset(fx->stream[0]);
	assert_npu(npu_buffer_wait_idle(busy, 0), -ETIME);
	npu_buffer_free(busy);
	/* Freeing returned, so the job is over. */
	assert_npu(npu_fence_poll(f), -ETIMEDOUT);
	npu_fence_release(f);
	npu_buffer_free(gate);
}

const struct CMUnitTest conf_sync_tests[] = {
	cmocka_unit_test_setup_teardown(test_fence_timeout, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_cross_device_dependency,
					fixture_setup, fixture_teardown),
	cmocka_unit_test_setup_teardown(test_failed_dependency, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_signalled_dependency,
					fixture_setup, fixture_teardown),
	cmocka_unit_test_setup_teardown(test_free_waits_for_jobs,
					fixture_setup, fixture_teardown),
};
const size_t conf_sync_count = sizeof(conf_sync_tests) / sizeof(conf_sync_tests[0]);
