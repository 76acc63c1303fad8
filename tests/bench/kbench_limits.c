// SPDX-License-Identifier: MIT
/*
 * The machine's limits, measured in the same run as the kernels, each with
 * the widest instructions this CPU has, so that no kernel and no peer can
 * beat them: read bandwidth (a sweep much larger than the caches, as a
 * bandwidth-bound kernel streams its weights; 64-byte loads with AVX-512,
 * else 32-byte), the float32 FMA peak (AVX-512 FMAs, else AVX2), and for
 * bfloat16 work the peak of the bf16 dot products (AVX512-BF16
 * vdpbf16ps) and of the AMX-BF16 tiles, where present.
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kbench.h"

double kb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void kb_check(int err, const char *what)
{
	if (!err)
		return;
	fprintf(stderr, "rbln-kbench: %s: %s (%s)\n", what, npu_strerror(err),
		npu_error_detail());
	exit(1);
}

/*
 * Runs @fn on @threads threads (at most 16), each given @arg's copy;
 * @reps times; returns the best seconds of one round.
 */
static double best_round(void *(*fn)(void *), void *args, size_t size,
			 unsigned int threads, unsigned int reps)
{
	pthread_t th[16];
	double best = 1e30, t;

	for (unsigned int rep = 0; rep < reps; rep++) {
		t = kb_now();
		for (unsigned int i = 0; i < threads; i++)
			pthread_create(&th[i], NULL, fn,
				       (char *)args + i * size);
		for (unsigned int i = 0; i < threads; i++)
			pthread_join(th[i], NULL);
		t = kb_now() - t;
		if (t < best)
			best = t;
	}
	return best;
}

struct sweep {
	const char *p;
	uint64_t bytes;
	unsigned int streams;
	unsigned int passes;
	unsigned int prefetch;
	unsigned long long sink;
};

/*
 * The thread's part read as @streams sequential streams side by side (a
 * GEMV reads four panels at once; more streams keep more prefetches in
 * flight), two vectors of each per step into eight independent XOR
 * chains: loads, not arithmetic, are the limit. With @prefetch, each
 * vector's line that many bytes ahead is asked for first, as the model's
 * weight streams do (rbln_model_prefetch_bytes()): on the 16-core
 * Sapphire Rapids the GEMV read 132 GB/s where the plain sweep's best
 * was 127.
 */
#define SWEEP_FN(name, isa, bytes_per_vec)				\
__attribute__((target(isa)))						\
static void *name(void *arg)						\
{									\
	typedef unsigned long long v __attribute__((			\
		vector_size(bytes_per_vec), aligned(bytes_per_vec)));	\
	struct sweep *s = arg;						\
	const v *p = (const v *)s->p;					\
	uint64_t part = s->bytes / sizeof(v) / s->streams;		\
	v x[8] = { { 0 } };						\
									\
	for (unsigned int pass = 0; pass < s->passes; pass++)		\
		for (uint64_t i = 0; i + 2 <= part; i += 2)		\
			for (unsigned int j = 0; j < s->streams; j++) {	\
				if (s->prefetch) {			\
					__builtin_prefetch((const char *) \
						&p[j * part + i] +	\
						s->prefetch);		\
					__builtin_prefetch((const char *) \
						&p[j * part + i + 1] +	\
						s->prefetch);		\
				}					\
				x[(2 * j) & 7] ^= p[j * part + i];	\
				x[(2 * j + 1) & 7] ^= p[j * part + i + 1]; \
			}						\
	for (int j = 1; j < 8; j++)					\
		x[0] ^= x[j];						\
	s->sink = x[0][0];						\
	return NULL;							\
}

SWEEP_FN(sweep_avx2, "avx2", 32)
SWEEP_FN(sweep_avx512, "avx512f", 64)

const char *kb_load_width(void)
{
	return __builtin_cpu_supports("avx512f") ? "64-byte AVX-512" :
						   "32-byte AVX2";
}

static const unsigned int sweep_streams[] = { 1, 4, 8 };
static const unsigned int sweep_prefetch[] = { 0, 2048, 4096 };
#define SWEEP_NS	(sizeof(sweep_streams) / sizeof(*sweep_streams))
#define SWEEP_COMBOS	(SWEEP_NS * sizeof(sweep_prefetch) / sizeof(*sweep_prefetch))

/*
 * The swept memory of each page size (0: base pages, 1: huge), kept for
 * kb_read_bandwidth_again(), and each thread count's best combination.
 */
static struct {
	char *buf[2];
	uint64_t bytes[2];
	unsigned int combo[17];
	int huge[17];
	double rate[17];
} sweep_mem;

/* @bytes of memory of huge pages (@huge) or base pages, every page touched. */
static char *sweep_buffer(uint64_t bytes, int huge)
{
	char *buf = sweep_mem.buf[huge];

	if (buf && sweep_mem.bytes[huge] == bytes)
		return buf;
	free(buf);
	buf = aligned_alloc(2 << 20, bytes);
	if (!buf) {
		perror("rbln-kbench");
		exit(1);
	}
	madvise(buf, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(buf, 1, bytes);		/* touch every page first */
	sweep_mem.buf[huge] = buf;
	sweep_mem.bytes[huge] = bytes;
	return buf;
}

/*
 * Combination @n of streams and prefetch distance over @buf, the best of
 * @reps rounds of @passes passes: bytes/s.
 */
static double sweep_combo(unsigned int threads, char *buf, uint64_t bytes,
			  unsigned int n, unsigned int passes,
			  unsigned int reps)
{
	struct sweep sw[16];
	double t;

	for (unsigned int i = 0; i < threads; i++) {
		/* Whole 1 KiB steps: no thread reads past its part. */
		sw[i].bytes = bytes / threads / 1024 * 1024;
		sw[i].p = buf + i * sw[i].bytes;
		sw[i].streams = sweep_streams[n % SWEEP_NS];
		sw[i].prefetch = sweep_prefetch[n / SWEEP_NS];
		sw[i].passes = passes;
	}
	t = best_round(__builtin_cpu_supports("avx512f") ?
		       sweep_avx512 : sweep_avx2, sw, sizeof(sw[0]), threads,
		       reps);
	return (double)sw[0].bytes * threads * passes / t;
}

/*
 * The best sweep of @bytes by @threads over memory of huge pages (@huge)
 * or of base pages; the best combination is remembered.
 */
static double read_sweep(unsigned int threads, uint64_t bytes, int huge)
{
	char *buf = sweep_buffer(bytes, huge);
	double best = 0, t;

	for (unsigned int n = 0; n < SWEEP_COMBOS; n++) {
		t = sweep_combo(threads, buf, bytes, n, 3, 3);
		if (t > best)
			best = t;
		if (t > sweep_mem.rate[threads]) {
			sweep_mem.rate[threads] = t;
			sweep_mem.combo[threads] = n;
			sweep_mem.huge[threads] = huge;
		}
	}
	return best;
}

/*
 * Both page sizes: the device's memory may have either (shmem's huge
 * pages are the system's choice), and the faster is not always the huge
 * one: on the 2-core Zen 5 guest, base pages read 45-51 GB/s with 2
 * threads where huge pages read 28-47, and a GEMV over the emulated
 * device's memory read 47 GB/s against a 33 GB/s sweep of huge pages
 * alone.
 */
double kb_read_bandwidth(unsigned int threads, uint64_t bytes)
{
	double huge, base;

	if (threads > 16)
		threads = 16;
	huge = read_sweep(threads, bytes, 1);
	base = read_sweep(threads, bytes, 0);
	return huge > base ? huge : base;
}

/*
 * The best combination of kb_read_bandwidth() for @threads again, on the
 * same memory, sampled as the bandwidth-bound kernels are timed: the best
 * of KB_KERNEL_REPS single passes (a kernel's best rep covers at least
 * KB_SWEEP_BYTES). A shared host's bandwidth drifts by 10-15% within a
 * minute on the 2-core Zen 5 guest and peaks for moments: a best of
 * three rounds of three passes (3 GiB each), against a kernel's best of
 * eight 1 GiB reps, let a GEMV read up to 138% of this "limit" there.
 */
double kb_read_bandwidth_again(unsigned int threads)
{
	int huge;

	if (threads > 16)
		threads = 16;
	huge = sweep_mem.huge[threads];
	if (!sweep_mem.buf[huge])
		return 0;
	return sweep_combo(threads, sweep_mem.buf[huge], sweep_mem.bytes[huge],
			   sweep_mem.combo[threads], 1, KB_KERNEL_REPS);
}

struct chains {
	uint64_t iters;
	float sink;
};

/*
 * 12 independent chains: 2 pipes x 4 cycles of latency need at least 8
 * in flight.
 */
__attribute__((target("avx2,fma")))
static void *fma_avx2(void *arg)
{
	struct chains *c = arg;
	__m256 acc[12], m = _mm256_set1_ps(0.999999f),
	       b = _mm256_set1_ps(1e-7f);

	for (int i = 0; i < 12; i++)
		acc[i] = _mm256_set1_ps((float)i);
	for (uint64_t it = 0; it < c->iters; it++) {
#pragma GCC unroll 12
		for (int i = 0; i < 12; i++)
			acc[i] = _mm256_fmadd_ps(acc[i], m, b);
	}
	c->sink = 0;
	for (int i = 0; i < 12; i++)
		c->sink += acc[i][0];
	return NULL;
}

__attribute__((target("avx512f")))
static void *fma_avx512(void *arg)
{
	struct chains *c = arg;
	__m512 acc[12], m = _mm512_set1_ps(0.999999f),
	       b = _mm512_set1_ps(1e-7f);

	for (int i = 0; i < 12; i++)
		acc[i] = _mm512_set1_ps((float)i);
	for (uint64_t it = 0; it < c->iters; it++) {
#pragma GCC unroll 12
		for (int i = 0; i < 12; i++)
			acc[i] = _mm512_fmadd_ps(acc[i], m, b);
	}
	c->sink = 0;
	for (int i = 0; i < 12; i++)
		c->sink += acc[i][0];
	return NULL;
}

/* 12 chains of vdpbf16ps: 16 lanes x 2 products x 2 FLOP each. */
__attribute__((target("avx512f,avx512bf16")))
static void *dpbf16_avx512(void *arg)
{
	struct chains *c = arg;
	__m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80);
	__m512 acc[12];

	for (int i = 0; i < 12; i++)
		acc[i] = _mm512_set1_ps((float)i);
	for (uint64_t it = 0; it < c->iters; it++) {
#pragma GCC unroll 12
		for (int i = 0; i < 12; i++)
			acc[i] = _mm512_dpbf16_ps(acc[i], x, x);
	}
	c->sink = 0;
	for (int i = 0; i < 12; i++)
		c->sink += acc[i][0];
	return NULL;
}

/* FLOP/s of @threads threads running @fn, @flop_per_iter per iteration. */
static double chains_rate(void *(*fn)(void *), double flop_per_iter,
			  unsigned int threads)
{
	struct chains ch[16];
	const uint64_t iters = 20000000;

	if (threads > 16)
		threads = 16;
	for (unsigned int i = 0; i < threads; i++)
		ch[i].iters = iters;
	return threads * (double)iters * flop_per_iter /
	       best_round(fn, ch, sizeof(ch[0]), threads, 3);
}

const char *kb_fma_width(void)
{
	return __builtin_cpu_supports("avx512f") ? "AVX-512" : "AVX2";
}

double kb_fma_peak(unsigned int threads)
{
	/* 12 FMAs of 16 (8) lanes, 2 FLOP each, per iteration. */
	if (__builtin_cpu_supports("avx512f"))
		return chains_rate(fma_avx512, 12 * 16 * 2, threads);
	return chains_rate(fma_avx2, 12 * 8 * 2, threads);
}

double kb_dpbf16_peak(unsigned int threads)
{
	if (!__builtin_cpu_supports("avx512bf16"))
		return 0;
	return chains_rate(dpbf16_avx512, 12 * 16 * 2 * 2, threads);
}

/*
 * AMX-BF16: tdpbf16ps multiplies a 16 x 32 bf16 tile by a 32 x 16 one into
 * 16 x 16 float32: 16 * 16 * 32 products. Four accumulator tiles from two
 * A and two B tiles (a 2 x 2 block, as a GEMM would run it), so that the
 * unit always has independent work.
 */
#define ARCH_REQ_XCOMP_PERM	0x1023
#define XFEATURE_XTILEDATA	18

struct amx_config {
	uint8_t palette, start_row, reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
};

__attribute__((target("amx-tile,amx-bf16")))
static void *amx_main(void *arg)
{
	struct chains *c = arg;
	struct amx_config cfg = { .palette = 1 };
	static const uint16_t src[16 * 32] = { 0 };
	float out[16 * 16];

	for (int t = 0; t < 8; t++) {
		cfg.colsb[t] = 64;
		cfg.rows[t] = 16;
	}
	_tile_loadconfig(&cfg);
	_tile_zero(0);
	_tile_zero(1);
	_tile_zero(2);
	_tile_zero(3);
	_tile_loadd(4, src, 64);
	_tile_loadd(5, src, 64);
	_tile_loadd(6, src, 64);
	_tile_loadd(7, src, 64);
	for (uint64_t it = 0; it < c->iters / 16; it++) {
		_tile_dpbf16ps(0, 4, 6);
		_tile_dpbf16ps(1, 4, 7);
		_tile_dpbf16ps(2, 5, 6);
		_tile_dpbf16ps(3, 5, 7);
	}
	_tile_stored(0, out, 64);
	_tile_release();
	c->sink = out[0];
	return NULL;
}

double kb_amx_peak(unsigned int threads)
{
	if (!__builtin_cpu_supports("amx-bf16"))
		return 0;
	/* Linux hands out the tile state only on request (once per process). */
	if (syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA))
		return 0;
	/* Four tdpbf16ps per iteration, iters / 16 iterations. */
	return chains_rate(amx_main, 4 * 16.0 * 16 * 32 * 2 / 16, threads);
}
