// SPDX-License-Identifier: MIT
/*
 * Collectives: all-reduce and all-gather over groups of 1, 2, 4 and 8
 * devices, each repeated 1,000 times with one group (the semaphore epochs
 * only grow) across several submissions, each result folded into an
 * accumulator so that every one of the thousand is checked; large ones in
 * many rounds through a small staging space against a float64 sum, the
 * same bits on every device; and the argument checks.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

#define REPS		1000
#define PER_SUBMIT	100
#define SMALL		37	/* floats per device: not a multiple of 8 */

static uint32_t bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* Submits every stream of ranks [0, n) and waits for all of them. */
static void run_all(struct fixture *fx, unsigned int n)
{
	npu_fence *f[CONF_MAX_DEVICES] = { NULL };

	for (unsigned int i = 0; i < n; i++)
		f[i] = conf_submit(fx->stream[i], fx->queue[i], NULL, 0);
	assert_ok(npu_fence_wait_all(f, n, CONF_WAIT_NS));
	for (unsigned int i = 0; i < n; i++) {
		npu_fence_release(f[i]);
		npu_stream_reset(fx->stream[i]);
	}
}

/* Rank i's input of repetition r: small integers, exact in float32. */
static float input(unsigned int i, unsigned int r)
{
	return (float)((i + 1) * (r % 5 + 1));
}

static void allreduce_repeat(struct fixture *fx, unsigned int n)
{
	npu_buffer *x[CONF_MAX_DEVICES], *acc[CONF_MAX_DEVICES];
	npu_collective_group *g;
	double want_acc = 0, want_x = 0;
	float *p;

	assert_true(fx->count >= n);
	assert_ok(npu_collective_group_create(fx->dev, n, NULL, &g));
	assert_int_equal(npu_collective_group_size(g), n);
	for (unsigned int i = 0; i < n; i++) {
		x[i] = conf_alloc(fx->dev[i], SMALL * 4, 0);
		acc[i] = conf_alloc(fx->dev[i], SMALL * 4, 0);
	}
	for (unsigned int r = 0; r < REPS; r++) {
		want_x = 0;
		for (unsigned int i = 0; i < n; i++) {
			npu_stream_fill(fx->stream[i], x[i], 0, SMALL * 4,
					bits(input(i, r)));
			want_x += input(i, r);
		}
		assert_ok(npu_stream_allreduce_f32(g, fx->stream, x, 0, SMALL));
		for (unsigned int i = 0; i < n; i++)
			npu_stream_add_f32(fx->stream[i], acc[i], 0, acc[i], 0,
					   x[i], 0, SMALL);
		want_acc += want_x;
		if ((r + 1) % PER_SUBMIT == 0)
			run_all(fx, n);
	}
	for (unsigned int i = 0; i < n; i++) {
		p = conf_map(acc[i]);
		for (unsigned int e = 0; e < SMALL; e++)
			assert_int_equal(bits(p[e]), bits((float)want_acc));
		p = conf_map(x[i]);
		for (unsigned int e = 0; e < SMALL; e++)
			assert_int_equal(bits(p[e]), bits((float)want_x));
	}
	for (unsigned int i = 0; i < n; i++) {
		npu_buffer_free(x[i]);
		npu_buffer_free(acc[i]);
	}
	npu_collective_group_destroy(g);
}

static void test_allreduce_1000(void **state)
{
	static const unsigned int sizes[] = { 1, 2, 4, 8 };

	for (unsigned int k = 0; k < 4; k++)
		allreduce_repeat(*state, sizes[k]);
}

/*
 * All-gather 1000 times (with an all-reduce every third time, so that the
 * two kinds share the group's epochs), each gathered vector folded into
 * an accumulator.
 */
static void allgather_repeat(struct fixture *fx, unsigned int n)
{
	npu_buffer *src[CONF_MAX_DEVICES], *dst[CONF_MAX_DEVICES];
	npu_buffer *acc[CONF_MAX_DEVICES], *red[CONF_MAX_DEVICES];
	npu_collective_group *g;
	double want[CONF_MAX_DEVICES] = { 0 };
	const uint64_t piece = 3 * 4;
	float *p;

	assert_true(fx->count >= n);
	assert_ok(npu_collective_group_create(fx->dev, n, NULL, &g));
	for (unsigned int i = 0; i < n; i++) {
		src[i] = conf_alloc(fx->dev[i], piece, 0);
		dst[i] = conf_alloc(fx->dev[i], piece * n, 0);
		acc[i] = conf_alloc(fx->dev[i], piece * n, 0);
		red[i] = conf_alloc(fx->dev[i], 4096, 0);
	}
	for (unsigned int r = 0; r < REPS; r++) {
		for (unsigned int i = 0; i < n; i++) {
			npu_stream_fill(fx->stream[i], src[i], 0, piece,
					bits(input(i, r)));
			want[i] += input(i, r);
		}
		assert_ok(npu_stream_allgather(g, fx->stream, src, 0, dst, 0,
					       piece));
		for (unsigned int i = 0; i < n; i++)
			npu_stream_add_f32(fx->stream[i], acc[i], 0, acc[i], 0,
					   dst[i], 0, 3 * n);
		if (r % 3 == 0)
			assert_ok(npu_stream_allreduce_f32(g, fx->stream, red,
							   0, 5));
		if ((r + 1) % PER_SUBMIT == 0)
			run_all(fx, n);
	}
	for (unsigned int i = 0; i < n; i++) {
		p = conf_map(acc[i]);
		for (unsigned int j = 0; j < n; j++)
			for (unsigned int e = 0; e < 3; e++)
				assert_int_equal(bits(p[j * 3 + e]),
						 bits((float)want[j]));
	}
	for (unsigned int i = 0; i < n; i++) {
		npu_buffer_free(src[i]);
		npu_buffer_free(dst[i]);
		npu_buffer_free(acc[i]);
		npu_buffer_free(red[i]);
	}
	npu_collective_group_destroy(g);
}

static void test_allgather_1000(void **state)
{
	static const unsigned int sizes[] = { 1, 2, 4, 8 };

	for (unsigned int k = 0; k < 4; k++)
		allgather_repeat(*state, sizes[k]);
}

/*
 * Large: many rounds through 64 KiB of staging space, a count no power of
 * two, random values against float64, and the same bits everywhere.
 */
static void test_large(void **state)
{
	struct fixture *fx = *state;
	const struct npu_collective_options opts = {
		.struct_size = sizeof(opts), .scratch_bytes = 64 * 1024,
	};
	const uint64_t count = 100003, gbytes = 50001;
	const unsigned int n = fx->count < 8 ? fx->count : 8;
	npu_buffer *x[CONF_MAX_DEVICES], *gs[CONF_MAX_DEVICES];
	npu_buffer *gd[CONF_MAX_DEVICES];
	npu_collective_group *g;
	double *want = calloc(count, sizeof(double)), *mag;
	unsigned char *ref = malloc(gbytes * n);
	float *p, *first;

	assert_non_null(want);
	assert_non_null(ref);
	mag = calloc(count, sizeof(double));
	assert_non_null(mag);
	assert_ok(npu_collective_group_create(fx->dev, n, &opts, &g));
	for (unsigned int i = 0; i < n; i++) {
		x[i] = conf_alloc(fx->dev[i], count * 4 + 8, 0);
		gs[i] = conf_alloc(fx->dev[i], gbytes + 3, 0);
		gd[i] = conf_alloc(fx->dev[i], gbytes * n + 5, 0);
		p = (float *)((char *)conf_map(x[i]) + 8);
		for (uint64_t e = 0; e < count; e++) {
			p[e] = conf_rand_float();
			want[e] += p[e];
			mag[e] += fabs(p[e]);
		}
		conf_rand_fill((char *)conf_map(gs[i]) + 3, gbytes);
		memcpy(ref + i * gbytes, (char *)conf_map(gs[i]) + 3, gbytes);
	}
	assert_ok(npu_stream_allreduce_f32(g, fx->stream, x, 8, count));
	assert_ok(npu_stream_allgather(g, fx->stream, gs, 3, gd, 5, gbytes));
	run_all(fx, n);
	first = (float *)((char *)conf_map(x[0]) + 8);
	for (uint64_t e = 0; e < count; e++)
		assert_true(fabs(first[e] - want[e]) <=
			    n * ldexp(mag[e], -24) + 1e-30);
	for (unsigned int i = 1; i < n; i++)
		assert_memory_equal((char *)conf_map(x[i]) + 8, first,
				    count * 4);
	for (unsigned int i = 0; i < n; i++)
		assert_memory_equal((char *)conf_map(gd[i]) + 5, ref,
				    gbytes * n);
	for (unsigned int i = 0; i < n; i++) {
		npu_buffer_free(x[i]);
		npu_buffer_free(gs[i]);
		npu_buffer_free(gd[i]);
	}
	npu_collective_group_destroy(g);
	free(want);
	free(mag);
	free(ref);
}

static void test_arguments(void **state)
{
	struct fixture *fx = *state;
	npu_device *twice[2] = { fx->dev[0], fx->dev[0] };
	npu_buffer *buf[CONF_MAX_DEVICES];
	npu_stream *swapped[CONF_MAX_DEVICES];
	struct npu_collective_options opts = {
		.struct_size = sizeof(opts), .timeout_ns = 61000000000ULL,
	};
	npu_collective_group *g = NULL;

	assert_true(fx->count >= 2);
	assert_npu(npu_collective_group_create(twice, 2, NULL, &g), -EINVAL);
	assert_null(g);
	assert_npu(npu_collective_group_create(fx->dev, 0, NULL, &g), -EINVAL);
	assert_npu(npu_collective_group_create(fx->dev, 2, &opts, &g),
		   -EINVAL);
	assert_ok(npu_collective_group_create(fx->dev, 2, NULL, &g));
	for (unsigned int i = 0; i < 2; i++)
		buf[i] = conf_alloc(fx->dev[i], 4096, 0);
	/* A stream of another rank's device: refused, nothing appended. */
	swapped[0] = fx->stream[1];
	swapped[1] = fx->stream[0];
	assert_npu(npu_stream_allreduce_f32(g, swapped, buf, 0, 16), -EINVAL);
	assert_detail_contains("stream 0");
	assert_int_equal(npu_stream_size(fx->stream[0]), 16);
	assert_int_equal(npu_stream_size(fx->stream[1]), 16);
	assert_npu(npu_stream_allreduce_f32(g, fx->stream, buf, 2, 16),
		   -EINVAL);
	assert_npu(npu_stream_allreduce_f32(g, fx->stream, buf, 0, 0),
		   -EINVAL);
	assert_npu(npu_stream_allgather(g, fx->stream, buf, 0, NULL, 0, 4),
		   -EINVAL);
	/* The group still works afterwards. */
	assert_ok(npu_stream_allreduce_f32(g, fx->stream, buf, 0, 16));
	run_all(fx, 2);
	for (unsigned int i = 0; i < 2; i++)
		npu_buffer_free(buf[i]);
	npu_collective_group_destroy(g);
}

const struct CMUnitTest conf_collective_tests[] = {
	cmocka_unit_test_setup_teardown(test_allreduce_1000, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_allgather_1000, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_large, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_arguments, fixture_setup,
					fixture_teardown),
};
const size_t conf_collective_count =
	sizeof(conf_collective_tests) / sizeof(conf_collective_tests[0]);
