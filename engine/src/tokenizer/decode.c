// SPDX-License-Identifier: MIT
/*
 * Decoding as a stream: each token goes through the per-token decoder steps
 * (Replace, Metaspace, Strip, ByteFallback, ByteLevel), then the text is
 * assembled left to right: raw bytes are turned into UTF-8 the way Rust's
 * from_utf8_lossy does, byte-fallback runs the way tokenizers' ByteFallback
 * does, a Strip after Fuse trims the ends, and transformers'
 * clean_up_tokenization_spaces is applied last.  Output is released only
 * when no later token can change it, so the same machine serves both
 * rbln_tokenizer_decode() and streaming.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer/bytelevel.h"
#include "tokenizer/tokenizer_internal.h"
#include "util/utf8.h"
#include "util/text.h"

static const char replacement_char[] = "\xEF\xBF\xBD";	/* U+FFFD */

struct rbln_detokenizer {
	const struct rbln_tokenizer *tok;
	unsigned flags;
	bool exact_runs;		/* hold byte-fallback runs until they end */
	size_t n_fed;			/* tokens that reached the decoder */
	struct rbln_strbuf cur;		/* scratch: the current token */
	struct rbln_strbuf raw;		/* ByteLevel bytes not yet a complete character */
	struct rbln_strbuf run;		/* pending byte-fallback bytes */
	struct rbln_strbuf text;	/* decoded text not yet released */
	size_t strip_left;		/* leading Strip characters still to remove */
	struct rbln_strbuf out;		/* what push()/finish() return */
};

static int replace_all(struct rbln_strbuf *sb, const char *a, size_t alen, const char *b,
		       size_t blen, bool drop)
{
	struct rbln_strbuf res = { 0 };
	size_t i = 0;
	int rc = rbln_strbuf_reserve(&res, sb->len);

	while (i < sb->len && !rc) {
		const char *hit = memmem(sb->data + i, sb->len - i, a, alen);
		size_t upto = hit ? (size_t)(hit - sb->data) : sb->len;

		rc = rbln_strbuf_append(&res, sb->data + i, upto - i);
		if (!rc && hit && !drop)
			rc = rbln_strbuf_append(&res, b, blen);
		i = hit ? upto + alen : sb->len;
	}
	if (rc) {
		rbln_strbuf_free(&res);
		return rc;
	}
	rbln_strbuf_free(sb);
	*sb = res;
	return 0;
}

static void strip_ends(struct rbln_strbuf *sb, const struct rbln_dec_step *st)
{
	size_t k, lead = 0;

	for (k = 0; k < st->start && lead + st->alen <= sb->len &&
		    memcmp(sb->data + lead, st->a, st->alen) == 0; k++)
		lead += st->alen;
	rbln_strbuf_consume(sb, lead);
	for (k = 0; k < st->stop && sb->len >= st->alen &&
		    memcmp(sb->data + sb->len - st->alen, st->a, st->alen) == 0; k++)
		rbln_strbuf_truncate(sb, sb->len - st->alen);
}

/* "<0xNN>" as ByteFallback recognizes it. */
static bool fallback_byte(const struct rbln_strbuf *sb, unsigned char *byte)
{
	const char *s = sb->data;
	int hi, lo;

	if (sb->len != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>')
		return false;
	hi = rbln_hex_digit(s[3]);
	lo = rbln_hex_digit(s[4]);
	if (lo < 0 || (hi < 0 && s[3] != '+'))	/* Rust's from_str_radix takes "+F" */
		return false;
	*byte = (unsigned char)((hi < 0 ? 0 : hi) * 16 + lo);
	return true;
}

/* ByteLevel: every character back to its byte, else the token's own bytes. */
static int bytelevel_bytes(struct rbln_strbuf *sb)
{
	struct rbln_strbuf res = { 0 };
	size_t i = 0, adv;
	int rc = 0;

	while (i < sb->len && !rc) {
		uint32_t cp;
		unsigned char b;

		if (rbln_utf8_next(sb->data + i, sb->len - i, &adv, &cp) != RBLN_UTF8_OK ||
		    !rbln_bytelevel_byte(cp, &b)) {
			rbln_strbuf_free(&res);
			return 0;	/* keep the token's UTF-8 as is */
		}
		rc = rbln_strbuf_append_char(&res, (char)b);
		i += adv;
	}
	if (rc) {
		rbln_strbuf_free(&res);
		return rc;
	}
	rbln_strbuf_free(sb);
	*sb = res;
	return 0;
}

enum token_kind { TOKEN_TEXT, TOKEN_RAW, TOKEN_BYTE };

/* Runs the per-token decoder steps on d->cur. */
static int token_steps(struct rbln_detokenizer *d, enum token_kind *kind, unsigned char *byte)
{
	const struct rbln_tokenizer *tok = d->tok;
	size_t i;
	int rc = 0;

	*kind = TOKEN_TEXT;
	for (i = 0; i < tok->n_dec && !rc; i++) {
		const struct rbln_dec_step *st = &tok->dec[i];

		switch (st->kind) {
		case RBLN_DEC_REPLACE:
			rc = replace_all(&d->cur, st->a, st->alen, st->b, st->blen, false);
			break;
		case RBLN_DEC_METASPACE:
			rc = replace_all(&d->cur, st->a, st->alen, " ", 1,
					 d->n_fed == 0 && st->first_drops);
			break;
		case RBLN_DEC_STRIP:
			strip_ends(&d->cur, st);
			break;
		case RBLN_DEC_BYTE_FALLBACK:
			if (fallback_byte(&d->cur, byte))
				*kind = TOKEN_BYTE;
			break;
		case RBLN_DEC_BYTELEVEL:
			rc = bytelevel_bytes(&d->cur);
			*kind = TOKEN_RAW;
			break;
		}
		if (*kind == TOKEN_BYTE)
			break;	/* the loader allows nothing per-token after ByteFallback */
	}
	return rc;
}

static int append_replacements(struct rbln_strbuf *sb, size_t count)
{
	int rc = 0;

	while (count-- && !rc)
		rc = rbln_strbuf_append(sb, replacement_char, 3);
	return rc;
}

/*
 * Moves complete characters from src to text.  Invalid sequences become
 * U+FFFD: one per maximal subpart (lossy) or one per byte (fallback runs).
 * An incomplete tail waits for more bytes unless this is the end.
 */
static int drain_utf8(struct rbln_strbuf *src, struct rbln_strbuf *text, bool per_byte,
		      bool at_end)
{
	size_t i = 0, adv;
	int rc = 0;

	while (i < src->len && !rc) {
		enum rbln_utf8_status st = rbln_utf8_next(src->data + i, src->len - i, &adv, NULL);

		if (st == RBLN_UTF8_OK)
			rc = rbln_strbuf_append(text, src->data + i, adv);
		else if (st == RBLN_UTF8_INVALID)
			rc = append_replacements(text, per_byte ? adv : 1);
		else if (at_end)
			rc = append_replacements(text, per_byte ? adv : 1);
		else
			break;
		i += adv;
	}
	rbln_strbuf_consume(src, i);
	return rc;
}

/* A byte-fallback run ends: tokenizers keeps it if valid, else U+FFFD per byte. */
static int flush_run(struct rbln_detokenizer *d)
{
	size_t bad;
	int rc;

	if (!d->run.len)
		return 0;
	if (d->exact_runs && !rbln_utf8_valid(d->run.data, d->run.len, &bad)) {
		rc = append_replacements(&d->text, d->run.len);
		rbln_strbuf_truncate(&d->run, 0);
		return rc;
	}
	return drain_utf8(&d->run, &d->text, true, true);
}

/* transformers' clean_up_tokenization, in its order of replacements. */
static int clean_up(struct rbln_strbuf *out, const char *s, size_t n)
{
	static const struct { const char *from, *to; } rules[] = {
		{ " .", "." }, { " ?", "?" }, { " !", "!" }, { " ,", "," }, { " ' ", "'" },
		{ " n't", "n't" }, { " 'm", "'m" }, { " 's", "'s" }, { " 've", "'ve" },
		{ " 're", "'re" },
	};
	struct rbln_strbuf tmp = { 0 };
	size_t i;
	int rc = rbln_strbuf_append(&tmp, s, n);

	for (i = 0; i < sizeof(rules) / sizeof(rules[0]) && !rc; i++)
		rc = replace_all(&tmp, rules[i].from, strlen(rules[i].from), rules[i].to,
				 strlen(rules[i].to), false);
	if (!rc)
		rc = rbln_strbuf_append(out, tmp.data, tmp.len);
	rbln_strbuf_free(&tmp);
	return rc;
}

static bool space_in(const char *s, size_t from, size_t to)
{
	return memchr(s + from, ' ', to - from) != NULL;
}

/*
 * How much of d->text is final.  Held back: a trailing run a Strip(stop)
 * may remove, and anything within three bytes of a space, where a
 * clean-up pattern (" n't" is the longest) could still complete.
 */
static size_t releasable(const struct rbln_detokenizer *d, bool cleanup)
{
	const struct rbln_dec_step *ws = &d->tok->whole_strip;
	const char *s = d->text.data;
	size_t p = d->text.len, k;

	for (k = 0; ws->alen && k < ws->stop && p >= ws->alen &&
		    memcmp(s + p - ws->alen, ws->a, ws->alen) == 0; k++)
		p -= ws->alen;
	for (;;) {
		while (p > 0 && p < d->text.len && ((unsigned char)s[p] & 0xC0) == 0x80)
			p--;
		if (!cleanup || p == 0 || !space_in(s, p > 3 ? p - 3 : 0, p))
			return p;
		p--;
	}
}

static int release(struct rbln_detokenizer *d, bool at_end)
{
	const struct rbln_dec_step *ws = &d->tok->whole_strip;
	bool cleanup = d->tok->clean_up_spaces && !(d->flags & RBLN_DECODE_NO_CLEANUP);
	size_t p;
	int rc;

	/* A Strip after Fuse removes leading characters of the whole text. */
	while (d->strip_left && d->text.len) {
		if (d->text.len >= ws->alen && memcmp(d->text.data, ws->a, ws->alen) == 0) {
			rbln_strbuf_consume(&d->text, ws->alen);
			d->strip_left--;
		} else {
			d->strip_left = 0;
		}
	}
	if (d->strip_left && !at_end)
		return 0;
	if (at_end) {
		struct rbln_dec_step tail = *ws;

		tail.start = 0;
		if (ws->alen)
			strip_ends(&d->text, &tail);
		p = d->text.len;
	} else {
		p = releasable(d, cleanup);
	}
	rc = cleanup ? clean_up(&d->out, d->text.data, p) :
		       rbln_strbuf_append(&d->out, d->text.data, p);
	rbln_strbuf_consume(&d->text, p);
	return rc;
}

static int feed(struct rbln_detokenizer *d, int32_t id, struct rbln_error *err)
{
	const struct rbln_tokenizer *tok = d->tok;
	enum token_kind kind;
	unsigned char byte = 0;
	const char *s;
	size_t len;
	int rc;

	s = rbln_tokenizer_id_to_token(tok, id, &len);
	if (!s)
		return rbln_error_set(err, -EINVAL, "token id %d is not in the vocabulary (%zu ids)",
				      id, tok->n_ids);
	if ((d->flags & RBLN_DECODE_SKIP_SPECIAL) && rbln_tokenizer_is_special(tok, id))
		return 0;
	d->cur.len = 0;
	rc = rbln_strbuf_append(&d->cur, s, len);
	if (!rc)
		rc = token_steps(d, &kind, &byte);
	if (!rc && kind == TOKEN_BYTE) {
		rc = rbln_strbuf_append_char(&d->run, (char)byte);
		if (!rc && !d->exact_runs)
			rc = drain_utf8(&d->run, &d->text, true, false);
	} else if (!rc) {
		rc = flush_run(d);
		if (!rc && tok->dec_join_space && d->n_fed)
			rc = rbln_strbuf_append_char(&d->text, ' ');
		if (!rc && kind == TOKEN_RAW) {
			rc = rbln_strbuf_append(&d->raw, d->cur.data, d->cur.len);
			if (!rc)
				rc = drain_utf8(&d->raw, &d->text, false, false);
		} else if (!rc) {
			rc = rbln_strbuf_append(&d->text, d->cur.data, d->cur.len);
		}
	}
	d->n_fed++;
	if (!rc)
		rc = release(d, false);
	return rc ? rbln_error_set(err, rc, "out of memory") : 0;
}

static int finish(struct rbln_detokenizer *d, struct rbln_error *err)
{
	int rc = flush_run(d);

	if (!rc)
		rc = drain_utf8(&d->raw, &d->text, false, true);
	if (!rc)
		rc = release(d, true);
	return rc ? rbln_error_set(err, rc, "out of memory") : 0;
}

static struct rbln_detokenizer *detok_new(const struct rbln_tokenizer *tok, unsigned flags,
					  bool exact_runs)
{
	struct rbln_detokenizer *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->tok = tok;
	d->flags = flags;
	d->exact_runs = exact_runs;
	d->strip_left = tok->whole_strip.alen ? tok->whole_strip.start : 0;
	return d;
}

struct rbln_detokenizer *rbln_detokenizer_new(const struct rbln_tokenizer *tok, unsigned flags)
{
	return detok_new(tok, flags, false);
}

int rbln_detokenizer_push(struct rbln_detokenizer *d, int32_t id, const char **text,
			  size_t *len, struct rbln_error *err)
{
	int rc;

	d->out.len = 0;
	rc = feed(d, id, err);
	if (!rc && !d->out.data)
		rc = rbln_strbuf_reserve(&d->out, 0);
	*text = d->out.data;
	*len = rc ? 0 : d->out.len;
	return rc;
}

int rbln_detokenizer_finish(struct rbln_detokenizer *d, const char **text, size_t *len,
			    struct rbln_error *err)
{
	int rc;

	d->out.len = 0;
	rc = finish(d, err);
	if (!rc && !d->out.data)
		rc = rbln_strbuf_reserve(&d->out, 0);
	*text = d->out.data;
	*len = rc ? 0 : d->out.len;
	return rc;
}

void rbln_detokenizer_free(struct rbln_detokenizer *d)
{
	if (!d)
		return;
	rbln_strbuf_free(&d->cur);
	rbln_strbuf_free(&d->raw);
	rbln_strbuf_free(&d->run);
	rbln_strbuf_free(&d->text);
	rbln_strbuf_free(&d->out);
	free(d);
}

int rbln_tokenizer_decode(const struct rbln_tokenizer *tok, const int32_t *ids, size_t n,
			  unsigned flags, char **text, size_t *len, struct rbln_error *err)
{
	/* Whole-sequence decoding replaces an invalid byte-fallback run as a
	 * unit, exactly like tokenizers. */
	struct rbln_detokenizer *d = detok_new(tok, flags, true);
	size_t i;
	int rc = 0;

	*text = NULL;
	if (!d)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < n && !rc; i++)
		rc = feed(d, ids[i], err);
	if (!rc)
		rc = finish(d, err);
	if (!rc) {
		*text = rbln_strbuf_steal(&d->out, len);
		if (!*text)
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
	}
	rbln_detokenizer_free(d);
	return rc;
}
