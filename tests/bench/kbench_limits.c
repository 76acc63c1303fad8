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
#include <stdatomic.h>
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
	uint64_t group;
	_Atomic uint64_t *next;
	unsigned int first;
	unsigned int step;
	unsigned int streams;
	unsigned int passes;
	unsigned int prefetch;
	unsigned long long sink;
};

/* The group after @g that @s reads next (see SWEEP_FN()). */
static uint64_t sweep_next(struct sweep *s, uint64_t g)
{
	return s->next ? atomic_fetch_add(s->next, 1) : g + s->step;
}

/*
 * Of the @bytes at @p in groups of @group bytes, pass after pass, the
 * groups @first, @first + @step, ... or, with @next, each group a thread
 * takes from that shared count as it finishes one: threads that start
 * apart still finish together, with no tail read by one thread alone.
 * Each group is read as @streams sequential streams side by side (a GEMV
 * reads four panels at once; more streams keep more prefetches in
 * flight), two vectors of each per step into eight independent XOR
 * chains: loads, not arithmetic, are the limit. The stream count is a
 * constant in each copy of the loop (1, 4 or 8, sweep_streams[]) so that
 * the chains stay in registers: indexed by a run-time stream, GCC kept
 * them on the stack, a load, XOR and store per vector whose chain held
 * back the loads in flight, and the sweep read 59-64 GB/s on the 2-core
 * Zen 5 guest where a GEMV read 62-70 ("101-118%"), 81-85 GB/s with
 * them in registers (2026-12-07). With @prefetch, each
 * vector's line that many bytes ahead is asked for first, as the model's
 * weight streams do (rbln_model_prefetch_bytes()): on the 16-core
 * Sapphire Rapids the GEMV read 132 GB/s where the plain sweep's best
 * was 127.
 */
#define SWEEP_FN(name, isa, bytes_per_vec)				\
typedef unsigned long long name##_vec __attribute__((			\
	vector_size(bytes_per_vec), aligned(bytes_per_vec)));		\
									\
__attribute__((target(isa), always_inline))				\
static inline void name##_group(const name##_vec *p, uint64_t part,	\
				const struct sweep *s, name##_vec *x,	\
				const unsigned int streams)		\
{									\
	for (uint64_t i = 0; i + 2 <= part; i += 2)			\
		_Pragma("GCC unroll 8")					\
		for (unsigned int j = 0; j < streams; j++) {		\
			const name##_vec *e = &p[j * part + i];		\
									\
			if (s->prefetch) {				\
				__builtin_prefetch((const char *)e +	\
						   s->prefetch);	\
				__builtin_prefetch((const char *)(e + 1) + \
						   s->prefetch);	\
			}						\
			x[(2 * j) & 7] ^= e[0];				\
			x[(2 * j + 1) & 7] ^= e[1];			\
		}							\
}									\
									\
__attribute__((target(isa)))						\
static void *name(void *arg)						\
{									\
	struct sweep *s = arg;						\
	uint64_t part = s->group / sizeof(name##_vec) / s->streams;	\
	uint64_t groups = s->bytes / s->group;				\
	uint64_t g = s->next ? sweep_next(s, 0) : s->first;		\
	name##_vec x[8] = { { 0 } };					\
									\
	for (; g < groups * s->passes; g = sweep_next(s, g)) {		\
		const name##_vec *p = (const name##_vec *)(s->p +	\
				      g % groups * s->group);		\
									\
		if (s->streams == 1)					\
			name##_group(p, part, s, x, 1);			\
		else if (s->streams == 4)				\
			name##_group(p, part, s, x, 4);			\
		else							\
			name##_group(p, part, s, x, 8);			\
	}								\
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
/*
 * How the threads share the memory: 0, each its own contiguous part;
 * else groups of that many bytes per stream, taken by the threads in
 * turn, as an engine's threads take a GEMV's adjacent panels (64 KiB of a
 * K = 2048 product, 256 KiB of K = 8192), so that a kernel reading that
 * way is held to a limit that reads that way too. On
 * the 2-core Zen 3 guest a packed GEMV read "112%" of the contiguous
 * parts' best; that was with the sweep before 67bdb3f, whose chains sat
 * on the stack and read 10-20% under the machine, and the 2-core Zen 5
 * still reads the blocks taken in turn fastest in some cells (-v).
 */
static const unsigned int sweep_block[] = { 0, 64 << 10, 256 << 10 };
#define SWEEP_LEN(a)	(sizeof(a) / sizeof(*(a)))
#define SWEEP_NS	SWEEP_LEN(sweep_streams)
#define SWEEP_NP	SWEEP_LEN(sweep_prefetch)
#define SWEEP_NB	SWEEP_LEN(sweep_block)
#define SWEEP_COMBOS	(SWEEP_NS * SWEEP_NP * SWEEP_NB)
#define SWEEP_SHARING(n)	((n) / SWEEP_NS / SWEEP_NP)

/*
 * The swept memory of each page size (0: base pages, 1: huge), kept for
 * kb_read_bandwidth_again(), and each thread count's best rate of each
 * combination on each page size (sharing_best() picks from them).
 */
static struct {
	char *buf[2];
	uint64_t bytes[2];
	double each[17][2][SWEEP_COMBOS];
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
 * Combination @n of streams, prefetch distance and sharing over @buf, the
 * best of @reps rounds of @passes passes: bytes/s. Groups of a block are
 * taken from a shared count (sweep_next()).
 */
static double sweep_combo(unsigned int threads, const char *buf,
			  uint64_t bytes, unsigned int n, unsigned int passes,
			  unsigned int reps)
{
	unsigned int streams = sweep_streams[n % SWEEP_NS];
	unsigned int block = sweep_block[SWEEP_SHARING(n)];
	/* Whole 1 KiB steps: no thread reads past its part. */
	uint64_t group = block ? (uint64_t)block * streams :
				 bytes / threads / 1024 * 1024;
	_Atomic uint64_t next;
	struct sweep sw[16];
	double best = 1e30, t;

	for (unsigned int i = 0; i < threads; i++)
		sw[i] = (struct sweep){
			.p = buf, .bytes = bytes, .group = group,
			.next = block ? &next : NULL, .first = i,
			.step = threads, .streams = streams,
			.prefetch = sweep_prefetch[n / SWEEP_NS % SWEEP_NP],
			.passes = passes,
		};
	for (unsigned int r = 0; r < reps; r++) {
		atomic_store(&next, 0);
		t = best_round(__builtin_cpu_supports("avx512f") ?
			       sweep_avx512 : sweep_avx2, sw, sizeof(sw[0]),
			       threads, 1);
		if (t < best)
			best = t;
	}
	return (double)(bytes / group * group) * passes / best;
}

/*
 * The best sweep of @bytes by @threads over memory of huge pages (@huge)
 * or of base pages, each combination the best of three passes; the best
 * combination of each sharing is remembered.
 */
static double read_sweep(unsigned int threads, uint64_t bytes, int huge)
{
	char *buf = sweep_buffer(bytes, huge);
	double best = 0, t;

	for (unsigned int n = 0; n < SWEEP_COMBOS; n++) {
		t = sweep_combo(threads, buf, bytes, n, 1, 3);
		if (t > best)
			best = t;
		if (t > sweep_mem.each[threads][huge][n])
			sweep_mem.each[threads][huge][n] = t;
	}
	return best;
}

/* The measurements run on at most 16 threads (best_round()'s th[16]). */
static unsigned int sweep_threads(unsigned int threads)
{
	return threads > 16 ? 16 : threads;
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

	threads = sweep_threads(threads);
	huge = read_sweep(threads, bytes, 1);
	base = read_sweep(threads, bytes, 0);
	return huge > base ? huge : base;
}

/*
 * The best combination of sharing @sh (an index of sweep_block[]) for
 * @threads: its rate, its index into sweep_mem.each[] in @combo and its
 * page size in @huge.
 */
static double sharing_best(unsigned int threads, unsigned int sh,
			   unsigned int *combo, int *huge)
{
	const unsigned int per = SWEEP_NS * SWEEP_NP;
	double best = -1;

	*combo = sh * per;
	*huge = 1;
	for (unsigned int n = sh * per; n < (sh + 1) * per; n++)
		for (int h = 1; h >= 0; h--)
			if (sweep_mem.each[threads][h][n] > best) {
				best = sweep_mem.each[threads][h][n];
				*combo = n;
				*huge = h;
			}
	return best;
}

/*
 * The sharing of @threads' best rate (an index of sweep_block[]), with
 * that rate's combination in @combo and page size in @huge.
 */
static unsigned int best_sharing(unsigned int threads, unsigned int *combo,
				 int *huge)
{
	unsigned int sh = 0, n;
	double best = sharing_best(threads, 0, combo, huge), t;
	int h;

	for (unsigned int i = 1; i < SWEEP_NB; i++) {
		t = sharing_best(threads, i, &n, &h);
		if (t > best) {
			best = t;
			sh = i;
			*combo = n;
			*huge = h;
		}
	}
	return sh;
}

/*
 * The best combinations of kb_read_bandwidth() for @threads again: the
 * best of @passes passes over half of @bytes at @mem each, the halves and
 * each sharing's best combination in turn. Sampled between a
 * bandwidth-bound kernel's timed runs over the kernel's own memory (its
 * best run covers at least KB_SWEEP_BYTES), and after all kernels over
 * the sweep's. Half passes, more of them than the kernel's runs: a
 * shorter sample meets a moment's peak more often than a kernel's longer
 * run does, so that the limit, not the kernel, holds the best moments of
 * a drifting bandwidth: a shared host's bandwidth drifts by 10-15%
 * within a minute on the 2-core Zen 5 guest and peaks for moments. A
 * best of three rounds of three passes before the kernels only, against
 * a kernel's best of eight 1 GiB runs, let a GEMV read up to 138% of
 * that "limit" there, and one full pass after each kernel 101-112% on
 * the 2-core Zen 3; both with the sweep before 67bdb3f, which read 10-20%
 * under the machine, so part of those margins was the sweep's own. Since
 * then no kernel has read above the limit (Documentation/benchmark-log.md).
 */
double kb_read_bandwidth_of(unsigned int threads, const void *mem,
			    uint64_t bytes, unsigned int passes)
{
	uint64_t half = bytes / 2 / 4096 * 4096;
	double best = 0, t;
	unsigned int n;
	int huge;

	threads = sweep_threads(threads);
	/*
	 * Each half in turn (still far larger than any last-level cache),
	 * and each sharing's best combination in turn: which reads fastest
	 * moves with the host's load, and one chosen once may be left
	 * behind by a kernel later.
	 */
	for (unsigned int i = 0; i < passes; i++) {
		sharing_best(threads, i / 2 % SWEEP_NB, &n, &huge);
		t = sweep_combo(threads, (const char *)mem + i % 2 * half, half,
				n, 1, 1);
		if (t > best)
			best = t;
	}
	return best;
}

double kb_read_bandwidth_again(unsigned int threads, unsigned int passes)
{
	unsigned int n;
	int huge;

	threads = sweep_threads(threads);
	best_sharing(threads, &n, &huge);
	if (!sweep_mem.buf[huge])
		return 0;
	return kb_read_bandwidth_of(threads, sweep_mem.buf[huge],
				    sweep_mem.bytes[huge], passes);
}

/* Sharing @sh (an index of sweep_block[]) in words, into @buf of @len bytes. */
static void sharing_name(unsigned int sh, char *buf, size_t len)
{
	if (sweep_block[sh])
		snprintf(buf, len, "%u KiB blocks taken in turn",
			 sweep_block[sh] >> 10);
	else
		snprintf(buf, len, "a contiguous part each");
}

/* How kb_read_bandwidth()'s best combination for @threads reads. */
void kb_read_pattern(unsigned int threads, char *buf, size_t len)
{
	unsigned int n, sh;
	int huge;

	threads = sweep_threads(threads);
	sh = best_sharing(threads, &n, &huge);
	sharing_name(sh, buf, len);
	snprintf(buf + strlen(buf), len - strlen(buf),
		 ", %u stream%s, prefetch %u, %s pages",
		 sweep_streams[n % SWEEP_NS],
		 sweep_streams[n % SWEEP_NS] > 1 ? "s" : "",
		 sweep_prefetch[n / SWEEP_NS % SWEEP_NP],
		 huge ? "huge" : "base");
}

void kb_print_sweep(unsigned int threads)
{
	threads = sweep_threads(threads);
	printf("\nthe read sweep with %u thread%s, each combination's best, GB/s (huge / base pages):\n",
	       threads, threads > 1 ? "s" : "");
	printf("  %-28s", "sharing \\ streams, prefetch");
	for (unsigned int n = 0; n < SWEEP_NS * SWEEP_NP; n++)
		printf(" %2u, %4u  ", sweep_streams[n % SWEEP_NS],
		       sweep_prefetch[n / SWEEP_NS]);
	printf("\n");
	for (unsigned int sh = 0; sh < SWEEP_NB; sh++) {
		char name[48];

		sharing_name(sh, name, sizeof(name));
		printf("  %-28s", name);
		for (unsigned int n = 0; n < SWEEP_NS * SWEEP_NP; n++) {
			unsigned int c = sh * SWEEP_NS * SWEEP_NP + n;

			printf(" %5.1f/%-5.1f",
			       sweep_mem.each[threads][1][c] / 1e9,
			       sweep_mem.each[threads][0][c] / 1e9);
		}
		printf("\n");
	}
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

	threads = sweep_threads(threads);
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
