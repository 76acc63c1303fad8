// SPDX-License-Identifier: MIT
#include "tokenizer/added_tokens.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf8.h"

static int32_t trie_new_node(struct rbln_trie *t, unsigned char byte)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct rbln_trie_node *nodes = realloc(t->nodes, cap * sizeof(*nodes));

		if (!nodes)
			return -1;
		t->nodes = nodes;
		t->cap = cap;
	}
	t->nodes[t->n] = (struct rbln_trie_node){ -1, -1, -1, byte };
	return (int32_t)t->n++;
}

static int32_t trie_child(const struct rbln_trie *t, int32_t node, unsigned char byte)
{
	int32_t c;

	for (c = t->nodes[node].child; c >= 0; c = t->nodes[c].sibling)
		if (t->nodes[c].byte == byte)
			return c;
	return -1;
}

int rbln_trie_add(struct rbln_trie *t, const char *s, size_t n, int32_t token)
{
	int32_t node;
	size_t i;

	if (n == 0)
		return 0;	/* tokenizers ignores empty tokens too */
	if (!t->n && trie_new_node(t, 0) < 0)
		return -ENOMEM;
	node = 0;
	for (i = 0; i < n; i++) {
		unsigned char b = (unsigned char)s[i];
		int32_t c = trie_child(t, node, b);

		if (c < 0) {
			c = trie_new_node(t, b);
			if (c < 0)
				return -ENOMEM;
			t->nodes[c].sibling = t->nodes[node].child;
			t->nodes[node].child = c;
		}
		node = c;
	}
	/* The first pattern for a string wins, as in the automaton. */
	if (t->nodes[node].token < 0)
		t->nodes[node].token = token;
	t->starts[(unsigned char)s[0]] = true;
	return 0;
}

void rbln_trie_free(struct rbln_trie *t)
{
	free(t->nodes);
	memset(t, 0, sizeof(*t));
}

/* Longest pattern starting at s[i]; returns its token index or -1. */
static int32_t longest_at(const struct rbln_trie *t, const char *s, size_t n, size_t i,
			  size_t *end)
{
	int32_t node = 0, best = -1;
	size_t j;

	for (j = i; j < n; j++) {
		node = trie_child(t, node, (unsigned char)s[j]);
		if (node < 0)
			break;
		if (t->nodes[node].token >= 0) {
			best = t->nodes[node].token;
			*end = j + 1;
		}
	}
	return best;
}

/* Rust's regex \w (used by tokenizers for single_word) is Unicode-aware;
 * PCRE2 with UCP gives the same class. */
static bool re_match(pcre2_code *re, const char *s, size_t n)
{
	pcre2_match_data *md = pcre2_match_data_create(1, NULL);
	int rc;

	if (!md)
		return false;
	rc = pcre2_match(re, (PCRE2_SPTR)s, n, 0, PCRE2_NO_UTF_CHECK, md, NULL);
	pcre2_match_data_free(md);
	return rc >= 0;
}

int rbln_added_compile_word_classes(struct rbln_added_tokens *a)
{
	int e;
	PCRE2_SIZE off;

	a->word_end = pcre2_compile((PCRE2_SPTR) "\\w\\z", PCRE2_ZERO_TERMINATED,
				    PCRE2_UTF | PCRE2_UCP, &e, &off, NULL);
	a->word_start = pcre2_compile((PCRE2_SPTR) "^\\w", PCRE2_ZERO_TERMINATED,
				      PCRE2_UTF | PCRE2_UCP, &e, &off, NULL);
	return a->word_end && a->word_start ? 0 : -ENOMEM;
}

static size_t skip_space_back(const char *s, size_t start, size_t floor_)
{
	/* Start of the whitespace run that ends at `start`. */
	size_t i = start;

	while (i > floor_) {
		size_t j = i - 1, adv;
		uint32_t cp;

		while (j > 0 && ((unsigned char)s[j] & 0xC0) == 0x80)
			j--;
		if (rbln_utf8_next(s + j, i - j, &adv, &cp) != RBLN_UTF8_OK ||
		    !rbln_unicode_is_white_space(cp))
			break;
		i = j;
	}
	return i;
}

static size_t skip_space_fwd(const char *s, size_t n, size_t i)
{
	while (i < n) {
		size_t adv;
		uint32_t cp;

		if (rbln_utf8_next(s + i, n - i, &adv, &cp) != RBLN_UTF8_OK ||
		    !rbln_unicode_is_white_space(cp))
			break;
		i += adv;
	}
	return i;
}

static int push_split(struct rbln_splits *out, int32_t id, size_t start, size_t end)
{
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 16;
		struct rbln_split *v = realloc(out->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		out->v = v;
		out->cap = cap;
	}
	out->v[out->n++] = (struct rbln_split){ id, start, end };
	return 0;
}

int rbln_added_split(const struct rbln_added_tokens *a, const struct rbln_trie *trie,
		     const char *s, size_t n, struct rbln_splits *out)
{
	size_t pos = 0, done = 0;	/* search position; end of the last split */

	out->n = 0;
	while (trie->n && pos < n) {
		const struct rbln_added_token *tok;
		size_t start = pos, stop = 0;
		int32_t t = -1;

		for (; start < n; start++) {
			if (trie->starts[(unsigned char)s[start]] &&
			    (t = longest_at(trie, s, n, start, &stop)) >= 0)
				break;
		}
		if (t < 0)
			break;
		pos = stop;	/* the automaton resumes after the raw match */
		tok = &a->tokens[t];
		if (tok->single_word && a->word_end &&
		    ((start > 0 && re_match(a->word_end, s, start)) ||
		     (stop < n && re_match(a->word_start, s + stop, n - stop))))
			continue;
		if (tok->lstrip) {
			size_t ns = skip_space_back(s, start, 0);

			start = ns > done ? ns : done;
		}
		if (tok->rstrip)
			stop = skip_space_fwd(s, n, stop);
		if (done < start && push_split(out, -1, done, start))
			return -ENOMEM;
		if (push_split(out, tok->id, start, stop))
			return -ENOMEM;
		done = stop;
	}
	if (done < n && push_split(out, -1, done, n))
		return -ENOMEM;
	return 0;
}

const struct rbln_added_token *rbln_added_by_id(const struct rbln_added_tokens *a, int32_t id)
{
	uint64_t idx;

	if (id < 0 || !rbln_u64map_get(&a->by_id, (uint64_t)id, &idx))
		return NULL;
	return &a->tokens[idx];
}

void rbln_added_tokens_free(struct rbln_added_tokens *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->tokens[i].content);
	free(a->tokens);
	for (i = 0; i < a->n_norm_forms; i++)
		free(a->norm_forms[i]);
	free(a->norm_forms);
	rbln_strmap_free(&a->by_content);
	rbln_u64map_free(&a->by_id);
	rbln_trie_free(&a->raw);
	rbln_trie_free(&a->norm);
	pcre2_code_free(a->word_end);
	pcre2_code_free(a->word_start);
	memset(a, 0, sizeof(*a));
}
