// SPDX-License-Identifier: MIT
/*
 * The rbln-serve command: arguments, --check on the tutorials' layouts,
 * errors naming files and fields, and, until the engine runtime is bound,
 * the plain statement that it is not built.
 */
#include "serve_test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

struct run {
	int code;
	char *out;	/* stdout and stderr */
};

static struct run run(const char *args)
{
	const char *bin = getenv("RBLN_SERVE_BIN");
	char cmd[4096], buf[4096];
	struct run r = { 0 };
	size_t len = 0, n;
	FILE *p;
	int st;

	if (!bin)
		fail_msg("RBLN_SERVE_BIN is not set");
	snprintf(cmd, sizeof(cmd), "'%s' %s 2>&1", bin, args);
	p = popen(cmd, "r");
	assert_non_null(p);
	r.out = calloc(1, 1);
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
		r.out = realloc(r.out, len + n + 1);
		memcpy(r.out + len, buf, n);
		len += n;
		r.out[len] = '\0';
	}
	st = pclose(p);
	r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return r;
}

static void expect(const char *args, int code, const char *part)
{
	struct run r = run(args);

	if (r.code != code)
		fail_msg("rbln-serve %s: exit %d, expected %d:\n%s", args, r.code, code, r.out);
	assert_contains_all(r.out, part, NULL);
	free(r.out);
}

static void test_usage(void **state)
{
	(void)state;
	expect("", 2, "give exactly one of --model-repository DIR and --model PATH");
	expect("--help", 0, "Usage: rbln-serve --model-repository DIR");
	expect("--model a --model-repository b", 2, "give exactly one of");
	expect("--model-repository x --max-num-seqs 4", 2, "go into each model's model.json");
	expect("--model x --http-port 70000", 2, "--http-port must be an integer in [0, 65535]");
	expect("--model x --allow-metrics maybe", 2, "--allow-metrics must be true or false");
	expect("--model x extra", 2, "unexpected argument 'extra'");
}

/* The bounds on clients and the security switches are checked before anything loads. */
static void test_bounds_and_security_flags(void **state)
{
	(void)state;
	expect("--model x --http-max-connections 0", 2,
	       "--http-max-connections must be an integer in [1, 1000000], got '0'");
	expect("--model x --http-max-connections-per-client -1", 2,
	       "--http-max-connections-per-client must be an integer in [0, 1000000]");
	expect("--model x --http-idle-timeout 1s", 2,
	       "--http-idle-timeout must be an integer in [0, 86400], got '1s'");
	expect("--model x --http-header-timeout 99999", 2, "--http-header-timeout must be");
	expect("--model x --http-body-timeout x", 2, "--http-body-timeout must be");
	expect("--model x --prep-threads 0", 2, "--prep-threads must be an integer in [1, 256]");
	expect("--model x --http-max-connections 3 --http-threads 4", 2,
	       "--http-max-connections 3 is less than --http-threads 4");
	expect("--model x --api-key ''", 2, "--api-key (or RBLN_API_KEY) is empty");
	expect("--model x --ssl-certfile c.pem", 2, "--ssl-certfile and --ssl-keyfile go together");
	expect("--model x --ssl-keyfile k.pem", 2, "--ssl-certfile and --ssl-keyfile go together");
	expect("--help", 0, "--http-header-timeout S");
	expect("--help", 0, "anyone who can reach this machine");
}

static void test_check(void **state)
{
	char args[2048];

	(void)state;
	snprintf(args, sizeof(args), "--model '%s' --served-model-name tiny --max-num-seqs 4 "
		 "--check", model_path("tiny-llama3"));
	expect(args, 0, "| tiny  | 1       | CHECKED |");
	snprintf(args, sizeof(args), "--model '%s' --max-model-len 9999 --check",
		 model_path("tiny-llama3"));
	expect(args, 1, "field 'max_model_len' (9999) exceeds the model's "
	       "max_position_embeddings (2048)");
}

static void test_repository_errors(void **state)
{
	char args[2048];

	(void)state;
	/* the tutorial's model.json names /ABSOLUTE/PATH/TO/...: said plainly */
	snprintf(args, sizeof(args), "--model-repository '%s' --check", fixture("repo-rbln"));
	expect(args, 1, "vllm_model/1/model.json: field 'model': "
	       "/ABSOLUTE/PATH/TO/Llama-3.1-8B-Instruct does not exist");
	snprintf(args, sizeof(args), "--model-repository '%s' --check", fixture("repo-llama2-vllm"));
	expect(args, 1, "rbln-serve does not download from the Hugging Face Hub");
	snprintf(args, sizeof(args), "--model-repository '%s' --check", fixture("malformed"));
	expect(args, 1, "has no models");
	expect("--model-repository /nonexistent --check", 1, "is not a directory");
}

static void test_bad_config_names_line(void **state)
{
	char *dir = tmpdir_new(), *m = path_join(dir, "m"), *cfg = path_join(m, "config.pbtxt");
	char args[2048];

	(void)state;
	make_dir(m);
	write_text(cfg, "backend: \"vllm\"\nmax_batch_size: 0\ninstance_group [ { kind: KIND_NPU } ]\n");
	snprintf(args, sizeof(args), "--model-repository '%s'", dir);
	expect(args, 1, "m/config.pbtxt:3: field 'instance_group[0].kind': unknown ModelInstanceGroup.Kind value "
	       "'KIND_NPU'");
	tmpdir_remove(dir);
	free(dir);
	free(m);
	free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_bounds_and_security_flags),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_repository_errors),
		cmocka_unit_test(test_bad_config_names_line),
	};

	return cmocka_run_group_tests_name("serve-cli", tests, NULL, NULL);
}
