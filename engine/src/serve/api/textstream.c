// SPDX-License-Identifier: MIT
/*
 * Stop strings on a streaming detokenizer (see textstream.h).  vLLM checks
 * stop strings after each token on the new text plus a window of the old;
 * here only unreleased text needs searching, because released text never
 * ends in a prefix of a stop string.
 */
#include "textstream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct serve_textstream {
	struct rbln_detokenizer *detok;
	char **stop;
	size_t *stop_len;
	size_t n_stop;
	bool include_stop;
	bool stopped;
	bool finished;
	const char *matched;
	struct rbln_strbuf pending;	/* decoded, not yet released */
};

void serve_textstream_free(struct serve_textstream *ts)
{
	size_t i;

	if (!ts)
		return;
	rbln_detokenizer_free(ts->detok);
	for (i = 0; i < ts->n_stop; i++)
		free(ts->stop[i]);
	free(ts->stop);
	free(ts->stop_len);
	rbln_strbuf_free(&ts->pending);
	free(ts);
}

struct serve_textstream *serve_textstream_new(const struct rbln_tokenizer *tok,
					      const struct rbln_sampling_params *sp)
{
	struct serve_textstream *ts = calloc(1, sizeof(*ts));
	size_t i;

	if (!ts)
		return NULL;
	ts->detok = rbln_detokenizer_new(tok, sp->skip_special_tokens ? RBLN_DECODE_SKIP_SPECIAL : 0);
	ts->include_stop = sp->include_stop_str_in_output;
	if (!ts->detok)
		goto fail;
	if (sp->n_stop) {
		ts->stop = calloc(sp->n_stop, sizeof(*ts->stop));
		ts->stop_len = calloc(sp->n_stop, sizeof(*ts->stop_len));
		if (!ts->stop || !ts->stop_len)
			goto fail;
		for (i = 0; i < sp->n_stop; i++) {
			ts->stop[i] = strdup(sp->stop[i]);
			if (!ts->stop[i])
				goto fail;
			ts->stop_len[i] = strlen(ts->stop[i]);
			ts->n_stop++;
		}
	}
	return ts;
fail:
	serve_textstream_free(ts);
	return NULL;
}

/* Earliest complete stop string in pending: its index, or -1. */
static long find_stop(const struct serve_textstream *ts, size_t *at)
{
	long best = -1;
	size_t i, best_at = 0;

	for (i = 0; i < ts->n_stop; i++) {
		const char *hit;

		if (!ts->stop_len[i] || ts->stop_len[i] > ts->pending.len)
			continue;
		hit = memmem(ts->pending.data, ts->pending.len, ts->stop[i], ts->stop_len[i]);
		if (hit && (best < 0 || (size_t)(hit - ts->pending.data) < best_at)) {
			best = (long)i;
			best_at = (size_t)(hit - ts->pending.data);
		}
	}
	*at = best_at;
	return best;
}

/* Length of the longest suffix of pending that is a proper prefix of a stop string. */
static size_t holdback(const struct serve_textstream *ts)
{
	size_t i, keep = 0;

	for (i = 0; i < ts->n_stop; i++) {
		size_t k = ts->stop_len[i] ? ts->stop_len[i] - 1 : 0;

		if (k > ts->pending.len)
			k = ts->pending.len;
		for (; k > keep; k--)
			if (!memcmp(ts->pending.data + ts->pending.len - k, ts->stop[i], k)) {
				keep = k;
				break;
			}
	}
	return keep;
}

static int release(struct serve_textstream *ts, size_t n, struct rbln_strbuf *out)
{
	if (n && rbln_strbuf_append(out, ts->pending.data, n))
		return -ENOMEM;
	rbln_strbuf_consume(&ts->pending, n);
	return 0;
}

/* After new text: release, or stop.  Returns 1 on a stop. */
static int settle(struct serve_textstream *ts, bool at_end, struct rbln_strbuf *out)
{
	size_t at;
	long s = find_stop(ts, &at);

	if (s >= 0) {
		ts->stopped = true;
		ts->matched = ts->stop[s];
		if (release(ts, at + (ts->include_stop ? ts->stop_len[s] : 0), out))
			return -ENOMEM;
		rbln_strbuf_truncate(&ts->pending, 0);
		return 1;
	}
	return release(ts, ts->pending.len - (at_end ? 0 : holdback(ts)), out);
}

int serve_textstream_push(struct serve_textstream *ts, const int32_t *ids, size_t n,
			  struct rbln_strbuf *out, size_t *consumed, struct rbln_error *err)
{
	size_t i;
	int rc;

	*consumed = 0;
	if (ts->stopped || ts->finished)
		return ts->stopped ? 1 : 0;
	for (i = 0; i < n; i++) {
		const char *piece;
		size_t len;

		rc = rbln_detokenizer_push(ts->detok, ids[i], &piece, &len, err);
		if (rc)
			return rc;
		*consumed = i + 1;
		if (!len)
			continue;
		if (rbln_strbuf_append(&ts->pending, piece, len))
			return rbln_error_set(err, -ENOMEM, "out of memory");
		rc = settle(ts, false, out);
		if (rc < 0)
			return rbln_error_set(err, rc, "out of memory");
		if (rc)
			return 1;
	}
	return 0;
}

int serve_textstream_finish(struct serve_textstream *ts, struct rbln_strbuf *out,
			    struct rbln_error *err)
{
	const char *piece;
	size_t len;
	int rc;

	if (ts->stopped || ts->finished)
		return 0;
	ts->finished = true;
	rc = rbln_detokenizer_finish(ts->detok, &piece, &len, err);
	if (rc)
		return rc;
	if (len && rbln_strbuf_append(&ts->pending, piece, len))
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rc = settle(ts, true, out);
	if (rc < 0)
		return rbln_error_set(err, rc, "out of memory");
	return 0;
}

const char *serve_textstream_stop(const struct serve_textstream *ts)
{
	return ts->matched;
}
