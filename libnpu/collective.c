// SPDX-License-Identifier: MIT
/*
 * Collectives (all-reduce, all-gather) over a group of devices, as command
 * streams: peer DMA into shared staging buffers, semaphores, ADD.
 *
 * Each rank owns a mailbox buffer, shared with every other rank: two
 * semaphore counters (arrive, done) and the staging space S. A round of an
 * all-reduce of c floats at rank i:
 *
 *   1. copy its input into S_i                         (local COPY)
 *   2. barrier "arrive": +1 on every peer's arrive counter, wait for its
 *      own to reach round * (n - 1)
 *   3. sum chunk i of every S_j into S_i, in rank order starting at i
 *      (ADD reading the peers' staging buffers directly)
 *   4. copy chunk i of S_i into every peer's S_j       (peer COPY)
 *   5. barrier "done"
 *   6. copy S_i back into its buffer                   (local COPY)
 *
 * Chunk i of any S_j is read only by rank i (step 3) before rank i writes
 * it (step 4), and a rank writes S_i again (the next round's step 1) only
 * after "done", when every peer has finished with it: two barriers per
 * round, whatever the number of ranks. Each chunk is summed by one rank
 * in one order and copied everywhere, so every rank gets the same bits.
 * An all-gather round pushes each rank's piece into every peer's S_j
 * between the same two barriers, then copies S_i out.
 *
 * The counters only grow (release/acquire semaphores; a fast rank's next
 * "arrive" cannot be counted for the current round, because it needs this
 * rank's "done" first), so a group serves any number of collectives
 * without a reset.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stream_internal.h"

#define COLL_ARRIVE	0	/* semaphore offsets in the mailbox */
#define COLL_DONE	8
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
 * @rounds: rounds appended so far (the barriers' epoch)
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

/* Chunk @i of @count elements split over @n ranks: [*first, +*len). */
static void chunk(uint64_t count, unsigned int n, unsigned int i,
		  uint64_t *first, uint64_t *len)
{
	uint64_t per = count / n, extra = count % n;

	*first = per * i + (i < extra ? i : extra);
	*len = per + (i < extra ? 1 : 0);
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

static void allreduce_round(npu_collective_group *g,
			    npu_stream *const *streams,
			    npu_buffer *const *buffers, uint64_t offset,
			    uint64_t count)
{
	unsigned int n = g->n;
	uint64_t bytes = count * sizeof(float), first, len, at;

	g->rounds++;
	for (unsigned int i = 0; i < n; i++)
		npu_stream_copy(streams[i], g->mbox[i], COLL_STAGE, buffers[i],
				offset, bytes);
	barrier(g, streams, COLL_ARRIVE, g->rounds);
	for (unsigned int i = 0; i < n; i++) {
		chunk(count, n, i, &first, &len);
		if (!len)
			continue;
		at = COLL_STAGE + first * sizeof(float);
		/* Rank i sums its chunk in the order i, i + 1, ..., i - 1. */
		for (unsigned int j = 1; j < n; j++)
			npu_stream_add_f32(streams[i], g->mbox[i], at,
					   g->mbox[i], at,
					   g->peer[i][(i + j) % n], at, len);
		for (unsigned int j = 1; j < n; j++)
			npu_stream_copy(streams[i], g->peer[i][(i + j) % n], at,
					g->mbox[i], at, len * sizeof(float));
	}
	barrier(g, streams, COLL_DONE, g->rounds);
	for (unsigned int i = 0; i < n; i++)
		npu_stream_copy(streams[i], buffers[i], offset, g->mbox[i],
				COLL_STAGE, bytes);
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
			allreduce_round(g, streams, buffers,
					offset + done * sizeof(float), c);
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
