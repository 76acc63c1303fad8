// SPDX-License-Identifier: MIT
/* Public entry points: compile a template, render it with JSON variables. */
#include <errno.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "jinja/jinja_internal.h"

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#define RENDER_MEMORY_LIMIT ((size_t)256 << 20)
#define RENDER_MAX_STEPS 20000000u	/* evaluation budget of one render */

int rbln_jinja_compile(const char *src, size_t len, const char *name,
		       struct rbln_jinja_template **out, struct rbln_error *err)
{
	struct rbln_jinja_template *t = calloc(1, sizeof(*t));
	struct jtokens toks = { 0 };
	int rc;

	*out = NULL;
	if (!t || !(t->name = strdup(name))) {
		free(t);
		return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	/* Tokens live in the arena too; they die with the template. */
	rc = rbln_jinja_lex(src, len, t->name, &t->arena, &toks, err);
	if (!rc)
		rc = rbln_jinja_parse(&toks, t->name, &t->arena, &t->body, err);
	if (rc) {
		rbln_jinja_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void rbln_jinja_free(struct rbln_jinja_template *t)
{
	if (!t)
		return;
	rbln_jarena_free(&t->arena);
	free(t->name);
	free(t);
}

struct jv rbln_jv_from_json(struct jctx *c, const struct json_object *o)
{
	struct jv v;
	size_t i, n;

	switch (json_object_get_type(o)) {
	case json_type_null:
		return rbln_jv_none();
	case json_type_boolean:
		return rbln_jv_bool(json_object_get_boolean(o));
	case json_type_int:
		return rbln_jv_int(json_object_get_int64(o));
	case json_type_double:
		return rbln_jv_float(json_object_get_double(o));
	case json_type_string:
		return rbln_jv_str(c, json_object_get_string((struct json_object *)o),
			      (size_t)json_object_get_string_len(o));
	case json_type_array:
		n = json_object_array_length(o);
		v = rbln_jv_list(c, n);
		for (i = 0; i < n; i++)
			rbln_jv_list_push(c, &v, rbln_jv_from_json(c, json_object_array_get_idx(o, i)));
		return v;
	case json_type_object:
		v = rbln_jv_dict(c);
		json_object_object_foreach((struct json_object *)o, key, val)
			rbln_jv_dict_set(c, v.u.d, rbln_jv_cstr(c, key), rbln_jv_from_json(c, val));
		return v;
	}
	return rbln_jv_none();
}

static void release(struct jctx *c)
{
	while (c->temps) {
		rbln_strbuf_free(&c->temps->buf);
		c->temps = c->temps->next;
	}
	if (c->nonprint_re)
		pcre2_code_free(c->nonprint_re);
	if (c->utf8_locale)
		freelocale((locale_t)c->utf8_locale);
	rbln_jarena_free(c->arena);
}

int rbln_jinja_render(const struct rbln_jinja_template *t, const struct json_object *vars,
		      const struct rbln_jinja_options *opt, char **out, size_t *out_len,
		      struct rbln_error *err)
{
	/* Heap-allocated so its contents are well defined after longjmp. */
	struct jctx *c = calloc(1, sizeof(*c));
	struct jarena *arena = calloc(1, sizeof(*arena));
	struct rbln_strbuf *sb = calloc(1, sizeof(*sb));
	volatile int rc = 0;	/* assigned on the longjmp path */

	*out = NULL;
	if (!c || !arena || !sb) {
		free(c);
		free(arena);
		free(sb);
		return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	/* Bounds what one render may allocate; chat templates need little. */
	arena->limit = RENDER_MEMORY_LIMIT;
	c->arena = arena;
	c->out = sb;
	c->name = t->name;
	c->err = err;
	c->now = opt ? opt->now : 0;
	c->max_steps = opt && opt->max_steps ? opt->max_steps : RENDER_MAX_STEPS;
	if (setjmp(c->fail)) {
		rc = err && err->code ? err->code : -EINVAL;
	} else {
		c->root = rbln_jalloc(c, sizeof(*c->root));
		c->root->vars = rbln_jalloc(c, sizeof(*c->root->vars));
		c->scope = c->root;
		if (vars && json_object_is_type(vars, json_type_object)) {
			json_object_object_foreach((struct json_object *)vars, key, val)
				rbln_jv_dict_set(c, c->root->vars, rbln_jv_cstr(c, key), rbln_jv_from_json(c, val));
		}
		rbln_jinja_exec(c, &t->body);
		if (rbln_strbuf_reserve(sb, 0))
			rbln_jinja_fail(c, 0, "out of memory");
	}
	release(c);
	if (!rc) {
		*out = rbln_strbuf_steal(sb, out_len);
		if (!*out)
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
	}
	rbln_strbuf_free(sb);
	free(sb);
	free(arena);
	free(c);
	return rc;
}
