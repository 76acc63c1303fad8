/* SPDX-License-Identifier: MIT */
/*
 * The Prometheus text exposition format, version 0.0.4: "# HELP" and
 * "# TYPE" lines per family, then samples "name{label="value"} number".
 * Histograms with cumulative "le" buckets, _sum and _count.  Counters and
 * histograms are updated lock-free from the engine's callback threads.
 */
#ifndef RBLN_SERVE_PROM_H
#define RBLN_SERVE_PROM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define PROM_MAX_BUCKETS 32

struct prom_label {
	const char *name;
	const char *value;
};

/* "# HELP name help" and "# TYPE name type" (counter, gauge, histogram). */
int serve_prom_family(struct rbln_strbuf *sb, const char *name, const char *help, const char *type);
/* One sample; suffix ("_bucket", "_sum", ...) may be NULL. */
int serve_prom_sample(struct rbln_strbuf *sb, const char *name, const char *suffix,
		const struct prom_label *labels, size_t n_labels, double value);
/* A number as the format wants it: shortest round-trip, +Inf, -Inf, NaN. */
void serve_prom_number(char *buf, size_t len, double v);

struct prom_histogram {
	const double *bounds;		/* upper bounds, ascending; +Inf is implied */
	size_t n_bounds;
	atomic_uint_least64_t buckets[PROM_MAX_BUCKETS + 1];	/* not cumulative */
	atomic_uint_least64_t sum_ns;	/* sum in 1e-9 units of the value */
};

void serve_prom_histogram_init(struct prom_histogram *h, const double *bounds, size_t n);
void serve_prom_histogram_observe(struct prom_histogram *h, double value);
/* The samples of one histogram (cumulative buckets, +Inf, _sum, _count). */
int serve_prom_histogram_samples(struct rbln_strbuf *sb, const char *name,
			   const struct prom_label *labels, size_t n_labels,
			   const struct prom_histogram *h);

#endif
