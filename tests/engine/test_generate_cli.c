// SPDX-License-Identifier: MIT
/*
 * rbln-compile and rbln-generate end to end: a Hugging Face directory
 * compiled on the fly, --json, streamed text, --dump-logits, --chat and
 * --stop against the reference, and exit codes and messages on bad input.
 */
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_helpers.h"

extern char **environ;

struct result {
	int status;
	char *out;
	char *err;
};

static char *read_fd(int fd)
{
	size_t n = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t got;

	assert_non_null(buf);
	while ((got = read(fd, buf + n, cap - n - 1)) > 0) {
		n += (size_t)got;
		if (n + 1 == cap) {
			buf = realloc(buf, cap *= 2);
			assert_non_null(buf);
		}
	}
	buf[n] = '\0';
	return buf;
}

/* Runs the tool named by env (RBLN_GENERATE_BIN, RBLN_COMPILE_BIN) with args. */
static struct result run_tool(const char *env, const char *const *args)
{
	const char *bin = getenv(env);
	char *argv[64], errpath[] = "/tmp/rbln-cli-err-XXXXXX";
	posix_spawn_file_actions_t fa;
	int pipefd[2], errfd, status;
	struct result r;
	size_t i;
	pid_t pid;

	if (!bin)
		fail_msg("%s is not set", env);
	argv[0] = (char *)bin;
	for (i = 0; args[i]; i++)
		argv[i + 1] = (char *)args[i];
	argv[i + 1] = NULL;
	errfd = mkstemp(errpath);
	assert_true(errfd >= 0);
	unlink(errpath);
	assert_int_equal(pipe(pipefd), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, errfd, 2);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	assert_int_equal(posix_spawn(&pid, bin, &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	r.out = read_fd(pipefd[0]);
	close(pipefd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	lseek(errfd, 0, SEEK_SET);
	r.err = read_fd(errfd);
	close(errfd);
	r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return r;
}

static void result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

static json_object *generate_entry(const char *model, size_t i)
{
	json_object *ref = test_reference(model), *gen, *g;

	assert_true(json_object_object_get_ex(ref, "generate", &gen));
	g = json_object_get(json_object_array_get_idx(gen, i));
	json_object_put(ref);
	return g;
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	return json_object_get_string(v);
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v;

	assert_true(json_object_object_get_ex(o, key, &v));
	return v;
}

/*
 * The Hugging Face directory compiled on the fly at TP 2, --json: the
 * prompt's ids, the greedy ids (this prompt has no near tie in 48 steps),
 * its text (with special tokens, as reference.json decodes it);
 * --dump-logits within 0.02.
 */
static void test_json_from_hf_dir(void **state)
{
	json_object *g = generate_entry("tiny-llama3", 4), *res;
	char *dir = test_mkdtemp(), *dump = test_join(dir, "logits.bin"), *data;
	struct result r;
	size_t len, i;
	float v;

	(void)state;
	r = run_tool("RBLN_GENERATE_BIN", (const char *[]){
		"--model", test_model_path("tiny-llama3"), "--prompt", get_str(g, "prompt"),
		"--temperature", "0", "--max-tokens", "48", "--ignore-eos", "--json",
		"--tensor-parallel-size", "2", "--dump-logits", dump, "--keep-special", NULL });
	if (r.status)
		fail_msg("exit %d: %s", r.status, r.err);
	res = json_tokener_parse(r.out);
	assert_non_null(res);
	assert_true(json_object_equal(get(res, "input_ids"), get(g, "input_ids")));
	assert_true(json_object_equal(get(res, "output_ids"), get(g, "greedy_ids")));
	assert_string_equal(get_str(res, "text"), get_str(g, "greedy_text"));
	assert_string_equal(get_str(res, "finish_reason"), "length");
	data = test_read_file(dump, &len);
	assert_int_equal(len, 4 * json_object_array_length(get(g, "last_logits")));
	for (i = 0; i < len / 4; i++) {
		memcpy(&v, data + 4 * i, 4);
		assert_true(fabs(v - json_object_get_double(json_object_array_get_idx(
			get(g, "last_logits"), i))) <= 0.02);
	}
	free(data);
	json_object_put(res);
	json_object_put(g);
	result_free(&r);
	test_rmtree(dir);
	free(dir);
	free(dump);
}

/* Compiled once with rbln-compile, then text streamed, a stop string, --chat. */
static void test_compiled_stream_stop_chat(void **state)
{
	json_object *g = generate_entry("tiny-llama2", 4), *ref, *chat, *c, *res;
	char *dir = test_mkdtemp(), *out = test_join(dir, "m"), *msgs = test_join(dir, "c.json");
	char *want, *cut;
	struct result r;

	(void)state;
	r = run_tool("RBLN_COMPILE_BIN", (const char *[]){
		test_model_path("tiny-llama2"), "-o", out, "--batch-size", "4",
		"--decoder-batch-sizes", "1", NULL });
	if (r.status)
		fail_msg("rbln-compile exit %d: %s", r.status, r.err);
	assert_non_null(strstr(r.out, "decoder_batch_sizes 4,1"));
	result_free(&r);

	r = run_tool("RBLN_GENERATE_BIN", (const char *[]){
		"--model", out, "--prompt", get_str(g, "prompt"), "--temperature", "0",
		"--max-tokens", "48", "--ignore-eos", "--keep-special", NULL });
	if (r.status)
		fail_msg("exit %d: %s", r.status, r.err);
	want = malloc(strlen(get_str(g, "greedy_text")) + 2);
	sprintf(want, "%s\n", get_str(g, "greedy_text"));
	assert_string_equal(r.out, want);
	result_free(&r);

	/* Stop at the text's fourth character: everything before it remains. */
	cut = strndup(get_str(g, "greedy_text") + 3, 2);
	r = run_tool("RBLN_GENERATE_BIN", (const char *[]){
		"--model", out, "--prompt", get_str(g, "prompt"), "--temperature", "0",
		"--max-tokens", "48", "--ignore-eos", "--stop", cut, "--json", "--keep-special",
		NULL });
	assert_int_equal(r.status, 0);
	res = json_tokener_parse(r.out);
	assert_non_null(res);
	assert_string_equal(get_str(res, "finish_reason"), "stop");
	/* The text ends where the stop string first occurs. */
	want[strstr(want, cut) - want] = '\0';
	assert_string_equal(get_str(res, "text"), want);
	json_object_put(res);
	result_free(&r);
	free(cut);

	/* --chat renders the template: the prompt ids are the reference's. */
	ref = test_reference("tiny-llama2");
	assert_true(json_object_object_get_ex(ref, "chat", &chat));
	c = json_object_array_get_idx(chat, 0);
	test_write_text(msgs, json_object_to_json_string(get(c, "messages")));
	r = run_tool("RBLN_GENERATE_BIN", (const char *[]){
		"--model", out, "--chat", msgs, "--max-tokens", "4", "--json", "--seed", "1", NULL });
	if (r.status)
		fail_msg("exit %d: %s", r.status, r.err);
	res = json_tokener_parse(r.out);
	assert_non_null(res);
	assert_true(json_object_equal(get(res, "input_ids"), get(c, "ids")));
	json_object_put(res);
	result_free(&r);
	json_object_put(ref);
	json_object_put(g);
	free(want);
	test_rmtree(dir);
	free(dir);
	free(out);
	free(msgs);
}

/*
 * --matmul-precision bf16: rbln-compile records it and says so, and
 * rbln-generate runs the compiled directory, or compiles a Hugging Face
 * one with the flag itself (the same compile flags).
 */
static void test_matmul_precision_bf16(void **state)
{
	char *dir = test_mkdtemp(), *out = test_join(dir, "m"), *cfg = test_join(out, "rbln_config.json");
	const char *model = test_model_path("tiny-llama2");
	json_object *res;
	char *text, line[96];
	struct result r;
	size_t len;
	int i;

	(void)state;
	r = run_tool("RBLN_COMPILE_BIN", (const char *[]){
		model, "-o", out, "--matmul-precision", "bf16", NULL });
	if (r.status)
		fail_msg("rbln-compile exit %d: %s", r.status, r.err);
	/* The layout is this host's (--weight-layout auto). */
	snprintf(line, sizeof(line), "matmul_precision bf16, weight_layout %s",
		 test_host_weight_layout());
	if (!strstr(r.out, line))
		fail_msg("rbln-compile's summary lacks \"%s\": %s", line, r.out);
	result_free(&r);
	text = test_read_file(cfg, &len);
	assert_non_null(strstr(text, "\"matmul_precision\": \"bf16\""));
	free(text);
	for (i = 0; i < 2; i++) {
		r = run_tool("RBLN_GENERATE_BIN", i ? (const char *[]){
			"--model", model, "--matmul-precision", "bf16", "--input-ids", "1,2,3",
			"--temperature", "0", "--max-tokens", "8", "--ignore-eos", "--json", NULL } :
			(const char *[]){
			"--model", out, "--input-ids", "1,2,3", "--temperature", "0",
			"--max-tokens", "8", "--ignore-eos", "--json", NULL });
		if (r.status)
			fail_msg("rbln-generate exit %d: %s", r.status, r.err);
		res = json_tokener_parse(r.out);
		assert_non_null(res);
		assert_int_equal(json_object_array_length(get(res, "output_ids")), 8);
		json_object_put(res);
		result_free(&r);
	}
	test_rmtree(dir);
	free(dir);
	free(out);
	free(cfg);
}

static void expect_failure(const char *env, const char *const *args, int status,
			   const char *text)
{
	struct result r = run_tool(env, args);

	if (r.status != status)
		fail_msg("exit %d, expected %d: %s", r.status, status, r.err);
	test_assert_contains_all(r.err, text, NULL);
	result_free(&r);
}

static void test_errors(void **state)
{
	const char *model = test_model_path("tiny-llama2");

	(void)state;
	expect_failure("RBLN_GENERATE_BIN", (const char *[]){ "--prompt", "x", NULL }, 2,
		       "--model DIR is required");
	expect_failure("RBLN_GENERATE_BIN", (const char *[]){ "--model", model, NULL }, 2,
		       "--prompt");
	expect_failure("RBLN_GENERATE_BIN", (const char *[]){ "--model", model, "--input-ids",
		       "1,x", NULL }, 2, "--input-ids");
	expect_failure("RBLN_GENERATE_BIN", (const char *[]){ "--model", model, "--prompt", "x",
		       "--top-p", "abc", NULL }, 2, "--top-p");
	expect_failure("RBLN_GENERATE_BIN", (const char *[]){ "--model", model, "--prompt", "x",
		       "--top-p", "2", NULL }, 1, "top_p");
	expect_failure("RBLN_GENERATE_BIN", (const char *[]){ "--model", "/nonexistent", "--prompt",
		       "x", NULL }, 1, "/nonexistent");
	expect_failure("RBLN_GENERATE_BIN", (const char *[]){ "--model", model, "--input-ids",
		       "1,99999", NULL }, 1, "99999");
	expect_failure("RBLN_GENERATE_BIN", (const char *[]){ "--model", model, "--prompt", "x",
		       "--tensor-parallel-size", "4", NULL }, 1, "num_attention_heads (6)");
	expect_failure("RBLN_COMPILE_BIN", (const char *[]){ model, NULL }, 2, "-o OUT_DIR");
	expect_failure("RBLN_COMPILE_BIN", (const char *[]){ model, "-o", "/tmp/x",
		       "--batch-size", "0", NULL }, 2, "--batch-size");
	expect_failure("RBLN_COMPILE_BIN", (const char *[]){ model, "-o", "/tmp/x",
		       "--kvcache-partition-len", "300", NULL }, 1, "--kvcache-partition-len 300");
	/* Only the spellings rbln_config.json records; no silent fallback. */
	expect_failure("RBLN_COMPILE_BIN", (const char *[]){ model, "-o", "/tmp/x",
		       "--quantize", "int4", NULL }, 2, "--quantize: 'int4' is not none or w8a16");
	expect_failure("RBLN_COMPILE_BIN", (const char *[]){ model, "-o", "/tmp/x",
		       "--quantize", "W8A16", NULL }, 2, "--quantize: 'W8A16'");
	expect_failure("RBLN_COMPILE_BIN", (const char *[]){ model, "-o", "/tmp/x",
		       "--quantize", "", NULL }, 2, "--quantize: ''");
	expect_failure("RBLN_GENERATE_BIN", (const char *[]){ "--model", model, "--prompt", "x",
		       "--quantize", "w8", NULL }, 2, "--quantize: 'w8'");
	expect_failure("RBLN_COMPILE_BIN", (const char *[]){ model, "-o", "/tmp/x",
		       "--matmul-precision", "fp16", NULL }, 2,
		       "--matmul-precision: 'fp16' is not float32 or bf16");
	expect_failure("RBLN_COMPILE_BIN", (const char *[]){ model, "-o", "/tmp/x",
		       "--matmul-precision", "BF16", NULL }, 2, "--matmul-precision: 'BF16'");
	expect_failure("RBLN_COMPILE_BIN", (const char *[]){ model, "-o", "/tmp/x",
		       "--matmul-precision", "", NULL }, 2, "--matmul-precision: ''");
	expect_failure("RBLN_COMPILE_BIN", (const char *[]){ model, "-o", "/tmp/x",
		       "--weight-layout", "sparse", NULL }, 2,
		       "--weight-layout: 'sparse' is not auto, spaced or packed16");
	expect_failure("RBLN_GENERATE_BIN", (const char *[]){ "--model", model, "--prompt", "x",
		       "--weight-layout", "PACKED16", NULL }, 2, "--weight-layout: 'PACKED16'");
	expect_failure("RBLN_GENERATE_BIN", (const char *[]){ "--model", model, "--prompt", "x",
		       "--matmul-precision", "bfloat16", NULL }, 2,
		       "--matmul-precision: 'bfloat16'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_from_hf_dir),
		cmocka_unit_test(test_compiled_stream_stop_chat),
		cmocka_unit_test(test_matmul_precision_bf16),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
