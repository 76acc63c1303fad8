// SPDX-License-Identifier: MIT
/*
 * What the loaders do with files that are not what they should be: a FIFO
 * (or another non-regular file) in place of a model file is refused at once
 * instead of blocking in open(), and every file read whole has a size cap
 * that the error names.  Each case links the reference model into a scratch
 * directory and replaces one file.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rbln_chat.h"
#include "rbln_config.h"
#include "rbln_tokenizer.h"
#include "test_common.h"

/* Which loader reads a file of the model directory. */
enum loader { LOAD_CONFIG, LOAD_GENERATION, LOAD_TOKENIZER, LOAD_CHAT };

static int load(enum loader l, const char *dir, struct rbln_error *err)
{
	struct rbln_llama_config cfg;
	struct rbln_generation_config gen;
	struct rbln_tokenizer *tok = NULL;
	struct rbln_chat_template *chat = NULL;
	int rc = -1;

	switch (l) {
	case LOAD_CONFIG:
		rc = rbln_llama_config_load(dir, &cfg, err);
		break;
	case LOAD_GENERATION:
		rc = rbln_generation_config_load(dir, &gen, err);
		break;
	case LOAD_TOKENIZER:
		rc = rbln_tokenizer_load(dir, &tok, err);
		rbln_tokenizer_free(tok);
		break;
	case LOAD_CHAT:
		rc = rbln_chat_template_load_named(dir, NULL, &chat, err);
		rbln_chat_template_free(chat);
		break;
	}
	return rc;
}

/* The reference model with `name` left out, for the test to put in. */
static char *model_without(const char *name)
{
	const char *const except[] = { name, NULL };
	char *dir = test_mkdtemp();

	test_link_dir(test_model_path("tiny-llama3"), dir, except);
	return dir;
}

static void expect_fifo_refused(const char *name, enum loader l)
{
	char *dir = model_without(name), *path = test_join(dir, name);
	struct rbln_error err = { 0 };

	assert_int_equal(mkfifo(path, 0600), 0);
	assert_true(load(l, dir, &err) < 0);
	test_assert_contains_all(err.msg, name, "not a regular file", "FIFO", NULL);
	test_rmtree(dir);
	free(path);
	free(dir);
}

static void test_fifo_config(void **state)
{
	(void)state;
	expect_fifo_refused("config.json", LOAD_CONFIG);
}

static void test_fifo_generation_config(void **state)
{
	(void)state;
	expect_fifo_refused("generation_config.json", LOAD_GENERATION);
}

static void test_fifo_tokenizer(void **state)
{
	(void)state;
	expect_fifo_refused("tokenizer.json", LOAD_TOKENIZER);
}

static void test_fifo_tokenizer_config(void **state)
{
	(void)state;
	expect_fifo_refused("tokenizer_config.json", LOAD_CHAT);
}

static void test_fifo_chat_template(void **state)
{
	(void)state;
	expect_fifo_refused("chat_template.jinja", LOAD_CHAT);
}

static void test_directory_as_config(void **state)
{
	char *dir = model_without("config.json"), *path = test_join(dir, "config.json");
	struct rbln_error err = { 0 };

	(void)state;
	assert_int_equal(mkdir(path, 0700), 0);
	assert_true(load(LOAD_CONFIG, dir, &err) < 0);
	test_assert_contains_all(err.msg, "config.json", "not a regular file", "directory", NULL);
	test_rmtree(dir);
	free(path);
	free(dir);
}

/* A sparse file of `size` bytes: big on paper, nothing on disk. */
static void expect_too_large(const char *name, enum loader l, off_t size, const char *limit)
{
	char *dir = model_without(name), *path = test_join(dir, name);
	struct rbln_error err = { 0 };
	char want[64];
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
	assert_true(load(l, dir, &err) < 0);
	snprintf(want, sizeof(want), "%lld bytes", (long long)size);
	test_assert_contains_all(err.msg, name, want, limit, NULL);
	test_rmtree(dir);
	free(path);
	free(dir);
}

static void test_size_caps(void **state)
{
	(void)state;
	expect_too_large("config.json", LOAD_CONFIG, (16 << 20) + 1, "(16777216 bytes)");
	expect_too_large("generation_config.json", LOAD_GENERATION, (16 << 20) + 1,
			 "(16777216 bytes)");
	expect_too_large("tokenizer_config.json", LOAD_CHAT, (16 << 20) + 1, "(16777216 bytes)");
	expect_too_large("tokenizer.json", LOAD_TOKENIZER, ((off_t)128 << 20) + 1,
			 "(134217728 bytes)");
	expect_too_large("chat_template.jinja", LOAD_CHAT, (1 << 20) + 1, "(1048576 bytes)");
}

/* A template inside tokenizer_config.json has the same cap as the file. */
static void test_template_text_cap(void **state)
{
	size_t len = (1 << 20) + 1;
	char *src = malloc(len);
	struct rbln_chat_template *t;
	struct rbln_error err = { 0 };

	(void)state;
	assert_non_null(src);
	memset(src, 'a', len);
	assert_true(rbln_chat_template_from_text(src, len, "big", NULL, &t, &err) < 0);
	test_assert_contains_all(err.msg, "big", "1048577-byte", "1048576 bytes", NULL);
	free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_config),
		cmocka_unit_test(test_fifo_generation_config),
		cmocka_unit_test(test_fifo_tokenizer),
		cmocka_unit_test(test_fifo_tokenizer_config),
		cmocka_unit_test(test_fifo_chat_template),
		cmocka_unit_test(test_directory_as_config),
		cmocka_unit_test(test_size_caps),
		cmocka_unit_test(test_template_text_cap),
	};

	return cmocka_run_group_tests_name("engine loader files", tests, NULL, NULL);
}
