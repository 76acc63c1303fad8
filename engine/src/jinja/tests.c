// SPDX-License-Identifier: MIT
/* Jinja's tests ("x is defined", "n is divisibleby 3", ...). */
#include <string.h>

#include "jinja/jinja_internal.h"

static struct jv *need_arg(struct jctx *c, struct jcall *call, const char *test)
{
	if (call->nargs != 1 || call->nkw)
		rbln_jinja_fail(c, call->line, "test '%s' takes exactly one argument", test);
	return &call->args[0];
}

static void no_args(struct jctx *c, struct jcall *call, const char *test)
{
	if (call->nargs || call->nkw)
		rbln_jinja_fail(c, call->line, "test '%s' takes no arguments", test);
}

#define SIMPLE_TEST(fname, test, expr)                                        \
	static bool fname(struct jctx *c, struct jv *v, struct jcall *call) \
	{                                                                     \
		no_args(c, call, test);                                       \
		return (expr);                                                \
	}

SIMPLE_TEST(t_defined, "defined", v->kind != JV_UNDEFINED)
SIMPLE_TEST(t_undefined, "undefined", v->kind == JV_UNDEFINED)
SIMPLE_TEST(t_none, "none", v->kind == JV_NONE)
SIMPLE_TEST(t_boolean, "boolean", v->kind == JV_BOOL)
SIMPLE_TEST(t_true, "true", v->kind == JV_BOOL && v->u.b)
SIMPLE_TEST(t_false, "false", v->kind == JV_BOOL && !v->u.b)
SIMPLE_TEST(t_integer, "integer", v->kind == JV_INT)
SIMPLE_TEST(t_float, "float", v->kind == JV_FLOAT)
/* Python's numbers.Number includes bool. */
SIMPLE_TEST(t_number, "number", rbln_jv_is_number(v))
SIMPLE_TEST(t_string, "string", v->kind == JV_STR)
SIMPLE_TEST(t_mapping, "mapping", v->kind == JV_DICT)
SIMPLE_TEST(t_iterable, "iterable",
	    v->kind == JV_STR || v->kind == JV_LIST || v->kind == JV_DICT || v->kind == JV_UNDEFINED)
SIMPLE_TEST(t_sequence, "sequence", v->kind == JV_STR || v->kind == JV_LIST || v->kind == JV_DICT)
SIMPLE_TEST(t_callable, "callable", v->kind == JV_FUNC)
SIMPLE_TEST(t_escaped, "escaped", ((void)v, false))	/* nothing is marked safe here */

static int64_t int_operand(struct jctx *c, const struct jv *v, struct jcall *call,
			   const char *test)
{
	if (v->kind != JV_INT && v->kind != JV_BOOL)
		rbln_jinja_fail(c, call->line, "test '%s' needs an integer, got %s", test, rbln_jv_type_name(v));
	return v->kind == JV_INT ? v->u.i : v->u.b;
}

static bool t_odd(struct jctx *c, struct jv *v, struct jcall *call)
{
	no_args(c, call, "odd");
	return int_operand(c, v, call, "odd") % 2 != 0;
}

static bool t_even(struct jctx *c, struct jv *v, struct jcall *call)
{
	no_args(c, call, "even");
	return int_operand(c, v, call, "even") % 2 == 0;
}

static bool t_divisibleby(struct jctx *c, struct jv *v, struct jcall *call)
{
	struct jv *d = need_arg(c, call, "divisibleby");
	int64_t n = int_operand(c, d, call, "divisibleby");

	if (!n)
		rbln_jinja_fail(c, call->line, "divisibleby 0");
	return int_operand(c, v, call, "divisibleby") % n == 0;
}

static bool t_eq(struct jctx *c, struct jv *v, struct jcall *call)
{
	return rbln_jv_equal(v, need_arg(c, call, "eq"));
}

static bool t_ne(struct jctx *c, struct jv *v, struct jcall *call)
{
	return !rbln_jv_equal(v, need_arg(c, call, "ne"));
}

static int cmp(struct jctx *c, struct jv *v, struct jcall *call, const char *test)
{
	return rbln_jv_compare(c, call->line, v, need_arg(c, call, test));
}

static bool t_lt(struct jctx *c, struct jv *v, struct jcall *call)
{
	return cmp(c, v, call, "lt") < 0;
}

static bool t_le(struct jctx *c, struct jv *v, struct jcall *call)
{
	return cmp(c, v, call, "le") <= 0;
}

static bool t_gt(struct jctx *c, struct jv *v, struct jcall *call)
{
	return cmp(c, v, call, "gt") > 0;
}

static bool t_ge(struct jctx *c, struct jv *v, struct jcall *call)
{
	return cmp(c, v, call, "ge") >= 0;
}

static bool t_in(struct jctx *c, struct jv *v, struct jcall *call)
{
	return rbln_jinja_contains(c, need_arg(c, call, "in"), v, call->line);
}

/* Identity: singletons compare by value, containers by object. */
static bool t_sameas(struct jctx *c, struct jv *v, struct jcall *call)
{
	struct jv *o = need_arg(c, call, "sameas");

	if (v->kind != o->kind)
		return false;
	switch (v->kind) {
	case JV_NONE:
	case JV_UNDEFINED: return true;
	case JV_BOOL: return v->u.b == o->u.b;
	case JV_INT: return v->u.i == o->u.i;
	case JV_FLOAT: return v->u.f == o->u.f;
	case JV_STR: return v->u.s == o->u.s;
	case JV_LIST: return v->u.l == o->u.l;
	case JV_DICT:
	case JV_NAMESPACE: return v->u.d == o->u.d;
	case JV_FUNC: return v->u.fn == o->u.fn;
	case JV_LOOP: return v->u.loop == o->u.loop;
	}
	return false;
}

/* Python's str.islower()/isupper(): no character of the other case, and
 * at least one cased character. */
static bool case_is(struct jctx *c, struct jv *v, enum jcase mode)
{
	struct jv same, other;

	if (v->kind != JV_STR)
		return false;
	same = rbln_jinja_case(c, v, mode);
	other = rbln_jinja_case(c, v, mode == JCASE_LOWER ? JCASE_UPPER : JCASE_LOWER);
	return rbln_jv_equal(&same, v) && !rbln_jv_equal(&other, v);
}

static bool t_lower(struct jctx *c, struct jv *v, struct jcall *call)
{
	no_args(c, call, "lower");
	return case_is(c, v, JCASE_LOWER);
}

static bool t_upper(struct jctx *c, struct jv *v, struct jcall *call)
{
	no_args(c, call, "upper");
	return case_is(c, v, JCASE_UPPER);
}

static bool t_filter(struct jctx *c, struct jv *v, struct jcall *call)
{
	no_args(c, call, "filter");
	return v->kind == JV_STR && rbln_jinja_find_filter(v->u.s->data);
}

static bool t_test(struct jctx *c, struct jv *v, struct jcall *call)
{
	no_args(c, call, "test");
	return v->kind == JV_STR && rbln_jinja_find_test(v->u.s->data);
}

static const struct {
	const char *name;
	jtest_fn fn;
} tests[] = {
	{ "!=", t_ne }, { "<", t_lt }, { "<=", t_le }, { "==", t_eq }, { ">", t_gt }, { ">=", t_ge },
	{ "boolean", t_boolean }, { "callable", t_callable }, { "defined", t_defined },
	{ "divisibleby", t_divisibleby }, { "eq", t_eq }, { "equalto", t_eq },
	{ "escaped", t_escaped }, { "even", t_even }, { "false", t_false }, { "filter", t_filter },
	{ "float", t_float }, { "ge", t_ge }, { "greaterthan", t_gt }, { "gt", t_gt },
	{ "in", t_in }, { "integer", t_integer }, { "iterable", t_iterable }, { "le", t_le },
	{ "lessthan", t_lt }, { "lower", t_lower }, { "lt", t_lt }, { "mapping", t_mapping },
	{ "ne", t_ne }, { "none", t_none }, { "number", t_number }, { "odd", t_odd },
	{ "sameas", t_sameas }, { "sequence", t_sequence }, { "string", t_string },
	{ "test", t_test }, { "true", t_true }, { "undefined", t_undefined }, { "upper", t_upper },
};

jtest_fn rbln_jinja_find_test(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!strcmp(tests[i].name, name))
			return tests[i].fn;
	return NULL;
}

bool rbln_jinja_apply_test(struct jctx *c, const char *name, struct jv *v, struct jcall *call)
{
	jtest_fn fn = rbln_jinja_find_test(name);

	if (!fn)
		rbln_jinja_fail(c, call->line, "no test named '%s'", name);
	return fn(c, v, call);
}
