// SPDX-License-Identifier: MIT
/* Token access, node allocation and error reporting for the parser. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jinja/parser.h"
_Noreturn void rbln_jp_perror_at(struct parser *p, int line, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rbln_error_set(p->err, -EINVAL, "%s line %d: %s", p->name, line, msg);
	longjmp(p->fail, 1);
}

void *rbln_jp_palloc(struct parser *p, size_t n)
{
	void *m = rbln_jarena_alloc(p->a, n);

	if (!m) {
		rbln_error_set(p->err, -ENOMEM, "out of memory");
		longjmp(p->fail, 1);
	}
	return m;
}

struct jtok *rbln_jp_cur(struct parser *p)
{
	return &p->t->v[p->pos];
}

struct jtok *rbln_jp_advance(struct parser *p)
{
	struct jtok *t = rbln_jp_cur(p);

	if (t->kind != JT_EOF)
		p->pos++;
	return t;
}

bool rbln_jp_is_op(struct parser *p, const char *op)
{
	struct jtok *t = rbln_jp_cur(p);

	return t->kind == JT_OP && strcmp(t->text, op) == 0;
}

bool rbln_jp_is_name(struct parser *p, const char *name)
{
	struct jtok *t = rbln_jp_cur(p);

	return t->kind == JT_NAME && strcmp(t->text, name) == 0;
}

const char *rbln_jp_describe(struct jtok *t)
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

void rbln_jp_expect_op(struct parser *p, const char *op)
{
	if (!rbln_jp_is_op(p, op))
		rbln_jp_perror_at(p, rbln_jp_cur(p)->line, "expected '%s', got '%s'", op, rbln_jp_describe(rbln_jp_cur(p)));
	rbln_jp_advance(p);
}

void rbln_jp_expect_kind(struct parser *p, enum jtok_kind kind, const char *what)
{
	if (rbln_jp_cur(p)->kind != kind)
		rbln_jp_perror_at(p, rbln_jp_cur(p)->line, "expected %s, got '%s'", what, rbln_jp_describe(rbln_jp_cur(p)));
	rbln_jp_advance(p);
}

const char *rbln_jp_expect_name(struct parser *p)
{
	if (rbln_jp_cur(p)->kind != JT_NAME)
		rbln_jp_perror_at(p, rbln_jp_cur(p)->line, "expected a name, got '%s'", rbln_jp_describe(rbln_jp_cur(p)));
	return rbln_jp_advance(p)->text;
}

struct jnode *rbln_jp_node(struct parser *p, enum jnode_kind kind, int line)
{
	struct jnode *n = rbln_jp_palloc(p, sizeof(*n));

	n->kind = kind;
	n->line = line;
	return n;
}

void rbln_jp_nodes_push(struct parser *p, struct jnodes *l, struct jnode *n)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 4;
		struct jnode **v = rbln_jp_palloc(p, cap * sizeof(*v));

		if (l->n)
			memcpy(v, l->v, l->n * sizeof(*v));
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = n;
}

void rbln_jp_names_push(struct parser *p, struct jnode *n, const char *name)
{
	const char **v = rbln_jp_palloc(p, (n->nkwnames + 1) * sizeof(*v));

	if (n->nkwnames)
		memcpy(v, n->kwnames, n->nkwnames * sizeof(*v));
	v[n->nkwnames++] = name;
	n->kwnames = v;
}

struct jv rbln_jp_literal_string(struct parser *p, const char *s, size_t len)
{
	struct jstr *js = rbln_jp_palloc(p, sizeof(*js) + len + 1);

	js->len = len;
	memcpy(js->data, s, len);
	js->data[len] = '\0';
	return (struct jv){ .kind = JV_STR, .u.s = js };
}

void rbln_jp_enter(struct parser *p)
{
	if (++p->nesting > MAX_NESTING)
		rbln_jp_perror_at(p, rbln_jp_cur(p)->line,
			     "blocks or expressions nested too deeply (limit %d levels)", MAX_NESTING);
}

static void check_list_depth(struct parser *p, const struct jnodes *l, int depth)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i])
			rbln_jp_check_depth(p, l->v[i], depth);
}

void rbln_jp_check_depth(struct parser *p, const struct jnode *n, int depth)
{
	if (depth > MAX_TREE_DEPTH)
		rbln_jp_perror_at(p, n->line, "expression or block chain too deep (limit %d levels)",
			     MAX_TREE_DEPTH);
	if (n->a)
		rbln_jp_check_depth(p, n->a, depth + 1);
	if (n->b)
		rbln_jp_check_depth(p, n->b, depth + 1);
	if (n->c)
		rbln_jp_check_depth(p, n->c, depth + 1);
	check_list_depth(p, &n->body, depth + 1);
	check_list_depth(p, &n->args, depth + 1);
	check_list_depth(p, &n->kwvals, depth + 1);
}
