// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_exec.c - rbln_model_execute() for the data-movement opcodes (FILL,
 * COPY, NOP, BARRIER) against plain-C references on random data, command
 * order, cancellation between commands and inside long commands, and the
 * executor's own refusals (-RBLN_EIO, -RBLN_EINVAL).
 *
 * Every buffer is filled with random bytes first and compared whole
 * afterwards, so a byte written outside a command's range fails the test.
 */
#include "model_test.h"

#define RW	(RBLN_MODEL_READ | RBLN_MODEL_WRITE)

static uint8_t *xmalloc(size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	assert_non_null(p);
	return p;
}

static void test_fill_random(void **state)
{
	struct fake_env f;
	struct rbln_model_bo bo;
	uint8_t *buf, *want;
	uint64_t bosize, size, off;
	uint32_t value;
	struct sb sb;
	int iter;

	(void)state;
	fake_env_init(&f, 1);
	for (iter = 0; iter < 400; iter++) {
		size = rng_range(1, iter < 200 ? 64 : 9000) * 4;
		bosize = size + rng_range(0, 70);
		off = rng_range(0, (bosize - size) / 4) * 4;
		value = (uint32_t)rng_next();
		if (iter % 4 == 0)	/* memset's path: four equal bytes */
			value = (value & 0xff) * 0x01010101U;
		buf = xmalloc(bosize);
		want = xmalloc(bosize);
		rng_bytes(buf, bosize);
		memcpy(want, buf, bosize);
		ref_fill(want + off, size, value);

		bo = (struct rbln_model_bo){ buf, bosize, RW };
		sb_init(&sb);
		sb_fill(&sb, OPND(0, off, size), value);
		run_ok(&sb, &bo, 1, &f.env);
		assert_memory_equal(buf, want, bosize);
		sb_free(&sb);
		free(buf);
		free(want);
	}
}

static void test_fill_large(void **state)
{
	/* Several DMA chunks plus a tail; the bytes around stay intact. */
	const uint64_t size = 3 * RBLN_MODEL_DMA_CHUNK + 12;
	const uint64_t bosize = size + 8;
	struct fake_env f;
	struct rbln_model_bo bo;
	uint8_t *buf, *want;
	struct sb sb;

	(void)state;
	fake_env_init(&f, 1);
	buf = xmalloc(bosize);
	want = xmalloc(bosize);
	rng_bytes(buf, bosize);
	memcpy(want, buf, bosize);
	ref_fill(want + 4, size, 0xdeadbeef);
	bo = (struct rbln_model_bo){ buf, bosize, RW };
	sb_init(&sb);
	sb_fill(&sb, OPND(0, 4, size), 0xdeadbeef);
	run_ok(&sb, &bo, 1, &f.env);
	assert_memory_equal(buf, want, bosize);
	/* Three chunk boundaries: three checks, plus one before the FILL. */
	assert_int_equal(f.cancel_calls, 4);
	sb_free(&sb);
	free(buf);
	free(want);
}

static void copy_case(uint64_t bosize, uint64_t dst_off, uint64_t src_off,
		      uint64_t size, int same_bo)
{
	struct fake_env f;
	struct rbln_model_bo bos[2];
	uint8_t *b0, *b1, *w0, *w1;
	struct sb sb;

	fake_env_init(&f, 1);
	b0 = xmalloc(bosize);
	b1 = xmalloc(bosize);
	w0 = xmalloc(bosize);
	w1 = xmalloc(bosize);
	rng_bytes(b0, bosize);
	rng_bytes(b1, bosize);
	memcpy(w0, b0, bosize);
	memcpy(w1, b1, bosize);
	if (same_bo)
		ref_copy(w0 + dst_off, w0 + src_off, size);
	else
		ref_copy(w0 + dst_off, w1 + src_off, size);

	bos[0] = (struct rbln_model_bo){ b0, bosize, RW };
	bos[1] = (struct rbln_model_bo){ b1, bosize, RBLN_MODEL_READ };
	sb_init(&sb);
	sb_copy(&sb, OPND(0, dst_off, size), OPND(same_bo ? 0 : 1, src_off,
						   size));
	run_ok(&sb, bos, 2, &f.env);
	assert_memory_equal(b0, w0, bosize);
	assert_memory_equal(b1, w1, bosize);
	sb_free(&sb);
	free(b0);
	free(b1);
	free(w0);
	free(w1);
}

static void test_copy_random(void **state)
{
	uint64_t bosize, size, d, s;
	int iter;

	(void)state;
	for (iter = 0; iter < 600; iter++) {
		bosize = rng_range(1, iter < 300 ? 100 : 20000);
		size = rng_range(1, bosize);
		d = rng_range(0, bosize - size);
		if (iter % 2) {
			/* Same buffer: near d, so that most cases overlap. */
			s = d + rng_range(0, 16);
			if (s > bosize - size)
				s = d >= 16 ? d - rng_range(1, 16) : 0;
			copy_case(bosize, d, s, size, 1);
		} else {
			s = rng_range(0, bosize - size);
			copy_case(bosize, d, s, size, iter % 4 == 0);
		}
	}
}

static void test_copy_edges(void **state)
{
	(void)state;
	/* One byte, everywhere in a small buffer. */
	for (uint64_t d = 0; d < 9; d++)
		for (uint64_t s = 0; s < 9; s++) {
			copy_case(9, d, s, 1, 1);
			copy_case(9, d, s, 1, 0);
		}
	/* Overlap by all but one byte, both directions; in place. */
	copy_case(100, 1, 0, 99, 1);
	copy_case(100, 0, 1, 99, 1);
	copy_case(100, 0, 0, 100, 1);
	/* Odd offsets and sizes around vector widths. */
	for (uint64_t n = 1; n <= 70; n++) {
		copy_case(200, 3, 64 + 5, n, 1);
		copy_case(200, 64 + 5, 3, n, 1);
		copy_case(200, 7, 1, n, 0);
	}
}

static void test_copy_large_overlap(void **state)
{
	const uint64_t size = 3 * RBLN_MODEL_DMA_CHUNK + 5;
	const uint64_t bosize = size + 2 * RBLN_MODEL_DMA_CHUNK;

	(void)state;
	/* Chunk order matters when the overlap spans chunks. */
	copy_case(bosize, 7, 0, size, 1);
	copy_case(bosize, 0, 7, size, 1);
	copy_case(bosize, RBLN_MODEL_DMA_CHUNK + 3, 0, size, 1);
	copy_case(bosize, 0, RBLN_MODEL_DMA_CHUNK + 3, size, 1);
	copy_case(bosize, 1, 2 * RBLN_MODEL_DMA_CHUNK - 1, size, 0);
}

/* Later commands see what earlier ones wrote; NOP and BARRIER do nothing. */
static void test_command_order(void **state)
{
	struct fake_env f;
	struct rbln_model_bo bo;
	uint8_t buf[256], want[256];
	struct sb sb;

	(void)state;
	fake_env_init(&f, 1);
	rng_bytes(buf, sizeof(buf));
	memcpy(want, buf, sizeof(buf));
	ref_fill(want, 64, 0x01020304);
	ref_copy(want + 100, want + 2, 60);
	ref_fill(want + 4, 8, 0xa0b0c0d0);
	ref_copy(want + 200, want + 0, 16);

	bo = (struct rbln_model_bo){ buf, sizeof(buf), RW };
	sb_init(&sb);
	sb_fill(&sb, OPND(0, 0, 64), 0x01020304);
	sb_nop(&sb, 64);
	sb_copy(&sb, OPND(0, 100, 60), OPND(0, 2, 60));
	sb_barrier(&sb);
	sb_fill(&sb, OPND(0, 4, 8), 0xa0b0c0d0);
	sb_copy(&sb, OPND(0, 200, 16), OPND(0, 0, 16));
	run_ok(&sb, &bo, 1, &f.env);
	assert_memory_equal(buf, want, sizeof(buf));
	sb_free(&sb);

	/* An empty stream and a stream of padding run and touch nothing. */
	sb_init(&sb);
	run_ok(&sb, &bo, 1, &f.env);
	sb_nop(&sb, RBLN_ISA_CMD_MAX_SIZE);
	sb_barrier(&sb);
	run_ok(&sb, &bo, 1, &f.env);
	assert_memory_equal(buf, want, sizeof(buf));
	sb_free(&sb);
}

static void test_cancel_between_commands(void **state)
{
	struct rbln_model_diag diag;
	struct fake_env f;
	struct rbln_model_bo bo;
	uint8_t buf[64], want[64];
	struct sb sb;

	(void)state;
	fake_env_init(&f, 1);
	f.cancel_after = 3;	/* before the third command */
	memset(buf, 0, sizeof(buf));
	memset(want, 0, sizeof(want));
	ref_fill(want, 16, 0x11111111);
	ref_fill(want + 16, 16, 0x22222222);

	bo = (struct rbln_model_bo){ buf, sizeof(buf), RW };
	sb_init(&sb);
	sb_fill(&sb, OPND(0, 0, 16), 0x11111111);
	sb_fill(&sb, OPND(0, 16, 16), 0x22222222);
	sb_fill(&sb, OPND(0, 32, 16), 0x33333333);
	sb_fill(&sb, OPND(0, 48, 16), 0x44444444);
	assert_int_equal(rbln_model_validate(sb.buf, sb.len, &bo, 1, NULL), 0);
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, &bo, 1, &f.env,
					    &diag), -RBLN_ECANCELED);
	assert_memory_equal(buf, want, sizeof(buf));
	assert_int_equal(diag.reason, RBLN_ISA_OK);
	assert_int_equal(diag.cmd_index, 2);
	assert_int_equal(diag.cmd_offset, sb.offsets[2]);
	assert_int_equal(diag.opcode, RBLN_OP_FILL);
	assert_int_equal(diag.operand, RBLN_ISA_NO_INDEX);
	sb_free(&sb);
}

static void test_cancel_long_fill(void **state)
{
	const uint64_t size = 4 * RBLN_MODEL_DMA_CHUNK;
	struct rbln_model_diag diag;
	struct fake_env f;
	struct rbln_model_bo bo;
	uint8_t *buf, *want;
	struct sb sb;

	(void)state;
	fake_env_init(&f, 1);
	f.cancel_after = 3;	/* after two chunks */
	buf = xmalloc(size);
	want = xmalloc(size);
	memset(buf, 0, size);
	memset(want, 0, size);
	ref_fill(want, 2 * RBLN_MODEL_DMA_CHUNK, 0x5a5a5a5b);
	bo = (struct rbln_model_bo){ buf, size, RW };
	sb_init(&sb);
	sb_fill(&sb, OPND(0, 0, size), 0x5a5a5a5b);
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, &bo, 1, &f.env,
					    &diag), -RBLN_ECANCELED);
	assert_int_equal(diag.cmd_index, 0);
	assert_int_equal(diag.opcode, RBLN_OP_FILL);
	/* The job stopped at a chunk boundary: the rest is untouched. */
	assert_memory_equal(buf, want, size);
	sb_free(&sb);
	free(buf);
	free(want);
}

static void test_cancel_long_copy(void **state)
{
	const uint64_t size = 4 * RBLN_MODEL_DMA_CHUNK;
	struct rbln_model_diag diag;
	struct fake_env f;
	struct rbln_model_bo bo;
	uint8_t *buf, *orig;
	struct sb sb;

	(void)state;
	fake_env_init(&f, 1);
	f.cancel_after = 2;	/* after the first chunk */
	buf = xmalloc(size + 64);
	orig = xmalloc(size + 64);
	rng_bytes(buf, size + 64);
	memcpy(orig, buf, size + 64);
	bo = (struct rbln_model_bo){ buf, size + 64, RW };
	/* Overlapping upwards: the copy runs back to front. */
	sb_init(&sb);
	sb_copy(&sb, OPND(0, 64, size), OPND(0, 0, size));
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, &bo, 1, &f.env,
					    &diag), -RBLN_ECANCELED);
	assert_int_equal(diag.opcode, RBLN_OP_COPY);
	/* Exactly the last chunk moved; everything below it is as it was. */
	assert_memory_equal(buf + 64 + size - RBLN_MODEL_DMA_CHUNK,
			    orig + size - RBLN_MODEL_DMA_CHUNK,
			    RBLN_MODEL_DMA_CHUNK);
	assert_memory_equal(buf, orig, 64 + size - RBLN_MODEL_DMA_CHUNK);
	sb_free(&sb);
	free(buf);
	free(orig);
}

/* The executor checks each command again: an unvalidated stream cannot
 * make it write outside a buffer. */
static void test_execute_unvalidated(void **state)
{
	struct rbln_model_diag diag;
	struct fake_env f;
	struct rbln_model_bo bo;
	uint8_t buf[64], want[64];
	struct sb sb;

	(void)state;
	fake_env_init(&f, 1);
	memset(buf, 0x77, sizeof(buf));
	memcpy(want, buf, sizeof(buf));
	ref_fill(want, 8, 0);
	bo = (struct rbln_model_bo){ buf, sizeof(buf), RW };
	sb_init(&sb);
	sb_fill(&sb, OPND(0, 0, 8), 0);
	sb_fill(&sb, OPND(0, 32, 64), 0);
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, &bo, 1, &f.env,
					    &diag), -RBLN_EINVAL);
	assert_int_equal(diag.reason, RBLN_ISA_ERR_BOUNDS);
	assert_int_equal(diag.cmd_index, 1);
	assert_int_equal(diag.operand, 0);
	/* Commands before the bad one ran, as for any failure. */
	assert_memory_equal(buf, want, sizeof(buf));

	/* A broken header: nothing runs. */
	sb.buf[0] = 0;
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, &bo, 1, &f.env,
					    &diag), -RBLN_EINVAL);
	assert_int_equal(diag.reason, RBLN_ISA_ERR_MAGIC);
	sb_free(&sb);
}

static void test_execute_bad_env(void **state)
{
	struct rbln_model_diag diag;
	struct fake_env f;
	struct rbln_model_env env;
	struct sb sb;

	(void)state;
	fake_env_init(&f, 1);
	sb_init(&sb);
	sb_barrier(&sb);
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, NULL, 0, NULL,
					    &diag), -RBLN_EINVAL);
	env = f.env;
	env.now_ns = NULL;
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, NULL, 0, &env,
					    &diag), -RBLN_EINVAL);
	env = f.env;
	env.relax = NULL;
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, NULL, 0, &env,
					    &diag), -RBLN_EINVAL);
	env = f.env;
	env.cancelled = NULL;
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, NULL, 0, &env,
					    NULL), -RBLN_EINVAL);
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, NULL, 0, &f.env,
					    NULL), 0);
	sb_free(&sb);
}

static void test_execute_unmapped(void **state)
{
	struct rbln_model_diag diag;
	struct fake_env f;
	struct rbln_model_bo bos[2];
	uint64_t sem[2] = { 0, 0 };
	uint8_t buf[64];
	struct sb sb;

	(void)state;
	fake_env_init(&f, 1);
	bos[0] = (struct rbln_model_bo){ buf, sizeof(buf), RW };
	bos[1] = (struct rbln_model_bo){ NULL, 64, RW };
	sb_init(&sb);
	sb_fill(&sb, OPND(0, 0, 8), 1);
	sb_copy(&sb, OPND(0, 0, 8), OPND(1, 0, 8));
	assert_int_equal(rbln_model_validate(sb.buf, sb.len, bos, 2, NULL), 0);
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, bos, 2, &f.env,
					    &diag), -RBLN_EIO);
	assert_int_equal(diag.cmd_index, 1);
	assert_int_equal(diag.opcode, RBLN_OP_COPY);
	sb_free(&sb);

	/* A semaphore whose mapping leaves it misaligned. */
	bos[1] = (struct rbln_model_bo){ (uint8_t *)sem + 4, 8, RW };
	sb_init(&sb);
	sb_signal(&sb, OPND(1, 0, 8), RBLN_SEM_SET, 1);
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, bos, 2, &f.env,
					    &diag), -RBLN_EIO);
	assert_int_equal(diag.opcode, RBLN_OP_SEM_SIGNAL);
	assert_int_equal(sem[0], 0);
	assert_int_equal(sem[1], 0);
	sb_free(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fill_random),
		cmocka_unit_test(test_fill_large),
		cmocka_unit_test(test_copy_random),
		cmocka_unit_test(test_copy_edges),
		cmocka_unit_test(test_copy_large_overlap),
		cmocka_unit_test(test_command_order),
		cmocka_unit_test(test_cancel_between_commands),
		cmocka_unit_test(test_cancel_long_fill),
		cmocka_unit_test(test_cancel_long_copy),
		cmocka_unit_test(test_execute_unvalidated),
		cmocka_unit_test(test_execute_bad_env),
		cmocka_unit_test(test_execute_unmapped),
	};

	rng_seed_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
