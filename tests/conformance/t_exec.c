// SPDX-License-Identifier: MIT
/*
 * Execution: FILL, COPY and ADD against a CPU reference on random data,
 * order within a queue, large operations split over several engines.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

#define ARENA (256 * 1024)

/* A random 4-aligned range of at most @max bytes inside ARENA. */
static void rand_range4(uint64_t max, uint64_t *offset, uint64_t *size)
{
	*size = 4 * (1 + conf_rand() % (max / 4));
	*offset = 4 * (conf_rand() % ((ARENA - *size) / 4 + 1));
}

static void test_fill_copy_add(void **state)
{
	struct fixture *fx = *state;

	for (unsigned int d = 0; d < fx->count; d++) {
		npu_stream *s = fx->stream[d];
		npu_buffer *buf_a = conf_alloc(fx->dev[d], ARENA, 0);
		npu_buffer *buf_b = conf_alloc(fx->dev[d], ARENA, 0);
		unsigned char *a = conf_map(buf_a), *b = conf_map(buf_b);
		unsigned char *ref_a = malloc(ARENA), *ref_b = malloc(ARENA);

		assert_non_null(ref_a);
		assert_non_null(ref_b);
		conf_rand_fill(a, ARENA);
		conf_rand_fill(b, ARENA);
		memcpy(ref_a, a, ARENA);
		memcpy(ref_b, b, ARENA);

		/* Several commands per stream: each sees the one before. */
		for (int round = 0; round < 12; round++) {
			uint64_t off, size, off2;
			uint32_t value = (uint32_t)conf_rand();

			rand_range4(64 * 1024, &off, &size);
			npu_stream_fill(s, buf_a, off, size, value);
			for (uint64_t i = 0; i < size; i += 4)
				memcpy(ref_a + off + i, &value, 4);

			/* COPY: any alignment, and overlap within one buffer. */
			size = 1 + conf_rand() % (64 * 1024);
			off = conf_rand() % (ARENA - size + 1);
			off2 = conf_rand() % (ARENA - size + 1);
			npu_stream_copy(s, buf_b, off2, buf_a, off, size);
			memmove(ref_b + off2, ref_a + off, size);
			size = 1 + conf_rand() % (16 * 1024);
			off = conf_rand() % (ARENA - size + 1);
			off2 = conf_rand() % (ARENA - size + 1);
			npu_stream_copy(s, buf_b, off2, buf_b, off, size);
			memmove(ref_b + off2, ref_b + off, size);
		}
		conf_run(s, fx->queue[d]);
		assert_memory_equal(a, ref_a, ARENA);
		assert_memory_equal(b, ref_b, ARENA);

		/* ADD on random finite floats: dst = a + b, and in place. */
		const size_t n = ARENA / 4 / 2;
		float *fa = (float *)a, *fb = (float *)b;

		for (size_t i = 0; i < 2 * n; i++) {
			fa[i] = conf_rand_float();
			fb[i] = conf_rand_float();
		}
		float *expect = malloc(2 * n * sizeof(float));

		assert_non_null(expect);
		for (size_t i = 0; i < n; i++)
			expect[i] = fa[i] + fb[n + i];
		for (size_t i = 0; i < n; i++)
			expect[n + i] = fb[n + i] + fb[i];
		npu_stream_add_f32(s, buf_a, 0, buf_a, 0, buf_b, n * 4, n);
		npu_stream_add_f32(s, buf_b, n * 4, buf_b, n * 4, buf_b, 0, n);
		conf_run(s, fx->queue[d]);
		/* Bitwise: IEEE round-to-nearest-even in both places. */
		assert_memory_equal(fa, expect, n * sizeof(float));
		assert_memory_equal(fb + n, expect + n, n * sizeof(float));

		free(expect);
		free(ref_a);
		free(ref_b);
		npu_buffer_free(buf_a);
		npu_buffer_free(buf_b);
	}
}

static void test_special_floats(void **state)
{
	struct fixture *fx = *state;
	const float cases[][2] = {
		{ 1e-45f, 1e-45f },		/* denormals are kept */
		{ 1.17549421e-38f, -1e-45f },	/* normal minus denormal */
		{ 3.4e38f, 3.4e38f },		/* overflow to infinity */
		{ 1.0f, 5.96046448e-08f },	/* tie rounds to even */
		{ -0.0f, -0.0f },
		{ 0.1f, 0.2f },
	};
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	npu_buffer *buf = conf_alloc(fx->dev[0], 4096, 0);
	float *p = conf_map(buf);

	for (size_t i = 0; i < n; i++) {
		p[i] = cases[i][0];
		p[64 + i] = cases[i][1];
	}
	npu_stream_add_f32(fx->stream[0], buf, 512, buf, 0, buf, 256, n);
	conf_run(fx->stream[0], fx->queue[0]);
	for (size_t i = 0; i < n; i++) {
		volatile float sum = cases[i][0] + cases[i][1];

		assert_memory_equal(&p[128 + i], (const void *)&sum, sizeof(float));
	}
	npu_buffer_free(buf);
}

/*
 * Each job waits until the counter equals its own number, then bumps it:
 * a job that ran before its predecessor would wait out its timeout and
 * fail with -ETIMEDOUT.
 */
static void test_in_order(void **state)
{
	struct fixture *fx = *state;
	const unsigned int jobs = 200;
	npu_buffer *counter = conf_alloc(fx->dev[0], 4096, 0);
	npu_fence **fences = calloc(jobs, sizeof(*fences));
	npu_stream *s = fx->stream[0];

	assert_non_null(fences);
	for (unsigned int k = 0; k < jobs; k++) {
		npu_stream_sem_wait(s, counter, 0, NPU_SEM_EQ, k, 10000 * CONF_MS);
		npu_stream_sem_signal(s, counter, 0, NPU_SEM_SET, k + 1);
		fences[k] = conf_submit(s, fx->queue[0], NULL, 0);
		npu_stream_reset(s);
	}
	assert_ok(npu_fence_wait(fences[jobs - 1], CONF_WAIT_NS));
	/* Jobs of one queue also complete in order. */
	for (unsigned int k = 0; k < jobs; k++) {
		assert_ok(npu_fence_poll(fences[k]));
		npu_fence_release(fences[k]);
	}
	assert_int_equal(*(uint64_t *)conf_map(counter), jobs);
	free(fences);
	npu_buffer_free(counter);
}

/* Operations large enough to be split over the device's engines. */
static void test_large_split(void **state)
{
	(void)state;
	struct npu_context_options opts = {
		.struct_size = sizeof(opts), .emul_engines = 3,
	};
	npu_context *ctx;
	npu_device *dev;
	npu_queue *q;
	npu_stream *s;
	const size_t n = (8u << 20) / sizeof(float);

	assert_ok(npu_context_create(&opts, &ctx));
	assert_ok(npu_device_open(ctx, 0, &dev));
	assert_ok(npu_queue_create(dev, NPU_PRIORITY_HIGH, &q));
	assert_ok(npu_stream_create(dev, &s));
	npu_buffer *ba = conf_alloc(dev, n * 4, 0), *bb = conf_alloc(dev, n * 4, 0);
	npu_buffer *bc = conf_alloc(dev, n * 4, 0);
	float *a = conf_map(ba), *b = conf_map(bb), *c = conf_map(bc);

	float *expect = malloc(n * sizeof(float));

	assert_non_null(expect);
	for (size_t i = 0; i < n; i++) {
		a[i] = conf_rand_float();
		b[i] = conf_rand_float();
		expect[i] = a[i] + b[i];
	}
	npu_stream_add_f32(s, bc, 0, ba, 0, bb, 0, n);
	npu_stream_barrier(s);
	npu_stream_copy(s, ba, 0, bc, 0, n * 4);
	npu_stream_fill(s, bb, 4, (n - 2) * 4, 0x7f7f7f7f);
	conf_run(s, q);
	assert_memory_equal(c, expect, n * sizeof(float));
	assert_memory_equal(a, expect, n * sizeof(float));
	free(expect);
	uint32_t *words = (uint32_t *)b;

	assert_int_not_equal(words[0], 0x7f7f7f7f);
	assert_int_equal(words[1], 0x7f7f7f7f);
	assert_int_equal(words[n - 2], 0x7f7f7f7f);
	assert_int_not_equal(words[n - 1], 0x7f7f7f7f);

	npu_buffer_free(ba);
	npu_buffer_free(bb);
	npu_buffer_free(bc);
	npu_stream_destroy(s);
	npu_queue_destroy(q);
	npu_device_close(dev);
	npu_context_destroy(ctx);
}

static void test_raw_and_padding(void **state)
{
	struct fixture *fx = *state;
	npu_stream *s = fx->stream[0];
	npu_buffer *buf = conf_alloc(fx->dev[0], 4096, 0);
	uint32_t *p = conf_map(buf);
	uint64_t before = npu_stream_size(s);

	assert_int_equal(before, sizeof(struct rbln_isa_stream_header));
	/* A 24-byte NOP is padding, and any multiple of 8 is allowed. */
	uint64_t nop[3] = { 0 };
	struct rbln_isa_cmd hdr = { .opcode = RBLN_OP_NOP, .size = 24 };

	memcpy(nop, &hdr, sizeof(hdr));
	npu_stream_raw(s, nop, sizeof(nop));
	npu_stream_nop(s);
	struct rbln_isa_fill fill = {
		.hdr = { .opcode = RBLN_OP_FILL, .size = sizeof(fill) },
		.dst = { .bo = npu_stream_buffer_index(s, buf, NPU_ACCESS_WRITE),
			 .offset = 8, .size = 8 },
		.value = 0x01020304,
	};

	npu_stream_raw(s, &fill, sizeof(fill));
	assert_int_equal(npu_stream_size(s), before + 24 + 8 + sizeof(fill));
	const struct rbln_isa_stream_header *sh = npu_stream_data(s);

	assert_int_equal(sh->magic, RBLN_ISA_MAGIC);
	assert_int_equal(sh->size, npu_stream_size(s));
	/* The same buffer again gets the same index. */
	assert_int_equal(npu_stream_buffer_index(s, buf, NPU_ACCESS_READ),
			 fill.dst.bo);
	conf_run(s, fx->queue[0]);
	assert_int_equal(p[1], 0);
	assert_int_equal(p[2], 0x01020304);
	assert_int_equal(p[3], 0x01020304);
	assert_int_equal(p[4], 0);
	npu_buffer_free(buf);
}

/* Destroying a queue leaves its submitted jobs to run. */
static void test_queue_destroy_pending(void **state)
{
	struct fixture *fx = *state;
	npu_queue *q;
	npu_fence *fences[16];
	npu_buffer *buf = conf_alloc(fx->dev[0], 4096, 0);
	npu_stream *s = fx->stream[0];

	assert_ok(npu_queue_create(fx->dev[0], NPU_PRIORITY_LOW, &q));
	assert_ptr_equal(npu_queue_device(q), fx->dev[0]);
	for (unsigned int i = 0; i < 16; i++) {
		npu_stream_sem_signal(s, buf, 0, NPU_SEM_ADD, 1);
		fences[i] = conf_submit(s, q, NULL, 0);
		npu_stream_reset(s);
	}
	npu_queue_destroy(q);
	assert_ok(npu_fence_wait_all(fences, 16, CONF_WAIT_NS));
	for (unsigned int i = 0; i < 16; i++)
		npu_fence_release(fences[i]);
	assert_int_equal(*(uint64_t *)conf_map(buf), 16);
	npu_buffer_free(buf);
}

const struct CMUnitTest conf_exec_tests[] = {
	cmocka_unit_test_setup_teardown(test_fill_copy_add, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_special_floats, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_in_order, fixture_setup,
					fixture_teardown),
	cmocka_unit_test(test_large_split),
	cmocka_unit_test_setup_teardown(test_raw_and_padding, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_queue_destroy_pending,
					fixture_setup, fixture_teardown),
};
const size_t conf_exec_count = sizeof(conf_exec_tests) / sizeof(conf_exec_tests[0]);
