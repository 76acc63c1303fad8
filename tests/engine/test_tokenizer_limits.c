// SPDX-License-Identifier: MIT
/*
 * Hostile tokenizer.json files and hostile texts: chained Replace
 * normalizers, a long replacement, pre-tokenizers on grown text and a
 * normalized added token that grow the text are stopped at a growth cap
 * with a clear error; a
 * 10 MB run of spaces (valid input that PCRE2's default match limit
 * rejected) is encoded; errors that reach clients name no file path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbln_tokenizer.h"
#include "test_common.h"

static struct rbln_tokenizer *load(const char *json, struct rbln_error *err)
{
	struct rbln_tokenizer *tok = NULL;

	if (rbln_tokenizer_load_json(json, strlen(json), "/srv/models/x/tokenizer.json", NULL,
				     &tok, err))
		return NULL;
	return tok;
}

/* A BPE tokenizer over "a" and "_" with the given normalizer and pre-tokenizer JSON. */
static char *tokenizer_json(const char *normalizer, const char *pre_tokenizer, const char *added)
{
	size_t n = strlen(normalizer) + strlen(pre_tokenizer) + strlen(added) + 256;
	char *json = malloc(n);

	assert_non_null(json);
	snprintf(json, n, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"_\": 1}, "
		 "\"merges\": []}, \"normalizer\": %s, \"pre_tokenizer\": %s, "
		 "\"added_tokens\": [%s]}", normalizer, pre_tokenizer, added);
	return json;
}

/* n Replace steps "a" -> "aa": the text doubles with each. */
static char *doubling_chain(size_t n)
{
	static const char step[] =
		"{\"type\": \"Replace\", \"pattern\": {\"String\": \"a\"}, \"content\": \"aa\"}";
	char *s = malloc(64 + n * (sizeof(step) + 2)), *p = s;
	size_t i;

	if (!s)
		abort();
	p += sprintf(p, "{\"type\": \"Sequence\", \"normalizers\": [");
	for (i = 0; i < n; i++)
		p += sprintf(p, "%s%s", i ? ", " : "", step);
	sprintf(p, "]}");
	return s;
}

static void expect_encode_error(struct rbln_tokenizer *tok, const char *text, size_t len,
				const char *w1)
{
	struct rbln_ids ids = { 0 };
	struct rbln_error err = { 0 };

	assert_true(rbln_tokenizer_encode(tok, text, len, 0, &ids, &err) < 0);
	test_assert_contains_all(err.msg, w1, NULL);
	/* Per-request errors reach HTTP clients: no server path in them. */
	if (strchr(err.msg, '/'))
		fail_msg("error names a path: %s", err.msg);
	rbln_ids_free(&ids);
}

static void test_replace_chain_capped(void **state)
{
	char *norm = doubling_chain(30), *json = tokenizer_json(norm, "null", "");
	struct rbln_error err = { 0 };
	struct rbln_tokenizer *tok = load(json, &err);
	struct rbln_ids ids = { 0 };

	(void)state;
	if (!tok)
		fail_msg("%s", err.msg);
	/* 2^30 "a"s for the prompt "a" without the cap. */
	expect_encode_error(tok, "a", 1, "grows more than 16-fold");
	expect_encode_error(tok, "aaaaaaaaaa", 10, "grows more than 16-fold");
	rbln_tokenizer_free(tok);
	free(json);
	free(norm);
	/* Three doublings (8-fold) stay under the cap. */
	norm = doubling_chain(3);
	json = tokenizer_json(norm, "null", "");
	tok = load(json, &err);
	assert_non_null(tok);
	assert_int_equal(rbln_tokenizer_encode(tok, "a", 1, 0, &ids, &err), 0);
	assert_int_equal(ids.len, 8);
	rbln_ids_free(&ids);
	rbln_tokenizer_free(tok);
	free(json);
	free(norm);
}

/* Encoding 100 kB of `fill` with this pipeline stops at the growth cap. */
static void expect_growth_capped(const char *normalizer, const char *pre_tokenizer, char fill)
{
	char *json = tokenizer_json(normalizer, pre_tokenizer, ""), *text = malloc(100000);
	struct rbln_error err = { 0 };
	struct rbln_tokenizer *tok = load(json, &err);

	if (!tok)
		fail_msg("%s", err.msg);
	assert_non_null(text);
	memset(text, fill, 100000);
	expect_encode_error(tok, text, 100000, "grows more than 16-fold");
	free(text);
	rbln_tokenizer_free(tok);
	free(json);
}

/* A long Replace content: one step grows 100 kB of spaces to 200 MB. */
static void test_long_replacement_capped(void **state)
{
	char norm[2300], repl[2048];

	(void)state;
	memset(repl, '_', sizeof(repl) - 1);
	repl[sizeof(repl) - 1] = '\0';
	snprintf(norm, sizeof(norm), "{\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, "
		 "\"content\": \"%s\"}", repl);
	expect_growth_capped(norm, "null", ' ');
}

/*
 * The cap covers the pre-tokenizers too: normalizers growing the text
 * 16-fold ("a" -> 8 "a"s -> 8 "\u00e9"s), then ByteLevel doubling it.
 */
static void test_pretokenizer_growth_capped(void **state)
{
	char *chain = doubling_chain(3), norm[1024];

	(void)state;
	chain[strlen(chain) - 2] = '\0';	/* reopen the list */
	snprintf(norm, sizeof(norm), "%s, {\"type\": \"Replace\", \"pattern\": {\"String\": "
		 "\"a\"}, \"content\": \"\\u00e9\"}]}", chain);
	expect_growth_capped(norm, "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
			     "\"use_regex\": false}", 'a');
	free(chain);
}

static void test_added_token_growth_refused(void **state)
{
	char *norm = doubling_chain(30);
	char *json = tokenizer_json(norm, "null",
				    "{\"id\": 5, \"content\": \"aa\", \"normalized\": true}");
	struct rbln_error err = { 0 };

	(void)state;
	assert_null(load(json, &err));
	test_assert_contains_all(err.msg, "added_tokens[0]", "16-fold", NULL);
	free(json);
	free(norm);
}

/* Valid input the default PCRE2 match limit rejected ("regex match error"). */
static void test_ten_megabytes_of_spaces(void **state)
{
	size_t n = 10500000;
	char *spaces = malloc(n);
	struct rbln_tokenizer *tok;
	struct rbln_error err = { 0 };
	struct rbln_ids ids = { 0 };

	(void)state;
	assert_non_null(spaces);
	memset(spaces, ' ', n);
	assert_int_equal(rbln_tokenizer_load(test_model_path("tiny-llama3"), &tok, &err), 0);
	if (rbln_tokenizer_encode(tok, spaces, n, 0, &ids, &err))
		fail_msg("%s", err.msg);
	assert_true(ids.len > 0 && ids.len < n);
	rbln_ids_free(&ids);
	rbln_tokenizer_free(tok);
	free(spaces);
}

static void test_errors_name_no_path(void **state)
{
	struct rbln_tokenizer *tok;
	struct rbln_error err = { 0 };

	(void)state;
	assert_int_equal(rbln_tokenizer_load(test_model_path("tiny-llama3"), &tok, &err), 0);
	expect_encode_error(tok, "a\xff", 2, "not valid UTF-8");
	rbln_tokenizer_free(tok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replace_chain_capped),
		cmocka_unit_test(test_long_replacement_capped),
		cmocka_unit_test(test_pretokenizer_growth_capped),
		cmocka_unit_test(test_added_token_growth_refused),
		cmocka_unit_test(test_ten_megabytes_of_spaces),
		cmocka_unit_test(test_errors_name_no_path),
	};

	return cmocka_run_group_tests_name("engine tokenizer limits", tests, NULL, NULL);
}
