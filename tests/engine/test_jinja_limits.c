// SPDX-License-Identifier: MIT
/*
 * Hostile templates end in a clear error, never a crash or a hang: depth
 * limits in the parser (nested blocks, elif chains, brackets) and on the
 * syntax tree (long operator, filter and attribute chains), a nesting limit
 * in the evaluator (recursive macros, a namespace that holds itself), a
 * step budget that covers filters and many {% set %}, no leak when a render
 * fails with scratch buffers live (the ASan build checks), a range() whose
 * step would overflow, and integer powers with huge exponents.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbln_jinja.h"
#include "test_common.h"

static int render(const char *src, char **out, struct rbln_error *err)
{
	struct rbln_jinja_template *t;
	json_object *vars = json_tokener_parse("{\"d\": {\"a\": 1}, \"xs\": [1, 2]}");
	size_t len;
	int rc;

	assert_non_null(vars);
	*out = NULL;
	rc = rbln_jinja_compile(src, strlen(src), "template", &t, err);
	if (!rc) {
		rc = rbln_jinja_render(t, vars, NULL, out, &len, err);
		rbln_jinja_free(t);
	}
	json_object_put(vars);
	return rc;
}

static void expect_error(const char *what, const char *src, const char *w1, const char *w2)
{
	struct rbln_error err = { 0 };
	char *out;

	if (!render(src, &out, &err))
		fail_msg("%s: rendered (%zu bytes) instead of failing", what, strlen(out));
	if (!strstr(err.msg, w1) || (w2 && !strstr(err.msg, w2)))
		fail_msg("%s: message \"%s\" lacks \"%s\" or \"%s\"", what, err.msg, w1,
			 w2 ? w2 : "");
}

/* head, then `n` copies of `unit`, then tail, then `n` copies of `close`. */
static char *repeat(const char *head, const char *unit, size_t n, const char *tail,
		    const char *close)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail), cl = strlen(close), i;
	char *s = malloc(hl + n * (ul + cl) + tl + 1), *p = s;

	assert_non_null(s);
	memcpy(p, head, hl);
	p += hl;
	for (i = 0; i < n; i++, p += ul)
		memcpy(p, unit, ul);
	memcpy(p, tail, tl);
	p += tl;
	for (i = 0; i < n; i++, p += cl)
		memcpy(p, close, cl);
	*p = '\0';
	return s;
}

static void expect_repeat_error(const char *what, const char *head, const char *unit, size_t n,
				const char *tail, const char *close, const char *w1)
{
	char *src = repeat(head, unit, n, tail, close);

	expect_error(what, src, w1, NULL);
	free(src);
}

static void test_parser_depth(void **state)
{
	(void)state;
	expect_repeat_error("nested if blocks", "", "{% if true %}", 100000, "x",
			    "{% endif %}", "nested too deeply");
	expect_repeat_error("nested for blocks", "", "{% for i in xs %}", 100000, "x",
			    "{% endfor %}", "nested too deeply");
	expect_repeat_error("elif chain", "{% if false %}", "{% elif false %}", 100000,
			    "{% endif %}", "", "nested too deeply");
	expect_repeat_error("brackets", "{{ ", "[", 100000, "1", "]", "nested too deeply");
	expect_repeat_error("unary minus", "{{ ", "-", 100000, "1 }}", "", "nested too deeply");
	expect_repeat_error("not chain", "{{ ", "not ", 100000, "1 }}", "", "nested too deeply");
}

static void test_tree_depth(void **state)
{
	(void)state;
	expect_repeat_error("operator chain", "{{ 1", " + 1", 100000, " }}", "", "too deep");
	expect_repeat_error("concat chain", "{{ 'a'", " ~ 'a'", 100000, " }}", "", "too deep");
	expect_repeat_error("filter chain", "{{ 'a'", "|trim", 100000, " }}", "", "too deep");
	expect_repeat_error("attribute chain", "{{ d", ".a", 100000, " }}", "", "too deep");
	expect_repeat_error("item chain", "{{ d", "['a']", 100000, " }}", "", "too deep");
	expect_repeat_error("call chain", "{{ range", "(1)", 100000, " }}", "", "too deep");
	expect_repeat_error("and chain", "{{ 1", " and 1", 100000, " }}", "", "too deep");
	expect_repeat_error("conditional chain", "{{ 1", " if 1 else 1", 100000, " }}", "",
			    "too deep");
}

static void test_evaluator_nesting(void **state)
{
	char *src;

	(void)state;
	expect_error("namespace holding itself",
		     "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}", "nests too deeply",
		     NULL);
	expect_error("namespace in a list it holds",
		     "{% set ns = namespace() %}{% set ns.l = [ns] %}{{ ns.l }}",
		     "nests too deeply", NULL);
	expect_error("namespace as JSON",
		     "{% set ns = namespace() %}{% set ns.me = ns %}{{ ns|tojson }}",
		     "not JSON serializable", NULL);
	/* Each macro level evaluates a deep expression: the product is bounded. */
	src = repeat("{% macro m(n) %}{{ ", "[", 40, "m(n - 1) if n else 0", "]");
	{
		char *full = malloc(strlen(src) + 64);

		assert_non_null(full);
		sprintf(full, "%s }}{%% endmacro %%}{{ m(100) }}", src);
		expect_error("deep expressions in recursive macros", full, "nests too deeply",
			     NULL);
		free(full);
	}
	free(src);
	expect_error("endless macro recursion", "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}",
		     "recursion", NULL);
}

static void test_step_budget_covers_filters_and_sets(void **state)
{
	char *src;

	(void)state;
	expect_error("unique of a large range", "{{ range(1000000)|unique|list|length }}",
		     "budget", NULL);
	expect_error("sorting large lists repeatedly",
		     "{% for i in range(100) %}{{ range(1000000)|sort|length }}{% endfor %}",
		     "budget", NULL);
	/* Each distinct name makes every later set and lookup scan longer. */
	{
		size_t n = 60000, i, off = 0;

		src = malloc(n * 32);
		assert_non_null(src);
		for (i = 0; i < n; i++)
			off += (size_t)sprintf(src + off, "{%% set v%zu = %zu %%}", i, i);
		expect_error("many sets", src, "budget", NULL);
		free(src);
	}
}

/* A caller may set a smaller budget (the fuzzer does); text built counts too. */
static void test_caller_budget(void **state)
{
	const char *src = "{% for i in range(1000) %}{{ i }}{% endfor %}";
	struct rbln_jinja_options opt = { .max_steps = 500 };
	struct rbln_jinja_template *t;
	struct rbln_error err = { 0 };
	char *out;
	size_t len;

	(void)state;
	assert_int_equal(rbln_jinja_compile(src, strlen(src), "template", &t, &err), 0);
	assert_true(rbln_jinja_render(t, NULL, &opt, &out, &len, &err) < 0);
	test_assert_contains_all(err.msg, "budget of 500 steps", NULL);
	opt.max_steps = 0;
	assert_int_equal(rbln_jinja_render(t, NULL, &opt, &out, &len, &err), 0);
	free(out);
	rbln_jinja_free(t);
	/* Each level re-escapes the last: 2^40 bytes of work without charging text. */
	expect_error("re-escaping in recursive macros",
		     "{% macro m(n) %}{{ [[m(n - 1) if n else 'x\\\\']] }}{% endmacro %}{{ m(40) }}",
		     "budget", NULL);
}

/* The error unwinds past live scratch buffers: ASan's leak check sees them. */
static void test_failed_render_frees_scratch(void **state)
{
	(void)state;
	expect_error("join past the output limit", "{{ (['x' * 1000000] * 70)|join }}",
		     "64 MiB", NULL);
	expect_error("error inside a join",
		     "{{ (['x' * 1000000] * 20 + [raise_exception('stop')])|join }}", "stop", NULL);
	expect_error("error in a capture", "{% set x %}{{ 'y' * 1000000 }}{{ nope() }}{% endset %}",
		     "nope", NULL);
}

static void test_range_step_overflow(void **state)
{
	struct rbln_error err = { 0 };
	char *out;

	(void)state;
	assert_int_equal(render("{{ range(0, 9223372036854775807, 4611686018427387904)|list }}",
				&out, &err), 0);
	assert_string_equal(out, "[0, 4611686018427387904]");
	free(out);
	assert_int_equal(render("{{ range(-9223372036854775807, -9223372036854775807 - 1 + 1, "
				"-4611686018427387904)|list }}", &out, &err), 0);
	assert_string_equal(out, "[]");
	free(out);
	assert_int_equal(render("{{ range(9223372036854775807, 0, -9223372036854775807)|list }}",
				&out, &err), 0);
	assert_string_equal(out, "[9223372036854775807]");
	free(out);
}

/*
 * ** takes log2(y) steps: 1 ** (2^63 - 1) once looped that many times (a
 * fuzzer's timeout). Results at the edges of int64, and overflow as an error.
 */
static void test_int_pow(void **state)
{
	struct rbln_error err = { 0 };
	char *out;

	(void)state;
	assert_int_equal(render("{{ 1 ** 9223372036854775807 }} {{ (-1) ** 9223372036854775807 }} "
				"{{ (-1) ** 9223372036854775806 }} {{ 0 ** 9223372036854775807 }} "
				"{{ 0 ** 0 }} {{ 2 ** 62 }} {{ (-2) ** 63 }} {{ 3 ** 39 }} "
				"{{ (-3) ** 5 }} {{ 2 ** -2 }}", &out, &err), 0);
	assert_string_equal(out, "1 -1 1 0 1 4611686018427387904 -9223372036854775808 "
				 "4052555153018976267 -243 0.25");
	free(out);
	expect_error("2 ** 63", "{{ 2 ** 63 }}", "integer overflow in '**'", NULL);
	expect_error("3 ** 40", "{{ 3 ** 40 }}", "integer overflow in '**'", NULL);
	expect_error("2 ** huge", "{{ 2 ** 9223372036854775807 }}", "integer overflow in '**'",
		     NULL);
	expect_error("(-2) ** 64", "{{ (-2) ** 64 }}", "integer overflow in '**'", NULL);
}

/*
 * Repetition: an empty string or list times 2^63 - 1 is empty at once (it
 * once looped that many times: a fuzzer's timeout), and a count whose
 * product with the length does not fit 64 bits is still too large.
 */
static void test_repeat_limits(void **state)
{
	struct rbln_error err = { 0 };
	char *out;

	(void)state;
	assert_int_equal(render("[{{ '' * 9223372036854775807 }}] {{ ([] * 9223372036854775807)|length }} "
				"{{ 'ab' * 3 }} {{ ([1, 2] * 2)|length }} [{{ 'x' * -5 }}]",
				&out, &err), 0);
	assert_string_equal(out, "[] 0 ababab 4 []");
	free(out);
	expect_error("string times 2^62", "{{ 'abcd' * 4611686018427387904 }}",
		     "string repetition too large", NULL);
	expect_error("list times 2^61", "{{ ([1, 2, 3, 4, 5, 6, 7, 8] * 2305843009213693952)|length }}",
		     "list repetition too large", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parser_depth),
		cmocka_unit_test(test_tree_depth),
		cmocka_unit_test(test_evaluator_nesting),
		cmocka_unit_test(test_step_budget_covers_filters_and_sets),
		cmocka_unit_test(test_caller_budget),
		cmocka_unit_test(test_failed_render_frees_scratch),
		cmocka_unit_test(test_range_step_overflow),
		cmocka_unit_test(test_int_pow),
		cmocka_unit_test(test_repeat_limits),
	};

	return cmocka_run_group_tests_name("engine jinja limits", tests, NULL, NULL);
}
