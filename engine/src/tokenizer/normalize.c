// SPDX-License-Identifier: MIT
/* The normalizer chain (Prepend, Replace) applied to one piece of text. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tokenizer/tokenizer_internal.h"

size_t rbln_tok_growth_limit(size_t n)
{
	return n > (SIZE_MAX - RBLN_TOK_GROWTH_SLACK) / RBLN_TOK_GROWTH ? SIZE_MAX :
	       n * RBLN_TOK_GROWTH + RBLN_TOK_GROWTH_SLACK;
}

static int replace_all(struct rbln_strbuf *out, const char *s, size_t n, const char *a,
		       size_t alen, const char *b, size_t blen, size_t limit)
{
	size_t i = 0;
	int rc = 0;

	while (i < n && !rc) {
		/* Checked as it grows: one step may multiply the length. */
		if (out->len > limit)
			return -E2BIG;
		const char *hit = alen <= n - i ? memmem(s + i, n - i, a, alen) : NULL;
		size_t upto = hit ? (size_t)(hit - s) : n;

		rc = rbln_strbuf_append(out, s + i, upto - i);
		if (!rc && hit)
			rc = rbln_strbuf_append(out, b, blen);
		i = hit ? upto + alen : n;
	}
	return rc;
}

int rbln_tok_normalize(const struct rbln_tokenizer *tok, const char *s, size_t n,
		       size_t limit, struct rbln_strbuf *out)
{
	struct rbln_strbuf tmp = { 0 };
	size_t i;
	int rc;

	out->len = 0;
	rc = rbln_strbuf_append(out, s, n);
	for (i = 0; i < tok->n_norm && !rc; i++) {
		const struct rbln_norm_step *st = &tok->norm[i];

		tmp.len = 0;
		if (st->kind == RBLN_NORM_PREPEND) {
			/* tokenizers leaves empty pieces alone. */
			if (out->len == 0)
				continue;
			rc = rbln_strbuf_append(&tmp, st->a, st->alen);
			if (!rc)
				rc = rbln_strbuf_append(&tmp, out->data, out->len);
		} else {
			rc = replace_all(&tmp, out->data, out->len, st->a, st->alen, st->b, st->blen,
					 limit);
		}
		if (!rc && tmp.len > limit)
			rc = -E2BIG;
		if (!rc) {
			struct rbln_strbuf swap = *out;

			*out = tmp;
			tmp = swap;
		}
	}
	rbln_strbuf_free(&tmp);
	if (!rc && !out->data)
		rc = rbln_strbuf_reserve(out, 0);	/* callers may read data */
	return rc;
}
