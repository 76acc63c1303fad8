// SPDX-License-Identifier: MIT
/*
 * rbln-demo: open every visible RBLN device, print what they are, then
 * have them compute an all-reduce among themselves and check the result.
 *
 * Each device i fills a vector with i + 1. The devices then pass partial
 * sums around a ring: in each of N - 1 steps a device copies its partial
 * sum into its right neighbour's inbox (peer DMA into a buffer the
 * neighbour owns), raises the neighbour's "ready" semaphore, waits for its
 * own, adds its vector to what arrived and acknowledges to its left
 * neighbour that the inbox may be reused. After N - 1 steps every device
 * holds 1 + 2 + ... + N. Each device runs all of this as ONE submission:
 * the devices synchronise among themselves, not through the CPU. Finally
 * device 0 gathers every device's result, in a job that waits for the
 * fences of all the others.
 *
 *   rbln-demo [-e elements]   (--help for the options)
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libnpu.h>

#define MAX_DEVICES 64
/* Mailbox layout: two semaphores, then the inbox (64 keeps it aligned). */
#define READY_SEM 0
#define ACK_SEM 8
#define INBOX 64
/* A step waits at most this long for a neighbour (ISA maximum is 60 s). */
#define STEP_TIMEOUT_NS 30000000000ULL

struct device_state {
	npu_device *dev;
	npu_queue *queue;
	npu_stream *stream;
	npu_buffer *mailbox;		/* own: semaphores and inbox */
	npu_buffer *next_mailbox;	/* right neighbour's, imported */
	npu_buffer *prev_mailbox;	/* left neighbour's, imported */
	npu_buffer *local;		/* this device's contribution */
	npu_buffer *sum;		/* the running sum, then the result */
	npu_buffer *sum_on_0;		/* @sum imported into device 0 */
	npu_fence *fence;
};

static int check(int err, const char *what)
{
	if (err)
		fprintf(stderr, "rbln-demo: %s: %s (%s)\n", what, npu_strerror(err),
			npu_error_detail());
	return err;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void print_table(npu_context *ctx, unsigned int n)
{
	printf("backend: %s, %u visible device(s)\n\n",
	       npu_backend_name(npu_context_backend(ctx)), n);
	printf("%-3s %-3s %-10s %-18s %14s %7s %4s %4s %s\n", "idx", "hw",
	       "name", "path", "memory MiB", "engines", "numa", "ISA",
	       "capabilities");
	for (unsigned int i = 0; i < n; i++) {
		struct npu_device_info info;

		if (npu_device_info_get(ctx, i, &info)) {
			printf("%-3u (unavailable: %s)\n", i, npu_error_detail());
			continue;
		}
		char mem[32], isa[16];

		snprintf(mem, sizeof(mem), "%llu/%llu",
			 (unsigned long long)(info.mem_used >> 20),
			 (unsigned long long)(info.mem_total >> 20));
		snprintf(isa, sizeof(isa), "%u.%u", info.isa_major, info.isa_minor);
		printf("%-3u %-3u %-10s %-18s %14s %7u %4d %4s %s%s%s%s\n", i,
		       info.hw_index, info.name, info.path, mem, info.num_engines,
		       info.numa_node, isa,
		       info.capabilities & NPU_CAP_SEMAPHORES ? "sem " : "",
		       info.capabilities & NPU_CAP_PEER_BUFFERS ? "peer " : "",
		       info.capabilities & NPU_CAP_TIMELINE ? "timeline " : "",
		       info.capabilities & NPU_CAP_COMPUTE_F32 ? "f32" : "");
	}
	printf("\n");
}

static int setup_device(npu_context *ctx, unsigned int i, uint64_t bytes,
			struct device_state *d)
{
	int err = npu_device_open(ctx, i, &d->dev);

	if (!err)
		err = npu_queue_create(d->dev, NPU_PRIORITY_NORMAL, &d->queue);
	if (!err)
		err = npu_stream_create(d->dev, &d->stream);
	if (!err)
		err = npu_buffer_alloc(d->dev, INBOX + bytes, 0, &d->mailbox);
	if (!err)
		err = npu_buffer_alloc(d->dev, bytes, 0, &d->local);
	if (!err)
		err = npu_buffer_alloc(d->dev, bytes, 0, &d->sum);
	return err;
}

/* Every device imports its neighbours' mailboxes; device 0 all sums. */
static int share_buffers(struct device_state *d, unsigned int n)
{
	int err = 0;

	for (unsigned int i = 0; i < n && !err; i++) {
		struct device_state *next = &d[(i + 1) % n];
		struct device_state *prev = &d[(i + n - 1) % n];

		err = npu_buffer_share(next->mailbox, d[i].dev, &d[i].next_mailbox);
		if (!err && prev != next)
			err = npu_buffer_share(prev->mailbox, d[i].dev,
					       &d[i].prev_mailbox);
		else if (!err)
			d[i].prev_mailbox = d[i].next_mailbox;
		if (!err)
			err = npu_buffer_share(d[i].sum, d[0].dev, &d[i].sum_on_0);
	}
	return err;
}

static uint32_t float_bits(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

/* Device @i's whole part of the all-reduce, as one stream. */
static void build_ring_stream(struct device_state *d, unsigned int i,
			      unsigned int n, uint64_t elements)
{
	npu_stream *s = d->stream;
	uint64_t bytes = elements * sizeof(float);

	npu_stream_fill(s, d->local, 0, bytes, float_bits((float)(i + 1)));
	npu_stream_copy(s, d->sum, 0, d->local, 0, bytes);
	for (uint64_t step = 1; step < n; step++) {
		/* The neighbour has consumed what we sent in the last step. */
		if (step > 1)
			npu_stream_sem_wait(s, d->mailbox, ACK_SEM, NPU_SEM_GEQ,
					    step - 1, STEP_TIMEOUT_NS);
		npu_stream_copy(s, d->next_mailbox, INBOX, d->sum, 0, bytes);
		/* Release order: the copy is visible before the count is. */
		npu_stream_sem_signal(s, d->next_mailbox, READY_SEM, NPU_SEM_ADD, 1);
		npu_stream_sem_wait(s, d->mailbox, READY_SEM, NPU_SEM_GEQ, step,
				    STEP_TIMEOUT_NS);
		npu_stream_add_f32(s, d->sum, 0, d->local, 0, d->mailbox, INBOX,
				   elements);
		npu_stream_sem_signal(s, d->prev_mailbox, ACK_SEM, NPU_SEM_ADD, 1);
	}
}

/* Imports first: one device's imports may be another device's buffers. */
static void release_imports(struct device_state *d)
{
	npu_fence_release(d->fence);
	npu_buffer_free(d->sum_on_0);
	if (d->prev_mailbox != d->next_mailbox)
		npu_buffer_free(d->prev_mailbox);
	npu_buffer_free(d->next_mailbox);
}

static void release_device(struct device_state *d)
{
	npu_buffer_free(d->sum);
	npu_buffer_free(d->local);
	npu_buffer_free(d->mailbox);
	npu_stream_destroy(d->stream);
	npu_queue_destroy(d->queue);
	npu_device_close(d->dev);
}

/* Device 0 copies every device's sum next to each other, after all rings. */
static int gather(struct device_state *d, unsigned int n, uint64_t bytes,
		  npu_buffer **out)
{
	npu_fence *all[MAX_DEVICES], *f;
	npu_stream *s = d[0].stream;
	int err = npu_buffer_alloc(d[0].dev, bytes * n, NPU_BUFFER_HOST, out);

	if (err)
		return err;
	for (unsigned int i = 0; i < n; i++) {
		all[i] = d[i].fence;
		npu_stream_copy(s, *out, bytes * i, d[i].sum_on_0, 0, bytes);
	}
	err = npu_stream_submit(s, d[0].queue, all, n, &f);
	if (!err)
		err = npu_fence_wait(f, NPU_TIMEOUT_INFINITE);
	npu_fence_release(f);
	return err;
}

static int verify(const float *gathered, unsigned int n, uint64_t elements)
{
	float want = (float)n * (float)(n + 1) / 2.0f;
	int bad = 0;

	for (unsigned int i = 0; i < n; i++) {
		const float *v = gathered + i * elements;
		uint64_t wrong = 0;

		for (uint64_t e = 0; e < elements; e++)
			wrong += v[e] != want;
		printf("device %u: sum[0] = %g, sum[%llu] = %g, %llu of %llu elements wrong\n",
		       i, (double)v[0], (unsigned long long)(elements - 1),
		       (double)v[elements - 1], (unsigned long long)wrong,
		       (unsigned long long)elements);
		bad |= wrong != 0;
	}
	printf("expected %g on every device: %s\n", (double)want,
	       bad ? "MISMATCH" : "ok");
	return bad;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rbln-demo [-e ELEMENTS]\n"
		"\n"
		"Lists the visible RBLN devices, then has them all-reduce a vector among\n"
		"themselves (a ring of peer DMA and semaphores, one submission per device)\n"
		"and checks the result. Exit status 0 when every device holds the right sum.\n"
		"\n"
		"  -e, --elements N   vector length in float32 elements (default 1048576)\n"
		"  -h, --help         this help\n"
		"      --version      the version\n"
		"\n"
		"Environment: RBLN_DEVICES selects devices, RBLN_BACKEND=kernel|emul the backend.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "elements", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t elements = 1 << 20;
	char *end;
	int opt;

	while ((opt = getopt_long(argc, argv, "e:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			errno = 0;
			elements = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end || optarg[0] == '-' ||
			    elements == 0 || elements > (UINT64_C(1) << 28)) {
				fprintf(stderr, "rbln-demo: -e '%s': want 1 to %llu elements\n",
					optarg, 1ULL << 28);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("rbln-demo %s\n", RBLN_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rbln-demo: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}

	npu_context *ctx;

	if (check(npu_context_create(NULL, &ctx), "creating a context"))
		return 1;
	unsigned int n = npu_device_count(ctx);

	print_table(ctx, n);
	if (n == 0 || n > MAX_DEVICES) {
		fprintf(stderr, "rbln-demo: need 1 to %d devices, have %u\n",
			MAX_DEVICES, n);
		npu_context_destroy(ctx);
		return 1;
	}

	struct device_state *d = calloc(n, sizeof(*d));
	uint64_t bytes = elements * sizeof(float);
	npu_buffer *gathered = NULL;
	int err = d ? 0 : -ENOMEM;

	for (unsigned int i = 0; i < n && !err; i++)
		err = check(setup_device(ctx, i, bytes, &d[i]), "setting up a device");
	if (!err)
		err = check(share_buffers(d, n), "sharing buffers");

	double t0 = now_s();

	for (unsigned int i = 0; i < n && !err; i++) {
		build_ring_stream(&d[i], i, n, elements);
		err = check(npu_stream_submit(d[i].stream, d[i].queue, NULL, 0,
					      &d[i].fence), "submitting");
		npu_stream_reset(d[i].stream);
	}
	if (!err)
		err = check(gather(d, n, bytes, &gathered), "running the all-reduce");
	double elapsed = now_s() - t0;

	int bad = 1;

	if (!err) {
		void *map;

		printf("ring all-reduce of %llu floats over %u device(s) in %.2f ms (one submission per device)\n",
		       (unsigned long long)elements, n, elapsed * 1e3);
		if (!check(npu_buffer_map(gathered, &map), "mapping the result"))
			bad = verify(map, n, elements);
	}
	npu_buffer_free(gathered);
	for (unsigned int i = 0; d && i < n; i++)
		release_imports(&d[i]);
	for (unsigned int i = 0; d && i < n; i++)
		if (d[i].dev)
			release_device(&d[i]);
	free(d);
	npu_context_destroy(ctx);
	return bad ? 1 : 0;
}
