// SPDX-License-Identifier: MIT
/*
 * DMA: host<->device bandwidth of one device (COPY between a host buffer
 * and a device buffer, best of several), and the device->device matrix
 * (each device copying into a buffer of every other device, shared to it
 * as a dma-buf). Every transfer is checked for its content too.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diag.h"

static void fill_random(uint32_t *p, uint64_t words, uint32_t seed)
{
	uint32_t x = seed | 1;

	for (uint64_t w = 0; w < words; w++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[w] = x;
	}
}

/* Best GB/s of @repeat copies dst <- src of @size, or -1 with *why set. */
static double timed_copy(npu_stream *s, npu_queue *q, npu_buffer *dst, npu_buffer *src,
			 uint64_t size, unsigned int repeat, char *why, size_t len)
{
	double best = 0;

	for (unsigned int r = 0; r < repeat; r++) {
		double t0 = diag_now(), t;

		npu_stream_copy(s, dst, 0, src, 0, size);
		if (diag_run(s, q, why, len))
			return -1;
		t = diag_now() - t0;
		if (t > 0 && (double)size / t / 1e9 > best)
			best = (double)size / t / 1e9;
	}
	return best;
}

static void one_direction(struct diag *d, unsigned int i, bool to_device, npu_stream *s,
			  npu_buffer *host, uint32_t *hp, npu_buffer *dev, uint32_t *dp)
{
	const uint64_t size = d->level->dma_bytes;
	const char *check = to_device ? "dma_h2d" : "dma_d2h";
	uint32_t *src = to_device ? hp : dp, *dst = to_device ? dp : hp;
	char why[200] = "";
	double gbps;

	fill_random(src, size / 4, 0x1234u + i + to_device);
	memset(dst, 0, size);
	gbps = timed_copy(s, d->queue[i], to_device ? dev : host, to_device ? host : dev,
			  size, d->level->dma_repeat, why, sizeof(why));
	if (gbps < 0)
		diag_report(d, check, (int)d->hw[i], false, NAN, "GB/s", "%s", why);
	else if (memcmp(src, dst, size))
		diag_report(d, check, (int)d->hw[i], false, gbps, "GB/s",
			    "the copied data differs from the source");
	else
		diag_report(d, check, (int)d->hw[i], true, gbps, "GB/s",
			    "%llu MiB %s, best of %u", (unsigned long long)(size >> 20),
			    to_device ? "host -> device" : "device -> host", d->level->dma_repeat);
}

void diag_dma(struct diag *d, unsigned int i)
{
	const uint64_t size = d->level->dma_bytes;
	npu_buffer *host = NULL, *dev = NULL;
	uint32_t *hp, *dp;
	npu_stream *s = NULL;
	char why[200] = "";

	host = diag_alloc(d->dev[i], size, NPU_BUFFER_HOST, (void **)&hp, why, sizeof(why));
	if (host)
		dev = diag_alloc(d->dev[i], size, 0, (void **)&dp, why, sizeof(why));
	if (dev && npu_stream_create(d->dev[i], &s))
		snprintf(why, sizeof(why), "stream: %s", npu_error_detail());
	if (!s) {
		diag_report(d, "dma_h2d", (int)d->hw[i], false, NAN, "GB/s", "%s", why);
		diag_report(d, "dma_d2h", (int)d->hw[i], false, NAN, "GB/s", "%s", why);
	} else {
		one_direction(d, i, true, s, host, hp, dev, dp);
		one_direction(d, i, false, s, host, hp, dev, dp);
		npu_stream_destroy(s);
	}
	if (dev)
		npu_buffer_free(dev);
	if (host)
		npu_buffer_free(host);
}

/* Device @a copies into device @b's buffer; GB/s or -1 with *why set. */
static double pair(struct diag *d, unsigned int a, unsigned int b, npu_buffer *const *bufs,
		   uint32_t *const *maps, char *why, size_t len)
{
	const uint64_t size = d->level->p2p_bytes;
	npu_buffer *peer = NULL;
	npu_stream *s = NULL;
	double gbps = -1;
	int err;

	err = npu_buffer_share(bufs[b], d->dev[a], &peer);
	if (err) {
		snprintf(why, len, "sharing device %u's buffer with device %u: %s (%s)",
			 d->hw[b], d->hw[a], npu_strerror(err), npu_error_detail());
		return -1;
	}
	if (npu_stream_create(d->dev[a], &s)) {
		snprintf(why, len, "stream: %s", npu_error_detail());
		goto out;
	}
	fill_random(maps[a], size / 4, 0x9e37u * (a + 1));
	memset(maps[b], 0, size);
	gbps = timed_copy(s, d->queue[a], peer, bufs[a], size, 1, why, len);
	if (gbps >= 0 && memcmp(maps[a], maps[b], size)) {
		snprintf(why, len, "device %u -> %u: the copied data differs", d->hw[a], d->hw[b]);
		gbps = -1;
	}
out:
	if (s)
		npu_stream_destroy(s);
	npu_buffer_free(peer);
	return gbps;
}

void diag_p2p(struct diag *d)
{
	npu_buffer *bufs[DIAG_MAX_DEVICES] = { 0 };
	uint32_t *maps[DIAG_MAX_DEVICES];
	char why[200] = "";
	double worst = INFINITY;
	unsigned int pairs = 0;
	bool pass = true;

	for (unsigned int i = 0; i < d->n && pass; i++) {
		bufs[i] = diag_alloc(d->dev[i], d->level->p2p_bytes, 0, (void **)&maps[i], why,
				     sizeof(why));
		pass = bufs[i] != NULL;
	}
	for (unsigned int a = 0; a < d->n && pass; a++)
		for (unsigned int b = 0; b < d->n && pass; b++) {
			double g;

			if (a == b)
				continue;
			g = pair(d, a, b, bufs, maps, why, sizeof(why));
			pass = g >= 0;
			d->p2p_gbps[a][b] = pass ? g : NAN;
			if (pass && g < worst)
				worst = g;
			pairs++;
		}
	for (unsigned int i = 0; i < d->n; i++)
		if (bufs[i])
			npu_buffer_free(bufs[i]);
	if (d->n < 2)
		diag_report(d, "p2p", -1, true, NAN, "", "one device: no device pair to test");
	else if (pass)
		diag_report(d, "p2p", -1, true, worst, "GB/s", "%u device pairs of %llu MiB, "
			    "the slowest pair given", pairs,
			    (unsigned long long)(d->level->p2p_bytes >> 20));
	else
		diag_report(d, "p2p", -1, false, NAN, "GB/s", "%s", why);
}
