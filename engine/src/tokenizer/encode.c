// SPDX-License-Identifier: MIT
/*
 * Encoding, in the order of tokenizers' encode: added tokens are cut out of
 * the raw text, the rest is normalized, normalized added tokens are cut out
 * of that, and what remains is pre-tokenized and BPE-encoded.  The
 * post-processor template then adds special tokens if asked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer/tokenizer_internal.h"
#include "util/utf8.h"

static int encode_normalized(const struct rbln_tokenizer *tok, const char *s, size_t n,
			     bool at_start, size_t limit, struct rbln_ids *ids)
{
	struct rbln_splits sp = { 0 };
	size_t i;
	int rc = rbln_added_split(&tok->added, &tok->added.norm, s, n, &sp);

	for (i = 0; i < sp.n && !rc; i++) {
		const struct rbln_split *p = &sp.v[i];

		if (p->id >= 0)
			rc = rbln_ids_push(ids, p->id);
		else
			rc = rbln_tok_pretokenize_and_bpe(tok, s + p->start, p->end - p->start,
							  at_start && p->start == 0, limit, ids);
	}
	free(sp.v);
	return rc;
}

static int encode_text(const struct rbln_tokenizer *tok, const char *text, size_t len,
		       struct rbln_ids *ids)
{
	struct rbln_splits sp = { 0 };
	struct rbln_strbuf norm = { 0 };
	size_t i;
	int rc = rbln_added_split(&tok->added, &tok->added.raw, text, len, &sp);

	for (i = 0; i < sp.n && !rc; i++) {
		const struct rbln_split *p = &sp.v[i];

		if (p->id >= 0) {
			rc = rbln_ids_push(ids, p->id);
			continue;
		}
		size_t limit = rbln_tok_growth_limit(p->end - p->start);

		rc = rbln_tok_normalize(tok, text + p->start, p->end - p->start, limit, &norm);
		if (!rc)
			rc = encode_normalized(tok, norm.data, norm.len, p->start == 0, limit, ids);
	}
	rbln_strbuf_free(&norm);
	free(sp.v);
	return rc;
}

int rbln_tokenizer_encode(const struct rbln_tokenizer *tok, const char *text, size_t len,
			  unsigned flags, struct rbln_ids *ids, struct rbln_error *err)
{
	size_t bad, i, j;
	int rc = 0;

	/* tokenizers works on Rust strings, which are valid UTF-8 by type. */
	if (!rbln_utf8_valid(text, len, &bad))
		return rbln_error_set(err, -EINVAL, "input text is not valid UTF-8 (byte %zu)", bad);
	if (!(flags & RBLN_ENCODE_ADD_SPECIAL) || !tok->single) {
		rc = encode_text(tok, text, len, ids);
	} else {
		for (i = 0; i < tok->n_single && !rc; i++) {
			const struct rbln_template_item *it = &tok->single[i];

			if (it->is_sequence)
				rc = encode_text(tok, text, len, ids);
			for (j = 0; j < it->n_ids && !rc; j++)
				rc = rbln_ids_push(ids, it->ids[j]);
		}
	}
	/*
	 * No path in these messages: they reach clients of the server, per
	 * request.  Which tokenizer is meant is clear from the model.
	 */
	if (rc == -E2BIG)
		return rbln_error_set(err, rc, "tokenizer: the text grows more than %d-fold "
				      "through the tokenizer's normalizers and pre-tokenizers "
				      "(a hostile tokenizer.json?)", RBLN_TOK_GROWTH);
	if (rc == -ERANGE)
		return rbln_error_set(err, rc, "tokenizer: the pre-tokenizer's regex could not "
				      "finish matching the text (its match limits)");
	if (rc)
		return rbln_error_set(err, rc, "tokenizer: encoding failed: %s",
				      rc == -ENOMEM ? "out of memory" : strerror(-rc));
	return 0;
}
