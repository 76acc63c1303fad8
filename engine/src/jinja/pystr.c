// SPDX-License-Identifier: MIT
/*
 * Text forms of values as Python produces them: str(), repr() (used when a
 * template prints a list or dict), float repr, and json.dumps for tojson.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja/jinja_internal.h"
#include "util/utf8.h"

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

static void out_str(struct jctx *c, struct rbln_strbuf *sb, const char *s)
{
	rbln_jout(c, sb, s, strlen(s));
}

static void put(char *buf, size_t len, size_t *o, const char *s, size_t n)
{
	while (n-- && *o + 1 < len)
		buf[(*o)++] = *s++;
	buf[*o] = '\0';
}

static void put_zeros(char *buf, size_t len, size_t *o, int n)
{
	while (n-- > 0)
		put(buf, len, o, "0", 1);
}

void rbln_jv_format_float(char *buf, size_t len, double f)
{
	char tmp[40], digits[24], expbuf[16];
	int prec, exp, nd = 0;
	size_t o = 0, i;
	char *e;

	if (isnan(f) || isinf(f)) {
		snprintf(buf, len, "%s", isnan(f) ? "nan" : f < 0 ? "-inf" : "inf");
		return;
	}
	/* The shortest digit string that reads back to the same double. */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, f);
		if (strtod(tmp, NULL) == f)
			break;
	}
	e = strchr(tmp, 'e');
	exp = atoi(e + 1);
	for (i = 0; tmp + i < e; i++)
		if (tmp[i] >= '0' && tmp[i] <= '9')
			digits[nd++] = tmp[i];
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (signbit(f))
		put(buf, len, &o, "-", 1);
	/* repr() switches to exponent form outside 1e-4 <= |f| < 1e16. */
	if (exp < -4 || exp >= 16) {
		put(buf, len, &o, digits, 1);
		if (nd > 1) {
			put(buf, len, &o, ".", 1);
			put(buf, len, &o, digits + 1, (size_t)nd - 1);
		}
		snprintf(expbuf, sizeof(expbuf), "e%c%02d", exp < 0 ? '-' : '+', abs(exp));
		put(buf, len, &o, expbuf, strlen(expbuf));
	} else if (exp < 0) {
		put(buf, len, &o, "0.", 2);
		put_zeros(buf, len, &o, -exp - 1);
		put(buf, len, &o, digits, (size_t)nd);
	} else if (nd <= exp + 1) {
		put(buf, len, &o, digits, (size_t)nd);
		put_zeros(buf, len, &o, exp + 1 - nd);
		put(buf, len, &o, ".0", 2);
	} else {
		put(buf, len, &o, digits, (size_t)exp + 1);
		put(buf, len, &o, ".", 1);
		put(buf, len, &o, digits + exp + 1, (size_t)(nd - exp - 1));
	}
}

/* Python's str.isprintable(): not Unicode "Other" or "Separator" (space excepted). */
static bool printable(struct jctx *c, uint32_t cp)
{
	pcre2_match_data *md;
	char u[4];
	size_t n;
	int rc;

	if (cp < 0x7F)
		return cp >= 0x20;
	if (!c->nonprint_re) {
		PCRE2_SIZE off;
		int e;

		c->nonprint_re = pcre2_compile((PCRE2_SPTR) "[\\p{C}\\p{Z}]", PCRE2_ZERO_TERMINATED,
					       PCRE2_UTF | PCRE2_UCP, &e, &off, NULL);
		if (!c->nonprint_re)
			rbln_jinja_fail(c, 0, "out of memory");
	}
	n = rbln_utf8_encode(cp, u);
	md = pcre2_match_data_create(1, NULL);
	if (!md)
		rbln_jinja_fail(c, 0, "out of memory");
	rc = pcre2_match(c->nonprint_re, (PCRE2_SPTR)u, n, 0, 0, md, NULL);
	pcre2_match_data_free(md);
	return rc < 0;
}

static void repr_string(struct jctx *c, struct rbln_strbuf *sb, const struct jstr *s)
{
	bool has_single = memchr(s->data, '\'', s->len) != NULL;
	char quote = has_single && !memchr(s->data, '"', s->len) ? '"' : '\'';
	size_t i = 0, adv;
	char buf[16];

	rbln_jout(c, sb, &quote, 1);
	while (i < s->len) {
		uint32_t cp;

		if (rbln_utf8_next(s->data + i, s->len - i, &adv, &cp) != RBLN_UTF8_OK) {
			cp = (unsigned char)s->data[i];
			adv = 1;
		}
		if (cp == '\\' || cp == (uint32_t)quote) {
			buf[0] = '\\';
			buf[1] = (char)cp;
			rbln_jout(c, sb, buf, 2);
		} else if (cp == '\n' || cp == '\r' || cp == '\t') {
			out_str(c, sb, cp == '\n' ? "\\n" : cp == '\r' ? "\\r" : "\\t");
		} else if (printable(c, cp)) {
			rbln_jout(c, sb, s->data + i, adv);
		} else {
			snprintf(buf, sizeof(buf), cp < 0x100 ? "\\x%02x" : cp < 0x10000 ? "\\u%04x" :
								      "\\U%08x", cp);
			out_str(c, sb, buf);
		}
		i += adv;
	}
	rbln_jout(c, sb, &quote, 1);
}

static void repr_items(struct jctx *c, struct rbln_strbuf *sb, const struct jv *v)
{
	size_t i;

	/* A namespace can hold itself: printing it must not recurse forever. */
	rbln_jinja_nest_enter(c, 0);
	if (v->kind == JV_LIST) {
		const struct jlist *l = v->u.l;

		out_str(c, sb, l->tuple ? "(" : "[");
		for (i = 0; i < l->n; i++) {
			if (i)
				out_str(c, sb, ", ");
			rbln_jv_repr(c, sb, &l->items[i]);
		}
		out_str(c, sb, l->tuple ? (l->n == 1 ? ",)" : ")") : "]");
		rbln_jinja_nest_leave(c);
		return;
	}
	out_str(c, sb, "{");
	for (i = 0; i < v->u.d->n; i++) {
		if (i)
			out_str(c, sb, ", ");
		rbln_jv_repr(c, sb, &v->u.d->keys[i]);
		out_str(c, sb, ": ");
		rbln_jv_repr(c, sb, &v->u.d->vals[i]);
	}
	out_str(c, sb, "}");
	rbln_jinja_nest_leave(c);
}

void rbln_jv_repr(struct jctx *c, struct rbln_strbuf *sb, const struct jv *v)
{
	if (v->kind == JV_STR)
		repr_string(c, sb, v->u.s);
	else if (v->kind == JV_LIST || v->kind == JV_DICT)
		repr_items(c, sb, v);
	else if (v->kind == JV_UNDEFINED)
		out_str(c, sb, "Undefined");
	else
		rbln_jv_to_str(c, sb, v);
}

void rbln_jv_to_str(struct jctx *c, struct rbln_strbuf *sb, const struct jv *v)
{
	char buf[48];

	switch (v->kind) {
	case JV_UNDEFINED:
		return;	/* Jinja's default Undefined prints as nothing */
	case JV_NONE:
		out_str(c, sb, "None");
		return;
	case JV_BOOL:
		out_str(c, sb, v->u.b ? "True" : "False");
		return;
	case JV_INT:
		snprintf(buf, sizeof(buf), "%lld", (long long)v->u.i);
		out_str(c, sb, buf);
		return;
	case JV_FLOAT:
		rbln_jv_format_float(buf, sizeof(buf), v->u.f);
		out_str(c, sb, buf);
		return;
	case JV_STR:
		rbln_jout(c, sb, v->u.s->data, v->u.s->len);
		return;
	case JV_LIST:
	case JV_DICT:
		repr_items(c, sb, v);
		return;
	case JV_NAMESPACE: {
		struct jv as_dict = { .kind = JV_DICT, .u.d = v->u.d };

		out_str(c, sb, "<Namespace ");
		repr_items(c, sb, &as_dict);
		out_str(c, sb, ">");
		return;
	}
	case JV_FUNC:
		snprintf(buf, sizeof(buf), "<function %.30s>", v->u.fn->name);
		out_str(c, sb, buf);
		return;
	case JV_LOOP:
		snprintf(buf, sizeof(buf), "<LoopContext %zu/%zu>", v->u.loop->index + 1,
			 v->u.loop->items->n);
		out_str(c, sb, buf);
		return;
	}
}

struct jv rbln_jv_stringify(struct jctx *c, const struct jv *v)
{
	struct rbln_strbuf *sb;

	if (v->kind == JV_STR)
		return *v;
	sb = rbln_jinja_temp_buf(c);
	rbln_jv_to_str(c, sb, v);
	return rbln_jinja_temp_str(c, sb);
}

/* ---- json.dumps ---- */

struct json_opts {
	bool ensure_ascii;
	int indent;		/* < 0: single line */
	const char *item_sep, *key_sep;
	bool sort_keys;
	int line;
};

static void json_string(struct jctx *c, struct rbln_strbuf *sb, const char *s, size_t n,
			bool ensure_ascii)
{
	size_t i = 0, adv;
	char buf[16];

	out_str(c, sb, "\"");
	while (i < n) {
		uint32_t cp;
		unsigned char ch = (unsigned char)s[i];

		if (rbln_utf8_next(s + i, n - i, &adv, &cp) != RBLN_UTF8_OK) {
			cp = ch;
			adv = 1;
		}
		if (cp == '"' || cp == '\\') {
			buf[0] = '\\';
			buf[1] = (char)cp;
			rbln_jout(c, sb, buf, 2);
		} else if (cp == '\n' || cp == '\r' || cp == '\t' || cp == '\b' || cp == '\f') {
			out_str(c, sb, cp == '\n' ? "\\n" : cp == '\r' ? "\\r" : cp == '\t' ? "\\t" :
				       cp == '\b' ? "\\b" : "\\f");
		} else if (cp < 0x20 || (ensure_ascii && cp >= 0x7F)) {
			if (cp >= 0x10000) {
				uint32_t v = cp - 0x10000;

				snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", 0xD800 + (v >> 10),
					 0xDC00 + (v & 0x3FF));
			} else {
				snprintf(buf, sizeof(buf), "\\u%04x", cp);
			}
			out_str(c, sb, buf);
		} else {
			rbln_jout(c, sb, s + i, adv);
		}
		i += adv;
	}
	out_str(c, sb, "\"");
}

static void json_newline(struct jctx *c, struct rbln_strbuf *sb, const struct json_opts *o,
			 int level)
{
	int i;

	if (o->indent < 0)
		return;
	out_str(c, sb, "\n");
	for (i = 0; i < level * o->indent; i++)
		out_str(c, sb, " ");
}

static void json_value(struct jctx *c, struct rbln_strbuf *sb, const struct jv *v,
		       const struct json_opts *o, int level);

/* Python's json turns non-string keys into strings. */
static void json_key(struct jctx *c, struct rbln_strbuf *sb, const struct jv *k,
		     const struct json_opts *o)
{
	char buf[48];

	switch (k->kind) {
	case JV_STR:
		json_string(c, sb, k->u.s->data, k->u.s->len, o->ensure_ascii);
		return;
	case JV_BOOL:
		out_str(c, sb, k->u.b ? "\"true\"" : "\"false\"");
		return;
	case JV_NONE:
		out_str(c, sb, "\"null\"");
		return;
	case JV_INT:
		snprintf(buf, sizeof(buf), "\"%lld\"", (long long)k->u.i);
		out_str(c, sb, buf);
		return;
	case JV_FLOAT:
		out_str(c, sb, "\"");
		json_value(c, sb, k, o, 0);
		out_str(c, sb, "\"");
		return;
	default:
		rbln_jinja_fail(c, o->line, "keys must be str, int, float, bool or None, not %s",
			   rbln_jv_type_name(k));
	}
}

static int key_order(const void *a, const void *b)
{
	const struct jv *x = *(const struct jv *const *)a, *y = *(const struct jv *const *)b;
	size_t n;
	int r;

	if (x->kind != JV_STR || y->kind != JV_STR)
		return 0;
	n = x->u.s->len < y->u.s->len ? x->u.s->len : y->u.s->len;
	r = memcmp(x->u.s->data, y->u.s->data, n);
	return r ? r : (x->u.s->len > y->u.s->len) - (x->u.s->len < y->u.s->len);
}

static void json_object_(struct jctx *c, struct rbln_strbuf *sb, const struct jdict *d,
			 const struct json_opts *o, int level)
{
	const struct jv **order;
	size_t i;

	if (!d->n) {
		out_str(c, sb, "{}");
		return;
	}
	order = rbln_jalloc(c, d->n * sizeof(*order));
	for (i = 0; i < d->n; i++)
		order[i] = &d->keys[i];
	if (o->sort_keys)
		qsort(order, d->n, sizeof(*order), key_order);
	out_str(c, sb, "{");
	for (i = 0; i < d->n; i++) {
		size_t k = (size_t)(order[i] - d->keys);

		if (i)
			out_str(c, sb, o->item_sep);
		json_newline(c, sb, o, level + 1);
		json_key(c, sb, &d->keys[k], o);
		out_str(c, sb, o->key_sep);
		json_value(c, sb, &d->vals[k], o, level + 1);
	}
	json_newline(c, sb, o, level);
	out_str(c, sb, "}");
}

static void json_value(struct jctx *c, struct rbln_strbuf *sb, const struct jv *v,
		       const struct json_opts *o, int level)
{
	char buf[48];
	size_t i;

	if (level > 100)
		rbln_jinja_fail(c, o->line, "tojson: value nested too deeply");
	switch (v->kind) {
	case JV_NONE:
		out_str(c, sb, "null");
		return;
	case JV_BOOL:
		out_str(c, sb, v->u.b ? "true" : "false");
		return;
	case JV_INT:
		rbln_jv_to_str(c, sb, v);
		return;
	case JV_FLOAT:
		if (isnan(v->u.f) || isinf(v->u.f)) {
			out_str(c, sb, isnan(v->u.f) ? "NaN" : v->u.f < 0 ? "-Infinity" : "Infinity");
			return;
		}
		rbln_jv_format_float(buf, sizeof(buf), v->u.f);
		out_str(c, sb, buf);
		return;
	case JV_STR:
		json_string(c, sb, v->u.s->data, v->u.s->len, o->ensure_ascii);
		return;
	case JV_LIST:
		if (!v->u.l->n) {
			out_str(c, sb, "[]");
			return;
		}
		out_str(c, sb, "[");
		for (i = 0; i < v->u.l->n; i++) {
			if (i)
				out_str(c, sb, o->item_sep);
			json_newline(c, sb, o, level + 1);
			json_value(c, sb, &v->u.l->items[i], o, level + 1);
		}
		json_newline(c, sb, o, level);
		out_str(c, sb, "]");
		return;
	case JV_DICT:
		json_object_(c, sb, v->u.d, o, level);
		return;
	default:
		rbln_jinja_fail(c, o->line, "Object of type %s is not JSON serializable",
			   rbln_jv_type_name(v));
	}
}

void rbln_jv_to_json(struct jctx *c, struct rbln_strbuf *sb, const struct jv *v, bool ensure_ascii,
		int indent, const char *item_sep, const char *key_sep, bool sort_keys, int line)
{
	struct json_opts o = { ensure_ascii, indent, item_sep, key_sep, sort_keys, line };

	json_value(c, sb, v, &o, 0);
}
