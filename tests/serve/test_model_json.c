// SPDX-License-Identifier: MIT
/* model.json: the tutorial's file, the vLLM engine-argument spellings, errors naming fields. */
#include "serve_test.h"

#include <stdlib.h>
#include <string.h>

#include "serve/repository/model_json.h"

static void parse_ok(const char *text, struct serve_model_json *mj)
{
	struct rbln_error err = { 0 };

	if (serve_model_json_parse(text, strlen(text), "model.json", mj, &err))
		fail_msg("%s", err.msg);
}

static const char *parse_err(const char *text, struct rbln_error *err)
{
	struct serve_model_json mj;

	memset(err, 0, sizeof(*err));
	assert_true(serve_model_json_parse(text, strlen(text), "model.json", &mj, err) < 0);
	return err->msg;
}

static void test_rbln_tutorial(void **state)
{
	struct serve_model_json mj;
	struct rbln_error err = { 0 };

	(void)state;
	if (serve_model_json_load(fixture("repo-rbln/vllm_model/1/model.json"), &mj, &err))
		fail_msg("%s", err.msg);
	assert_string_equal(mj.model, "/ABSOLUTE/PATH/TO/Llama-3.1-8B-Instruct");
	assert_int_equal(mj.max_num_seqs, 1);
	assert_int_equal(mj.max_num_batched_tokens, 131072);
	assert_int_equal(mj.max_model_len, 131072);
	assert_int_equal(mj.block_size, 16384);
	assert_string_equal(mj.device, "rbln");
	assert_null(mj.tokenizer);
	assert_int_equal(mj.tensor_parallel_size, 0);
	assert_false(mj.has_seed);
	serve_model_json_free(&mj);
}

/* The Llama 2 tutorial's engine arguments and the vLLM backend's sample. */
static void test_vllm_spellings(void **state)
{
	struct serve_model_json mj;

	(void)state;
	parse_ok("{\"model\": \"meta-llama/llama-2-7b-chat-hf\", \"disable_log_requests\": \"true\"}",
		 &mj);
	assert_true(mj.disable_log_requests);
	serve_model_json_free(&mj);
	parse_ok("{\"model\":\"facebook/opt-125m\", \"gpu_memory_utilization\": 0.1, "
		 "\"enforce_eager\": true}", &mj);
	assert_string_equal(mj.model, "facebook/opt-125m");
	serve_model_json_free(&mj);
	parse_ok("{\"model\": \"m\", \"tokenizer\": \"hf\", \"tensor_parallel_size\": 4, "
		 "\"seed\": 7, \"dtype\": \"bfloat16\", \"max_logprobs\": 5, \"device\": \"auto\", "
		 "\"enable_prefix_caching\": false, \"quantization\": null, "
		 "\"disable_log_stats\": false}", &mj);
	assert_string_equal(mj.tokenizer, "hf");
	assert_int_equal(mj.tensor_parallel_size, 4);
	assert_true(mj.has_seed);
	assert_int_equal(mj.seed, 7);
	assert_int_equal(mj.max_logprobs, 5);
	serve_model_json_free(&mj);
}

static void test_errors_name_fields(void **state)
{
	struct rbln_error err;

	(void)state;
	assert_contains_all(parse_err("{\"max_num_seqs\": 1}", &err),
			    "model.json: field 'model' is required", NULL);
	assert_contains_all(parse_err("{\"model\": \"m\", \"max_model_length\": 8}", &err),
			    "model.json: unknown field 'max_model_length'",
			    "did you mean 'max_model_len'", NULL);
	assert_contains_all(parse_err("{\"model\": \"m\", \"max_num_seqs\": \"4\"}", &err),
			    "field 'max_num_seqs' must be an integer, got string", NULL);
	assert_contains_all(parse_err("{\"model\": \"m\", \"max_num_seqs\": 0}", &err),
			    "field 'max_num_seqs' must be in [1, ", NULL);
	assert_contains_all(parse_err("{\"model\": \"m\", \"device\": \"cuda\"}", &err),
			    "field 'device' must be \"rbln\"", "\"cuda\"", NULL);
	assert_contains_all(parse_err("{\"model\": \"m\", \"dtype\": \"int4\"}", &err),
			    "field 'dtype'", "int4", NULL);
	assert_contains_all(parse_err("{\"model\": \"m\", \"max_num_seqs\": 8, "
				      "\"max_num_batched_tokens\": 4}", &err),
			    "field 'max_num_batched_tokens' (4) must be at least max_num_seqs (8)",
			    NULL);
	assert_contains_all(parse_err("{\"model\": \"m\", \"enable_prefix_caching\": true}", &err),
			    "field 'enable_prefix_caching' is not supported", NULL);
	assert_contains_all(parse_err("{\"model\": \"m\", \"quantization\": \"awq\"}", &err),
			    "field 'quantization' is not supported", NULL);
	assert_contains_all(parse_err("{\"model\": \"m\", \"pipeline_parallel_size\": 2}", &err),
			    "field 'pipeline_parallel_size' must be 1", NULL);
	assert_contains_all(parse_err("{\"model\": \"m\", \"disable_log_stats\": \"yes\"}", &err),
			    "field 'disable_log_stats' must be true or false", NULL);
	assert_contains_all(parse_err("{\"model\": \"\"}", &err), "field 'model' must not be empty",
			    NULL);
	assert_contains_all(parse_err("[\"model\"]", &err), "must be a JSON object", NULL);
	assert_contains_all(parse_err("{\"model\": \"m\",}", &err), "model.json: malformed JSON",
			    NULL);
	assert_contains_all(parse_err("{\"model\": \"m\", \"enforce_eager\": {}}", &err),
			    "field 'enforce_eager' must be a plain value", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rbln_tutorial),
		cmocka_unit_test(test_vllm_spellings),
		cmocka_unit_test(test_errors_name_fields),
	};

	return cmocka_run_group_tests_name("serve-model-json", tests, NULL, NULL);
}
