/* SPDX-License-Identifier: MIT */
/*
 * Added and special tokens (tokenizer.json "added_tokens").  They are cut
 * out of the input before normalization and BPE, leftmost-longest like the
 * Aho-Corasick automaton of tokenizers, honouring single_word, lstrip and
 * rstrip.  Tokens marked normalized match the normalized text instead.
 */
#ifndef RBLN_ADDED_TOKENS_H
#define RBLN_ADDED_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/hashmap.h"

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

struct rbln_added_token {
	char *content;
	size_t len;
	int32_t id;
	bool special;
	bool normalized;
	bool lstrip;
	bool rstrip;
	bool single_word;
};

/* A byte trie: children are a sibling list, fine for a few hundred tokens. */
struct rbln_trie_node {
	int32_t child;
	int32_t sibling;
	int32_t token;		/* index into tokens, or -1 */
	unsigned char byte;
};

struct rbln_trie {
	struct rbln_trie_node *nodes;
	size_t n, cap;
	bool starts[256];	/* bytes that begin some pattern */
};

struct rbln_added_tokens {
	struct rbln_added_token *tokens;
	size_t n;
	struct rbln_strmap by_content;	/* content -> id */
	struct rbln_u64map by_id;	/* id -> index into tokens */
	struct rbln_trie raw;		/* non-normalized tokens, matched on the input */
	struct rbln_trie norm;		/* normalized tokens, matched on normalized text */
	char **norm_forms;		/* owned patterns of the norm trie */
	size_t n_norm_forms;
	pcre2_code *word_end;		/* \w at the end; only with single_word tokens */
	pcre2_code *word_start;
};

/* One piece of a split: an added token (id >= 0) or plain text (id -1). */
struct rbln_split {
	int32_t id;
	size_t start, end;
};

struct rbln_splits {
	struct rbln_split *v;
	size_t n, cap;
};

/* Adds a pattern to a trie; token is the index into tokens. */
int rbln_trie_add(struct rbln_trie *t, const char *s, size_t n, int32_t token);
void rbln_trie_free(struct rbln_trie *t);

/*
 * Splits s by the tokens of `trie` as tokenizers' find_matches does.  The
 * splits cover s; empty input gives no splits.
 */
int rbln_added_split(const struct rbln_added_tokens *a, const struct rbln_trie *trie,
		     const char *s, size_t n, struct rbln_splits *out);

/* Needed before splitting when any token is single_word. */
int rbln_added_compile_word_classes(struct rbln_added_tokens *a);

const struct rbln_added_token *rbln_added_by_id(const struct rbln_added_tokens *a, int32_t id);
void rbln_added_tokens_free(struct rbln_added_tokens *a);

#endif
