// SPDX-License-Identifier: MIT
/*
 * The machine's limits, measured in the same run as the kernels: read
 * bandwidth (a sweep much larger than the caches, as a bandwidth-bound
 * kernel streams its weights) and the float32 FMA peak (independent FMA
 * chains, enough of them to cover the FMA latency of two pipes).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kbench.h"

#define F8 float __attribute__((vector_size(32)))
#define U8 unsigned long long __attribute__((vector_size(32)))

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

struct sweep {
	pthread_t thread;
	const U8 *p;
	uint64_t n;	/* vectors */
	unsigned int passes;
	U8 sink;
};

/*
 * Eight independent XOR chains, two cache lines per step: loads, not
 * arithmetic, are the limit.
 */
__attribute__((target("avx2")))
static void *sweep_main(void *arg)
{
	struct sweep *s = arg;
	U8 x[8] = { { 0 } };

	for (unsigned int pass = 0; pass < s->passes; pass++)
		for (uint64_t i = 0; i + 8 <= s->n; i += 8) {
#pragma GCC unroll 8
			for (int j = 0; j < 8; j++)
				x[j] ^= s->p[i + j];
		}
	s->sink = x[0] ^ x[1] ^ x[2] ^ x[3] ^ x[4] ^ x[5] ^ x[6] ^ x[7];
	return NULL;
}

double kb_read_bandwidth(unsigned int threads, uint64_t bytes)
{
	struct sweep sw[16];
	U8 *buf;
	double best = 0, t;
	const unsigned int passes = 3;

	if (threads > 16)
		threads = 16;
	buf = aligned_alloc(64, bytes);
	if (!buf) {
		perror("rbln-kbench");
		exit(1);
	}
	memset(buf, 1, bytes);		/* touch every page first */
	for (int rep = 0; rep < 3; rep++) {
		t = kb_now();
		for (unsigned int i = 0; i < threads; i++) {
			sw[i].n = bytes / sizeof(U8) / threads;
			sw[i].p = buf + i * sw[i].n;
			sw[i].passes = passes;
			pthread_create(&sw[i].thread, NULL, sweep_main, &sw[i]);
		}
		for (unsigned int i = 0; i < threads; i++)
			pthread_join(sw[i].thread, NULL);
		t = kb_now() - t;
		if ((double)bytes * passes / t > best)
			best = (double)bytes * passes / t;
	}
	free(buf);
	return best;
}

struct chains {
	pthread_t thread;
	uint64_t iters;
	float sink;
};

/* 12 chains: 2 pipes x 4 cycles latency needs at least 8 in flight. */
__attribute__((target("avx2,fma")))
static void *fma_main(void *arg)
{
	struct chains *c = arg;
	F8 acc[12], m = { 0 }, b = { 0 };

	for (int j = 0; j < 8; j++) {
		m[j] = 0.999999f;
		b[j] = 1e-7f;
	}
	for (int i = 0; i < 12; i++)
		for (int j = 0; j < 8; j++)
			acc[i][j] = (float)(i + j);
	for (uint64_t it = 0; it < c->iters; it++) {
#pragma GCC unroll 12
		for (int i = 0; i < 12; i++)
			acc[i] = __builtin_ia32_vfmaddps256(acc[i], m, b);
	}
	c->sink = 0;
	for (int i = 0; i < 12; i++)
		c->sink += acc[i][0];
	return NULL;
}

double kb_fma_peak(unsigned int threads)
{
	struct chains ch[16];
	const uint64_t iters = 40000000;
	double best = 0, t;

	if (threads > 16)
		threads = 16;
	for (int rep = 0; rep < 3; rep++) {
		t = kb_now();
		for (unsigned int i = 0; i < threads; i++) {
			ch[i].iters = iters;
			pthread_create(&ch[i].thread, NULL, fma_main, &ch[i]);
		}
		for (unsigned int i = 0; i < threads; i++)
			pthread_join(ch[i].thread, NULL);
		t = kb_now() - t;
		/* 12 FMAs of 8 lanes, 2 FLOP each, per iteration. */
		if (threads * (double)iters * 12 * 8 * 2 / t > best)
			best = threads * (double)iters * 12 * 8 * 2 / t;
	}
	return best;
}
