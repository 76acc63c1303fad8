// SPDX-License-Identifier: MIT
/*
 * The tokenizers of both reference models against transformers' outputs in
 * reference.json: every tokenizer case (ids, ids with special tokens,
 * decoded text), the generation prompts, the decoding of every greedy
 * continuation, streaming decoding equal to whole decoding, and the chat
 * renderings (text and ids).
 */
#include <stdlib.h>
#include <string.h>

#include "rbln_chat.h"
#include "rbln_tokenizer.h"
#include "test_common.h"

static const char *const models[] = { "tiny-llama3", "tiny-llama2" };

static void ids_from_json(json_object *arr, struct rbln_ids *ids)
{
	size_t i;

	ids->len = 0;
	for (i = 0; i < json_object_array_length(arr); i++)
		assert_int_equal(rbln_ids_push(ids, json_object_get_int(json_object_array_get_idx(arr, i))), 0);
}

static void assert_ids(const char *model, const char *what, size_t case_no,
		       const struct rbln_ids *got, json_object *want)
{
	size_t i, n = json_object_array_length(want);

	if (got->len != n)
		fail_msg("%s %s case %zu: %zu ids, reference has %zu", model, what, case_no, got->len,
			 n);
	for (i = 0; i < n; i++) {
		int want_id = json_object_get_int(json_object_array_get_idx(want, i));

		if (got->ids[i] != want_id)
			fail_msg("%s %s case %zu: id %zu is %d, reference %d", model, what, case_no, i,
				 got->ids[i], want_id);
	}
}

static void encode_expect(struct rbln_tokenizer *tok, const char *model, const char *what,
			  size_t case_no, const char *text, size_t len, unsigned flags,
			  json_object *want)
{
	struct rbln_ids ids = { 0 };
	struct rbln_error err = { 0 };

	if (rbln_tokenizer_encode(tok, text, len, flags, &ids, &err))
		fail_msg("%s %s case %zu: %s", model, what, case_no, err.msg);
	assert_ids(model, what, case_no, &ids, want);
	rbln_ids_free(&ids);
}

/* Decodes ids whole and streamed; both must equal want. */
static void decode_expect(struct rbln_tokenizer *tok, const char *model, const char *what,
			  size_t case_no, const struct rbln_ids *ids, const char *want,
			  size_t want_len)
{
	struct rbln_error err = { 0 };
	struct rbln_detokenizer *d = rbln_detokenizer_new(tok, 0);
	char *text, *streamed = calloc(1, want_len * 2 + 64);
	size_t len, slen = 0, i;
	const char *piece;
	size_t plen;

	assert_non_null(d);
	assert_non_null(streamed);
	if (rbln_tokenizer_decode(tok, ids->ids, ids->len, 0, &text, &len, &err))
		fail_msg("%s %s case %zu: %s", model, what, case_no, err.msg);
	if (len != want_len || memcmp(text, want, len))
		fail_msg("%s %s case %zu: decoded \"%s\", reference \"%s\"", model, what, case_no, text,
			 want);
	for (i = 0; i < ids->len; i++) {
		assert_int_equal(rbln_detokenizer_push(d, ids->ids[i], &piece, &plen, &err), 0);
		assert_true(slen + plen <= want_len * 2 + 32);
		memcpy(streamed + slen, piece, plen);
		slen += plen;
	}
	assert_int_equal(rbln_detokenizer_finish(d, &piece, &plen, &err), 0);
	memcpy(streamed + slen, piece, plen);
	slen += plen;
	if (slen != want_len || memcmp(streamed, want, slen))
		fail_msg("%s %s case %zu: streamed \"%.*s\", reference \"%s\"", model, what, case_no,
			 (int)slen, streamed, want);
	free(text);
	free(streamed);
	rbln_detokenizer_free(d);
}

static void check_tokenizer_cases(const char *model)
{
	json_object *ref = test_reference(model), *cases;
	struct rbln_tokenizer *tok;
	struct rbln_error err = { 0 };
	struct rbln_ids ids = { 0 };
	size_t i, n;

	assert_int_equal(rbln_tokenizer_load(test_model_path(model), &tok, &err), 0);
	assert_true(json_object_object_get_ex(ref, "tokenizer", &cases));
	n = json_object_array_length(cases);
	assert_true(n >= 20);
	for (i = 0; i < n; i++) {
		json_object *c = json_object_array_get_idx(cases, i), *text, *want, *with, *dec;

		assert_true(json_object_object_get_ex(c, "text", &text));
		assert_true(json_object_object_get_ex(c, "ids", &want));
		assert_true(json_object_object_get_ex(c, "ids_with_special", &with));
		assert_true(json_object_object_get_ex(c, "decoded", &dec));
		encode_expect(tok, model, "tokenizer", i, json_object_get_string(text),
			      (size_t)json_object_get_string_len(text), 0, want);
		encode_expect(tok, model, "tokenizer+special", i, json_object_get_string(text),
			      (size_t)json_object_get_string_len(text), RBLN_ENCODE_ADD_SPECIAL, with);
		ids_from_json(want, &ids);
		decode_expect(tok, model, "decode", i, &ids, json_object_get_string(dec),
			      (size_t)json_object_get_string_len(dec));
	}
	rbln_ids_free(&ids);
	rbln_tokenizer_free(tok);
	json_object_put(ref);
}

static void test_llama3_tokenizer_cases(void **state)
{
	(void)state;
	check_tokenizer_cases("tiny-llama3");
}

static void test_llama2_tokenizer_cases(void **state)
{
	(void)state;
	check_tokenizer_cases("tiny-llama2");
}

/* Prompts encode to input_ids; greedy ids decode to greedy_text. */
static void check_generation_texts(const char *model)
{
	json_object *ref = test_reference(model), *gens;
	struct rbln_tokenizer *tok;
	struct rbln_error err = { 0 };
	struct rbln_ids ids = { 0 };
	size_t i, prompts = 0;

	assert_int_equal(rbln_tokenizer_load(test_model_path(model), &tok, &err), 0);
	assert_true(json_object_object_get_ex(ref, "generate", &gens));
	for (i = 0; i < json_object_array_length(gens); i++) {
		json_object *g = json_object_array_get_idx(gens, i), *prompt, *input, *greedy, *text;

		assert_true(json_object_object_get_ex(g, "input_ids", &input));
		assert_true(json_object_object_get_ex(g, "greedy_ids", &greedy));
		assert_true(json_object_object_get_ex(g, "greedy_text", &text));
		if (json_object_object_get_ex(g, "prompt", &prompt) &&
		    json_object_is_type(prompt, json_type_string)) {
			encode_expect(tok, model, "prompt", i, json_object_get_string(prompt),
				      (size_t)json_object_get_string_len(prompt),
				      RBLN_ENCODE_ADD_SPECIAL, input);
			prompts++;
		}
		ids_from_json(greedy, &ids);
		decode_expect(tok, model, "greedy_text", i, &ids, json_object_get_string(text),
			      (size_t)json_object_get_string_len(text));
	}
	assert_true(prompts >= 8);
	rbln_ids_free(&ids);
	rbln_tokenizer_free(tok);
	json_object_put(ref);
}

static void test_llama3_generation_texts(void **state)
{
	(void)state;
	check_generation_texts("tiny-llama3");
}

static void test_llama2_generation_texts(void **state)
{
	(void)state;
	check_generation_texts("tiny-llama2");
}

/* The long prompt decodes and re-encodes to itself (no text is given for it). */
static void test_long_prompt_roundtrip(void **state)
{
	size_t m;

	(void)state;
	for (m = 0; m < 2; m++) {
		json_object *ref = test_reference(models[m]), *gens, *last, *input;
		struct rbln_tokenizer *tok;
		struct rbln_error err = { 0 };
		struct rbln_ids ids = { 0 };
		char *text;
		size_t len;

		assert_int_equal(rbln_tokenizer_load(test_model_path(models[m]), &tok, &err), 0);
		assert_true(json_object_object_get_ex(ref, "generate", &gens));
		last = json_object_array_get_idx(gens, json_object_array_length(gens) - 1);
		assert_true(json_object_object_get_ex(last, "input_ids", &input));
		assert_true(json_object_array_length(input) >= 900);
		ids_from_json(input, &ids);
		/* Drop BOS, decode, and encode again with BOS. */
		assert_int_equal(rbln_tokenizer_decode(tok, ids.ids + 1, ids.len - 1, 0, &text, &len,
						       &err), 0);
		encode_expect(tok, models[m], "long prompt", 0, text, len, RBLN_ENCODE_ADD_SPECIAL,
			      input);
		free(text);
		rbln_ids_free(&ids);
		rbln_tokenizer_free(tok);
		json_object_put(ref);
	}
}

static void check_chat(const char *model)
{
	json_object *ref = test_reference(model), *chats;
	struct rbln_chat_template *t;
	struct rbln_tokenizer *tok;
	struct rbln_error err = { 0 };
	struct rbln_chat_options opt = { .add_generation_prompt = true };
	size_t i;

	assert_int_equal(rbln_tokenizer_load(test_model_path(model), &tok, &err), 0);
	if (rbln_chat_template_load(test_model_path(model), &t, &err))
		fail_msg("%s: %s", model, err.msg);
	assert_true(json_object_object_get_ex(ref, "chat", &chats));
	assert_true(json_object_array_length(chats) >= 3);
	for (i = 0; i < json_object_array_length(chats); i++) {
		json_object *c = json_object_array_get_idx(chats, i), *msgs, *want, *ids;
		const char *json;
		char *text;
		size_t len;

		assert_true(json_object_object_get_ex(c, "messages", &msgs));
		assert_true(json_object_object_get_ex(c, "text", &want));
		assert_true(json_object_object_get_ex(c, "ids", &ids));
		json = json_object_to_json_string(msgs);
		if (rbln_chat_render_json(t, json, strlen(json), &opt, &text, &len, &err))
			fail_msg("%s chat case %zu: %s", model, i, err.msg);
		if (strcmp(text, json_object_get_string(want)))
			fail_msg("%s chat case %zu: rendered \"%s\", reference \"%s\"", model, i, text,
				 json_object_get_string(want));
		/* apply_chat_template(tokenize=True) adds no special tokens. */
		encode_expect(tok, model, "chat ids", i, text, len, 0, ids);
		free(text);
	}
	rbln_chat_template_free(t);
	rbln_tokenizer_free(tok);
	json_object_put(ref);
}

static void test_llama3_chat(void **state)
{
	(void)state;
	check_chat("tiny-llama3");
}

static void test_llama2_chat(void **state)
{
	(void)state;
	check_chat("tiny-llama2");
}

/* Llama 2's template enforces alternating roles with raise_exception. */
static void test_llama2_chat_role_error(void **state)
{
	struct rbln_chat_template *t;
	struct rbln_error err = { 0 };
	const char *msgs = "[{\"role\": \"user\", \"content\": \"a\"}, "
			   "{\"role\": \"user\", \"content\": \"b\"}]";
	char *text;
	size_t len;

	(void)state;
	assert_int_equal(rbln_chat_template_load(test_model_path("tiny-llama2"), &t, &err), 0);
	assert_true(rbln_chat_render_json(t, msgs, strlen(msgs), NULL, &text, &len, &err) < 0);
	test_assert_contains_all(err.msg, "chat_template.jinja", "line 1",
				 "Conversation roles must alternate", NULL);
	rbln_chat_template_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_llama3_tokenizer_cases),
		cmocka_unit_test(test_llama2_tokenizer_cases),
		cmocka_unit_test(test_llama3_generation_texts),
		cmocka_unit_test(test_llama2_generation_texts),
		cmocka_unit_test(test_long_prompt_roundtrip),
		cmocka_unit_test(test_llama3_chat),
		cmocka_unit_test(test_llama2_chat),
		cmocka_unit_test(test_llama2_chat_role_error),
	};

	return cmocka_run_group_tests_name("engine tokenizer reference", tests, NULL, NULL);
}
