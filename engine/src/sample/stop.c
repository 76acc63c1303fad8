// SPDX-License-Identifier: MIT
/* Stop-string matching over a text stream (see rbln_stop.h). */
#include "rbln_stop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

struct rbln_stop_matcher {
	char **stops;
	size_t *lens;
	size_t n;
	bool include_stop;
	int matched;			/* index, or -1 */
	bool done;
	struct rbln_strbuf pending;	/* text not yet emitted */
	struct rbln_strbuf out;		/* what the last call emits */
};

int rbln_stop_new(const char *const *stops, size_t n, bool include_stop,
		  struct rbln_stop_matcher **out)
{
	struct rbln_stop_matcher *m = calloc(1, sizeof(*m));
	size_t i;

	if (!m)
		return -ENOMEM;
	m->matched = -1;
	m->include_stop = include_stop;
	m->stops = calloc(n ? n : 1, sizeof(*m->stops));
	m->lens = calloc(n ? n : 1, sizeof(*m->lens));
	if (!m->stops || !m->lens) {
		rbln_stop_free(m);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (!stops[i] || !stops[i][0]) {
			rbln_stop_free(m);
			return -EINVAL;
		}
		m->stops[i] = strdup(stops[i]);
		if (!m->stops[i]) {
			m->n = i;
			rbln_stop_free(m);
			return -ENOMEM;
		}
		m->lens[i] = strlen(stops[i]);
	}
	m->n = n;
	*out = m;
	return 0;
}

void rbln_stop_free(struct rbln_stop_matcher *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->n; i++)
		free(m->stops[i]);
	free(m->stops);
	free(m->lens);
	rbln_strbuf_free(&m->pending);
	rbln_strbuf_free(&m->out);
	free(m);
}

int rbln_stop_matched(const struct rbln_stop_matcher *m)
{
	return m->matched;
}

/* Longest suffix of text that is a proper prefix of stop. */
static size_t partial_suffix(const char *text, size_t len, const char *stop, size_t slen)
{
	size_t k = slen - 1 < len ? slen - 1 : len;

	for (; k; k--)
		if (!memcmp(text + len - k, stop, k))
			return k;
	return 0;
}

static int emit_prefix(struct rbln_stop_matcher *m, size_t n)
{
	rbln_strbuf_truncate(&m->out, 0);
	if (rbln_strbuf_append(&m->out, m->pending.data ? m->pending.data : "", n))
		return -ENOMEM;
	rbln_strbuf_consume(&m->pending, n);
	return 0;
}

int rbln_stop_push(struct rbln_stop_matcher *m, const char *text, size_t len,
		   const char **emit, size_t *emit_len)
{
	size_t i, best = (size_t)-1, hold = 0, cut;
	int which = -1;

	*emit = "";
	*emit_len = 0;
	if (m->done)
		return 1;
	if (rbln_strbuf_append(&m->pending, text, len))
		return -ENOMEM;
	if (!m->pending.len)
		return 0;
	for (i = 0; i < m->n; i++) {
		const char *p = memmem(m->pending.data, m->pending.len, m->stops[i], m->lens[i]);

		if (p && (size_t)(p - m->pending.data) < best) {
			best = (size_t)(p - m->pending.data);
			which = (int)i;
		}
	}
	if (which >= 0) {
		m->done = true;
		m->matched = which;
		cut = best + (m->include_stop ? m->lens[which] : 0);
		if (emit_prefix(m, cut))
			return -ENOMEM;
		*emit = m->out.data;
		*emit_len = m->out.len;
		return 1;
	}
	for (i = 0; i < m->n; i++) {
		size_t k = partial_suffix(m->pending.data, m->pending.len, m->stops[i], m->lens[i]);

		if (k > hold)
			hold = k;
	}
	if (emit_prefix(m, m->pending.len - hold))
		return -ENOMEM;
	*emit = m->out.data;
	*emit_len = m->out.len;
	return 0;
}

void rbln_stop_finish(struct rbln_stop_matcher *m, const char **emit, size_t *emit_len)
{
	*emit = "";
	*emit_len = 0;
	if (m->done || emit_prefix(m, m->pending.len))
		return;
	m->done = true;
	*emit = m->out.data ? m->out.data : "";
	*emit_len = m->out.len;
}
