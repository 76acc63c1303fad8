// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_mm.c - MATMUL against a float64 reference, for every weight type,
 * every layout and CPU variant, on fresh random data, with edge
 * shapes (M = 1, K and N not multiples of the vector width, N odd, M
 * across row blocks). Outputs are poisoned (NaN) before each run and the
 * bytes after them checked untouched. Then the promises of bit-identity:
 * the packed, spaced and row-major layouts, a batch and its rows one by one, any
 * number of engines, accumulate from zero and plain.
 *
 * Tolerance: each output is one float32 chain of K multiply-adds over
 * exactly representable weights, so |got - ref| <= (K + 1) u sum|a w|
 * (u = 2^-24) bounds its rounding error rigorously (plus the old value's
 * magnitude when accumulating); a wrong or missing term is far outside it
 * for the K used here. int8 weights are checked against their dequantised
 * float32 values f32(q) * scale (rbln_isa.h), the operand the device
 * multiplies, with the same bound; a wrong or missing scale is far outside
 * it.
 */
#include <math.h>

#include "model_test.h"

#define RW	(RBLN_MODEL_READ | RBLN_MODEL_WRITE)
#define GUARD	64

/**
 * struct mm_case - one MATMUL with its data
 * @m: rows
 * @k: reduction length
 * @n: columns
 * @dtype: weight type
 * @layout: weight layout
 * @acc: RBLN_MATMUL_ACCUMULATE
 * @a: activations [m, k]
 * @w: weights [n, k] as float32 (exactly representable in @dtype; for
 *	int8 the dequantised f32(q) * scale)
 * @q: int8 weights [n, k] (RBLN_DTYPE_I8 only)
 * @scale: their per-column scales [n] (RBLN_DTYPE_I8 only)
 * @c0: old output [m, n] when accumulating
 * @wbuf: the weights as the command reads them
 * @wsize: bytes of @wbuf
 */
struct mm_case {
	uint32_t m, k, n, dtype, layout, acc, a_bf16;
	float *a, *w, *c0;
	int8_t *q;
	float *scale;
	uint8_t *wbuf;
	uint64_t wsize;
};

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	assert_non_null(p);
	return p;
}

/* Bytes from one panel to the next in @mc's packed layout. */
static uint64_t mm_panel_stride(const struct mm_case *mc)
{
	uint64_t bytes = (uint64_t)16 * mc->k * test_dtype_size(mc->dtype);

	if (mc->layout == RBLN_LAYOUT_PACKED16_SPACED)
		bytes += RBLN_ISA_PANEL_GAP;
	return bytes;
}

/*
 * int8 weights in the command's layout, then the scales of whole panels
 * (rbln_isa.h); padding columns, the spaced layout's gaps and the
 * padding columns' scales hold garbage.
 */
static void mm_pack_i8(struct mm_case *mc)
{
	uint32_t panels = (mc->n + 15) / 16;
	uint64_t wbytes = panels * mm_panel_stride(mc), idx;
	uint32_t n, k;

	if (mc->layout == RBLN_LAYOUT_ROWMAJOR)
		wbytes = (uint64_t)mc->n * mc->k;
	mc->wsize = wbytes + (uint64_t)panels * 16 * 4;
	mc->wbuf = xmalloc(mc->wsize);
	rng_bytes(mc->wbuf, mc->wsize);
	for (n = 0; n < mc->n; n++) {
		for (k = 0; k < mc->k; k++) {
			idx = (uint64_t)n * mc->k + k;
			if (mc->layout != RBLN_LAYOUT_ROWMAJOR)
				idx = (n / 16) * mm_panel_stride(mc) +
				      (uint64_t)k * 16 + n % 16;
			mc->wbuf[idx] = (uint8_t)mc->q[(size_t)n * mc->k + k];
		}
		memcpy(mc->wbuf + wbytes + (uint64_t)n * 4, &mc->scale[n], 4);
	}
}

/* The weights in the command's layout, as rbln_isa.h defines it. */
static void mm_pack(struct mm_case *mc)
{
	uint32_t es = test_dtype_size(mc->dtype);
	uint32_t panels = (mc->n + 15) / 16;
	uint32_t n, k, j, slot;
	uint64_t idx;
	float v;

	uint64_t wbytes;

	if (mc->dtype == RBLN_DTYPE_I8) {
		mm_pack_i8(mc);
		return;
	}
	if (mc->layout == RBLN_LAYOUT_ROWMAJOR) {
		mc->wsize = (uint64_t)mc->n * mc->k * es;
		mc->wbuf = xmalloc(mc->wsize);
		test_store(mc->wbuf, mc->dtype, mc->w, (size_t)mc->n * mc->k);
		return;
	}
	wbytes = panels * mm_panel_stride(mc);
	mc->wsize = wbytes;
	mc->wbuf = xmalloc(mc->wsize);
	/* Padding columns and gaps hold garbage: the device must ignore them. */
	rng_bytes(mc->wbuf, mc->wsize);
	for (n = 0; n < mc->n; n++) {
		j = n % 16;
		slot = j;
		if (mc->dtype == RBLN_DTYPE_BF16)
			slot = j < 8 ? 2 * j : 2 * (j - 8) + 1;
		for (k = 0; k < mc->k; k++) {
			idx = (uint64_t)k * 16 + slot;
			v = mc->w[(size_t)n * mc->k + k];
			test_store(mc->wbuf + (n / 16) * mm_panel_stride(mc) +
				   idx * es, mc->dtype, &v, 1);
		}
	}
}

/* Random data for a case; weights rounded to their type. */
static void mm_init(struct mm_case *mc, uint32_t m, uint32_t k, uint32_t n,
		    uint32_t dtype, uint32_t layout, uint32_t acc)
{
	uint8_t tmp[4];
	size_t i;

	*mc = (struct mm_case){ .m = m, .k = k, .n = n, .dtype = dtype,
				.layout = layout, .acc = acc };
	mc->a = xmalloc((size_t)m * k * 4);
	mc->w = xmalloc((size_t)n * k * 4);
	mc->c0 = xmalloc((size_t)m * n * 4);
	rng_fill(mc->a, (size_t)m * k, -1.0f, 1.0f);
	rng_fill(mc->w, (size_t)n * k, -1.0f, 1.0f);
	rng_fill(mc->c0, (size_t)m * n, -4.0f, 4.0f);
	if (dtype == RBLN_DTYPE_I8) {
		mc->q = xmalloc((size_t)n * k);
		mc->scale = xmalloc((size_t)n * 4);
		/* Scales over two decades, as absmax / 127 of real layers. */
		rng_fill(mc->scale, n, 0.0004f, 0.04f);
		rng_bytes(mc->q, (size_t)n * k);
		for (i = 0; i < (size_t)n * k; i++)
			mc->w[i] = (float)mc->q[i] * mc->scale[i / k];
		mm_pack(mc);
		return;
	}
	for (i = 0; i < (size_t)n * k; i++) {
		test_store(tmp, dtype, &mc->w[i], 1);
		mc->w[i] = test_load(tmp, dtype, 0);
	}
	mm_pack(mc);
}

static void mm_free(struct mm_case *mc)
{
	free(mc->a);
	free(mc->w);
	free(mc->c0);
	free(mc->q);
	free(mc->scale);
	free(mc->wbuf);
}

/* Runs the case on @env; returns the output (m * n floats, caller frees). */
static float *mm_run(const struct mm_case *mc,
		     const struct rbln_model_env *env)
{
	uint64_t csize = (uint64_t)mc->m * mc->n * 4;
	uint8_t *c = poisoned(csize + GUARD);
	uint8_t guard[GUARD];
	struct rbln_model_bo bos[3] = {
		{ c, csize + GUARD, RW },
		{ (uint8_t *)mc->a, (uint64_t)mc->m * mc->k * 4,
		  RBLN_MODEL_READ },
		{ mc->wbuf, mc->wsize, RBLN_MODEL_READ },
	};
	struct rbln_isa_matmul cmd = {
		.hdr = { .opcode = RBLN_OP_MATMUL, .size = sizeof(cmd),
			 .flags = (mc->acc ? RBLN_MATMUL_ACCUMULATE : 0) |
				  (mc->a_bf16 ? RBLN_MATMUL_A_BF16 : 0) },
		.dst = OPND(0, 0, csize),
		.a = OPND(1, 0, (uint64_t)mc->m * mc->k * 4),
		.w = OPND(2, 0, mc->wsize),
		.dtype = mc->dtype,
		.layout = mc->layout,
		.k = mc->k,
		.n = mc->n,
	};
	struct sb sb;

	if (mc->acc)
		memcpy(c, mc->c0, csize);
	memcpy(guard, c + csize, GUARD);
	sb_init(&sb);
	sb_cmd_struct(&sb, cmd);
	run_ok(&sb, bos, 3, env);
	sb_free(&sb);
	assert_memory_equal(c + csize, guard, GUARD);
	return (float *)c;
}

/* Checks @got against the float64 reference. */
static void mm_check(const struct mm_case *mc, const float *got,
		     const char *what)
{
	double ref, mag, err, tol;
	uint32_t i, j, k;

	for (i = 0; i < mc->m; i++)
		for (j = 0; j < mc->n; j++) {
			ref = mc->acc ? mc->c0[(size_t)i * mc->n + j] : 0.0;
			mag = fabs(ref);
			for (k = 0; k < mc->k; k++) {
				double t = (double)mc->a[(size_t)i * mc->k + k] *
					   mc->w[(size_t)j * mc->k + k];
				ref += t;
				mag += fabs(t);
			}
			err = fabs(got[(size_t)i * mc->n + j] - ref);
			tol = (mc->k + 2) * ldexp(mag, -24) + 1e-30;
			/* Activations rounded to bf16: 2^-8 of each term. */
			if (mc->a_bf16)
				tol += ldexp(mag, -8);
			if (!(err <= tol))
				fail_msg("%s %s m=%u k=%u n=%u dtype %u layout %u "
					 "acc %u a_bf16 %u: [%u,%u] = %.9g, "
					 "want %.9g (tol %.3g)", what,
					 rbln_model_kernels()->name, mc->m,
					 mc->k, mc->n, mc->dtype, mc->layout,
					 mc->acc, mc->a_bf16, i, j,
					 got[(size_t)i * mc->n + j], ref, tol);
		}
}

static void mm_case_check(uint32_t m, uint32_t k, uint32_t n, uint32_t dtype,
			  uint32_t layout, uint32_t acc)
{
	struct fake_env f;
	struct mm_case mc;
	float *got;

	fake_env_init(&f, 1);
	mm_init(&mc, m, k, n, dtype, layout, acc);
	got = mm_run(&mc, &f.env);
	mm_check(&mc, got, "reference");
	free(got);
	mm_free(&mc);
}

static const uint32_t edge_shapes[][3] = {
	{ 1, 1, 1 }, { 1, 7, 5 }, { 1, 64, 16 }, { 1, 130, 33 },
	{ 1, 300, 64 }, { 1, 9, 80 }, { 2, 9, 17 }, { 3, 31, 31 },
	{ 4, 8, 15 }, { 5, 100, 47 }, { 6, 64, 32 }, { 7, 257, 19 },
	{ 13, 70, 64 }, { 37, 33, 129 }, { 1, 1100, 3 }, { 9, 1030, 20 },
};

static void test_mm_reference(void **state)
{
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i, s, dt, lay;

	(void)state;
	for (i = 0; i < nv; i++) {
		test_set_variant(v[i]);
		for (dt = 0; dt < RBLN_DTYPE_COUNT; dt++)
			for (lay = 0; lay < RBLN_LAYOUT_COUNT; lay++) {
				for (s = 0; s < sizeof(edge_shapes) /
						sizeof(edge_shapes[0]); s++)
					mm_case_check(edge_shapes[s][0],
						      edge_shapes[s][1],
						      edge_shapes[s][2], dt,
						      lay, 0);
				/* And fresh random shapes every run. */
				for (s = 0; s < 3; s++)
					mm_case_check(rng_range(1, 40),
						      rng_range(1, 300),
						      rng_range(1, 200), dt,
						      lay, 0);
			}
	}
}

static void test_mm_accumulate(void **state)
{
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i, dt, lay;
	struct fake_env f;
	struct mm_case mc;
	float *plain, *acc;

	(void)state;
	fake_env_init(&f, 1);
	for (i = 0; i < nv; i++) {
		test_set_variant(v[i]);
		for (dt = 0; dt < RBLN_DTYPE_COUNT; dt++)
			for (lay = 0; lay < RBLN_LAYOUT_COUNT; lay++) {
				mm_case_check(1, 77, 45, dt, lay, 1);
				mm_case_check(11, 300, 33, dt, lay, 1);
				/* From zero, accumulating is the plain product. */
				mm_init(&mc, 7, 290, 21, dt, lay, 0);
				plain = mm_run(&mc, &f.env);
				memset(mc.c0, 0, (size_t)mc.m * mc.n * 4);
				mc.acc = 1;
				acc = mm_run(&mc, &f.env);
				assert_memory_equal(plain, acc,
						    (size_t)mc.m * mc.n * 4);
				free(plain);
				free(acc);
				mm_free(&mc);
			}
	}
}

/*
 * The packed layouts and the checkpoint's row-major give the same bits,
 * for a few rows (the GEMV and decode kernels) and many (the tiles).
 */
static void test_mm_layouts_identical(void **state)
{
	static const uint32_t rows[] = { 1, 9, 200 };
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i, dt, r, lay;
	struct mm_case rm, pk;
	struct fake_env f;
	float *x, *y;

	(void)state;
	fake_env_init(&f, 1);
	for (i = 0; i < nv; i++) {
		test_set_variant(v[i]);
		for (dt = 0; dt < RBLN_DTYPE_COUNT; dt++) {
			for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
				mm_init(&rm, rows[r], 333, 41, dt,
					RBLN_LAYOUT_ROWMAJOR, 0);
				x = mm_run(&rm, &f.env);
				for (lay = RBLN_LAYOUT_PACKED16;
				     lay < RBLN_LAYOUT_COUNT; lay++) {
					pk = rm;
					pk.layout = lay;
					mm_pack(&pk);
					y = mm_run(&pk, &f.env);
					assert_memory_equal(x, y, (size_t)rm.m *
							    rm.n * 4);
					free(y);
					free(pk.wbuf);
				}
				free(x);
				mm_free(&rm);
			}
		}
	}
}

/*
 * Row i of a batch is the same bits as row i alone (batch invariance):
 * past one block of rows (192) with a partial tile, and a decode batch
 * (its wide tiles on avx512, the GEMV alone), over two k blocks.
 */
static void test_mm_rows_independent(void **state)
{
	static const uint32_t shapes[][4] = {
		/* m, k, n, the rows taken alone: every step-th */
		{ 199, 40, 37, 17 }, { 11, 1100, 100, 2 },
	};
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i, r, dt, s;
	struct mm_case mc, one;
	struct fake_env f;
	float *all, *row;

	(void)state;
	fake_env_init(&f, 1);
	for (i = 0; i < nv; i++) {
		/*
		 * avx512+amx gives a row the amx bits in a command of many
		 * rows and the avx512 bits alone (test_mm_avx512_amx_by_rows):
		 * invariant on each side of its threshold, as those two are.
		 */
		if (v[i] == RBLN_MODEL_CPU_AVX512_AMX)
			continue;
		test_set_variant(v[i]);
		for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
			for (dt = 0; dt < RBLN_DTYPE_COUNT; dt++) {
				mm_init(&mc, shapes[s][0], shapes[s][1],
					shapes[s][2], dt, RBLN_LAYOUT_PACKED16,
					0);
				all = mm_run(&mc, &f.env);
				for (r = 0; r < mc.m; r += shapes[s][3]) {
					one = mc;
					one.m = 1;
					one.a = mc.a + (size_t)r * mc.k;
					row = mm_run(&one, &f.env);
					assert_memory_equal(row,
							    all + (size_t)r *
							    mc.n,
							    (size_t)mc.n * 4);
					free(row);
				}
				mm_check(&mc, all, "batch");
				free(all);
				mm_free(&mc);
			}
	}
}

/* Any number of engines, any schedule: the same bits. */
static void test_mm_engines(void **state)
{
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i, e, real;
	struct mm_case mc;
	struct fake_env f;
	float *base, *got;

	(void)state;
	for (i = 0; i < nv; i++) {
		test_set_variant(v[i]);
		/* 2 row blocks x 3 panel groups, each worth an engine. */
		mm_init(&mc, 200, 200, 300, RBLN_DTYPE_BF16,
			RBLN_LAYOUT_PACKED16, 0);
		fake_env_init(&f, 1);
		base = mm_run(&mc, &f.env);
		mm_check(&mc, base, "engines");
		for (real = 0; real < 2; real++)
			for (e = 2; e <= 8; e++) {
				if (real && e != 2 && e != 5)
					continue;
				fake_env_init(&f, e);
				f.reverse = e % 2;
				got = mm_run(&mc, real ? real_env(e) : &f.env);
				assert_memory_equal(base, got,
						    (size_t)mc.m * mc.n * 4);
				if (!real)
					assert_int_equal(f.parallel_calls, 1);
				free(got);
			}
		free(base);
		mm_free(&mc);
	}
}

/*
 * A decode batch of a narrow output (N = 512: 32 panels, 4 pieces of 8)
 * runs in pieces of 4 panels on 16 engines: 8 parts instead of 4, the
 * same bits as on one engine; one row too (its pieces, 2 MiB of weights
 * at K = 16384, are each worth an engine).
 */
static void test_mm_decode_pieces(void **state)
{
	static const uint32_t cases[][3] = {
		/* m, k, parts on 16 engines */
		{ 8, 2048, 8 }, { 16, 2048, 8 }, { 1, 16384, 8 },
	};
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i, s;
	struct fake_env one, many;
	struct mm_case mc;
	float *x, *y;

	(void)state;
	fake_env_init(&one, 1);
	for (s = 0; s < sizeof(cases) / sizeof(cases[0]); s++) {
		mm_init(&mc, cases[s][0], cases[s][1], 512, RBLN_DTYPE_BF16,
			RBLN_LAYOUT_PACKED16, 0);
		for (i = 0; i < nv; i++) {
			/* amx runs bf16 of any height in its tiles' pieces. */
			if (v[i] == RBLN_MODEL_CPU_AMX)
				continue;
			test_set_variant(v[i]);
			x = mm_run(&mc, &one.env);
			fake_env_init(&many, 16);
			y = mm_run(&mc, &many.env);
			assert_int_equal(many.parallel_calls, 1);
			assert_int_equal(many.parallel_parts, cases[s][2]);
			assert_memory_equal(x, y, (size_t)mc.m * mc.n * 4);
			free(x);
			free(y);
		}
		mm_free(&mc);
	}
}

/*
 * A decode batch whose panels outnumber its engines' narrow pieces ends in
 * those (two panels of 64 KiB, or one of 128 KiB and more, two per
 * engine): any engine count, schedule and piece shape gives the bits of
 * one engine, for bf16 and int8 weights, a partial last panel included,
 * and bf16 activations where the variant rounds them.
 */
static void test_mm_tail_pieces(void **state)
{
	static const uint32_t cases[][4] = {
		/* m, k, n, dtype */
		{ 1, 2048, 2000, RBLN_DTYPE_BF16 },
		{ 8, 2048, 2000, RBLN_DTYPE_BF16 },
		{ 1, 4096, 1000, RBLN_DTYPE_BF16 },
		{ 1, 4096, 1000, RBLN_DTYPE_I8 },
		{ 3, 8192, 520, RBLN_DTYPE_I8 },
	};
	static const uint32_t engines[] = { 2, 3, 5, 16 };
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i, s, e, b;
	struct fake_env one, many;
	struct mm_case mc;
	float *x, *y;

	(void)state;
	fake_env_init(&one, 1);
	for (s = 0; s < sizeof(cases) / sizeof(cases[0]); s++) {
		mm_init(&mc, cases[s][0], cases[s][1], cases[s][2],
			cases[s][3], RBLN_LAYOUT_PACKED16, 0);
		for (b = 0; b < 2; b++) {
			mc.a_bf16 = b;
			for (i = 0; i < nv; i++) {
				test_set_variant(v[i]);
				x = mm_run(&mc, &one.env);
				if (!b)
					mm_check(&mc, x, "tail pieces");
				for (e = 0; e < 4; e++) {
					fake_env_init(&many, engines[e]);
					many.reverse = e % 2;
					y = mm_run(&mc, &many.env);
					assert_memory_equal(x, y, (size_t)mc.m *
							    mc.n * 4);
					free(y);
				}
				y = mm_run(&mc, real_env(3));
				assert_memory_equal(x, y,
						    (size_t)mc.m * mc.n * 4);
				free(y);
				free(x);
			}
		}
		mm_free(&mc);
	}
}

/* The variants differ only by fused rounding: close, deterministic. */
static void test_mm_variants_deterministic(void **state)
{
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i;
	struct mm_case mc;
	struct fake_env f;
	float *x, *y;

	(void)state;
	fake_env_init(&f, 1);
	mm_init(&mc, 20, 500, 50, RBLN_DTYPE_F16, RBLN_LAYOUT_PACKED16, 0);
	for (i = 0; i < nv; i++) {
		test_set_variant(v[i]);
		x = mm_run(&mc, &f.env);
		y = mm_run(&mc, &f.env);
		assert_memory_equal(x, y, (size_t)mc.m * mc.n * 4);
		mm_check(&mc, x, "variant");
		free(x);
		free(y);
	}
	mm_free(&mc);
}

/*
 * The avx512 variant runs the same fused chain per output element as the
 * avx2 variant: the same bits, for every type, layout, accumulation and
 * row count (the GEMV, every tile height up to 12, the wide tiles of a
 * decode batch of 2 to 16 rows, 2 to 8 rows by 2 or 4 panels, across k
 * blocks, and the edge panels).
 */
static void test_mm_avx512_bits_of_avx2(void **state)
{
	static const uint32_t shapes[][3] = {
		{ 1, 300, 130 }, { 8, 257, 64 }, { 12, 64, 33 },
		{ 13, 129, 47 }, { 37, 70, 16 }, { 3, 100, 80 },
		{ 16, 70, 130 }, { 2, 40, 100 }, { 4, 1100, 64 },
		{ 10, 1030, 70 }, { 7, 50, 96 },
	};
	uint32_t s, dt, lay, acc;
	struct mm_case mc;
	struct fake_env f;
	float *x, *y;

	(void)state;
#if defined(__x86_64__)
	if (!__builtin_cpu_supports("avx512f") ||
	    !__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
		printf("# no AVX-512F: the avx512 variant must be refused\n");
		assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_AVX512),
				 -RBLN_EINVAL);
		return;
	}
#else
	assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_AVX512),
			 -RBLN_EINVAL);
	return;
#endif
	fake_env_init(&f, 2);
	for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
		for (dt = 0; dt < RBLN_DTYPE_COUNT; dt++)
			for (lay = 0; lay < RBLN_LAYOUT_COUNT; lay++)
				for (acc = 0; acc < 2; acc++) {
					mm_init(&mc, shapes[s][0], shapes[s][1],
						shapes[s][2], dt, lay, acc);
					test_set_variant(RBLN_MODEL_CPU_AVX2);
					x = mm_run(&mc, &f.env);
					test_set_variant(RBLN_MODEL_CPU_AVX512);
					assert_string_equal(rbln_model_kernels()->name,
							    "avx512");
					y = mm_run(&mc, &f.env);
					assert_memory_equal(x, y, (size_t)mc.m *
							    mc.n * 4);
					free(x);
					free(y);
					mm_free(&mc);
				}
}

/* Variant @v's result on @mc. */
static float *mm_run_as(const struct mm_case *mc, uint32_t v,
			const struct rbln_model_env *env)
{
	test_set_variant(v);
	return mm_run(mc, env);
}

/*
 * avx512+amx runs a command of RBLN_MODEL_AMX_MIN_ROWS rows or more with
 * the amx bits, a smaller one with the avx512 bits (whatever its blocks'
 * rows); float16 weights, which the tiles do not take, always as avx512.
 */
static void test_mm_avx512_amx_by_rows(void **state)
{
	const uint32_t rows[] = { 1, 8, RBLN_MODEL_AMX_MIN_ROWS - 1,
				  RBLN_MODEL_AMX_MIN_ROWS, 130 };
	uint32_t r, dt, want;
	struct mm_case mc;
	struct fake_env f;
	float *x, *y;

	(void)state;
	if (rbln_model_set_cpu(RBLN_MODEL_CPU_AMX)) {
		printf("# no AMX-BF16 tiles: avx512+amx must be refused\n");
		assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_AVX512_AMX),
				 -RBLN_EINVAL);
		return;
	}
	fake_env_init(&f, 2);
	for (r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
		for (dt = 0; dt < RBLN_DTYPE_COUNT; dt++) {
			mm_init(&mc, rows[r], 300, 70, dt,
				RBLN_LAYOUT_PACKED16, 0);
			want = rows[r] >= RBLN_MODEL_AMX_MIN_ROWS ?
			       RBLN_MODEL_CPU_AMX : RBLN_MODEL_CPU_AVX512;
			x = mm_run_as(&mc, want, &f.env);
			y = mm_run_as(&mc, RBLN_MODEL_CPU_AVX512_AMX, &f.env);
			assert_memory_equal(x, y, (size_t)mc.m * mc.n * 4);
			free(x);
			if (rows[r] >= RBLN_MODEL_AMX_MIN_ROWS) {
				/* The amx bits are not the avx512 ones. */
				x = mm_run_as(&mc, RBLN_MODEL_CPU_AVX512,
					      &f.env);
				if (dt == RBLN_DTYPE_BF16)
					assert_memory_not_equal(x, y,
								(size_t)mc.m *
								mc.n * 4);
				free(x);
			}
			free(y);
			mm_free(&mc);
		}
}

/*
 * @x rounded to bf16 as vcvtne2ps2bf16 rounds: to nearest, ties to even,
 * subnormals to zero (finite inputs only: the cases hold no others).
 */
static float round_bf16(float x)
{
	uint32_t u;

	memcpy(&u, &x, 4);
	if (!(u & 0x7f800000U))
		u &= 0x80000000U;
	else
		u = (u + 0x7fffU + ((u >> 16) & 1U)) & 0xffff0000U;
	memcpy(&x, &u, 4);
	return x;
}

/*
 * Whether @mc with RBLN_MATMUL_A_BF16 rounds its activations under variant
 * @v here: the AMX variants' decode kernel (rbln_model_kern_amx_decode.c)
 * for 8 to 16 rows, the bf16 dot products of rbln_model_kern_dpbf16.c.
 */
static bool mm_rounds(const struct mm_case *mc, uint32_t v)
{
	if (mc->dtype != RBLN_DTYPE_BF16 || mc->layout == RBLN_LAYOUT_ROWMAJOR)
		return false;
	if ((v == RBLN_MODEL_CPU_AMX || v == RBLN_MODEL_CPU_AVX512_AMX) &&
	    mc->m >= RBLN_MODEL_AMX_DECODE_MIN_ROWS && mc->m <= 16)
		return true;
	return v == RBLN_MODEL_CPU_AVX512 && rbln_model_mm_a_bf16_ok() &&
	       mc->m >= RBLN_MODEL_A_BF16_MIN_ROWS;
}

/*
 * @mc (RBLN_MATMUL_A_BF16 set) against its run without the flag, @plain:
 * within the flag's tolerance always; where the variant rounds, the
 * product of the rounded activations within float32's own bound (so the
 * kernel rounds each activation once, to nearest even, and adds the exact
 * products in float32) and not the float32 bits; elsewhere those bits.
 */
static void mm_check_a_bf16(const struct mm_case *mc, const float *plain,
			    const float *got, uint32_t v)
{
	size_t bytes = (size_t)mc->m * mc->n * 4, i;
	struct mm_case r = *mc;

	mm_check(mc, got, "a_bf16");
	if (!mm_rounds(mc, v)) {
		assert_memory_equal(plain, got, bytes);
		return;
	}
	r.a_bf16 = 0;
	r.a = xmalloc((size_t)mc->m * mc->k * 4);
	for (i = 0; i < (size_t)mc->m * mc->k; i++)
		r.a[i] = round_bf16(mc->a[i]);
	mm_check(&r, got, "a_bf16 against the rounded activations");
	free(r.a);
	assert_memory_not_equal(plain, got, bytes);
}

/*
 * RBLN_MATMUL_A_BF16 in every variant, type and layout, on edge shapes
 * (rows around the rounding kernel's threshold, its decode batches' tiles
 * of 5-8 rows by 3, 2 and 1 panels and of 4 rows by 4, 2 and 1, its
 * prompts' 8-row tiles, odd k, k over several 64-step chunks and 256-step
 * blocks, partial panels, odd panel counts), plain and accumulating; then
 * any number of engines gives the same bits.
 */
static void test_mm_a_bf16(void **state)
{
	static const uint32_t shapes[][3] = {
		{ 1, 64, 16 }, { 3, 70, 20 }, { 4, 64, 16 }, { 5, 1, 3 },
		{ 8, 7, 17 }, { 9, 129, 48 }, { 9, 130, 80 }, { 12, 130, 33 },
		{ 10, 300, 100 }, { 16, 1100, 256 },
		{ 24, 257, 40 }, { 37, 1100, 129 },
	};
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i, s, dt, lay;
	uint32_t acc, e;
	struct mm_case mc;
	struct fake_env f;
	float *plain, *got, *base;

	(void)state;
	for (i = 0; i < nv; i++) {
		test_set_variant(v[i]);
		fake_env_init(&f, 1);
		for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
			for (dt = 0; dt < RBLN_DTYPE_COUNT; dt++)
				for (lay = 0; lay < RBLN_LAYOUT_COUNT; lay++)
					for (acc = 0; acc < 2; acc++) {
						mm_init(&mc, shapes[s][0],
							shapes[s][1],
							shapes[s][2], dt, lay,
							acc);
						plain = mm_run(&mc, &f.env);
						mc.a_bf16 = 1;
						got = mm_run(&mc, &f.env);
						mm_check_a_bf16(&mc, plain, got,
								v[i]);
						free(plain);
						free(got);
						mm_free(&mc);
					}
		for (s = 0; s < 2; s++) {
			/* A prompt's rows; a decode batch's pieces. */
			if (s == 0)
				mm_init(&mc, 200, 300, 300, RBLN_DTYPE_BF16,
					RBLN_LAYOUT_PACKED16, 0);
			else
				mm_init(&mc, 8, 1100, 512, RBLN_DTYPE_BF16,
					RBLN_LAYOUT_PACKED16, 0);
			mc.a_bf16 = 1;
			fake_env_init(&f, 1);
			base = mm_run(&mc, &f.env);
			mm_check(&mc, base, "a_bf16 engines");
			for (e = 2; e <= 16; e += e < 5 ? 1 : 11) {
				fake_env_init(&f, e);
				f.reverse = e % 2;
				got = mm_run(&mc, &f.env);
				assert_memory_equal(base, got,
						    (size_t)mc.m * mc.n * 4);
				free(got);
			}
			free(base);
			mm_free(&mc);
		}
	}
}

static void test_mm_cancel_and_unmapped(void **state)
{
	struct rbln_model_diag diag;
	struct rbln_model_bo bos[3];
	struct mm_case mc;
	struct fake_env f;
	struct sb sb;
	uint8_t *c;
	struct rbln_isa_matmul cmd;

	(void)state;
	mm_init(&mc, 100, 600, 500, RBLN_DTYPE_BF16, RBLN_LAYOUT_PACKED16, 0);
	c = poisoned((size_t)mc.m * mc.n * 4);
	bos[0] = (struct rbln_model_bo){ c, (uint64_t)mc.m * mc.n * 4, RW };
	bos[1] = (struct rbln_model_bo){ (uint8_t *)mc.a,
					 (uint64_t)mc.m * mc.k * 4,
					 RBLN_MODEL_READ };
	bos[2] = (struct rbln_model_bo){ mc.wbuf, mc.wsize, RBLN_MODEL_READ };
	cmd = (struct rbln_isa_matmul){
		.hdr = { .opcode = RBLN_OP_MATMUL, .size = sizeof(cmd) },
		.dst = OPND(0, 0, bos[0].size), .a = OPND(1, 0, bos[1].size),
		.w = OPND(2, 0, mc.wsize), .dtype = RBLN_DTYPE_BF16,
		.layout = RBLN_LAYOUT_PACKED16, .k = mc.k, .n = mc.n,
	};
	sb_init(&sb);
	sb_cmd_struct(&sb, cmd);
	fake_env_init(&f, 1);
	f.cancel_after = 5;
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, bos, 3, &f.env,
					    &diag), -RBLN_ECANCELED);
	assert_int_equal(diag.opcode, RBLN_OP_MATMUL);
	/* Cancellation is polled between brackets, not once per command. */
	assert_true(f.cancel_calls >= 5);
	fake_env_init(&f, 1);
	bos[2].cpu = NULL;
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, bos, 3, &f.env,
					    &diag), -RBLN_EIO);
	sb_free(&sb);
	free(c);
	mm_free(&mc);
}

static int restore_variant(void **state)
{
	(void)state;
	return rbln_model_set_cpu(RBLN_MODEL_CPU_AUTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_mm_reference, restore_variant),
		cmocka_unit_test_teardown(test_mm_avx512_amx_by_rows,
					  restore_variant),
		cmocka_unit_test_teardown(test_mm_accumulate, restore_variant),
		cmocka_unit_test_teardown(test_mm_layouts_identical,
					  restore_variant),
		cmocka_unit_test_teardown(test_mm_rows_independent,
					  restore_variant),
		cmocka_unit_test_teardown(test_mm_engines, restore_variant),
		cmocka_unit_test_teardown(test_mm_a_bf16, restore_variant),
		cmocka_unit_test_teardown(test_mm_decode_pieces,
					  restore_variant),
		cmocka_unit_test_teardown(test_mm_tail_pieces, restore_variant),
		cmocka_unit_test_teardown(test_mm_variants_deterministic,
					  restore_variant),
		cmocka_unit_test_teardown(test_mm_avx512_bits_of_avx2,
					  restore_variant),
		cmocka_unit_test(test_mm_cancel_and_unmapped),
	};

	rng_seed_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
