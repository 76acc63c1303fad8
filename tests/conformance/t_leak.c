// SPDX-License-Identifier: MIT
/*
 * Resource leaks: many allocate/submit/free cycles must leave device
 * memory and file descriptors where they were. (Heap leaks are the
 * sanitizer build's job.)
 */
#include <stdlib.h>

#include "conformance.h"

#define CYCLES 10000

static void test_alloc_submit_free_cycles(void **state)
{
	struct fixture *fx = *state;
	struct npu_device_info before[CONF_MAX_DEVICES], after;
	npu_buffer *keep = conf_alloc(fx->dev[0], 4096, 0);

	/* Streams allocate their command buffers at the first submission. */
	for (unsigned int d = 0; d < fx->count; d++) {
		npu_stream_nop(fx->stream[d]);
		conf_run(fx->stream[d], fx->queue[d]);
		assert_ok(npu_device_query(fx->dev[d], &before[d]));
	}
	int fds = conf_open_fds();

	for (unsigned int i = 0; i < CYCLES; i++) {
		unsigned int d = i % fx->count;
		npu_stream *s = fx->stream[d];
		uint64_t size = 4096 * (1 + i % 4);
		npu_buffer *buf = conf_alloc(fx->dev[d],  size,
					     i % 5 ? 0 : NPU_BUFFER_HOST);
		npu_fence *f;

		npu_stream_fill(s, buf, 0, size, i);
		if (d == 0)
			npu_stream_copy(s, keep, 0, buf, 0, 4096);
		f = conf_submit(s, fx->queue[d], NULL, 0);
		npu_stream_reset(s);
		/* Every other job is left running when its buffer is freed. */
		if (i % 2)
			assert_ok(npu_fence_wait(f, CONF_WAIT_NS));
		npu_fence_release(f);
		npu_buffer_free(buf);
	}
	assert_int_equal(((uint32_t *)conf_map(keep))[0],
			 (CYCLES - 1) - (CYCLES - 1) % fx->count);
	for (unsigned int d = 0; d < fx->count; d++) {
		assert_ok(npu_device_query(fx->dev[d], &after));
		assert_int_equal(after.mem_used, before[d].mem_used);
	}
	assert_int_equal(conf_open_fds(), fds);
	npu_buffer_free(keep);
}

const struct CMUnitTest conf_leak_tests[] = {
	cmocka_unit_test_setup_teardown(test_alloc_submit_free_cycles,
					fixture_setup, fixture_teardown),
};
const size_t conf_leak_count = sizeof(conf_leak_tests) / sizeof(conf_leak_tests[0]);
