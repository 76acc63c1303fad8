// SPDX-License-Identifier: MIT
/*
 * The Jinja interpreter against Python's jinja2: each case below was
 * rendered by jinja2 3.1 configured as transformers configures it
 * (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols,
 * its tojson, raise_exception and strftime_now) and the output recorded.
 * Error cases check that messages name the construct and the line.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rbln_jinja.h"
#include "test_common.h"

struct render_case {
	const char *name;
	const char *template;
	const char *expected;
};

static const struct render_case render_cases[] = {
	{ "whitespace: trim_blocks and lstrip_blocks",
	  "<\n  {% if true %}\n  body\n  {% endif %}\n>",
	  "<\n  body\n>" },
	{ "whitespace: - and + markers",
	  "a  {{- ' b ' -}}  c|{%- if true %} d{% endif -%}  |  {%+ if true %}e{% endif %}",
	  "a b c| d|  e" },
	{ "whitespace: comments and trailing newline",
	  "x {# note #}\n  {#- gone -#}\ny\n",
	  "x y" },
	{ "whitespace: CRLF source",
	  "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\nc",
	  "a\nb\nc" },
	{ "loop variables",
	  "{% for x in xs %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }}{{ loop.previtem }}{{ loop.nextitem }}|{% endfor %}",
	  "10TrueFalse331|21FalseFalse3232|32FalseTrue311|" },
	{ "loop filter, else, break, continue",
	  "{% for x in xs if x > 1 %}{{ x }}/{{ loop.length }} {% endfor %}{% for x in e %}-{% else %}empty{% endfor %} {% for x in xs %}{% if x == 1 %}{% continue %}{% endif %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}",
	  "3/2 2/2 empty 3" },
	{ "unpacking and dict iteration",
	  "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k in d %}{{ k }}{% endfor %}{% set a, b = 1, 2 %}{{ a + b }}",
	  "b=2;a=1;ba3" },
	{ "set scoping and namespace",
	  "{% set x = 0 %}{% set ns = namespace(total=0) %}{% for i in xs %}{% set x = i %}{% set ns.total = ns.total + i %}{% endfor %}{{ x }} {{ ns.total }}",
	  "0 6" },
	{ "if / elif / else and conditional expressions",
	  "{% if n > 10 %}big{% elif n > 5 %}mid{% else %}small{% endif %} {{ 'yes' if e else 'no' }} {{ 'x' if false }}|",
	  "mid no |" },
	{ "arithmetic and Python number formatting",
	  "{{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 1 / 4 }} {{ 2 ** 10 }} {{ 0.1 + 0.2 }} {{ 1e20 }} {{ 1.5e-7 }} {{ 10 / 2 }} {{ -f }}",
	  "3 -4 2 0.25 1024 0.30000000000000004 1e+20 1.5e-07 5.0 -2.5" },
	{ "strings: concatenation, repetition, slicing, indexing",
	  "{{ 'a' ~ n ~ none ~ missing }} {{ 'ab' * 2 }} {{ s[0] }}{{ s[-1] }} {{ s[1:4] }} {{ s[::-1] }} {{ u[1:3] }} {{ xs[1:] }}",
	  "a7None abab Hd ell dlroW olleH \xc3""\xa9""l [1, 2]" },
	{ "comparisons, membership and tests",
	  "{{ 1 < 2 < 3 }} {{ 'lo' in s }} {{ 4 not in xs }} {{ 'a' in d }} {{ n is odd }} {{ n is divisibleby 7 }} {{ missing is defined }} {{ none is none }} {{ s is string }} {{ d is mapping }} {{ true == 1 }}",
	  "True True True True True True False True True True True" },
	{ "printing lists, dicts and None",
	  "{{ xs }} {{ d }} {{ [none, true, 1.0, 'it\\'s'] }} {{ (1,) }} {{ none }} {{ missing }}|",
	  "[3, 1, 2] {'b': 2, 'a': 1} [None, True, 1.0, \"it's\"] (1,) None |" },
	{ "string filters and methods",
	  "{{ '  pad  '|trim }}|{{ s|upper }} {{ s|lower }} {{ 'a tale-of (two)'|title }} {{ s|length }} {{ u|length }} {{ s.startswith('He') }} {{ s.split() }} {{ 'a,b'.split(',') }} {{ s.replace('l', 'L') }} {{ '  x '.strip() }}",
	  "pad|HELLO WORLD hello world A Tale-Of (Two) 11 5 True ['Hello', 'World'] ['a', 'b'] HeLLo WorLd x" },
	{ "tojson",
	  "{{ d|tojson }} {{ objs[0]|tojson(indent=2) }} {{ u|tojson }} {{ 'q\"\\\\'|tojson }} {{ [1.0, none, true]|tojson }}",
	  "{\"b\": 2, \"a\": 1} {\n  \"name\": \"x\",\n  \"v\": 2\n} \"h\xc3""\xa9""llo\" \"q\\\"\\\\\" [1.0, null, true]" },
	{ "default, join, map, select, sort, unique",
	  "{{ missing|default('dflt') }} {{ ''|default('empty', true) }} {{ xs|join(', ') }} {{ objs|map(attribute='name')|join }} {{ objs|selectattr('v')|map(attribute='name')|list }} {{ xs|sort }} {{ xs|sort(reverse=true) }} {{ [1, 1, 2]|unique|list }} {{ xs|sum }} {{ xs|max }}",
	  "dflt empty 3, 1, 2 xyz ['x', 'y'] [1, 2, 3] [3, 2, 1] [1, 2] 6 3" },
	{ "numbers and dict filters",
	  "{{ '42'|int + 1 }} {{ 'x'|int }} {{ f|round }} {{ 3.14159|round(2) }} {{ d|dictsort }} {{ d|items|list }} {{ n|string ~ '!' }} {{ -3|abs }}",
	  "43 0 2.0 3.14 [('a', 1), ('b', 2)] [('b', 2), ('a', 1)] 7! 3" },
	{ "macros, set blocks, filter blocks, raw",
	  "{% macro tag(name, cls='c') %}<{{ name }} {{ cls }}>{% endmacro %}{{ tag('p') }}{{ tag('q', cls='k') }}{% set block %}in{{ n }}{% endset %}[{{ block }}]{% filter upper %}up{% endfilter %}{% raw %}{{ raw }}{% endraw %}",
	  "<p c><q k>[in7]UP{{ raw }}" },
	{ "chat-like template",
	  "{% for m in msgs %}{% if loop.first and m.role == 'system' %}<<{{ m.content|trim }}>>{% else %}[{{ m['role']|upper }}] {{ m.content }}\n{% endif %}{% endfor %}{% if add_generation_prompt is defined and add_generation_prompt %}[ASSISTANT]{% endif %}",
	  "<<Be brief.>>[USER] Hi\n[ASSISTANT] Hello!\n" },
	{ "strftime_now with a fixed clock",
	  "{{ strftime_now('%d %b %Y') }}",
	  "26 Jul 2024" },
	{ "indent",
	  "{{ 'a\\nb\\n'|indent(2) }}|{{ 'x\\ny'|indent(3, true) }}",
	  "a\n  b\n|   x\n   y" },
};
static const char render_vars[] = "{\"msgs\": [{\"role\": \"system\", \"content\": \" Be brief. \"}, {\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": \"Hello!\"}], \"n\": 7, \"f\": 2.5, \"s\": \"Hello World\", \"xs\": [3, 1, 2], \"d\": {\"b\": 2, \"a\": 1}, \"u\": \"h\\u00e9llo\", \"e\": [], \"objs\": [{\"name\": \"x\", \"v\": 2}, {\"name\": \"y\", \"v\": 1}, {\"name\": \"z\"}]}";

/* The clock strftime_now sees: 2024-07-26 00:00:00 UTC. */
#define FIXED_NOW 1721952000

static int render(const char *src, const char *vars_json, char **out, struct rbln_error *err)
{
	struct rbln_jinja_template *t;
	struct rbln_jinja_options opt = { .now = FIXED_NOW };
	json_object *vars = json_tokener_parse(vars_json);
	size_t len;
	int rc;

	assert_non_null(vars);
	rc = rbln_jinja_compile(src, strlen(src), "template", &t, err);
	if (!rc) {
		rc = rbln_jinja_render(t, vars, &opt, out, &len, err);
		if (!rc)
			assert_int_equal(len, strlen(*out));
		rbln_jinja_free(t);
	}
	json_object_put(vars);
	return rc;
}

static void test_against_jinja2(void **state)
{
	size_t i;

	(void)state;
	setenv("TZ", "UTC", 1);
	tzset();
	for (i = 0; i < sizeof(render_cases) / sizeof(render_cases[0]); i++) {
		struct rbln_error err = { 0 };
		char *out = NULL;

		if (render(render_cases[i].template, render_vars, &out, &err))
			fail_msg("case \"%s\": %s", render_cases[i].name, err.msg);
		if (strcmp(out, render_cases[i].expected))
			fail_msg("case \"%s\":\n got      \"%s\"\n expected \"%s\"", render_cases[i].name,
				 out, render_cases[i].expected);
		free(out);
	}
}

static void expect_error(const char *src, const char *w1, const char *w2)
{
	struct rbln_error err = { 0 };
	char *out = NULL;

	if (!render(src, "{\"xs\": [1, 2], \"d\": {\"a\": 1}, \"n\": 3}", &out, &err))
		fail_msg("\"%s\" rendered \"%s\" instead of failing", src, out);
	test_assert_contains_all(err.msg, "template", w1, w2, NULL);
}

static void test_compile_errors_name_construct_and_line(void **state)
{
	(void)state;
	expect_error("ok\n{% include 'x.j2' %}", "line 2", "unsupported tag 'include'");
	expect_error("{% extends 'base' %}", "line 1", "'extends'");
	expect_error("a\nb\n{{ x|nosuch }}", "line 3", "no filter named 'nosuch'");
	expect_error("{{ x is nosuch }}", "line 1", "no test named 'nosuch'");
	expect_error("{% if true %}\nx", "line 2", "'endif'");
	expect_error("{% for x in xs %}{% endif %}", "line 1", "unexpected 'endif'");
	expect_error("{{ 1 + }}", "line 1", "unexpected");
	expect_error("{{ 'unterminated }}", "line 1", "unterminated string");
	expect_error("text {% if true", "line 1", "unclosed");
	expect_error("{# never closed", "line 1", "unclosed comment");
	expect_error("{{ (1, 2 }}", "line 1", "unexpected");
	expect_error("{% for x in xs recursive %}{% endfor %}", "line 1", "recursive");
	expect_error("{{ a @ b }}", "line 1", "unexpected character '@'");
}

static void test_render_errors(void **state)
{
	(void)state;
	expect_error("\n{{ raise_exception('roles must alternate') }}", "line 2",
		     "roles must alternate");
	expect_error("{{ missing.attr }}", "'missing'", "attribute 'attr'");
	expect_error("{{ 1 + 'a' }}", "unsupported operand", "'int' and 'str'");
	expect_error("{{ n // 0 }}", "line 1", "division");
	expect_error("{% set d.x = 1 %}", "namespace", "'x'");
	expect_error("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", "macro 'm'", "argument");
	expect_error("{% for x in n %}{% endfor %}", "'int'", "not iterable");
	expect_error("{{ xs < 'a' }}", "not supported", "'list' and 'str'");
	expect_error("{% break %}", "line 1", "outside a loop");
	expect_error("{{ range(10000000)|length }}", "range()", "too large");
	expect_error("{{ d.keys(1) }}", "dict.keys", "positional");
}

/* A template may loop but not forever: the render has an evaluation budget. */
static void test_runaway_template_is_stopped(void **state)
{
	(void)state;
	expect_error("{% for a in range(1000000) %}{% for b in range(1000000) %}{% endfor %}{% endfor %}",
		     "line 1", "budget");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_jinja2),
		cmocka_unit_test(test_compile_errors_name_construct_and_line),
		cmocka_unit_test(test_render_errors),
		cmocka_unit_test(test_runaway_template_is_stopped),
	};

	return cmocka_run_group_tests_name("engine jinja", tests, NULL, NULL);
}
