// SPDX-License-Identifier: MIT
/*
 * Jinja's built-in filters that chat templates use, with Jinja's argument
 * names and semantics, plus transformers' tojson (json.dumps, no HTML
 * escaping, ensure_ascii off).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja/jinja_internal.h"
#include "util/utf8.h"

static const char *const no_kw[] = { NULL };

static struct jv arg_or(struct jcall *call, size_t i, const char *name, struct jv dflt)
{
	struct jv *a = rbln_jcall_arg(call, i, name);

	return a ? *a : dflt;
}

/* Attribute lookup used by map/selectattr/sort/...: "a.b" walks, "0" indexes. */
static struct jv attr_path(struct jctx *c, const struct jv *obj, const char *path)
{
	struct jv v = *obj;
	const char *p = path;

	while (*p && v.kind != JV_UNDEFINED) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		char *part = rbln_jalloc(c, n + 1);
		struct jv *found = NULL;

		memcpy(part, p, n);
		if (v.kind == JV_DICT || v.kind == JV_NAMESPACE)
			found = rbln_jv_dict_get_str(v.u.d, part);
		else if (v.kind == JV_LIST && n && strspn(part, "0123456789") == n &&
			 (size_t)atol(part) < v.u.l->n)
			found = &v.u.l->items[atol(part)];
		v = found ? *found : rbln_jv_undefined(part);
		p += n + (dot != NULL);
	}
	return v;
}

static struct jv f_trim(struct jctx *c, struct jv *v, struct jcall *call)
{
	static const char *const kw[] = { "chars", NULL };

	rbln_jcall_check(c, call, "trim", 1, kw);
	return rbln_jinja_strip(c, v, rbln_jcall_arg(call, 0, "chars"), true, true);
}

static struct jv f_length(struct jctx *c, struct jv *v, struct jcall *call)
{
	rbln_jcall_check(c, call, "length", 0, no_kw);
	switch (v->kind) {
	case JV_STR: return rbln_jv_int((int64_t)rbln_utf8_count(v->u.s->data, v->u.s->len));
	case JV_LIST: return rbln_jv_int((int64_t)v->u.l->n);
	case JV_DICT:
	case JV_NAMESPACE: return rbln_jv_int((int64_t)v->u.d->n);
	case JV_UNDEFINED: return rbln_jv_int(0);
	default: rbln_jinja_fail(c, call->line, "object of type '%s' has no len()", rbln_jv_type_name(v));
	}
}

static struct jv f_case(struct jctx *c, struct jv *v, struct jcall *call, const char *name,
			enum jcase mode)
{
	rbln_jcall_check(c, call, name, 0, no_kw);
	return rbln_jinja_case(c, v, mode);
}

static struct jv f_upper(struct jctx *c, struct jv *v, struct jcall *call)
{
	return f_case(c, v, call, "upper", JCASE_UPPER);
}

static struct jv f_lower(struct jctx *c, struct jv *v, struct jcall *call)
{
	return f_case(c, v, call, "lower", JCASE_LOWER);
}

static struct jv f_title(struct jctx *c, struct jv *v, struct jcall *call)
{
	return f_case(c, v, call, "title", JCASE_JINJA_TITLE);
}

static struct jv f_capitalize(struct jctx *c, struct jv *v, struct jcall *call)
{
	return f_case(c, v, call, "capitalize", JCASE_CAPITALIZE);
}

/* transformers: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False) */
static struct jv f_tojson(struct jctx *c, struct jv *v, struct jcall *call)
{
	static const char *const kw[] = { "ensure_ascii", "indent", "separators", "sort_keys", NULL };
	struct jv ea = arg_or(call, 0, "ensure_ascii", rbln_jv_bool(false));
	struct jv ind = arg_or(call, 1, "indent", rbln_jv_none());
	struct jv seps = arg_or(call, 2, "separators", rbln_jv_none());
	struct jv sk = arg_or(call, 3, "sort_keys", rbln_jv_bool(false));
	const char *item_sep, *key_sep = ": ";
	struct rbln_strbuf *sb = rbln_jinja_temp_buf(c);
	int indent = -1;
	struct jv r;

	rbln_jcall_check(c, call, "tojson", 4, kw);
	if (ind.kind == JV_INT)
		indent = ind.u.i < 0 ? 0 : ind.u.i > 64 ? 64 : (int)ind.u.i;
	else if (ind.kind != JV_NONE)
		rbln_jinja_fail(c, call->line, "tojson: indent must be an integer or None");
	item_sep = indent >= 0 ? "," : ", ";
	if (seps.kind == JV_LIST && seps.u.l->n == 2 && seps.u.l->items[0].kind == JV_STR &&
	    seps.u.l->items[1].kind == JV_STR) {
		item_sep = seps.u.l->items[0].u.s->data;
		key_sep = seps.u.l->items[1].u.s->data;
	} else if (seps.kind != JV_NONE) {
		rbln_jinja_fail(c, call->line, "tojson: separators must be a pair of strings");
	}
	rbln_jv_to_json(c, sb, v, rbln_jv_truthy(&ea), indent, item_sep, key_sep, rbln_jv_truthy(&sk),
		   call->line);
	r = rbln_jinja_temp_str(c, sb);
	return r;
}

static struct jv f_default(struct jctx *c, struct jv *v, struct jcall *call)
{
	static const char *const kw[] = { "default_value", "boolean", NULL };
	struct jv dflt = arg_or(call, 0, "default_value", rbln_jv_cstr(c, ""));
	struct jv boolean = arg_or(call, 1, "boolean", rbln_jv_bool(false));

	rbln_jcall_check(c, call, "default", 2, kw);
	if (v->kind == JV_UNDEFINED || (rbln_jv_truthy(&boolean) && !rbln_jv_truthy(v)))
		return dflt;
	return *v;
}

static struct jv f_first_last(struct jctx *c, struct jv *v, struct jcall *call, bool last)
{
	struct jv items;

	rbln_jcall_check(c, call, last ? "last" : "first", 0, no_kw);
	items = rbln_jinja_iterable_items(c, v, call->line);
	if (!items.u.l->n)
		return rbln_jv_undefined(last ? "last item" : "first item");
	return items.u.l->items[last ? items.u.l->n - 1 : 0];
}

static struct jv f_first(struct jctx *c, struct jv *v, struct jcall *call)
{
	return f_first_last(c, v, call, false);
}

static struct jv f_last(struct jctx *c, struct jv *v, struct jcall *call)
{
	return f_first_last(c, v, call, true);
}

static struct jv f_join(struct jctx *c, struct jv *v, struct jcall *call)
{
	static const char *const kw[] = { "d", "attribute", NULL };
	struct jv sep = arg_or(call, 0, "d", rbln_jv_cstr(c, "")), items;
	struct jv *attr = rbln_jcall_arg(call, 1, "attribute");
	struct rbln_strbuf *sb = rbln_jinja_temp_buf(c);
	size_t i;
	struct jv r;

	rbln_jcall_check(c, call, "join", 2, kw);
	items = rbln_jinja_iterable_items(c, v, call->line);
	sep = rbln_jv_stringify(c, &sep);
	for (i = 0; i < items.u.l->n; i++) {
		struct jv it = items.u.l->items[i];

		if (attr)
			it = attr_path(c, &it, rbln_jv_stringify(c, attr).u.s->data);
		if (i)
			rbln_jout(c, sb, sep.u.s->data, sep.u.s->len);
		rbln_jv_to_str(c, sb, &it);
	}
	r = rbln_jinja_temp_str(c, sb);
	return r;
}

static struct jv f_list(struct jctx *c, struct jv *v, struct jcall *call)
{
	struct jv r = rbln_jv_list(c, 0), items;
	size_t i;

	rbln_jcall_check(c, call, "list", 0, no_kw);
	items = rbln_jinja_iterable_items(c, v, call->line);
	for (i = 0; i < items.u.l->n; i++)
		rbln_jv_list_push(c, &r, items.u.l->items[i]);
	return r;
}

static struct jv f_string(struct jctx *c, struct jv *v, struct jcall *call)
{
	rbln_jcall_check(c, call, "string", 0, no_kw);
	return rbln_jv_stringify(c, v);
}

static struct jv f_int(struct jctx *c, struct jv *v, struct jcall *call)
{
	static const char *const kw[] = { "default", "base", NULL };
	struct jv dflt = arg_or(call, 0, "default", rbln_jv_int(0));
	char *end;

	rbln_jcall_check(c, call, "int", 2, kw);
	if (v->kind == JV_INT || v->kind == JV_BOOL)
		return rbln_jv_int(v->kind == JV_INT ? v->u.i : v->u.b);
	if (v->kind == JV_FLOAT && isfinite(v->u.f) && fabs(v->u.f) < 9.2e18)
		return rbln_jv_int((int64_t)v->u.f);
	if (v->kind == JV_STR) {
		struct jv t = rbln_jinja_strip(c, v, NULL, true, true);
		long long x = strtoll(t.u.s->data, &end, 10);
		double f;

		if (t.u.s->len && *end == '\0')
			return rbln_jv_int(x);
		f = strtod(t.u.s->data, &end);
		if (t.u.s->len && *end == '\0' && isfinite(f) && fabs(f) < 9.2e18)
			return rbln_jv_int((int64_t)f);
	}
	return dflt;
}

static struct jv f_float(struct jctx *c, struct jv *v, struct jcall *call)
{
	static const char *const kw[] = { "default", NULL };
	struct jv dflt = arg_or(call, 0, "default", rbln_jv_float(0.0));
	char *end;

	rbln_jcall_check(c, call, "float", 1, kw);
	if (rbln_jv_is_number(v))
		return rbln_jv_float(rbln_jv_as_double(v));
	if (v->kind == JV_STR) {
		struct jv t = rbln_jinja_strip(c, v, NULL, true, true);
		double f = strtod(t.u.s->data, &end);

		if (t.u.s->len && *end == '\0')
			return rbln_jv_float(f);
	}
	return dflt;
}

static struct jv f_abs(struct jctx *c, struct jv *v, struct jcall *call)
{
	rbln_jcall_check(c, call, "abs", 0, no_kw);
	if (v->kind == JV_FLOAT)
		return rbln_jv_float(fabs(v->u.f));
	if (v->kind == JV_INT && v->u.i != INT64_MIN)
		return rbln_jv_int(v->u.i < 0 ? -v->u.i : v->u.i);
	if (v->kind == JV_BOOL)
		return rbln_jv_int(v->u.b);
	rbln_jinja_fail(c, call->line, "bad operand type for abs(): '%s'", rbln_jv_type_name(v));
}

static struct jv f_replace(struct jctx *c, struct jv *v, struct jcall *call)
{
	static const char *const kw[] = { "old", "new", "count", NULL };
	struct jv *old = rbln_jcall_arg(call, 0, "old"), *new = rbln_jcall_arg(call, 1, "new");
	struct jv count = arg_or(call, 2, "count", rbln_jv_int(-1));
	struct jv s = rbln_jv_stringify(c, v), o, w;
	struct rbln_strbuf *sb = rbln_jinja_temp_buf(c);
	int64_t left;
	size_t i = 0;
	struct jv r;

	rbln_jcall_check(c, call, "replace", 3, kw);
	if (!old || !new)
		rbln_jinja_fail(c, call->line, "replace() needs old and new");
	o = rbln_jv_stringify(c, old);
	w = rbln_jv_stringify(c, new);
	left = count.kind == JV_INT ? count.u.i : -1;
	while (i <= s.u.s->len) {
		const char *hit = left != 0 ? memmem(s.u.s->data + i, s.u.s->len - i, o.u.s->data,
						     o.u.s->len) : NULL;
		size_t at = hit ? (size_t)(hit - s.u.s->data) : s.u.s->len;

		rbln_jout(c, sb, s.u.s->data + i, at - i);
		if (!hit)
			break;
		rbln_jout(c, sb, w.u.s->data, w.u.s->len);
		left--;
		if (o.u.s->len) {
			i = at + o.u.s->len;
			continue;
		}
		/* Empty "old" inserts between characters, like Python. */
		if (at < s.u.s->len) {
			size_t adv;

			rbln_jinja_char_at(s.u.s->data, s.u.s->len, at, &adv);
			rbln_jout(c, sb, s.u.s->data + at, adv);
			i = at + adv;
		} else {
			break;
		}
	}
	r = rbln_jinja_temp_str(c, sb);
	return r;
}

static struct jv f_round(struct jctx *c, struct jv *v, struct jcall *call)
{
	static const char *const kw[] = { "precision", "method", NULL };
	struct jv prec = arg_or(call, 0, "precision", rbln_jv_int(0));
	struct jv method = arg_or(call, 1, "method", rbln_jv_cstr(c, "common"));
	double x, scale, r;

	rbln_jcall_check(c, call, "round", 2, kw);
	if (!rbln_jv_is_number(v) || prec.kind != JV_INT || method.kind != JV_STR)
		rbln_jinja_fail(c, call->line, "round() needs a number, an integer precision and a method");
	x = rbln_jv_as_double(v);
	scale = pow(10.0, (double)prec.u.i);
	if (!strcmp(method.u.s->data, "ceil"))
		r = ceil(x * scale) / scale;
	else if (!strcmp(method.u.s->data, "floor"))
		r = floor(x * scale) / scale;
	else if (!strcmp(method.u.s->data, "common"))
		r = nearbyint(x * scale) / scale;	/* Python rounds half to even */
	else
		rbln_jinja_fail(c, call->line, "round(): method must be common, ceil or floor");
	return rbln_jv_float(r);
}

static struct jv f_items(struct jctx *c, struct jv *v, struct jcall *call)
{
	struct jv r = rbln_jv_list(c, 0);
	size_t i;

	rbln_jcall_check(c, call, "items", 0, no_kw);
	if (v->kind == JV_UNDEFINED)
		return r;
	if (v->kind != JV_DICT)
		rbln_jinja_fail(c, call->line, "items: can only get item pairs from a mapping");
	for (i = 0; i < v->u.d->n; i++) {
		struct jv pair = rbln_jv_list(c, 2);

		pair.u.l->tuple = true;
		rbln_jv_list_push(c, &pair, v->u.d->keys[i]);
		rbln_jv_list_push(c, &pair, v->u.d->vals[i]);
		rbln_jv_list_push(c, &r, pair);
	}
	return r;
}

static struct jv f_reverse(struct jctx *c, struct jv *v, struct jcall *call)
{
	struct jv items, r;
	size_t i;

	rbln_jcall_check(c, call, "reverse", 0, no_kw);
	items = rbln_jinja_iterable_items(c, v, call->line);
	r = rbln_jv_list(c, items.u.l->n);
	for (i = items.u.l->n; i-- > 0;)
		rbln_jv_list_push(c, &r, items.u.l->items[i]);
	if (v->kind == JV_STR) {
		struct rbln_strbuf *sb = rbln_jinja_temp_buf(c);
		struct jv s;

		for (i = 0; i < r.u.l->n; i++)
			rbln_jv_to_str(c, sb, &r.u.l->items[i]);
		s = rbln_jinja_temp_str(c, sb);
		return s;
	}
	return r;
}

/* ---- sorting family ---- */

struct sort_ctx {
	struct jctx *c;
	const char *attr;
	bool case_sensitive;
	int line;
};

static struct jv sort_key(const struct sort_ctx *s, const struct jv *v)
{
	struct jv k = s->attr ? attr_path(s->c, v, s->attr) : *v;

	if (!s->case_sensitive && k.kind == JV_STR)
		k = rbln_jinja_case(s->c, &k, JCASE_LOWER);
	return k;
}

/* Stable merge sort (Python's sort is stable), comparing with Python rules. */
static void merge_sort(const struct sort_ctx *s, struct jv *v, struct jv *keys, size_t n,
		       struct jv *tmpv, struct jv *tmpk)
{
	size_t mid = n / 2, i = 0, j = mid, k = 0;

	if (n < 2)
		return;
	rbln_jinja_charge(s->c, n);
	merge_sort(s, v, keys, mid, tmpv, tmpk);
	merge_sort(s, v + mid, keys + mid, n - mid, tmpv, tmpk);
	while (i < mid || j < n) {
		bool take_left = j >= n ||
				 (i < mid && rbln_jv_compare(s->c, s->line, &keys[j], &keys[i]) >= 0);

		tmpv[k] = take_left ? v[i] : v[j];
		tmpk[k++] = take_left ? keys[i++] : keys[j++];
	}
	memcpy(v, tmpv, n * sizeof(*v));
	memcpy(keys, tmpk, n * sizeof(*keys));
}

static struct jv sorted(struct jctx *c, const struct jv *items, const struct sort_ctx *s,
			bool reverse)
{
	size_t n = items->u.l->n, i;
	struct jv r = rbln_jv_list(c, n);
	struct jv *keys = rbln_jalloc(c, (n + 1) * sizeof(*keys));
	struct jv *tv = rbln_jalloc(c, (n + 1) * sizeof(*tv)), *tk = rbln_jalloc(c, (n + 1) * sizeof(*tk));

	for (i = 0; i < n; i++) {
		r.u.l->items[i] = items->u.l->items[i];
		keys[i] = sort_key(s, &items->u.l->items[i]);
	}
	r.u.l->n = n;
	merge_sort(s, r.u.l->items, keys, n, tv, tk);
	if (reverse)
		for (i = 0; i < n / 2; i++) {
			struct jv t = r.u.l->items[i];

			r.u.l->items[i] = r.u.l->items[n - 1 - i];
			r.u.l->items[n - 1 - i] = t;
		}
	return r;
}

static const char *attr_arg(struct jctx *c, struct jcall *call, size_t i)
{
	struct jv *a = rbln_jcall_arg(call, i, "attribute");

	return a && a->kind != JV_NONE ? rbln_jv_stringify(c, a).u.s->data : NULL;
}

static struct jv f_sort(struct jctx *c, struct jv *v, struct jcall *call)
{
	static const char *const kw[] = { "reverse", "case_sensitive", "attribute", NULL };
	struct jv rev = arg_or(call, 0, "reverse", rbln_jv_bool(false));
	struct jv cs = arg_or(call, 1, "case_sensitive", rbln_jv_bool(false));
	struct sort_ctx s = { c, attr_arg(c, call, 2), rbln_jv_truthy(&cs), call->line };
	struct jv items;

	rbln_jcall_check(c, call, "sort", 3, kw);
	items = rbln_jinja_iterable_items(c, v, call->line);
	return sorted(c, &items, &s, rbln_jv_truthy(&rev));
}

static struct jv f_dictsort(struct jctx *c, struct jv *v, struct jcall *call)
{
	static const char *const kw[] = { "case_sensitive", "by", "reverse", NULL };
	struct jv cs = arg_or(call, 0, "case_sensitive", rbln_jv_bool(false));
	struct jv by = arg_or(call, 1, "by", rbln_jv_cstr(c, "key"));
	struct jv rev = arg_or(call, 2, "reverse", rbln_jv_bool(false));
	struct jcall none = { .line = call->line };
	struct sort_ctx s = { c, NULL, rbln_jv_truthy(&cs), call->line };
	struct jv pairs;

	rbln_jcall_check(c, call, "dictsort", 3, kw);
	pairs = f_items(c, v, &none);
	s.attr = by.kind == JV_STR && !strcmp(by.u.s->data, "value") ? "1" : "0";
	return sorted(c, &pairs, &s, rbln_jv_truthy(&rev));
}

static struct jv f_unique(struct jctx *c, struct jv *v, struct jcall *call)
{
	static const char *const kw[] = { "case_sensitive", "attribute", NULL };
	struct jv cs = arg_or(call, 0, "case_sensitive", rbln_jv_bool(false));
	struct sort_ctx s = { c, attr_arg(c, call, 1), rbln_jv_truthy(&cs), call->line };
	struct jv items, r = rbln_jv_list(c, 0), seen = rbln_jv_list(c, 0);
	size_t i;

	rbln_jcall_check(c, call, "unique", 2, kw);
	items = rbln_jinja_iterable_items(c, v, call->line);
	for (i = 0; i < items.u.l->n; i++) {
		struct jv k = sort_key(&s, &items.u.l->items[i]);

		/* The membership test scans what was seen: quadratic work. */
		rbln_jinja_charge(c, seen.u.l->n);
		if (rbln_jinja_contains(c, &seen, &k, call->line))
			continue;
		rbln_jv_list_push(c, &seen, k);
		rbln_jv_list_push(c, &r, items.u.l->items[i]);
	}
	return r;
}

static struct jv min_max(struct jctx *c, struct jv *v, struct jcall *call, bool want_max)
{
	static const char *const kw[] = { "case_sensitive", "attribute", NULL };
	struct jv cs = arg_or(call, 0, "case_sensitive", rbln_jv_bool(false));
	struct sort_ctx s = { c, attr_arg(c, call, 1), rbln_jv_truthy(&cs), call->line };
	struct jv items, best, best_key;
	size_t i;

	rbln_jcall_check(c, call, want_max ? "max" : "min", 2, kw);
	items = rbln_jinja_iterable_items(c, v, call->line);
	if (!items.u.l->n)
		return rbln_jv_undefined("empty sequence");
	best = items.u.l->items[0];
	best_key = sort_key(&s, &best);
	for (i = 1; i < items.u.l->n; i++) {
		struct jv k = sort_key(&s, &items.u.l->items[i]);
		int r = rbln_jv_compare(c, call->line, &k, &best_key);

		if (want_max ? r > 0 : r < 0) {
			best = items.u.l->items[i];
			best_key = k;
		}
	}
	return best;
}

static struct jv f_min(struct jctx *c, struct jv *v, struct jcall *call)
{
	return min_max(c, v, call, false);
}

static struct jv f_max(struct jctx *c, struct jv *v, struct jcall *call)
{
	return min_max(c, v, call, true);
}

static struct jv f_sum(struct jctx *c, struct jv *v, struct jcall *call)
{
	static const char *const kw[] = { "attribute", "start", NULL };
	const char *attr = attr_arg(c, call, 0);
	struct jv total = arg_or(call, 1, "start", rbln_jv_int(0)), items;
	size_t i;

	rbln_jcall_check(c, call, "sum", 2, kw);
	items = rbln_jinja_iterable_items(c, v, call->line);
	for (i = 0; i < items.u.l->n; i++) {
		struct jv it = attr ? attr_path(c, &items.u.l->items[i], attr) : items.u.l->items[i];

		total = rbln_jinja_binop(c, '+', &total, &it, call->line);
	}
	return total;
}

/* ---- map / select / reject ---- */

/* A call with the first `skip` positional arguments dropped. */
static struct jcall shift_args(struct jcall *call, size_t skip)
{
	struct jcall r = *call;

	r.args += skip < call->nargs ? skip : call->nargs;
	r.nargs -= skip < call->nargs ? skip : call->nargs;
	return r;
}

static struct jv f_map(struct jctx *c, struct jv *v, struct jcall *call)
{
	struct jv items = rbln_jinja_iterable_items(c, v, call->line), r = rbln_jv_list(c, 0);
	struct jv *attr = NULL, *dflt = NULL;
	size_t i, k;

	for (k = 0; k < call->nkw; k++) {
		if (!strcmp(call->kwnames[k], "attribute"))
			attr = &call->kwvals[k];
		else if (!strcmp(call->kwnames[k], "default"))
			dflt = &call->kwvals[k];
	}
	if (!attr && (!call->nargs || call->args[0].kind != JV_STR))
		rbln_jinja_fail(c, call->line, "map() needs a filter name or attribute=");
	for (i = 0; i < items.u.l->n; i++) {
		struct jv it = items.u.l->items[i];

		if (attr) {
			it = attr_path(c, &it, rbln_jv_stringify(c, attr).u.s->data);
			if (it.kind == JV_UNDEFINED && dflt)
				it = *dflt;
		} else {
			struct jcall rest = shift_args(call, 1);

			it = rbln_jinja_apply_filter(c, call->args[0].u.s->data, &it, &rest);
		}
		rbln_jv_list_push(c, &r, it);
	}
	return r;
}

static struct jv select_common(struct jctx *c, struct jv *v, struct jcall *call, bool want,
			       bool by_attr)
{
	struct jv items = rbln_jinja_iterable_items(c, v, call->line), r = rbln_jv_list(c, 0);
	size_t test_at = by_attr ? 1 : 0, i;
	const char *attr = NULL;

	if (by_attr) {
		if (!call->nargs)
			rbln_jinja_fail(c, call->line, "selectattr/rejectattr need an attribute name");
		attr = rbln_jv_stringify(c, &call->args[0]).u.s->data;
	}
	for (i = 0; i < items.u.l->n; i++) {
		struct jv it = attr ? attr_path(c, &items.u.l->items[i], attr) : items.u.l->items[i];
		bool ok;

		if (call->nargs > test_at) {
			struct jcall rest = shift_args(call, test_at + 1);

			if (call->args[test_at].kind != JV_STR)
				rbln_jinja_fail(c, call->line, "test name must be a string");
			ok = rbln_jinja_apply_test(c, call->args[test_at].u.s->data, &it, &rest);
		} else {
			ok = rbln_jv_truthy(&it);
		}
		if (ok == want)
			rbln_jv_list_push(c, &r, items.u.l->items[i]);
	}
	return r;
}

static struct jv f_select(struct jctx *c, struct jv *v, struct jcall *call)
{
	return select_common(c, v, call, true, false);
}

static struct jv f_reject(struct jctx *c, struct jv *v, struct jcall *call)
{
	return select_common(c, v, call, false, false);
}

static struct jv f_selectattr(struct jctx *c, struct jv *v, struct jcall *call)
{
	return select_common(c, v, call, true, true);
}

static struct jv f_rejectattr(struct jctx *c, struct jv *v, struct jcall *call)
{
	return select_common(c, v, call, false, true);
}

/* ---- text shaping ---- */

static struct jv f_indent(struct jctx *c, struct jv *v, struct jcall *call)
{
	static const char *const kw[] = { "width", "first", "blank", NULL };
	struct jv width = arg_or(call, 0, "width", rbln_jv_int(4));
	struct jv first = arg_or(call, 1, "first", rbln_jv_bool(false));
	struct jv blank = arg_or(call, 2, "blank", rbln_jv_bool(false));
	struct rbln_strbuf *sb = rbln_jinja_temp_buf(c), *pad = rbln_jinja_temp_buf(c);
	struct jv s, nl, lines, r;
	size_t i;
	int64_t k;

	rbln_jcall_check(c, call, "indent", 3, kw);
	if (width.kind == JV_STR)
		rbln_jout(c, pad, width.u.s->data, width.u.s->len);
	else if (width.kind == JV_INT)
		for (k = 0; k < width.u.i && k < 256; k++)
			rbln_jout(c, pad, " ", 1);
	/* Jinja appends "\n" before splitting, so a trailing newline keeps an
	 * empty last line. */
	s = rbln_jv_stringify(c, v);
	nl = rbln_jv_cstr(c, "\n");
	s = rbln_jinja_binop(c, '+', &s, &nl, call->line);
	lines = rbln_jinja_splitlines(c, &s);
	if (rbln_jv_truthy(&first))
		rbln_jout(c, sb, pad->data, pad->len);
	for (i = 0; i < lines.u.l->n; i++) {
		const struct jstr *line = lines.u.l->items[i].u.s;

		if (i) {
			rbln_jout(c, sb, "\n", 1);
			if (line->len || rbln_jv_truthy(&blank))
				rbln_jout(c, sb, pad->data, pad->len);
		}
		rbln_jout(c, sb, line->data, line->len);
	}
	r = rbln_jinja_temp_str(c, sb);
	rbln_jinja_temp_free(c, pad);
	return r;
}

static struct jv f_safe(struct jctx *c, struct jv *v, struct jcall *call)
{
	rbln_jcall_check(c, call, "safe", 0, no_kw);
	return *v;	/* no autoescaping here, so nothing to mark */
}

static struct jv f_escape(struct jctx *c, struct jv *v, struct jcall *call)
{
	struct jv s = rbln_jv_stringify(c, v), r;
	struct rbln_strbuf *sb = rbln_jinja_temp_buf(c);
	size_t i;

	rbln_jcall_check(c, call, "escape", 0, no_kw);
	for (i = 0; i < s.u.s->len; i++) {
		char ch = s.u.s->data[i];
		const char *rep = ch == '&' ? "&amp;" : ch == '<' ? "&lt;" : ch == '>' ? "&gt;" :
				  ch == '"' ? "&#34;" : ch == '\'' ? "&#39;" : NULL;

		if (rep)
			rbln_jout(c, sb, rep, strlen(rep));
		else
			rbln_jout(c, sb, &ch, 1);
	}
	r = rbln_jinja_temp_str(c, sb);
	return r;
}

static struct jv f_attr(struct jctx *c, struct jv *v, struct jcall *call)
{
	struct jv *name = rbln_jcall_arg(call, 0, "name");

	rbln_jcall_check(c, call, "attr", 1, NULL);
	if (!name || name->kind != JV_STR)
		rbln_jinja_fail(c, call->line, "attr() needs an attribute name");
	if (v->kind == JV_NAMESPACE) {
		struct jv *found = rbln_jv_dict_get_str(v->u.d, name->u.s->data);

		return found ? *found : rbln_jv_undefined(name->u.s->data);
	}
	return rbln_jinja_method(c, v, name->u.s->data);
}

static struct jv f_count(struct jctx *c, struct jv *v, struct jcall *call)
{
	return f_length(c, v, call);
}

static const struct {
	const char *name;
	jfilter_fn fn;
} filters[] = {
	{ "abs", f_abs }, { "attr", f_attr }, { "capitalize", f_capitalize },
	{ "count", f_count }, { "d", f_default }, { "default", f_default },
	{ "dictsort", f_dictsort }, { "e", f_escape }, { "escape", f_escape },
	{ "first", f_first }, { "float", f_float }, { "forceescape", f_escape },
	{ "indent", f_indent }, { "int", f_int }, { "items", f_items }, { "join", f_join },
	{ "last", f_last }, { "length", f_length }, { "list", f_list }, { "lower", f_lower },
	{ "map", f_map }, { "max", f_max }, { "min", f_min }, { "reject", f_reject },
	{ "rejectattr", f_rejectattr }, { "replace", f_replace }, { "reverse", f_reverse },
	{ "round", f_round }, { "safe", f_safe }, { "select", f_select },
	{ "selectattr", f_selectattr }, { "sort", f_sort }, { "string", f_string },
	{ "sum", f_sum }, { "title", f_title }, { "tojson", f_tojson }, { "trim", f_trim },
	{ "unique", f_unique }, { "upper", f_upper },
};

jfilter_fn rbln_jinja_find_filter(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
		if (!strcmp(filters[i].name, name))
			return filters[i].fn;
	return NULL;
}

struct jv rbln_jinja_apply_filter(struct jctx *c, const char *name, struct jv *v, struct jcall *call)
{
	jfilter_fn fn = rbln_jinja_find_filter(name);

	if (!fn)
		rbln_jinja_fail(c, call->line, "no filter named '%s'", name);
	return fn(c, v, call);
}
