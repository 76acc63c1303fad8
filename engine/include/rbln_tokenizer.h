/* SPDX-License-Identifier: MIT */
/*
 * Tokenizer from a Hugging Face tokenizer.json, reproducing the `tokenizers`
 * library for the BPE models Llama checkpoints ship: byte-level BPE with a
 * regex pre-tokenizer (Llama 3) and SentencePiece-style BPE with byte
 * fallback (Llama 2).  Added/special tokens are matched before BPE, the
 * post-processor template adds BOS, and decoding follows the decoder chain.
 */
#ifndef RBLN_TOKENIZER_H
#define RBLN_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_error.h"

struct rbln_tokenizer;

struct rbln_ids {
	int32_t *ids;
	size_t len;
	size_t cap;
};

int rbln_ids_push(struct rbln_ids *ids, int32_t id);
void rbln_ids_free(struct rbln_ids *ids);

struct rbln_tokenizer_options {
	/* transformers' clean_up_tokenization_spaces (from tokenizer_config.json). */
	bool clean_up_tokenization_spaces;
};

/* Reads DIR/tokenizer.json and, if present, DIR/tokenizer_config.json. */
int rbln_tokenizer_load(const char *model_dir, struct rbln_tokenizer **out,
			struct rbln_error *err);
/* Builds a tokenizer from tokenizer.json text; `name` appears in errors. */
int rbln_tokenizer_load_json(const char *text, size_t len, const char *name,
			     const struct rbln_tokenizer_options *opt, struct rbln_tokenizer **out,
			     struct rbln_error *err);
void rbln_tokenizer_free(struct rbln_tokenizer *tok);

/* Number of ids (largest id + 1, over the model vocabulary and added tokens). */
size_t rbln_tokenizer_vocab_size(const struct rbln_tokenizer *tok);
/* The token's string (added tokens included), or NULL for an unused id. */
const char *rbln_tokenizer_id_to_token(const struct rbln_tokenizer *tok, int32_t id,
				       size_t *len);
/* -1 when the string is neither a vocabulary entry nor an added token. */
int32_t rbln_tokenizer_token_to_id(const struct rbln_tokenizer *tok, const char *token,
				   size_t len);
bool rbln_tokenizer_is_special(const struct rbln_tokenizer *tok, int32_t id);

#define RBLN_ENCODE_ADD_SPECIAL 1u	/* apply the post-processor (BOS for Llama) */

/* Appends the ids of text (valid UTF-8, else an error) to ids. */
int rbln_tokenizer_encode(const struct rbln_tokenizer *tok, const char *text, size_t len,
			  unsigned flags, struct rbln_ids *ids, struct rbln_error *err);

#define RBLN_DECODE_SKIP_SPECIAL 1u	/* drop special tokens */
#define RBLN_DECODE_NO_CLEANUP 2u	/* ignore clean_up_tokenization_spaces */

/* Decodes exactly as tokenizers + transformers' decode(); *text is malloc'd. */
int rbln_tokenizer_decode(const struct rbln_tokenizer *tok, const int32_t *ids, size_t n,
			  unsigned flags, char **text, size_t *len, struct rbln_error *err);

/*
 * Incremental decoding for streaming: push ids one at a time and get back
 * only text that is final (complete UTF-8 characters that later tokens
 * cannot change).  The concatenation of all pieces plus finish() equals
 * rbln_tokenizer_decode() of the same ids, except that a byte-fallback run
 * containing invalid UTF-8 yields its valid characters as they arrive
 * (decode() would replace the whole run).
 */
struct rbln_detokenizer;

struct rbln_detokenizer *rbln_detokenizer_new(const struct rbln_tokenizer *tok, unsigned flags);
/* *text stays valid until the next call on d. */
int rbln_detokenizer_push(struct rbln_detokenizer *d, int32_t id, const char **text,
			  size_t *len, struct rbln_error *err);
int rbln_detokenizer_finish(struct rbln_detokenizer *d, const char **text, size_t *len,
			    struct rbln_error *err);
void rbln_detokenizer_free(struct rbln_detokenizer *d);

#endif
