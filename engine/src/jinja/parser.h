/* SPDX-License-Identifier: MIT */
/* Shared state and token helpers of the template parser (parser_*.c). */
#ifndef RBLN_JINJA_PARSER_H
#define RBLN_JINJA_PARSER_H

#include "jinja/jinja_internal.h"

#define MAX_NESTING 200	/* bounds recursion on hostile input */
/* Bounds the depth of the syntax tree, which evaluation recurses through. */
#define MAX_TREE_DEPTH 400

struct parser {
	struct jtokens *t;
	size_t pos;
	struct jarena *a;
	const char *name;
	struct rbln_error *err;
	jmp_buf fail;	/* syntax errors unwind here; the arena is freed by the caller */
	int nesting;
};

/* Records "name line N: ..." and unwinds. */
_Noreturn void rbln_jp_perror_at(struct parser *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void *rbln_jp_palloc(struct parser *p, size_t n);

/* Token access. */
struct jtok *rbln_jp_cur(struct parser *p);
struct jtok *rbln_jp_advance(struct parser *p);
bool rbln_jp_is_op(struct parser *p, const char *op);
bool rbln_jp_is_name(struct parser *p, const char *name);
const char *rbln_jp_describe(struct jtok *t);
void rbln_jp_expect_op(struct parser *p, const char *op);
void rbln_jp_expect_kind(struct parser *p, enum jtok_kind kind, const char *what);
const char *rbln_jp_expect_name(struct parser *p);

/* Node building. */
struct jnode *rbln_jp_node(struct parser *p, enum jnode_kind kind, int line);
void rbln_jp_nodes_push(struct parser *p, struct jnodes *l, struct jnode *n);
void rbln_jp_names_push(struct parser *p, struct jnode *n, const char *name);
struct jv rbln_jp_literal_string(struct parser *p, const char *s, size_t len);
/* Counts one level of recursion; fails past MAX_NESTING. */
void rbln_jp_enter(struct parser *p);
/* Fails when the tree under n (at `depth`) is deeper than MAX_TREE_DEPTH. */
void rbln_jp_check_depth(struct parser *p, const struct jnode *n, int depth);

/* Expressions (parser_expr.c). */
struct jnode *rbln_jp_parse_expression(struct parser *p);
/* An expression without the trailing "x if c else y" (for-loop iterables). */
struct jnode *rbln_jp_parse_or(struct parser *p);
/* "name" or "name(args)" after '|'; operand NULL means a block's output. */
struct jnode *rbln_jp_parse_filter(struct parser *p, struct jnode *operand);

#endif
