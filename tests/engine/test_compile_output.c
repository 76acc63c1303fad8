// SPDX-License-Identifier: MIT
/*
 * Compiled outputs you can trust: a compile writes into a fresh staging
 * directory and moves it into place only when complete (a killed compile
 * leaves the old build intact, its leftovers are named for what they are
 * and removed by the next compile), planted files and symlinks are never
 * written through, a directory that is not a compiled model is not
 * replaced, the build records the checkpoint's fingerprint (which changes
 * with the config, a shard's header or a rewritten shard), and
 * checkpoints with NaN/Inf weights or with weights too large to address
 * are refused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine_helpers.h"
#include "rbln_fingerprint.h"

static const struct rbln_compile_options defaults;

/* A scratch parent directory, so staging directories beside the output are visible. */
static char *parent;

static int setup(void **state)
{
	(void)state;
	parent = test_mkdtemp();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	test_rmtree(parent);
	free(parent);
	return 0;
}

static char *compile_ok(const char *hf, const char *name, const struct rbln_compile_options *o)
{
	struct rbln_error err = { 0 };
	char *out = test_join(parent, name);

	if (rbln_compile(hf, out, o ? o : &defaults, &err))
		fail_msg("compiling %s: %s", hf, err.msg);
	return out;
}

static char *read_text(const char *dir, const char *name)
{
	char *path = test_join(dir, name), *text;
	size_t len;

	text = test_read_file(path, &len);
	free(path);
	return text;
}

/* Entries of the parent other than `keep` (staging leftovers). */
static size_t count_others(const char *keep)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, keep))
			n++;
	closedir(d);
	return n;
}

static void test_fresh_and_replaced(void **state)
{
	char *out, *cfg1, *cfg2, *fp, want[RBLN_FINGERPRINT_LEN + 1];
	struct rbln_error err = { 0 };

	(void)state;
	out = compile_ok(test_model_path("tiny-llama3"), "out", NULL);
	cfg1 = read_text(out, "rbln_config.json");
	fp = read_text(out, RBLN_FINGERPRINT_FILE);
	assert_int_equal(rbln_checkpoint_fingerprint(test_model_path("tiny-llama3"), want, &err), 0);
	assert_memory_equal(fp, want, RBLN_FINGERPRINT_LEN);
	assert_int_equal(rbln_compiled_dir_check(out, want, &err), 1);
	free(compile_ok(test_model_path("tiny-llama3"), "out", NULL));
	cfg2 = read_text(out, "rbln_config.json");
	/* A new build (a new compile_id) replaced the old one; nothing is left beside it. */
	assert_string_not_equal(cfg1, cfg2);
	assert_int_equal(count_others("out"), 0);
	free(cfg1);
	free(cfg2);
	free(fp);
	test_rmtree(out);
	free(out);
}

static void test_refuses_foreign_output(void **state)
{
	char *out = test_join(parent, "mine"), *keep = test_join(out, "thesis.txt"), *text;
	struct rbln_error err = { 0 };
	size_t len;

	(void)state;
	assert_int_equal(mkdir(out, 0755), 0);
	test_write_text(keep, "precious");
	assert_true(rbln_compile(test_model_path("tiny-llama3"), out, &defaults, &err) < 0);
	test_assert_contains_all(err.msg, out, "neither empty nor a compiled model", NULL);
	text = test_read_file(keep, &len);
	assert_string_equal(text, "precious");
	free(text);
	test_rmtree(out);
	/* A file (or a symlink to one) where the directory should be. */
	test_write_text(out, "file");
	assert_true(rbln_compile(test_model_path("tiny-llama3"), out, &defaults, &err) < 0);
	test_assert_contains_all(err.msg, "not a directory", NULL);
	unlink(out);
	assert_int_equal(count_others(""), 0);
	free(keep);
	free(out);
}

/* Links planted in the old build (where older compilers wrote *.tmp) are never followed. */
static void test_planted_symlinks(void **state)
{
	char *out = compile_ok(test_model_path("tiny-llama3"), "out", NULL);
	char *victim = test_join(parent, "victim"), *text;
	static const char *const plants[] = {
		"rank_0/weights.bin.tmp", "rank_0/prefill.rbln.tmp", "rbln_config.json.tmp",
		"config.json.tmp",
	};
	size_t i, len;

	(void)state;
	test_write_text(victim, "untouched");
	for (i = 0; i < sizeof(plants) / sizeof(plants[0]); i++) {
		char *p = test_join(out, plants[i]);

		assert_int_equal(symlink(victim, p), 0);
		free(p);
	}
	free(compile_ok(test_model_path("tiny-llama3"), "out", NULL));
	text = test_read_file(victim, &len);
	assert_string_equal(text, "untouched");
	free(text);
	unlink(victim);
	free(victim);
	test_rmtree(out);
	free(out);
}

/* A checkpoint (dummy weights, ~400 MB compiled) whose compile takes a while. */
static char *slow_checkpoint(void)
{
	char *dir = test_join(parent, "slow-ckpt"), *cfg;

	assert_int_equal(mkdir(dir, 0755), 0);
	cfg = test_join(dir, "config.json");
	test_write_text(cfg, "{\"model_type\": \"llama\", \"vocab_size\": 32000, \"hidden_size\": 1024, "
		       "\"intermediate_size\": 4096, \"num_hidden_layers\": 8, "
		       "\"num_attention_heads\": 8, \"num_key_value_heads\": 8, "
		       "\"max_position_embeddings\": 256, \"rms_norm_eps\": 1e-5, "
		       "\"rope_theta\": 10000.0, \"torch_dtype\": \"bfloat16\"}");
	free(cfg);
	return dir;
}

static char *find_staging(void)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	char *found = NULL;

	assert_non_null(d);
	while ((e = readdir(d)) && !found)
		if (strstr(e->d_name, RBLN_COMPILE_PARTIAL_TAG))
			found = test_join(parent, e->d_name);
	closedir(d);
	return found;
}

static void test_killed_compile(void **state)
{
	struct rbln_compile_options o = { .dummy_weights = true, .dummy_seed = 1 };
	char *ckpt = slow_checkpoint(), *out, *before, *after, *stage = NULL;
	struct rbln_error err = { 0 };
	struct rbln_runtime *e = NULL;
	int status, i;
	pid_t pid;

	(void)state;
	/* The old build is the small model's; the killed compile is the big one's. */
	out = compile_ok(test_model_path("tiny-llama3"), "out", NULL);
	before = read_text(out, "rbln_config.json");
	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(rbln_compile(ckpt, out, &o, NULL) ? 1 : 0);
	/* Kill it once it has started writing its staging directory. */
	for (i = 0; i < 20000 && !stage; i++) {
		struct timespec ts = { 0, 100000 };

		stage = find_staging();
		if (!stage)
			nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFSIGNALED(status))
		fail_msg("the compile finished before it could be killed: make slow_checkpoint() bigger");
	assert_non_null(stage);
	/* The old build is intact. */
	after = read_text(out, "rbln_config.json");
	assert_string_equal(before, after);
	/* The leftover says what it is, to the tools and to the engine. */
	assert_true(rbln_compiled_dir_explain(stage, &err) < 0);
	test_assert_contains_all(err.msg, "unfinished output of a compile", NULL);
	assert_true(rbln_runtime_open(stage, NULL, &e, &err) < 0);
	test_assert_contains_all(err.msg, "unfinished output of a compile", NULL);
	assert_true(rbln_compiled_dir_check(stage, "x", &err) < 0);
	/* The next compile of the same output removes it. */
	free(compile_ok(test_model_path("tiny-llama3"), "out", NULL));
	assert_int_equal(access(stage, F_OK), -1);
	free(before);
	free(after);
	free(stage);
	test_rmtree(out);
	test_rmtree(ckpt);
	free(out);
	free(ckpt);
}

/* A build from an older compiler's interrupted run: rank_0/ without rbln_config.json. */
static void test_old_partial_named(void **state)
{
	char *dir = test_join(parent, "half"), *rank = test_join(dir, "rank_0");
	struct rbln_error err = { 0 };
	struct rbln_runtime *e = NULL;

	(void)state;
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(mkdir(rank, 0755), 0);
	assert_true(rbln_runtime_open(dir, NULL, &e, &err) < 0);
	test_assert_contains_all(err.msg, "incomplete compiled model", "interrupted", NULL);
	test_rmtree(dir);
	free(rank);
	free(dir);
}

static void fingerprint_of(const char *dir, char *fp)
{
	struct rbln_error err = { 0 };

	if (rbln_checkpoint_fingerprint(dir, fp, &err))
		fail_msg("%s", err.msg);
}

static void test_fingerprint_follows_checkpoint(void **state)
{
	static const char *const except[] = { "config.json", "model-00002-of-00003.safetensors",
					      NULL };
	char *ckpt = test_join(parent, "ckpt"), *src = test_join(test_model_path("tiny-llama3"),
							       "config.json");
	char *cfg = test_join(ckpt, "config.json"), *text, *shard, *out;
	char orig[RBLN_FINGERPRINT_LEN + 1], fp[RBLN_FINGERPRINT_LEN + 1];
	struct rbln_error err = { 0 };
	size_t len;

	(void)state;
	assert_int_equal(mkdir(ckpt, 0755), 0);
	test_link_dir(test_model_path("tiny-llama3"), ckpt, except);
	text = test_read_file(src, &len);
	test_write_file(cfg, text, len);
	shard = test_join(test_model_path("tiny-llama3"), "model-00002-of-00003.safetensors");
	free(text);
	text = test_read_file(shard, &len);
	free(shard);
	shard = test_join(ckpt, "model-00002-of-00003.safetensors");
	test_write_file(shard, text, len);
	fingerprint_of(ckpt, orig);
	fingerprint_of(ckpt, fp);
	assert_string_equal(orig, fp);
	out = compile_ok(ckpt, "built", NULL);
	assert_int_equal(rbln_compiled_dir_check(out, orig, &err), 1);

	/* The same shard written again (new weights, same header): different. */
	{
		struct timespec ts = { 0, 20000000 };

		nanosleep(&ts, NULL);
	}
	unlink(shard);
	test_write_file(shard, text, len);
	fingerprint_of(ckpt, fp);
	assert_string_not_equal(orig, fp);
	assert_int_equal(rbln_compiled_dir_check(out, fp, &err), -ESTALE);
	test_assert_contains_all(err.msg, out, "another checkpoint", NULL);
	free(text);

	/* A config change: different. */
	strcpy(orig, fp);
	text = test_read_file(cfg, &len);
	text[len - 2] = ' ';	/* whitespace only: still a change of the file */
	test_write_file(cfg, text, len);
	fingerprint_of(ckpt, fp);
	assert_string_not_equal(orig, fp);
	free(text);
	/* No build yet at a fresh path. */
	assert_int_equal(rbln_compiled_dir_check("/nonexistent/rbln", fp, &err), 0);

	test_rmtree(out);
	test_rmtree(ckpt);
	free(out);
	free(shard);
	free(cfg);
	free(src);
	free(ckpt);
}

static void test_non_finite_weights(void **state)
{
	static const char *const except[] = { "model-00001-of-00003.safetensors", NULL };
	char *ckpt = test_join(parent, "nan"), *src, *dst, *out = test_join(parent, "nan-out");
	unsigned char *bytes;
	struct rbln_error err = { 0 };
	uint64_t hlen = 0;
	size_t len;
	int i;

	(void)state;
	assert_int_equal(mkdir(ckpt, 0755), 0);
	test_link_dir(test_model_path("tiny-llama3"), ckpt, except);
	src = test_join(test_model_path("tiny-llama3"), "model-00001-of-00003.safetensors");
	dst = test_join(ckpt, "model-00001-of-00003.safetensors");
	bytes = (unsigned char *)test_read_file(src, &len);
	for (i = 0; i < 8; i++)
		hlen |= (uint64_t)bytes[i] << (8 * i);
	/* The first element of the data area (bf16): a quiet NaN. */
	bytes[8 + hlen] = 0xc0;
	bytes[8 + hlen + 1] = 0x7f;
	test_write_file(dst, bytes, len);
	assert_true(rbln_compile(ckpt, out, &defaults, &err) < 0);
	test_assert_contains_all(err.msg, "model-00001-of-00003.safetensors", "tensor '",
				 "non-finite", "NaN", "element 0", NULL);
	/* An infinity. */
	bytes[8 + hlen] = 0x80;
	test_write_file(dst, bytes, len);
	assert_true(rbln_compile(ckpt, out, &defaults, &err) < 0);
	test_assert_contains_all(err.msg, "infinity", NULL);
	assert_int_equal(access(out, F_OK), -1);
	free(bytes);
	test_rmtree(ckpt);
	free(src);
	free(dst);
	free(out);
	free(ckpt);
}

/* Config values each in range whose weight-size sum would wrap around. */
static void test_weight_size_overflow(void **state)
{
	struct rbln_compile_options o = { .dummy_weights = true };
	char *ckpt = test_join(parent, "huge"), *cfg = test_join(ckpt, "config.json");
	char *out = test_join(parent, "huge-out");
	struct rbln_error err = { 0 };

	(void)state;
	assert_int_equal(mkdir(ckpt, 0755), 0);
	test_write_text(cfg, "{\"model_type\": \"llama\", \"vocab_size\": 2147483647, \"hidden_size\": 16777216, "
		       "\"intermediate_size\": 16777216, \"num_hidden_layers\": 4096, "
		       "\"num_attention_heads\": 65536, \"num_key_value_heads\": 65536, "
		       "\"head_dim\": 256, \"max_position_embeddings\": 4096, "
		       "\"rms_norm_eps\": 1e-5, \"rope_theta\": 10000.0, "
		       "\"torch_dtype\": \"float32\"}");
	assert_true(rbln_compile(ckpt, out, &o, &err) < 0);
	test_assert_contains_all(err.msg, "config.json", "weights would take", "2^64", NULL);
	test_write_text(cfg, "{\"model_type\": \"llama\", \"vocab_size\": 2147483647, \"hidden_size\": 16777216, "
		       "\"intermediate_size\": 64, \"num_hidden_layers\": 1, "
		       "\"num_attention_heads\": 8, \"head_dim\": 64, "
		       "\"max_position_embeddings\": 4096, \"rms_norm_eps\": 1e-5, "
		       "\"rope_theta\": 10000.0}");
	assert_true(rbln_compile(ckpt, out, &o, &err) < 0);
	test_assert_contains_all(err.msg, "weights would take", "bytes", "compiler handles", NULL);
	assert_int_equal(access(out, F_OK), -1);
	test_rmtree(ckpt);
	free(cfg);
	free(out);
	free(ckpt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_and_replaced),
		cmocka_unit_test(test_refuses_foreign_output),
		cmocka_unit_test(test_planted_symlinks),
		cmocka_unit_test(test_killed_compile),
		cmocka_unit_test(test_old_partial_named),
		cmocka_unit_test(test_fingerprint_follows_checkpoint),
		cmocka_unit_test(test_non_finite_weights),
		cmocka_unit_test(test_weight_size_overflow),
	};

	return cmocka_run_group_tests_name("engine compile output", tests, setup, teardown);
}
