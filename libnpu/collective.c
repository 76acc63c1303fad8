// SPDX-License-Identifier: MIT
/*
 * Collectives (all-reduce, all-gather) over a group of devices, as command
 * streams: peer DMA into shared staging buffers, semaphores, ADD.
 *
 * Each rank owns a mailbox buffer, shared with every other rank: three
 * semaphore counters (the all-gather's arrive and done, the all-reduce's
 * arrivals, of which rank 0's serves the group) and the staging space S,
 * the all-reduce's area.
 *
 * An all-reduce round of c floats is the stack's one all-reduce
 * construction (libnpu/isa/isa_encode.h), the one the engine compiles
 * into its programs, in its scattered form: rank i copies its input into
 * its area of the round, adds 1 to the group's arrival counter, waits for
 * every rank's arrival, sums chunk i of all ranks' areas in rank order
 * and copies it into chunk i of every area, then after a second arrival
 * copies its area into its buffer. Every element is summed in rank order,
 * so every rank gets the same bits. A rank publishes into its area again
 * only after the second arrival of the round before, when every peer has
 * finished with it, so one area suffices (the whole form needs two).
 *
 * An all-gather round pushes each rank's piece into slot i of every
 * peer's S between two barriers ("arrive": +1 on every peer's arrive
 * counter, wait for its own to reach round * (n - 1); then "done"), then
 * copies S out. A rank writes S again only after "done", when every peer
 * has finished with it; and a barrier or the arrival wait of one kind of
 * collective comes after every read of the other kind before it, in
 * stream order, so the two kinds share S safely.
 *
 * The counters only grow (release/acquire semaphores; a fast rank's next
 * signal cannot be counted for the current round, because it needs this
 * round's wait to be satisfied first), so a group serves any number of
 * collectives without a reset.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream_internal.h"

#define COLL_ARRIVE	0	/* semaphore offsets in the mailbox */
#define COLL_DONE	8
#define COLL_REDUCE	16	/* all-reduce arrivals (rank 0's counts) */
#define COLL_STAGE	4096	/* staging space starts a page in */
#define COLL_DEFAULT_SCRATCH	(4ULL << 20)
#define COLL_DEFAULT_TIMEOUT	30000000000ULL
#define COLL_MAX_RANKS	64

/**
 * struct npu_collective_group - devices that run collectives together
 * @n: ranks
 * @dev: each rank's device handle
 * @mbox: each rank's own mailbox
 * @peer: @peer[i][j], rank j's mailbox imported into rank i's device
 *	(@peer[i][i] is @mbox[i])
 * @scratch: bytes of staging space per rank
 * @timeout_ns: SEM_WAIT timeout
 * @rounds: all-gather rounds appended so far (the barriers' epoch)
 * @phases: arrival phases of those rounds (the arrivals' epoch)
 * @broken: a stream failed while appending: the ranks' counts may differ
 */
struct npu_collective_group {
	unsigned int n;
	npu_device *dev[COLL_MAX_RANKS];
	npu_buffer *mbox[COLL_MAX_RANKS];
	npu_buffer *peer[COLL_MAX_RANKS][COLL_MAX_RANKS];
	uint64_t scratch;
	uint64_t timeout_ns;
	uint64_t rounds;
	uint64_t phases;
	bool broken;
	pthread_mutex_t lock;
};

static void group_release(npu_collective_group *g)
{
	for (unsigned int i = 0; i < g->n; i++)
		for (unsigned int j = 0; j < g->n; j++)
			if (i != j)
				npu_buffer_free(g->peer[i][j]);
	for (unsigned int i = 0; i < g->n; i++)
		npu_buffer_free(g->mbox[i]);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

static int read_options(npu_collective_group *g,
			const struct npu_collective_options *opts)
{
	struct npu_collective_options o = { 0 };

	if (opts) {
		if (opts->struct_size < sizeof(size_t))
			return npu_fail(-EINVAL,
					"npu_collective_group_create: struct_size %zu",
					opts->struct_size);
		memcpy(&o, opts, opts->struct_size < sizeof(o) ?
		       opts->struct_size : sizeof(o));
	}
	g->scratch = o.scratch_bytes ? o.scratch_bytes : COLL_DEFAULT_SCRATCH;
	g->timeout_ns = o.timeout_ns ? o.timeout_ns : COLL_DEFAULT_TIMEOUT;
	if (g->scratch % 64 || g->scratch > (1ULL << 40))
		return npu_fail(-EINVAL,
				"scratch_bytes %llu: a multiple of 64, at most 1 TiB",
				(unsigned long long)g->scratch);
	if (g->timeout_ns > RBLN_ISA_SEM_WAIT_MAX_NS)
		return npu_fail(-EINVAL, "timeout_ns %llu exceeds %llu",
				(unsigned long long)g->timeout_ns,
				(unsigned long long)RBLN_ISA_SEM_WAIT_MAX_NS);
	return 0;
}

int npu_collective_group_create(npu_device *const *devices, unsigned int n,
				const struct npu_collective_options *opts,
				npu_collective_group **out)
{
	npu_collective_group *g;
	int err;

	if (!out)
		return npu_fail(-EINVAL, "npu_collective_group_create: out is NULL");
	*out = NULL;
	if (!devices || !n || n > COLL_MAX_RANKS)
		return npu_fail(-EINVAL,
				"npu_collective_group_create: %u devices (1 to %d)",
				n, COLL_MAX_RANKS);
	for (unsigned int i = 0; i < n; i++) {
		if (!devices[i] ||
		    devices[i]->ctx != devices[0]->ctx)
			return npu_fail(-EINVAL,
					"npu_collective_group_create: device %u is NULL or of another context",
					i);
		for (unsigned int j = 0; j < i; j++)
			if (devices[j] == devices[i])
				return npu_fail(-EINVAL,
						"npu_collective_group_create: device %u listed twice",
						i);
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return npu_fail(-ENOMEM, NULL);
	pthread_mutex_init(&g->lock, NULL);
	err = read_options(g, opts);
	if (err) {
		free(g);
		return err;
	}
	g->n = n;
	for (unsigned int i = 0; i < n && !err; i++) {
		g->dev[i] = devices[i];
		err = npu_buffer_alloc(devices[i], COLL_STAGE + g->scratch, 0,
				       &g->mbox[i]);
		g->peer[i][i] = g->mbox[i];
	}
	for (unsigned int i = 0; i < n && !err; i++)
		for (unsigned int j = 0; j < n && !err; j++)
			if (i != j)
				err = npu_buffer_share(g->mbox[j], devices[i],
						       &g->peer[i][j]);
	if (err) {
		group_release(g);
		return err;
	}
	*out = g;
	return 0;
}

void npu_collective_group_destroy(npu_collective_group *g)
{
	if (g)
		group_release(g);
}

unsigned int npu_collective_group_size(const npu_collective_group *g)
{
	return g ? g->n : 0;
}

/*
 * Arguments every collective shares; 0 or an error (nothing appended).
 * @b is a second buffer array when @two, else unused.
 */
static int check_call(npu_collective_group *g, npu_stream *const *streams,
		      npu_buffer *const *a, npu_buffer *const *b, bool two,
		      const char *what)
{
	if (!streams || !a || (two && !b))
		return npu_fail(-EINVAL, "%s: NULL argument", what);
	if (g->broken)
		return npu_fail(-EPIPE,
				"%s: the group is broken (a stream failed mid-collective)",
				what);
	for (unsigned int i = 0; i < g->n; i++) {
		if (!streams[i] || streams[i]->dev != g->dev[i])
			return npu_fail(-EINVAL,
					"%s: stream %u is not of the group's device %u",
					what, i, i);
		if (!a[i] || a[i]->dev != g->dev[i] ||
		    (two && (!b[i] || b[i]->dev != g->dev[i])))
			return npu_fail(-EINVAL,
					"%s: buffer %u is not of the group's device %u",
					what, i, i);
		if (npu_stream_error(streams[i]))
			return npu_fail(-EINVAL, "%s: stream %u already failed",
					what, i);
	}
	return 0;
}

/*
 * One barrier: +1 on every peer's counter at @sem, then wait until ours
 * has all n - 1 signals of every round so far.
 */
static void barrier(npu_collective_group *g, npu_stream *const *streams,
		    uint64_t sem, uint64_t round)
{
	unsigned int n = g->n;

	for (unsigned int i = 0; i < n; i++) {
		for (unsigned int j = 1; j < n; j++)
			npu_stream_sem_signal(streams[i],
					      g->peer[i][(i + j) % n], sem,
					      NPU_SEM_ADD, 1);
		npu_stream_sem_wait(streams[i], g->mbox[i], sem, NPU_SEM_GEQ,
				    round * (n - 1), g->timeout_ns);
	}
}

/* Marks @g broken if appending failed on any stream; the call's result. */
static int finish_call(npu_collective_group *g, npu_stream *const *streams,
		       const char *what)
{
	for (unsigned int i = 0; i < g->n; i++) {
		int err = npu_stream_error(streams[i]);

		if (err) {
			g->broken = true;
			return npu_fail(err, "%s: stream %u failed: %s", what,
					i, npu_strerror(err));
		}
	}
	return 0;
}

/*
 * Rank @i's part of an all-reduce round: @bytes of its buffer at @offset
 * into its area of the round, then the one all-reduce construction
 * (isa_encode.h) over every rank's area, in its scattered form: with many
 * emulated devices on few cores the total work decides, and scattering
 * divides the adds by n for one more wait (measured: 8 devices, 8 KiB,
 * 2 cores, about 3 times faster than summing whole areas on every rank).
 */
static void allreduce_rank(npu_collective_group *g, npu_stream *s,
			   unsigned int i, npu_buffer *buffer, uint64_t offset,
			   uint64_t bytes)
{
	static const char what[] = "npu_stream_allreduce_f32";
	struct rbln_isa_operand areas[COLL_MAX_RANKS];
	/* The scattered form's second wait frees the area: one suffices. */
	uint64_t at = COLL_STAGE;
	struct isa_allreduce ar = {
		.ranks = g->n,
		.rank = i,
		.phases_before = g->phases,
		.areas = areas,
		.timeout_ns = g->timeout_ns,
	};
	bool ok;

	npu_stream_copy(s, g->mbox[i], at, buffer, offset, bytes);
	if (!npu_stream_begin(s))
		return;
	ok = npu_stream_operand(s, &ar.arrivals, g->peer[i][0], NPU_ACCESS_RW,
				COLL_REDUCE, sizeof(uint64_t), what);
	for (unsigned int p = 0; ok && p < g->n; p++)
		ok = npu_stream_operand(s, &areas[p], g->peer[i][p],
					NPU_ACCESS_RW, at, bytes, what);
	ok = ok && npu_stream_operand(s, &ar.dst, buffer, NPU_ACCESS_WRITE,
				      offset, bytes, what);
	if (ok)
		isa_encode_allreduce_scattered(&s->enc, &ar);
	npu_stream_end(s);
}

int npu_stream_allreduce_f32(npu_collective_group *g,
			     npu_stream *const *streams,
			     npu_buffer *const *buffers, uint64_t offset,
			     uint64_t count)
{
	static const char what[] = "npu_stream_allreduce_f32";
	uint64_t per_round, done, c;
	int err;

	if (!g)
		return npu_fail(-EINVAL, "%s: group is NULL", what);
	pthread_mutex_lock(&g->lock);
	err = check_call(g, streams, buffers, NULL, false, what);
	if (!err && (!count || count > UINT64_MAX / sizeof(float) ||
		     offset % sizeof(float)))
		err = npu_fail(-EINVAL,
			       "%s: count %llu, offset %llu (float32-aligned)",
			       what, (unsigned long long)count,
			       (unsigned long long)offset);
	/* One rank: the sum is the input. */
	if (!err && g->n > 1) {
		per_round = g->scratch / sizeof(float);
		for (done = 0; done < count; done += c) {
			c = count - done < per_round ? count - done : per_round;
			for (unsigned int i = 0; i < g->n; i++)
				allreduce_rank(g, streams[i], i, buffers[i],
					       offset + done * sizeof(float),
					       c * sizeof(float));
			g->phases += 2;
		}
		err = finish_call(g, streams, what);
	}
	pthread_mutex_unlock(&g->lock);
	return err;
}

static void allgather_round(npu_collective_group *g,
			    npu_stream *const *streams, npu_buffer *const *src,
			    uint64_t src_offset, npu_buffer *const *dst,
			    uint64_t dst_offset, uint64_t bytes, uint64_t piece)
{
	unsigned int n = g->n, i, j, r;

	g->rounds++;
	barrier(g, streams, COLL_ARRIVE, g->rounds);
	/* Rank i's piece into slot i of every peer's staging space. */
	for (i = 0; i < n; i++)
		for (j = 1; j < n; j++)
			npu_stream_copy(streams[i], g->peer[i][(i + j) % n],
					COLL_STAGE + i * piece, src[i],
					src_offset, piece);
	barrier(g, streams, COLL_DONE, g->rounds);
	for (i = 0; i < n; i++)
		for (r = 0; r < n; r++) {
			if (r == i)
				npu_stream_copy(streams[i], dst[i],
						dst_offset + r * bytes, src[i],
						src_offset, piece);
			else
				npu_stream_copy(streams[i], dst[i],
						dst_offset + r * bytes,
						g->mbox[i], COLL_STAGE + r * piece,
						piece);
		}
}

int npu_stream_allgather(npu_collective_group *g, npu_stream *const *streams,
			 npu_buffer *const *src, uint64_t src_offset,
			 npu_buffer *const *dst, uint64_t dst_offset,
			 uint64_t bytes)
{
	static const char what[] = "npu_stream_allgather";
	uint64_t per_round, done, c;
	int err;

	if (!g)
		return npu_fail(-EINVAL, "%s: group is NULL", what);
	pthread_mutex_lock(&g->lock);
	err = check_call(g, streams, src, dst, true, what);
	if (!err && (!bytes || bytes > UINT64_MAX / g->n))
		err = npu_fail(-EINVAL, "%s: %llu bytes", what,
			       (unsigned long long)bytes);
	if (!err) {
		per_round = g->scratch / g->n;
		for (done = 0; done < bytes; done += c) {
			c = bytes - done < per_round ? bytes - done : per_round;
			if (g->n == 1)
				npu_stream_copy(streams[0], dst[0],
						dst_offset + done, src[0],
						src_offset + done, c);
			else
				allgather_round(g, streams, src,
						src_offset + done, dst,
						dst_offset + done, bytes, c);
		}
		err = finish_call(g, streams, what);
	}
	pthread_mutex_unlock(&g->lock);
	return err;
}
