// SPDX-License-Identifier: MIT
/*
 * npu-bench: submission latency and COPY bandwidth of one device, beside
 * plain memcpy() bandwidth measured in the same run so the two can be
 * compared on whatever machine this runs on. A benchmark, not a test: it
 * prints numbers and judges nothing.
 *
 *   npu-bench [-n submissions] [-s copy MiB] [-r copy repetitions] [-d device]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libnpu.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "npu-bench: %s: %s (%s)\n", what, npu_strerror(err),
		npu_error_detail());
	exit(1);
}

static void print_machine(void)
{
	char line[256], model[256] = "unknown";
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon) {
			snprintf(model, sizeof(model), "%s", colon + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	printf("machine: %s, %ld online cores\n", model,
	       sysconf(_SC_NPROCESSORS_ONLN));
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void bench_latency(npu_device *dev, npu_queue *q, unsigned int n)
{
	npu_stream *s;
	double *lat = malloc(n * sizeof(*lat));
	int err;

	if (!lat)
		die("malloc", -ENOMEM);
	err = npu_stream_create(dev, &s);
	if (err)
		die("npu_stream_create", err);
	npu_stream_nop(s);

	/* Warm up: first submissions allocate the command buffer. */
	for (unsigned int i = 0; i < n / 10 + 1; i++) {
		npu_fence *f;

		err = npu_stream_submit(s, q, NULL, 0, &f);
		if (!err)
			err = npu_fence_wait(f, NPU_TIMEOUT_INFINITE);
		if (err)
			die("NOP job", err);
		npu_fence_release(f);
	}
	for (unsigned int i = 0; i < n; i++) {
		npu_fence *f;
		double t0 = now_s();

		err = npu_stream_submit(s, q, NULL, 0, &f);
		if (!err)
			err = npu_fence_wait(f, NPU_TIMEOUT_INFINITE);
		lat[i] = now_s() - t0;
		if (err)
			die("NOP job", err);
		npu_fence_release(f);
	}
	qsort(lat, n, sizeof(*lat), by_value);
	printf("submit-to-fence latency, NOP stream, %u submissions: median %.1f us, p99 %.1f us, min %.1f us, max %.1f us\n",
	       n, lat[n / 2] * 1e6, lat[(size_t)(n * 0.99)] * 1e6, lat[0] * 1e6,
	       lat[n - 1] * 1e6);
	npu_stream_destroy(s);
	free(lat);
}

static npu_buffer *alloc_touched(npu_device *dev, uint64_t size, void **map)
{
	npu_buffer *buf;
	int err = npu_buffer_alloc(dev, size, 0, &buf);

	if (!err)
		err = npu_buffer_map(buf, map);
	if (err)
		die("npu_buffer_alloc", err);
	/* Fault every page in now, so neither side measures page faults. */
	memset(*map, 0x5a, size);
	return buf;
}

static void bench_copy(npu_device *dev, npu_queue *q, uint64_t size,
		       unsigned int reps)
{
	void *src_map, *dst_map;
	npu_buffer *src = alloc_touched(dev, size, &src_map);
	npu_buffer *dst = alloc_touched(dev, size, &dst_map);
	npu_stream *s;
	double best_dev = 1e30, best_cpu = 1e30;
	int err = npu_stream_create(dev, &s);

	if (err)
		die("npu_stream_create", err);
	npu_stream_copy(s, dst, 0, src, 0, size);
	for (unsigned int r = 0; r < reps; r++) {
		npu_fence *f;
		double t0 = now_s();

		err = npu_stream_submit(s, q, NULL, 0, &f);
		if (!err)
			err = npu_fence_wait(f, NPU_TIMEOUT_INFINITE);
		double t = now_s() - t0;

		if (err)
			die("COPY job", err);
		npu_fence_release(f);
		if (t < best_dev)
			best_dev = t;
	}

	/* The same copy by the CPU, between the same two mappings. */
	for (unsigned int r = 0; r < reps; r++) {
		double t0 = now_s();

		memcpy(dst_map, src_map, size);
		double t = now_s() - t0;

		if (t < best_cpu)
			best_cpu = t;
	}
	printf("COPY %llu MiB: device %.2f GB/s, memcpy %.2f GB/s (best of %u)\n",
	       (unsigned long long)(size >> 20), (double)size / best_dev / 1e9,
	       (double)size / best_cpu / 1e9, reps);
	npu_stream_destroy(s);
	npu_buffer_free(dst);
	npu_buffer_free(src);
}

int main(int argc, char **argv)
{
	unsigned int submissions = 10000, reps = 5, index = 0;
	uint64_t copy_mib = 256;
	int opt;

	while ((opt = getopt(argc, argv, "n:s:r:d:h")) != -1) {
		switch (opt) {
		case 'n': submissions = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 's': copy_mib = strtoull(optarg, NULL, 0); break;
		case 'r': reps = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'd': index = (unsigned int)strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: %s [-n submissions] [-s copy MiB] [-r repetitions] [-d device]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (!submissions || !copy_mib || !reps) {
		fprintf(stderr, "npu-bench: counts and sizes must be positive\n");
		return 2;
	}

	npu_context *ctx;
	npu_device *dev;
	npu_queue *q = NULL;
	struct npu_device_info info;
	int err = npu_context_create(NULL, &ctx);

	if (err)
		die("npu_context_create", err);
	err = npu_device_open(ctx, index, &dev);
	if (!err)
		err = npu_device_query(dev, &info);
	if (!err)
		err = npu_queue_create(dev, NPU_PRIORITY_NORMAL, &q);
	if (err)
		die("opening the device", err);

	print_machine();
	printf("backend: %s, device %u: %s (%s), %u engines, NUMA node %d\n",
	       npu_backend_name(npu_context_backend(ctx)), index, info.name,
	       info.path, info.num_engines, info.numa_node);
	bench_latency(dev, q, submissions);
	bench_copy(dev, q, copy_mib << 20, reps);

	npu_queue_destroy(q);
	npu_device_close(dev);
	npu_context_destroy(ctx);
	return 0;
}
