// SPDX-License-Identifier: MIT
/*
 * Pre-tokenization: cutting normalized text into words (regex Split,
 * ByteLevel, Metaspace) before BPE sees them, with the split behaviours of
 * tokenizers (Isolated, Removed, MergedWithPrevious/Next, Contiguous).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer/bytelevel.h"
#include "tokenizer/tokenizer_internal.h"
#include "util/utf8.h"

struct span {
	size_t off, len;
	bool at_start;	/* begins at offset 0 of the original input */
};

/* Words as spans into one text buffer. */
struct pieces {
	struct rbln_strbuf text;
	struct span *v;
	size_t n, cap;
};

static int pieces_push(struct pieces *p, size_t off, size_t len, bool at_start)
{
	if (len == 0)
		return 0;	/* tokenizers drops empty splits */
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct span *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = (struct span){ off, len, at_start };
	return 0;
}

static void pieces_free(struct pieces *p)
{
	rbln_strbuf_free(&p->text);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

struct segment {
	size_t start, end;
	bool match;
};

struct segments {
	struct segment *v;
	size_t n, cap;
};

static int seg_push(struct segments *s, size_t start, size_t end, bool match)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct segment *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct segment){ start, end, match };
	return 0;
}

/*
 * What one encode matches with.  PCRE2's default match limit (10 million)
 * rejected valid text: on 10 MB of spaces Llama 3's \s*[\r\n]+ tries every
 * length of the run.  The limit grows with the text instead, and the JIT
 * gets a stack of its own (its default is 32 KiB) for the same reason.
 */
struct matcher {
	pcre2_match_data *md;
	pcre2_match_context *mc;
	pcre2_jit_stack *stack;
};

#define JIT_STACK_MAX ((size_t)64 << 20)

static int matcher_init(struct matcher *m, size_t n)
{
	memset(m, 0, sizeof(*m));
	m->md = pcre2_match_data_create(1, NULL);
	m->mc = pcre2_match_context_create(NULL);
	m->stack = pcre2_jit_stack_create(32 << 10, JIT_STACK_MAX, NULL);
	if (!m->md || !m->mc || !m->stack)
		return -ENOMEM;
	pcre2_jit_stack_assign(m->mc, NULL, m->stack);
	pcre2_set_match_limit(m->mc, n > 100000 ? (uint32_t)(n < UINT32_MAX / 100 ? n * 100 :
								    UINT32_MAX) : 10000000u);
	return 0;
}

static void matcher_free(struct matcher *m)
{
	pcre2_match_data_free(m->md);
	pcre2_match_context_free(m->mc);
	pcre2_jit_stack_free(m->stack);
}

/* Matches and the gaps between them, covering s (tokenizers' find_matches). */
static int find_matches(pcre2_code *re, const struct matcher *m, const char *s, size_t n,
			struct segments *out)
{
	pcre2_match_data *md = m->md;
	size_t pos = 0, prev = 0;
	int rc;

	out->n = 0;
	while (pos <= n) {
		PCRE2_SIZE *ov;
		size_t ms, me;

		rc = pcre2_match(re, (PCRE2_SPTR)s, n, pos, PCRE2_NO_UTF_CHECK, md, m->mc);
		if (rc == PCRE2_ERROR_NOMATCH)
			break;
		if (rc < 0)
			return -ERANGE;	/* a match or stack limit on a pathological text */
		ov = pcre2_get_ovector_pointer(md);
		ms = ov[0];
		me = ov[1];
		if (prev != ms && seg_push(out, prev, ms, false))
			return -ENOMEM;
		if (seg_push(out, ms, me, true))
			return -ENOMEM;
		prev = me;
		/* After an empty match, move on by one character. */
		pos = me > ms ? me : me + (me < n ? rbln_utf8_char_len((unsigned char)s[me]) : 1);
	}
	if (prev != n && seg_push(out, prev, n, false))
		return -ENOMEM;
	return 0;
}

/* Applies a split behaviour to the segments, in place. */
static void apply_behavior(struct segments *sg, enum rbln_split_behavior b)
{
	size_t i, k = 0;
	bool prev_match = false;

	switch (b) {
	case RBLN_SPLIT_ISOLATED:
		return;
	case RBLN_SPLIT_REMOVED:
		for (i = 0; i < sg->n; i++)
			if (!sg->v[i].match)
				sg->v[k++] = sg->v[i];
		break;
	case RBLN_SPLIT_MERGED_WITH_PREVIOUS:
		for (i = 0; i < sg->n; i++) {
			if (sg->v[i].match && !prev_match && k)
				sg->v[k - 1].end = sg->v[i].end;
			else
				sg->v[k++] = sg->v[i];
			prev_match = sg->v[i].match;
		}
		break;
	case RBLN_SPLIT_MERGED_WITH_NEXT:
		/* Walk backwards, merging each match into the piece after it. */
		k = sg->n;
		for (i = sg->n; i-- > 0;) {
			if (sg->v[i].match && !prev_match && k < sg->n)
				sg->v[k].start = sg->v[i].start;
			else
				sg->v[--k] = sg->v[i];
			prev_match = sg->v[i].match;
		}
		memmove(sg->v, sg->v + k, (sg->n - k) * sizeof(*sg->v));
		k = sg->n - k;
		break;
	case RBLN_SPLIT_CONTIGUOUS:
		for (i = 0; i < sg->n; i++) {
			if (sg->v[i].match == prev_match && k)
				sg->v[k - 1].end = sg->v[i].end;
			else
				sg->v[k++] = sg->v[i];
			prev_match = sg->v[i].match;
		}
		break;
	}
	sg->n = k;
}

/* Splits every piece of `in` by the step's regex; the text is unchanged. */
static int split_pieces(const struct rbln_pretok_step *st, const struct matcher *md,
			struct pieces *in, struct pieces *out, struct segments *sg)
{
	size_t i, j;
	int rc;

	out->text = in->text;
	memset(&in->text, 0, sizeof(in->text));
	for (i = 0; i < in->n; i++) {
		const struct span *p = &in->v[i];

		rc = find_matches(st->re, md, out->text.data + p->off, p->len, sg);
		if (rc)
			return rc;
		if (st->invert)
			for (j = 0; j < sg->n; j++)
				sg->v[j].match = !sg->v[j].match;
		apply_behavior(sg, st->behavior);
		for (j = 0; j < sg->n; j++) {
			rc = pieces_push(out, p->off + sg->v[j].start, sg->v[j].end - sg->v[j].start,
					 p->at_start && sg->v[j].start == 0);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int bytelevel_map(const char *s, size_t n, struct rbln_strbuf *out)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		char u[4];
		size_t k = rbln_utf8_encode(rbln_bytelevel_char((unsigned char)s[i]), u);

		rc = rbln_strbuf_append(out, u, k);
	}
	return rc;
}

/* ByteLevel: optional prefix space and GPT-2 split, then the byte mapping. */
static int bytelevel_pieces(const struct rbln_pretok_step *st, const struct matcher *md,
			    struct pieces *in, struct pieces *out, struct segments *sg)
{
	struct pieces spaced = { 0 }, split = { 0 };
	struct pieces *src = in;
	size_t i;
	int rc = 0;

	if (st->add_prefix_space) {
		for (i = 0; i < in->n && !rc; i++) {
			const struct span *p = &in->v[i];
			size_t off = spaced.text.len;

			if (in->text.data[p->off] != ' ')
				rc = rbln_strbuf_append_char(&spaced.text, ' ');
			if (!rc)
				rc = rbln_strbuf_append(&spaced.text, in->text.data + p->off, p->len);
			if (!rc)
				rc = pieces_push(&spaced, off, spaced.text.len - off, p->at_start);
		}
		src = &spaced;
	}
	if (!rc && st->re) {
		rc = split_pieces(st, md, src, &split, sg);
		src = &split;
	}
	for (i = 0; i < src->n && !rc; i++) {
		size_t off = out->text.len;

		rc = bytelevel_map(src->text.data + src->v[i].off, src->v[i].len, &out->text);
		if (!rc)
			rc = pieces_push(out, off, out->text.len - off, src->v[i].at_start);
	}
	pieces_free(&spaced);
	pieces_free(&split);
	return rc;
}

/* Metaspace: spaces become the replacement, maybe prefixed, then split before each. */
static int metaspace_pieces(const struct rbln_pretok_step *st, struct pieces *in,
			    struct pieces *out, size_t limit)
{
	size_t rlen = strlen(st->replacement), i;
	int rc = 0;

	for (i = 0; i < in->n && !rc; i++) {
		const struct span *p = &in->v[i];
		const char *s = in->text.data + p->off;
		size_t off = out->text.len, j, start;
		bool prepend = st->prepend == RBLN_PREPEND_ALWAYS ||
			       (st->prepend == RBLN_PREPEND_FIRST && p->at_start);

		/* No prefix when the piece already starts with one (after the
		 * space replacement below). */
		if (prepend && s[0] != ' ' &&
		    !(p->len >= rlen && memcmp(s, st->replacement, rlen) == 0))
			rc = rbln_strbuf_append(&out->text, st->replacement, rlen);
		for (j = 0; j < p->len && !rc; j++) {
			/* The replacement may be long: checked as it grows. */
			if (out->text.len > limit)
				return -E2BIG;
			rc = s[j] == ' ' ? rbln_strbuf_append(&out->text, st->replacement, rlen) :
					   rbln_strbuf_append_char(&out->text, s[j]);
		}
		if (rc)
			break;
		if (!st->split) {
			rc = pieces_push(out, off, out->text.len - off, p->at_start);
			continue;
		}
		/* MergedWithNext on the replacement: each word starts with it. */
		start = off;
		for (j = off + 1; j + rlen <= out->text.len && !rc; j++) {
			if (memcmp(out->text.data + j, st->replacement, rlen) == 0) {
				rc = pieces_push(out, start, j - start, p->at_start && start == off);
				start = j;
			}
		}
		if (!rc)
			rc = pieces_push(out, start, out->text.len - start, p->at_start && start == off);
	}
	return rc;
}

int rbln_tok_pretokenize_and_bpe(const struct rbln_tokenizer *tok, const char *s, size_t n,
				 bool at_start, size_t limit, struct rbln_ids *ids)
{
	struct pieces cur = { 0 }, next = { 0 };
	struct segments sg = { 0 };
	struct matcher m;
	size_t i;
	int rc = matcher_init(&m, n);

	if (!rc)
		rc = rbln_strbuf_append(&cur.text, s, n);
	if (!rc)
		rc = pieces_push(&cur, 0, n, at_start);
	for (i = 0; i < tok->n_pretok && !rc; i++) {
		const struct rbln_pretok_step *st = &tok->pretok[i];

		if (st->kind == RBLN_PRETOK_SPLIT)
			rc = split_pieces(st, &m, &cur, &next, &sg);
		else if (st->kind == RBLN_PRETOK_BYTELEVEL)
			rc = bytelevel_pieces(st, &m, &cur, &next, &sg);
		else
			rc = metaspace_pieces(st, &cur, &next, limit);
		if (!rc && next.text.len > limit)
			rc = -E2BIG;
		pieces_free(&cur);
		cur = next;
		memset(&next, 0, sizeof(next));
	}
	for (i = 0; i < cur.n && !rc; i++)
		rc = rbln_bpe_word(tok, cur.text.data + cur.v[i].off, cur.v[i].len, ids);
	pieces_free(&cur);
	pieces_free(&next);
	free(sg.v);
	matcher_free(&m);
	return rc;
}
