// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_f32.c - ADD: each CPU variant and the executor against a scalar
 * reference on random bit patterns (NaNs with payloads, infinities,
 * denormals, rounding cases), the NaN rules of rbln_model.h one by one,
 * in-place accumulation, independence from the caller's MXCSR, bracketed
 * chunks, and bit-identical results for any number of engines.
 */
#include <pthread.h>

#include "model_test.h"

#define RW	(RBLN_MODEL_READ | RBLN_MODEL_WRITE)

static uint8_t *xmalloc(size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	assert_non_null(p);
	return p;
}

struct variant {
	const char *name;
	rbln_model_f32_add_fn fn;
};

static uint32_t variants(struct variant *v)
{
	uint32_t n = 0;

	v[n++] = (struct variant){ "generic", rbln_model_f32_add_generic };
#if defined(__x86_64__)
	if (__builtin_cpu_supports("avx2"))
		v[n++] = (struct variant){ "avx2", rbln_model_f32_add_avx2 };
	else
		printf("# no AVX2 on this CPU: avx2 variant not tested\n");
#endif
	return n;
}

static void check_variant(const struct variant *v, uint64_t n,
			  uint64_t misalign)
{
	uint64_t bytes = n * 4;
	uint8_t *a = xmalloc(bytes + misalign);
	uint8_t *b = xmalloc(bytes + misalign);
	uint8_t *d = xmalloc(bytes + misalign + 4);
	uint8_t *want = xmalloc(bytes);
	uint8_t guard[4];

	rng_floats(a + misalign, n);
	rng_floats(b + misalign, n);
	rng_bytes(d, bytes + misalign + 4);
	memcpy(guard, d + misalign + bytes, 4);
	ref_add(want, a + misalign, b + misalign, n);
	v->fn(d + misalign, a + misalign, b + misalign, n);
	if (memcmp(d + misalign, want, bytes)) {
		for (uint64_t i = 0; i < n; i++) {
			uint32_t x, y, got, exp;

			memcpy(&x, a + misalign + 4 * i, 4);
			memcpy(&y, b + misalign + 4 * i, 4);
			memcpy(&got, d + misalign + 4 * i, 4);
			memcpy(&exp, want + 4 * i, 4);
			if (got != exp)
				fail_msg("%s n=%llu [%llu]: %08x + %08x = %08x,"
					 " want %08x", v->name,
					 (unsigned long long)n,
					 (unsigned long long)i, x, y, got, exp);
		}
	}
	/* Nothing past the end. */
	assert_memory_equal(d + misalign + bytes, guard, 4);
	free(a);
	free(b);
	free(d);
	free(want);
}

static void test_variants_random(void **state)
{
	struct variant v[2];
	uint32_t nv = variants(v), i;
	uint64_t n;

	(void)state;
	for (i = 0; i < nv; i++) {
		/* Every length around the vector widths, every alignment. */
		for (n = 1; n <= 80; n++)
			check_variant(&v[i], n, (n % 8) * 4);
		for (n = 0; n < 50; n++)
			check_variant(&v[i], rng_range(81, 20000),
				      rng_range(0, 7) * 4);
	}
}

static void test_nan_rules(void **state)
{
	static const struct {
		uint32_t a, b, sum;
	} cases[] = {
		/* a NaN wins, quieted, payload and sign kept */
		{ 0x7fc00001, 0x3f800000, 0x7fc00001 },
		{ 0xff800001, 0x3f800000, 0xffc00001 },
		{ 0x7fa00000, 0xffc12345, 0x7fe00000 },
		{ 0xffd00000, 0x7fc00000, 0xffd00000 },
		/* else b's NaN */
		{ 0x3f800000, 0x7f800002, 0x7fc00002 },
		{ 0x7f800000, 0xffc00003, 0xffc00003 },
		/* invalid operation: the default NaN */
		{ 0x7f800000, 0xff800000, 0xffc00000 },
		{ 0xff800000, 0x7f800000, 0xffc00000 },
		/* infinities and overflow */
		{ 0x7f800000, 0x7f800000, 0x7f800000 },
		{ 0x7f7fffff, 0x7f7fffff, 0x7f800000 },
		{ 0x7f7fffff, 0x72800000, 0x7f7fffff },	/* below half an ulp */
		{ 0x7f7fffff, 0x73000000, 0x7f800000 },	/* tie: to even, inf */
		/* signed zeros */
		{ 0x80000000, 0x80000000, 0x80000000 },
		{ 0x80000000, 0x00000000, 0x00000000 },
		{ 0x3f800000, 0xbf800000, 0x00000000 },
		/* denormals are kept, never flushed */
		{ 0x00000001, 0x00000001, 0x00000002 },
		{ 0x00400000, 0x00400000, 0x00800000 },
		{ 0x80000001, 0x00000000, 0x80000001 },
		/* round to nearest even: 1 + 2^-24 ties to 1, 1 + 3*2^-24 up */
		{ 0x3f800000, 0x33800000, 0x3f800000 },
		{ 0x3f800001, 0x33800000, 0x3f800002 },
	};
	const uint32_t n = sizeof(cases) / sizeof(cases[0]);
	struct variant v[2];
	uint32_t nv = variants(v), i, k;
	uint32_t a[32], b[32], d[32];

	(void)state;
	for (i = 0; i < n; i++)
		assert_int_equal(ref_add1(cases[i].a, cases[i].b),
				 cases[i].sum);
	for (k = 0; k < nv; k++) {
		/* In the vector body and in the tail. */
		for (i = 0; i < n; i++) {
			a[i] = cases[i].a;
			b[i] = cases[i].b;
		}
		v[k].fn((uint8_t *)d, (uint8_t *)a, (uint8_t *)b, n);
		for (i = 0; i < n; i++)
			if (d[i] != cases[i].sum)
				fail_msg("%s: %08x + %08x = %08x, want %08x",
					 v[k].name, a[i], b[i], d[i],
					 cases[i].sum);
	}
}

/* Runs one ADD command; @dst/@a/@b are offsets into one shared buffer. */
static void add_stream(uint8_t *buf, uint64_t bosize, uint64_t dst,
		       uint64_t a, uint64_t b, uint64_t n,
		       const struct rbln_model_env *env)
{
	struct rbln_model_bo bo = { buf, bosize, RW };
	struct sb sb;

	sb_init(&sb);
	sb_add(&sb, OPND(0, dst, n * 4), OPND(0, a, n * 4), OPND(0, b, n * 4));
	run_ok(&sb, &bo, 1, env);
	sb_free(&sb);
}

static void test_add_stream_random(void **state)
{
	struct fake_env f;
	uint64_t n, bosize, da, db, dd;
	uint8_t *buf, *want;
	int iter, mode;

	(void)state;
	fake_env_init(&f, 1);
	for (iter = 0; iter < 300; iter++) {
		n = rng_range(1, iter < 150 ? 40 : 5000);
		bosize = 3 * n * 4 + 64;
		buf = xmalloc(bosize);
		want = xmalloc(bosize);
		rng_floats(buf, bosize / 4);
		da = rng_range(0, 3) * 4;
		db = da + n * 4 + rng_range(0, 3) * 4;
		dd = db + n * 4 + rng_range(0, 3) * 4;
		mode = iter % 5;
		if (mode == 1)
			dd = da;		/* dst += b */
		else if (mode == 2)
			dd = db;		/* dst = a + dst */
		else if (mode == 3)
			dd = db = da;		/* x = x + x */
		else if (mode == 4)
			db = da + 4 * rng_range(0, n);	/* a, b overlap */
		memcpy(want, buf, bosize);
		ref_add(want + dd, want + da, want + db, n);
		add_stream(buf, bosize, dd, da, db, n, &f.env);
		assert_memory_equal(buf, want, bosize);
		free(buf);
		free(want);
	}
}

/*
 * The caller's MXCSR must not matter: flush-to-zero, denormals-are-zero
 * and round-toward-zero set around the call give the same bits, and the
 * caller's MXCSR is back afterwards.
 */
static void test_add_ignores_mxcsr(void **state)
{
#if defined(__x86_64__)
	const uint32_t n = 1000;
	const unsigned int odd = 0x1f80 | 0x8000 | 0x0040 | 0x6000;
	struct fake_env f;
	uint8_t *buf, *want;
	unsigned int saved;
	uint32_t i, x;

	(void)state;
	fake_env_init(&f, 1);
	buf = xmalloc(3 * n * 4);
	want = xmalloc(3 * n * 4);
	for (i = 0; i < 2 * n; i++) {
		/* Denormal inputs with inexact sums. */
		x = (uint32_t)rng_range(1, 0x007fffff) |
		    (i % 3 ? 0 : 0x80000000);
		if (i % 7 == 0)
			x = 0x3f800001 + (uint32_t)rng_range(0, 99);
		memcpy(buf + 4 * i, &x, 4);
	}
	memcpy(want, buf, 3 * n * 4);
	ref_add(want + 8 * n, want, want + 4 * n, n);
	saved = __builtin_ia32_stmxcsr();
	__builtin_ia32_ldmxcsr(odd);
	add_stream(buf, 3 * n * 4, 8 * n, 0, 4 * n, n, &f.env);
	assert_int_equal(__builtin_ia32_stmxcsr() & 0xffc0, odd & 0xffc0);
	__builtin_ia32_ldmxcsr(saved);
	assert_memory_equal(buf, want, 3 * n * 4);
	free(buf);
	free(want);
#else
	(void)state;
	skip();
#endif
}

static void test_add_chunks(void **state)
{
	const uint64_t n = 3 * RBLN_MODEL_F32_CHUNK + 5;
	struct fake_env f;
	uint8_t *buf, *want;
	uint64_t bosize = 3 * n * 4;

	(void)state;
	fake_env_init(&f, 1);
	buf = xmalloc(bosize);
	want = xmalloc(bosize);
	rng_floats(buf, bosize / 4);
	memcpy(want, buf, bosize);
	ref_add(want + 2 * n * 4, want, want + n * 4, n);
	add_stream(buf, bosize, 2 * n * 4, 0, n * 4, n, &f.env);
	assert_memory_equal(buf, want, bosize);
	/* One check before the command, one before each of the 4 chunks. */
	assert_int_equal(f.cancel_calls, 5);
	assert_int_equal(f.parallel_calls, 0);
	free(buf);
	free(want);
}

static void test_add_cancel(void **state)
{
	const uint64_t n = 4 * RBLN_MODEL_F32_CHUNK;
	struct rbln_model_diag diag;
	struct rbln_model_bo bo;
	struct fake_env f;
	uint8_t *buf, *want;
	struct sb sb;

	(void)state;
	fake_env_init(&f, 1);
	f.cancel_after = 4;	/* command, chunk 0, chunk 1, stop */
	buf = xmalloc(3 * n * 4);
	want = xmalloc(3 * n * 4);
	rng_floats(buf, 3 * n);
	memcpy(want, buf, 3 * n * 4);
	ref_add(want + 2 * n * 4, want, want + n * 4, 2 * RBLN_MODEL_F32_CHUNK);
	bo = (struct rbln_model_bo){ buf, 3 * n * 4, RW };
	sb_init(&sb);
	sb_add(&sb, OPND(0, 2 * n * 4, n * 4), OPND(0, 0, n * 4),
	       OPND(0, n * 4, n * 4));
	assert_int_equal(rbln_model_execute(sb.buf, sb.len, &bo, 1, &f.env,
					    &diag), -RBLN_ECANCELED);
	assert_int_equal(diag.opcode, RBLN_OP_ADD);
	assert_memory_equal(buf, want, 3 * n * 4);
	sb_free(&sb);
	free(buf);
	free(want);
}

/*
 * Large enough for every engine count up to 8 to get its parts; the result
 * must be the same bits for any split and any schedule of the parts.
 */
static void test_add_engines(void **state)
{
	const uint64_t n = 8 * (uint64_t)RBLN_MODEL_F32_PART_MIN + 12345;
	const uint64_t bytes = n * 4;
	uint8_t *buf, *want;
	struct fake_env f;
	uint32_t engines;
	int real;

	(void)state;
	buf = xmalloc(3 * bytes);
	want = xmalloc(3 * bytes);
	rng_floats(buf, 2 * n);
	memcpy(want, buf, 2 * bytes);
	ref_add(want + 2 * bytes, want, want + bytes, n);
	for (real = 0; real < 2; real++) {
		for (engines = 1; engines <= 8; engines++) {
			if (real && engines != 1 && engines != 3 && engines != 8)
				continue;
			memset(buf + 2 * bytes, 0xee, bytes);
			fake_env_init(&f, engines);
			f.reverse = engines % 2;
			add_stream(buf, 3 * bytes, 2 * bytes, 0, bytes, n,
				   real ? real_env(engines) : &f.env);
			assert_memory_equal(buf, want, 3 * bytes);
			if (!real) {
				assert_int_equal(f.parallel_calls,
						 engines > 1 ? 1 : 0);
				if (engines > 1)
					assert_int_equal(f.parallel_parts,
							 engines);
			}
		}
	}
	free(buf);
	free(want);
}

/* Below RBLN_MODEL_F32_PART_MIN elements per engine, fewer parts. */
static void test_add_small_stays_serial(void **state)
{
	const uint64_t n = 2 * (uint64_t)RBLN_MODEL_F32_PART_MIN - 1;
	uint8_t *buf = xmalloc(3 * n * 4);
	struct fake_env f;

	(void)state;
	rng_floats(buf, 3 * n);
	fake_env_init(&f, 8);
	add_stream(buf, 3 * n * 4, 0, 0, n * 4, n, &f.env);
	assert_int_equal(f.parallel_calls, 0);
	fake_env_init(&f, 8);
	add_stream(buf, 3 * n * 4, 0, 0, (n + 1) * 4, n + 1, &f.env);
	assert_int_equal(f.parallel_calls, 1);
	assert_int_equal(f.parallel_parts, 2);
	free(buf);
}

static void test_add_select(void **state)
{
	rbln_model_f32_add_fn fn = rbln_model_f32_add_select();

	(void)state;
#if defined(__x86_64__)
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		assert_ptr_equal(fn, rbln_model_f32_add_avx2);
	else
		assert_ptr_equal(fn, rbln_model_f32_add_generic);
	/* The forced variant decides, as for the compute kernels. */
	assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_BASELINE), 0);
	assert_ptr_equal(rbln_model_f32_add_select(),
			 rbln_model_f32_add_generic);
	assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_AUTO), 0);
#else
	assert_ptr_equal(fn, rbln_model_f32_add_generic);
#endif
}

static void test_cpu_api(void **state)
{
	(void)state;
	assert_int_equal(rbln_model_cpu_parse("auto"), RBLN_MODEL_CPU_AUTO);
	assert_int_equal(rbln_model_cpu_parse("baseline\n"),
			 RBLN_MODEL_CPU_BASELINE);
	assert_int_equal(rbln_model_cpu_parse("avx2"), RBLN_MODEL_CPU_AVX2);
	assert_int_equal(rbln_model_cpu_parse("avx512\n"),
			 RBLN_MODEL_CPU_AVX512);
	assert_string_equal(rbln_model_cpu_name(RBLN_MODEL_CPU_AVX512),
			    "avx512");
	assert_int_equal(rbln_model_cpu_parse("amx"), RBLN_MODEL_CPU_AMX);
	assert_string_equal(rbln_model_cpu_name(RBLN_MODEL_CPU_AMX), "amx");
	assert_int_equal(rbln_model_cpu_parse("avx512+amx\n"),
			 RBLN_MODEL_CPU_AVX512_AMX);
	assert_string_equal(rbln_model_cpu_name(RBLN_MODEL_CPU_AVX512_AMX),
			    "avx512+amx");
	assert_int_equal(rbln_model_cpu_parse("avx512+"), -RBLN_EINVAL);
	assert_int_equal(rbln_model_cpu_parse("avx"), -RBLN_EINVAL);
	assert_int_equal(rbln_model_cpu_parse("avx22"), -RBLN_EINVAL);
	assert_int_equal(rbln_model_cpu_parse("avx2\n\n"), -RBLN_EINVAL);
	assert_int_equal(rbln_model_cpu_parse(""), -RBLN_EINVAL);
	assert_int_equal(rbln_model_cpu_parse(NULL), -RBLN_EINVAL);
	assert_string_equal(rbln_model_cpu_name(RBLN_MODEL_CPU_BASELINE),
			    "baseline");
	assert_null(rbln_model_cpu_name(RBLN_MODEL_CPU_COUNT));
	assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_COUNT),
			 -RBLN_EINVAL);
	assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_BASELINE), 0);
	assert_int_equal(rbln_model_cpu(), RBLN_MODEL_CPU_BASELINE);
	assert_string_equal(rbln_model_kernels()->name, "baseline");
	assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_AUTO), 0);
	assert_true(rbln_model_cpu() != RBLN_MODEL_CPU_AUTO);
#if defined(__x86_64__)
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_AVX2), 0);
		assert_string_equal(rbln_model_kernels()->name, "avx2");
	} else {
		assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_AVX2),
				 -RBLN_EINVAL);
	}
	if (__builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_AVX512), 0);
		assert_string_equal(rbln_model_kernels()->name, "avx512");
		/* ADD has no AVX-512 code: the AVX2 one, same bits. */
		assert_ptr_equal(rbln_model_f32_add_select(),
				 rbln_model_f32_add_avx2);
		/*
		 * amx alone only when forced: auto takes avx512+amx where
		 * the tiles run (decode speed), else avx512.
		 */
		if (rbln_model_set_cpu(RBLN_MODEL_CPU_AMX) == 0) {
			assert_string_equal(rbln_model_kernels()->name, "amx");
			assert_ptr_equal(rbln_model_f32_add_select(),
					 rbln_model_f32_add_avx2);
			assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_AUTO),
					 0);
			assert_int_equal(rbln_model_cpu(),
					 RBLN_MODEL_CPU_AVX512_AMX);
			assert_string_equal(rbln_model_kernels()->name,
					    "avx512+amx");
			assert_ptr_equal(rbln_model_f32_add_select(),
					 rbln_model_f32_add_avx2);
		} else {
			assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_AVX512_AMX),
					 -RBLN_EINVAL);
			assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_AUTO),
					 0);
			assert_int_equal(rbln_model_cpu(),
					 RBLN_MODEL_CPU_AVX512);
		}
	} else {
		assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_AVX512),
				 -RBLN_EINVAL);
	}
#endif
	assert_int_equal(rbln_model_set_cpu(RBLN_MODEL_CPU_AUTO), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_variants_random),
		cmocka_unit_test(test_nan_rules),
		cmocka_unit_test(test_add_stream_random),
		cmocka_unit_test(test_add_ignores_mxcsr),
		cmocka_unit_test(test_add_chunks),
		cmocka_unit_test(test_add_cancel),
		cmocka_unit_test(test_add_engines),
		cmocka_unit_test(test_add_small_stays_serial),
		cmocka_unit_test(test_add_select),
		cmocka_unit_test(test_cpu_api),
	};

	rng_seed_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
