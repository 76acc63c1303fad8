// SPDX-License-Identifier: MIT
/*
 * Tokenizer behaviour on small synthetic tokenizer.json files (merge
 * formats, ignore_merges, byte fallback, unknown tokens, added-token
 * flags, split behaviours, error messages) and streaming decoding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbln_tokenizer.h"
#include "test_common.h"

static struct rbln_tokenizer *load(const char *json, struct rbln_error *err)
{
	struct rbln_tokenizer *tok = NULL;

	if (rbln_tokenizer_load_json(json, strlen(json), "tokenizer.json", NULL, &tok, err))
		return NULL;
	return tok;
}

static struct rbln_tokenizer *must_load(const char *json)
{
	struct rbln_error err = { 0 };
	struct rbln_tokenizer *tok = load(json, &err);

	if (!tok)
		fail_msg("loading failed: %s", err.msg);
	return tok;
}

/* Encodes and compares with a -1-terminated id list. */
static void expect_ids(struct rbln_tokenizer *tok, const char *text, unsigned flags,
		       const int32_t *want)
{
	struct rbln_ids ids = { 0 };
	struct rbln_error err = { 0 };
	size_t i, n = 0;

	while (want[n] >= 0)
		n++;
	if (rbln_tokenizer_encode(tok, text, strlen(text), flags, &ids, &err))
		fail_msg("encode \"%s\": %s", text, err.msg);
	if (ids.len != n)
		fail_msg("encode \"%s\": %zu ids, expected %zu", text, ids.len, n);
	for (i = 0; i < n; i++)
		if (ids.ids[i] != want[i])
			fail_msg("encode \"%s\": id %zu is %d, expected %d", text, i, ids.ids[i], want[i]);
	rbln_ids_free(&ids);
}

static void expect_decode(struct rbln_tokenizer *tok, const int32_t *ids, size_t n,
			  unsigned flags, const char *want, size_t want_len)
{
	struct rbln_error err = { 0 };
	char *text;
	size_t len;

	assert_int_equal(rbln_tokenizer_decode(tok, ids, n, flags, &text, &len, &err), 0);
	if (len != want_len || memcmp(text, want, len))
		fail_msg("decoded \"%s\", expected \"%s\"", text, want);
	free(text);
}

#define VOCAB_ABC "\"a\": 0, \"b\": 1, \"c\": 2, \"ab\": 3, \"abc\": 4, \"bc\": 5"

static void test_merge_formats_agree(void **state)
{
	static const int32_t ab_c[] = { 3, 2, -1 };
	struct rbln_tokenizer *strings = must_load(
		"{\"model\": {\"type\": \"BPE\", \"vocab\": {" VOCAB_ABC "}, \"merges\": [\"a b\", \"b c\"]}}");
	struct rbln_tokenizer *pairs = must_load(
		"{\"model\": {\"type\": \"BPE\", \"vocab\": {" VOCAB_ABC "}, "
		"\"merges\": [[\"a\", \"b\"], [\"b\", \"c\"]]}}");

	(void)state;
	/* "a b" ranks before "b c", so abc -> ab + c, not a + bc. */
	expect_ids(strings, "abc", 0, ab_c);
	expect_ids(pairs, "abc", 0, ab_c);
	rbln_tokenizer_free(strings);
	rbln_tokenizer_free(pairs);
}

static void test_merge_rank_order(void **state)
{
	static const int32_t a_bc[] = { 0, 5, -1 };
	struct rbln_tokenizer *tok = must_load(
		"{\"model\": {\"type\": \"BPE\", \"vocab\": {" VOCAB_ABC "}, \"merges\": [\"b c\", \"a b\"]}}");

	(void)state;
	expect_ids(tok, "abc", 0, a_bc);
	rbln_tokenizer_free(tok);
}

/* Equal ranks resolve leftmost first: "aaa" -> aa + a -> aaa, not a + aa. */
static void test_merge_ties_go_left(void **state)
{
	static const int32_t whole[] = { 2, -1 };
	struct rbln_tokenizer *tok = must_load(
		"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"aa\": 1, \"aaa\": 2}, "
		"\"merges\": [\"a a\", \"aa a\"]}}");

	(void)state;
	expect_ids(tok, "aaa", 0, whole);
	rbln_tokenizer_free(tok);
}

static void test_ignore_merges(void **state)
{
	static const int32_t whole[] = { 4, -1 }, merged[] = { 3, 2, -1 };
	struct rbln_tokenizer *on = must_load(
		"{\"model\": {\"type\": \"BPE\", \"ignore_merges\": true, \"vocab\": {" VOCAB_ABC "}, "
		"\"merges\": [\"a b\"]}}");
	struct rbln_tokenizer *off = must_load(
		"{\"model\": {\"type\": \"BPE\", \"vocab\": {" VOCAB_ABC "}, \"merges\": [\"a b\"]}}");

	(void)state;
	expect_ids(on, "abc", 0, whole);
	expect_ids(off, "abc", 0, merged);
	rbln_tokenizer_free(on);
	rbln_tokenizer_free(off);
}

/* SentencePiece style: unknown characters become <0xNN> bytes, else <unk>. */
static void test_byte_fallback_and_unk(void **state)
{
	static const int32_t bytes[] = { 1, 3, 4, -1 };	/* a, <0xC3>, <0xA9> */
	static const int32_t unk[] = { 1, 0, 1, -1 };	/* "a", fused <unk>, "a" */
	static const int32_t unk_unfused[] = { 1, 0, 0, 1, -1 };
	struct rbln_tokenizer *fb = must_load(
		"{\"model\": {\"type\": \"BPE\", \"byte_fallback\": true, \"unk_token\": \"<unk>\", "
		"\"fuse_unk\": true, \"vocab\": {\"<unk>\": 0, \"a\": 1, \"b\": 2, \"<0xC3>\": 3, "
		"\"<0xA9>\": 4}, \"merges\": []}, \"decoder\": {\"type\": \"Sequence\", "
		"\"decoders\": [{\"type\": \"ByteFallback\"}, {\"type\": \"Fuse\"}]}}");
	struct rbln_tokenizer *nofuse = must_load(
		"{\"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"vocab\": {\"<unk>\": 0, "
		"\"a\": 1}, \"merges\": []}}");
	static const int32_t ids[] = { 3, 4, 2, 3 };

	(void)state;
	expect_ids(fb, "a\xC3\xA9", 0, bytes);	/* é: both bytes exist */
	expect_ids(fb, "a\xE2\x82\xAC\xE2\x82\xAC" "a", 0, unk);	/* €€: no byte tokens */
	expect_ids(nofuse, "axya", 0, unk_unfused);
	/* Byte tokens decode to UTF-8; an incomplete run to U+FFFD per byte. */
	expect_decode(fb, ids, 2, 0, "\xC3\xA9", 2);
	expect_decode(fb, ids + 3, 1, 0, "\xEF\xBF\xBD", 3);
	rbln_tokenizer_free(fb);
	rbln_tokenizer_free(nofuse);
}

#define ADDED_BASE                                                                            \
	"\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \" \": 2, \"<x>\": 3, " \
	"\"<\": 4, \"x\": 5, \">\": 6}, " \
	"\"merges\": []}, \"decoder\": {\"type\": \"Fuse\"}"

static void test_added_token_flags(void **state)
{
	static const int32_t plain[] = { 0, 2, 10, 2, 1, -1 };
	static const int32_t lstrip[] = { 0, 11, 2, 1, -1 };
	static const int32_t rstrip[] = { 0, 2, 12, 1, -1 };
	static const int32_t word_ok[] = { 0, 2, 13, 2, 1, -1 };
	static const int32_t word_inside[] = { 0, 4, 5, 6, 1, -1 };	/* <x> not cut out of a<x>b */
	static const int32_t longest[] = { 14, -1 };
	struct rbln_tokenizer *tok = must_load(
		"{" ADDED_BASE ", \"added_tokens\": ["
		"{\"id\": 10, \"content\": \"<p>\", \"special\": true, \"normalized\": false},"
		"{\"id\": 11, \"content\": \"<l>\", \"lstrip\": true, \"normalized\": false},"
		"{\"id\": 12, \"content\": \"<r>\", \"rstrip\": true, \"normalized\": false},"
		"{\"id\": 13, \"content\": \"<x>\", \"single_word\": true, \"normalized\": false},"
		"{\"id\": 14, \"content\": \"<p><p>\", \"normalized\": false}]}");
	static const int32_t dec[] = { 0, 10, 1 };

	(void)state;
	expect_ids(tok, "a <p> b", 0, plain);
	expect_ids(tok, "a   <l> b", 0, lstrip);
	expect_ids(tok, "a <r>   b", 0, rstrip);
	expect_ids(tok, "a <x> b", 0, word_ok);
	expect_ids(tok, "a<x>b", 0, word_inside);
	expect_ids(tok, "<p><p>", 0, longest);
	expect_decode(tok, dec, 3, 0, "a<p>b", 5);
	expect_decode(tok, dec, 3, RBLN_DECODE_SKIP_SPECIAL, "ab", 2);
	assert_true(rbln_tokenizer_is_special(tok, 10));
	assert_false(rbln_tokenizer_is_special(tok, 11));
	assert_int_equal(rbln_tokenizer_token_to_id(tok, "<r>", 3), 12);
	assert_int_equal(rbln_tokenizer_vocab_size(tok), 15);
	rbln_tokenizer_free(tok);
}

/* With a Prepend normalizer, normalized added tokens match their normalized form. */
static void test_normalized_added_token(void **state)
{
	static const int32_t ids[] = { 0, 7, 0, -1 };
	struct rbln_tokenizer *tok = must_load(
		"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"_\": 0, \"q\": 1}, \"merges\": []}, "
		"\"normalizer\": {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"_\"}, "
		"\"added_tokens\": [{\"id\": 7, \"content\": \"Q Q\", \"normalized\": true}]}");

	(void)state;
	/* " Q Q " normalizes to "_Q_Q_", where "Q_Q" (the normalized token) is found. */
	expect_ids(tok, " Q Q ", 0, ids);
	rbln_tokenizer_free(tok);
}

static void split_case(const char *behavior, bool invert, const int32_t *want)
{
	char json[1024];
	struct rbln_tokenizer *tok;

	snprintf(json, sizeof(json),
		 "{\"model\": {\"type\": \"BPE\", \"ignore_merges\": true, \"vocab\": {\"a\": 0, \"-\": 1, "
		 "\"a-\": 2, \"-a\": 3, \"--\": 4, \"a--\": 5, \"--a\": 6}, \"merges\": []}, "
		 "\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"String\": \"-\"}, "
		 "\"behavior\": \"%s\", \"invert\": %s}}", behavior, invert ? "true" : "false");
	tok = must_load(json);
	expect_ids(tok, "a--a", 0, want);
	rbln_tokenizer_free(tok);
}

static void test_split_behaviors(void **state)
{
	static const int32_t removed[] = { 0, 0, -1 }, isolated[] = { 0, 1, 1, 0, -1 };
	static const int32_t prev[] = { 2, 1, 0, -1 }, next[] = { 0, 1, 3, -1 };
	static const int32_t contiguous[] = { 0, 4, 0, -1 }, inverted[] = { 1, 1, -1 };

	(void)state;
	split_case("Removed", false, removed);
	split_case("Isolated", false, isolated);
	split_case("MergedWithPrevious", false, prev);
	split_case("MergedWithNext", false, next);
	split_case("Contiguous", false, contiguous);
	split_case("Removed", true, inverted);
}

static void test_metaspace(void **state)
{
	static const int32_t ids[] = { 3, 4, -1 };
	static const int32_t dec_ids[] = { 3, 4 };
	struct rbln_tokenizer *tok = must_load(
		"{\"model\": {\"type\": \"BPE\", \"ignore_merges\": true, \"vocab\": {\"\xE2\x96\x81\": 0, "
		"\"a\": 1, \"b\": 2, \"\xE2\x96\x81" "a\": 3, \"\xE2\x96\x81" "b\": 4}, \"merges\": []}, "
		"\"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\": \"\xE2\x96\x81\", "
		"\"prepend_scheme\": \"always\", \"split\": true}, "
		"\"decoder\": {\"type\": \"Metaspace\", \"replacement\": \"\xE2\x96\x81\", "
		"\"prepend_scheme\": \"always\", \"split\": true}}");

	(void)state;
	expect_ids(tok, "a b", 0, ids);
	expect_decode(tok, dec_ids, 2, 0, "a b", 3);
	rbln_tokenizer_free(tok);
}

static void expect_load_error(const char *json, const char *w1, const char *w2)
{
	struct rbln_error err = { 0 };

	assert_null(load(json, &err));
	test_assert_contains_all(err.msg, "tokenizer.json", w1, w2, NULL);
}

static void test_load_errors(void **state)
{
	(void)state;
	expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a z\"]}}",
			  "merges[0]", "'z'");
	expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, "
			  "\"merges\": [\"a b\"]}}", "merges[0]", "'ab'");
	expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a\"]}}",
			  "merges[0]", "one space");
	expect_load_error("{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}", "model.type",
			  "Unigram");
	expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 0}, "
			  "\"merges\": []}}", "id 0", "both");
	expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, "
			  "\"normalizer\": {\"type\": \"NFKC\"}}", "normalizer", "NFKC");
	expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, "
			  "\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": "
			  "[{\"type\": \"Whitespace\"}]}}", "pretokenizers[0]", "Whitespace");
	expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, "
			  "\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"(a\"}, "
			  "\"behavior\": \"Isolated\"}}", "regex error", "offset");
	expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, "
			  "\"decoder\": {\"type\": \"WordPiece\"}}", "decoder", "WordPiece");
	expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, "
			  "\"post_processor\": {\"type\": \"BertProcessing\"}}", "post_processor",
			  "BertProcessing");
	expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": [], "
			  "\"dropout\": 0.1}}", "dropout", "not supported");
	expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}, "
			  "\"added_tokens\": [{\"id\": 1, \"content\": \"x\"}, {\"id\": 2, \"content\": \"x\"}]}",
			  "added_tokens[1]", "content");
	expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}", "malformed JSON",
			  "end of input");
	expect_load_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}}}}", "malformed JSON",
			  "line 1");
	expect_load_error("{\"normalizer\": null}", "model", "missing");
}

/* ---- the real tokenizers ---- */

static bool valid_utf8(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;

		if (!k || i + k > n)
			return false;
		for (size_t j = 1; j < k; j++)
			if (((unsigned char)s[i + j] >> 6) != 2)
				return false;
		i += k;
	}
	return true;
}

/* Every streamed piece is whole UTF-8, and the pieces add up to decode(). */
static void stream_text(const char *model, const char *text)
{
	struct rbln_tokenizer *tok;
	struct rbln_detokenizer *d;
	struct rbln_error err = { 0 };
	struct rbln_ids ids = { 0 };
	char out[4096];
	size_t i, len = 0, plen;
	const char *p;
	bool held_back = false;

	assert_int_equal(rbln_tokenizer_load(test_model_path(model), &tok, &err), 0);
	assert_int_equal(rbln_tokenizer_encode(tok, text, strlen(text), 0, &ids, &err), 0);
	d = rbln_detokenizer_new(tok, 0);
	for (i = 0; i < ids.len; i++) {
		assert_int_equal(rbln_detokenizer_push(d, ids.ids[i], &p, &plen, &err), 0);
		if (!valid_utf8(p, plen))
			fail_msg("%s: piece after token %zu is not whole UTF-8", model, i);
		held_back |= plen == 0;
		memcpy(out + len, p, plen);
		len += plen;
	}
	assert_int_equal(rbln_detokenizer_finish(d, &p, &plen, &err), 0);
	memcpy(out + len, p, plen);
	len += plen;
	assert_int_equal(len, strlen(text));
	assert_memory_equal(out, text, len);
	/* Multi-token characters must have made some push return nothing. */
	assert_true(held_back);
	rbln_detokenizer_free(d);
	rbln_ids_free(&ids);
	rbln_tokenizer_free(tok);
}

static void test_streaming_never_splits_characters(void **state)
{
	const char *text = "emoji \xF0\x9F\xA6\x99\xF0\x9F\xA7\x9C\xE2\x80\x8D\xE2\x99\x82\xEF\xB8\x8F "
			   "\xEB\xA9\x94\xEB\xAA\xA8\xEB\xA6\xAC \xE6\xB7\xB1\xE5\xBA\xA6 done";

	(void)state;
	stream_text("tiny-llama3", text);
	stream_text("tiny-llama2", text);
}

static void test_invalid_utf8_input_and_ids(void **state)
{
	struct rbln_tokenizer *tok;
	struct rbln_error err = { 0 };
	struct rbln_ids ids = { 0 };
	int32_t bad[] = { 5, 999999 };
	char *text;
	size_t len;

	(void)state;
	assert_int_equal(rbln_tokenizer_load(test_model_path("tiny-llama3"), &tok, &err), 0);
	assert_true(rbln_tokenizer_encode(tok, "ok\xFF", 3, 0, &ids, &err) < 0);
	test_assert_contains_all(err.msg, "UTF-8", "byte 2", NULL);
	assert_true(rbln_tokenizer_decode(tok, bad, 2, 0, &text, &len, &err) < 0);
	test_assert_contains_all(err.msg, "999999", NULL);
	rbln_ids_free(&ids);
	rbln_tokenizer_free(tok);
}

/* A byte-level token sequence that stops inside a character ends in U+FFFD. */
static void test_lossy_tail(void **state)
{
	struct rbln_tokenizer *tok;
	struct rbln_error err = { 0 };
	struct rbln_ids ids = { 0 };
	char *text;
	size_t len;

	(void)state;
	assert_int_equal(rbln_tokenizer_load(test_model_path("tiny-llama3"), &tok, &err), 0);
	assert_int_equal(rbln_tokenizer_encode(tok, "\xF0\x9F\xA6\x99", 4, 0, &ids, &err), 0);
	assert_true(ids.len >= 2);
	assert_int_equal(rbln_tokenizer_decode(tok, ids.ids, ids.len - 1, 0, &text, &len, &err), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(text, "\xEF\xBF\xBD", 3);
	free(text);
	rbln_ids_free(&ids);
	rbln_tokenizer_free(tok);
}

/*
 * Llama 2 BPE sees the whole text as one word.  A quadratic merge loop
 * would take minutes on this; the heap-based one takes milliseconds.
 */
static void test_long_single_word(void **state)
{
	struct rbln_tokenizer *tok;
	struct rbln_error err = { 0 };
	struct rbln_ids ids = { 0 };
	size_t n = 200000, i;
	char *text = malloc(n + 1), *back;
	size_t len;

	(void)state;
	assert_non_null(text);
	for (i = 0; i < n; i++)
		text[i] = "abcdefgh ij"[i % 11];
	text[n] = '\0';
	assert_int_equal(rbln_tokenizer_load(test_model_path("tiny-llama2"), &tok, &err), 0);
	assert_int_equal(rbln_tokenizer_encode(tok, text, n, 0, &ids, &err), 0);
	assert_true(ids.len > 1000 && ids.len < n);
	assert_int_equal(rbln_tokenizer_decode(tok, ids.ids, ids.len, 0, &back, &len, &err), 0);
	assert_int_equal(len, n);
	assert_memory_equal(back, text, n);
	free(back);
	free(text);
	rbln_ids_free(&ids);
	rbln_tokenizer_free(tok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_formats_agree),
		cmocka_unit_test(test_merge_rank_order),
		cmocka_unit_test(test_merge_ties_go_left),
		cmocka_unit_test(test_ignore_merges),
		cmocka_unit_test(test_byte_fallback_and_unk),
		cmocka_unit_test(test_added_token_flags),
		cmocka_unit_test(test_normalized_added_token),
		cmocka_unit_test(test_split_behaviors),
		cmocka_unit_test(test_metaspace),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_streaming_never_splits_characters),
		cmocka_unit_test(test_invalid_utf8_input_and_ids),
		cmocka_unit_test(test_lossy_tail),
		cmocka_unit_test(test_long_single_word),
	};

	return cmocka_run_group_tests_name("engine tokenizer", tests, NULL, NULL);
}
