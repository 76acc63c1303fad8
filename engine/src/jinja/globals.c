// SPDX-License-Identifier: MIT
/*
 * Global functions of the template environment: Jinja's range, namespace
 * and dict, and transformers' raise_exception and strftime_now.
 */
#include <string.h>
#include <time.h>

#include "jinja/jinja_internal.h"

#define MAX_RANGE 1000000

static struct jv g_range(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	int64_t a[3] = { 0, 0, 1 }, start, stop, step, i;
	struct jv r;
	size_t k;

	if (call->nkw || call->nargs < 1 || call->nargs > 3)
		rbln_jinja_fail(c, call->line, "range() takes 1 to 3 integer arguments");
	for (k = 0; k < call->nargs; k++) {
		if (call->args[k].kind != JV_INT && call->args[k].kind != JV_BOOL)
			rbln_jinja_fail(c, call->line, "range() arguments must be integers, not %s",
				   rbln_jv_type_name(&call->args[k]));
		a[k] = call->args[k].kind == JV_INT ? call->args[k].u.i : call->args[k].u.b;
	}
	start = call->nargs == 1 ? 0 : a[0];
	stop = call->nargs == 1 ? a[0] : a[1];
	step = call->nargs == 3 ? a[2] : 1;
	if (!step)
		rbln_jinja_fail(c, call->line, "range() arg 3 must not be zero");
	r = rbln_jv_list(c, 0);
	for (i = start; step > 0 ? i < stop : i > stop;) {
		if (r.u.l->n >= MAX_RANGE)
			rbln_jinja_fail(c, call->line, "range() too large (limit %d)", MAX_RANGE);
		rbln_jv_list_push(c, &r, rbln_jv_int(i));
		/* A step past INT64 ends the range instead of wrapping around. */
		if (__builtin_add_overflow(i, step, &i))
			break;
	}
	(void)f;
	return r;
}

static void kwargs_into(struct jctx *c, struct jdict *d, struct jcall *call)
{
	size_t k;

	for (k = 0; k < call->nkw; k++)
		rbln_jv_dict_set(c, d, rbln_jv_cstr(c, call->kwnames[k]), call->kwvals[k]);
}

static struct jv g_dict(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	struct jv d = rbln_jv_dict(c);
	size_t i;

	if (call->nargs > 1 || (call->nargs && call->args[0].kind != JV_DICT))
		rbln_jinja_fail(c, call->line, "%s() takes an optional mapping and keyword arguments",
			   f->name);
	if (call->nargs)
		for (i = 0; i < call->args[0].u.d->n; i++)
			rbln_jv_dict_set(c, d.u.d, call->args[0].u.d->keys[i], call->args[0].u.d->vals[i]);
	kwargs_into(c, d.u.d, call);
	return d;
}

static struct jv g_namespace(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	struct jv ns = g_dict(c, f, call);

	ns.kind = JV_NAMESPACE;
	return ns;
}

static struct jv g_raise_exception(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	struct jv msg;

	(void)f;
	if (call->nargs != 1 || call->nkw)
		rbln_jinja_fail(c, call->line, "raise_exception() takes one message argument");
	msg = rbln_jv_stringify(c, &call->args[0]);
	rbln_jinja_fail(c, call->line, "template raised an exception: %s", msg.u.s->data);
}

static struct jv g_strftime_now(struct jctx *c, const struct jfunc *f, struct jcall *call)
{
	time_t now = c->now ? c->now : time(NULL);
	struct tm tm;
	char buf[256];
	size_t n;

	(void)f;
	if (call->nargs != 1 || call->nkw || call->args[0].kind != JV_STR)
		rbln_jinja_fail(c, call->line, "strftime_now() takes one format string");
	if (!localtime_r(&now, &tm))
		rbln_jinja_fail(c, call->line, "strftime_now(): cannot read the clock");
	n = strftime(buf, sizeof(buf), call->args[0].u.s->data, &tm);
	if (!n && call->args[0].u.s->len)
		rbln_jinja_fail(c, call->line, "strftime_now(): format result too long or empty");
	return rbln_jv_str(c, buf, n);
}

static const struct {
	const char *name;
	jfunc_fn fn;
} globals[] = {
	{ "range", g_range },
	{ "dict", g_dict },
	{ "namespace", g_namespace },
	{ "raise_exception", g_raise_exception },
	{ "strftime_now", g_strftime_now },
};

struct jv rbln_jinja_global(struct jctx *c, const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(globals) / sizeof(globals[0]); i++)
		if (!strcmp(globals[i].name, name))
			return rbln_jv_func(c, globals[i].name, globals[i].fn, NULL, NULL);
	return rbln_jv_undefined(name);
}
