// SPDX-License-Identifier: MIT
/* rbln-diag's helpers around libnpu, and the list of results. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diag.h"

void diag_report(struct diag *d, const char *check, int device, bool pass, double value,
		 const char *unit, const char *fmt, ...)
{
	struct diag_result *r;
	va_list ap;

	r = realloc(d->results, (d->num_results + 1) * sizeof(*r));
	if (!r) {
		fprintf(stderr, "rbln-diag: out of memory\n");
		exit(2);
	}
	d->results = r;
	r = &r[d->num_results++];
	memset(r, 0, sizeof(*r));
	snprintf(r->check, sizeof(r->check), "%s", check);
	r->device = device;
	r->pass = pass;
	r->value = value;
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
}

npu_buffer *diag_alloc(npu_device *dev, uint64_t size, uint32_t flags, void **map,
		       char *why, size_t len)
{
	npu_buffer *b;
	int err = npu_buffer_alloc(dev, size, flags, &b);

	if (err) {
		snprintf(why, len, "allocating %llu bytes: %s (%s)", (unsigned long long)size,
			 npu_strerror(err), npu_error_detail());
		return NULL;
	}
	if (map) {
		err = npu_buffer_map(b, map);
		if (err) {
			snprintf(why, len, "mapping a buffer: %s (%s)", npu_strerror(err),
				 npu_error_detail());
			npu_buffer_free(b);
			return NULL;
		}
	}
	return b;
}

int diag_run(npu_stream *s, npu_queue *q, char *why, size_t len)
{
	npu_fence *f = NULL;
	int err = npu_stream_submit(s, q, NULL, 0, &f);

	if (err) {
		snprintf(why, len, "submit: %s (%s)", npu_strerror(err), npu_error_detail());
		return err;
	}
	err = npu_fence_wait(f, 120LL * 1000000000);
	npu_fence_release(f);
	if (err)
		snprintf(why, len, "job: %s", npu_strerror(err));
	npu_stream_reset(s);
	return err;
}

double diag_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
