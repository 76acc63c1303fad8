// SPDX-License-Identifier: MIT
/* Loading tokenizer.json (and the transformers flags in tokenizer_config.json). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer/tokenizer_internal.h"
#include "util/file.h"
#include "util/json.h"

static int parse_added_token(struct rbln_tokenizer *tok, json_object *e, size_t i,
			     struct rbln_added_token *t, struct rbln_error *err)
{
	char prefix[48];
	struct rbln_json_scope s = { tok->name, prefix, err };
	const char *content;
	int64_t id;
	int rc;

	snprintf(prefix, sizeof(prefix), "added_tokens[%zu].", i);
	if (!json_object_is_type(e, json_type_object))
		return rbln_error_set(err, -EINVAL, "%s: added_tokens[%zu] must be an object",
				      tok->name, i);
	t->normalized = true;	/* tokenizers' AddedToken defaults */
	if ((rc = rbln_json_get_int(&s, e, "id", true, 0, (1 << 24) - 1, &id)) < 0 ||
	    (rc = rbln_json_get_string(&s, e, "content", true, &content, &t->len)) < 0 ||
	    (rc = rbln_json_get_bool(&s, e, "special", false, &t->special)) < 0 ||
	    (rc = rbln_json_get_bool(&s, e, "normalized", false, &t->normalized)) < 0 ||
	    (rc = rbln_json_get_bool(&s, e, "lstrip", false, &t->lstrip)) < 0 ||
	    (rc = rbln_json_get_bool(&s, e, "rstrip", false, &t->rstrip)) < 0 ||
	    (rc = rbln_json_get_bool(&s, e, "single_word", false, &t->single_word)) < 0)
		return rc;
	if (t->len == 0)
		return rbln_json_field_error(&s, "content", -EINVAL, "must not be empty");
	t->id = (int32_t)id;
	t->content = malloc(t->len + 1);
	if (!t->content)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	memcpy(t->content, content, t->len + 1);
	return 0;
}

/* Registers token i in the lookup tables and the matching trie. */
static int index_added_token(struct rbln_tokenizer *tok, size_t i, struct rbln_error *err)
{
	struct rbln_added_tokens *a = &tok->added;
	struct rbln_added_token *t = &a->tokens[i];
	struct rbln_strbuf norm = { 0 };
	int32_t old = rbln_strmap_get(&a->by_content, t->content, t->len);
	uint64_t dummy;
	int rc;

	if (old >= 0 || rbln_u64map_get(&a->by_id, (uint64_t)t->id, &dummy))
		return rbln_error_set(err, -EINVAL,
				      "%s: added_tokens[%zu] ('%.64s', id %d) repeats an earlier token's %s",
				      tok->name, i, t->content, t->id, old >= 0 ? "content" : "id");
	if (rbln_strmap_put(&a->by_content, t->content, t->len, t->id, NULL) ||
	    rbln_u64map_put(&a->by_id, (uint64_t)t->id, i))
		return rbln_error_set(err, -ENOMEM, "out of memory");
	if (!t->normalized)
		return rbln_trie_add(&a->raw, t->content, t->len, (int32_t)i) ?
			       rbln_error_set(err, -ENOMEM, "out of memory") : 0;
	/* Normalized tokens match their normalized form (as tokenizers does). */
	rc = rbln_tok_normalize(tok, t->content, t->len, rbln_tok_growth_limit(t->len), &norm);
	if (!rc)
		rc = rbln_trie_add(&a->norm, norm.data ? norm.data : "", norm.len, (int32_t)i);
	if (!rc)
		a->norm_forms[a->n_norm_forms++] = rbln_strbuf_steal(&norm, NULL);
	rbln_strbuf_free(&norm);
	if (rc == -E2BIG)
		return rbln_error_set(err, rc, "%s: added_tokens[%zu] grows more than %d-fold "
				      "through the normalizer", tok->name, i, RBLN_TOK_GROWTH);
	return rc ? rbln_error_set(err, -ENOMEM, "out of memory") : 0;
}

static int load_added_tokens(struct rbln_tokenizer *tok, json_object *list,
			     struct rbln_error *err)
{
	struct rbln_added_tokens *a = &tok->added;
	bool single_word = false;
	size_t i, n;
	int rc;

	if (!list || json_object_is_type(list, json_type_null))
		return 0;
	if (!json_object_is_type(list, json_type_array))
		return rbln_error_set(err, -EINVAL, "%s: added_tokens must be an array", tok->name);
	n = json_object_array_length(list);
	a->tokens = calloc(n ? n : 1, sizeof(*a->tokens));
	a->norm_forms = calloc(n ? n : 1, sizeof(*a->norm_forms));
	if (!a->tokens || !a->norm_forms)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		rc = parse_added_token(tok, json_object_array_get_idx(list, i), i, &a->tokens[i], err);
		a->n = i + 1;
		if (!rc)
			rc = index_added_token(tok, i, err);
		if (rc)
			return rc;
		if ((size_t)a->tokens[i].id + 1 > tok->n_ids)
			tok->n_ids = (size_t)a->tokens[i].id + 1;
		single_word |= a->tokens[i].single_word;
	}
	if (single_word && rbln_added_compile_word_classes(a))
		return rbln_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

static int load_sections(struct rbln_tokenizer *tok, json_object *root, struct rbln_error *err)
{
	struct rbln_json_scope s = { tok->name, "", err };
	json_object *model, *v;
	int rc;

	rc = rbln_json_get_typed(&s, root, "model", true, json_type_object, &model);
	if (rc < 0)
		return rc;
	rc = rbln_tok_load_model(tok, model, err);
	if (rc)
		return rc;
	tok->n_ids = tok->vocab_size;
	json_object_object_get_ex(root, "normalizer", &v);
	if ((rc = rbln_tok_load_normalizer(tok, v, err)))
		return rc;
	v = NULL;
	json_object_object_get_ex(root, "pre_tokenizer", &v);
	if ((rc = rbln_tok_load_pretokenizer(tok, v, err)))
		return rc;
	v = NULL;
	json_object_object_get_ex(root, "added_tokens", &v);
	if ((rc = load_added_tokens(tok, v, err)))
		return rc;
	v = NULL;
	json_object_object_get_ex(root, "post_processor", &v);
	if ((rc = rbln_tok_load_post_processor(tok, v, err)))
		return rc;
	v = NULL;
	json_object_object_get_ex(root, "decoder", &v);
	return rbln_tok_load_decoder(tok, v, err);
}

int rbln_tokenizer_load_json(const char *text, size_t len, const char *name,
			     const struct rbln_tokenizer_options *opt, struct rbln_tokenizer **out,
			     struct rbln_error *err)
{
	struct rbln_tokenizer *tok = calloc(1, sizeof(*tok));
	json_object *root = NULL;
	int rc;

	*out = NULL;
	if (!tok || !(tok->name = strdup(name))) {
		free(tok);
		return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	tok->unk_id = -1;
	if (opt)
		tok->clean_up_spaces = opt->clean_up_tokenization_spaces;
	rc = rbln_json_parse(text, len, name, &root, err);
	if (!rc && !json_object_is_type(root, json_type_object))
		rc = rbln_error_set(err, -EINVAL, "%s: expected a JSON object", name);
	if (!rc)
		rc = load_sections(tok, root, err);
	json_object_put(root);
	if (rc) {
		rbln_tokenizer_free(tok);
		return rc;
	}
	*out = tok;
	return 0;
}

/*
 * transformers (v5, which produced the reference outputs) ignores
 * clean_up_tokenization_spaces for BPE models, because the clean-up was
 * written for WordPiece and deletes real spaces before punctuation; only
 * clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output
 * forces it.  Every model this tokenizer loads is BPE.
 */
static int read_options(const char *dir, struct rbln_tokenizer_options *opt,
			struct rbln_error *err)
{
	char *path = rbln_path_join(dir, "tokenizer_config.json");
	struct rbln_json_scope s = { path, "", err };
	bool clean = false, force_bpe = false;
	json_object *root;
	int rc = 0;

	memset(opt, 0, sizeof(*opt));
	if (!path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	if (rbln_file_exists(path)) {
		rc = rbln_json_load_file(path, &root, err);
		if (!rc) {
			if (!json_object_is_type(root, json_type_object))
				rc = rbln_error_set(err, -EINVAL, "%s: expected a JSON object", path);
			if (!rc)
				rc = rbln_json_get_bool(&s, root, "clean_up_tokenization_spaces", false,
							&clean);
			if (rc >= 0)
				rc = rbln_json_get_bool(&s, root,
							"clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output",
							false, &force_bpe);
			json_object_put(root);
		}
	}
	opt->clean_up_tokenization_spaces = clean && force_bpe;
	free(path);
	return rc < 0 ? rc : 0;
}

int rbln_tokenizer_load(const char *model_dir, struct rbln_tokenizer **out,
			struct rbln_error *err)
{
	struct rbln_tokenizer_options opt;
	char *path, *text = NULL;
	size_t len;
	int rc;

	*out = NULL;
	rc = read_options(model_dir, &opt, err);
	if (rc)
		return rc;
	path = rbln_path_join(model_dir, "tokenizer.json");
	if (!path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rc = rbln_file_read(path, &text, &len, err);
	if (!rc)
		rc = rbln_tokenizer_load_json(text, len, path, &opt, out, err);
	free(text);
	free(path);
	return rc;
}

static void free_strings(struct rbln_tokenizer *tok)
{
	size_t i;

	for (i = 0; i < tok->n_norm; i++) {
		free(tok->norm[i].a);
		free(tok->norm[i].b);
	}
	free(tok->norm);
	for (i = 0; i < tok->n_pretok; i++)
		pcre2_code_free(tok->pretok[i].re);
	free(tok->pretok);
	for (i = 0; i < tok->n_dec; i++) {
		free(tok->dec[i].a);
		free(tok->dec[i].b);
	}
	free(tok->dec);
	free(tok->whole_strip.a);
	for (i = 0; i < tok->n_single; i++)
		free(tok->single[i].ids);
	free(tok->single);
}

void rbln_tokenizer_free(struct rbln_tokenizer *tok)
{
	size_t i;

	if (!tok)
		return;
	for (i = 0; i < tok->vocab_size && tok->vocab; i++)
		free(tok->vocab[i]);
	free(tok->vocab);
	free(tok->vocab_len);
	rbln_strmap_free(&tok->token_to_id);
	rbln_u64map_free(&tok->merges);
	free_strings(tok);
	rbln_added_tokens_free(&tok->added);
	free(tok->name);
	free(tok);
}

size_t rbln_tokenizer_vocab_size(const struct rbln_tokenizer *tok)
{
	return tok->n_ids;
}

const char *rbln_tokenizer_id_to_token(const struct rbln_tokenizer *tok, int32_t id,
				       size_t *len)
{
	const struct rbln_added_token *a = rbln_added_by_id(&tok->added, id);

	if (a) {
		if (len)
			*len = a->len;
		return a->content;
	}
	if (id < 0 || (size_t)id >= tok->vocab_size || !tok->vocab[id])
		return NULL;
	if (len)
		*len = tok->vocab_len[id];
	return tok->vocab[id];
}

int32_t rbln_tokenizer_token_to_id(const struct rbln_tokenizer *tok, const char *token,
				   size_t len)
{
	int32_t id = rbln_strmap_get(&tok->added.by_content, token, len);

	return id >= 0 ? id : rbln_strmap_get(&tok->token_to_id, token, len);
}

bool rbln_tokenizer_is_special(const struct rbln_tokenizer *tok, int32_t id)
{
	const struct rbln_added_token *a = rbln_added_by_id(&tok->added, id);

	return a && a->special;
}

int rbln_ids_push(struct rbln_ids *ids, int32_t id)
{
	if (ids->len == ids->cap) {
		size_t cap = ids->cap ? ids->cap * 2 : 64;
		int32_t *v = realloc(ids->ids, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ids->ids = v;
		ids->cap = cap;
	}
	ids->ids[ids->len++] = id;
	return 0;
}

void rbln_ids_free(struct rbln_ids *ids)
{
	free(ids->ids);
	ids->ids = NULL;
	ids->len = ids->cap = 0;
}
