// SPDX-License-Identifier: MIT
/*
 * The text stream: ids from the reference models' tokenizers decoded
 * incrementally, stop strings matched with the least hold-back, never a
 * released character taken back or split.
 */
#include "serve_test.h"

#include <stdlib.h>
#include <string.h>

#include "rbln_tokenizer.h"
#include "serve/api/textstream.h"
#include "util/utf8.h"

static struct rbln_tokenizer *tok3;

static int setup(void **state)
{
	struct rbln_error err = { 0 };

	(void)state;
	if (rbln_tokenizer_load(model_path("tiny-llama3"), &tok3, &err))
		fail_msg("%s", err.msg);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rbln_tokenizer_free(tok3);
	return 0;
}

static struct rbln_ids encode(const char *text)
{
	struct rbln_ids ids = { 0 };
	struct rbln_error err = { 0 };

	if (rbln_tokenizer_encode(tok3, text, strlen(text), 0, &ids, &err))
		fail_msg("%s", err.msg);
	return ids;
}

struct run {
	char *text;		/* all released text */
	int stopped;
	size_t consumed;	/* ids used */
	const char *stop;
};

/* Streams ids one at a time; checks every release is valid UTF-8 and final. */
static struct run stream(const char *text, const char *const *stop, size_t n_stop, bool include,
			 bool skip_special, const int32_t *extra, size_t n_extra)
{
	struct rbln_sampling_params sp;
	struct rbln_ids ids = encode(text);
	struct serve_textstream *ts;
	struct rbln_strbuf out = { 0 };
	struct rbln_error err = { 0 };
	struct run r = { 0 };
	size_t i;

	for (i = 0; i < n_extra; i++)
		rbln_ids_push(&ids, extra[i]);
	rbln_sampling_params_init(&sp);
	sp.stop = stop;
	sp.n_stop = n_stop;
	sp.include_stop_str_in_output = include;
	sp.skip_special_tokens = skip_special;
	ts = serve_textstream_new(tok3, &sp);
	assert_non_null(ts);
	for (i = 0; i < ids.len && !r.stopped; i++) {
		size_t before = out.len, used;
		int rc = serve_textstream_push(ts, &ids.ids[i], 1, &out, &used, &err);

		assert_true(rc >= 0);
		assert_int_equal(used, 1);
		r.stopped = rc;
		r.consumed = i + 1;
		assert_true(rbln_utf8_valid(out.data ? out.data : "", out.len, NULL));
		assert_true(out.len >= before);
	}
	if (!r.stopped)
		assert_int_equal(serve_textstream_finish(ts, &out, &err), 0);
	r.stop = serve_textstream_stop(ts) ? strdup(serve_textstream_stop(ts)) : NULL;
	r.text = rbln_strbuf_steal(&out, NULL);
	serve_textstream_free(ts);
	rbln_ids_free(&ids);
	return r;
}

static void run_free(struct run *r)
{
	free(r->text);
	free((char *)r->stop);
}

static void test_no_stop_equals_decode(void **state)
{
	const char *texts[] = { "def main():\n    return 42\n", "Hello, 세계! 🦙 ok",
				"  spaces   and\ttabs\r\n" };
	size_t i;

	(void)state;
	for (i = 0; i < 3; i++) {
		struct run r = stream(texts[i], NULL, 0, false, true, NULL, 0);

		assert_string_equal(r.text, texts[i]);
		assert_false(r.stopped);
		run_free(&r);
	}
}

/* The RBLN tutorial's stop strings on a chat-formatted continuation. */
static void test_tutorial_stop_strings(void **state)
{
	const char *stop[] = { "[User]", "[System]", "[Assistant]" };
	const char *text = "The first letter is 'A'.\n[User]\nWhat next?";
	struct run r;

	(void)state;
	r = stream(text, stop, 3, false, true, NULL, 0);
	assert_true(r.stopped);
	assert_string_equal(r.text, "The first letter is 'A'.\n");
	assert_string_equal(r.stop, "[User]");
	run_free(&r);
	r = stream(text, stop, 3, true, true, NULL, 0);
	assert_string_equal(r.text, "The first letter is 'A'.\n[User]");
	run_free(&r);
}

/* Stopping happens at the token that completes the string, not later. */
static void test_stops_at_completing_token(void **state)
{
	const char *stop[] = { "return" };
	const char *text = "def f():\n    return 1\n    x = 2\n";
	struct rbln_ids ids = encode(text), upto = encode("def f():\n    return");
	struct run r;

	(void)state;
	r = stream(text, stop, 1, false, true, NULL, 0);
	assert_true(r.stopped);
	assert_string_equal(r.text, "def f():\n    ");
	assert_int_equal(r.consumed, upto.len);
	assert_true(r.consumed < ids.len);
	run_free(&r);
	rbln_ids_free(&ids);
	rbln_ids_free(&upto);
}

/* A prefix of a stop string is held back until it is decided, then released. */
static void test_holdback_released_at_end(void **state)
{
	const char *stop[] = { "###END" };
	struct rbln_sampling_params sp;
	struct serve_textstream *ts;
	struct rbln_strbuf out = { 0 };
	struct rbln_error err = { 0 };
	struct rbln_ids ids = encode("value ##");
	size_t i, used;

	(void)state;
	rbln_sampling_params_init(&sp);
	sp.stop = stop;
	sp.n_stop = 1;
	ts = serve_textstream_new(tok3, &sp);
	for (i = 0; i < ids.len; i++)
		assert_int_equal(serve_textstream_push(ts, &ids.ids[i], 1, &out, &used, &err), 0);
	assert_string_equal(out.data, "value ");	/* "##" might begin "###END" */
	assert_int_equal(serve_textstream_finish(ts, &out, &err), 0);
	assert_string_equal(out.data, "value ##");
	assert_null(serve_textstream_stop(ts));
	serve_textstream_free(ts);
	rbln_strbuf_free(&out);
	rbln_ids_free(&ids);
}

/* The earliest match wins when several stop strings occur. */
static void test_earliest_stop(void **state)
{
	const char *stop[] = { "gamma", "beta" };
	struct run r;

	(void)state;
	r = stream("alpha beta gamma", stop, 2, false, true, NULL, 0);
	assert_string_equal(r.text, "alpha ");
	assert_string_equal(r.stop, "beta");
	run_free(&r);
}

/* Multi-byte characters: a Korean stop string, text released whole. */
static void test_multibyte_stop(void **state)
{
	const char *stop[] = { "세계" };
	struct run r;

	(void)state;
	r = stream("안녕하세요 세계 여러분", stop, 1, false, true, NULL, 0);
	assert_true(r.stopped);
	assert_string_equal(r.text, "안녕하세요 ");
	run_free(&r);
}

/* Special tokens are skipped or shown as asked. */
static void test_special_tokens(void **state)
{
	int32_t eot = rbln_tokenizer_token_to_id(tok3, "<|eot_id|>", 10);
	struct run r;

	(void)state;
	assert_true(eot >= 0);
	r = stream("Hi", NULL, 0, false, true, &eot, 1);
	assert_string_equal(r.text, "Hi");
	run_free(&r);
	r = stream("Hi", NULL, 0, false, false, &eot, 1);
	assert_string_equal(r.text, "Hi<|eot_id|>");
	run_free(&r);
}

/* A batch of ids in one push stops mid-batch and says how many were used. */
static void test_batch_push(void **state)
{
	const char *stop[] = { "STOP" };
	struct rbln_sampling_params sp;
	struct rbln_ids ids = encode("go go STOP never shown");
	struct serve_textstream *ts;
	struct rbln_strbuf out = { 0 };
	struct rbln_error err = { 0 };
	size_t used;

	(void)state;
	rbln_sampling_params_init(&sp);
	sp.stop = stop;
	sp.n_stop = 1;
	ts = serve_textstream_new(tok3, &sp);
	assert_int_equal(serve_textstream_push(ts, ids.ids, ids.len, &out, &used, &err), 1);
	assert_true(used < ids.len);
	assert_string_equal(out.data, "go go ");
	/* After a stop nothing more is taken. */
	assert_int_equal(serve_textstream_push(ts, ids.ids, 1, &out, &used, &err), 1);
	assert_int_equal(used, 0);
	assert_int_equal(serve_textstream_finish(ts, &out, &err), 0);
	assert_string_equal(out.data, "go go ");
	serve_textstream_free(ts);
	rbln_strbuf_free(&out);
	rbln_ids_free(&ids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_stop_equals_decode),
		cmocka_unit_test(test_tutorial_stop_strings),
		cmocka_unit_test(test_stops_at_completing_token),
		cmocka_unit_test(test_holdback_released_at_end),
		cmocka_unit_test(test_earliest_stop),
		cmocka_unit_test(test_multibyte_stop),
		cmocka_unit_test(test_special_tokens),
		cmocka_unit_test(test_batch_push),
	};

	return cmocka_run_group_tests_name("serve-textstream", tests, setup, teardown);
}
