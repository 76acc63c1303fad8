// SPDX-License-Identifier: MIT
/*
 * Python methods templates call on values: str.strip(), str.split(),
 * dict.items(), dict.get()...  Mutating methods (list.append, dict.update)
 * are absent on purpose: transformers renders in Jinja's immutable sandbox,
 * where they raise.
 */
#include <string.h>

#include "jinja/jinja_internal.h"
#include "util/utf8.h"

static const char *const no_kw[] = { NULL };

static struct jv str_self(const struct jfunc *f)
{
	return *f->self;
}

static struct jv m_strip_common(struct jctx *c, const struct jfunc *f, struct jcall *call,
				bool left, bool right)
{
	struct jv s = str_self(f);

	rbln_jcall_check(c, call, f->name, 1, no_kw);
	return rbln_jinja_strip(c, &s, call->nargs ? &call->args[0] : NULL, left, right);
}

static struct jv m_strip(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	return m_strip_common(c, f, call, true, true);
}

static struct jv m_lstrip(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	return m_strip_common(c, f, call, true, false);
}

static struct jv m_rstrip(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	return m_strip_common(c, f, call, false, true);
}

static struct jv m_case(struct jctx *c, const struct jfunc *f, struct jcall *call,
			enum jcase mode)
{
	struct jv s = str_self(f);

	rbln_jcall_check(c, call, f->name, 0, no_kw);
	return rbln_jinja_case(c, &s, mode);
}

static struct jv m_upper(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	return m_case(c, f, call, JCASE_UPPER);
}

static struct jv m_lower(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	return m_case(c, f, call, JCASE_LOWER);
}

static struct jv m_title(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	return m_case(c, f, call, JCASE_TITLE);
}

static struct jv m_capitalize(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	return m_case(c, f, call, JCASE_CAPITALIZE);
}

/* str.split(sep=None, maxsplit=-1) */
static struct jv m_split(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	static const char *const kw[] = { "sep", "maxsplit", NULL };
	const struct jstr *s = f->self->u.s;
	struct jv *sep = rbln_jcall_arg(call, 0, "sep"), *maxv = rbln_jcall_arg(call, 1, "maxsplit");
	int64_t max = maxv && maxv->kind == JV_INT ? maxv->u.i : -1;
	struct jv r = rbln_jv_list(c, 0);
	size_t i = 0, adv;

	rbln_jcall_check(c, call, f->name, 2, kw);
	if (sep && sep->kind != JV_NONE) {
		if (sep->kind != JV_STR || !sep->u.s->len)
			rbln_jinja_fail(c, call->line, "split(): separator must be a non-empty string");
		for (;;) {
			const char *hit = max != 0 ? memmem(s->data + i, s->len - i, sep->u.s->data,
							    sep->u.s->len) : NULL;
			size_t at = hit ? (size_t)(hit - s->data) : s->len;

			rbln_jv_list_push(c, &r, rbln_jv_str(c, s->data + i, at - i));
			if (!hit)
				return r;
			i = at + sep->u.s->len;
			max--;
		}
	}
	/* Whitespace split: runs of whitespace separate, ends are ignored. */
	for (;;) {
		size_t start;

		while (i < s->len && rbln_jinja_is_space_at(s->data, s->len, i, &adv))
			i += adv;
		if (i >= s->len)
			return r;
		start = i;
		if (max == 0) {
			struct jv rest = rbln_jv_str(c, s->data + start, s->len - start);

			rbln_jv_list_push(c, &r, rbln_jinja_strip(c, &rest, NULL, false, true));
			return r;
		}
		while (i < s->len && !rbln_jinja_is_space_at(s->data, s->len, i, &adv))
			i += adv;
		rbln_jv_list_push(c, &r, rbln_jv_str(c, s->data + start, i - start));
		max--;
	}
}

static bool affix_match(const struct jstr *s, const struct jv *a, bool prefix)
{
	if (a->kind != JV_STR || a->u.s->len > s->len)
		return false;
	return memcmp(prefix ? s->data : s->data + s->len - a->u.s->len, a->u.s->data,
		      a->u.s->len) == 0;
}

static struct jv m_affix(struct jctx *c, const struct jfunc *f, struct jcall *call, bool prefix)
{
	struct jv *a;
	size_t i;

	rbln_jcall_check(c, call, f->name, 1, no_kw);
	a = rbln_jcall_arg(call, 0, NULL);
	if (!a)
		rbln_jinja_fail(c, call->line, "%s() takes one argument", f->name);
	if (a->kind == JV_LIST) {	/* a tuple of alternatives */
		for (i = 0; i < a->u.l->n; i++)
			if (affix_match(f->self->u.s, &a->u.l->items[i], prefix))
				return rbln_jv_bool(true);
		return rbln_jv_bool(false);
	}
	if (a->kind != JV_STR)
		rbln_jinja_fail(c, call->line, "%s() argument must be str or a tuple of str", f->name);
	return rbln_jv_bool(affix_match(f->self->u.s, a, prefix));
}

static struct jv m_startswith(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	return m_affix(c, f, call, true);
}

static struct jv m_endswith(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	return m_affix(c, f, call, false);
}

static struct jv m_replace(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	struct jv s = str_self(f);

	return rbln_jinja_apply_filter(c, "replace", &s, call);
}

static struct jv m_find_count(struct jctx *c, const struct jfunc *f, struct jcall *call,
			      bool count)
{
	const struct jstr *s = f->self->u.s;
	struct jv *sub;
	size_t i = 0;
	int64_t n = 0;

	rbln_jcall_check(c, call, f->name, 1, no_kw);
	sub = rbln_jcall_arg(call, 0, NULL);
	if (!sub || sub->kind != JV_STR)
		rbln_jinja_fail(c, call->line, "%s() needs a string argument", f->name);
	for (;;) {
		const char *hit = memmem(s->data + i, s->len - i, sub->u.s->data, sub->u.s->len);

		if (!hit)
			return count ? rbln_jv_int(n) : rbln_jv_int(-1);
		if (!count)	/* Python reports a character index */
			return rbln_jv_int((int64_t)rbln_utf8_count(s->data, (size_t)(hit - s->data)));
		n++;
		i = (size_t)(hit - s->data) + (sub->u.s->len ? sub->u.s->len : 1);
		if (i > s->len)
			return rbln_jv_int(n);
	}
}

static struct jv m_find(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	return m_find_count(c, f, call, false);
}

static struct jv m_count(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	return m_find_count(c, f, call, true);
}

static struct jv m_join(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	struct jcall j = *call;
	struct jv sep = str_self(f), *items;

	rbln_jcall_check(c, call, f->name, 1, no_kw);
	items = rbln_jcall_arg(call, 0, NULL);
	if (!items)
		rbln_jinja_fail(c, call->line, "join() takes one argument");
	j.args = &sep;
	j.nargs = 1;
	return rbln_jinja_apply_filter(c, "join", items, &j);
}

static struct jv m_splitlines(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	struct jv s = str_self(f);

	rbln_jcall_check(c, call, f->name, 0, no_kw);
	return rbln_jinja_splitlines(c, &s);
}

static struct jv m_isspace(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	const struct jstr *s = f->self->u.s;
	size_t i = 0, adv;

	rbln_jcall_check(c, call, f->name, 0, no_kw);
	while (i < s->len && rbln_jinja_is_space_at(s->data, s->len, i, &adv))
		i += adv;
	return rbln_jv_bool(s->len && i == s->len);
}

static struct jv m_isdigit(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	const struct jstr *s = f->self->u.s;
	size_t i;

	rbln_jcall_check(c, call, f->name, 0, no_kw);
	for (i = 0; i < s->len; i++)
		if (s->data[i] < '0' || s->data[i] > '9')
			return rbln_jv_bool(false);
	return rbln_jv_bool(s->len > 0);
}

/* ---- dict ---- */

static struct jv m_items(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	struct jv d = *f->self;

	return rbln_jinja_apply_filter(c, "items", &d, call);
}

static struct jv m_keys_values(struct jctx *c, const struct jfunc *f, struct jcall *call,
			       bool keys)
{
	const struct jdict *d = f->self->u.d;
	struct jv r = rbln_jv_list(c, d->n);
	size_t i;

	rbln_jcall_check(c, call, f->name, 0, no_kw);
	for (i = 0; i < d->n; i++)
		rbln_jv_list_push(c, &r, keys ? d->keys[i] : d->vals[i]);
	return r;
}

static struct jv m_keys(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	return m_keys_values(c, f, call, true);
}

static struct jv m_values(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	return m_keys_values(c, f, call, false);
}

static struct jv m_get(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	struct jv *key, *found;

	rbln_jcall_check(c, call, f->name, 2, no_kw);
	key = rbln_jcall_arg(call, 0, NULL);
	if (!key)
		rbln_jinja_fail(c, call->line, "get() needs a key");
	found = rbln_jv_dict_get(f->self->u.d, *key);
	if (found)
		return *found;
	return call->nargs > 1 ? call->args[1] : rbln_jv_none();
}

static const struct method {
	enum jv_kind kind;
	const char *name;
	const char *qualified;
	jfunc_fn fn;
} methods[] = {
	{ JV_STR, "strip", "str.strip", m_strip },
	{ JV_STR, "lstrip", "str.lstrip", m_lstrip },
	{ JV_STR, "rstrip", "str.rstrip", m_rstrip },
	{ JV_STR, "upper", "str.upper", m_upper },
	{ JV_STR, "lower", "str.lower", m_lower },
	{ JV_STR, "title", "str.title", m_title },
	{ JV_STR, "capitalize", "str.capitalize", m_capitalize },
	{ JV_STR, "split", "str.split", m_split },
	{ JV_STR, "splitlines", "str.splitlines", m_splitlines },
	{ JV_STR, "startswith", "str.startswith", m_startswith },
	{ JV_STR, "endswith", "str.endswith", m_endswith },
	{ JV_STR, "replace", "str.replace", m_replace },
	{ JV_STR, "find", "str.find", m_find },
	{ JV_STR, "count", "str.count", m_count },
	{ JV_STR, "join", "str.join", m_join },
	{ JV_STR, "isspace", "str.isspace", m_isspace },
	{ JV_STR, "isdigit", "str.isdigit", m_isdigit },
	{ JV_DICT, "items", "dict.items", m_items },
	{ JV_DICT, "keys", "dict.keys", m_keys },
	{ JV_DICT, "values", "dict.values", m_values },
	{ JV_DICT, "get", "dict.get", m_get },
};

struct jv rbln_jinja_method(struct jctx *c, const struct jv *obj, const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (methods[i].kind == obj->kind && !strcmp(methods[i].name, name))
			return rbln_jv_func(c, methods[i].qualified, methods[i].fn, obj, NULL);
	return rbln_jv_undefined(name);
}
