// SPDX-License-Identifier: MIT
/*
 * config.pbtxt as rbln-serve reads it: the tutorials' files, the vLLM
 * backend's auto-completion, the /config JSON, and malformed files whose
 * errors must name the file, the line and the field.
 */
#include "serve_test.h"

#include <stdlib.h>
#include <string.h>

#include "serve/repository/model_config.h"

static void load_ok(const char *rel, const char *dir, struct serve_model_config *cfg)
{
	struct rbln_error err = { 0 };

	if (serve_model_config_load(fixture(rel), dir, cfg, &err))
		fail_msg("%s: %s", rel, err.msg);
}

static const char *load_err(const char *rel, const char *dir, struct rbln_error *err)
{
	struct serve_model_config cfg;

	memset(err, 0, sizeof(*err));
	assert_int_equal(serve_model_config_load(fixture(rel), dir, &cfg, err), -EINVAL);
	return err->msg;
}

static const struct serve_tensor *in(const struct serve_model_config *c, const char *name)
{
	const struct serve_tensor *t = serve_model_input(c, name);

	if (!t)
		fail_msg("no input '%s'", name);
	return t;
}

/* The RBLN tutorial's config: text_input and stream declared, the rest auto-completed. */
static void test_rbln_tutorial(void **state)
{
	struct serve_model_config c;
	json_object *j;

	(void)state;
	load_ok("repo-rbln/vllm_model/config.pbtxt", "vllm_model", &c);
	assert_string_equal(c.name, "vllm_model");
	assert_string_equal(c.backend, "vllm");
	assert_int_equal(c.max_batch_size, 0);
	assert_true(c.decoupled);
	assert_int_equal(c.n_inputs, 9);
	assert_string_equal(c.inputs[c.prompt_input].name, "text_input");
	assert_int_equal(in(&c, "text_input")->role, SERVE_IN_PROMPT);
	assert_false(in(&c, "text_input")->optional);
	assert_int_equal(in(&c, "stream")->role, SERVE_IN_STREAM);
	/* declared without optional in the tutorial: required, as Triton makes it */
	assert_false(in(&c, "stream")->optional);
	assert_int_equal(in(&c, "stream")->line, 10);
	assert_int_equal(in(&c, "sampling_parameters")->role, SERVE_IN_SAMPLING_PARAMETERS);
	assert_true(in(&c, "sampling_parameters")->optional);
	assert_int_equal(in(&c, "sampling_parameters")->line, 0);
	assert_int_equal(in(&c, "exclude_input_in_output")->role, SERVE_IN_EXCLUDE_INPUT);
	assert_string_equal(c.outputs[c.text_output].name, "text_output");
	assert_int_equal(c.outputs[c.text_output].n_dims, 1);
	assert_int_equal(c.outputs[c.text_output].dims[0], 1);
	assert_int_equal(serve_model_output(&c, "finish_reason")->role, SERVE_OUT_FINISH_REASON);
	assert_int_equal(c.version_policy, SERVE_VERSIONS_LATEST);
	assert_int_equal(c.latest_versions, 1);

	j = c.json;
	assert_string_equal(jpath_str(j, "name"), "vllm_model");
	assert_string_equal(jpath_str(j, "platform"), "");
	assert_string_equal(jpath_str(j, "input.0.data_type"), "TYPE_STRING");
	assert_int_equal(jpath_int(j, "input.0.dims.0"), 1);
	assert_false(json_object_get_boolean(jpath(j, "input.0.optional")));
	assert_string_equal(jpath_str(j, "input.0.format"), "FORMAT_NONE");
	assert_string_equal(jpath_str(j, "input.2.name"), "sampling_parameters");
	assert_int_equal(jpath_int(j, "instance_group.0.count"), 1);
	assert_string_equal(jpath_str(j, "instance_group.0.kind"), "KIND_MODEL");
	assert_int_equal(jpath_int(j, "version_policy.latest.num_versions"), 1);
	assert_true(json_object_get_boolean(jpath(j, "model_transaction_policy.decoupled")));
	assert_false(jpath_has(j, "dynamic_batching"));
	serve_model_config_free(&c);
}

/* The vLLM backend's sample: backend and instance_group only. */
static void test_vllm_sample_autocompleted(void **state)
{
	struct serve_model_config c;

	(void)state;
	load_ok("repo-vllm-sample/vllm_model/config.pbtxt", "vllm_model", &c);
	assert_string_equal(c.name, "vllm_model");
	assert_string_equal(jpath_str(c.json, "name"), "vllm_model");
	assert_int_equal(c.n_inputs, 9);
	assert_int_equal(c.n_outputs, 6);
	assert_true(in(&c, "stream")->optional);
	assert_string_equal(c.outputs[c.text_output].name, "text_output");
	assert_int_equal(c.outputs[c.text_output].dims[0], -1);
	assert_int_equal(serve_model_output(&c, "num_input_tokens")->dtype, SERVE_DT_UINT32);
	assert_true(c.decoupled);
	serve_model_config_free(&c);
}

/* The Llama 2 tutorial's Python-backend model: prompt -> generated_text, as declared. */
static void test_llama2_python(void **state)
{
	struct serve_model_config c;

	(void)state;
	load_ok("repo-llama2/llamav2/config.pbtxt", "llamav2", &c);
	assert_string_equal(c.backend, "python");
	assert_int_equal(c.n_inputs, 1);
	assert_int_equal(c.n_outputs, 1);
	assert_string_equal(c.inputs[c.prompt_input].name, "prompt");
	assert_int_equal(c.inputs[0].dtype, SERVE_DT_BYTES);
	assert_string_equal(c.outputs[c.text_output].name, "generated_text");
	assert_false(c.decoupled);
	assert_string_equal(jpath_str(c.json, "instance_group.0.kind"), "KIND_GPU");
	assert_int_equal(jpath_int(c.json, "instance_group.0.count"), 0);
	serve_model_config_free(&c);
}

static void test_llama2_dynamic_batching(void **state)
{
	struct serve_model_config c;
	json_object *pb;

	(void)state;
	load_ok("repo-llama2-dynamic/llamav2/config.pbtxt", "llamav2", &c);
	assert_int_equal(c.max_batch_size, 8);
	assert_int_equal(c.inputs[0].dims[0], -1);
	assert_true(json_object_get_boolean(jpath(c.json, "input.0.allow_ragged_batch")));
	pb = jpath(c.json, "dynamic_batching.preferred_batch_size");
	assert_int_equal(json_object_array_length(pb), 3);
	assert_int_equal(jpath_int(c.json, "dynamic_batching.preferred_batch_size.2"), 8);
	assert_int_equal(jpath_int(c.json, "dynamic_batching.max_queue_delay_microseconds"), 300);
	assert_int_equal(c.max_queue_size, 0);
	serve_model_config_free(&c);
}

/* The Llama 2 tutorial's vLLM model: PROMPT input, "decoupled: True". */
static void test_llama2_vllm_model(void **state)
{
	struct serve_model_config c;

	(void)state;
	load_ok("repo-llama2-vllm/vllm/config.pbtxt", "vllm", &c);
	assert_string_equal(c.inputs[c.prompt_input].name, "PROMPT");
	assert_true(c.decoupled);
	serve_model_config_free(&c);
}

/* TensorRT-LLM tensor names as inputs, a map-valued parameters field. */
static void test_trtllm_names(void **state)
{
	struct serve_model_config c;

	(void)state;
	load_ok("repo-trtllm/ensemble/config.pbtxt", "ensemble", &c);
	assert_int_equal(in(&c, "max_tokens")->role, SERVE_IN_PARAM);
	assert_false(in(&c, "max_tokens")->optional);
	assert_int_equal(in(&c, "stop_words")->role, SERVE_IN_PARAM);
	assert_int_equal(in(&c, "random_seed")->dtype, SERVE_DT_UINT64);
	assert_int_equal(in(&c, "temperature")->role, SERVE_IN_PARAM);
	assert_string_equal(jpath_str(c.json, "parameters.tokenizer_dir.string_value"),
			    "${tokenizer_dir}");
	assert_true(c.exclude_input_default);
	/* backend rbln is auto-completed like vllm */
	assert_non_null(serve_model_input(&c, "sampling_parameters"));
	serve_model_config_free(&c);
}

static void test_queue_policy_and_versions(void **state)
{
	const char *text = "backend: \"vllm\"\n"
			   "version_policy: { specific: { versions: [1, 3] } }\n"
			   "dynamic_batching { default_queue_policy { max_queue_size: 64 "
			   "default_timeout_microseconds: 5000000 } }\n";
	struct serve_model_config c;
	struct rbln_error err = { 0 };

	(void)state;
	if (serve_model_config_parse(text, strlen(text), "c.pbtxt", "m", &c, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(c.max_queue_size, 64);
	assert_int_equal(c.default_timeout_us, 5000000);
	assert_int_equal(c.version_policy, SERVE_VERSIONS_SPECIFIC);
	assert_int_equal(c.n_versions, 2);
	assert_int_equal(c.versions[1], 3);
	serve_model_config_free(&c);
}

static void test_default_config(void **state)
{
	struct serve_model_config c;
	struct rbln_error err = { 0 };

	(void)state;
	assert_int_equal(serve_model_config_default("tiny-llama3", &c, &err), 0);
	assert_string_equal(c.name, "tiny-llama3");
	assert_int_equal(c.n_inputs, 9);
	assert_true(c.decoupled);
	serve_model_config_free(&c);
	assert_int_equal(serve_model_config_default("bad\"name", &c, &err), -EINVAL);
	assert_contains_all(err.msg, "quote", NULL);
}

static void test_malformed(void **state)
{
	struct rbln_error err;

	(void)state;
	assert_contains_all(load_err("malformed/unknown-field.pbtxt", "m", &err),
			    "unknown-field.pbtxt:7:", "unknown field 'input[0].dim'",
			    "did you mean 'dims'", NULL);
	assert_contains_all(load_err("malformed/wrong-type.pbtxt", "m", &err),
			    "wrong-type.pbtxt:3:", "field 'max_batch_size' must be a 32-bit "
			    "integer, got a string", NULL);
	assert_contains_all(load_err("malformed/unknown-enum.pbtxt", "m", &err),
			    "unknown-enum.pbtxt:4:", "input[0].data_type", "TYPE_STR",
			    "TYPE_STRING", NULL);
	assert_contains_all(load_err("malformed/unbalanced.pbtxt", "m", &err),
			    "unbalanced.pbtxt:6:", "expected ',' or ']'", "line 3", NULL);
	assert_contains_all(load_err("malformed/unterminated.pbtxt", "m", &err),
			    "unterminated.pbtxt:1:", "unterminated string", NULL);
	assert_contains_all(load_err("malformed/duplicate.pbtxt", "m", &err),
			    "duplicate.pbtxt:3:", "field 'name' given twice (first on line 1)",
			    NULL);
	assert_contains_all(load_err("malformed/oneof.pbtxt", "m", &err),
			    "oneof.pbtxt:4:", "dynamic_batching", "sequence_batching",
			    "oneof scheduling_choice", NULL);
	assert_contains_all(load_err("malformed/name-mismatch.pbtxt", "m", &err),
			    "name-mismatch.pbtxt:1:", "'other'", "model directory 'm'", NULL);
	assert_contains_all(load_err("malformed/unknown-input.pbtxt", "m", &err),
			    "unknown-input.pbtxt:5:", "input 'image' (FP32)", NULL);
	assert_contains_all(load_err("malformed/backend.pbtxt", "m", &err),
			    "backend.pbtxt:2:", "backend 'tensorrtllm'", NULL);
	assert_contains_all(load_err("malformed/ensemble.pbtxt", "ensemble", &err),
			    "ensemble.pbtxt:6:", "ensembles", NULL);
	assert_contains_all(load_err("llama2-dynamic-translated.pbtxt", "llamav2", &err),
			    "llama2-dynamic-translated.pbtxt:1:", "curly quote", NULL);
}

static const char *parse_text_err(const char *text, struct rbln_error *err)
{
	struct serve_model_config c;

	memset(err, 0, sizeof(*err));
	assert_int_equal(serve_model_config_parse(text, strlen(text), "c.pbtxt", "m", &c, err),
			 -EINVAL);
	return err->msg;
}

static void test_semantic_errors(void **state)
{
	struct rbln_error err;

	(void)state;
	assert_contains_all(parse_text_err("backend: \"vllm\"\nmax_batch_size: 8\n", &err),
			    "c.pbtxt:2:", "max_batch_size must be 0", NULL);
	assert_contains_all(parse_text_err("backend: \"python\"\ninput [ { name: \"a\" data_type: "
					   "TYPE_STRING dims: [1] }, { name: \"b\" data_type: "
					   "TYPE_STRING dims: [1] } ]\noutput [ { name: \"o\" "
					   "data_type: TYPE_STRING dims: [1] } ]\n", &err),
			    "several TYPE_STRING inputs", "text_input", NULL);
	assert_contains_all(parse_text_err("backend: \"python\"\ninput [ { name: \"p\" data_type: "
					   "TYPE_STRING dims: [1] } ]\n", &err),
			    "no text output", NULL);
	assert_contains_all(parse_text_err("backend: \"python\"\ninput [ { name: \"p\" data_type: "
					   "TYPE_STRING } ]\noutput [ { name: \"o\" data_type: "
					   "TYPE_STRING dims: [1] } ]\n", &err),
			    "c.pbtxt:2:", "input 'p' needs dims", NULL);
	assert_contains_all(parse_text_err("backend: \"vllm\"\ninput [ { name: \"stream\" "
					   "data_type: TYPE_INT32 dims: [1] } ]\n", &err),
			    "c.pbtxt:2:", "input 'stream' must have data_type TYPE_BOOL", NULL);
	assert_contains_all(parse_text_err("backend: \"vllm\"\ninput [ { name: \"max_tokens\" "
					   "data_type: TYPE_STRING dims: [1] } ]\n", &err),
			    "input 'max_tokens' has data_type BYTES", NULL);
	assert_contains_all(parse_text_err("backend: \"vllm\"\ninput [ { name: \"x\" data_type: "
					   "TYPE_STRING dims: [0] } ]\n", &err),
			    "dims must be -1 (any) or >= 1, got 0", NULL);
	assert_contains_all(parse_text_err("backend: \"vllm\"\nsequence_batching { }\n", &err),
			    "c.pbtxt:2:", "sequence_batching", NULL);
	assert_contains_all(parse_text_err("backend: \"vllm\"\nversion_policy { latest { "
					   "num_versions: 0 } }\n", &err),
			    "num_versions must be at least 1", NULL);
	assert_contains_all(parse_text_err("backend: \"vllm\"\nparameters { key: \"a\" value { "
					   "string_value: \"x\" } }\nparameters { key: \"a\" "
					   "value { string_value: \"y\" } }\n", &err),
			    "c.pbtxt:3:", "key 'a' given twice", NULL);
	assert_contains_all(parse_text_err("backend: \"vllm\"\nmax_batch_size: [1]\n", &err),
			    "c.pbtxt:2:", "not repeated", NULL);
	assert_contains_all(parse_text_err("backend: \"vllm\"\nmax_batch_size: 4294967296\n", &err),
			    "out of range", NULL);
	assert_contains_all(parse_text_err("max_batch_size: 0\n", &err), "no backend", NULL);
	assert_contains_all(parse_text_err("backend: \"vllm\"\nparameters { key: "
					   "\"exclude_input_in_output\" value { string_value: "
					   "\"${exclude_input_in_output}\" } }\n", &err),
			    "c.pbtxt:2:", "must be \"true\" or \"false\"", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rbln_tutorial),
		cmocka_unit_test(test_vllm_sample_autocompleted),
		cmocka_unit_test(test_llama2_python),
		cmocka_unit_test(test_llama2_dynamic_batching),
		cmocka_unit_test(test_llama2_vllm_model),
		cmocka_unit_test(test_trtllm_names),
		cmocka_unit_test(test_queue_policy_and_versions),
		cmocka_unit_test(test_default_config),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_semantic_errors),
	};

	return cmocka_run_group_tests_name("serve-model-config", tests, NULL, NULL);
}
