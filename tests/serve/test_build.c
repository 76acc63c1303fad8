// SPDX-License-Identifier: MIT
/*
 * Requests made ready for the engine with the reference models: tokenized
 * prompts (BOS as vLLM adds it), chat renderings equal to transformers',
 * defaults from generation_config.json, length limits, bad words.
 */
#include "serve_test.h"

#include <stdlib.h>
#include <string.h>

#include "serve/api/request_build.h"

static struct rbln_tokenizer *tok;
static struct rbln_chat_template *chat;
static struct serve_model_text mt;

static int setup(void **state)
{
	struct rbln_error err = { 0 };

	(void)state;
	if (rbln_tokenizer_load(model_path("tiny-llama3"), &tok, &err) ||
	    rbln_chat_template_load(model_path("tiny-llama3"), &chat, &err) ||
	    serve_gen_defaults_load(model_path("tiny-llama3"), &mt.defaults, &err))
		fail_msg("%s", err.msg);
	mt.name = "tiny-llama3";
	mt.tok = tok;
	mt.chat = chat;
	mt.max_model_len = 2048;
	mt.vocab_size = (int64_t)rbln_tokenizer_vocab_size(tok);
	mt.max_logprobs = RBLN_SAMPLING_MAX_LOGPROBS;
	mt.longest_token = serve_longest_token(tok);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rbln_tokenizer_free(tok);
	rbln_chat_template_free(chat);
	return 0;
}

static struct serve_model_config *default_cfg(void)
{
	static struct serve_model_config c;
	static bool loaded;
	struct rbln_error err = { 0 };

	if (!loaded && serve_model_config_default("tiny-llama3", &c, &err))
		fail_msg("%s", err.msg);
	loaded = true;
	return &c;
}

static void parse(enum serve_api api, const char *body, struct serve_request *r)
{
	struct rbln_error err = { 0 };
	int rc;

	switch (api) {
	case SERVE_API_GENERATE:
		rc = serve_parse_generate(default_cfg(), body, strlen(body), false, r, &err);
		break;
	case SERVE_API_COMPLETIONS:
		rc = serve_parse_completions(body, strlen(body), r, &err);
		break;
	default:
		rc = serve_parse_chat(body, strlen(body), r, &err);
		break;
	}
	if (rc)
		fail_msg("%s", err.msg);
}

static void build_ok(enum serve_api api, const char *body, struct serve_request *r,
		     struct serve_built *b)
{
	struct rbln_error err = { 0 };

	parse(api, body, r);
	if (serve_request_build(&mt, r, b, &err))
		fail_msg("%s\nbody: %s", err.msg, body);
}

static const char *build_err(enum serve_api api, const char *body, int code,
			     struct rbln_error *err)
{
	struct serve_request r;
	struct serve_built b;

	memset(err, 0, sizeof(*err));
	parse(api, body, &r);
	assert_int_equal(serve_request_build(&mt, &r, &b, err), code);
	serve_request_free(&r);
	return err->msg;
}

static void test_generate_prompt_and_defaults(void **state)
{
	struct serve_request r;
	struct serve_built b;

	(void)state;
	build_ok(SERVE_API_GENERATE, "{\"text_input\": \"def main():\"}", &r, &b);
	assert_int_equal(b.n_prompts, 1);
	assert_int_equal(b.prompts[0].ids[0], 4085);	/* <|begin_of_text|> */
	assert_string_equal(b.prompts[0].text, "def main():");
	/* generation_config.json: temperature 0.6, top_p 0.9 */
	assert_true(b.sp.temperature == 0.6);
	assert_true(b.sp.top_p == 0.9);
	assert_int_equal(b.sp.max_tokens, -1);
	serve_built_free(&b);
	serve_request_free(&r);

	build_ok(SERVE_API_GENERATE, "{\"text_input\": \"x\", \"parameters\": {\"temperature\": 0, "
		 "\"max_tokens\": 5}}", &r, &b);
	assert_true(b.sp.temperature == 0);
	assert_true(b.sp.top_p == 0.9);
	assert_int_equal(b.sp.max_tokens, 5);
	serve_built_free(&b);
	serve_request_free(&r);
}

static void test_completions_prompts(void **state)
{
	struct serve_request r;
	struct serve_built b;

	(void)state;
	build_ok(SERVE_API_COMPLETIONS, "{\"prompt\": [\"import os\", [4085, 474, 2117]]}", &r, &b);
	assert_int_equal(b.n_prompts, 2);
	assert_int_equal(b.sp.max_tokens, 16);
	assert_int_equal(b.prompts[0].ids[0], 4085);
	assert_int_equal(b.prompts[1].n_ids, 3);
	assert_int_equal(b.prompts[1].ids[2], 2117);
	assert_non_null(b.prompts[1].text);
	serve_built_free(&b);
	serve_request_free(&r);

	build_ok(SERVE_API_COMPLETIONS, "{\"prompt\": \"import os\", \"add_special_tokens\": false, "
		 "\"truncate_prompt_tokens\": 1}", &r, &b);
	assert_int_equal(b.prompts[0].n_ids, 1);
	assert_true(b.prompts[0].ids[0] != 4085);
	serve_built_free(&b);
	serve_request_free(&r);
}

/* The chat renderings of reference.json, token for token. */
static void test_chat_matches_reference(void **state)
{
	json_object *ref = NULL, *cases;
	size_t n, i, k;
	char *path = path_join(model_path("tiny-llama3"), "reference.json");
	char *text = read_text(path, &n);

	(void)state;
	ref = parse_json(text, n);
	cases = jpath(ref, "chat");
	for (i = 0; i < json_object_array_length(cases); i++) {
		json_object *c = json_object_array_get_idx(cases, i), *ids = jpath(c, "ids");
		char body[8192];
		struct serve_request r;
		struct serve_built b;

		snprintf(body, sizeof(body), "{\"messages\": %s}",
			 json_object_to_json_string(jpath(c, "messages")));
		build_ok(SERVE_API_CHAT, body, &r, &b);
		assert_string_equal(b.prompts[0].text, jpath_str(c, "text"));
		assert_int_equal(b.prompts[0].n_ids, json_object_array_length(ids));
		for (k = 0; k < b.prompts[0].n_ids; k++)
			assert_int_equal(b.prompts[0].ids[k],
					 json_object_get_int(json_object_array_get_idx(ids, k)));
		assert_int_equal(b.sp.max_tokens, -1);
		serve_built_free(&b);
		serve_request_free(&r);
	}
	json_object_put(ref);
	free(text);
	free(path);
}

static void test_chat_continue_final_message(void **state)
{
	struct serve_request r;
	struct serve_built b;
	size_t n;

	(void)state;
	build_ok(SERVE_API_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": \"Count.\"}, "
		 "{\"role\": \"assistant\", \"content\": \"One, two,\"}], \"add_generation_prompt\": "
		 "false, \"continue_final_message\": true}", &r, &b);
	n = strlen(b.prompts[0].text);
	assert_true(n > 9);
	assert_string_equal(b.prompts[0].text + n - 9, "One, two,");
	serve_built_free(&b);
	serve_request_free(&r);
}

static void test_lengths(void **state)
{
	struct rbln_error err;
	int64_t keep = mt.max_model_len;

	(void)state;
	mt.max_model_len = 4;
	assert_contains_all(build_err(SERVE_API_GENERATE, "{\"text_input\": \"def main(): return "
				      "a + b\"}", -E2BIG, &err),
			    "the prompt is", "tokens, longer than max_model_len 4 of model "
			    "'tiny-llama3'", NULL);
	mt.max_model_len = 32;
	assert_contains_all(build_err(SERVE_API_COMPLETIONS, "{\"prompt\": \"import os\", "
				      "\"max_tokens\": 40}", -E2BIG, &err),
			    "maximum context length is 32 tokens", "requested 43 tokens (3 in the "
			    "prompt, 40 in the completion)", NULL);
	mt.max_model_len = keep;
	assert_contains_all(build_err(SERVE_API_COMPLETIONS, "{\"prompt\": [5000]}", -EINVAL, &err),
			    "field 'prompt': token id 5000 is outside the vocabulary (0..4095)",
			    NULL);
	assert_contains_all(build_err(SERVE_API_COMPLETIONS, "{\"prompt\": \"\", "
				      "\"add_special_tokens\": false}", -EINVAL, &err),
			    "the prompt is empty (0 tokens)", NULL);
}

static void test_bad_words_and_end_id(void **state)
{
	struct serve_request r;
	struct serve_built b;
	struct rbln_ids plain = { 0 }, spaced = { 0 };
	struct rbln_error err = { 0 };
	size_t i;
	bool have_plain = false, have_spaced = false;

	(void)state;
	build_ok(SERVE_API_GENERATE, "{\"text_input\": \"x\", \"parameters\": {\"bad_words\": "
		 "[\"import\"], \"end_id\": 4093, \"stop_token_ids\": [4086]}}", &r, &b);
	assert_int_equal(rbln_tokenizer_encode(tok, "import", 6, 0, &plain, &err), 0);
	assert_int_equal(rbln_tokenizer_encode(tok, " import", 7, 0, &spaced, &err), 0);
	for (i = 0; i < b.n_bad_words; i++) {
		if (b.bad_words[i].len == plain.len &&
		    !memcmp(b.bad_words[i].ids, plain.ids, plain.len * 4))
			have_plain = true;
		if (b.bad_words[i].len == spaced.len &&
		    !memcmp(b.bad_words[i].ids, spaced.ids, spaced.len * 4))
			have_spaced = true;
	}
	assert_true(have_plain);
	assert_true(have_spaced == (plain.len == spaced.len && plain.ids[0] != spaced.ids[0]));
	assert_int_equal(b.sp.n_stop_token_ids, 2);
	assert_int_equal(b.sp.stop_token_ids[0], 4086);
	assert_int_equal(b.sp.stop_token_ids[1], 4093);
	assert_true(b.sp.ignore_eos);
	rbln_ids_free(&plain);
	rbln_ids_free(&spaced);
	serve_built_free(&b);
	serve_request_free(&r);
}

static void test_validation_names_client_field(void **state)
{
	struct rbln_error err;

	(void)state;
	assert_contains_all(build_err(SERVE_API_GENERATE, "{\"text_input\": \"x\", \"parameters\": "
				      "{\"runtime_top_p\": 3}}", -EINVAL, &err),
			    "field 'runtime_top_p' must be in (0, 1], got 3", NULL);
	assert_contains_all(build_err(SERVE_API_CHAT, "{\"messages\": [{\"role\": \"user\", "
				      "\"content\": \"x\"}], \"presence_penalty\": 3}", -EINVAL, &err),
			    "field 'presence_penalty' must be in [-2, 2], got 3", NULL);
	assert_contains_all(build_err(SERVE_API_GENERATE, "{\"text_input\": \"x\", \"parameters\": "
				      "{\"end_id\": 99999}}", -EINVAL, &err),
			    "field 'end_id' 99999 is outside the vocabulary", NULL);
	assert_contains_all(build_err(SERVE_API_GENERATE, "{\"text_input\": \"x\", "
				      "\"sampling_parameters\": \"{\\\"bad_words\\\": [\\\" \\\"]}\"}",
				      -EINVAL, &err),
			    "field 'bad_words' entry 0 is empty", NULL);
	{
		const struct rbln_chat_template *keep = mt.chat;

		mt.chat = NULL;
		assert_contains_all(build_err(SERVE_API_CHAT, "{\"messages\": [{\"role\": \"user\", "
					      "\"content\": \"x\"}]}", -EINVAL, &err),
				    "model 'tiny-llama3' has no chat template", NULL);
		mt.chat = keep;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generate_prompt_and_defaults),
		cmocka_unit_test(test_completions_prompts),
		cmocka_unit_test(test_chat_matches_reference),
		cmocka_unit_test(test_chat_continue_final_message),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_bad_words_and_end_id),
		cmocka_unit_test(test_validation_names_client_field),
	};
	int rc = cmocka_run_group_tests_name("serve-build", tests, setup, teardown);

	serve_model_config_free(default_cfg());
	return rc;
}
