// SPDX-License-Identifier: MIT
/*
 * Collective: an all-reduce of float32 across all devices (libnpu's
 * collective, built from peer DMA, semaphores and ADD run by the devices
 * themselves), timed and checked: every device must hold the exact sum
 * (inputs are small integers, so any summation order gives the same bits).
 * The figure is the bus bandwidth, 2 (n - 1) / n * bytes / time, as NCCL's
 * tests report it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diag.h"

void diag_collective(struct diag *d)
{
	const uint64_t count = d->level->coll_bytes / 4;
	npu_buffer *buf[DIAG_MAX_DEVICES] = { 0 };
	npu_stream *s[DIAG_MAX_DEVICES] = { 0 };
	float *map[DIAG_MAX_DEVICES];
	npu_collective_group *g = NULL;
	npu_fence *f[DIAG_MAX_DEVICES];
	double best = 0;
	char why[200] = "";
	bool pass = false;
	int err;

	if (d->n < 2) {
		diag_report(d, "collective", -1, true, NAN, "", "one device: nothing to reduce");
		return;
	}
	err = npu_collective_group_create(d->dev, d->n, NULL, &g);
	if (err) {
		snprintf(why, sizeof(why), "group: %s (%s)", npu_strerror(err), npu_error_detail());
		goto out;
	}
	for (unsigned int i = 0; i < d->n; i++) {
		buf[i] = diag_alloc(d->dev[i], count * 4, 0, (void **)&map[i], why, sizeof(why));
		if (!buf[i] || npu_stream_create(d->dev[i], &s[i])) {
			if (buf[i])
				snprintf(why, sizeof(why), "stream: %s", npu_error_detail());
			goto out;
		}
	}
	for (unsigned int r = 0; r < d->level->coll_repeat; r++) {
		double t0, t;
		unsigned int submitted = 0;

		for (unsigned int i = 0; i < d->n; i++)
			for (uint64_t e = 0; e < count; e++)
				map[i][e] = (float)((e + i) % 251);
		err = npu_stream_allreduce_f32(g, s, buf, 0, count);
		if (err) {
			snprintf(why, sizeof(why), "all-reduce: %s (%s)", npu_strerror(err),
				 npu_error_detail());
			goto out;
		}
		t0 = diag_now();
		for (unsigned int i = 0; i < d->n && !err; i++) {
			err = npu_stream_submit(s[i], d->queue[i], NULL, 0, &f[i]);
			submitted += !err;
		}
		if (!err)
			err = npu_fence_wait_all(f, d->n, 120LL * 1000000000);
		t = diag_now() - t0;
		for (unsigned int i = 0; i < submitted; i++) {
			if (err)
				npu_fence_wait(f[i], 120LL * 1000000000);
			npu_fence_release(f[i]);
		}
		for (unsigned int i = 0; i < d->n; i++)
			npu_stream_reset(s[i]);
		if (err) {
			snprintf(why, sizeof(why), "all-reduce job: %s (%s)", npu_strerror(err),
				 npu_error_detail());
			goto out;
		}
		for (unsigned int i = 0; i < d->n; i++)
			for (uint64_t e = 0; e < count; e++) {
				double want = 0;

				for (unsigned int k = 0; k < d->n; k++)
					want += (double)((e + k) % 251);
				if (map[i][e] != want) {
					snprintf(why, sizeof(why), "device %u element %llu is %g, not %g",
						 d->hw[i], (unsigned long long)e, map[i][e], want);
					goto out;
				}
			}
		if (t > 0)
			best = fmax(best, 2.0 * (d->n - 1) / d->n * (double)count * 4 / t / 1e9);
	}
	pass = true;
out:
	if (pass)
		diag_report(d, "collective", -1, true, best, "GB/s", "all-reduce of %llu MiB over "
			    "%u devices, bus bandwidth, best of %u",
			    (unsigned long long)(count * 4 >> 20), d->n, d->level->coll_repeat);
	else
		diag_report(d, "collective", -1, false, NAN, "GB/s", "%s", why);
	for (unsigned int i = 0; i < d->n; i++) {
		if (s[i])
			npu_stream_destroy(s[i]);
		if (buf[i])
			npu_buffer_free(buf[i]);
	}
	if (g)
		npu_collective_group_destroy(g);
}
