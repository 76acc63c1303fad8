// SPDX-License-Identifier: MIT
/*
 * Byte-pair encoding of one word, as tokenizers' BPE::merge_word and
 * Word::merge_all do it: start from characters (with byte fallback and
 * unknown-token handling), then repeatedly apply the lowest-ranked merge,
 * leftmost first, using a binary heap of candidate pairs.  Stale heap
 * entries are detected and skipped, so a word of n characters costs
 * O(n log n) instead of rescanning for the best pair after every merge.
 */
#include <errno.h>
#include <stdlib.h>

#include "tokenizer/tokenizer_internal.h"
#include "util/utf8.h"

struct symbol {
	int32_t id;
	int32_t prev, next;	/* -1 at the ends */
	uint32_t len;		/* bytes of the word covered; 0 once merged away */
};

struct candidate {
	uint32_t rank;
	uint32_t pos;		/* index of the left symbol */
	int32_t new_id;
};

struct heap {
	struct candidate *v;
	size_t n, cap;
};

static bool cand_less(const struct candidate *a, const struct candidate *b)
{
	return a->rank != b->rank ? a->rank < b->rank : a->pos < b->pos;
}

static int heap_push(struct heap *h, struct candidate c)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 32;
		struct candidate *v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	i = h->n++;
	while (i > 0 && cand_less(&c, &h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = c;
	return 0;
}

static struct candidate heap_pop(struct heap *h)
{
	struct candidate top = h->v[0], last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && cand_less(&h->v[c + 1], &h->v[c]))
			c++;
		if (!cand_less(&h->v[c], &last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

struct word {
	struct symbol *s;
	size_t n, cap;
};

static int word_add(struct word *w, int32_t id, size_t len)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 32;
		struct symbol *s = realloc(w->s, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		w->s = s;
		w->cap = cap;
	}
	w->s[w->n] = (struct symbol){ id, (int32_t)w->n - 1, -1, (uint32_t)len };
	if (w->n)
		w->s[w->n - 1].next = (int32_t)w->n;
	w->n++;
	return 0;
}

static bool lookup_merge(const struct rbln_tokenizer *tok, int32_t a, int32_t b, uint32_t *rank,
			 int32_t *new_id)
{
	uint64_t v;

	if (!rbln_u64map_get(&tok->merges, ((uint64_t)(uint32_t)a << 32) | (uint32_t)b, &v))
		return false;
	*rank = (uint32_t)(v >> 32);
	*new_id = (int32_t)(uint32_t)v;
	return true;
}

static int push_pair(const struct rbln_tokenizer *tok, struct heap *h, const struct word *w,
		     size_t pos)
{
	struct candidate c = { 0, (uint32_t)pos, 0 };
	int32_t next = w->s[pos].next;

	if (next < 0 || !lookup_merge(tok, w->s[pos].id, w->s[next].id, &c.rank, &c.new_id))
		return 0;
	return heap_push(h, c);
}

static int merge_all(const struct rbln_tokenizer *tok, struct word *w)
{
	struct heap h = { 0 };
	size_t i;
	int rc = 0;

	for (i = 0; i + 1 < w->n && !rc; i++)
		rc = push_pair(tok, &h, w, i);
	while (!rc && h.n) {
		struct candidate top = heap_pop(&h);
		struct symbol *cur = &w->s[top.pos], *right;
		uint32_t rank;
		int32_t new_id;

		if (cur->len == 0 || cur->next < 0)
			continue;
		right = &w->s[cur->next];
		/* Skip entries made stale by an earlier merge. */
		if (!lookup_merge(tok, cur->id, right->id, &rank, &new_id) || new_id != top.new_id)
			continue;
		cur->id = top.new_id;
		cur->len += right->len;
		cur->next = right->next;
		right->len = 0;
		if (cur->next >= 0)
			w->s[cur->next].prev = (int32_t)top.pos;
		if (cur->prev >= 0)
			rc = push_pair(tok, &h, w, (size_t)cur->prev);
		if (!rc)
			rc = push_pair(tok, &h, w, top.pos);
	}
	free(h.v);
	return rc;
}

/* Initial symbols: one per character, byte tokens or <unk> when unknown. */
static int split_chars(const struct rbln_tokenizer *tok, const char *s, size_t n,
		       struct word *w)
{
	int32_t unk_id = -1;
	size_t unk_len = 0, i = 0, adv, b;
	int rc = 0;

	while (i < n && !rc) {
		int32_t id;

		if (rbln_utf8_next(s + i, n - i, &adv, NULL) != RBLN_UTF8_OK)
			adv = 1;	/* cannot happen on validated input; stay safe */
		id = rbln_strmap_get(&tok->token_to_id, s + i, adv);
		if (id >= 0) {
			if (unk_id >= 0)
				rc = word_add(w, unk_id, unk_len);
			unk_id = -1;
			if (!rc)
				rc = word_add(w, id, adv);
			i += adv;
			continue;
		}
		if (tok->byte_fallback) {
			bool all = true;

			for (b = 0; b < adv; b++)
				all &= tok->byte_token[(unsigned char)s[i + b]] >= 0;
			if (all) {
				/* Like tokenizers, a pending <unk> is not flushed first. */
				for (b = 0; b < adv && !rc; b++)
					rc = word_add(w, tok->byte_token[(unsigned char)s[i + b]], 1);
				i += adv;
				continue;
			}
		}
		if (tok->unk_id >= 0) {
			if (unk_id >= 0 && tok->fuse_unk) {
				unk_len += adv;
			} else {
				if (unk_id >= 0)
					rc = word_add(w, unk_id, unk_len);
				unk_id = tok->unk_id;
				unk_len = adv;
			}
		}
		/* Without an unk token, tokenizers drops the character. */
		i += adv;
	}
	if (!rc && unk_id >= 0)
		rc = word_add(w, unk_id, unk_len);
	return rc;
}

int rbln_bpe_word(const struct rbln_tokenizer *tok, const char *s, size_t n,
		  struct rbln_ids *ids)
{
	struct word w = { 0 };
	size_t i;
	int rc;

	if (n == 0)
		return 0;
	if (tok->ignore_merges) {
		int32_t id = rbln_strmap_get(&tok->token_to_id, s, n);

		if (id >= 0)
			return rbln_ids_push(ids, id);
	}
	rc = split_chars(tok, s, n, &w);
	if (!rc)
		rc = merge_all(tok, &w);
	for (i = 0; i < w.n && !rc; i = w.s[i].next >= 0 ? (size_t)w.s[i].next : w.n)
		rc = rbln_ids_push(ids, w.s[i].id);
	free(w.s);
	return rc;
}
