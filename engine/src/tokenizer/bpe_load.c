// SPDX-License-Identifier: MIT
/*
 * tokenizer.json "model" of type BPE: vocabulary, merges (as "a b" strings
 * or [a, b] pairs) and the flags that change how words are split.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer/tokenizer_internal.h"
#include "util/json.h"

/* Generous bound on ids; keeps a hostile file from sizing huge tables. */
#define MAX_VOCAB_ID (1 << 24)

static int load_vocab(struct rbln_tokenizer *tok, json_object *vocab, struct rbln_error *err)
{
	size_t max_id = 0;

	json_object_object_foreach(vocab, key, val) {
		int64_t id;

		if (!json_object_is_type(val, json_type_int) || (id = json_object_get_int64(val)) < 0 ||
		    id >= MAX_VOCAB_ID)
			return rbln_error_set(err, -EINVAL,
					      "%s: model.vocab['%.64s'] must be an id in [0, %d), got %s",
					      tok->name, key, MAX_VOCAB_ID, json_object_to_json_string(val));
		if ((size_t)id + 1 > max_id)
			max_id = (size_t)id + 1;
	}
	tok->vocab_size = max_id;
	tok->vocab = calloc(max_id ? max_id : 1, sizeof(*tok->vocab));
	tok->vocab_len = calloc(max_id ? max_id : 1, sizeof(*tok->vocab_len));
	if (!tok->vocab || !tok->vocab_len)
		return rbln_error_set(err, -ENOMEM, "%s: out of memory", tok->name);
	json_object_object_foreach(vocab, k2, v2) {
		int32_t id = (int32_t)json_object_get_int64(v2);
		size_t len = strlen(k2);

		if (tok->vocab[id])
			return rbln_error_set(err, -EINVAL,
					      "%s: model.vocab gives id %d to both '%.64s' and '%.64s'",
					      tok->name, id, tok->vocab[id], k2);
		tok->vocab[id] = strdup(k2);
		tok->vocab_len[id] = (uint32_t)len;
		if (!tok->vocab[id] ||
		    rbln_strmap_put(&tok->token_to_id, tok->vocab[id], len, id, NULL))
			return rbln_error_set(err, -ENOMEM, "%s: out of memory", tok->name);
	}
	return 0;
}

static int merge_part_id(const struct rbln_tokenizer *tok, size_t rank, const char *s, size_t n,
			 int32_t *id, struct rbln_error *err)
{
	*id = rbln_strmap_get(&tok->token_to_id, s, n);
	if (*id < 0)
		return rbln_error_set(err, -EINVAL,
				      "%s: model.merges[%zu]: token '%.*s' is not in the vocabulary",
				      tok->name, rank, (int)(n > 64 ? 64 : n), s);
	return 0;
}

/* Splits one merges entry into its two halves. */
static int merge_parts(const struct rbln_tokenizer *tok, size_t rank, json_object *e,
		       const char **a, size_t *alen, const char **b, size_t *blen,
		       struct rbln_error *err)
{
	if (json_object_is_type(e, json_type_string)) {
		const char *s = json_object_get_string(e);
		size_t n = (size_t)json_object_get_string_len(e);
		const char *sp = memchr(s, ' ', n);

		/* Like tokenizers: exactly one space separates the halves. */
		if (!sp || memchr(sp + 1, ' ', n - (size_t)(sp + 1 - s)))
			return rbln_error_set(err, -EINVAL,
					      "%s: model.merges[%zu]: \"%.64s\" is not two tokens separated by one space",
					      tok->name, rank, s);
		*a = s;
		*alen = (size_t)(sp - s);
		*b = sp + 1;
		*blen = n - *alen - 1;
		return 0;
	}
	if (json_object_is_type(e, json_type_array) && json_object_array_length(e) == 2 &&
	    json_object_is_type(json_object_array_get_idx(e, 0), json_type_string) &&
	    json_object_is_type(json_object_array_get_idx(e, 1), json_type_string)) {
		json_object *x = json_object_array_get_idx(e, 0), *y = json_object_array_get_idx(e, 1);

		*a = json_object_get_string(x);
		*alen = (size_t)json_object_get_string_len(x);
		*b = json_object_get_string(y);
		*blen = (size_t)json_object_get_string_len(y);
		return 0;
	}
	return rbln_error_set(err, -EINVAL,
			      "%s: model.merges[%zu] must be \"a b\" or [\"a\", \"b\"], got %s",
			      tok->name, rank, json_object_to_json_string(e));
}

static int load_merges(struct rbln_tokenizer *tok, json_object *merges, struct rbln_error *err)
{
	size_t i, n = json_object_array_length(merges);
	char *joined = NULL;
	size_t cap = 0;
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		const char *a = NULL, *b = NULL;
		size_t alen = 0, blen = 0;
		int32_t ia, ib, ij;

		rc = merge_parts(tok, i, json_object_array_get_idx(merges, i), &a, &alen, &b, &blen,
				 err);
		if (!rc)
			rc = merge_part_id(tok, i, a, alen, &ia, err);
		if (!rc)
			rc = merge_part_id(tok, i, b, blen, &ib, err);
		if (rc)
			break;
		if (alen + blen > cap) {
			char *p = realloc(joined, alen + blen);

			if (!p) {
				rc = rbln_error_set(err, -ENOMEM, "%s: out of memory", tok->name);
				break;
			}
			joined = p;
			cap = alen + blen;
		}
		memcpy(joined, a, alen);
		memcpy(joined + alen, b, blen);
		rc = merge_part_id(tok, i, joined, alen + blen, &ij, err);
		/* A later duplicate overrides the rank, as in tokenizers' HashMap. */
		if (!rc && rbln_u64map_put(&tok->merges, ((uint64_t)ia << 32) | (uint32_t)ib,
					   ((uint64_t)i << 32) | (uint32_t)ij))
			rc = rbln_error_set(err, -ENOMEM, "%s: out of memory", tok->name);
	}
	free(joined);
	return rc;
}

static int check_unsupported(const struct rbln_json_scope *s, json_object *model)
{
	static const char *const string_fields[] = { "continuing_subword_prefix",
						      "end_of_word_suffix" };
	const char *str;
	double dropout = 0.0;
	size_t i;
	int rc;

	for (i = 0; i < 2; i++) {
		rc = rbln_json_get_string(s, model, string_fields[i], false, &str, NULL);
		if (rc < 0)
			return rc;
		if (rc > 0 && *str)
			return rbln_json_field_error(s, string_fields[i], -ENOTSUP,
						     "(\"%.32s\") is not supported", str);
	}
	rc = rbln_json_get_double(s, model, "dropout", false, 0.0, 1.0, &dropout);
	if (rc < 0)
		return rc;
	/* Dropout randomizes merges; it is a training-time feature. */
	if (dropout > 0.0)
		return rbln_json_field_error(s, "dropout", -ENOTSUP, "(%g) is not supported", dropout);
	return 0;
}

int rbln_tok_load_model(struct rbln_tokenizer *tok, json_object *model, struct rbln_error *err)
{
	struct rbln_json_scope s = { tok->name, "model.", err };
	json_object *vocab, *merges;
	const char *type, *unk;
	char name[8];
	int rc, b;

	rc = rbln_json_get_string(&s, model, "type", false, &type, NULL);
	if (rc < 0)
		return rc;
	/* Files from old tokenizers versions omit the type of a BPE model. */
	if (rc > 0 && strcmp(type, "BPE") != 0)
		return rbln_json_field_error(&s, "type", -ENOTSUP,
					     "is \"%.32s\"; only BPE models are supported", type);
	if ((rc = check_unsupported(&s, model)) ||
	    (rc = rbln_json_get_typed(&s, model, "vocab", true, json_type_object, &vocab)) < 0 ||
	    (rc = rbln_json_get_typed(&s, model, "merges", true, json_type_array, &merges)) < 0 ||
	    (rc = rbln_json_get_bool(&s, model, "byte_fallback", false, &tok->byte_fallback)) < 0 ||
	    (rc = rbln_json_get_bool(&s, model, "fuse_unk", false, &tok->fuse_unk)) < 0 ||
	    (rc = rbln_json_get_bool(&s, model, "ignore_merges", false, &tok->ignore_merges)) < 0)
		return rc;
	rc = load_vocab(tok, vocab, err);
	if (!rc)
		rc = load_merges(tok, merges, err);
	if (rc)
		return rc;
	tok->unk_id = -1;
	rc = rbln_json_get_string(&s, model, "unk_token", false, &unk, NULL);
	if (rc < 0)
		return rc;
	if (rc > 0) {
		tok->unk_id = rbln_strmap_get(&tok->token_to_id, unk, strlen(unk));
		if (tok->unk_id < 0)
			return rbln_json_field_error(&s, "unk_token", -EINVAL,
						     "(\"%.32s\") is not in the vocabulary", unk);
	}
	for (b = 0; b < 256; b++) {
		snprintf(name, sizeof(name), "<0x%02X>", b);
		tok->byte_token[b] = rbln_strmap_get(&tok->token_to_id, name, strlen(name));
	}
	return 0;
}
