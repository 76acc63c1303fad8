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
	rbln_jp_expect_op(p, "(");
	while (!rbln_jp_is_op(p, ")")) {
		if (n->args.n || n->kwvals.n)
			rbln_jp_expect_op(p, ",");
		if (rbln_jp_is_op(p, ")"))
			break;	/* trailing comma */
		if (rbln_jp_cur(p)->kind == JT_NAME && p->t->v[p->pos + 1].kind == JT_OP &&
		    strcmp(p->t->v[p->pos + 1].text, "=") == 0) {
			rbln_jp_names_push(p, n, rbln_jp_advance(p)->text);
			rbln_jp_advance(p);
			rbln_jp_nodes_push(p, &n->kwvals, rbln_jp_parse_expression(p));
		} else {
			if (n->kwvals.n)
				rbln_jp_perror_at(p, rbln_jp_cur(p)->line, "positional argument follows keyword argument");
			rbln_jp_nodes_push(p, &n->args, rbln_jp_parse_expression(p));
		}
	}
	rbln_jp_advance(p);
}

struct jnode *rbln_jp_parse_filter(struct parser *p, struct jnode *operand)
{
	int line = rbln_jp_cur(p)->line;
	struct jnode *n = rbln_jp_node(p, JN_FILTER, line);

	n->name = rbln_jp_expect_name(p);
	if (!rbln_jinja_find_filter(n->name))
		rbln_jp_perror_at(p, line, "no filter named '%s'", n->name);
	n->a = operand;
	if (rbln_jp_is_op(p, "("))
		parse_call_args(p, n);
	return n;
}

static bool starts_test_arg(struct parser *p)
{
	struct jtok *t = rbln_jp_cur(p);

	if (t->kind == JT_NAME)
		return strcmp(t->text, "else") && strcmp(t->text, "or") && strcmp(t->text, "and");
	return t->kind == JT_STRING || t->kind == JT_INT || t->kind == JT_FLOAT || rbln_jp_is_op(p, "[") ||
	       rbln_jp_is_op(p, "{");
}

static struct jnode *parse_test(struct parser *p, struct jnode *operand)
{
	int line = rbln_jp_cur(p)->line;
	struct jnode *n = rbln_jp_node(p, JN_TEST, line);

	if (rbln_jp_is_name(p, "not")) {
		rbln_jp_advance(p);
		n->negated = true;
	}
	n->name = rbln_jp_expect_name(p);
	if (!rbln_jinja_find_test(n->name))
		rbln_jp_perror_at(p, line, "no test named '%s'", n->name);
	n->a = operand;
	if (rbln_jp_is_op(p, "(")) {
		parse_call_args(p, n);
	} else if (starts_test_arg(p)) {
		/* "x is divisibleby 3", "x is sameas none" */
		if (rbln_jp_is_name(p, "is"))
			rbln_jp_perror_at(p, line, "cannot chain multiple tests with 'is'");
		rbln_jp_nodes_push(p, &n->args, parse_postfix(p, parse_primary(p)));
	}
	return n;
}

static struct jnode *parse_filter_expr(struct parser *p, struct jnode *n)
{
	for (;;) {
		if (rbln_jp_is_op(p, "|")) {
			rbln_jp_advance(p);
			n = rbln_jp_parse_filter(p, n);
		} else if (rbln_jp_is_name(p, "is")) {
			rbln_jp_advance(p);
			n = parse_test(p, n);
		} else if (rbln_jp_is_op(p, "(")) {
			struct jnode *call = rbln_jp_node(p, JN_CALL, rbln_jp_cur(p)->line);

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
	int line = rbln_jp_cur(p)->line;
	struct jnode *parts[3] = { NULL, NULL, NULL };
	int k = 0;
	bool slice = false;
	struct jnode *n;

	rbln_jp_expect_op(p, "[");
	for (;;) {
		if (rbln_jp_is_op(p, ":")) {
			if (k == 2)
				rbln_jp_perror_at(p, line, "too many ':' in slice");
			rbln_jp_advance(p);
			slice = true;
			k++;
			continue;
		}
		if (rbln_jp_is_op(p, "]"))
			break;
		if (parts[k])
			rbln_jp_perror_at(p, rbln_jp_cur(p)->line, "expected ']' or ':', got '%s'", rbln_jp_describe(rbln_jp_cur(p)));
		parts[k] = rbln_jp_parse_expression(p);
	}
	rbln_jp_advance(p);
	if (!slice) {
		if (!parts[0])
			rbln_jp_perror_at(p, line, "empty subscript");
		n = rbln_jp_node(p, JN_GETITEM, line);
		n->a = obj;
		n->b = parts[0];
		return n;
	}
	n = rbln_jp_node(p, JN_SLICE, line);
	n->a = obj;
	rbln_jp_nodes_push(p, &n->args, parts[0]);
	rbln_jp_nodes_push(p, &n->args, parts[1]);
	rbln_jp_nodes_push(p, &n->args, parts[2]);
	return n;
}

static struct jnode *parse_postfix(struct parser *p, struct jnode *n)
{
	for (;;) {
		int line = rbln_jp_cur(p)->line;

		if (rbln_jp_is_op(p, ".")) {
			struct jnode *g;

			rbln_jp_advance(p);
			if (rbln_jp_cur(p)->kind == JT_INT) {
				/* "items.0" is items[0] in Jinja. */
				g = rbln_jp_node(p, JN_GETITEM, line);
				g->b = rbln_jp_node(p, JN_LITERAL, line);
				g->b->value = rbln_jv_int(rbln_jp_advance(p)->i);
			} else {
				g = rbln_jp_node(p, JN_GETATTR, line);
				g->name = rbln_jp_expect_name(p);
			}
			g->a = n;
			n = g;
		} else if (rbln_jp_is_op(p, "[")) {
			n = parse_subscript(p, n);
		} else if (rbln_jp_is_op(p, "(")) {
			struct jnode *call = rbln_jp_node(p, JN_CALL, line);

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
	struct jnode *n = rbln_jp_node(p, kind, rbln_jp_cur(p)->line);

	rbln_jp_advance(p);
	while (!rbln_jp_is_op(p, close)) {
		if (n->args.n)
			rbln_jp_expect_op(p, ",");
		if (rbln_jp_is_op(p, close))
			break;
		rbln_jp_nodes_push(p, &n->args, rbln_jp_parse_expression(p));
		if (kind == JN_DICT) {
			rbln_jp_expect_op(p, ":");
			rbln_jp_nodes_push(p, &n->kwvals, rbln_jp_parse_expression(p));
		}
	}
	rbln_jp_advance(p);
	return n;
}

/* "( ... )": a parenthesized expression or a tuple. */
static struct jnode *parse_paren(struct parser *p)
{
	int line = rbln_jp_advance(p)->line;
	struct jnode *first, *tuple;

	if (rbln_jp_is_op(p, ")")) {
		rbln_jp_advance(p);
		return rbln_jp_node(p, JN_TUPLE, line);
	}
	first = rbln_jp_parse_expression(p);
	if (rbln_jp_is_op(p, ")")) {
		rbln_jp_advance(p);
		return first;
	}
	tuple = rbln_jp_node(p, JN_TUPLE, line);
	rbln_jp_nodes_push(p, &tuple->args, first);
	while (rbln_jp_is_op(p, ",")) {
		rbln_jp_advance(p);
		if (rbln_jp_is_op(p, ")"))
			break;
		rbln_jp_nodes_push(p, &tuple->args, rbln_jp_parse_expression(p));
	}
	rbln_jp_expect_op(p, ")");
	return tuple;
}

static struct jnode *parse_primary(struct parser *p)
{
	struct jtok *t = rbln_jp_cur(p);
	struct jnode *n;

	if (t->kind == JT_NAME) {
		n = rbln_jp_node(p, JN_LITERAL, t->line);
		if (!strcmp(t->text, "true") || !strcmp(t->text, "True"))
			n->value = rbln_jv_bool(true);
		else if (!strcmp(t->text, "false") || !strcmp(t->text, "False"))
			n->value = rbln_jv_bool(false);
		else if (!strcmp(t->text, "none") || !strcmp(t->text, "None"))
			n->value = rbln_jv_none();
		else {
			n->kind = JN_NAME;
			n->name = t->text;
		}
		rbln_jp_advance(p);
		return n;
	}
	if (t->kind == JT_STRING) {
		/* Adjacent literals concatenate, as in Python. */
		struct rbln_strbuf sb = { 0 };

		n = rbln_jp_node(p, JN_LITERAL, t->line);
		while (rbln_jp_cur(p)->kind == JT_STRING) {
			t = rbln_jp_advance(p);
			if (rbln_strbuf_append(&sb, t->text, t->len)) {
				rbln_strbuf_free(&sb);
				rbln_jp_perror_at(p, t->line, "out of memory");
			}
		}
		n->value = rbln_jp_literal_string(p, sb.data ? sb.data : "", sb.len);
		rbln_strbuf_free(&sb);
		return n;
	}
	if (t->kind == JT_INT || t->kind == JT_FLOAT) {
		n = rbln_jp_node(p, JN_LITERAL, t->line);
		n->value = t->kind == JT_INT ? rbln_jv_int(t->i) : rbln_jv_float(t->f);
		rbln_jp_advance(p);
		return n;
	}
	if (rbln_jp_is_op(p, "("))
		return parse_paren(p);
	if (rbln_jp_is_op(p, "["))
		return parse_sequence(p, JN_LIST, "]");
	if (rbln_jp_is_op(p, "{"))
		return parse_sequence(p, JN_DICT, "}");
	rbln_jp_perror_at(p, t->line, "unexpected '%s'", rbln_jp_describe(t));
}

static struct jnode *parse_unary(struct parser *p, bool with_filter)
{
	struct jnode *n;

	rbln_jp_enter(p);
	if (rbln_jp_is_op(p, "-") || rbln_jp_is_op(p, "+")) {
		n = rbln_jp_node(p, JN_UNARY, rbln_jp_cur(p)->line);
		n->op = rbln_jp_advance(p)->text[0];
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
	struct jnode *n = rbln_jp_node(p, op == '~' ? JN_CONCAT : JN_BINOP, line);

	n->op = op;
	n->a = a;
	n->b = b;
	return n;
}

static struct jnode *parse_pow(struct parser *p)
{
	struct jnode *n = parse_unary(p, true);

	while (rbln_jp_is_op(p, "**")) {
		int line = rbln_jp_advance(p)->line;

		n = binop(p, JOP_POW, line, n, parse_unary(p, true));
	}
	return n;
}

static struct jnode *parse_math2(struct parser *p)
{
	struct jnode *n = parse_pow(p);

	for (;;) {
		int op = rbln_jp_is_op(p, "*") ? '*' : rbln_jp_is_op(p, "/") ? '/' : rbln_jp_is_op(p, "//") ? JOP_FLOORDIV :
			 rbln_jp_is_op(p, "%") ? '%' : 0;
		int line;

		if (!op)
			return n;
		line = rbln_jp_advance(p)->line;
		n = binop(p, op, line, n, parse_pow(p));
	}
}

static struct jnode *parse_concat(struct parser *p)
{
	struct jnode *n = parse_math2(p);

	while (rbln_jp_is_op(p, "~")) {
		int line = rbln_jp_advance(p)->line;

		n = binop(p, '~', line, n, parse_math2(p));
	}
	return n;
}

static struct jnode *parse_math1(struct parser *p)
{
	struct jnode *n = parse_concat(p);

	while (rbln_jp_is_op(p, "+") || rbln_jp_is_op(p, "-")) {
		struct jtok *t = rbln_jp_advance(p);

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
		if (rbln_jp_is_op(p, ops[i].op))
			return ops[i].code;
	if (rbln_jp_is_name(p, "in"))
		return JOP_IN;
	if (rbln_jp_is_name(p, "not") && p->t->v[p->pos + 1].kind == JT_NAME &&
	    strcmp(p->t->v[p->pos + 1].text, "in") == 0)
		return JOP_NOT_IN;
	return 0;
}

static struct jnode *parse_compare(struct parser *p)
{
	struct jnode *first = parse_math1(p), *n = NULL;
	int op;

	while ((op = compare_op(p))) {
		int line = rbln_jp_advance(p)->line;
		int *ops;

		if (op == JOP_NOT_IN)
			rbln_jp_advance(p);
		if (!n) {
			n = rbln_jp_node(p, JN_COMPARE, line);
			n->a = first;
		}
		ops = rbln_jp_palloc(p, (n->body.n + 1) * sizeof(*ops));
		if (n->body.n)
			memcpy(ops, n->cmp_ops, n->body.n * sizeof(*ops));
		ops[n->body.n] = op;
		n->cmp_ops = ops;
		rbln_jp_nodes_push(p, &n->body, parse_math1(p));
	}
	return n ? n : first;
}

static struct jnode *parse_not(struct parser *p)
{
	struct jnode *n;

	if (!rbln_jp_is_name(p, "not"))
		return parse_compare(p);
	rbln_jp_enter(p);
	n = rbln_jp_node(p, JN_NOT, rbln_jp_advance(p)->line);
	n->a = parse_not(p);
	p->nesting--;
	return n;
}

static struct jnode *parse_and(struct parser *p)
{
	struct jnode *n = parse_not(p);

	while (rbln_jp_is_name(p, "and")) {
		struct jnode *a = rbln_jp_node(p, JN_AND, rbln_jp_advance(p)->line);

		a->a = n;
		a->b = parse_not(p);
		n = a;
	}
	return n;
}

struct jnode *rbln_jp_parse_or(struct parser *p)
{
	struct jnode *n = parse_and(p);

	while (rbln_jp_is_name(p, "or")) {
		struct jnode *o = rbln_jp_node(p, JN_OR, rbln_jp_advance(p)->line);

		o->a = n;
		o->b = parse_and(p);
		n = o;
	}
	return n;
}

struct jnode *rbln_jp_parse_expression(struct parser *p)
{
	struct jnode *n;

	rbln_jp_enter(p);
	n = rbln_jp_parse_or(p);
	while (rbln_jp_is_name(p, "if")) {
		struct jnode *c = rbln_jp_node(p, JN_COND, rbln_jp_advance(p)->line);

		c->b = n;			/* value when true */
		c->a = rbln_jp_parse_or(p);		/* condition */
		if (rbln_jp_is_name(p, "else")) {
			rbln_jp_advance(p);
			c->c = rbln_jp_parse_expression(p);
		}
		n = c;
	}
	p->nesting--;
	return n;
}
