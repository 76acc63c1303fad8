// SPDX-License-Identifier: MIT
/*
 * Where a chat template comes from and what may reach it: the list form of
 * tokenizer_config.json's "chat_template" (selection by name, "default"
 * when none is named, clear errors for a missing name or a malformed
 * entry), and extra variables that may not replace the messages or the
 * model's special tokens.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbln_chat.h"
#include "test_common.h"

static const char *const hello = "[{\"role\": \"user\", \"content\": \"hi\"}]";

/* A model directory whose tokenizer_config.json has `chat_template_json`. */
static char *model_with_template(const char *chat_template_json)
{
	char *dir = test_mkdtemp(), *path = test_join(dir, "tokenizer_config.json");
	char text[1024];

	snprintf(text, sizeof(text), "{\"bos_token\": \"<s>\", \"chat_template\": %s}",
		 chat_template_json);
	test_write_text(path, text);
	free(path);
	return dir;
}

static char *render_named(const char *dir, const char *name, struct rbln_error *err)
{
	struct rbln_chat_template *t;
	char *text = NULL;
	size_t len;

	if (rbln_chat_template_load_named(dir, name, &t, err))
		return NULL;
	if (rbln_chat_render_json(t, hello, strlen(hello), NULL, &text, &len, err))
		text = NULL;
	rbln_chat_template_free(t);
	return text;
}

static const char *const two_templates =
	"[{\"name\": \"tool_use\", \"template\": \"T:{{ messages[0].content }}\"},"
	" {\"name\": \"default\", \"template\": \"{{ bos_token }}D:{{ messages[0].content }}\"}]";

static void test_list_default(void **state)
{
	char *dir = model_with_template(two_templates), *text;
	struct rbln_error err = { 0 };

	(void)state;
	text = render_named(dir, NULL, &err);
	if (!text)
		fail_msg("%s", err.msg);
	assert_string_equal(text, "<s>D:hi");
	free(text);
	/* The plain loader (what every tool uses) takes the list form too. */
	unsetenv("RBLN_CHAT_TEMPLATE_NAME");
	{
		struct rbln_chat_template *t;

		if (rbln_chat_template_load(dir, &t, &err))
			fail_msg("%s", err.msg);
		rbln_chat_template_free(t);
	}
	test_rmtree(dir);
	free(dir);
}

static void test_list_by_name(void **state)
{
	char *dir = model_with_template(two_templates), *text;
	struct rbln_error err = { 0 };
	struct rbln_chat_template *t;

	(void)state;
	text = render_named(dir, "tool_use", &err);
	if (!text)
		fail_msg("%s", err.msg);
	assert_string_equal(text, "T:hi");
	free(text);
	setenv("RBLN_CHAT_TEMPLATE_NAME", "tool_use", 1);
	assert_int_equal(rbln_chat_template_load(dir, &t, &err), 0);
	unsetenv("RBLN_CHAT_TEMPLATE_NAME");
	rbln_chat_template_free(t);

	assert_null(render_named(dir, "nope", &err));
	test_assert_contains_all(err.msg, "tokenizer_config.json",
				 "no template named \"nope\"", NULL);
	test_rmtree(dir);
	free(dir);
}

static void test_list_without_default(void **state)
{
	char *dir = model_with_template("[{\"name\": \"rag\", \"template\": \"x\"}]");
	struct rbln_error err = { 0 };

	(void)state;
	assert_null(render_named(dir, NULL, &err));
	test_assert_contains_all(err.msg, "no template named \"default\"", NULL);
	test_rmtree(dir);
	free(dir);
}

static void test_list_malformed_entries(void **state)
{
	static const char *const bad[] = {
		"[\"just a string\"]",
		"[{\"name\": \"default\"}]",
		"[{\"name\": 3, \"template\": \"x\"}]",
		"[{\"name\": \"default\", \"template\": [1]}]",
		"[null]",
	};
	struct rbln_error err = { 0 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *dir = model_with_template(bad[i]);

		assert_null(render_named(dir, NULL, &err));
		test_assert_contains_all(err.msg, "chat_template[0] must be", NULL);
		test_rmtree(dir);
		free(dir);
	}
}

static void test_single_template_named(void **state)
{
	char *dir = model_with_template("\"{{ messages[0].content }}\"");
	struct rbln_error err = { 0 };
	char *text;

	(void)state;
	text = render_named(dir, "default", &err);
	assert_non_null(text);
	assert_string_equal(text, "hi");
	free(text);
	assert_null(render_named(dir, "tool_use", &err));
	test_assert_contains_all(err.msg, "\"tool_use\"", "single template", NULL);
	test_rmtree(dir);
	free(dir);
}

/* chat_template_kwargs may add variables, never replace the given ones. */
static void test_extra_vars_reserved(void **state)
{
	static const char *const reserved[] = {
		"{\"messages\": []}", "{\"bos_token\": \"EVIL\"}", "{\"eos_token\": \"x\"}",
		"{\"add_generation_prompt\": true}", "{\"tools\": []}",
	};
	char *dir = model_with_template("\"{{ bos_token }}{{ messages[0].content }}{{ x }}\"");
	struct rbln_chat_options opt = { 0 };
	struct rbln_error err = { 0 };
	struct rbln_chat_template *t;
	char *text;
	size_t len, i;

	(void)state;
	assert_int_equal(rbln_chat_template_load_named(dir, NULL, &t, &err), 0);
	opt.extra_vars_json = "{\"x\": \"!\"}";
	assert_int_equal(rbln_chat_render_json(t, hello, strlen(hello), &opt, &text, &len, &err), 0);
	assert_string_equal(text, "<s>hi!");
	free(text);
	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		opt.extra_vars_json = reserved[i];
		assert_true(rbln_chat_render_json(t, hello, strlen(hello), &opt, &text, &len,
						  &err) < 0);
		test_assert_contains_all(err.msg, "chat_template_kwargs", "may not set", NULL);
	}
	rbln_chat_template_free(t);
	test_rmtree(dir);
	free(dir);
}

/* Render errors reach HTTP clients: they name the template file, not its path. */
static void test_render_error_names_no_path(void **state)
{
	char *dir = model_with_template("\"x\""), *path = test_join(dir, "chat_template.jinja");
	struct rbln_error err = { 0 };
	struct rbln_chat_template *t;
	char *text;
	size_t len;

	(void)state;
	test_write_text(path, "a\n{{ raise_exception('no') }}");
	assert_int_equal(rbln_chat_template_load_named(dir, NULL, &t, &err), 0);
	assert_true(rbln_chat_render_json(t, hello, strlen(hello), NULL, &text, &len, &err) < 0);
	test_assert_contains_all(err.msg, "chat_template.jinja line 2", "no", NULL);
	if (strchr(err.msg, '/'))
		fail_msg("error names a path: %s", err.msg);
	rbln_chat_template_free(t);
	test_rmtree(dir);
	free(path);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_default),
		cmocka_unit_test(test_list_by_name),
		cmocka_unit_test(test_list_without_default),
		cmocka_unit_test(test_list_malformed_entries),
		cmocka_unit_test(test_single_template_named),
		cmocka_unit_test(test_extra_vars_reserved),
		cmocka_unit_test(test_render_error_names_no_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
