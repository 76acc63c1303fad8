// SPDX-License-Identifier: MIT
/*
 * tokenizer.json "normalizer", "pre_tokenizer", "post_processor" and
 * "decoder" sections.  Components the Llama tokenizers use are supported;
 * any other component is refused by name, so a tokenizer is never run with
 * a step silently skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer/tokenizer_internal.h"
#include "util/json.h"
#include "util/utf8.h"

#define MAX_STEPS 32

pcre2_code *rbln_tok_compile_regex(const char *pattern, size_t len, const char *where,
				   const char *name, struct rbln_error *err)
{
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE off;
	pcre2_code *re;
	int e;

	/* Oniguruma (what tokenizers uses) matches \s, \p{L}... on Unicode. */
	re = pcre2_compile((PCRE2_SPTR)pattern, len, PCRE2_UTF | PCRE2_UCP, &e, &off, NULL);
	if (!re) {
		pcre2_get_error_message(e, msg, sizeof(msg));
		rbln_error_set(err, -EINVAL, "%s: %s: regex error at offset %zu: %s", name, where,
			       (size_t)off, (char *)msg);
		return NULL;
	}
	/* The JIT is an optimization only; without it PCRE2 interprets. */
	pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
	return re;
}

static int dup_string(const struct rbln_json_scope *s, json_object *obj, const char *key,
		      bool required, char **out, size_t *len)
{
	const char *str;
	int rc = rbln_json_get_string(s, obj, key, required, &str, len);

	if (rc <= 0)
		return rc;
	*out = malloc(*len + 1);
	if (!*out)
		return rbln_error_set(s->err, -ENOMEM, "out of memory");
	memcpy(*out, str, *len + 1);
	return 1;
}

/* {"String": "x"} patterns only: the Llama tokenizers need no regex here. */
static int string_pattern(const struct rbln_json_scope *s, json_object *obj, char **out,
			  size_t *len)
{
	json_object *pat;
	int rc = rbln_json_get_typed(s, obj, "pattern", true, json_type_object, &pat);
	struct rbln_json_scope ps = { s->file, "pattern.", s->err };

	if (rc < 0)
		return rc;
	if (json_object_object_get_ex(pat, "Regex", NULL))
		return rbln_json_field_error(s, "pattern", -ENOTSUP,
					     "is a Regex; only String patterns are supported here");
	rc = dup_string(&ps, pat, "String", true, out, len);
	if (rc >= 0 && *len == 0)
		return rbln_json_field_error(s, "pattern", -EINVAL, "must not be empty");
	return rc < 0 ? rc : 0;
}

static int component_type(const struct rbln_json_scope *s, json_object *obj, const char **type)
{
	if (!json_object_is_type(obj, json_type_object))
		return rbln_error_set(s->err, -EINVAL, "%s: %s must be an object, got %s", s->file,
				      s->prefix, rbln_json_type_name(obj));
	return rbln_json_get_string(s, obj, "type", true, type, NULL);
}

/* Calls fn on every element of a Sequence component, or on obj itself. */
typedef int (*component_fn)(struct rbln_tokenizer *tok, const struct rbln_json_scope *s,
			    json_object *obj, const char *type);

static int for_each_component(struct rbln_tokenizer *tok, const struct rbln_json_scope *s,
			      json_object *obj, const char *list_key, component_fn fn)
{
	const char *type;
	json_object *list;
	size_t i, n;
	int rc = component_type(s, obj, &type);

	if (rc < 0)
		return rc;
	if (strcmp(type, "Sequence") != 0)
		return fn(tok, s, obj, type);
	rc = rbln_json_get_typed(s, obj, list_key, true, json_type_array, &list);
	if (rc < 0)
		return rc;
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		char prefix[96];
		struct rbln_json_scope es = { s->file, prefix, s->err };

		snprintf(prefix, sizeof(prefix), "%s%s[%zu].", s->prefix, list_key, i);
		rc = for_each_component(tok, &es, json_object_array_get_idx(list, i), list_key, fn);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int unsupported(const struct rbln_json_scope *s, const char *what, const char *type)
{
	return rbln_json_field_error(s, "type", -ENOTSUP, "is \"%.40s\": this %s is not supported",
				     type, what);
}

/* ---- normalizer ---- */

static int add_norm(struct rbln_tokenizer *tok, const struct rbln_json_scope *s,
		    json_object *obj, const char *type)
{
	struct rbln_norm_step *st;
	int rc;

	if (tok->n_norm == MAX_STEPS)
		return rbln_error_set(s->err, -EINVAL, "%s: too many normalizers", s->file);
	st = &tok->norm[tok->n_norm];
	if (strcmp(type, "Prepend") == 0) {
		st->kind = RBLN_NORM_PREPEND;
		rc = dup_string(s, obj, "prepend", true, &st->a, &st->alen);
	} else if (strcmp(type, "Replace") == 0) {
		st->kind = RBLN_NORM_REPLACE;
		rc = string_pattern(s, obj, &st->a, &st->alen);
		if (rc >= 0)
			rc = dup_string(s, obj, "content", true, &st->b, &st->blen);
	} else {
		return unsupported(s, "normalizer", type);
	}
	tok->n_norm++;
	return rc < 0 ? rc : 0;
}

int rbln_tok_load_normalizer(struct rbln_tokenizer *tok, json_object *n, struct rbln_error *err)
{
	struct rbln_json_scope s = { tok->name, "normalizer.", err };

	if (!n || json_object_is_type(n, json_type_null))
		return 0;
	tok->norm = calloc(MAX_STEPS, sizeof(*tok->norm));
	if (!tok->norm)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	return for_each_component(tok, &s, n, "normalizers", add_norm);
}

/* ---- pre-tokenizer ---- */

/* The GPT-2 pattern ByteLevel uses when use_regex is true. */
static const char gpt2_pattern[] =
	"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static int parse_behavior(const struct rbln_json_scope *s, json_object *obj,
			  enum rbln_split_behavior *out)
{
	static const struct { const char *name; enum rbln_split_behavior b; } names[] = {
		{ "Removed", RBLN_SPLIT_REMOVED },
		{ "Isolated", RBLN_SPLIT_ISOLATED },
		{ "MergedWithPrevious", RBLN_SPLIT_MERGED_WITH_PREVIOUS },
		{ "MergedWithNext", RBLN_SPLIT_MERGED_WITH_NEXT },
		{ "Contiguous", RBLN_SPLIT_CONTIGUOUS },
	};
	const char *b;
	size_t i;
	int rc = rbln_json_get_string(s, obj, "behavior", true, &b, NULL);

	if (rc < 0)
		return rc;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(b, names[i].name) == 0) {
			*out = names[i].b;
			return 0;
		}
	}
	return rbln_json_field_error(s, "behavior", -EINVAL, "(\"%.32s\") is not a split behavior",
				     b);
}

static int load_split(struct rbln_tokenizer *tok, const struct rbln_json_scope *s,
		      json_object *obj, struct rbln_pretok_step *st)
{
	struct rbln_json_scope ps = { s->file, "pattern.", s->err };
	char where[160];
	json_object *pat;
	const char *str;
	size_t len;
	int rc;

	st->kind = RBLN_PRETOK_SPLIT;
	if ((rc = rbln_json_get_typed(s, obj, "pattern", true, json_type_object, &pat)) < 0 ||
	    (rc = parse_behavior(s, obj, &st->behavior)) < 0 ||
	    (rc = rbln_json_get_bool(s, obj, "invert", false, &st->invert)) < 0)
		return rc;
	snprintf(where, sizeof(where), "%spattern", s->prefix);
	if (json_object_object_get_ex(pat, "Regex", NULL)) {
		rc = rbln_json_get_string(&ps, pat, "Regex", true, &str, &len);
		if (rc < 0)
			return rc;
		st->re = rbln_tok_compile_regex(str, len, where, tok->name, s->err);
	} else {
		PCRE2_SIZE off;
		int e;

		rc = rbln_json_get_string(&ps, pat, "String", true, &str, &len);
		if (rc < 0)
			return rc;
		st->re = pcre2_compile((PCRE2_SPTR)str, len, PCRE2_LITERAL | PCRE2_UTF, &e, &off,
				       NULL);
		if (!st->re)
			rbln_error_set(s->err, -EINVAL, "%s: %s: invalid literal pattern", tok->name,
				       where);
	}
	return st->re ? 0 : -EINVAL;
}

static int load_metaspace_common(const struct rbln_json_scope *s, json_object *obj,
				 char repl[5], enum rbln_prepend_scheme *scheme)
{
	const char *str;
	size_t len, adv;
	bool add_prefix = true;
	int rc;

	rc = rbln_json_get_string(s, obj, "replacement", true, &str, &len);
	if (rc < 0)
		return rc;
	if (len == 0 || len > 4 || rbln_utf8_next(str, len, &adv, NULL) != RBLN_UTF8_OK ||
	    adv != len)
		return rbln_json_field_error(s, "replacement", -EINVAL, "must be one character");
	memcpy(repl, str, len);
	repl[len] = '\0';
	*scheme = RBLN_PREPEND_ALWAYS;
	rc = rbln_json_get_string(s, obj, "prepend_scheme", false, &str, NULL);
	if (rc < 0)
		return rc;
	if (rc > 0) {
		if (strcmp(str, "always") == 0)
			*scheme = RBLN_PREPEND_ALWAYS;
		else if (strcmp(str, "first") == 0)
			*scheme = RBLN_PREPEND_FIRST;
		else if (strcmp(str, "never") == 0)
			*scheme = RBLN_PREPEND_NEVER;
		else
			return rbln_json_field_error(s, "prepend_scheme", -EINVAL,
						     "(\"%.32s\") must be always, first or never", str);
		return 0;
	}
	/* Older files: add_prefix_space instead of prepend_scheme. */
	rc = rbln_json_get_bool(s, obj, "add_prefix_space", false, &add_prefix);
	if (rc < 0)
		return rc;
	*scheme = add_prefix ? RBLN_PREPEND_ALWAYS : RBLN_PREPEND_NEVER;
	return 0;
}

static int add_pretok(struct rbln_tokenizer *tok, const struct rbln_json_scope *s,
		      json_object *obj, const char *type)
{
	struct rbln_pretok_step *st;
	bool use_regex = true;
	int rc;

	if (tok->n_pretok == MAX_STEPS)
		return rbln_error_set(s->err, -EINVAL, "%s: too many pre-tokenizers", s->file);
	st = &tok->pretok[tok->n_pretok];
	if (strcmp(type, "Split") == 0) {
		rc = load_split(tok, s, obj, st);
	} else if (strcmp(type, "ByteLevel") == 0) {
		st->kind = RBLN_PRETOK_BYTELEVEL;
		if ((rc = rbln_json_get_bool(s, obj, "add_prefix_space", false,
					     &st->add_prefix_space)) >= 0 &&
		    (rc = rbln_json_get_bool(s, obj, "use_regex", false, &use_regex)) >= 0 &&
		    use_regex) {
			st->behavior = RBLN_SPLIT_ISOLATED;
			st->re = rbln_tok_compile_regex(gpt2_pattern, sizeof(gpt2_pattern) - 1,
							"ByteLevel regex", tok->name, s->err);
			rc = st->re ? 0 : -EINVAL;
		}
	} else if (strcmp(type, "Metaspace") == 0) {
		st->kind = RBLN_PRETOK_METASPACE;
		st->split = true;
		rc = load_metaspace_common(s, obj, st->replacement, &st->prepend);
		if (rc >= 0)
			rc = rbln_json_get_bool(s, obj, "split", false, &st->split);
	} else {
		return unsupported(s, "pre-tokenizer", type);
	}
	tok->n_pretok++;
	return rc < 0 ? rc : 0;
}

int rbln_tok_load_pretokenizer(struct rbln_tokenizer *tok, json_object *p, struct rbln_error *err)
{
	struct rbln_json_scope s = { tok->name, "pre_tokenizer.", err };

	if (!p || json_object_is_type(p, json_type_null))
		return 0;
	tok->pretok = calloc(MAX_STEPS, sizeof(*tok->pretok));
	if (!tok->pretok)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	return for_each_component(tok, &s, p, "pretokenizers", add_pretok);
}

/* ---- post-processor ---- */

static int template_special(struct rbln_tokenizer *tok, const struct rbln_json_scope *s,
			    json_object *specials, json_object *item, struct rbln_template_item *out)
{
	struct rbln_json_scope is = { s->file, "SpecialToken.", s->err };
	json_object *entry, *ids;
	const char *name;
	size_t i, n;
	int rc = rbln_json_get_string(&is, item, "id", true, &name, NULL);

	if (rc < 0)
		return rc;
	if (!specials || !json_object_object_get_ex(specials, name, &entry) ||
	    !json_object_object_get_ex(entry, "ids", &ids) ||
	    !json_object_is_type(ids, json_type_array))
		return rbln_error_set(s->err, -EINVAL,
				      "%s: post_processor uses special token '%.64s' without special_tokens[...].ids",
				      s->file, name);
	n = json_object_array_length(ids);
	out->ids = calloc(n ? n : 1, sizeof(*out->ids));
	if (!out->ids)
		return rbln_error_set(s->err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(ids, i);
		int64_t id = json_object_get_int64(v);

		if (!json_object_is_type(v, json_type_int) || id < 0 ||
		    (size_t)id >= tok->n_ids)
			return rbln_error_set(s->err, -EINVAL,
					      "%s: post_processor special token '%.64s' has invalid id %s",
					      s->file, name, json_object_to_json_string(v));
		out->ids[i] = (int32_t)id;
	}
	out->n_ids = n;
	return 0;
}

static int load_template(struct rbln_tokenizer *tok, const struct rbln_json_scope *s,
			 json_object *obj)
{
	json_object *single, *specials = NULL;
	size_t i, n;
	int rc;

	if (tok->single)
		return rbln_error_set(s->err, -ENOTSUP, "%s: more than one TemplateProcessing",
				      s->file);
	if ((rc = rbln_json_get_typed(s, obj, "single", true, json_type_array, &single)) < 0 ||
	    (rc = rbln_json_get_typed(s, obj, "special_tokens", false, json_type_object,
				      &specials)) < 0)
		return rc;
	n = json_object_array_length(single);
	tok->single = calloc(n ? n : 1, sizeof(*tok->single));
	if (!tok->single)
		return rbln_error_set(s->err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(single, i), *v;

		tok->n_single = i + 1;
		if (json_object_is_type(e, json_type_object) &&
		    json_object_object_get_ex(e, "Sequence", &v)) {
			tok->single[i].is_sequence = true;
			continue;
		}
		if (!json_object_is_type(e, json_type_object) ||
		    !json_object_object_get_ex(e, "SpecialToken", &v))
			return rbln_error_set(s->err, -EINVAL,
					      "%s: post_processor single[%zu] must be a Sequence or SpecialToken",
					      s->file, i);
		rc = template_special(tok, s, specials, v, &tok->single[i]);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int add_processor(struct rbln_tokenizer *tok, const struct rbln_json_scope *s,
			 json_object *obj, const char *type)
{
	/* ByteLevel only adjusts offsets, which the engine does not use. */
	if (strcmp(type, "ByteLevel") == 0)
		return 0;
	if (strcmp(type, "TemplateProcessing") == 0)
		return load_template(tok, s, obj);
	return unsupported(s, "post-processor", type);
}

int rbln_tok_load_post_processor(struct rbln_tokenizer *tok, json_object *p,
				 struct rbln_error *err)
{
	struct rbln_json_scope s = { tok->name, "post_processor.", err };

	if (!p || json_object_is_type(p, json_type_null))
		return 0;
	return for_each_component(tok, &s, p, "processors", add_processor);
}

/* ---- decoder ---- */

static int add_strip(struct rbln_tokenizer *tok, const struct rbln_json_scope *s,
		     json_object *obj, struct rbln_dec_step *st)
{
	int64_t start = 0, stop = 0;
	size_t adv;
	int rc;

	st->kind = RBLN_DEC_STRIP;
	if ((rc = dup_string(s, obj, "content", true, &st->a, &st->alen)) < 0 ||
	    (rc = rbln_json_get_int(s, obj, "start", false, 0, 1 << 20, &start)) < 0 ||
	    (rc = rbln_json_get_int(s, obj, "stop", false, 0, 1 << 20, &stop)) < 0)
		return rc;
	if (st->alen == 0 || rbln_utf8_next(st->a, st->alen, &adv, NULL) != RBLN_UTF8_OK ||
	    adv != st->alen)
		return rbln_json_field_error(s, "content", -EINVAL, "must be one character");
	st->start = (size_t)start;
	st->stop = (size_t)stop;
	(void)tok;
	return 0;
}

static int add_decoder(struct rbln_tokenizer *tok, const struct rbln_json_scope *s,
		       json_object *obj, const char *type)
{
	struct rbln_dec_step *st;
	enum rbln_prepend_scheme scheme;
	int rc = 0;

	if (tok->n_dec == MAX_STEPS)
		return rbln_error_set(s->err, -EINVAL, "%s: too many decoders", s->file);
	st = &tok->dec[tok->n_dec];
	if (strcmp(type, "Fuse") == 0) {
		tok->dec_load.fused = true;
		return 0;
	}
	if (strcmp(type, "Strip") == 0 && tok->dec_load.fused) {
		if (tok->whole_strip.alen)
			return rbln_error_set(s->err, -ENOTSUP, "%s: two Strip decoders after Fuse",
					      s->file);
		return add_strip(tok, s, obj, &tok->whole_strip);
	}
	if (tok->dec_load.fused || tok->dec_load.byte_fallback)
		return rbln_error_set(s->err, -ENOTSUP,
				      "%s: %stype \"%.32s\" after %s is not supported", s->file,
				      s->prefix, type,
				      tok->dec_load.fused ? "Fuse/ByteLevel" : "ByteFallback");
	if (strcmp(type, "Strip") == 0) {
		rc = add_strip(tok, s, obj, st);
	} else if (strcmp(type, "Replace") == 0) {
		st->kind = RBLN_DEC_REPLACE;
		rc = string_pattern(s, obj, &st->a, &st->alen);
		if (rc >= 0)
			rc = dup_string(s, obj, "content", true, &st->b, &st->blen);
	} else if (strcmp(type, "ByteFallback") == 0) {
		st->kind = RBLN_DEC_BYTE_FALLBACK;
		tok->dec_load.byte_fallback = true;
	} else if (strcmp(type, "ByteLevel") == 0) {
		st->kind = RBLN_DEC_BYTELEVEL;
		tok->dec_lossy = true;
		tok->dec_load.fused = true;
	} else if (strcmp(type, "Metaspace") == 0) {
		st->kind = RBLN_DEC_METASPACE;
		st->a = malloc(5);
		if (!st->a)
			return rbln_error_set(s->err, -ENOMEM, "out of memory");
		rc = load_metaspace_common(s, obj, st->a, &scheme);
		st->alen = strlen(st->a);
		st->first_drops = scheme != RBLN_PREPEND_NEVER;
	} else {
		return unsupported(s, "decoder", type);
	}
	tok->n_dec++;
	return rc < 0 ? rc : 0;
}

int rbln_tok_load_decoder(struct rbln_tokenizer *tok, json_object *d, struct rbln_error *err)
{
	struct rbln_json_scope s = { tok->name, "decoder.", err };

	if (!d || json_object_is_type(d, json_type_null)) {
		tok->dec_join_space = true;	/* tokenizers joins with spaces then */
		return 0;
	}
	tok->dec = calloc(MAX_STEPS, sizeof(*tok->dec));
	if (!tok->dec)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	return for_each_component(tok, &s, d, "decoders", add_decoder);
}
