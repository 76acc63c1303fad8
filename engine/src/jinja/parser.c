// SPDX-License-Identifier: MIT
/*
 * Recursive-descent parser from tokens to the AST, with Jinja's grammar and
 * operator precedence (conditional < or < and < not < comparisons < + - <
 * ~ < * / // % < ** < unary, with filters and tests binding to the unary
 * operand).  Unknown filters, tests and tags are compile errors naming the
 * construct and its line, as Jinja reports them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jinja/jinja_internal.h"

#define MAX_NESTING 200	/* bounds recursion on hostile input */

struct parser {
	struct jtokens *t;
	size_t pos;
	struct jarena *a;
	const char *name;
	struct rbln_error *err;
	jmp_buf fail;
	int nesting;
};

static _Noreturn void perror_at(struct parser *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static _Noreturn void perror_at(struct parser *p, int line, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rbln_error_set(p->err, -EINVAL, "%s line %d: %s", p->name, line, msg);
	longjmp(p->fail, 1);
}

static void *palloc(struct parser *p, size_t n)
{
	void *m = jarena_alloc(p->a, n);

	if (!m) {
		rbln_error_set(p->err, -ENOMEM, "out of memory");
		longjmp(p->fail, 1);
	}
	return m;
}

static struct jtok *cur(struct parser *p)
{
	return &p->t->v[p->pos];
}

static struct jtok *advance(struct parser *p)
{
	struct jtok *t = cur(p);

	if (t->kind != JT_EOF)
		p->pos++;
	return t;
}

static bool is_op(struct parser *p, const char *op)
{
	struct jtok *t = cur(p);

	return t->kind == JT_OP && strcmp(t->text, op) == 0;
}

static bool is_name(struct parser *p, const char *name)
{
	struct jtok *t = cur(p);

	return t->kind == JT_NAME && strcmp(t->text, name) == 0;
}

static const char *describe(struct jtok *t)
{
	switch (t->kind) {
	case JT_EOF: return "end of template";
	case JT_DATA: return "template data";
	case JT_VAR_BEGIN: return "{{";
	case JT_VAR_END: return "}}";
	case JT_BLOCK_BEGIN: return "{%";
	case JT_BLOCK_END: return "%}";
	case JT_STRING: return "string";
	case JT_INT: return "integer";
	case JT_FLOAT: return "float";
	case JT_NAME:
	case JT_OP: return t->text;
	}
	return "token";
}

static void expect_op(struct parser *p, const char *op)
{
	if (!is_op(p, op))
		perror_at(p, cur(p)->line, "expected '%s', got '%s'", op, describe(cur(p)));
	advance(p);
}

static void expect_kind(struct parser *p, enum jtok_kind kind, const char *what)
{
	if (cur(p)->kind != kind)
		perror_at(p, cur(p)->line, "expected %s, got '%s'", what, describe(cur(p)));
	advance(p);
}

static const char *expect_name(struct parser *p)
{
	if (cur(p)->kind != JT_NAME)
		perror_at(p, cur(p)->line, "expected a name, got '%s'", describe(cur(p)));
	return advance(p)->text;
}

static struct jnode *node(struct parser *p, enum jnode_kind kind, int line)
{
	struct jnode *n = palloc(p, sizeof(*n));

	n->kind = kind;
	n->line = line;
	return n;
}

static void nodes_push(struct parser *p, struct jnodes *l, struct jnode *n)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		struct jnode **v = palloc(p, cap * sizeof(*v));

		if (l->n)
			memcpy(v, l->v, l->n * sizeof(*v));
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = n;
}

static void names_push(struct parser *p, struct jnode *n, const char *name)
{
	const char **v = palloc(p, (n->nkwnames + 1) * sizeof(*v));

	if (n->nkwnames)
		memcpy(v, n->kwnames, n->nkwnames * sizeof(*v));
	v[n->nkwnames++] = name;
	n->kwnames = v;
}

static struct jv literal_string(struct parser *p, const char *s, size_t len)
{
	struct jstr *js = palloc(p, sizeof(*js) + len + 1);

	js->len = len;
	memcpy(js->data, s, len);
	js->data[len] = '\0';
	return (struct jv){ .kind = JV_STR, .u.s = js };
}

static void enter(struct parser *p)
{
	if (++p->nesting > MAX_NESTING)
		perror_at(p, cur(p)->line, "expression nested too deeply");
}

/* ---- expressions ---- */

static struct jnode *parse_expression(struct parser *p);
static struct jnode *parse_or(struct parser *p);
static struct jnode *parse_unary(struct parser *p, bool with_filter);
static struct jnode *parse_primary(struct parser *p);
static struct jnode *parse_postfix(struct parser *p, struct jnode *n);

/* Call arguments "(a, b, key=value)"; the '(' is current. */
static void parse_call_args(struct parser *p, struct jnode *n)
{
	expect_op(p, "(");
	while (!is_op(p, ")")) {
		if (n->args.n || n->kwvals.n)
			expect_op(p, ",");
		if (is_op(p, ")"))
			break;	/* trailing comma */
		if (cur(p)->kind == JT_NAME && p->t->v[p->pos + 1].kind == JT_OP &&
		    strcmp(p->t->v[p->pos + 1].text, "=") == 0) {
			names_push(p, n, advance(p)->text);
			advance(p);
			nodes_push(p, &n->kwvals, parse_expression(p));
		} else {
			if (n->kwvals.n)
				perror_at(p, cur(p)->line, "positional argument follows keyword argument");
			nodes_push(p, &n->args, parse_expression(p));
		}
	}
	advance(p);
}

static struct jnode *parse_filter(struct parser *p, struct jnode *operand)
{
	int line = cur(p)->line;
	struct jnode *n = node(p, JN_FILTER, line);

	n->name = expect_name(p);
	if (!jinja_find_filter(n->name))
		perror_at(p, line, "no filter named '%s'", n->name);
	n->a = operand;
	if (is_op(p, "("))
		parse_call_args(p, n);
	return n;
}

static bool starts_test_arg(struct parser *p)
{
	struct jtok *t = cur(p);

	if (t->kind == JT_NAME)
		return strcmp(t->text, "else") && strcmp(t->text, "or") && strcmp(t->text, "and");
	return t->kind == JT_STRING || t->kind == JT_INT || t->kind == JT_FLOAT || is_op(p, "[") ||
	       is_op(p, "{");
}

static struct jnode *parse_test(struct parser *p, struct jnode *operand)
{
	int line = cur(p)->line;
	struct jnode *n = node(p, JN_TEST, line);

	if (is_name(p, "not")) {
		advance(p);
		n->negated = true;
	}
	n->name = expect_name(p);
	if (!jinja_find_test(n->name))
		perror_at(p, line, "no test named '%s'", n->name);
	n->a = operand;
	if (is_op(p, "(")) {
		parse_call_args(p, n);
	} else if (starts_test_arg(p)) {
		/* "x is divisibleby 3", "x is sameas none" */
		if (is_name(p, "is"))
			perror_at(p, line, "cannot chain multiple tests with 'is'");
		nodes_push(p, &n->args, parse_postfix(p, parse_primary(p)));
	}
	return n;
}

static struct jnode *parse_filter_expr(struct parser *p, struct jnode *n)
{
	for (;;) {
		if (is_op(p, "|")) {
			advance(p);
			n = parse_filter(p, n);
		} else if (is_name(p, "is")) {
			advance(p);
			n = parse_test(p, n);
		} else if (is_op(p, "(")) {
			struct jnode *call = node(p, JN_CALL, cur(p)->line);

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
	int line = cur(p)->line;
	struct jnode *parts[3] = { NULL, NULL, NULL };
	int k = 0;
	bool slice = false;
	struct jnode *n;

	expect_op(p, "[");
	for (;;) {
		if (is_op(p, ":")) {
			if (k == 2)
				perror_at(p, line, "too many ':' in slice");
			advance(p);
			slice = true;
			k++;
			continue;
		}
		if (is_op(p, "]"))
			break;
		if (parts[k])
			perror_at(p, cur(p)->line, "expected ']' or ':', got '%s'", describe(cur(p)));
		parts[k] = parse_expression(p);
	}
	advance(p);
	if (!slice) {
		if (!parts[0])
			perror_at(p, line, "empty subscript");
		n = node(p, JN_GETITEM, line);
		n->a = obj;
		n->b = parts[0];
		return n;
	}
	n = node(p, JN_SLICE, line);
	n->a = obj;
	nodes_push(p, &n->args, parts[0]);
	nodes_push(p, &n->args, parts[1]);
	nodes_push(p, &n->args, parts[2]);
	return n;
}

static struct jnode *parse_postfix(struct parser *p, struct jnode *n)
{
	for (;;) {
		int line = cur(p)->line;

		if (is_op(p, ".")) {
			struct jnode *g;

			advance(p);
			if (cur(p)->kind == JT_INT) {
				/* "items.0" is items[0] in Jinja. */
				g = node(p, JN_GETITEM, line);
				g->b = node(p, JN_LITERAL, line);
				g->b->value = jv_int(advance(p)->i);
			} else {
				g = node(p, JN_GETATTR, line);
				g->name = expect_name(p);
			}
			g->a = n;
			n = g;
		} else if (is_op(p, "[")) {
			n = parse_subscript(p, n);
		} else if (is_op(p, "(")) {
			struct jnode *call = node(p, JN_CALL, line);

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
	struct jnode *n = node(p, kind, cur(p)->line);

	advance(p);
	while (!is_op(p, close)) {
		if (n->args.n)
			expect_op(p, ",");
		if (is_op(p, close))
			break;
		nodes_push(p, &n->args, parse_expression(p));
		if (kind == JN_DICT) {
			expect_op(p, ":");
			nodes_push(p, &n->kwvals, parse_expression(p));
		}
	}
	advance(p);
	return n;
}

/* "( ... )": a parenthesized expression or a tuple. */
static struct jnode *parse_paren(struct parser *p)
{
	int line = advance(p)->line;
	struct jnode *first, *tuple;

	if (is_op(p, ")")) {
		advance(p);
		return node(p, JN_TUPLE, line);
	}
	first = parse_expression(p);
	if (is_op(p, ")")) {
		advance(p);
		return first;
	}
	tuple = node(p, JN_TUPLE, line);
	nodes_push(p, &tuple->args, first);
	while (is_op(p, ",")) {
		advance(p);
		if (is_op(p, ")"))
			break;
		nodes_push(p, &tuple->args, parse_expression(p));
	}
	expect_op(p, ")");
	return tuple;
}

static struct jnode *parse_primary(struct parser *p)
{
	struct jtok *t = cur(p);
	struct jnode *n;

	if (t->kind == JT_NAME) {
		n = node(p, JN_LITERAL, t->line);
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
		advance(p);
		return n;
	}
	if (t->kind == JT_STRING) {
		/* Adjacent literals concatenate, as in Python. */
		struct rbln_strbuf sb = { 0 };

		n = node(p, JN_LITERAL, t->line);
		while (cur(p)->kind == JT_STRING) {
			t = advance(p);
			if (rbln_strbuf_append(&sb, t->text, t->len)) {
				rbln_strbuf_free(&sb);
				perror_at(p, t->line, "out of memory");
			}
		}
		n->value = literal_string(p, sb.data ? sb.data : "", sb.len);
		rbln_strbuf_free(&sb);
		return n;
	}
	if (t->kind == JT_INT || t->kind == JT_FLOAT) {
		n = node(p, JN_LITERAL, t->line);
		n->value = t->kind == JT_INT ? jv_int(t->i) : jv_float(t->f);
		advance(p);
		return n;
	}
	if (is_op(p, "("))
		return parse_paren(p);
	if (is_op(p, "["))
		return parse_sequence(p, JN_LIST, "]");
	if (is_op(p, "{"))
		return parse_sequence(p, JN_DICT, "}");
	perror_at(p, t->line, "unexpected '%s'", describe(t));
}

static struct jnode *parse_unary(struct parser *p, bool with_filter)
{
	struct jnode *n;

	enter(p);
	if (is_op(p, "-") || is_op(p, "+")) {
		n = node(p, JN_UNARY, cur(p)->line);
		n->op = advance(p)->text[0];
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
	struct jnode *n = node(p, op == '~' ? JN_CONCAT : JN_BINOP, line);

	n->op = op;
	n->a = a;
	n->b = b;
	return n;
}

static struct jnode *parse_pow(struct parser *p)
{
	struct jnode *n = parse_unary(p, true);

	while (is_op(p, "**")) {
		int line = advance(p)->line;

		n = binop(p, JOP_POW, line, n, parse_unary(p, true));
	}
	return n;
}

static struct jnode *parse_math2(struct parser *p)
{
	struct jnode *n = parse_pow(p);

	for (;;) {
		int op = is_op(p, "*") ? '*' : is_op(p, "/") ? '/' : is_op(p, "//") ? JOP_FLOORDIV :
			 is_op(p, "%") ? '%' : 0;
		int line;

		if (!op)
			return n;
		line = advance(p)->line;
		n = binop(p, op, line, n, parse_pow(p));
	}
}

static struct jnode *parse_concat(struct parser *p)
{
	struct jnode *n = parse_math2(p);

	while (is_op(p, "~")) {
		int line = advance(p)->line;

		n = binop(p, '~', line, n, parse_math2(p));
	}
	return n;
}

static struct jnode *parse_math1(struct parser *p)
{
	struct jnode *n = parse_concat(p);

	while (is_op(p, "+") || is_op(p, "-")) {
		struct jtok *t = advance(p);

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
		if (is_op(p, ops[i].op))
			return ops[i].code;
	if (is_name(p, "in"))
		return JOP_IN;
	if (is_name(p, "not") && p->t->v[p->pos + 1].kind == JT_NAME &&
	    strcmp(p->t->v[p->pos + 1].text, "in") == 0)
		return JOP_NOT_IN;
	return 0;
}

static struct jnode *parse_compare(struct parser *p)
{
	struct jnode *first = parse_math1(p), *n = NULL;
	int op;

	while ((op = compare_op(p))) {
		int line = advance(p)->line;
		int *ops;

		if (op == JOP_NOT_IN)
			advance(p);
		if (!n) {
			n = node(p, JN_COMPARE, line);
			n->a = first;
		}
		ops = palloc(p, (n->body.n + 1) * sizeof(*ops));
		if (n->body.n)
			memcpy(ops, n->cmp_ops, n->body.n * sizeof(*ops));
		ops[n->body.n] = op;
		n->cmp_ops = ops;
		nodes_push(p, &n->body, parse_math1(p));
	}
	return n ? n : first;
}

static struct jnode *parse_not(struct parser *p)
{
	struct jnode *n;

	if (!is_name(p, "not"))
		return parse_compare(p);
	enter(p);
	n = node(p, JN_NOT, advance(p)->line);
	n->a = parse_not(p);
	p->nesting--;
	return n;
}

static struct jnode *parse_and(struct parser *p)
{
	struct jnode *n = parse_not(p);

	while (is_name(p, "and")) {
		struct jnode *a = node(p, JN_AND, advance(p)->line);

		a->a = n;
		a->b = parse_not(p);
		n = a;
	}
	return n;
}

static struct jnode *parse_or(struct parser *p)
{
	struct jnode *n = parse_and(p);

	while (is_name(p, "or")) {
		struct jnode *o = node(p, JN_OR, advance(p)->line);

		o->a = n;
		o->b = parse_and(p);
		n = o;
	}
	return n;
}

static struct jnode *parse_expression(struct parser *p)
{
	struct jnode *n;

	enter(p);
	n = parse_or(p);
	while (is_name(p, "if")) {
		struct jnode *c = node(p, JN_COND, advance(p)->line);

		c->b = n;			/* value when true */
		c->a = parse_or(p);		/* condition */
		if (is_name(p, "else")) {
			advance(p);
			c->c = parse_expression(p);
		}
		n = c;
	}
	p->nesting--;
	return n;
}

/* ---- statements ---- */

static void parse_body(struct parser *p, struct jnodes *body, const char *const *ends);

static bool at_end_tag(struct parser *p, const char *const *ends)
{
	size_t i;

	if (cur(p)->kind != JT_BLOCK_BEGIN || p->t->v[p->pos + 1].kind != JT_NAME)
		return false;
	for (i = 0; ends && ends[i]; i++)
		if (strcmp(p->t->v[p->pos + 1].text, ends[i]) == 0)
			return true;
	return false;
}

/* Consumes "{% name" of an end tag and returns the name. */
static const char *take_end_tag(struct parser *p)
{
	advance(p);
	return advance(p)->text;
}

static struct jnode *parse_if(struct parser *p, int line)
{
	static const char *const ends[] = { "elif", "else", "endif", NULL };
	struct jnode *n = node(p, JN_IF, line);
	const char *tag;

	n->a = parse_expression(p);
	expect_kind(p, JT_BLOCK_END, "'%}'");
	parse_body(p, &n->body, ends);
	tag = take_end_tag(p);
	if (!strcmp(tag, "elif")) {
		/* elif is an if nested in the else branch. */
		n->c = parse_if(p, line);
		return n;
	}
	if (!strcmp(tag, "else")) {
		static const char *const endif[] = { "endif", NULL };
		struct jnode *els = node(p, JN_BLOCK, line);

		expect_kind(p, JT_BLOCK_END, "'%}'");
		parse_body(p, &els->body, endif);
		take_end_tag(p);
		n->c = els;
	}
	expect_kind(p, JT_BLOCK_END, "'%}'");
	return n;
}

/* "a" or "a, b" or "(a, b)": names stored in kwnames. */
static void parse_targets(struct parser *p, struct jnode *n)
{
	bool paren = is_op(p, "(");

	if (paren)
		advance(p);
	names_push(p, n, expect_name(p));
	while (is_op(p, ",")) {
		advance(p);
		if (paren && is_op(p, ")"))
			break;
		names_push(p, n, expect_name(p));
	}
	if (paren)
		expect_op(p, ")");
}

static struct jnode *parse_for(struct parser *p, int line)
{
	static const char *const ends[] = { "else", "endfor", NULL };
	struct jnode *n = node(p, JN_FOR, line);

	parse_targets(p, n);
	if (!is_name(p, "in"))
		perror_at(p, cur(p)->line, "expected 'in' in for loop, got '%s'", describe(cur(p)));
	advance(p);
	/* The iterable may not use an inline "if": that starts the filter. */
	n->a = parse_or(p);
	if (is_name(p, "if")) {
		advance(p);
		n->b = parse_expression(p);
	}
	if (is_name(p, "recursive"))
		perror_at(p, cur(p)->line, "recursive for loops are not supported");
	expect_kind(p, JT_BLOCK_END, "'%}'");
	parse_body(p, &n->body, ends);
	if (!strcmp(take_end_tag(p), "else")) {
		static const char *const endfor[] = { "endfor", NULL };

		n->c = node(p, JN_BLOCK, line);
		expect_kind(p, JT_BLOCK_END, "'%}'");
		parse_body(p, &n->c->body, endfor);
		take_end_tag(p);
	}
	expect_kind(p, JT_BLOCK_END, "'%}'");
	return n;
}

static struct jnode *parse_set(struct parser *p, int line)
{
	struct jnode *n = node(p, JN_SET, line);

	if (cur(p)->kind == JT_NAME && p->t->v[p->pos + 1].kind == JT_OP &&
	    strcmp(p->t->v[p->pos + 1].text, ".") == 0) {
		/* {% set ns.attr = value %} */
		n->a = node(p, JN_NAME, line);
		n->a->name = advance(p)->text;
		advance(p);
		n->name = expect_name(p);
	} else {
		parse_targets(p, n);
	}
	if (!is_op(p, "=")) {
		static const char *const ends[] = { "endset", NULL };

		if (n->a || n->nkwnames != 1)
			perror_at(p, line, "block set needs a single name");
		n->kind = JN_SET_BLOCK;
		while (is_op(p, "|"))
			advance(p), n->b = parse_filter(p, n->b);
		expect_kind(p, JT_BLOCK_END, "'%}'");
		parse_body(p, &n->body, ends);
		take_end_tag(p);
		expect_kind(p, JT_BLOCK_END, "'%}'");
		return n;
	}
	advance(p);
	n->b = parse_expression(p);
	if (is_op(p, ",")) {
		/* {% set a, b = 1, 2 %}: an implicit tuple on the right. */
		struct jnode *tuple = node(p, JN_TUPLE, line);

		nodes_push(p, &tuple->args, n->b);
		while (is_op(p, ",")) {
			advance(p);
			nodes_push(p, &tuple->args, parse_expression(p));
		}
		n->b = tuple;
	}
	expect_kind(p, JT_BLOCK_END, "'%}'");
	return n;
}

static struct jnode *parse_macro(struct parser *p, int line)
{
	static const char *const ends[] = { "endmacro", NULL };
	struct jnode *n = node(p, JN_MACRO, line);

	n->name = expect_name(p);
	expect_op(p, "(");
	while (!is_op(p, ")")) {
		if (n->nkwnames)
			expect_op(p, ",");
		names_push(p, n, expect_name(p));
		if (is_op(p, "=")) {
			advance(p);
			nodes_push(p, &n->kwvals, parse_expression(p));
		} else {
			if (n->kwvals.n)
				perror_at(p, line, "non-default argument follows default argument");
			nodes_push(p, &n->kwvals, NULL);
		}
	}
	advance(p);
	expect_kind(p, JT_BLOCK_END, "'%}'");
	parse_body(p, &n->body, ends);
	take_end_tag(p);
	if (cur(p)->kind == JT_NAME)
		advance(p);	/* {% endmacro name %} */
	expect_kind(p, JT_BLOCK_END, "'%}'");
	return n;
}

/* Bodies that render their content unchanged or filtered. */
static struct jnode *parse_wrapper(struct parser *p, int line, const char *end, bool filter)
{
	const char *const ends[] = { end, NULL };
	struct jnode *n = node(p, JN_BLOCK, line);

	if (filter) {
		n->b = parse_filter(p, NULL);
		while (is_op(p, "|"))
			advance(p), n->b = parse_filter(p, n->b);
	}
	expect_kind(p, JT_BLOCK_END, "'%}'");
	parse_body(p, &n->body, ends);
	take_end_tag(p);
	expect_kind(p, JT_BLOCK_END, "'%}'");
	return n;
}

static struct jnode *parse_statement(struct parser *p)
{
	struct jtok *t;
	int line;

	advance(p);	/* {% */
	t = cur(p);
	line = t->line;
	if (t->kind != JT_NAME)
		perror_at(p, line, "expected a tag name, got '%s'", describe(t));
	advance(p);
	if (!strcmp(t->text, "if"))
		return parse_if(p, line);
	if (!strcmp(t->text, "for"))
		return parse_for(p, line);
	if (!strcmp(t->text, "set"))
		return parse_set(p, line);
	if (!strcmp(t->text, "macro"))
		return parse_macro(p, line);
	if (!strcmp(t->text, "filter"))
		return parse_wrapper(p, line, "endfilter", true);
	/* transformers' AssistantTracker extension: marks, renders as is. */
	if (!strcmp(t->text, "generation"))
		return parse_wrapper(p, line, "endgeneration", false);
	if (!strcmp(t->text, "break") || !strcmp(t->text, "continue")) {
		struct jnode *n = node(p, t->text[0] == 'b' ? JN_BREAK : JN_CONTINUE, line);

		expect_kind(p, JT_BLOCK_END, "'%}'");
		return n;
	}
	perror_at(p, line, "unsupported tag '%s'", t->text);
}

static void parse_body(struct parser *p, struct jnodes *body, const char *const *ends)
{
	for (;;) {
		struct jtok *t = cur(p);

		if (t->kind == JT_EOF) {
			char want[96] = "";
			size_t i, o = 0;

			if (!ends)
				return;
			for (i = 0; ends[i] && o < sizeof(want); i++)
				o += (size_t)snprintf(want + o, sizeof(want) - o, "%s'%s'",
						      i ? " or " : "", ends[i]);
			perror_at(p, t->line, "unexpected end of template; expected %s", want);
		}
		if (at_end_tag(p, ends))
			return;
		if (t->kind == JT_DATA) {
			struct jnode *n = node(p, JN_TEXT, t->line);

			n->value = literal_string(p, t->text, t->len);
			nodes_push(p, body, n);
			advance(p);
		} else if (t->kind == JT_VAR_BEGIN) {
			struct jnode *n = node(p, JN_OUTPUT, t->line);

			advance(p);
			n->a = parse_expression(p);
			expect_kind(p, JT_VAR_END, "'}}'");
			nodes_push(p, body, n);
		} else if (t->kind == JT_BLOCK_BEGIN) {
			const char *tag = p->t->v[p->pos + 1].kind == JT_NAME ?
						  p->t->v[p->pos + 1].text : "";

			if (!strncmp(tag, "end", 3) || !strcmp(tag, "else") || !strcmp(tag, "elif"))
				perror_at(p, t->line, "unexpected '%s'", p->t->v[p->pos + 1].text);
			nodes_push(p, body, parse_statement(p));
		} else {
			perror_at(p, t->line, "unexpected '%s'", describe(t));
		}
	}
}

int rbln_jinja_parse(struct jtokens *toks, const char *name, struct jarena *a,
		     struct jnodes *body, struct rbln_error *err)
{
	struct parser p = { .t = toks, .a = a, .name = name, .err = err };

	if (setjmp(p.fail))
		return err && err->code ? err->code : -EINVAL;
	parse_body(&p, body, NULL);
	return 0;
}
