// SPDX-License-Identifier: MIT
/*
 * Concurrency: many threads submitting to many queues on every device at
 * once, and the devices synchronising among themselves through
 * semaphores in shared buffers.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

#define WORKERS_PER_DEVICE 2
#define ITERATIONS 40
#define ELEMS 4096

struct worker {
	npu_device *dev;
	unsigned int id;
	uint64_t seed;
	char failure[160];
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	npu_queue *q = NULL;
	npu_stream *s = NULL;
	npu_buffer *src = NULL, *tmp = NULL, *dst = NULL;
	float *ps, *pd;
	int err;

#define FAIL(...) do { snprintf(w->failure, sizeof(w->failure), __VA_ARGS__); goto out; } while (0)
	if (npu_queue_create(w->dev, w->id % 2 ? NPU_PRIORITY_HIGH :
			     NPU_PRIORITY_NORMAL, &q) ||
	    npu_stream_create(w->dev, &s) ||
	    npu_buffer_alloc(w->dev, ELEMS * 4, 0, &src) ||
	    npu_buffer_alloc(w->dev, ELEMS * 4, 0, &tmp) ||
	    npu_buffer_alloc(w->dev, ELEMS * 4, 0, &dst) ||
	    npu_buffer_map(src, (void **)&ps) || npu_buffer_map(dst, (void **)&pd))
		FAIL("setup: %s", npu_error_detail());
	for (unsigned int i = 0; i < ELEMS; i++)
		ps[i] = (float)(i % 1000) + (float)w->id;

	for (unsigned int it = 0; it < ITERATIONS; it++) {
		float v = (float)(it * 3 + w->id);
		uint32_t bits;
		npu_fence *f;

		memcpy(&bits, &v, 4);
		npu_stream_reset(s);
		npu_stream_fill(s, tmp, 0, ELEMS * 4, bits);
		npu_stream_add_f32(s, dst, 0, src, 0, tmp, 0, ELEMS);
		err = npu_stream_submit(s, q, NULL, 0, &f);
		if (err)
			FAIL("submit: %s", npu_error_detail());
		err = npu_fence_wait(f, CONF_WAIT_NS);
		npu_fence_release(f);
		if (err)
			FAIL("iteration %u: %s", it, npu_strerror(err));
		for (unsigned int i = 0; i < ELEMS; i++)
			if (pd[i] != ps[i] + v)
				FAIL("iteration %u element %u: %g, want %g", it, i,
				     (double)pd[i], (double)(ps[i] + v));
	}
#undef FAIL
out:
	npu_buffer_free(dst);
	npu_buffer_free(tmp);
	npu_buffer_free(src);
	npu_stream_destroy(s);
	npu_queue_destroy(q);
	return NULL;
}

static void test_threads_queues_devices(void **state)
{
	struct fixture *fx = *state;
	unsigned int n = fx->count * WORKERS_PER_DEVICE;
	struct worker *workers = calloc(n, sizeof(*workers));
	pthread_t *threads = calloc(n, sizeof(*threads));

	assert_non_null(workers);
	assert_non_null(threads);
	for (unsigned int i = 0; i < n; i++) {
		workers[i].dev = fx->dev[i % fx->count];
		workers[i].id = i;
		assert_int_equal(pthread_create(&threads[i], NULL, worker_main,
						&workers[i]), 0);
	}
	for (unsigned int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	for (unsigned int i = 0; i < n; i++)
		if (workers[i].failure[0])
			fail_msg("worker %u: %s", i, workers[i].failure);
	free(threads);
	free(workers);
}

#define RING_ROUNDS 64
#define RING_ELEMS 1024
#define SEM_STRIDE 64

/*
 * A token goes around all devices RING_ROUNDS times: device i waits for
 * it from device i-1, adds its contribution (i + 1) to an accumulator in
 * a buffer every device shares, and passes the token on. One submission
 * per device holds all rounds, so the devices synchronise without the
 * CPU. The sum comes out exact only if every device saw every earlier
 * addition (release/acquire through the semaphores).
 */
static void test_semaphore_ring(void **state)
{
	struct fixture *fx = *state;
	unsigned int n = fx->count;
	uint64_t acc_offset = (uint64_t)n * SEM_STRIDE;
	uint64_t ring_size = acc_offset + RING_ELEMS * 4;
	npu_buffer *ring[CONF_MAX_DEVICES], *contrib[CONF_MAX_DEVICES];
	npu_fence *fences[CONF_MAX_DEVICES];

	ring[0] = conf_alloc(fx->dev[0], ring_size, 0);
	for (unsigned int i = 0; i < n; i++) {
		if (i > 0)
			assert_ok(npu_buffer_share(ring[0], fx->dev[i], &ring[i]));
		contrib[i] = conf_alloc(fx->dev[i], RING_ELEMS * 4, 0);
		float *c = conf_map(contrib[i]);

		for (unsigned int e = 0; e < RING_ELEMS; e++)
			c[e] = (float)(i + 1);
	}

	for (unsigned int i = 0; i < n; i++) {
		npu_stream *s = fx->stream[i];
		uint64_t my_sem = (uint64_t)i * SEM_STRIDE;
		uint64_t next_sem = (uint64_t)((i + 1) % n) * SEM_STRIDE;

		for (unsigned int r = 0; r < RING_ROUNDS; r++) {
			/* Device 0 starts each round when the token is back. */
			uint64_t want = i == 0 ? r : r + 1;

			if (want)
				npu_stream_sem_wait(s, ring[i], my_sem, NPU_SEM_GEQ,
						    want, 20000 * CONF_MS);
			npu_stream_add_f32(s, ring[i], acc_offset, ring[i],
					   acc_offset, contrib[i], 0, RING_ELEMS);
			npu_stream_sem_signal(s, ring[i], next_sem, NPU_SEM_ADD, 1);
		}
		fences[i] = conf_submit(s, fx->queue[i], NULL, 0);
		npu_stream_reset(s);
	}
	assert_ok(npu_fence_wait_all(fences, n, CONF_WAIT_NS));

	unsigned char *base = conf_map(ring[0]);
	float *acc = (float *)(base + acc_offset);
	float want = (float)RING_ROUNDS * (float)(n * (n + 1) / 2);

	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(*(uint64_t *)(base + i * SEM_STRIDE), RING_ROUNDS);
	for (unsigned int e = 0; e < RING_ELEMS; e++)
		if (acc[e] != want)
			fail_msg("element %u: %g, want %g", e, (double)acc[e],
				 (double)want);

	for (unsigned int i = 0; i < n; i++) {
		npu_fence_release(fences[i]);
		npu_buffer_free(contrib[i]);
		if (i > 0)
			npu_buffer_free(ring[i]);
	}
	npu_buffer_free(ring[0]);
}

const struct CMUnitTest conf_concurrency_tests[] = {
	cmocka_unit_test_setup_teardown(test_threads_queues_devices,
					fixture_setup, fixture_teardown),
	cmocka_unit_test_setup_teardown(test_semaphore_ring, fixture_setup,
					fixture_teardown),
};
const size_t conf_concurrency_count = sizeof(conf_concurrency_tests) / sizeof(conf_concurrency_tests[0]);
