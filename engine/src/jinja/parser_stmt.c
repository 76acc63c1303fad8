// SPDX-License-Identifier: MIT
/*
 * Statements: if/elif/else, for (with filter and else), set (names,
 * tuples, namespace attributes, blocks), macro, filter and generation
 * blocks, break/continue.  Any other tag is refused by name and line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jinja/parser.h"

static void parse_body(struct parser *p, struct jnodes *body, const char *const *ends);

static bool at_end_tag(struct parser *p, const char *const *ends)
{
	size_t i;

	if (rbln_jp_cur(p)->kind != JT_BLOCK_BEGIN || p->t->v[p->pos + 1].kind != JT_NAME)
		return false;
	for (i = 0; ends && ends[i]; i++)
		if (strcmp(p->t->v[p->pos + 1].text, ends[i]) == 0)
			return true;
	return false;
}

/* Consumes "{% name" of an end tag and returns the name. */
static const char *take_end_tag(struct parser *p)
{
	rbln_jp_advance(p);
	return rbln_jp_advance(p)->text;
}

static struct jnode *parse_if(struct parser *p, int line)
{
	static const char *const ends[] = { "elif", "else", "endif", NULL };
	struct jnode *n = rbln_jp_node(p, JN_IF, line);
	const char *tag;

	n->a = rbln_jp_parse_expression(p);
	rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
	parse_body(p, &n->body, ends);
	tag = take_end_tag(p);
	if (!strcmp(tag, "elif")) {
		/* elif is an if nested in the else branch: a level of nesting. */
		rbln_jp_enter(p);
		n->c = parse_if(p, line);
		p->nesting--;
		return n;
	}
	if (!strcmp(tag, "else")) {
		static const char *const endif[] = { "endif", NULL };
		struct jnode *els = rbln_jp_node(p, JN_BLOCK, line);

		rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
		parse_body(p, &els->body, endif);
		take_end_tag(p);
		n->c = els;
	}
	rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
	return n;
}

/* "a" or "a, b" or "(a, b)": names stored in kwnames. */
static void parse_targets(struct parser *p, struct jnode *n)
{
	bool paren = rbln_jp_is_op(p, "(");

	if (paren)
		rbln_jp_advance(p);
	rbln_jp_names_push(p, n, rbln_jp_expect_name(p));
	while (rbln_jp_is_op(p, ",")) {
		rbln_jp_advance(p);
		if (paren && rbln_jp_is_op(p, ")"))
			break;
		rbln_jp_names_push(p, n, rbln_jp_expect_name(p));
	}
	if (paren)
		rbln_jp_expect_op(p, ")");
}

static struct jnode *parse_for(struct parser *p, int line)
{
	static const char *const ends[] = { "else", "endfor", NULL };
	struct jnode *n = rbln_jp_node(p, JN_FOR, line);

	parse_targets(p, n);
	if (!rbln_jp_is_name(p, "in"))
		rbln_jp_perror_at(p, rbln_jp_cur(p)->line, "expected 'in' in for loop, got '%s'", rbln_jp_describe(rbln_jp_cur(p)));
	rbln_jp_advance(p);
	/* The iterable may not use an inline "if": that starts the filter. */
	n->a = rbln_jp_parse_or(p);
	if (rbln_jp_is_name(p, "if")) {
		rbln_jp_advance(p);
		n->b = rbln_jp_parse_expression(p);
	}
	if (rbln_jp_is_name(p, "recursive"))
		rbln_jp_perror_at(p, rbln_jp_cur(p)->line, "recursive for loops are not supported");
	rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
	parse_body(p, &n->body, ends);
	if (!strcmp(take_end_tag(p), "else")) {
		static const char *const endfor[] = { "endfor", NULL };

		n->c = rbln_jp_node(p, JN_BLOCK, line);
		rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
		parse_body(p, &n->c->body, endfor);
		take_end_tag(p);
	}
	rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
	return n;
}

static struct jnode *parse_set(struct parser *p, int line)
{
	struct jnode *n = rbln_jp_node(p, JN_SET, line);

	if (rbln_jp_cur(p)->kind == JT_NAME && p->t->v[p->pos + 1].kind == JT_OP &&
	    strcmp(p->t->v[p->pos + 1].text, ".") == 0) {
		/* {% set ns.attr = value %} */
		n->a = rbln_jp_node(p, JN_NAME, line);
		n->a->name = rbln_jp_advance(p)->text;
		rbln_jp_advance(p);
		n->name = rbln_jp_expect_name(p);
	} else {
		parse_targets(p, n);
	}
	if (!rbln_jp_is_op(p, "=")) {
		static const char *const ends[] = { "endset", NULL };

		if (n->a || n->nkwnames != 1)
			rbln_jp_perror_at(p, line, "block set needs a single name");
		n->kind = JN_SET_BLOCK;
		while (rbln_jp_is_op(p, "|"))
			rbln_jp_advance(p), n->b = rbln_jp_parse_filter(p, n->b);
		rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
		parse_body(p, &n->body, ends);
		take_end_tag(p);
		rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
		return n;
	}
	rbln_jp_advance(p);
	n->b = rbln_jp_parse_expression(p);
	if (rbln_jp_is_op(p, ",")) {
		/* {% set a, b = 1, 2 %}: an implicit tuple on the right. */
		struct jnode *tuple = rbln_jp_node(p, JN_TUPLE, line);

		rbln_jp_nodes_push(p, &tuple->args, n->b);
		while (rbln_jp_is_op(p, ",")) {
			rbln_jp_advance(p);
			rbln_jp_nodes_push(p, &tuple->args, rbln_jp_parse_expression(p));
		}
		n->b = tuple;
	}
	rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
	return n;
}

static struct jnode *parse_macro(struct parser *p, int line)
{
	static const char *const ends[] = { "endmacro", NULL };
	struct jnode *n = rbln_jp_node(p, JN_MACRO, line);

	n->name = rbln_jp_expect_name(p);
	rbln_jp_expect_op(p, "(");
	while (!rbln_jp_is_op(p, ")")) {
		if (n->nkwnames)
			rbln_jp_expect_op(p, ",");
		rbln_jp_names_push(p, n, rbln_jp_expect_name(p));
		if (rbln_jp_is_op(p, "=")) {
			rbln_jp_advance(p);
			rbln_jp_nodes_push(p, &n->kwvals, rbln_jp_parse_expression(p));
		} else {
			if (n->kwvals.n)
				rbln_jp_perror_at(p, line, "non-default argument follows default argument");
			rbln_jp_nodes_push(p, &n->kwvals, NULL);
		}
	}
	rbln_jp_advance(p);
	rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
	parse_body(p, &n->body, ends);
	take_end_tag(p);
	if (rbln_jp_cur(p)->kind == JT_NAME)
		rbln_jp_advance(p);	/* {% endmacro name %} */
	rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
	return n;
}

/* Bodies that render their content unchanged or filtered. */
static struct jnode *parse_wrapper(struct parser *p, int line, const char *end, bool filter)
{
	const char *const ends[] = { end, NULL };
	struct jnode *n = rbln_jp_node(p, JN_BLOCK, line);

	if (filter) {
		n->b = rbln_jp_parse_filter(p, NULL);
		while (rbln_jp_is_op(p, "|"))
			rbln_jp_advance(p), n->b = rbln_jp_parse_filter(p, n->b);
	}
	rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
	parse_body(p, &n->body, ends);
	take_end_tag(p);
	rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
	return n;
}

static struct jnode *parse_statement(struct parser *p)
{
	struct jtok *t;
	int line;

	rbln_jp_advance(p);	/* {% */
	t = rbln_jp_cur(p);
	line = t->line;
	if (t->kind != JT_NAME)
		rbln_jp_perror_at(p, line, "expected a tag name, got '%s'", rbln_jp_describe(t));
	rbln_jp_advance(p);
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
		struct jnode *n = rbln_jp_node(p, t->text[0] == 'b' ? JN_BREAK : JN_CONTINUE, line);

		rbln_jp_expect_kind(p, JT_BLOCK_END, "'%}'");
		return n;
	}
	rbln_jp_perror_at(p, line, "unsupported tag '%s'", t->text);
}

static void parse_body(struct parser *p, struct jnodes *body, const char *const *ends)
{
	for (;;) {
		struct jtok *t = rbln_jp_cur(p);

		if (t->kind == JT_EOF) {
			char want[96] = "";
			size_t i, o = 0;

			if (!ends)
				return;
			for (i = 0; ends[i] && o < sizeof(want); i++)
				o += (size_t)snprintf(want + o, sizeof(want) - o, "%s'%s'",
						      i ? " or " : "", ends[i]);
			rbln_jp_perror_at(p, t->line, "unexpected end of template; expected %s", want);
		}
		if (at_end_tag(p, ends))
			return;
		if (t->kind == JT_DATA) {
			struct jnode *n = rbln_jp_node(p, JN_TEXT, t->line);

			n->value = rbln_jp_literal_string(p, t->text, t->len);
			rbln_jp_nodes_push(p, body, n);
			rbln_jp_advance(p);
		} else if (t->kind == JT_VAR_BEGIN) {
			struct jnode *n = rbln_jp_node(p, JN_OUTPUT, t->line);

			rbln_jp_advance(p);
			n->a = rbln_jp_parse_expression(p);
			rbln_jp_expect_kind(p, JT_VAR_END, "'}}'");
			rbln_jp_nodes_push(p, body, n);
		} else if (t->kind == JT_BLOCK_BEGIN) {
			const char *tag = p->t->v[p->pos + 1].kind == JT_NAME ?
						  p->t->v[p->pos + 1].text : "";

			if (!strncmp(tag, "end", 3) || !strcmp(tag, "else") || !strcmp(tag, "elif"))
				rbln_jp_perror_at(p, t->line, "unexpected '%s'", p->t->v[p->pos + 1].text);
			rbln_jp_enter(p);
			rbln_jp_nodes_push(p, body, parse_statement(p));
			p->nesting--;
		} else {
			rbln_jp_perror_at(p, t->line, "unexpected '%s'", rbln_jp_describe(t));
		}
	}
}

int rbln_jinja_parse(struct jtokens *toks, const char *name, struct jarena *a,
		     struct jnodes *body, struct rbln_error *err)
{
	struct parser p = { .t = toks, .a = a, .name = name, .err = err };

	size_t i;

	if (setjmp(p.fail))
		return err && err->code ? err->code : -EINVAL;
	parse_body(&p, body, NULL);
	/* Chains (a ~ b ~ ..., x|f|g..., a.b.c...) are parsed in loops but
	 * build deep trees, which the evaluator walks recursively. */
	for (i = 0; i < body->n; i++)
		rbln_jp_check_depth(&p, body->v[i], 1);
	return 0;
}
