// SPDX-License-Identifier: MIT
/* Arithmetic, concatenation and membership with Python's rules and errors. */
#include <math.h>
#include <string.h>

#include "jinja/jinja_internal.h"

static const char *op_name(int op)
{
	switch (op) {
	case JOP_FLOORDIV: return "//";
	case JOP_POW: return "**";
	case '+': return "+";
	case '-': return "-";
	case '*': return "*";
	case '/': return "/";
	case '%': return "%";
	default: return "?";
	}
}

static _Noreturn void type_error(struct jctx *c, int line, int op, const struct jv *a,
				 const struct jv *b)
{
	if (a->kind == JV_UNDEFINED || b->kind == JV_UNDEFINED) {
		const struct jv *u = a->kind == JV_UNDEFINED ? a : b;

		rbln_jinja_fail(c, line, "'%s' is undefined (operand of '%s')",
			   u->undef_name ? u->undef_name : "value", op_name(op));
	}
	rbln_jinja_fail(c, line, "unsupported operand type(s) for %s: '%s' and '%s'", op_name(op),
		   rbln_jv_type_name(a), rbln_jv_type_name(b));
}

static int64_t as_int(const struct jv *v)
{
	return v->kind == JV_INT ? v->u.i : (int64_t)v->u.b;
}

/*
 * seq * times. The limits bound the result, and an empty sequence repeats
 * into an empty one at once: looping once per unit of times let '' *
 * 9223372036854775807 spin for ages (the fuzzer's find), and a product
 * times * len may not fit 64 bits, so the check divides instead.
 */
static struct jv repeat(struct jctx *c, const struct jv *seq, int64_t times, int line)
{
	size_t len = seq->kind == JV_STR ? seq->u.s->len : seq->u.l->n;
	struct jv r;
	int64_t k;
	size_t i;

	if (times < 0 || len == 0)
		times = 0;
	if (seq->kind == JV_STR) {
		struct rbln_strbuf *sb = rbln_jinja_temp_buf(c);

		if (times && (uint64_t)times > (64u << 20) / len)
			rbln_jinja_fail(c, line, "string repetition too large");
		for (k = 0; k < times; k++)
			rbln_jout(c, sb, seq->u.s->data, seq->u.s->len);
		r = rbln_jinja_temp_str(c, sb);
		return r;
	}
	if (times && (uint64_t)times > (1u << 20) / len)
		rbln_jinja_fail(c, line, "list repetition too large");
	r = rbln_jv_list(c, 0);
	r.u.l->tuple = seq->u.l->tuple;
	for (k = 0; k < times; k++)
		for (i = 0; i < seq->u.l->n; i++)
			rbln_jv_list_push(c, &r, seq->u.l->items[i]);
	return r;
}

static struct jv concat(struct jctx *c, const struct jv *a, const struct jv *b)
{
	struct jv r;
	size_t i;

	if (a->kind == JV_STR) {
		struct jstr *s = rbln_jalloc(c, sizeof(*s) + a->u.s->len + b->u.s->len + 1);

		s->len = a->u.s->len + b->u.s->len;
		memcpy(s->data, a->u.s->data, a->u.s->len);
		memcpy(s->data + a->u.s->len, b->u.s->data, b->u.s->len);
		return (struct jv){ .kind = JV_STR, .u.s = s };
	}
	r = rbln_jv_list(c, a->u.l->n + b->u.l->n);
	r.u.l->tuple = a->u.l->tuple;
	for (i = 0; i < a->u.l->n; i++)
		rbln_jv_list_push(c, &r, a->u.l->items[i]);
	for (i = 0; i < b->u.l->n; i++)
		rbln_jv_list_push(c, &r, b->u.l->items[i]);
	return r;
}

/*
 * x ** y for y >= 0 by squaring: log2(y) steps, where one multiplication per
 * unit of y let a template spin for ages on 1 ** 9223372036854775807 (the
 * fuzzer's find). Once the base's square overflows while bits of y remain,
 * the result (that square times factors of magnitude >= 1) overflows too;
 * bases 0, 1 and -1 never square past the range.
 */
static int64_t int_pow(struct jctx *c, int64_t x, int64_t y, int line)
{
	int64_t r = 1;

	while (y) {
		if ((y & 1) && __builtin_mul_overflow(r, x, &r))
			rbln_jinja_fail(c, line, "integer overflow in '**'");
		y >>= 1;
		if (y && __builtin_mul_overflow(x, x, &x))
			rbln_jinja_fail(c, line, "integer overflow in '**'");
	}
	return r;
}

static struct jv int_op(struct jctx *c, int op, int64_t x, int64_t y, int line)
{
	int64_t r;

	switch (op) {
	case '+':
		if (__builtin_add_overflow(x, y, &r))
			break;
		return rbln_jv_int(r);
	case '-':
		if (__builtin_sub_overflow(x, y, &r))
			break;
		return rbln_jv_int(r);
	case '*':
		if (__builtin_mul_overflow(x, y, &r))
			break;
		return rbln_jv_int(r);
	case '/':
		if (!y)
			rbln_jinja_fail(c, line, "division by zero");
		return rbln_jv_float((double)x / (double)y);
	case JOP_FLOORDIV:
	case '%': {
		int64_t q, m;

		if (!y)
			rbln_jinja_fail(c, line, "integer division or modulo by zero");
		if (x == INT64_MIN && y == -1)
			break;
		/* Python rounds the quotient down; the remainder takes y's sign. */
		q = x / y;
		m = x % y;
		if (m && ((m < 0) != (y < 0))) {
			q--;
			m += y;
		}
		return rbln_jv_int(op == '%' ? m : q);
	}
	case JOP_POW:
		if (y < 0)
			return rbln_jv_float(pow((double)x, (double)y));
		return rbln_jv_int(int_pow(c, x, y, line));
	}
	rbln_jinja_fail(c, line, "integer overflow in '%s'", op_name(op));
}

static struct jv float_op(struct jctx *c, int op, double x, double y, int line)
{
	switch (op) {
	case '+': return rbln_jv_float(x + y);
	case '-': return rbln_jv_float(x - y);
	case '*': return rbln_jv_float(x * y);
	case '/':
		if (y == 0.0)
			rbln_jinja_fail(c, line, "float division by zero");
		return rbln_jv_float(x / y);
	case JOP_FLOORDIV:
	case '%': {
		double m;

		if (y == 0.0)
			rbln_jinja_fail(c, line, "float modulo by zero");
		m = fmod(x, y);
		if (m != 0.0 && ((m < 0) != (y < 0)))
			m += y;
		return rbln_jv_float(op == '%' ? m : floor((x - m) / y));
	}
	case JOP_POW: return rbln_jv_float(pow(x, y));
	}
	rbln_jinja_fail(c, line, "bad operator");
}

struct jv rbln_jinja_binop(struct jctx *c, int op, const struct jv *a, const struct jv *b, int line)
{
	if (op == '~') {
		/* ~ stringifies both sides; Undefined prints as "". */
		struct jv x = rbln_jv_stringify(c, a), y = rbln_jv_stringify(c, b);

		return concat(c, &x, &y);
	}
	if (rbln_jv_is_number(a) && rbln_jv_is_number(b)) {
		if (a->kind != JV_FLOAT && b->kind != JV_FLOAT)
			return int_op(c, op, as_int(a), as_int(b), line);
		return float_op(c, op, rbln_jv_as_double(a), rbln_jv_as_double(b), line);
	}
	if (op == '+' && a->kind == b->kind && (a->kind == JV_STR || a->kind == JV_LIST))
		return concat(c, a, b);
	if (op == '*' && (a->kind == JV_STR || a->kind == JV_LIST) &&
	    (b->kind == JV_INT || b->kind == JV_BOOL))
		return repeat(c, a, as_int(b), line);
	if (op == '*' && (b->kind == JV_STR || b->kind == JV_LIST) &&
	    (a->kind == JV_INT || a->kind == JV_BOOL))
		return repeat(c, b, as_int(a), line);
	type_error(c, line, op, a, b);
}

bool rbln_jinja_contains(struct jctx *c, const struct jv *container, const struct jv *item, int line)
{
	size_t i;

	switch (container->kind) {
	case JV_STR:
		if (item->kind != JV_STR)
			rbln_jinja_fail(c, line, "'in <string>' requires string as left operand, not %s",
				   rbln_jv_type_name(item));
		return item->u.s->len == 0 ||
		       memmem(container->u.s->data, container->u.s->len, item->u.s->data,
			      item->u.s->len) != NULL;
	case JV_LIST:
		for (i = 0; i < container->u.l->n; i++)
			if (rbln_jv_equal(&container->u.l->items[i], item))
				return true;
		return false;
	case JV_DICT:
	case JV_NAMESPACE:
		return rbln_jv_dict_get(container->u.d, *item) != NULL;
	case JV_UNDEFINED:
		return false;	/* iterates as empty */
	default:
		rbln_jinja_fail(c, line, "argument of type '%s' is not iterable",
			   rbln_jv_type_name(container));
	}
}
