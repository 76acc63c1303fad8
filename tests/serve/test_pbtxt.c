// SPDX-License-Identifier: MIT
/* The protocol-buffer text format parser: syntax, values, errors with lines. */
#include "serve_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve/repository/pbtxt.h"

static struct pbtxt_msg *parse_ok(const char *text)
{
	struct rbln_error err = { 0 };
	struct pbtxt_msg *m = NULL;

	if (serve_pbtxt_parse(text, strlen(text), "t.pbtxt", &m, &err))
		fail_msg("parse failed: %s", err.msg);
	return m;
}

static const char *parse_err(const char *text, struct rbln_error *err)
{
	struct pbtxt_msg *m = NULL;

	memset(err, 0, sizeof(*err));
	assert_int_equal(serve_pbtxt_parse(text, strlen(text), "t.pbtxt", &m, err), -EINVAL);
	assert_null(m);
	return err->msg;
}

static const struct pbtxt_field *field(const struct pbtxt_msg *m, size_t i, const char *name)
{
	assert_true(i < m->n_fields);
	assert_string_equal(m->fields[i].name, name);
	return &m->fields[i];
}

static void test_tutorial_config_tree(void **state)
{
	size_t len;
	char *text = read_text(fixture("repo-rbln/vllm_model/config.pbtxt"), &len);
	struct rbln_error err = { 0 };
	struct pbtxt_msg *m = NULL;
	const struct pbtxt_field *f;
	const struct pbtxt_msg *in1;

	(void)state;
	assert_int_equal(serve_pbtxt_parse(text, len, "config.pbtxt", &m, &err), 0);
	assert_int_equal(m->n_fields, 5);
	f = field(m, 0, "name");
	assert_int_equal(f->values[0].kind, PBTXT_STRING);
	assert_string_equal(f->values[0].str, "vllm_model");
	assert_int_equal(f->line, 1);
	f = field(m, 2, "input");
	assert_true(f->list);
	assert_int_equal(f->n_values, 2);
	assert_int_equal(f->values[1].kind, PBTXT_MESSAGE);
	in1 = f->values[1].msg;
	assert_int_equal(in1->line, 10);
	assert_string_equal(in1->fields[0].values[0].str, "stream");
	assert_int_equal(in1->fields[1].values[0].kind, PBTXT_IDENT);
	assert_string_equal(in1->fields[1].values[0].str, "TYPE_BOOL");
	assert_true(in1->fields[2].list);
	assert_string_equal(in1->fields[2].values[0].str, "1");
	f = field(m, 4, "instance_group");
	assert_string_equal(f->values[0].msg->fields[1].values[0].str, "KIND_MODEL");
	serve_pbtxt_free(m);
	free(text);
}

static void test_strings(void **state)
{
	struct pbtxt_msg *m = parse_ok("a: \"x\\n\\t\\\\\\\"\" b: 'it''s' c: \"\\x41\\101\\u00e9\"\n"
				       "d: \"one \" \"two\" e: \"\\000z\"");

	(void)state;
	assert_string_equal(field(m, 0, "a")->values[0].str, "x\n\t\\\"");
	assert_string_equal(field(m, 1, "b")->values[0].str, "its");
	assert_string_equal(field(m, 2, "c")->values[0].str, "AA\xc3\xa9");
	assert_string_equal(field(m, 3, "d")->values[0].str, "one two");
	assert_int_equal(field(m, 4, "e")->values[0].len, 2);
	assert_memory_equal(field(m, 4, "e")->values[0].str, "\0z", 2);
	serve_pbtxt_free(m);
}

static void test_numbers(void **state)
{
	struct pbtxt_msg *m = parse_ok("a: -1 b: 0x1F c: 2.5 d: 1e-3 e: 1.5f f: -inf g: 9223372036854775807 "
				       "h: 9223372036854775808 i: -9223372036854775808 j: 1.2.3");
	int64_t i;
	double x;

	(void)state;
	assert_true(serve_pbtxt_value_int(&field(m, 0, "a")->values[0], &i));
	assert_int_equal(i, -1);
	assert_true(serve_pbtxt_value_int(&field(m, 1, "b")->values[0], &i));
	assert_int_equal(i, 31);
	assert_false(serve_pbtxt_value_int(&field(m, 2, "c")->values[0], &i));
	assert_true(serve_pbtxt_value_double(&field(m, 2, "c")->values[0], &x));
	assert_true(x == 2.5);
	assert_true(serve_pbtxt_value_double(&field(m, 3, "d")->values[0], &x));
	assert_true(x == 1e-3);
	assert_true(serve_pbtxt_value_double(&field(m, 4, "e")->values[0], &x));
	assert_true(x == 1.5);
	assert_true(serve_pbtxt_value_double(&field(m, 5, "f")->values[0], &x));
	assert_true(isinf(x) && x < 0);
	assert_true(serve_pbtxt_value_int(&field(m, 6, "g")->values[0], &i));
	assert_true(i == INT64_MAX);
	assert_false(serve_pbtxt_value_int(&field(m, 7, "h")->values[0], &i));
	assert_true(serve_pbtxt_value_int(&field(m, 8, "i")->values[0], &i));
	assert_true(i == INT64_MIN);
	assert_false(serve_pbtxt_value_double(&field(m, 9, "j")->values[0], &x));
	serve_pbtxt_free(m);
}

static void test_bools(void **state)
{
	struct pbtxt_msg *m = parse_ok("a: true b: True c: t d: 1 e: false f: False g: 0 h: yes");
	bool b;
	size_t i;

	(void)state;
	for (i = 0; i < 7; i++) {
		assert_true(serve_pbtxt_value_bool(&m->fields[i].values[0], &b));
		assert_int_equal(b, i < 4);
	}
	assert_false(serve_pbtxt_value_bool(&m->fields[7].values[0], &b));
	serve_pbtxt_free(m);
}

static void test_syntax_variants(void **state)
{
	/* colon before a message, angle brackets, separators, comments, empty list */
	struct pbtxt_msg *m = parse_ok("# comment\nopt: { x: 1; y: 2, } # trailing\n"
				       "ang < z: 3 >\nlist: [ ]\nmsgs [ { a: 1 }, < a: 2 > ]\n"
				       "scalars: [1, -2, 3]");

	(void)state;
	assert_int_equal(m->n_fields, 5);
	assert_int_equal(field(m, 0, "opt")->values[0].msg->n_fields, 2);
	assert_string_equal(field(m, 1, "ang")->values[0].msg->fields[0].values[0].str, "3");
	assert_true(field(m, 2, "list")->list);
	assert_int_equal(field(m, 2, "list")->n_values, 0);
	assert_int_equal(field(m, 3, "msgs")->n_values, 2);
	assert_int_equal(field(m, 4, "scalars")->n_values, 3);
	assert_int_equal(field(m, 4, "scalars")->line, 6);
	serve_pbtxt_free(m);
}

static void test_errors_name_lines(void **state)
{
	struct rbln_error err;

	(void)state;
	assert_contains_all(parse_err("a: 1\nb: \"open\n", &err), "t.pbtxt:2:", "unterminated string",
			    NULL);
	assert_contains_all(parse_err("a {\n b: 1\n", &err), "t.pbtxt:3:", "opened on line 1",
			    "missing '}'", NULL);
	assert_contains_all(parse_err("a: 1\n}\n", &err), "t.pbtxt:2:", "unexpected '}'", NULL);
	assert_contains_all(parse_err("a 1\n", &err), "t.pbtxt:1:", "expected ':' or '{' after "
			    "field name 'a'", NULL);
	assert_contains_all(parse_err("a: [1, 2\nb: 3", &err), "t.pbtxt:2:", "expected ',' or ']'",
			    "'a'", NULL);
	assert_contains_all(parse_err("a: @", &err), "t.pbtxt:1:", "unexpected character '@'", NULL);
	assert_contains_all(parse_err("a: \"\\q\"", &err), "unknown escape", NULL);
	assert_contains_all(parse_err("\n\na: }", &err), "t.pbtxt:3:", "expected a value for "
			    "field 'a'", NULL);
	assert_contains_all(parse_err("a: \"x\"\n\xff", &err), "t.pbtxt:2:", "unexpected byte 0xff",
			    NULL);
}

/* The Llama 2 tutorial's config as its translated page prints it, curly quotes and all. */
static void test_curly_quotes_of_translated_tutorial(void **state)
{
	size_t len;
	char *text = read_text(fixture("llama2-translated.pbtxt"), &len);
	struct rbln_error err = { 0 };
	struct pbtxt_msg *m = NULL;

	(void)state;
	assert_int_equal(serve_pbtxt_parse(text, len, "config.pbtxt", &m, &err), -EINVAL);
	assert_contains_all(err.msg, "config.pbtxt:1:", "curly quote", "U+201C", "straight quotes",
			    NULL);
	free(text);
}

static void test_nesting_bound(void **state)
{
	char deep[400];
	struct rbln_error err;
	size_t i;

	(void)state;
	for (i = 0; i < 100; i++)
		memcpy(deep + i * 3, "a{ ", 3);
	deep[300] = '\0';
	assert_contains_all(parse_err(deep, &err), "nested more than 64 deep", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tutorial_config_tree),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_bools),
		cmocka_unit_test(test_syntax_variants),
		cmocka_unit_test(test_errors_name_lines),
		cmocka_unit_test(test_curly_quotes_of_translated_tutorial),
		cmocka_unit_test(test_nesting_bound),
	};

	return cmocka_run_group_tests_name("serve-pbtxt", tests, NULL, NULL);
}
