// SPDX-License-Identifier: MIT
/* Prometheus text exposition writer (see prom.h). */
#include "prom.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void serve_prom_number(char *buf, size_t len, double v)
{
	int p;

	if (isnan(v)) {
		snprintf(buf, len, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(buf, len, "%.0f", v);
		return;
	}
	for (p = 6; p <= 17; p++) {
		snprintf(buf, len, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* Escapes for HELP text (backslash, newline) or label values (also the quote). */
static int append_escaped(struct rbln_strbuf *sb, const char *s, int label)
{
	for (; *s; s++) {
		int rc;

		if (*s == '\\')
			rc = rbln_strbuf_append(sb, "\\\\", 2);
		else if (*s == '\n')
			rc = rbln_strbuf_append(sb, "\\n", 2);
		else if (*s == '"' && label)
			rc = rbln_strbuf_append(sb, "\\\"", 2);
		else
			rc = rbln_strbuf_append_char(sb, *s);
		if (rc)
			return rc;
	}
	return 0;
}

int serve_prom_family(struct rbln_strbuf *sb, const char *name, const char *help, const char *type)
{
	if (rbln_strbuf_appendf(sb, "# HELP %s ", name) || append_escaped(sb, help, 0) ||
	    rbln_strbuf_appendf(sb, "\n# TYPE %s %s\n", name, type))
		return -ENOMEM;
	return 0;
}

int serve_prom_sample(struct rbln_strbuf *sb, const char *name, const char *suffix,
		const struct prom_label *labels, size_t n_labels, double value)
{
	char num[40];
	size_t i;

	if (rbln_strbuf_append_str(sb, name) || (suffix && rbln_strbuf_append_str(sb, suffix)))
		return -ENOMEM;
	if (n_labels) {
		if (rbln_strbuf_append_char(sb, '{'))
			return -ENOMEM;
		for (i = 0; i < n_labels; i++) {
			if (rbln_strbuf_appendf(sb, "%s%s=\"", i ? "," : "", labels[i].name) ||
			    append_escaped(sb, labels[i].value, 1) || rbln_strbuf_append_char(sb, '"'))
				return -ENOMEM;
		}
		if (rbln_strbuf_append_char(sb, '}'))
			return -ENOMEM;
	}
	serve_prom_number(num, sizeof(num), value);
	return rbln_strbuf_appendf(sb, " %s\n", num) ? -ENOMEM : 0;
}

void serve_prom_histogram_init(struct prom_histogram *h, const double *bounds, size_t n)
{
	size_t i;

	h->bounds = bounds;
	h->n_bounds = n > PROM_MAX_BUCKETS ? PROM_MAX_BUCKETS : n;
	for (i = 0; i <= PROM_MAX_BUCKETS; i++)
		atomic_init(&h->buckets[i], 0);
	atomic_init(&h->sum_ns, 0);
}

void serve_prom_histogram_observe(struct prom_histogram *h, double value)
{
	size_t i = 0;

	if (!(value >= 0))
		value = 0;	/* durations and counts only; NaN and negatives clamp */
	while (i < h->n_bounds && value > h->bounds[i])
		i++;
	atomic_fetch_add_explicit(&h->buckets[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_ns, (uint_least64_t)llround(value * 1e9),
				  memory_order_relaxed);
}

int serve_prom_histogram_samples(struct rbln_strbuf *sb, const char *name,
			   const struct prom_label *labels, size_t n_labels,
			   const struct prom_histogram *h)
{
	struct prom_label l[9];
	uint64_t cum = 0;
	char le[40];
	size_t i;

	if (n_labels > 8)
		return -EINVAL;
	memcpy(l, labels, n_labels * sizeof(*l));
	l[n_labels].name = "le";
	l[n_labels].value = le;
	/* _count is the +Inf bucket as read, so the two agree within a scrape
	 * even while observations land between the loads. */
	for (i = 0; i <= h->n_bounds; i++) {
		cum += atomic_load_explicit(&h->buckets[i], memory_order_relaxed);
		if (i < h->n_bounds)
			serve_prom_number(le, sizeof(le), h->bounds[i]);
		else
			snprintf(le, sizeof(le), "+Inf");
		if (serve_prom_sample(sb, name, "_bucket", l, n_labels + 1, (double)cum))
			return -ENOMEM;
	}
	if (serve_prom_sample(sb, name, "_sum", labels, n_labels,
			(double)atomic_load_explicit(&h->sum_ns, memory_order_relaxed) / 1e9) ||
	    serve_prom_sample(sb, name, "_count", labels, n_labels, (double)cum))
		return -ENOMEM;
	return 0;
}
