// SPDX-License-Identifier: MIT
/* Values with the semantics of the Python objects Jinja works on. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jinja/jinja_internal.h"

void *rbln_jalloc(struct jctx *c, size_t n)
{
	void *p = rbln_jarena_alloc(c->arena, n);

	if (!p)
		rbln_jinja_fail(c, 0, "template exceeded its memory budget (%zu MiB)",
			   c->arena->limit >> 20);
	return p;
}

void rbln_jout(struct jctx *c, struct rbln_strbuf *sb, const void *p, size_t n)
{
	/*
	 * Rendering is bounded so a template cannot exhaust memory, and text
	 * built is charged to the step budget: each level of a recursive
	 * macro may re-escape a long string (repr doubles the backslashes).
	 */
	rbln_jinja_charge(c, 1 + n / 256);
	if (sb->len + n > (64u << 20) || rbln_strbuf_append(sb, p, n))
		rbln_jinja_fail(c, 0, "output exceeds 64 MiB or out of memory");
}

struct jv rbln_jv_undefined(const char *name)
{
	return (struct jv){ .kind = JV_UNDEFINED, .undef_name = name };
}

struct jv rbln_jv_none(void)
{
	return (struct jv){ .kind = JV_NONE };
}

struct jv rbln_jv_bool(bool b)
{
	return (struct jv){ .kind = JV_BOOL, .u.b = b };
}

struct jv rbln_jv_int(int64_t i)
{
	return (struct jv){ .kind = JV_INT, .u.i = i };
}

struct jv rbln_jv_float(double f)
{
	return (struct jv){ .kind = JV_FLOAT, .u.f = f };
}

struct jv rbln_jv_str(struct jctx *c, const char *s, size_t n)
{
	struct jstr *js = rbln_jalloc(c, sizeof(*js) + n + 1);

	js->len = n;
	if (n)
		memcpy(js->data, s, n);
	js->data[n] = '\0';
	return (struct jv){ .kind = JV_STR, .u.s = js };
}

struct jv rbln_jv_cstr(struct jctx *c, const char *s)
{
	return rbln_jv_str(c, s, strlen(s));
}

struct jv rbln_jv_list(struct jctx *c, size_t cap)
{
	struct jlist *l = rbln_jalloc(c, sizeof(*l));

	l->cap = cap;
	if (cap)
		l->items = rbln_jalloc(c, cap * sizeof(*l->items));
	return (struct jv){ .kind = JV_LIST, .u.l = l };
}

struct jv rbln_jv_dict(struct jctx *c)
{
	struct jdict *d = rbln_jalloc(c, sizeof(*d));

	return (struct jv){ .kind = JV_DICT, .u.d = d };
}

struct jv rbln_jv_func(struct jctx *c, const char *name, jfunc_fn fn, const struct jv *self,
		  const void *data)
{
	struct jfunc *f = rbln_jalloc(c, sizeof(*f));

	f->name = name;
	f->fn = fn;
	f->data = data;
	if (self) {
		f->self = rbln_jalloc(c, sizeof(*f->self));
		*f->self = *self;
	}
	return (struct jv){ .kind = JV_FUNC, .u.fn = f };
}

void rbln_jv_list_push(struct jctx *c, struct jv *list, struct jv item)
{
	struct jlist *l = list->u.l;

	rbln_jinja_charge(c, 1);
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct jv *items = rbln_jalloc(c, cap * sizeof(*items));

		if (l->n)
			memcpy(items, l->items, l->n * sizeof(*items));
		l->items = items;
		l->cap = cap;
	}
	l->items[l->n++] = item;
}

struct jv *rbln_jv_dict_get(const struct jdict *d, struct jv key)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (rbln_jv_equal(&d->keys[i], &key))
			return &d->vals[i];
	return NULL;
}

struct jv *rbln_jv_dict_get_str(const struct jdict *d, const char *key)
{
	size_t i, n = strlen(key);

	for (i = 0; i < d->n; i++)
		if (d->keys[i].kind == JV_STR && d->keys[i].u.s->len == n &&
		    memcmp(d->keys[i].u.s->data, key, n) == 0)
			return &d->vals[i];
	return NULL;
}

void rbln_jv_dict_set(struct jctx *c, struct jdict *d, struct jv key, struct jv val)
{
	struct jv *slot;

	/* The lookup scans every key: charge for it, so many sets are bounded. */
	rbln_jinja_charge(c, 1 + d->n / 16);
	slot = rbln_jv_dict_get(d, key);

	if (slot) {
		*slot = val;
		return;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 4;
		struct jv *keys = rbln_jalloc(c, cap * sizeof(*keys));
		struct jv *vals = rbln_jalloc(c, cap * sizeof(*vals));

		if (d->n) {
			memcpy(keys, d->keys, d->n * sizeof(*keys));
			memcpy(vals, d->vals, d->n * sizeof(*vals));
		}
		d->keys = keys;
		d->vals = vals;
		d->cap = cap;
	}
	d->keys[d->n] = key;
	d->vals[d->n] = val;
	d->n++;
}

bool rbln_jv_truthy(const struct jv *v)
{
	switch (v->kind) {
	case JV_UNDEFINED:
	case JV_NONE:
		return false;
	case JV_BOOL:
		return v->u.b;
	case JV_INT:
		return v->u.i != 0;
	case JV_FLOAT:
		return v->u.f != 0.0;
	case JV_STR:
		return v->u.s->len != 0;
	case JV_LIST:
		return v->u.l->n != 0;
	case JV_DICT:
		return v->u.d->n != 0;
	case JV_NAMESPACE:
	case JV_FUNC:
	case JV_LOOP:
		return true;
	}
	return false;
}

bool rbln_jv_is_number(const struct jv *v)
{
	return v->kind == JV_INT || v->kind == JV_FLOAT || v->kind == JV_BOOL;
}

double rbln_jv_as_double(const struct jv *v)
{
	return v->kind == JV_FLOAT ? v->u.f : v->kind == JV_INT ? (double)v->u.i : (double)v->u.b;
}

static int64_t as_int(const struct jv *v)
{
	return v->kind == JV_INT ? v->u.i : (int64_t)v->u.b;
}

bool rbln_jv_equal(const struct jv *a, const struct jv *b)
{
	size_t i;

	/* Python: True == 1 and 1 == 1.0. */
	if (rbln_jv_is_number(a) && rbln_jv_is_number(b)) {
		if (a->kind != JV_FLOAT && b->kind != JV_FLOAT)
			return as_int(a) == as_int(b);
		return rbln_jv_as_double(a) == rbln_jv_as_double(b);
	}
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case JV_UNDEFINED:
	case JV_NONE:
		return true;
	case JV_STR:
		return a->u.s->len == b->u.s->len &&
		       memcmp(a->u.s->data, b->u.s->data, a->u.s->len) == 0;
	case JV_LIST:
		if (a->u.l->n != b->u.l->n || a->u.l->tuple != b->u.l->tuple)
			return false;
		for (i = 0; i < a->u.l->n; i++)
			if (!rbln_jv_equal(&a->u.l->items[i], &b->u.l->items[i]))
				return false;
		return true;
	case JV_DICT:
	case JV_NAMESPACE:
		if (a->kind == JV_NAMESPACE)
			return a->u.d == b->u.d;
		if (a->u.d->n != b->u.d->n)
			return false;
		for (i = 0; i < a->u.d->n; i++) {
			const struct jv *other = rbln_jv_dict_get(b->u.d, a->u.d->keys[i]);

			if (!other || !rbln_jv_equal(&a->u.d->vals[i], other))
				return false;
		}
		return true;
	case JV_FUNC:
		return a->u.fn == b->u.fn;
	case JV_LOOP:
		return a->u.loop == b->u.loop;
	default:
		return false;
	}
}

const char *rbln_jv_type_name(const struct jv *v)
{
	switch (v->kind) {
	case JV_UNDEFINED: return "Undefined";
	case JV_NONE: return "NoneType";
	case JV_BOOL: return "bool";
	case JV_INT: return "int";
	case JV_FLOAT: return "float";
	case JV_STR: return "str";
	case JV_LIST: return v->u.l->tuple ? "tuple" : "list";
	case JV_DICT: return "dict";
	case JV_NAMESPACE: return "Namespace";
	case JV_FUNC: return "function";
	case JV_LOOP: return "LoopContext";
	}
	return "object";
}

int rbln_jv_compare(struct jctx *c, int line, const struct jv *a, const struct jv *b)
{
	size_t i, n;
	int r;

	if (rbln_jv_is_number(a) && rbln_jv_is_number(b)) {
		if (a->kind != JV_FLOAT && b->kind != JV_FLOAT)
			return (as_int(a) > as_int(b)) - (as_int(a) < as_int(b));
		return (rbln_jv_as_double(a) > rbln_jv_as_double(b)) - (rbln_jv_as_double(a) < rbln_jv_as_double(b));
	}
	if (a->kind == JV_STR && b->kind == JV_STR) {
		/* UTF-8 byte order is code point order, as in Python. */
		n = a->u.s->len < b->u.s->len ? a->u.s->len : b->u.s->len;
		r = memcmp(a->u.s->data, b->u.s->data, n);
		if (r)
			return r < 0 ? -1 : 1;
		return (a->u.s->len > b->u.s->len) - (a->u.s->len < b->u.s->len);
	}
	if (a->kind == JV_LIST && b->kind == JV_LIST) {
		n = a->u.l->n < b->u.l->n ? a->u.l->n : b->u.l->n;
		for (i = 0; i < n; i++) {
			if (rbln_jv_equal(&a->u.l->items[i], &b->u.l->items[i]))
				continue;
			return rbln_jv_compare(c, line, &a->u.l->items[i], &b->u.l->items[i]);
		}
		return (a->u.l->n > b->u.l->n) - (a->u.l->n < b->u.l->n);
	}
	rbln_jinja_fail(c, line, "'<' not supported between instances of '%s' and '%s'",
		   rbln_jv_type_name(a), rbln_jv_type_name(b));
}
