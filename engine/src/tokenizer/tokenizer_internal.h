/* SPDX-License-Identifier: MIT */
/* The parsed form of tokenizer.json shared by the encoder and decoder. */
#ifndef RBLN_TOKENIZER_INTERNAL_H
#define RBLN_TOKENIZER_INTERNAL_H

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>
#include <json-c/json.h>

#include "rbln_tokenizer.h"
#include "tokenizer/added_tokens.h"
#include "util/hashmap.h"
#include "util/strbuf.h"

/* Normalizers: applied to text between added tokens, before pre-tokenizing. */
enum rbln_norm_kind {
	RBLN_NORM_PREPEND,	/* prepend `a` to a non-empty piece */
	RBLN_NORM_REPLACE,	/* replace every `a` by `b` */
};

struct rbln_norm_step {
	enum rbln_norm_kind kind;
	char *a, *b;
	size_t alen, blen;
};

enum rbln_split_behavior {
	RBLN_SPLIT_REMOVED,
	RBLN_SPLIT_ISOLATED,
	RBLN_SPLIT_MERGED_WITH_PREVIOUS,
	RBLN_SPLIT_MERGED_WITH_NEXT,
	RBLN_SPLIT_CONTIGUOUS,
};

enum rbln_pretok_kind {
	RBLN_PRETOK_SPLIT,	/* regex or literal split */
	RBLN_PRETOK_BYTELEVEL,	/* optional GPT-2 regex split + byte-to-unicode mapping */
	RBLN_PRETOK_METASPACE,	/* ' ' -> replacement, optional prefix and split */
};

enum rbln_prepend_scheme {
	RBLN_PREPEND_ALWAYS,
	RBLN_PREPEND_FIRST,
	RBLN_PREPEND_NEVER,
};

struct rbln_pretok_step {
	enum rbln_pretok_kind kind;
	pcre2_code *re;			/* SPLIT, BYTELEVEL with use_regex */
	enum rbln_split_behavior behavior;
	bool invert;
	bool add_prefix_space;		/* BYTELEVEL */
	char replacement[5];		/* METASPACE, UTF-8 */
	enum rbln_prepend_scheme prepend;	/* METASPACE */
	bool split;			/* METASPACE */
};

/* Decoder steps that act on each token's string. */
enum rbln_dec_kind {
	RBLN_DEC_REPLACE,	/* a -> b */
	RBLN_DEC_BYTE_FALLBACK,	/* "<0xNN>" -> byte NN */
	RBLN_DEC_BYTELEVEL,	/* unicode alphabet -> bytes, then lossy UTF-8 */
	RBLN_DEC_METASPACE,	/* replacement -> ' ' (dropped in the first token) */
	RBLN_DEC_STRIP,		/* strip `start`/`stop` copies of a char */
};

struct rbln_dec_step {
	enum rbln_dec_kind kind;
	char *a, *b;
	size_t alen, blen;
	size_t start, stop;	/* STRIP */
	bool first_drops;	/* METASPACE: prepend scheme not "never" */
};

struct rbln_template_item {
	bool is_sequence;	/* $A; otherwise the special token ids below */
	int32_t *ids;
	size_t n_ids;
};

struct rbln_tokenizer {
	char *name;
	/* Vocabulary: id -> string (holes are NULL) and string -> id. */
	char **vocab;
	uint32_t *vocab_len;
	size_t vocab_size;		/* model ids: 0 .. vocab_size-1 */
	size_t n_ids;			/* including added tokens */
	struct rbln_strmap token_to_id;

	/* BPE model. */
	struct rbln_u64map merges;	/* (left << 32 | right) -> (rank << 32 | result) */
	int32_t unk_id;			/* -1: none */
	bool byte_fallback;
	bool fuse_unk;
	bool ignore_merges;
	int32_t byte_token[256];	/* "<0xNN>" ids for byte fallback, -1 absent */

	struct rbln_norm_step *norm;
	size_t n_norm;
	struct rbln_pretok_step *pretok;
	size_t n_pretok;

	struct rbln_added_tokens added;

	struct rbln_template_item *single;	/* post-processor template; NULL: none */
	size_t n_single;

	struct rbln_dec_step *dec;		/* per-token steps, in order */
	size_t n_dec;
	bool dec_join_space;			/* no decoder: tokens joined by ' ' */
	bool dec_lossy;				/* a BYTELEVEL step produces raw bytes */
	struct rbln_dec_step whole_strip;	/* STRIP after Fuse/ByteLevel; alen 0: none */
	struct {
		bool fused;		/* Fuse or ByteLevel seen: later steps see one string */
		bool byte_fallback;
	} dec_load;				/* only while loading the decoder */

	bool clean_up_spaces;
};

/* tokenizer.json sections, parsed into tok (tokenizer_load_*.c). */
int rbln_tok_load_model(struct rbln_tokenizer *tok, json_object *model, struct rbln_error *err);
int rbln_tok_load_normalizer(struct rbln_tokenizer *tok, json_object *n, struct rbln_error *err);
int rbln_tok_load_pretokenizer(struct rbln_tokenizer *tok, json_object *p, struct rbln_error *err);
int rbln_tok_load_post_processor(struct rbln_tokenizer *tok, json_object *p,
				 struct rbln_error *err);
int rbln_tok_load_decoder(struct rbln_tokenizer *tok, json_object *d, struct rbln_error *err);

/*
 * How long the text of n input bytes may grow through the normalizers and
 * pre-tokenizers: real ones at most triple it (" " -> "\u2581", ByteLevel's
 * two-byte characters); chained Replace steps of a hostile tokenizer.json
 * would grow it without bound.  Past it encoding fails with -E2BIG.
 */
#define RBLN_TOK_GROWTH 16
#define RBLN_TOK_GROWTH_SLACK 4096
size_t rbln_tok_growth_limit(size_t n);

/* Applies the normalizer chain to one piece of text (-E2BIG past `limit` bytes). */
int rbln_tok_normalize(const struct rbln_tokenizer *tok, const char *s, size_t n,
		       size_t limit, struct rbln_strbuf *out);

/*
 * Pre-tokenizes one normalized piece and runs BPE on every word; -E2BIG when
 * a pre-tokenizer's output passes `limit` bytes, -ERANGE when the regex
 * cannot finish matching.
 */
int rbln_tok_pretokenize_and_bpe(const struct rbln_tokenizer *tok, const char *s, size_t n,
				 bool at_start, size_t limit, struct rbln_ids *ids);

/* BPE of one word (already in the model's alphabet). */
int rbln_bpe_word(const struct rbln_tokenizer *tok, const char *w, size_t n,
		  struct rbln_ids *ids);

/* Compiles a regex the way tokenizers' Oniguruma runs it (UTF, Unicode classes). */
pcre2_code *rbln_tok_compile_regex(const char *pattern, size_t len, const char *where,
				   const char *name, struct rbln_error *err);

#endif
