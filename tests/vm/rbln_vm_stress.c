// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln-vm-stress: parallel submitters on all devices through libnpu, with
 * random buffer allocation and freeing, random streams (FILL, COPY, ADD,
 * semaphores, cross-device copies through shared buffers) and a check of
 * every result on the CPU. TAP output, one case per thread plus a summary.
 *
 * Usage: rbln-vm-stress [-s seconds] [-t threads per device] [--hold MiB]
 *                       [--quick]
 *   --hold MiB: instead, allocate MiB of device memory on every device,
 *   print "holding", sleep -s seconds, free and exit (for rbln-smi checks).
 *   --quick: instead, one job with a shared buffer on every device, checked
 *   (the "use" of the load/unload cycles).
 */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>

#include "libnpu.h"
#include "vmtest.h"

#define MAX_BUFS	8

static npu_context *ctx;
static unsigned int ndev;
static npu_device **devs;
static int64_t end_ns;
static atomic_ulong jobs, allocs, frees, errors;

struct worker {
	pthread_t thread;
	unsigned int id;
	uint64_t rng;
	unsigned long failures;
	char why[256];
};

static uint64_t rnd(struct worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

static void failure(struct worker *w, const char *what, int err)
{
	if (!w->failures++)
		snprintf(w->why, sizeof(w->why), "%s: %s (%s)", what,
			 strerror(-err), npu_error_detail());
	atomic_fetch_add(&errors, 1);
}

struct buf {
	npu_buffer *b;
	uint32_t *map;
	uint64_t words;
};

static int buf_alloc(struct worker *w, npu_device *dev, struct buf *b)
{
	uint64_t size = 4096 * (1 + rnd(w) % 64);
	uint32_t flags = (rnd(w) & 3) == 0 ? NPU_BUFFER_HOST : 0;
	void *map;
	int err;

	err = npu_buffer_alloc(dev, size, flags, &b->b);
	if (err)
		return err;
	err = npu_buffer_map(b->b, &map);
	if (err) {
		npu_buffer_free(b->b);
		b->b = NULL;
		return err;
	}
	b->map = map;
	b->words = npu_buffer_size(b->b) / 4;
	atomic_fetch_add(&allocs, 1);
	return 0;
}

static void buf_free(struct buf *b)
{
	if (!b->b)
		return;
	npu_buffer_free(b->b);
	b->b = NULL;
	atomic_fetch_add(&frees, 1);
}

/* One random job on @dev, checked against a CPU reference. */
static void one_job(struct worker *w, npu_device *dev, npu_queue *q,
		    struct buf *bufs)
{
	struct buf *a = &bufs[rnd(w) % MAX_BUFS], *b = &bufs[rnd(w) % MAX_BUFS];
	npu_stream *s = NULL;
	npu_fence *f = NULL;
	uint64_t n, ao, bo;
	uint32_t v = (uint32_t)rnd(w);
	int err, kind = (int)(rnd(w) % 3);

	if (!a->b || !b->b || a == b)
		return;
	n = 1 + rnd(w) % (a->words < b->words ? a->words : b->words);
	ao = rnd(w) % (a->words - n + 1);
	bo = rnd(w) % (b->words - n + 1);

	err = npu_stream_create(dev, &s);
	if (err) {
		failure(w, "npu_stream_create", err);
		return;
	}
	switch (kind) {
	case 0:		/* fill a, copy to b */
		npu_stream_fill(s, a->b, ao * 4, n * 4, v);
		npu_stream_copy(s, b->b, bo * 4, a->b, ao * 4, n * 4);
		break;
	case 1:		/* a = 1.0, b = 2.0, b += a */
		npu_stream_fill(s, a->b, ao * 4, n * 4, 0x3f800000);
		npu_stream_fill(s, b->b, bo * 4, n * 4, 0x40000000);
		npu_stream_add_f32(s, b->b, bo * 4, b->b, bo * 4, a->b, ao * 4, n);
		break;
	default:	/* semaphore handshake inside one stream */
		npu_stream_fill(s, a->b, 0, 8, 0);
		npu_stream_sem_signal(s, a->b, 0, NPU_SEM_ADD, 3);
		npu_stream_sem_wait(s, a->b, 0, NPU_SEM_GEQ, 3, 1000000000);
		npu_stream_fill(s, b->b, bo * 4, n * 4, v);
		break;
	}
	err = npu_stream_submit(s, q, NULL, 0, &f);
	if (!err)
		err = npu_fence_wait(f, 60LL * 1000000000);
	npu_fence_release(f);
	npu_stream_destroy(s);
	if (err) {
		failure(w, "job", err);
		return;
	}
	atomic_fetch_add(&jobs, 1);

	switch (kind) {
	case 0:
		for (uint64_t i = 0; i < n; i++)
			if (b->map[bo + i] != v) {
				failure(w, "copy result", -EIO);
				return;
			}
		break;
	case 1:
		for (uint64_t i = 0; i < n; i++)
			if (b->map[bo + i] != 0x40400000) {
				failure(w, "add result", -EIO);
				return;
			}
		break;
	default:
		if (*(uint64_t *)a->map != 3) {
			failure(w, "semaphore value", -EIO);
			return;
		}
		for (uint64_t i = 0; i < n; i++)
			if (b->map[bo + i] != v) {
				failure(w, "fill after semaphore", -EIO);
				return;
			}
		break;
	}
}

/* Copy between two devices through a shared buffer, ordered by a fence. */
static void cross_device(struct worker *w, struct buf *bufs)
{
	unsigned int d0 = rnd(w) % ndev, d1 = (d0 + 1) % ndev;
	npu_buffer *shared = NULL;
	npu_queue *q0 = NULL, *q1 = NULL;
	npu_stream *s0 = NULL, *s1 = NULL;
	npu_fence *f0 = NULL, *f1 = NULL;
	struct buf dst = { 0 };
	uint32_t v = (uint32_t)rnd(w);
	int err;

	(void)bufs;
	if (ndev < 2)
		return;
	err = npu_buffer_alloc(devs[d1], 8192, 0, &dst.b);
	if (!err)
		err = npu_buffer_map(dst.b, (void **)&dst.map);
	if (err) {
		if (err != -ENOMEM)
			failure(w, "alloc", err);
		buf_free(&dst);
		return;
	}
	err = npu_buffer_share(dst.b, devs[d0], &shared);
	if (!err)
		err = npu_queue_create(devs[d0], NPU_PRIORITY_NORMAL, &q0);
	if (!err)
		err = npu_queue_create(devs[d1], NPU_PRIORITY_NORMAL, &q1);
	if (!err)
		err = npu_stream_create(devs[d0], &s0);
	if (!err)
		err = npu_stream_create(devs[d1], &s1);
	if (err) {
		failure(w, "cross-device setup", err);
		goto out;
	}
	/* device d0 fills the buffer of d1, then d1 copies within it */
	npu_stream_fill(s0, shared, 0, 4096, v);
	err = npu_stream_submit(s0, q0, NULL, 0, &f0);
	if (!err) {
		npu_stream_copy(s1, dst.b, 4096, dst.b, 0, 4096);
		err = npu_stream_submit(s1, q1, &f0, 1, &f1);
	}
	if (!err)
		err = npu_fence_wait(f1, 60LL * 1000000000);
	if (err) {
		failure(w, "cross-device job", err);
		goto out;
	}
	atomic_fetch_add(&jobs, 2);
	if (dst.map[1024] != v || dst.map[1023 + 1024] != v)
		failure(w, "cross-device result", -EIO);
out:
	npu_fence_release(f0);
	npu_fence_release(f1);
	npu_stream_destroy(s0);
	npu_stream_destroy(s1);
	npu_queue_destroy(q0);
	npu_queue_destroy(q1);
	if (shared)
		npu_buffer_free(shared);
	buf_free(&dst);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned int d = w->id % ndev;
	npu_device *dev = devs[d];
	struct buf bufs[MAX_BUFS] = { 0 };
	npu_queue *q = NULL;
	int err;

	err = npu_queue_create(dev, (enum npu_priority)(w->id % 3), &q);
	if (err) {
		failure(w, "npu_queue_create", err);
		return NULL;
	}
	while (vt_now() < end_ns) {
		unsigned int i = rnd(w) % MAX_BUFS;
		unsigned int op = rnd(w) % 16;

		if (op < 3) {
			buf_free(&bufs[i]);
			err = buf_alloc(w, dev, &bufs[i]);
			if (err && err != -ENOMEM)
				failure(w, "alloc", err);
		} else if (op < 4) {
			buf_free(&bufs[i]);
		} else if (op < 5) {
			cross_device(w, bufs);
		} else if (op < 6) {
			npu_queue_destroy(q);
			err = npu_queue_create(dev, (enum npu_priority)(rnd(w) % 3), &q);
			if (err) {
				failure(w, "npu_queue_create", err);
				q = NULL;
				break;
			}
		} else {
			one_job(w, dev, q, bufs);
		}
	}
	for (unsigned int i = 0; i < MAX_BUFS; i++)
		buf_free(&bufs[i]);
	if (q)
		npu_queue_destroy(q);
	return NULL;
}

static int quick(void)
{
	struct worker w = { .rng = 88172645463325252ULL };
	struct buf bufs[MAX_BUFS] = { 0 };

	for (unsigned int d = 0; d < ndev; d++) {
		npu_queue *q = NULL;
		int err = npu_queue_create(devs[d], NPU_PRIORITY_NORMAL, &q);

		if (err) {
			failure(&w, "npu_queue_create", err);
			continue;
		}
		for (unsigned int i = 0; i < 2; i++) {
			err = buf_alloc(&w, devs[d], &bufs[i]);
			if (err)
				failure(&w, "alloc", err);
		}
		/* one_job() picks two of MAX_BUFS slots; two are filled here */
		unsigned long before = atomic_load(&jobs);

		for (unsigned int i = 0; i < 1000 && atomic_load(&jobs) < before + 3; i++)
			one_job(&w, devs[d], q, bufs);
		for (unsigned int i = 0; i < 2; i++)
			buf_free(&bufs[i]);
		npu_queue_destroy(q);
	}
	cross_device(&w, bufs);
	vt_result(npu_context_backend(ctx) == NPU_BACKEND_KERNEL,
		  "libnpu picked the kernel backend by itself");
	vt_result(w.failures == 0 && atomic_load(&jobs) >= 3 * ndev,
		  "quick use of %u devices: %lu jobs%s%s", ndev, atomic_load(&jobs),
		  w.failures ? ": " : "", w.why);
	for (unsigned int d = 0; d < ndev; d++)
		npu_device_close(devs[d]);
	npu_context_destroy(ctx);
	return vt_finish();
}

static int hold(uint64_t mib, int seconds)
{
	npu_buffer **held = calloc(ndev, sizeof(*held));
	int err = 0;

	for (unsigned int d = 0; d < ndev && !err; d++) {
		void *map;

		err = npu_buffer_alloc(devs[d], mib << 20, 0, &held[d]);
		/* Touch the memory so that it is really there. */
		if (!err && !npu_buffer_map(held[d], &map))
			memset(map, 0x5a, 4096);
	}
	printf("# holding %llu MiB on %u devices: %s\n", (unsigned long long)mib,
	       ndev, err ? strerror(-err) : "ok");
	fflush(stdout);
	if (!err)
		sleep((unsigned int)seconds);
	for (unsigned int d = 0; d < ndev; d++)
		npu_buffer_free(held[d]);
	free(held);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ "hold", required_argument, NULL, 'H' },
		{ "quick", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	int seconds = 10, per_dev = 1, c, err;
	uint64_t hold_mib = 0;
	bool quick_use = false;
	struct worker *w;
	unsigned int nw;

	while ((c = getopt_long(argc, argv, "s:t:H:", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = atoi(optarg);
			break;
		case 't':
			per_dev = atoi(optarg);
			break;
		case 'H':
			hold_mib = strtoull(optarg, NULL, 0);
			break;
		case 'q':
			quick_use = true;
			break;
		default:
			return 2;
		}
	}

	err = npu_context_create(NULL, &ctx);
	if (err) {
		printf("Bail out! npu_context_create: %s\n", npu_error_detail());
		return 2;
	}
	ndev = npu_device_count(ctx);
	if (!ndev) {
		printf("Bail out! no devices\n");
		return 2;
	}
	devs = calloc(ndev, sizeof(*devs));
	for (unsigned int d = 0; d < ndev; d++) {
		err = npu_device_open(ctx, d, &devs[d]);
		if (err) {
			printf("Bail out! npu_device_open %u: %s\n", d, npu_error_detail());
			return 2;
		}
	}
	if (hold_mib)
		return hold(hold_mib, seconds);
	if (quick_use)
		return quick();

	nw = ndev * (unsigned int)per_dev;
	w = calloc(nw, sizeof(*w));
	end_ns = vt_now() + (int64_t)seconds * 1000000000;
	for (unsigned int i = 0; i < nw; i++) {
		w[i].id = i;
		w[i].rng = 0x9e3779b97f4a7c15ULL * (i + 1) ^ (uint64_t)vt_now();
		pthread_create(&w[i].thread, NULL, worker_main, &w[i]);
	}
	for (unsigned int i = 0; i < nw; i++) {
		pthread_join(w[i].thread, NULL);
		vt_result(w[i].failures == 0, "worker %u on device %u%s%s", i,
			  i % ndev, w[i].failures ? ": " : "", w[i].why);
	}
	vt_result(atomic_load(&jobs) > nw, "%lu jobs, %lu allocations, %lu frees, %lu errors",
		  atomic_load(&jobs), atomic_load(&allocs), atomic_load(&frees),
		  atomic_load(&errors));
	for (unsigned int d = 0; d < ndev; d++)
		npu_device_close(devs[d]);
	npu_context_destroy(ctx);
	free(devs);
	free(w);
	return vt_finish();
}
