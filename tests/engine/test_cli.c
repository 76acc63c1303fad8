// SPDX-License-Identifier: MIT
/*
 * rbln-tokenize end to end: encoding, --add-special, --decode and --chat
 * against the reference outputs, a list of named chat templates
 * (--chat-template-name), and its exit codes on bad input.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_common.h"

extern char **environ;

/* Runs the CLI with args (NULL-ended), returns the exit status; *out is stdout. */
static int run_cli(const char *const *args, char **out)
{
	const char *bin = getenv("RBLN_TOKENIZE_BIN");
	char *argv[16];
	int pipefd[2], status;
	posix_spawn_file_actions_t fa;
	size_t n = 0, cap = 4096, i;
	ssize_t got;
	pid_t pid;

	assert_non_null(bin);
	argv[0] = (char *)bin;
	for (i = 0; args[i]; i++)
		argv[i + 1] = (char *)args[i];
	argv[i + 1] = NULL;
	assert_int_equal(pipe(pipefd), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	assert_int_equal(posix_spawn(&pid, bin, &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	*out = malloc(cap);
	while ((got = read(pipefd[0], *out + n, cap - n - 1)) > 0) {
		n += (size_t)got;
		if (n + 1 == cap)
			*out = realloc(*out, cap *= 2);
	}
	(*out)[n] = '\0';
	close(pipefd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *ids_line(json_object *arr)
{
	char *s = calloc(1, 16 * json_object_array_length(arr) + 2);
	size_t i, o = 0;

	for (i = 0; i < json_object_array_length(arr); i++)
		o += (size_t)sprintf(s + o, "%s%d", i ? "," : "",
				     json_object_get_int(json_object_array_get_idx(arr, i)));
	s[o] = '\n';
	return s;
}

static void test_encode_and_decode(void **state)
{
	json_object *ref = test_reference("tiny-llama3"), *cases, *c, *text, *ids, *with;
	const char *model = test_model_path("tiny-llama3");
	char *out, *want, *decode_arg;

	(void)state;
	assert_true(json_object_object_get_ex(ref, "tokenizer", &cases));
	c = json_object_array_get_idx(cases, 5);	/* contractions and punctuation */
	assert_true(json_object_object_get_ex(c, "text", &text));
	assert_true(json_object_object_get_ex(c, "ids", &ids));
	assert_true(json_object_object_get_ex(c, "ids_with_special", &with));

	assert_int_equal(run_cli((const char *[]){ "--model", model, json_object_get_string(text),
						   NULL }, &out), 0);
	want = ids_line(ids);
	assert_string_equal(out, want);
	free(out);

	assert_int_equal(run_cli((const char *[]){ "--model", model, "--add-special",
						   json_object_get_string(text), NULL }, &out), 0);
	free(want);
	want = ids_line(with);
	assert_string_equal(out, want);
	free(out);

	/* The printed ids feed --decode back to the text. */
	decode_arg = ids_line(ids);
	decode_arg[strlen(decode_arg) - 1] = '\0';
	assert_int_equal(run_cli((const char *[]){ "--model", model, "--decode", decode_arg, NULL },
				 &out), 0);
	assert_int_equal(strlen(out), (size_t)json_object_get_string_len(text) + 1);
	assert_memory_equal(out, json_object_get_string(text), strlen(out) - 1);
	free(out);
	free(want);
	free(decode_arg);
	json_object_put(ref);
}

static void test_chat(void **state)
{
	json_object *ref = test_reference("tiny-llama2"), *chats, *c, *msgs, *text, *ids;
	const char *model = test_model_path("tiny-llama2");
	char *dir = test_mkdtemp(), *file = test_join(dir, "chat.json"), *out, *want;
	size_t tl;

	(void)state;
	assert_true(json_object_object_get_ex(ref, "chat", &chats));
	c = json_object_array_get_idx(chats, 2);
	assert_true(json_object_object_get_ex(c, "messages", &msgs));
	assert_true(json_object_object_get_ex(c, "text", &text));
	assert_true(json_object_object_get_ex(c, "ids", &ids));
	test_write_text(file, json_object_to_json_string(msgs));
	assert_int_equal(run_cli((const char *[]){ "--model", model, "--chat", file, NULL }, &out),
			 0);
	/* The rendered text, a newline, then the ids line. */
	tl = (size_t)json_object_get_string_len(text);
	assert_memory_equal(out, json_object_get_string(text), tl);
	assert_int_equal(out[tl], '\n');
	want = ids_line(ids);
	assert_string_equal(out + tl + 1, want);
	free(out);
	free(want);
	test_rmtree(dir);
	free(dir);
	free(file);
	json_object_put(ref);
}

/* A list of named templates (it aborted every tool on a json-c assertion). */
static void test_chat_template_list(void **state)
{
	static const char *const except[] = { "tokenizer_config.json", NULL };
	char *dir = test_mkdtemp(), *cfg = test_join(dir, "tokenizer_config.json");
	char *file = test_join(dir, "chat.json"), *out;

	(void)state;
	test_link_dir(test_model_path("tiny-llama3"), dir, except);
	test_write_text(cfg, "{\"chat_template\": [{\"name\": \"default\", \"template\": "
			"\"D:{{ messages[0].content }}\"}, {\"name\": \"tool_use\", \"template\": "
			"\"T:{{ messages[0].content }}\"}]}");
	test_write_text(file, "[{\"role\": \"user\", \"content\": \"hi\"}]");
	assert_int_equal(run_cli((const char *[]){ "--model", dir, "--chat", file, NULL }, &out), 0);
	assert_memory_equal(out, "D:hi\n", 5);
	free(out);
	assert_int_equal(run_cli((const char *[]){ "--model", dir, "--chat", file,
						   "--chat-template-name", "tool_use", NULL }, &out), 0);
	assert_memory_equal(out, "T:hi\n", 5);
	free(out);
	assert_int_equal(run_cli((const char *[]){ "--model", dir, "--chat", file,
						   "--chat-template-name", "nope", NULL }, &out), 1);
	free(out);
	test_rmtree(dir);
	free(dir);
	free(cfg);
	free(file);
}

static void test_errors(void **state)
{
	char *out;

	(void)state;
	assert_int_equal(run_cli((const char *[]){ "--model", "/nonexistent", "x", NULL }, &out), 1);
	free(out);
	assert_int_equal(run_cli((const char *[]){ "x", NULL }, &out), 2);
	free(out);
	assert_int_equal(run_cli((const char *[]){ "--model", test_model_path("tiny-llama3"),
						   "--decode", "1,abc", NULL }, &out), 1);
	free(out);
	assert_int_equal(run_cli((const char *[]){ "--model", test_model_path("tiny-llama3"),
						   "--chat", "/nonexistent.json", NULL }, &out), 1);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_and_decode),
		cmocka_unit_test(test_chat),
		cmocka_unit_test(test_chat_template_list),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests_name("engine rbln-tokenize", tests, NULL, NULL);
}
