/* SPDX-License-Identifier: MIT */
/*
 * Internals of the Jinja interpreter: arena memory, values with Python
 * semantics, tokens, the AST and the render context.
 */
#ifndef RBLN_JINJA_INTERNAL_H
#define RBLN_JINJA_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_jinja.h"
#include "util/strbuf.h"

/* ---- arena: everything of one compile or one render is freed at once ---- */

struct jarena_block;

struct jarena {
	struct jarena_block *head;
	size_t used;		/* bytes handed out */
	size_t limit;		/* 0: unlimited */
};

/* Returns zeroed memory or NULL. */
void *rbln_jarena_alloc(struct jarena *a, size_t n);
char *rbln_jarena_strndup(struct jarena *a, const char *s, size_t n);
void rbln_jarena_free(struct jarena *a);

/* ---- values ---- */

enum jv_kind {
	JV_UNDEFINED,
	JV_NONE,
	JV_BOOL,
	JV_INT,
	JV_FLOAT,
	JV_STR,
	JV_LIST,	/* also tuples (flag) */
	JV_DICT,
	JV_NAMESPACE,	/* namespace(): a dict with assignable attributes */
	JV_FUNC,	/* builtins, bound methods, macros */
	JV_LOOP,	/* the loop variable of a for block */
};

struct jstr {
	size_t len;
	char data[];	/* NUL-terminated */
};

struct jv;

struct jlist {
	struct jv *items;
	size_t n, cap;
	bool tuple;
};

struct jdict {
	struct jv *keys;	/* insertion order, like Python dicts */
	struct jv *vals;
	size_t n, cap;
};

/* One iteration's view of a for loop; loop.* attributes derive from it. */
struct jloop {
	const struct jlist *items;
	size_t index;
};

struct jctx;
struct jcall;
struct jfunc;

typedef struct jv (*jfunc_fn)(struct jctx *c, const struct jfunc *f, struct jcall *call);

struct jfunc {
	const char *name;
	jfunc_fn fn;
	struct jv *self;	/* bound receiver, or NULL */
	const void *data;	/* e.g. the macro node */
};

struct jv {
	enum jv_kind kind;
	union {
		bool b;
		int64_t i;
		double f;
		struct jstr *s;
		struct jlist *l;
		struct jdict *d;
		struct jfunc *fn;
		struct jloop *loop;
	} u;
	const char *undef_name;	/* JV_UNDEFINED: what was missing, for messages */
};

/* Arguments of a call: positional, then keyword. */
struct jcall {
	struct jv *args;
	size_t nargs;
	const char **kwnames;
	struct jv *kwvals;
	size_t nkw;
	int line;
};

/* ---- tokens ---- */

enum jtok_kind {
	JT_EOF,
	JT_DATA,
	JT_VAR_BEGIN,
	JT_VAR_END,
	JT_BLOCK_BEGIN,
	JT_BLOCK_END,
	JT_NAME,
	JT_STRING,
	JT_INT,
	JT_FLOAT,
	JT_OP,
};

struct jtok {
	enum jtok_kind kind;
	int line;
	const char *text;	/* DATA, NAME, STRING (unescaped), OP; arena-owned */
	size_t len;
	int64_t i;
	double f;
};

struct jtokens {
	struct jtok *v;
	size_t n, cap;
};

/* ---- AST ---- */

enum jnode_kind {
	/* statements */
	JN_TEXT, JN_OUTPUT, JN_IF, JN_FOR, JN_SET, JN_SET_BLOCK, JN_MACRO, JN_BREAK,
	JN_CONTINUE, JN_BLOCK,
	/* expressions */
	JN_LITERAL, JN_NAME, JN_GETATTR, JN_GETITEM, JN_SLICE, JN_CALL, JN_FILTER, JN_TEST,
	JN_BINOP, JN_UNARY, JN_COMPARE, JN_AND, JN_OR, JN_NOT, JN_COND, JN_LIST, JN_TUPLE,
	JN_DICT, JN_CONCAT,
};

struct jnode;

struct jnodes {
	struct jnode **v;
	size_t n, cap;
};

struct jnode {
	enum jnode_kind kind;
	int line;
	const char *name;	/* NAME, GETATTR attribute, FILTER/TEST, SET target, MACRO, FOR var */
	struct jv value;	/* LITERAL */
	int op;			/* BINOP/UNARY operator char or code */
	bool negated;		/* TEST: "is not" */
	struct jnode *a, *b, *c;	/* operands; IF: cond/else; FOR: iter/filter/else */
	struct jnodes body;	/* IF/FOR/MACRO/SET_BLOCK/BLOCK body; COMPARE operands */
	struct jnodes args;	/* CALL/FILTER/TEST positional; LIST/TUPLE items; DICT keys */
	struct jnodes kwvals;	/* CALL/FILTER kwargs; DICT values; MACRO defaults */
	const char **kwnames;	/* CALL/FILTER kwarg names; MACRO params; FOR/SET targets */
	size_t nkwnames;
	int *cmp_ops;		/* COMPARE: one per extra operand */
};

/* Comparison and arithmetic operator codes beyond single characters. */
enum {
	JOP_EQ = 256, JOP_NE, JOP_LT, JOP_LE, JOP_GT, JOP_GE, JOP_IN, JOP_NOT_IN,
	JOP_FLOORDIV, JOP_POW,
};

struct rbln_jinja_template {
	struct jarena arena;
	struct jnodes body;
	char *name;
};

/* ---- render context ---- */

struct jscope {
	struct jscope *parent;
	struct jdict *vars;
};

struct jctx {
	struct jarena *arena;
	struct rbln_strbuf *out;
	struct jscope *scope;
	struct jscope *root;
	const char *name;
	struct rbln_error *err;
	jmp_buf fail;
	uint64_t steps;		/* evaluation budget against runaway templates */
	uint64_t max_steps;
	int depth;		/* macro recursion */
	int nesting;		/* nested evaluations, bounded to protect the stack */
	time_t now;
	int loop_ctl;		/* 1 break, 2 continue, pending */
	int loop_depth;		/* break/continue are only valid inside loops */
	int line;		/* line being evaluated, for errors raised without one */
	void *nonprint_re;	/* pcre2_code for repr(), built on first use */
	void *utf8_locale;	/* locale_t for case mapping, built on first use */
	struct jtemp *temps;	/* live capture buffers, freed if rendering fails */
	const struct jv *block_input;	/* operand of a {% filter %} / set-block chain */
};

/* Output captured for macros, set blocks and filter blocks. */
struct jtemp {
	struct rbln_strbuf buf;
	struct jtemp *next;
};

/*
 * A scratch buffer that a failed render frees (a plain local buffer would
 * leak when an error unwinds past it): rbln_jinja_temp_str() turns it into a
 * string value and frees it, rbln_jinja_temp_free() just frees it.
 */
struct rbln_strbuf *rbln_jinja_temp_buf(struct jctx *c);
struct jv rbln_jinja_temp_str(struct jctx *c, struct rbln_strbuf *sb);
void rbln_jinja_temp_free(struct jctx *c, struct rbln_strbuf *sb);

/* Runs body with output captured; returns the text as a string value. */
struct jv rbln_jinja_capture(struct jctx *c, const struct jnodes *body);

/* ---- entry points between the files ---- */

int rbln_jinja_lex(const char *src, size_t len, const char *name, struct jarena *a,
		   struct jtokens *out, struct rbln_error *err);
int rbln_jinja_parse(struct jtokens *toks, const char *name, struct jarena *a,
		     struct jnodes *body, struct rbln_error *err);

/* Renders a statement list. */
void rbln_jinja_exec(struct jctx *c, const struct jnodes *body);
struct jv rbln_jinja_eval(struct jctx *c, const struct jnode *n);
/*
 * What iterating @v yields, as a list: a list itself, a dict's keys, a
 * string's characters, nothing for Undefined; anything else fails at @line.
 */
struct jv rbln_jinja_iterable_items(struct jctx *c, const struct jv *v, int line);

/*
 * Counts work against the render's step budget: one step per evaluated
 * node, plus what filters, list and dict operations do per element.
 */
void rbln_jinja_charge(struct jctx *c, uint64_t steps);
/* One level of recursion (evaluation, or printing a nested value); bounded. */
void rbln_jinja_nest_enter(struct jctx *c, int line);
void rbln_jinja_nest_leave(struct jctx *c);

/* Raises a render error (longjmp); never returns. */
_Noreturn void rbln_jinja_fail(struct jctx *c, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* values */
struct jv rbln_jv_undefined(const char *name);
struct jv rbln_jv_none(void);
struct jv rbln_jv_bool(bool b);
struct jv rbln_jv_int(int64_t i);
struct jv rbln_jv_float(double f);
struct jv rbln_jv_str(struct jctx *c, const char *s, size_t n);
struct jv rbln_jv_cstr(struct jctx *c, const char *s);
struct jv rbln_jv_list(struct jctx *c, size_t cap);
struct jv rbln_jv_dict(struct jctx *c);
struct jv rbln_jv_func(struct jctx *c, const char *name, jfunc_fn fn, const struct jv *self,
		  const void *data);
void rbln_jv_list_push(struct jctx *c, struct jv *list, struct jv item);
/* Sets key (replacing an equal key); the dict keeps insertion order. */
void rbln_jv_dict_set(struct jctx *c, struct jdict *d, struct jv key, struct jv val);
/* Returns NULL when absent. */
struct jv *rbln_jv_dict_get(const struct jdict *d, struct jv key);
struct jv *rbln_jv_dict_get_str(const struct jdict *d, const char *key);

bool rbln_jv_truthy(const struct jv *v);
bool rbln_jv_equal(const struct jv *a, const struct jv *b);
/* Python ordering; fails with a TypeError message on mixed types. */
int rbln_jv_compare(struct jctx *c, int line, const struct jv *a, const struct jv *b);
const char *rbln_jv_type_name(const struct jv *v);
bool rbln_jv_is_number(const struct jv *v);
double rbln_jv_as_double(const struct jv *v);

/* Python str() and repr(); append to sb. */
void rbln_jv_to_str(struct jctx *c, struct rbln_strbuf *sb, const struct jv *v);
void rbln_jv_repr(struct jctx *c, struct rbln_strbuf *sb, const struct jv *v);
struct jv rbln_jv_stringify(struct jctx *c, const struct jv *v);
/* Python's repr() of a float. */
void rbln_jv_format_float(char *buf, size_t len, double f);
/* json.dumps(v, ensure_ascii, indent (<0: none), separators, sort_keys). */
void rbln_jv_to_json(struct jctx *c, struct rbln_strbuf *sb, const struct jv *v, bool ensure_ascii,
		int indent, const char *item_sep, const char *key_sep, bool sort_keys, int line);
/* json-c -> value. */
struct jv rbln_jv_from_json(struct jctx *c, const struct json_object *o);

/* Appending that fails the render on out-of-memory. */
void rbln_jout(struct jctx *c, struct rbln_strbuf *sb, const void *p, size_t n);
void *rbln_jalloc(struct jctx *c, size_t n);

/* Filters, tests, methods and globals (by name). */
typedef struct jv (*jfilter_fn)(struct jctx *c, struct jv *v, struct jcall *call);
typedef bool (*jtest_fn)(struct jctx *c, struct jv *v, struct jcall *call);
jfilter_fn rbln_jinja_find_filter(const char *name);
jtest_fn rbln_jinja_find_test(const char *name);
struct jv rbln_jinja_method(struct jctx *c, const struct jv *obj, const char *name);
struct jv rbln_jinja_global(struct jctx *c, const char *name);
/* Applies a filter/test by name at run time (map, select...). */
struct jv rbln_jinja_apply_filter(struct jctx *c, const char *name, struct jv *v, struct jcall *call);
bool rbln_jinja_apply_test(struct jctx *c, const char *name, struct jv *v, struct jcall *call);
/* Operators with Python semantics (ops.c). */
struct jv rbln_jinja_binop(struct jctx *c, int op, const struct jv *a, const struct jv *b, int line);
bool rbln_jinja_contains(struct jctx *c, const struct jv *container, const struct jv *item, int line);
/* Calls a callable value. */
struct jv rbln_jinja_call_value(struct jctx *c, const struct jv *fn, struct jcall *call);

/* Argument helpers: the i-th positional or the keyword `name`, or NULL. */
struct jv *rbln_jcall_arg(struct jcall *call, size_t i, const char *name);
void rbln_jcall_check(struct jctx *c, struct jcall *call, const char *fname, size_t max_pos,
		 const char *const *kw_allowed);

/* Python string helpers shared by filters and methods. */
bool rbln_jinja_is_space_at(const char *s, size_t n, size_t i, size_t *adv);
struct jv rbln_jinja_strip(struct jctx *c, const struct jv *s, const struct jv *chars, bool left,
		      bool right);
enum jcase { JCASE_LOWER, JCASE_UPPER, JCASE_TITLE, JCASE_CAPITALIZE, JCASE_JINJA_TITLE };
struct jv rbln_jinja_case(struct jctx *c, const struct jv *s, enum jcase mode);
/* Python's str.splitlines() boundaries; returns a list of strings. */
struct jv rbln_jinja_splitlines(struct jctx *c, const struct jv *s);
/* The character at s[i] and its length; invalid bytes count as one. */
uint32_t rbln_jinja_char_at(const char *s, size_t n, size_t i, size_t *adv);

#endif
