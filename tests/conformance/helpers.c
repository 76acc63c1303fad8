// SPDX-License-Identifier: MIT
/*
 * Fixtures and helpers of the conformance suite.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conformance.h"

int fixture_setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	if (npu_context_create(NULL, &fx->ctx)) {
		print_error("npu_context_create: %s\n", npu_error_detail());
		free(fx);
		return -1;
	}
	fx->count = npu_device_count(fx->ctx);
	if (fx->count > CONF_MAX_DEVICES)
		fx->count = CONF_MAX_DEVICES;
	for (unsigned int i = 0; i < fx->count; i++) {
		if (npu_device_open(fx->ctx, i, &fx->dev[i]) ||
		    npu_queue_create(fx->dev[i], NPU_PRIORITY_NORMAL,
				     &fx->queue[i]) ||
		    npu_stream_create(fx->dev[i], &fx->stream[i])) {
			print_error("device %u: %s\n", i, npu_error_detail());
			*state = fx;
			fixture_teardown(state);
			return -1;
		}
	}
	*state = fx;
	return 0;
}

int fixture_teardown(void **state)
{
	struct fixture *fx = *state;

	if (!fx)
		return 0;
	for (unsigned int i = 0; i < fx->count; i++) {
		npu_stream_destroy(fx->stream[i]);
		npu_queue_destroy(fx->queue[i]);
		npu_device_close(fx->dev[i]);
	}
	npu_context_destroy(fx->ctx);
	free(fx);
	*state = NULL;
	return 0;
}

void assert_detail_contains(const char *needle)
{
	const char *detail = npu_error_detail();

	if (!strstr(detail, needle))
		print_error("detail \"%s\" lacks \"%s\"\n", detail, needle);
	assert_non_null(strstr(detail, needle));
}

npu_buffer *conf_alloc(npu_device *dev, uint64_t size, uint32_t flags)
{
	npu_buffer *buf = NULL;

	assert_ok(npu_buffer_alloc(dev, size, flags, &buf));
	assert_non_null(buf);
	return buf;
}

void *conf_map(npu_buffer *buf)
{
	void *ptr = NULL;

	assert_ok(npu_buffer_map(buf, &ptr));
	assert_non_null(ptr);
	return ptr;
}

npu_fence *conf_submit(npu_stream *s, npu_queue *q, npu_fence *const *wait,
		       unsigned int num_wait)
{
	npu_fence *f = NULL;

	assert_ok(npu_stream_submit(s, q, wait, num_wait, &f));
	assert_non_null(f);
	return f;
}

void conf_run(npu_stream *s, npu_queue *q)
{
	npu_fence *f = conf_submit(s, q, NULL, 0);

	assert_ok(npu_fence_wait(f, CONF_WAIT_NS));
	npu_fence_release(f);
	npu_stream_reset(s);
}

/*
 * How many devices RBLN_DEVICES selects: indices and ranges separated by
 * commas. Malformed values are libnpu's business (and its tests'); here a
 * plain count is enough.
 */
unsigned int conf_expected_devices(void)
{
	const char *spec = getenv("RBLN_DEVICES");
	unsigned int count = 0;

	if (!spec)
		return 8;
	while (*spec) {
		while (isspace((unsigned char)*spec) || *spec == ',')
			spec++;
		if (!*spec)
			break;
		unsigned long first = strtoul(spec, (char **)&spec, 10);
		unsigned long last = first;

		while (isspace((unsigned char)*spec))
			spec++;
		if (*spec == '-')
			last = strtoul(spec + 1, (char **)&spec, 10);
		count += (unsigned int)(last - first + 1);
		while (*spec && *spec != ',')
			spec++;
	}
	return count;
}

static uint64_t rng_state;

void conf_seed(void)
{
	const char *env = getenv("CONF_SEED");

	rng_state = env ? strtoull(env, NULL, 0) :
		    (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
	if (!rng_state)
		rng_state = 1;
	printf("# random seed %llu (set CONF_SEED to repeat)\n",
	       (unsigned long long)rng_state);
}

/* xorshift64*: fast, and reproducible from the printed seed. */
uint64_t conf_rand(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

float conf_rand_float(void)
{
	/* Magnitudes 2^-20 .. 2^20 exercise rounding without overflow. */
	int exponent = (int)(conf_rand() % 41) - 20;
	float mantissa = (float)(conf_rand() % (1u << 24)) / (float)(1u << 24);
	float value = (1.0f + mantissa) * (exponent >= 0 ?
		(float)(1u << exponent) : 1.0f / (float)(1u << -exponent));

	return conf_rand() & 1 ? -value : value;
}

void conf_rand_fill(void *dst, size_t size)
{
	unsigned char *p = dst;

	while (size >= 8) {
		uint64_t r = conf_rand();

		memcpy(p, &r, 8);
		p += 8;
		size -= 8;
	}
	while (size--)
		*p++ = (unsigned char)conf_rand();
}

int conf_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int count = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			count++;
	closedir(d);
	return count - 1;	/* the directory's own fd */
}
