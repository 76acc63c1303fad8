// SPDX-License-Identifier: MIT
/*
 * Request bodies of every generating endpoint, starting with the exact
 * bodies of the tutorials, and the errors bad ones get: each names the
 * field at fault.
 */
#include "serve_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/api/request.h"
#include "serve/repository/model_config.h"

static struct serve_model_config cfg_rbln, cfg_trt, cfg_llama2, cfg_llama2_dyn, cfg_default;

static void load(const char *rel, const char *dir, struct serve_model_config *c)
{
	struct rbln_error err = { 0 };

	if (serve_model_config_load(fixture(rel), dir, c, &err))
		fail_msg("%s", err.msg);
}

static int setup(void **state)
{
	struct rbln_error err = { 0 };

	(void)state;
	load("repo-rbln/vllm_model/config.pbtxt", "vllm_model", &cfg_rbln);
	load("repo-trtllm/ensemble/config.pbtxt", "ensemble", &cfg_trt);
	load("repo-llama2/llamav2/config.pbtxt", "llamav2", &cfg_llama2);
	load("repo-llama2-dynamic/llamav2/config.pbtxt", "llamav2", &cfg_llama2_dyn);
	if (serve_model_config_default("tiny-llama3", &cfg_default, &err))
		fail_msg("%s", err.msg);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	serve_model_config_free(&cfg_rbln);
	serve_model_config_free(&cfg_trt);
	serve_model_config_free(&cfg_llama2);
	serve_model_config_free(&cfg_llama2_dyn);
	serve_model_config_free(&cfg_default);
	return 0;
}

static void gen_ok(const struct serve_model_config *c, const char *body, bool stream_ep,
		   struct serve_request *r)
{
	struct rbln_error err = { 0 };

	if (serve_parse_generate(c, body, strlen(body), stream_ep, r, &err))
		fail_msg("%s\nbody: %s", err.msg, body);
}

static const char *gen_err(const struct serve_model_config *c, const char *body, bool stream_ep,
			   struct rbln_error *err)
{
	struct serve_request r;

	memset(err, 0, sizeof(*err));
	if (!serve_parse_generate(c, body, strlen(body), stream_ep, &r, err))
		fail_msg("accepted: %s", body);
	assert_int_equal(err->code, -EINVAL);
	return err->msg;
}

/* The TensorRT-LLM tutorial's curl request, byte for byte. */
static const char trt_tutorial_body[] =
	"{\n"
	"\"text_input\": \"How do I count to nine in French?\",\n"
	"\"parameters\": {\n"
	"\"max_tokens\": 100,\n"
	"\"bad_words\":[\"\"],\n"
	"\"stop_words\":[\"\"]\n"
	"}\n"
	"}";

static void test_generate_trtllm_tutorial(void **state)
{
	struct serve_request r;
	const struct serve_model_config *cfgs[] = { &cfg_trt, &cfg_default };
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		gen_ok(cfgs[i], trt_tutorial_body, false, &r);
		assert_int_equal(r.api, SERVE_API_GENERATE);
		assert_int_equal(r.n_prompts, 1);
		assert_string_equal(r.prompts[0].text, "How do I count to nine in French?");
		assert_int_equal(r.opts.sp.max_tokens, 100);
		assert_true(r.opts.max_tokens_set);
		/* "" means no stop word / bad word */
		assert_int_equal(r.opts.n_stop, 0);
		assert_int_equal(r.opts.n_bad_words, 0);
		assert_false(r.stream);
		assert_false(r.sse);
		/* the TensorRT-LLM config says exclude_input_in_output: True */
		assert_int_equal(r.prepend_input, cfgs[i] == &cfg_default);
		serve_request_free(&r);
	}
}

/* The RBLN tutorial's request (its gRPC client's inputs) on generate_stream. */
static const char rbln_tutorial_body[] =
	"{\"text_input\": \"[System]\\nYou are a helpful assistant.\\n[User]\\nWhat is the first "
	"letter of English alphabets?\\n[Assistant]\\n\", \"stream\": true, "
	"\"sampling_parameters\": \"{\\\"temperature\\\": 0.0, \\\"stop\\\": [\\\"[User]\\\", "
	"\\\"[System]\\\", \\\"[Assistant]\\\"]}\"}";

static void test_generate_rbln_tutorial(void **state)
{
	struct serve_request r;
	struct rbln_error err;

	(void)state;
	gen_ok(&cfg_rbln, rbln_tutorial_body, true, &r);
	assert_true(r.sse);
	assert_true(r.stream);
	assert_false(r.prepend_input);
	assert_true(r.opts.sp.temperature == 0.0);
	assert_int_equal(r.opts.n_stop, 3);
	assert_string_equal(r.opts.sp.stop[0], "[User]");
	assert_string_equal(r.opts.sp.stop[2], "[Assistant]");
	assert_false(r.opts.max_tokens_set);
	assert_contains_all(r.prompts[0].text, "[User]\nWhat is the first letter", NULL);
	serve_request_free(&r);

	/* streaming on the one-response endpoint: Triton's message */
	assert_contains_all(gen_err(&cfg_rbln, rbln_tutorial_body, false, &err),
			    "generate expects model to produce exactly 1 response", NULL);
	/* the tutorial's config declares stream without optional: it is required */
	assert_contains_all(gen_err(&cfg_rbln, "{\"text_input\": \"hi\"}", false, &err),
			    "missing required input 'stream' for model 'vllm_model'", NULL);
}

/* The vLLM backend's sample client sends numbers as strings. */
static void test_generate_string_numbers(void **state)
{
	struct serve_request r;

	(void)state;
	gen_ok(&cfg_default, "{\"text_input\": \"x\", \"stream\": false, \"sampling_parameters\": "
	       "\"{\\\"temperature\\\": \\\"0.1\\\", \\\"top_p\\\": \\\"0.95\\\", "
	       "\\\"max_tokens\\\": \\\"64\\\", \\\"ignore_eos\\\": \\\"true\\\"}\"}", false, &r);
	assert_true(r.opts.sp.temperature == 0.1);
	assert_true(r.opts.sp.top_p == 0.95);
	assert_int_equal(r.opts.sp.max_tokens, 64);
	assert_true(r.opts.sp.ignore_eos);
	serve_request_free(&r);
}

/* The generate extension's documented example, and the Llama 2 prompt input. */
static void test_generate_misc(void **state)
{
	struct serve_request r;

	(void)state;
	gen_ok(&cfg_default, "{\"text_input\": \"client input\", \"parameters\": {\"stream\": false, "
	       "\"temperature\": 0}}", false, &r);
	assert_true(r.opts.sp.temperature == 0);
	assert_true(r.prepend_input);
	serve_request_free(&r);

	gen_ok(&cfg_llama2, "{\"prompt\": [\"Olá\"]}", false, &r);
	assert_string_equal(r.prompts[0].text, "Olá");
	serve_request_free(&r);

	gen_ok(&cfg_default, "{\"text_input\": \"x\", \"exclude_input_in_output\": true, "
	       "\"return_finish_reason\": true, \"return_num_input_tokens\": [true], "
	       "\"return_num_output_tokens\": true, \"id\": \"req-7\", \"parameters\": "
	       "{\"timeout\": 5000000, \"random_seed\": 42, \"end_id\": 2, \"top_k\": 0, "
	       "\"min_length\": 3, \"beam_width\": 1, \"stop_words\": [\"END\", \"\"]}}", false, &r);
	assert_false(r.prepend_input);
	assert_true(r.ret_finish_reason && r.ret_num_input_tokens && r.ret_num_output_tokens);
	assert_false(r.ret_cumulative_logprob);
	assert_string_equal(r.id, "req-7");
	assert_int_equal(r.timeout_us, 5000000);
	assert_true(r.opts.sp.has_seed);
	assert_int_equal(r.opts.sp.seed, 42);
	assert_string_equal(r.opts.names[RBLN_SP_SEED], "random_seed");
	assert_int_equal(r.opts.end_id, 2);
	assert_int_equal(r.opts.sp.top_k, 0);
	assert_int_equal(r.opts.sp.min_tokens, 3);
	assert_int_equal(r.opts.n_stop, 1);
	assert_string_equal(r.opts.sp.stop[0], "END");
	serve_request_free(&r);

	/* streaming: the prompt is not prepended */
	gen_ok(&cfg_default, "{\"text_input\": \"x\", \"stream\": true}", true, &r);
	assert_false(r.prepend_input);
	serve_request_free(&r);
	/* generate_stream without stream: one event with the whole text, prompt first */
	gen_ok(&cfg_default, "{\"text_input\": \"x\"}", true, &r);
	assert_true(r.sse);
	assert_false(r.stream);
	assert_true(r.prepend_input);
	serve_request_free(&r);
}

static void test_generate_errors(void **state)
{
	struct rbln_error err;

	(void)state;
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"stream\": true, "
				    "\"exclude_input_in_output\": false}", true, &err),
			    "When streaming, `exclude_input_in_output` = False is not allowed.",
			    NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"parameters\": "
				    "{\"temperature\": \"hot\"}}", false, &err),
			    "parameters: field 'temperature' must be a number", "hot", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"parameters\": "
				    "{\"temprature\": 0}}", false, &err),
			    "unknown field 'temprature' in parameters", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"sampling_parameters\": "
				    "\"{\\\"temperature\\\": 0}\", \"parameters\": {\"temperature\": "
				    "1}}", false, &err),
			    "field 'temperature' in sampling_parameters", "field 'temperature' in "
			    "parameters", "give it once", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"parameters\": "
				    "{\"seed\": 1, \"random_seed\": 2}}", false, &err),
			    "'seed'", "'random_seed'", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"parameters\": "
				    "{\"text_input\": \"y\"}}", false, &err),
			    "field 'text_input' given twice (in the top level and in parameters)",
			    NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"prompt\": \"x\"}", false, &err),
			    "unknown field 'prompt': the prompt input of model 'tiny-llama3' is "
			    "'text_input'", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\",}", false, &err),
			    "request body: malformed JSON", NULL);
	assert_contains_all(gen_err(&cfg_default, "[1]", false, &err),
			    "must be a JSON object, got array", NULL);
	assert_contains_all(gen_err(&cfg_default, "", false, &err),
			    "missing required input 'text_input'", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": [\"a\", \"b\"]}", false, &err),
			    "field 'text_input' must hold one prompt, got 2", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": 5}", false, &err),
			    "field 'text_input' must be a string", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"stream\": \"yes\"}",
				    false, &err), "field 'stream' must be true or false", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"sampling_parameters\": "
				    "\"{temperature: 0}\"}", false, &err),
			    "sampling_parameters: malformed JSON", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"sampling_parameters\": "
				    "\"{\\\"n\\\": 2}\"}", false, &err),
			    "sampling_parameters: field 'n' must be 1", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"parameters\": "
				    "{\"beam_width\": 4}}", false, &err),
			    "field 'beam_width' must be 1: beam search is not supported", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"parameters\": "
				    "{\"max_tokens\": 0}}", false, &err),
			    "field 'max_tokens' must be at least 1, got 0", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"parameters\": "
				    "{\"guided_json\": {}}}", false, &err),
			    "field 'guided_json' is not supported", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"parameters\": "
				    "{\"stop\": [\"a\", 3]}}", false, &err),
			    "field 'stop' entry 1 must be a string", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"parameters\": "
				    "{\"stop_token_ids\": [1, -5]}}", false, &err),
			    "field 'stop_token_ids'", NULL);
	assert_contains_all(gen_err(&cfg_default, "{\"text_input\": \"x\", \"parameters\": 7}",
				    false, &err), "field 'parameters' must be an object", NULL);
}

/* ---- infer ---- */

static void infer_ok(const struct serve_model_config *c, const char *body, size_t len,
		     size_t json_len, struct serve_request *r)
{
	struct rbln_error err = { 0 };

	if (serve_parse_infer(c, body, len, json_len, r, &err))
		fail_msg("%s", err.msg);
}

static const char *infer_err(const struct serve_model_config *c, const char *body,
			     struct rbln_error *err)
{
	struct serve_request r;

	memset(err, 0, sizeof(*err));
	if (!serve_parse_infer(c, body, strlen(body), strlen(body), &r, err))
		fail_msg("accepted: %s", body);
	return err->msg;
}

/* The Llama 2 tutorial's curl request (with the straight quotes of the original). */
static void test_infer_llama2_curl(void **state)
{
	const char *body = "{\"inputs\": [{\"name\": \"prompt\", \"shape\": [1], \"datatype\": "
			   "\"BYTES\", \"data\": [\"Olá\"]}]}";
	struct serve_request r;
	struct rbln_error err;

	(void)state;
	infer_ok(&cfg_llama2, body, strlen(body), strlen(body), &r);
	assert_int_equal(r.api, SERVE_API_INFER);
	assert_int_equal(r.n_prompts, 1);
	assert_string_equal(r.prompts[0].text, "Olá");
	assert_int_equal(r.prompt_rank, 1);
	assert_int_equal(r.prompt_shape[0], 1);
	assert_int_equal(r.n_outputs, 0);
	assert_true(r.prepend_input);
	serve_request_free(&r);
	/* as the translated page prints it: curly quotes are not JSON */
	assert_contains_all(infer_err(&cfg_llama2, "{\xe2\x80\x9cinputs\xe2\x80\x9d: []}", &err),
			    "request body: malformed JSON at line 1 column 2: unexpected character "
			    "U+201C", NULL);
	/* columns count characters; a byte that is not UTF-8 is named as such */
	assert_contains_all(infer_err(&cfg_llama2, "{\"\xc3\xa9\": x}", &err),
			    "malformed JSON at line 1 column 7: unexpected character 'x'", NULL);
	assert_contains_all(infer_err(&cfg_llama2, "{\"id\": \"\xff\"}", &err),
			    "malformed JSON at line 1 column 9: invalid UTF-8 (byte 0xff)", NULL);
}

/* tritonclient.http's default: binary tensor data, three prompts in a [3, 1] tensor. */
static void test_infer_llama2_binary_batch(void **state)
{
	const char *prompts[] = { "Onde fica o Uruguai?", "Quem é George Washington?",
				  "Quem é Lionel Messi?" };
	char bin[256], body[1024];
	size_t blen = 0, i, jlen, total;
	struct serve_request r;

	(void)state;
	for (i = 0; i < 3; i++) {
		uint32_t n = (uint32_t)strlen(prompts[i]);

		memcpy(bin + blen, &n, 4);	/* little-endian host */
		memcpy(bin + blen + 4, prompts[i], n);
		blen += 4 + n;
	}
	jlen = (size_t)snprintf(body, sizeof(body),
				"{\"inputs\":[{\"name\":\"prompt\",\"shape\":[3,1],\"datatype\":"
				"\"BYTES\",\"parameters\":{\"binary_data_size\":%zu}}],\"outputs\":"
				"[{\"name\":\"generated_text\",\"parameters\":{\"binary_data\":true}}]}",
				blen);
	memcpy(body + jlen, bin, blen);
	total = jlen + blen;
	infer_ok(&cfg_llama2_dyn, body, total, jlen, &r);
	assert_int_equal(r.n_prompts, 3);
	assert_string_equal(r.prompts[1].text, prompts[1]);
	assert_int_equal(r.prompt_rank, 2);
	assert_int_equal(r.prompt_shape[0], 3);
	assert_int_equal(r.n_outputs, 1);
	assert_string_equal(r.outputs[0].tensor->name, "generated_text");
	assert_true(r.outputs[0].binary);
	serve_request_free(&r);

	/* the same batch against the model without a batch dimension */
	{
		struct rbln_error err = { 0 };

		assert_int_equal(serve_parse_infer(&cfg_llama2, body, total, jlen, &r, &err), -EINVAL);
		assert_contains_all(err.msg, "unexpected shape for input 'prompt' for model "
				    "'llamav2'. Expected [1], got [3,1]", NULL);
		/* a size that runs past the data */
		assert_int_equal(serve_parse_infer(&cfg_llama2_dyn, body, total - 1, jlen, &r, &err),
				 -EINVAL);
		assert_contains_all(err.msg, "binary_data_size", "runs past", NULL);
		assert_int_equal(serve_parse_infer(&cfg_llama2_dyn, body, total, total + 1, &r, &err),
				 -EINVAL);
		assert_contains_all(err.msg, "Inference-Header-Content-Length", NULL);
	}
}

static void test_infer_params_and_errors(void **state)
{
	const char *body =
		"{\"id\": \"r1\", \"parameters\": {\"binary_data_output\": false, \"temperature\": 0},"
		" \"inputs\": [{\"name\": \"text_input\", \"shape\": [1], \"datatype\": \"BYTES\", "
		"\"data\": [\"x\"]}, {\"name\": \"max_tokens\", \"shape\": [1], \"datatype\": "
		"\"INT32\", \"data\": [100]}, {\"name\": \"stop_words\", \"shape\": [2], "
		"\"datatype\": \"BYTES\", \"data\": [\"a\", \"b\"]}, {\"name\": \"top_p\", "
		"\"shape\": [1], \"datatype\": \"FP32\", \"data\": [0.5]}], \"outputs\": "
		"[{\"name\": \"text_output\"}]}";
	struct serve_request r;
	struct rbln_error err;

	(void)state;
	infer_ok(&cfg_trt, body, strlen(body), strlen(body), &r);
	assert_string_equal(r.id, "r1");
	assert_int_equal(r.opts.sp.max_tokens, 100);
	assert_int_equal(r.opts.n_stop, 2);
	assert_true(r.opts.sp.top_p == 0.5);
	assert_true(r.opts.sp.temperature == 0);
	assert_false(r.outputs[0].binary);
	serve_request_free(&r);

	assert_contains_all(infer_err(&cfg_llama2, "{\"inputs\": [{\"name\": \"prompt\", \"shape\": "
				      "[1], \"datatype\": \"INT32\", \"data\": [1]}]}", &err),
			    "inference input 'prompt' data-type is 'INT32', but model 'llamav2' "
			    "expects 'BYTES'", NULL);
	assert_contains_all(infer_err(&cfg_llama2, "{\"inputs\": [{\"name\": \"text\", \"shape\": "
				      "[1], \"datatype\": \"BYTES\", \"data\": [\"a\"]}]}", &err),
			    "unexpected inference input 'text' for model 'llamav2'", NULL);
	assert_contains_all(infer_err(&cfg_llama2, "{\"inputs\": [{\"name\": \"prompt\", \"shape\": "
				      "[1], \"datatype\": \"BYTES\", \"data\": [\"a\", \"b\"]}]}", &err),
			    "input 'prompt': 2 data elements for shape of 1 elements", NULL);
	assert_contains_all(infer_err(&cfg_llama2, "{\"inputs\": [{\"name\": \"prompt\", \"shape\": "
				      "[1], \"datatype\": \"BYTES\", \"data\": [7]}]}", &err),
			    "input 'prompt': element 0 is not of type BYTES", NULL);
	assert_contains_all(infer_err(&cfg_llama2, "{\"inputs\": []}", &err),
			    "missing required input 'prompt'", NULL);
	assert_contains_all(infer_err(&cfg_llama2, "{\"inputs\": [{\"name\": \"prompt\", \"shape\": "
				      "[1], \"datatype\": \"BYTES\", \"data\": [\"a\"]}], \"outputs\": "
				      "[{\"name\": \"logits\"}]}", &err),
			    "unexpected inference output 'logits' for model 'llamav2'", NULL);
	assert_contains_all(infer_err(&cfg_llama2_dyn, "{\"inputs\": [{\"name\": \"prompt\", "
				      "\"shape\": [9, 1], \"datatype\": \"BYTES\", \"data\": "
				      "[\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\"]}]}", &err),
			    "batch-size must be <= 8", NULL);
	assert_contains_all(infer_err(&cfg_default, "{\"inputs\": [{\"name\": \"text_input\", "
				      "\"shape\": [1], \"datatype\": \"BYTES\", \"data\": [\"a\"]}, "
				      "{\"name\": \"stream\", \"shape\": [1], \"datatype\": \"BOOL\", "
				      "\"data\": [true]}]}", &err),
			    "infer returns one response: use generate_stream", NULL);
	assert_contains_all(infer_err(&cfg_default, "{\"inputs\": [{\"name\": \"text_input\", "
				      "\"shape\": [1], \"datatype\": \"BYTES\", \"data\": [\"a\"]}], "
				      "\"parameters\": {\"triton_x\": 1}}", &err),
			    "reserved for Triton", NULL);
	assert_contains_all(infer_err(&cfg_default, "{\"inputs\": [{\"name\": \"text_input\", "
				      "\"shape\": [1], \"datatype\": \"BYTES\"}]}", &err),
			    "input 'text_input' has no 'data'", NULL);
	assert_contains_all(infer_err(&cfg_default, "{\"input\": []}", &err),
			    "unknown field 'input'", NULL);
}

/* ---- OpenAI ---- */

static void oai_ok(bool chat, const char *body, struct serve_request *r)
{
	struct rbln_error err = { 0 };
	int rc = chat ? serve_parse_chat(body, strlen(body), r, &err)
		      : serve_parse_completions(body, strlen(body), r, &err);

	if (rc)
		fail_msg("%s\nbody: %s", err.msg, body);
}

static const char *oai_err(bool chat, const char *body, struct rbln_error *err)
{
	struct serve_request r;
	int rc;

	memset(err, 0, sizeof(*err));
	rc = chat ? serve_parse_chat(body, strlen(body), &r, err)
		  : serve_parse_completions(body, strlen(body), &r, err);
	if (!rc)
		fail_msg("accepted: %s", body);
	return err->msg;
}

static void test_completions(void **state)
{
	struct serve_request r;
	struct rbln_error err;

	(void)state;
	oai_ok(false, "{\"model\": \"tiny-llama3\", \"prompt\": \"Say this is a test\", "
	       "\"max_tokens\": 7, \"temperature\": 0}", &r);
	assert_int_equal(r.api, SERVE_API_COMPLETIONS);
	assert_string_equal(r.model, "tiny-llama3");
	assert_string_equal(r.prompts[0].text, "Say this is a test");
	assert_int_equal(r.opts.sp.max_tokens, 7);
	assert_true(r.add_special_tokens);
	assert_false(r.sse);
	serve_request_free(&r);

	oai_ok(false, "{\"prompt\": [\"a\", [1, 2, 3]], \"n\": 2, \"stream\": true, "
	       "\"stream_options\": {\"include_usage\": true}, \"logprobs\": 2, \"echo\": true, "
	       "\"stop\": \"\\n\", \"top_k\": 40, \"min_p\": 0.05, \"ignore_eos\": true, "
	       "\"seed\": 3, \"user\": \"u\", \"logit_bias\": {}}", &r);
	assert_null(r.model);
	assert_int_equal(r.n_prompts, 2);
	assert_int_equal(r.prompts[1].n_ids, 3);
	assert_null(r.prompts[1].text);
	assert_int_equal(r.n, 2);
	assert_true(r.stream && r.sse && r.include_usage && r.echo);
	assert_int_equal(r.opts.sp.logprobs, 2);
	assert_int_equal(r.opts.n_stop, 1);
	assert_int_equal(r.opts.sp.top_k, 40);
	serve_request_free(&r);

	oai_ok(false, "{\"prompt\": [1, 2]}", &r);
	assert_int_equal(r.n_prompts, 1);
	assert_int_equal(r.prompts[0].ids[1], 2);
	serve_request_free(&r);

	/* OpenAI takes temperatures up to 2; KServe requests have no such bound */
	assert_contains_all(oai_err(false, "{\"prompt\": \"a\", \"temperature\": 2.5}", &err),
			    "field 'temperature' must be at most 2, got 2.5", NULL);
	oai_ok(false, "{\"prompt\": \"a\", \"temperature\": 2}", &r);
	serve_request_free(&r);
	assert_contains_all(oai_err(false, "{\"model\": \"m\"}", &err), "field 'prompt' is required",
			    NULL);
	assert_contains_all(oai_err(false, "{\"prompt\": \"x\", \"foo\": 1}", &err),
			    "unknown field 'foo'", NULL);
	assert_contains_all(oai_err(false, "{\"prompt\": \"x\", \"suffix\": \"y\"}", &err),
			    "field 'suffix' is not supported", NULL);
	assert_contains_all(oai_err(false, "{\"prompt\": \"x\", \"stream_options\": "
				    "{\"include_usage\": true}}", &err),
			    "field 'stream_options' is only allowed with stream: true", NULL);
	assert_contains_all(oai_err(false, "{\"prompt\": \"x\", \"temperature\": \"0.5\"}", &err),
			    "field 'temperature' must be a number, got string", NULL);
	assert_contains_all(oai_err(false, "{\"prompt\": \"x\", \"logprobs\": 50}", &err),
			    "field 'logprobs' must be between 0 and 20", NULL);
	assert_contains_all(oai_err(false, "{\"prompt\": [\"x\", 5]}", &err),
			    "field 'prompt' entry 1", NULL);
	assert_contains_all(oai_err(false, "{\"prompt\": \"x\", \"n\": 0}", &err),
			    "field 'n' must be between 1 and 128", NULL);
	assert_contains_all(oai_err(false, "{\"prompt\": \"x\", \"logit_bias\": {\"5\": 10}}",
				    &err), "field 'logit_bias' is not supported", NULL);
	assert_contains_all(oai_err(false, "{\"prompt\": \"x\", \"random_seed\": 1}", &err),
			    "unknown field 'random_seed'", NULL);
}

static void test_chat(void **state)
{
	struct serve_request r;
	struct rbln_error err;
	json_object *m;

	(void)state;
	/* a conversation of the dynamic-batch-size tutorial */
	oai_ok(true, "{\"model\": \"tiny-llama3\", \"messages\": [{\"role\": \"user\", \"content\": "
	       "\"What is the first letter of English alphabets?\"}], \"temperature\": 0.0, "
	       "\"stop_token_ids\": [4093], \"skip_special_tokens\": true}", &r);
	assert_int_equal(r.api, SERVE_API_CHAT);
	assert_true(r.add_generation_prompt);
	assert_false(r.add_special_tokens);
	assert_int_equal(r.opts.n_stop_token_ids, 1);
	m = parse_json(r.messages_json, strlen(r.messages_json));
	assert_string_equal(jpath_str(m, "0.content"),
			    "What is the first letter of English alphabets?");
	json_object_put(m);
	assert_false(r.opts.max_tokens_set);
	serve_request_free(&r);

	oai_ok(true, "{\"messages\": [{\"role\": \"system\", \"content\": [{\"type\": \"text\", "
	       "\"text\": \"a\"}, {\"type\": \"text\", \"text\": \"b\"}]}, {\"role\": \"user\", "
	       "\"content\": \"hi\"}], \"max_completion_tokens\": 5, \"logprobs\": true, "
	       "\"top_logprobs\": 3, \"chat_template_kwargs\": {\"x\": 1}}", &r);
	m = parse_json(r.messages_json, strlen(r.messages_json));
	assert_string_equal(jpath_str(m, "0.content"), "a\nb");
	json_object_put(m);
	assert_int_equal(r.opts.sp.max_tokens, 5);
	assert_true(r.chat_logprobs);
	assert_int_equal(r.opts.sp.logprobs, 3);
	assert_string_equal(r.chat_kwargs_json, "{\"x\":1}");
	serve_request_free(&r);

	assert_contains_all(oai_err(true, "{\"messages\": []}", &err),
			    "field 'messages' must be a non-empty list", NULL);
	assert_contains_all(oai_err(true, "{\"messages\": [{\"content\": \"x\"}]}", &err),
			    "field 'messages[0].role' must be a string", NULL);
	assert_contains_all(oai_err(true, "{\"messages\": [{\"role\": \"user\", \"content\": "
				    "[{\"type\": \"image_url\", \"image_url\": {}}]}]}", &err),
			    "field 'messages[0].content[0].type': 'image_url' is not supported",
			    NULL);
	assert_contains_all(oai_err(true, "{\"messages\": [{\"role\": \"user\", \"content\": "
				    "\"x\"}], \"top_logprobs\": 2}", &err),
			    "field 'top_logprobs' needs logprobs: true", NULL);
	assert_contains_all(oai_err(true, "{\"messages\": [{\"role\": \"user\", \"content\": "
				    "\"x\"}], \"max_tokens\": 5, \"max_completion_tokens\": 6}", &err),
			    "'max_tokens'", "'max_completion_tokens'", NULL);
	assert_contains_all(oai_err(true, "{\"messages\": [{\"role\": \"user\", \"content\": "
				    "\"x\"}], \"tools\": []}", &err),
			    "field 'tools' is not supported", NULL);
	assert_contains_all(oai_err(true, "{\"messages\": [{\"role\": \"user\", \"content\": "
				    "\"x\"}], \"continue_final_message\": true}", &err),
			    "cannot both be true", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generate_trtllm_tutorial),
		cmocka_unit_test(test_generate_rbln_tutorial),
		cmocka_unit_test(test_generate_string_numbers),
		cmocka_unit_test(test_generate_misc),
		cmocka_unit_test(test_generate_errors),
		cmocka_unit_test(test_infer_llama2_curl),
		cmocka_unit_test(test_infer_llama2_binary_batch),
		cmocka_unit_test(test_infer_params_and_errors),
		cmocka_unit_test(test_completions),
		cmocka_unit_test(test_chat),
	};

	return cmocka_run_group_tests_name("serve-requests", tests, setup, teardown);
}
