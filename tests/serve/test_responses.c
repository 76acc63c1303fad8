// SPDX-License-Identifier: MIT
/*
 * Response shapes: KServe generate and infer (JSON and binary), OpenAI
 * completions and chat (whole and chunked), errors.
 */
#include "serve_test.h"

#include <stdlib.h>
#include <string.h>

#include "serve/api/responses.h"

static struct serve_model_config cfg_default, cfg_llama2_dyn;

static int setup(void **state)
{
	struct rbln_error err = { 0 };

	(void)state;
	if (serve_model_config_default("tiny-llama3", &cfg_default, &err) ||
	    serve_model_config_load(fixture("repo-llama2-dynamic/llamav2/config.pbtxt"), "llamav2",
				    &cfg_llama2_dyn, &err))
		fail_msg("%s", err.msg);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	serve_model_config_free(&cfg_default);
	serve_model_config_free(&cfg_llama2_dyn);
	return 0;
}

static json_object *as_json(json_object *o)
{
	struct rbln_strbuf sb = { 0 };
	json_object *back;

	assert_non_null(o);
	assert_int_equal(serve_json_append(&sb, o), 0);
	back = parse_json(sb.data, sb.len);
	rbln_strbuf_free(&sb);
	json_object_put(o);
	return back;
}

static void test_generate(void **state)
{
	struct serve_request r = { .api = SERVE_API_GENERATE };
	struct serve_resp_ctx c = { .model_name = "vllm_model", .model_version = "1", .req = &r };
	struct serve_lp_top top[2] = { { 65, -0.1f, "A", 1 }, { 66, -2.5f, "B", 1 } };
	struct serve_lp_entry lp = { 65, -0.1f, "A", 1, top, 2 };
	struct serve_piece p = { .text = "The first letter is A", .text_len = 21, .n_tokens = 6,
				 .final = true, .reason = RBLN_FINISH_STOP, .n_prompt_tokens = 30,
				 .n_output_tokens = 6, .stop_token_id = -1,
				 .cumulative_logprob = -1.5 };
	json_object *o, *lps;

	(void)state;
	o = as_json(serve_generate_json(&c, &p));
	assert_int_equal(json_object_object_length(o), 3);
	assert_string_equal(jpath_str(o, "model_name"), "vllm_model");
	assert_string_equal(jpath_str(o, "model_version"), "1");
	assert_string_equal(jpath_str(o, "text_output"), "The first letter is A");
	json_object_put(o);

	r.ret_finish_reason = r.ret_num_input_tokens = r.ret_num_output_tokens = true;
	r.ret_cumulative_logprob = r.ret_logprobs = true;
	p.lps = &lp;
	p.n_lps = 1;
	o = as_json(serve_generate_json(&c, &p));
	assert_string_equal(jpath_str(o, "finish_reason"), "stop");
	assert_int_equal(jpath_int(o, "num_input_tokens"), 30);
	assert_int_equal(jpath_int(o, "num_output_tokens"), 6);
	assert_true(json_object_get_double(jpath(o, "cumulative_logprob")) == -1.5);
	lps = parse_json(jpath_str(o, "logprobs"), strlen(jpath_str(o, "logprobs")));
	assert_int_equal(jpath_int(lps, "0.65.rank"), 1);
	assert_string_equal(jpath_str(lps, "0.66.decoded_token"), "B");
	json_object_put(lps);
	json_object_put(o);

	/* a stream response before the end: the vLLM backend's "None" */
	p.final = false;
	p.reason = RBLN_FINISH_NONE;
	o = as_json(serve_generate_json(&c, &p));
	assert_string_equal(jpath_str(o, "finish_reason"), "None");
	json_object_put(o);
	assert_string_equal(serve_finish_reason_name(RBLN_FINISH_LENGTH, true), "length");
	assert_string_equal(serve_finish_reason_name(RBLN_FINISH_ABORT, true), "abort");
}

static void test_infer_json(void **state)
{
	struct serve_request r = { .api = SERVE_API_INFER, .prompt_rank = 2,
				   .prompt_shape = { 3, 1 } };
	struct serve_resp_ctx c = { .model_name = "llamav2", .model_version = "1", .id = "42",
				    .req = &r };
	struct serve_piece p[3] = {
		{ .text = "Montevideo.", .text_len = 11, .final = true, .reason = RBLN_FINISH_STOP },
		{ .text = "A president.", .text_len = 12, .final = true, .reason = RBLN_FINISH_STOP },
		{ .text = "A footballer", .text_len = 12, .final = true,
		  .reason = RBLN_FINISH_LENGTH },
	};
	struct rbln_strbuf body = { 0 };
	size_t jlen;
	json_object *o;

	(void)state;
	assert_int_equal(serve_infer_body(&c, &cfg_llama2_dyn, p, 3, &body, &jlen), 0);
	assert_int_equal(jlen, body.len);
	o = parse_json(body.data, body.len);
	assert_string_equal(jpath_str(o, "id"), "42");
	assert_string_equal(jpath_str(o, "model_name"), "llamav2");
	assert_int_equal(json_object_array_length(jpath(o, "outputs")), 1);
	assert_string_equal(jpath_str(o, "outputs.0.name"), "generated_text");
	assert_string_equal(jpath_str(o, "outputs.0.datatype"), "BYTES");
	assert_int_equal(jpath_int(o, "outputs.0.shape.0"), 3);
	assert_int_equal(jpath_int(o, "outputs.0.shape.1"), 1);
	assert_string_equal(jpath_str(o, "outputs.0.data.2"), "A footballer");
	json_object_put(o);
	rbln_strbuf_free(&body);
}

static void test_infer_binary_and_extra_outputs(void **state)
{
	struct serve_request r = { .api = SERVE_API_INFER, .prompt_rank = 1, .prompt_shape = { 1 },
				   .ret_finish_reason = true, .ret_num_output_tokens = true,
				   .binary_output = true };
	struct serve_resp_ctx c = { .model_name = "m", .model_version = "1", .req = &r };
	struct serve_piece p = { .text = "hello", .text_len = 5, .final = true,
				 .reason = RBLN_FINISH_LENGTH, .n_tokens = 7 };
	struct rbln_strbuf body = { 0 };
	const unsigned char *bin;
	size_t jlen;
	json_object *o;

	(void)state;
	assert_int_equal(serve_infer_body(&c, &cfg_default, &p, 1, &body, &jlen), 0);
	o = parse_json(body.data, jlen);
	assert_int_equal(json_object_array_length(jpath(o, "outputs")), 3);
	assert_string_equal(jpath_str(o, "outputs.0.name"), "text_output");
	assert_int_equal(jpath_int(o, "outputs.0.parameters.binary_data_size"), 9);
	assert_false(jpath_has(o, "outputs.0.data"));
	assert_string_equal(jpath_str(o, "outputs.1.name"), "finish_reason");
	assert_int_equal(jpath_int(o, "outputs.1.parameters.binary_data_size"), 10);
	assert_string_equal(jpath_str(o, "outputs.2.datatype"), "UINT32");
	assert_int_equal(jpath_int(o, "outputs.2.parameters.binary_data_size"), 4);
	assert_int_equal(body.len, jlen + 9 + 10 + 4);
	bin = (const unsigned char *)body.data + jlen;
	assert_int_equal(bin[0], 5);
	assert_memory_equal(bin + 4, "hello", 5);
	assert_int_equal(bin[9], 6);
	assert_memory_equal(bin + 13, "length", 6);
	assert_int_equal(bin[19], 7);
	json_object_put(o);
	rbln_strbuf_free(&body);
}

static void test_openai_completion(void **state)
{
	struct serve_request r = { .api = SERVE_API_COMPLETIONS };
	struct serve_resp_ctx c = { .model_name = "tiny-llama3", .model_version = "1",
				    .id = "cmpl-abc", .created = 1700000000, .req = &r };
	struct serve_lp_top top[1] = { { 10, -0.5f, " os", 3 } };
	struct serve_lp_entry lps[2] = { { 10, -0.5f, " os", 3, top, 1 },
					 { 11, -1.0f, "\n", 1, top, 1 } };
	struct serve_piece p[2] = {
		{ .index = 0, .text = " os\n", .text_len = 4, .final = true,
		  .reason = RBLN_FINISH_STOP, .stop_str = "\n\n", .stop_token_id = -1, .lps = lps,
		  .n_lps = 2, .text_offset = 6 },
		{ .index = 1, .text = "x", .text_len = 1, .final = true, .reason = RBLN_FINISH_STOP,
		  .stop_token_id = 4093 },
	};
	struct serve_usage u = { 12, 9 };
	json_object *o;

	(void)state;
	o = as_json(serve_openai_json(&c, p, 2, &u));
	assert_string_equal(jpath_str(o, "id"), "cmpl-abc");
	assert_string_equal(jpath_str(o, "object"), "text_completion");
	assert_int_equal(jpath_int(o, "created"), 1700000000);
	assert_string_equal(jpath_str(o, "model"), "tiny-llama3");
	assert_string_equal(jpath_str(o, "choices.0.text"), " os\n");
	assert_string_equal(jpath_str(o, "choices.0.finish_reason"), "stop");
	assert_string_equal(jpath_str(o, "choices.0.stop_reason"), "\n\n");
	assert_int_equal(jpath_int(o, "choices.1.stop_reason"), 4093);
	assert_int_equal(jpath_int(o, "choices.1.index"), 1);
	assert_true(jpath_null(o, "choices.1.logprobs"));
	assert_string_equal(jpath_str(o, "choices.0.logprobs.tokens.0"), " os");
	assert_int_equal(jpath_int(o, "choices.0.logprobs.text_offset.0"), 6);
	assert_int_equal(jpath_int(o, "choices.0.logprobs.text_offset.1"), 9);
	assert_true(json_object_get_double(jpath(o, "choices.0.logprobs.top_logprobs.0. os")) == -0.5);
	assert_int_equal(jpath_int(o, "usage.prompt_tokens"), 12);
	assert_int_equal(jpath_int(o, "usage.completion_tokens"), 9);
	assert_int_equal(jpath_int(o, "usage.total_tokens"), 21);
	json_object_put(o);
}

static void test_openai_chat_and_chunks(void **state)
{
	struct serve_request r = { .api = SERVE_API_CHAT, .include_usage = true };
	struct serve_resp_ctx c = { .model_name = "tiny-llama3", .model_version = "1",
				    .id = "chatcmpl-1", .created = 5, .req = &r };
	struct serve_lp_entry lp = { 65, -0.25f, "A", 1, NULL, 0 };
	struct serve_piece p = { .text = "A", .text_len = 1, .first = true, .lps = &lp, .n_lps = 1,
				 .stop_token_id = -1 };
	struct serve_usage u = { 30, 1 };
	json_object *o;

	(void)state;
	o = as_json(serve_openai_chunk_json(&c, &p));
	assert_string_equal(jpath_str(o, "object"), "chat.completion.chunk");
	assert_string_equal(jpath_str(o, "choices.0.delta.role"), "assistant");
	assert_string_equal(jpath_str(o, "choices.0.delta.content"), "A");
	assert_true(json_object_is_type(jpath(o, "choices.0"), json_type_object));
	assert_true(jpath_null(o, "choices.0.finish_reason"));
	assert_string_equal(jpath_str(o, "choices.0.logprobs.content.0.token"), "A");
	assert_int_equal(jpath_int(o, "choices.0.logprobs.content.0.bytes.0"), 65);
	assert_true(jpath_null(o, "usage"));
	json_object_put(o);

	p.first = false;
	p.text_len = 0;
	p.text = "";
	p.lps = NULL;
	p.n_lps = 0;
	p.final = true;
	p.reason = RBLN_FINISH_LENGTH;
	o = as_json(serve_openai_chunk_json(&c, &p));
	assert_int_equal(json_object_object_length(jpath(o, "choices.0.delta")), 0);
	assert_string_equal(jpath_str(o, "choices.0.finish_reason"), "length");
	json_object_put(o);

	o = as_json(serve_openai_usage_chunk_json(&c, &u));
	assert_int_equal(json_object_array_length(jpath(o, "choices")), 0);
	assert_int_equal(jpath_int(o, "usage.total_tokens"), 31);
	json_object_put(o);

	p.text = "The first letter is 'A'.";
	p.text_len = strlen(p.text);
	p.reason = RBLN_FINISH_STOP;
	o = as_json(serve_openai_json(&c, &p, 1, &u));
	assert_string_equal(jpath_str(o, "object"), "chat.completion");
	assert_string_equal(jpath_str(o, "choices.0.message.role"), "assistant");
	assert_string_equal(jpath_str(o, "choices.0.message.content"), "The first letter is 'A'.");
	assert_string_equal(jpath_str(o, "choices.0.finish_reason"), "stop");
	json_object_put(o);
}

static void test_errors(void **state)
{
	json_object *o;

	(void)state;
	o = as_json(serve_error_json("unexpected inference input 'x'"));
	assert_int_equal(json_object_object_length(o), 1);
	assert_string_equal(jpath_str(o, "error"), "unexpected inference input 'x'");
	json_object_put(o);
	o = as_json(serve_openai_error_json("The model `x` does not exist.", 404));
	assert_string_equal(jpath_str(o, "error.message"), "The model `x` does not exist.");
	assert_string_equal(jpath_str(o, "error.type"), "NotFoundError");
	assert_int_equal(jpath_int(o, "error.code"), 404);
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generate),
		cmocka_unit_test(test_infer_json),
		cmocka_unit_test(test_infer_binary_and_extra_outputs),
		cmocka_unit_test(test_openai_completion),
		cmocka_unit_test(test_openai_chat_and_chunks),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests_name("serve-responses", tests, setup, teardown);
}
