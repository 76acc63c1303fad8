// SPDX-License-Identifier: MIT
/*
 * Tree-walking evaluation of expressions and statements.  Scoping follows
 * Jinja: a for-loop iteration and a macro call get their own scope, so
 * {% set %} inside a loop does not leak out (namespace() exists for that);
 * if-blocks share the enclosing scope.  Errors unwind by longjmp to the
 * render entry, which frees the render arena and capture buffers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja/jinja_internal.h"
#include "util/utf8.h"

#define MAX_MACRO_DEPTH 64
/*
 * Nested evaluations (expressions, statements, macro calls, printing nested
 * values) of one render: far above real templates, and small enough that
 * the C stack of any thread holds it (test_jinja_limits reaches it in
 * under 512 KiB, 2 MiB under ASan; threads get 8 MiB).
 */
#define MAX_EVAL_NESTING 1000

_Noreturn void rbln_jinja_fail(struct jctx *c, int line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line <= 0)
		line = c->line;
	if (line > 0)
		rbln_error_set(c->err, -EINVAL, "%s line %d: %s", c->name, line, msg);
	else
		rbln_error_set(c->err, -EINVAL, "%s: %s", c->name, msg);
	longjmp(c->fail, 1);
}

/* An Undefined that says what is missing, for the error if it is used. */
static struct jv undef_fmt(struct jctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static struct jv undef_fmt(struct jctx *c, const char *fmt, ...)
{
	char buf[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return rbln_jv_undefined(rbln_jarena_strndup(c->arena, buf, strlen(buf)));
}

static struct jv loop_attr(struct jctx *c, const struct jv *obj, const char *name);

void rbln_jinja_charge(struct jctx *c, uint64_t steps)
{
	c->steps += steps;
	if (c->steps > c->max_steps)
		rbln_jinja_fail(c, 0, "evaluation budget of %llu steps exceeded (endless loop?)",
			   (unsigned long long)c->max_steps);
}

static void tick(struct jctx *c, int line)
{
	c->line = line;
	rbln_jinja_charge(c, 1);
}

void rbln_jinja_nest_enter(struct jctx *c, int line)
{
	if (++c->nesting > MAX_EVAL_NESTING)
		rbln_jinja_fail(c, line, "template nests too deeply (more than %d levels of "
			   "expressions, blocks, calls or values)", MAX_EVAL_NESTING);
}

void rbln_jinja_nest_leave(struct jctx *c)
{
	c->nesting--;
}

/* ---- scopes ---- */

static struct jscope *push_scope(struct jctx *c, struct jscope *parent)
{
	struct jscope *s = rbln_jalloc(c, sizeof(*s));

	s->parent = parent;
	s->vars = rbln_jalloc(c, sizeof(*s->vars));
	return s;
}

static void assign(struct jctx *c, const char *name, struct jv v)
{
	rbln_jv_dict_set(c, c->scope->vars, rbln_jv_cstr(c, name), v);
}

static struct jv lookup(struct jctx *c, const char *name)
{
	struct jscope *s;

	for (s = c->scope; s; s = s->parent) {
		struct jv *v = rbln_jv_dict_get_str(s->vars, name);

		/* A name lookup scans each scope: many {% set %} names cost. */
		rbln_jinja_charge(c, s->vars->n / 16);
		if (v)
			return *v;
	}
	return rbln_jinja_global(c, name);
}

/* ---- capture ---- */

struct jv rbln_jinja_capture(struct jctx *c, const struct jnodes *body)
{
	struct rbln_strbuf *saved = c->out, *buf = rbln_jinja_temp_buf(c);

	c->out = buf;
	rbln_jinja_exec(c, body);
	c->out = saved;
	return rbln_jinja_temp_str(c, buf);
}

struct rbln_strbuf *rbln_jinja_temp_buf(struct jctx *c)
{
	struct jtemp *t = rbln_jalloc(c, sizeof(*t));

	t->next = c->temps;
	c->temps = t;
	return &t->buf;
}

void rbln_jinja_temp_free(struct jctx *c, struct rbln_strbuf *sb)
{
	struct jtemp **pt;

	for (pt = &c->temps; *pt; pt = &(*pt)->next) {
		if (&(*pt)->buf == sb) {
			*pt = (*pt)->next;
			break;
		}
	}
	rbln_strbuf_free(sb);
}

struct jv rbln_jinja_temp_str(struct jctx *c, struct rbln_strbuf *sb)
{
	struct jv r = rbln_jv_str(c, sb->data ? sb->data : "", sb->len);

	rbln_jinja_temp_free(c, sb);
	return r;
}

/* ---- attribute and item access (Jinja's environment.getattr/getitem) ---- */

static _Noreturn void fail_undefined(struct jctx *c, int line, const struct jv *v,
				     const char *what)
{
	rbln_jinja_fail(c, line, "%s is undefined (when reading %s)",
		   v->undef_name ? v->undef_name : "a value", what);
}

static struct jv getattr_(struct jctx *c, const struct jv *obj, const char *name, int line)
{
	struct jv m, *found;

	if (obj->kind == JV_UNDEFINED) {
		char what[96];

		snprintf(what, sizeof(what), "attribute '%s'", name);
		fail_undefined(c, line, obj, what);
	}
	if (obj->kind == JV_NAMESPACE) {
		found = rbln_jv_dict_get_str(obj->u.d, name);
		return found ? *found : undef_fmt(c, "namespace attribute '%s'", name);
	}
	if (obj->kind == JV_LOOP)
		return loop_attr(c, obj, name);
	m = rbln_jinja_method(c, obj, name);
	if (m.kind != JV_UNDEFINED)
		return m;
	if (obj->kind == JV_DICT) {
		found = rbln_jv_dict_get_str(obj->u.d, name);
		if (found)
			return *found;
		return undef_fmt(c, "key '%s'", name);
	}
	return undef_fmt(c, "attribute '%s' of %s", name, rbln_jv_type_name(obj));
}

/* Code-point offsets of a string: off[i] is where character i starts. */
static size_t *char_offsets(struct jctx *c, const struct jstr *s, size_t *count)
{
	size_t n = rbln_utf8_count(s->data, s->len), i, k = 0;
	size_t *off = rbln_jalloc(c, (n + 1) * sizeof(*off));

	for (i = 0; i < s->len; i++)
		if (((unsigned char)s->data[i] & 0xC0) != 0x80)
			off[k++] = i;
	off[k] = s->len;
	*count = n;
	return off;
}

static struct jv getitem_(struct jctx *c, const struct jv *obj, const struct jv *key, int line)
{
	if (obj->kind == JV_UNDEFINED) {
		char what[96] = "an item";

		if (key->kind == JV_STR)
			snprintf(what, sizeof(what), "item '%.60s'", key->u.s->data);
		else if (key->kind == JV_INT)
			snprintf(what, sizeof(what), "item %lld", (long long)key->u.i);
		fail_undefined(c, line, obj, what);
	}
	if (obj->kind == JV_DICT || obj->kind == JV_NAMESPACE) {
		struct jv *found = rbln_jv_dict_get(obj->u.d, *key);

		if (found)
			return *found;
	} else if ((obj->kind == JV_LIST || obj->kind == JV_STR) &&
		   (key->kind == JV_INT || key->kind == JV_BOOL)) {
		int64_t i = key->kind == JV_INT ? key->u.i : key->u.b;
		size_t n, *off = NULL;

		if (obj->kind == JV_LIST)
			n = obj->u.l->n;
		else
			off = char_offsets(c, obj->u.s, &n);
		if (i < 0)
			i += (int64_t)n;
		if (i < 0 || (uint64_t)i >= n)
			return undef_fmt(c, "%s element %lld", rbln_jv_type_name(obj), (long long)i);
		if (obj->kind == JV_LIST)
			return obj->u.l->items[i];
		return rbln_jv_str(c, obj->u.s->data + off[i], off[i + 1] - off[i]);
	}
	/* obj["name"] falls back to the attribute, as in Jinja. */
	if (key->kind == JV_STR && obj->kind != JV_NAMESPACE)
		return getattr_(c, obj, key->u.s->data, line);
	return undef_fmt(c, "item of %s", rbln_jv_type_name(obj));
}

static int64_t slice_bound(struct jctx *c, const struct jv *v, int64_t dflt, int line)
{
	if (!v || v->kind == JV_NONE || v->kind == JV_UNDEFINED)
		return dflt;
	if (v->kind != JV_INT && v->kind != JV_BOOL)
		rbln_jinja_fail(c, line, "slice indices must be integers or None");
	return v->kind == JV_INT ? v->u.i : v->u.b;
}

/* Python's slice.indices() followed by the selection. */
static struct jv slice_(struct jctx *c, const struct jnode *n)
{
	struct jv obj = rbln_jinja_eval(c, n->a), parts[3];
	int64_t len, start, stop, step, i;
	size_t *off = NULL, count = 0;
	struct jv out;
	int k;

	for (k = 0; k < 3; k++)
		parts[k] = n->args.v[k] ? rbln_jinja_eval(c, n->args.v[k]) : rbln_jv_none();
	if (obj.kind == JV_LIST)
		len = (int64_t)obj.u.l->n;
	else if (obj.kind == JV_STR)
		off = char_offsets(c, obj.u.s, &count), len = (int64_t)count;
	else if (obj.kind == JV_UNDEFINED)
		fail_undefined(c, n->line, &obj, "a slice");
	else
		rbln_jinja_fail(c, n->line, "'%s' object is not subscriptable", rbln_jv_type_name(&obj));
	step = slice_bound(c, &parts[2], 1, n->line);
	if (step == 0)
		rbln_jinja_fail(c, n->line, "slice step cannot be zero");
	start = slice_bound(c, &parts[0], step < 0 ? len - 1 : 0, n->line);
	stop = slice_bound(c, &parts[1], step < 0 ? -1 - len : len, n->line);
	if (start < 0)
		start = start + len < 0 ? (step < 0 ? -1 : 0) : start + len;
	else if (start >= len)
		start = step < 0 ? len - 1 : len;
	if (stop < 0)
		stop = stop + len < 0 ? (step < 0 ? -1 : 0) : stop + len;
	else if (stop >= len)
		stop = step < 0 ? len - 1 : len;
	if (obj.kind == JV_LIST) {
		out = rbln_jv_list(c, 0);
		out.u.l->tuple = obj.u.l->tuple;
		for (i = start; step > 0 ? i < stop : i > stop; i += step)
			rbln_jv_list_push(c, &out, obj.u.l->items[i]);
		return out;
	}
	{
		struct rbln_strbuf *sb = rbln_jinja_temp_buf(c);

		for (i = start; step > 0 ? i < stop : i > stop; i += step)
			rbln_jout(c, sb, obj.u.s->data + off[i], off[i + 1] - off[i]);
		out = rbln_jinja_temp_str(c, sb);
		return out;
	}
}

/* ---- calls ---- */

struct jv *rbln_jcall_arg(struct jcall *call, size_t i, const char *name)
{
	size_t k;

	if (i < call->nargs)
		return &call->args[i];
	for (k = 0; name && k < call->nkw; k++)
		if (strcmp(call->kwnames[k], name) == 0)
			return &call->kwvals[k];
	return NULL;
}

void rbln_jcall_check(struct jctx *c, struct jcall *call, const char *fname, size_t max_pos,
		 const char *const *kw_allowed)
{
	size_t k, j;

	if (call->nargs > max_pos)
		rbln_jinja_fail(c, call->line, "%s() takes at most %zu positional arguments (%zu given)",
			   fname, max_pos, call->nargs);
	for (k = 0; k < call->nkw; k++) {
		for (j = 0; kw_allowed && kw_allowed[j]; j++)
			if (strcmp(call->kwnames[k], kw_allowed[j]) == 0)
				break;
		if (!kw_allowed || !kw_allowed[j])
			rbln_jinja_fail(c, call->line, "%s() got an unexpected keyword argument '%s'", fname,
				   call->kwnames[k]);
	}
}

static void eval_args(struct jctx *c, const struct jnode *n, struct jcall *call)
{
	size_t i;

	call->line = n->line;
	call->nargs = n->args.n;
	call->args = n->args.n ? rbln_jalloc(c, n->args.n * sizeof(*call->args)) : NULL;
	for (i = 0; i < n->args.n; i++)
		call->args[i] = rbln_jinja_eval(c, n->args.v[i]);
	call->nkw = n->kwvals.n;
	call->kwnames = n->kwnames;
	call->kwvals = n->kwvals.n ? rbln_jalloc(c, n->kwvals.n * sizeof(*call->kwvals)) : NULL;
	for (i = 0; i < n->kwvals.n; i++)
		call->kwvals[i] = rbln_jinja_eval(c, n->kwvals.v[i]);
}

struct jv rbln_jinja_call_value(struct jctx *c, const struct jv *fn, struct jcall *call)
{
	if (fn->kind == JV_FUNC)
		return fn->u.fn->fn(c, fn->u.fn, call);
	if (fn->kind == JV_UNDEFINED)
		rbln_jinja_fail(c, call->line, "'%s' is undefined (called as a function)",
			   fn->undef_name ? fn->undef_name : "value");
	rbln_jinja_fail(c, call->line, "'%s' object is not callable", rbln_jv_type_name(fn));
}

static struct jv macro_call(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	const struct jnode *m = f->data;
	struct jscope *saved = c->scope;
	int saved_loop = c->loop_depth;
	size_t i;
	struct jv r;

	if (call->nargs > m->nkwnames)
		rbln_jinja_fail(c, call->line, "macro '%s' takes not more than %zu argument(s)", m->name,
			   m->nkwnames);
	if (++c->depth > MAX_MACRO_DEPTH)
		rbln_jinja_fail(c, call->line, "macro '%s' recursion too deep", m->name);
	c->scope = push_scope(c, c->root);
	for (i = 0; i < m->nkwnames; i++) {
		struct jv *a = rbln_jcall_arg(call, i, m->kwnames[i]);

		if (a)
			assign(c, m->kwnames[i], *a);
		else if (m->kwvals.v[i])
			assign(c, m->kwnames[i], rbln_jinja_eval(c, m->kwvals.v[i]));
		else
			assign(c, m->kwnames[i], rbln_jv_undefined(m->kwnames[i]));
	}
	for (i = 0; i < call->nkw; i++) {
		size_t k;

		for (k = 0; k < m->nkwnames && strcmp(m->kwnames[k], call->kwnames[i]); k++)
			;
		if (k == m->nkwnames)
			rbln_jinja_fail(c, call->line, "macro '%s' has no argument '%s'", m->name,
				   call->kwnames[i]);
	}
	c->loop_depth = 0;
	r = rbln_jinja_capture(c, &m->body);
	c->loop_depth = saved_loop;
	c->scope = saved;
	c->depth--;
	return r;
}

/* ---- operators ---- */

static struct jv eval_compare(struct jctx *c, const struct jnode *n)
{
	struct jv left = rbln_jinja_eval(c, n->a);
	size_t i;

	for (i = 0; i < n->body.n; i++) {
		struct jv right = rbln_jinja_eval(c, n->body.v[i]);
		int op = n->cmp_ops[i];
		bool ok;

		switch (op) {
		case JOP_EQ: ok = rbln_jv_equal(&left, &right); break;
		case JOP_NE: ok = !rbln_jv_equal(&left, &right); break;
		case JOP_IN: ok = rbln_jinja_contains(c, &right, &left, n->line); break;
		case JOP_NOT_IN: ok = !rbln_jinja_contains(c, &right, &left, n->line); break;
		default: {
			int r;

			if (left.kind == JV_UNDEFINED || right.kind == JV_UNDEFINED)
				fail_undefined(c, n->line,
					       left.kind == JV_UNDEFINED ? &left : &right,
					       "a comparison");
			r = rbln_jv_compare(c, n->line, &left, &right);
			ok = op == JOP_LT ? r < 0 : op == JOP_LE ? r <= 0 : op == JOP_GT ? r > 0 :
										 r >= 0;
		}
		}
		if (!ok)
			return rbln_jv_bool(false);
		left = right;
	}
	return rbln_jv_bool(true);
}

static struct jv eval_filter(struct jctx *c, const struct jnode *n)
{
	struct jv v = n->a ? rbln_jinja_eval(c, n->a) : *c->block_input;
	struct jcall call = { 0 };

	eval_args(c, n, &call);
	return rbln_jinja_apply_filter(c, n->name, &v, &call);
}

static struct jv eval_literal_seq(struct jctx *c, const struct jnode *n)
{
	struct jv r;
	size_t i;

	if (n->kind == JN_DICT) {
		r = rbln_jv_dict(c);
		for (i = 0; i < n->args.n; i++)
			rbln_jv_dict_set(c, r.u.d, rbln_jinja_eval(c, n->args.v[i]),
				    rbln_jinja_eval(c, n->kwvals.v[i]));
		return r;
	}
	r = rbln_jv_list(c, n->args.n);
	r.u.l->tuple = n->kind == JN_TUPLE;
	for (i = 0; i < n->args.n; i++)
		rbln_jv_list_push(c, &r, rbln_jinja_eval(c, n->args.v[i]));
	return r;
}

static struct jv eval_node(struct jctx *c, const struct jnode *n);

struct jv rbln_jinja_eval(struct jctx *c, const struct jnode *n)
{
	struct jv v;

	rbln_jinja_nest_enter(c, n->line);
	v = eval_node(c, n);
	rbln_jinja_nest_leave(c);
	return v;
}

static struct jv eval_node(struct jctx *c, const struct jnode *n)
{
	struct jv a, b;

	tick(c, n->line);
	switch (n->kind) {
	case JN_LITERAL:
		return n->value;
	case JN_NAME: {
		struct jv v = lookup(c, n->name);

		return v.kind == JV_UNDEFINED ? undef_fmt(c, "'%s'", n->name) : v;
	}
	case JN_GETATTR:
		a = rbln_jinja_eval(c, n->a);
		return getattr_(c, &a, n->name, n->line);
	case JN_GETITEM:
		a = rbln_jinja_eval(c, n->a);
		b = rbln_jinja_eval(c, n->b);
		return getitem_(c, &a, &b, n->line);
	case JN_SLICE:
		return slice_(c, n);
	case JN_CALL: {
		struct jcall call = { 0 };

		a = rbln_jinja_eval(c, n->a);
		eval_args(c, n, &call);
		return rbln_jinja_call_value(c, &a, &call);
	}
	case JN_FILTER:
		return eval_filter(c, n);
	case JN_TEST: {
		struct jcall call = { 0 };
		bool r;

		a = rbln_jinja_eval(c, n->a);
		eval_args(c, n, &call);
		r = rbln_jinja_apply_test(c, n->name, &a, &call);
		return rbln_jv_bool(n->negated ? !r : r);
	}
	case JN_BINOP:
	case JN_CONCAT:
		a = rbln_jinja_eval(c, n->a);
		b = rbln_jinja_eval(c, n->b);
		return rbln_jinja_binop(c, n->op, &a, &b, n->line);
	case JN_UNARY:
		a = rbln_jinja_eval(c, n->a);
		if (n->op == '+' && rbln_jv_is_number(&a))
			return a.kind == JV_BOOL ? rbln_jv_int(a.u.b) : a;
		if (a.kind == JV_FLOAT)
			return rbln_jv_float(-a.u.f);	/* keeps -0.0 */
		b = rbln_jv_int(0);
		return rbln_jinja_binop(c, '-', &b, &a, n->line);
	case JN_COMPARE:
		return eval_compare(c, n);
	case JN_AND:
		a = rbln_jinja_eval(c, n->a);
		return rbln_jv_truthy(&a) ? rbln_jinja_eval(c, n->b) : a;
	case JN_OR:
		a = rbln_jinja_eval(c, n->a);
		return rbln_jv_truthy(&a) ? a : rbln_jinja_eval(c, n->b);
	case JN_NOT:
		a = rbln_jinja_eval(c, n->a);
		return rbln_jv_bool(!rbln_jv_truthy(&a));
	case JN_COND:
		a = rbln_jinja_eval(c, n->a);
		if (rbln_jv_truthy(&a))
			return rbln_jinja_eval(c, n->b);
		return n->c ? rbln_jinja_eval(c, n->c) : rbln_jv_undefined("conditional expression");
	case JN_LIST:
	case JN_TUPLE:
	case JN_DICT:
		return eval_literal_seq(c, n);
	default:
		rbln_jinja_fail(c, n->line, "statement used as an expression");
	}
}

/* ---- statements ---- */

struct jv rbln_jinja_iterable_items(struct jctx *c, const struct jv *v, int line)
{
	struct jv items;
	size_t i, count, *off;

	switch (v->kind) {
	case JV_LIST:
		return *v;
	case JV_UNDEFINED:
		return rbln_jv_list(c, 0);	/* Jinja iterates Undefined as empty */
	case JV_DICT:
		items = rbln_jv_list(c, v->u.d->n);
		for (i = 0; i < v->u.d->n; i++)
			rbln_jv_list_push(c, &items, v->u.d->keys[i]);
		return items;
	case JV_STR:
		off = char_offsets(c, v->u.s, &count);
		items = rbln_jv_list(c, count);
		for (i = 0; i < count; i++)
			rbln_jv_list_push(c, &items, rbln_jv_str(c, v->u.s->data + off[i], off[i + 1] - off[i]));
		return items;
	default:
		rbln_jinja_fail(c, line, "'%s' object is not iterable", rbln_jv_type_name(v));
	}
}

static void bind_targets(struct jctx *c, const struct jnode *n, const struct jv *v)
{
	size_t i;

	if (n->nkwnames == 1) {
		assign(c, n->kwnames[0], *v);
		return;
	}
	if (v->kind != JV_LIST || v->u.l->n != n->nkwnames)
		rbln_jinja_fail(c, n->line, "cannot unpack %s into %zu names", rbln_jv_type_name(v),
			   n->nkwnames);
	for (i = 0; i < n->nkwnames; i++)
		assign(c, n->kwnames[i], v->u.l->items[i]);
}

static struct jv loop_cycle(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	if (!call->nargs)
		rbln_jinja_fail(c, call->line, "loop.cycle() needs at least one argument");
	return call->args[f->self->u.loop->index % call->nargs];
}

/* loop.index, loop.first, ... computed from the iteration state. */
static struct jv loop_attr(struct jctx *c, const struct jv *obj, const char *name)
{
	const struct jloop *l = obj->u.loop;
	int64_t i = (int64_t)l->index, n = (int64_t)l->items->n;

	if (!strcmp(name, "index0")) return rbln_jv_int(i);
	if (!strcmp(name, "index")) return rbln_jv_int(i + 1);
	if (!strcmp(name, "revindex0")) return rbln_jv_int(n - i - 1);
	if (!strcmp(name, "revindex")) return rbln_jv_int(n - i);
	if (!strcmp(name, "first")) return rbln_jv_bool(i == 0);
	if (!strcmp(name, "last")) return rbln_jv_bool(i + 1 == n);
	if (!strcmp(name, "length")) return rbln_jv_int(n);
	if (!strcmp(name, "depth")) return rbln_jv_int(1);
	if (!strcmp(name, "depth0")) return rbln_jv_int(0);
	if (!strcmp(name, "previtem"))
		return i ? l->items->items[i - 1] : undef_fmt(c, "loop.previtem");
	if (!strcmp(name, "nextitem"))
		return i + 1 < n ? l->items->items[i + 1] : undef_fmt(c, "loop.nextitem");
	if (!strcmp(name, "cycle"))
		return rbln_jv_func(c, "loop.cycle", loop_cycle, obj, NULL);
	return undef_fmt(c, "loop attribute '%s'", name);
}

/* The items that pass the loop's "if" filter, evaluated in their own scope. */
static struct jv filter_items(struct jctx *c, const struct jnode *n, struct jv items)
{
	struct jscope *saved = c->scope;
	struct jv kept = rbln_jv_list(c, items.u.l->n);
	size_t i;

	for (i = 0; i < items.u.l->n; i++) {
		struct jv ok;

		c->scope = push_scope(c, saved);
		bind_targets(c, n, &items.u.l->items[i]);
		ok = rbln_jinja_eval(c, n->b);
		if (rbln_jv_truthy(&ok))
			rbln_jv_list_push(c, &kept, items.u.l->items[i]);
	}
	c->scope = saved;
	return kept;
}

static void exec_for(struct jctx *c, const struct jnode *n)
{
	struct jv iter = rbln_jinja_eval(c, n->a);
	struct jv items = rbln_jinja_iterable_items(c, &iter, n->line);
	struct jscope *saved = c->scope;
	size_t i;

	if (n->b)
		items = filter_items(c, n, items);
	c->loop_depth++;
	for (i = 0; i < items.u.l->n; i++) {
		struct jloop *state = rbln_jalloc(c, sizeof(*state));

		tick(c, n->line);
		state->items = items.u.l;
		state->index = i;
		c->scope = push_scope(c, saved);
		assign(c, "loop", (struct jv){ .kind = JV_LOOP, .u.loop = state });
		bind_targets(c, n, &items.u.l->items[i]);
		rbln_jinja_exec(c, &n->body);
		c->scope = saved;
		if (c->loop_ctl == 1) {
			c->loop_ctl = 0;
			break;
		}
		c->loop_ctl = 0;
	}
	c->loop_depth--;
	if (!items.u.l->n && n->c)
		rbln_jinja_exec(c, &n->c->body);
}

static void exec_set(struct jctx *c, const struct jnode *n)
{
	struct jv v = rbln_jinja_eval(c, n->b);

	if (n->a) {
		struct jv target = rbln_jinja_eval(c, n->a);

		if (target.kind != JV_NAMESPACE)
			rbln_jinja_fail(c, n->line, "cannot assign attribute '%s' on '%s' (not a namespace)",
				   n->name, n->a->name);
		rbln_jv_dict_set(c, target.u.d, rbln_jv_cstr(c, n->name), v);
		return;
	}
	bind_targets(c, n, &v);
}

/* {% filter %} and set blocks: the body's text through a filter chain. */
static struct jv filtered_capture(struct jctx *c, const struct jnode *n)
{
	struct jv text = rbln_jinja_capture(c, &n->body);
	const struct jv *saved = c->block_input;
	struct jv r;

	if (!n->b)
		return text;
	c->block_input = &text;
	r = rbln_jinja_eval(c, n->b);
	c->block_input = saved;
	return r;
}

static void exec_node(struct jctx *c, const struct jnode *n);

static void exec_stmt(struct jctx *c, const struct jnode *n)
{
	rbln_jinja_nest_enter(c, n->line);
	exec_node(c, n);
	rbln_jinja_nest_leave(c);
}

static void exec_node(struct jctx *c, const struct jnode *n)
{
	struct jv v;

	tick(c, n->line);
	switch (n->kind) {
	case JN_TEXT:
		rbln_jout(c, c->out, n->value.u.s->data, n->value.u.s->len);
		return;
	case JN_OUTPUT:
		v = rbln_jinja_eval(c, n->a);
		rbln_jv_to_str(c, c->out, &v);
		return;
	case JN_IF:
		v = rbln_jinja_eval(c, n->a);
		if (rbln_jv_truthy(&v))
			rbln_jinja_exec(c, &n->body);
		else if (n->c && n->c->kind == JN_IF)
			exec_stmt(c, n->c);
		else if (n->c)
			rbln_jinja_exec(c, &n->c->body);
		return;
	case JN_FOR:
		exec_for(c, n);
		return;
	case JN_SET:
		exec_set(c, n);
		return;
	case JN_SET_BLOCK:
		assign(c, n->kwnames[0], filtered_capture(c, n));
		return;
	case JN_BLOCK:
		if (n->b) {
			v = filtered_capture(c, n);
			rbln_jv_to_str(c, c->out, &v);
		} else {
			rbln_jinja_exec(c, &n->body);
		}
		return;
	case JN_MACRO:
		assign(c, n->name, rbln_jv_func(c, n->name, macro_call, NULL, n));
		return;
	case JN_BREAK:
	case JN_CONTINUE:
		if (!c->loop_depth)
			rbln_jinja_fail(c, n->line, "'%s' outside a loop",
				   n->kind == JN_BREAK ? "break" : "continue");
		c->loop_ctl = n->kind == JN_BREAK ? 1 : 2;
		return;
	default:
		rbln_jinja_fail(c, n->line, "expression used as a statement");
	}
}

void rbln_jinja_exec(struct jctx *c, const struct jnodes *body)
{
	size_t i;

	for (i = 0; i < body->n && !c->loop_ctl; i++)
		exec_stmt(c, body->v[i]);
}
