// SPDX-License-Identifier: MIT
/*
 * Expressions, with Jinja's operator precedence: conditional < or < and <
 * not < comparisons < + - < ~ < * / // % < ** < unary, filters and tests
 * binding to the unary operand.  Unknown filters and tests are compile
 * errors naming the filter and its line, as Jinja reports them.
 */
#include <string.h>

#include "jinja/parser.h"

static struct jnode *parse_unary(struct parser *p, bool with_filter);
static struct jnode *parse_primary(struct parser *p);
static struct jnode *parse_postfix(struct parser *p, struct jnode *n);

/* Call arguments "(a, b, key=value)"; the '(' is current. */
static void parse_call_args(struct parser *p, struct jnode *n)
{
	jp_expect_op(p, "(");
	while (!jp_is_op(p, ")")) {
		if (n->args.n || n->kwvals.n)
			jp_expect_op(p, ",");
		if (jp_is_op(p, ")"))
			break;	/* trailing comma */
		if (jp_cur(p)->kind == JT_NAME && p->t->v[p->pos + 1].kind == JT_OP &&
		    strcmp(p->t->v[p->pos + 1].text, "=") == 0) {
			jp_names_push(p, n, jp_advance(p)->text);
			jp_advance(p);
			jp_nodes_push(p, &n->kwvals, jp_parse_expression(p));
		} else {
			if (n->kwvals.n)
				jp_perror_at(p, jp_cur(p)->line, "positional argument follows keyword argument");
			jp_nodes_push(p, &n->args, jp_parse_expression(p));
		}
	}
	jp_advance(p);
}

struct jnode *jp_parse_filter(struct parser *p, struct jnode *operand)
{
	int line = jp_cur(p)->line;
	struct jnode *n = jp_node(p, JN_FILTER, line);

	n->name = jp_expect_name(p);
	if (!jinja_find_filter(n->name))
		jp_perror_at(p, line, "no filter named '%s'", n->name);
	n->a = operand;
	if (jp_is_op(p, "("))
		parse_call_args(p, n);
	return n;
}

static bool starts_test_arg(struct parser *p)
{
	struct jtok *t = jp_cur(p);

	if (t->kind == JT_NAME)
		return strcmp(t->text, "else") && strcmp(t->text, "or") && strcmp(t->text, "and");
	return t->kind == JT_STRING || t->kind == JT_INT || t->kind == JT_FLOAT || jp_is_op(p, "[") ||
	       jp_is_op(p, "{");
}

static struct jnode *parse_test(struct parser *p, struct jnode *operand)
{
	int line = jp_cur(p)->line;
	struct jnode *n = jp_node(p, JN_TEST, line);

	if (jp_is_name(p, "not")) {
		jp_advance(p);
		n->negated = true;
	}
	n->name = jp_expect_name(p);
	if (!jinja_find_test(n->name))
		jp_perror_at(p, line, "no test named '%s'", n->name);
	n->a = operand;
	if (jp_is_op(p, "(")) {
		parse_call_args(p, n);
	} else if (starts_test_arg(p)) {
		/* "x is divisibleby 3", "x is sameas none" */
		if (jp_is_name(p, "is"))
			jp_perror_at(p, line, "cannot chain multiple tests with 'is'");
		jp_nodes_push(p, &n->args, parse_postfix(p, parse_primary(p)));
	}
	return n;
}

static struct jnode *parse_filter_expr(struct parser *p, struct jnode *n)
{
	for (;;) {
		if (jp_is_op(p, "|")) {
			jp_advance(p);
			n = jp_parse_filter(p, n);
		} else if (jp_is_name(p, "is")) {
			jp_advance(p);
			n = parse_test(p, n);
		} else if (jp_is_op(p, "(")) {
			struct jnode *call = jp_node(p, JN_CALL, jp_cur(p)->line);

			call->a = n;
			parse_call_args(p, call);
			n = call;
		} else {
			return n;
		}
	}
}

/* "[...]" after an expression: an index or a slice. */
static struct jnode *parse_subscript(struct parser *p, struct jnode *obj)
{
	int line = jp_cur(p)->line;
	struct jnode *parts[3] = { NULL, NULL, NULL };
	int k = 0;
	bool slice = false;
	struct jnode *n;

	jp_expect_op(p, "[");
	for (;;) {
		if (jp_is_op(p, ":")) {
			if (k == 2)
				jp_perror_at(p, line, "too many ':' in slice");
			jp_advance(p);
			slice = true;
			k++;
			continue;
		}
		if (jp_is_op(p, "]"))
			break;
		if (parts[k])
			jp_perror_at(p, jp_cur(p)->line, "expected ']' or ':', got '%s'", jp_describe(jp_cur(p)));
		parts[k] = jp_parse_expression(p);
	}
	jp_advance(p);
	if (!slice) {
		if (!parts[0])
			jp_perror_at(p, line, "empty subscript");
		n = jp_node(p, JN_GETITEM, line);
		n->a = obj;
		n->b = parts[0];
		return n;
	}
	n = jp_node(p, JN_SLICE, line);
	n->a = obj;
	jp_nodes_push(p, &n->args, parts[0]);
	jp_nodes_push(p, &n->args, parts[1]);
	jp_nodes_push(p, &n->args, parts[2]);
	return n;
}

static struct jnode *parse_postfix(struct parser *p, struct jnode *n)
{
	for (;;) {
		int line = jp_cur(p)->line;

		if (jp_is_op(p, ".")) {
			struct jnode *g;

			jp_advance(p);
			if (jp_cur(p)->kind == JT_INT) {
				/* "items.0" is items[0] in Jinja. */
				g = jp_node(p, JN_GETITEM, line);
				g->b = jp_node(p, JN_LITERAL, line);
				g->b->value = jv_int(jp_advance(p)->i);
			} else {
				g = jp_node(p, JN_GETATTR, line);
				g->name = jp_expect_name(p);
			}
			g->a = n;
			n = g;
		} else if (jp_is_op(p, "[")) {
			n = parse_subscript(p, n);
		} else if (jp_is_op(p, "(")) {
			struct jnode *call = jp_node(p, JN_CALL, line);

			call->a = n;
			parse_call_args(p, call);
			n = call;
		} else {
			return n;
		}
	}
}

static struct jnode *parse_sequence(struct parser *p, enum jnode_kind kind, const char *close)
{
	struct jnode *n = jp_node(p, kind, jp_cur(p)->line);

	jp_advance(p);
	while (!jp_is_op(p, close)) {
		if (n->args.n)
			jp_expect_op(p, ",");
		if (jp_is_op(p, close))
			break;
		jp_nodes_push(p, &n->args, jp_parse_expression(p));
		if (kind == JN_DICT) {
			jp_expect_op(p, ":");
			jp_nodes_push(p, &n->kwvals, jp_parse_expression(p));
		}
	}
	jp_advance(p);
	return n;
}

/* "( ... )": a parenthesized expression or a tuple. */
static struct jnode *parse_paren(struct parser *p)
{
	int line = jp_advance(p)->line;
	struct jnode *first, *tuple;

	if (jp_is_op(p, ")")) {
		jp_advance(p);
		return jp_node(p, JN_TUPLE, line);
	}
	first = jp_parse_expression(p);
	if (jp_is_op(p, ")")) {
		jp_advance(p);
		return first;
	}
	tuple = jp_node(p, JN_TUPLE, line);
	jp_nodes_push(p, &tuple->args, first);
	while (jp_is_op(p, ",")) {
		jp_advance(p);
		if (jp_is_op(p, ")"))
			break;
		jp_nodes_push(p, &tuple->args, jp_parse_expression(p));
	}
	jp_expect_op(p, ")");
	return tuple;
}

static struct jnode *parse_primary(struct parser *p)
{
	struct jtok *t = jp_cur(p);
	struct jnode *n;

	if (t->kind == JT_NAME) {
		n = jp_node(p, JN_LITERAL, t->line);
		if (!strcmp(t->text, "true") || !strcmp(t->text, "True"))
			n->value = jv_bool(true);
		else if (!strcmp(t->text, "false") || !strcmp(t->text, "False"))
			n->value = jv_bool(false);
		else if (!strcmp(t->text, "none") || !strcmp(t->text, "None"))
			n->value = jv_none();
		else {
			n->kind = JN_NAME;
			n->name = t->text;
		}
		jp_advance(p);
		return n;
	}
	if (t->kind == JT_STRING) {
		/* Adjacent literals concatenate, as in Python. */
		struct rbln_strbuf sb = { 0 };

		n = jp_node(p, JN_LITERAL, t->line);
		while (jp_cur(p)->kind == JT_STRING) {
			t = jp_advance(p);
			if (rbln_strbuf_append(&sb, t->text, t->len)) {
				rbln_strbuf_free(&sb);
				jp_perror_at(p, t->line, "out of memory");
			}
		}
		n->value = jp_literal_string(p, sb.data ? sb.data : "", sb.len);
		rbln_strbuf_free(&sb);
		return n;
	}
	if (t->kind == JT_INT || t->kind == JT_FLOAT) {
		n = jp_node(p, JN_LITERAL, t->line);
		n->value = t->kind == JT_INT ? jv_int(t->i) : jv_float(t->f);
		jp_advance(p);
		return n;
	}
	if (jp_is_op(p, "("))
		return parse_paren(p);
	if (jp_is_op(p, "["))
		return parse_sequence(p, JN_LIST, "]");
	if (jp_is_op(p, "{"))
		return parse_sequence(p, JN_DICT, "}");
	jp_perror_at(p, t->line, "unexpected '%s'", jp_describe(t));
}

static struct jnode *parse_unary(struct parser *p, bool with_filter)
{
	struct jnode *n;

	jp_enter(p);
	if (jp_is_op(p, "-") || jp_is_op(p, "+")) {
		n = jp_node(p, JN_UNARY, jp_cur(p)->line);
		n->op = jp_advance(p)->text[0];
		n->a = parse_unary(p, false);
	} else {
		n = parse_postfix(p, parse_primary(p));
	}
	if (with_filter)
		n = parse_filter_expr(p, n);
	p->nesting--;
	return n;
}

static struct jnode *binop(struct parser *p, int op, int line, struct jnode *a, struct jnode *b)
{
	struct jnode *n = jp_node(p, op == '~' ? JN_CONCAT : JN_BINOP, line);

	n->op = op;
	n->a = a;
	n->b = b;
	return n;
}

static struct jnode *parse_pow(struct parser *p)
{
	struct jnode *n = parse_unary(p, true);

	while (jp_is_op(p, "**")) {
		int line = jp_advance(p)->line;

		n = binop(p, JOP_POW, line, n, parse_unary(p, true));
	}
	return n;
}

static struct jnode *parse_math2(struct parser *p)
{
	struct jnode *n = parse_pow(p);

	for (;;) {
		int op = jp_is_op(p, "*") ? '*' : jp_is_op(p, "/") ? '/' : jp_is_op(p, "//") ? JOP_FLOORDIV :
			 jp_is_op(p, "%") ? '%' : 0;
		int line;

		if (!op)
			return n;
		line = jp_advance(p)->line;
		n = binop(p, op, line, n, parse_pow(p));
	}
}

static struct jnode *parse_concat(struct parser *p)
{
	struct jnode *n = parse_math2(p);

	while (jp_is_op(p, "~")) {
		int line = jp_advance(p)->line;

		n = binop(p, '~', line, n, parse_math2(p));
	}
	return n;
}

static struct jnode *parse_math1(struct parser *p)
{
	struct jnode *n = parse_concat(p);

	while (jp_is_op(p, "+") || jp_is_op(p, "-")) {
		struct jtok *t = jp_advance(p);

		n = binop(p, t->text[0], t->line, n, parse_concat(p));
	}
	return n;
}

static int compare_op(struct parser *p)
{
	static const struct { const char *op; int code; } ops[] = {
		{ "==", JOP_EQ }, { "!=", JOP_NE }, { "<", JOP_LT }, { "<=", JOP_LE },
		{ ">", JOP_GT }, { ">=", JOP_GE },
	};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (jp_is_op(p, ops[i].op))
			return ops[i].code;
	if (jp_is_name(p, "in"))
		return JOP_IN;
	if (jp_is_name(p, "not") && p->t->v[p->pos + 1].kind == JT_NAME &&
	    strcmp(p->t->v[p->pos + 1].text, "in") == 0)
		return JOP_NOT_IN;
	return 0;
}

static struct jnode *parse_compare(struct parser *p)
{
	struct jnode *first = parse_math1(p), *n = NULL;
	int op;

	while ((op = compare_op(p))) {
		int line = jp_advance(p)->line;
		int *ops;

		if (op == JOP_NOT_IN)
			jp_advance(p);
		if (!n) {
			n = jp_node(p, JN_COMPARE, line);
			n->a = first;
		}
		ops = jp_palloc(p, (n->body.n + 1) * sizeof(*ops));
		if (n->body.n)
			memcpy(ops, n->cmp_ops, n->body.n * sizeof(*ops));
		ops[n->body.n] = op;
		n->cmp_ops = ops;
		jp_nodes_push(p, &n->body, parse_math1(p));
	}
	return n ? n : first;
}

static struct jnode *parse_not(struct parser *p)
{
	struct jnode *n;

	if (!jp_is_name(p, "not"))
		return parse_compare(p);
	jp_enter(p);
	n = jp_node(p, JN_NOT, jp_advance(p)->line);
	n->a = parse_not(p);
	p->nesting--;
	return n;
}

static struct jnode *parse_and(struct parser *p)
{
	struct jnode *n = parse_not(p);

	while (jp_is_name(p, "and")) {
		struct jnode *a = jp_node(p, JN_AND, jp_advance(p)->line);

		a->a = n;
		a->b = parse_not(p);
		n = a;
	}
	return n;
}

struct jnode *jp_parse_or(struct parser *p)
{
	struct jnode *n = parse_and(p);

	while (jp_is_name(p, "or")) {
		struct jnode *o = jp_node(p, JN_OR, jp_advance(p)->line);

		o->a = n;
		o->b = parse_and(p);
		n = o;
	}
	return n;
}

struct jnode *jp_parse_expression(struct parser *p)
{
	struct jnode *n;

	jp_enter(p);
	n = jp_parse_or(p);
	while (jp_is_name(p, "if")) {
		struct jnode *c = jp_node(p, JN_COND, jp_advance(p)->line);

		c->b = n;			/* value when true */
		c->a = jp_parse_or(p);		/* condition */
		if (jp_is_name(p, "else")) {
			jp_advance(p);
			c->c = jp_parse_expression(p);
		}
		n = c;
	}
	p->nesting--;
	return n;
}
