// SPDX-License-Identifier: MIT
/*
 * config.json / generation_config.json: the two reference checkpoints
 * (values as their README describes them) and synthetic configs for the
 * layouts and the validation errors.
 */
#include <math.h>
#include <string.h>

#include "rbln_config.h"
#include "test_common.h"

static void test_tiny_llama3_config(void **state)
{
	struct rbln_llama_config c;
	struct rbln_error err = { 0 };
	const int64_t eos[] = { 4086, 4093, 4094 };
	size_t i;

	(void)state;
	assert_int_equal(rbln_llama_config_load(test_model_path("tiny-llama3"), &c, &err), 0);
	assert_int_equal(c.vocab_size, 4096);
	assert_int_equal(c.hidden_size, 256);
	assert_int_equal(c.num_hidden_layers, 6);
	assert_int_equal(c.num_attention_heads, 8);
	assert_int_equal(c.num_key_value_heads, 2);
	assert_int_equal(c.head_dim, 32);
	assert_int_equal(c.intermediate_size, 768);
	assert_int_equal(c.max_position_embeddings, 2048);
	assert_false(c.tie_word_embeddings);
	assert_int_equal(c.dtype, RBLN_TENSOR_BF16);
	assert_true(c.rope.theta == 500000.0);
	assert_int_equal(c.rope.type, RBLN_ROPE_LLAMA3);
	assert_true(c.rope.factor == 8.0);
	assert_true(c.rope.low_freq_factor == 1.0);
	assert_true(c.rope.high_freq_factor == 4.0);
	assert_int_equal(c.rope.original_max_position_embeddings, 8192);
	assert_true(c.rms_norm_eps == 1e-5);
	assert_int_equal(c.bos_token_id, 4085);
	assert_int_equal(c.n_eos_token_ids, 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(c.eos_token_ids[i], eos[i]);
}

static void test_tiny_llama2_config(void **state)
{
	struct rbln_llama_config c;
	struct rbln_error err = { 0 };

	(void)state;
	assert_int_equal(rbln_llama_config_load(test_model_path("tiny-llama2"), &c, &err), 0);
	assert_int_equal(c.vocab_size, 2048);
	assert_int_equal(c.hidden_size, 192);
	assert_int_equal(c.num_hidden_layers, 4);
	assert_int_equal(c.num_attention_heads, 6);
	assert_int_equal(c.num_key_value_heads, 6);
	assert_int_equal(c.head_dim, 32);
	assert_int_equal(c.intermediate_size, 512);
	assert_int_equal(c.max_position_embeddings, 1024);
	assert_true(c.tie_word_embeddings);
	assert_int_equal(c.dtype, RBLN_TENSOR_F16);
	assert_true(c.rope.theta == 10000.0);
	assert_int_equal(c.rope.type, RBLN_ROPE_DEFAULT);
	assert_int_equal(c.bos_token_id, 1);
	assert_int_equal(c.n_eos_token_ids, 1);
	assert_int_equal(c.eos_token_ids[0], 2);
}

static void test_generation_configs(void **state)
{
	struct rbln_generation_config g;
	struct rbln_error err = { 0 };

	(void)state;
	assert_int_equal(rbln_generation_config_load(test_model_path("tiny-llama3"), &g, &err), 0);
	assert_true(g.present);
	assert_true(g.do_sample);
	assert_true(fabs(g.temperature - 0.6) < 1e-12);
	assert_true(fabs(g.top_p - 0.9) < 1e-12);
	assert_int_equal(g.top_k, 50);	/* transformers' default, absent from the file */
	assert_int_equal(g.n_eos_token_ids, 3);
	assert_int_equal(g.eos_token_ids[2], 4094);
	assert_int_equal(rbln_generation_config_load(test_model_path("tiny-llama2"), &g, &err), 0);
	assert_int_equal(g.bos_token_id, 1);
	assert_int_equal(g.n_eos_token_ids, 1);
}

#define BASE_FIELDS                                                                      \
	"\"model_type\": \"llama\", \"vocab_size\": 1000, \"hidden_size\": 64, "          \
	"\"intermediate_size\": 128, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, " \
	"\"max_position_embeddings\": 512"

static int parse(const char *json, struct rbln_llama_config *c, struct rbln_error *err)
{
	return rbln_llama_config_parse(json, strlen(json), "config.json", c, err);
}

static void test_defaults_and_mha(void **state)
{
	struct rbln_llama_config c;
	struct rbln_error err = { 0 };

	(void)state;
	assert_int_equal(parse("{" BASE_FIELDS "}", &c, &err), 0);
	assert_int_equal(c.head_dim, 16);		/* hidden / heads */
	assert_int_equal(c.num_key_value_heads, 4);	/* MHA when absent */
	assert_int_equal(c.rope.type, RBLN_ROPE_DEFAULT);
	assert_true(c.rope.theta == 10000.0);
	assert_false(c.tie_word_embeddings);
	assert_int_equal(c.dtype, RBLN_TENSOR_UNKNOWN);
	assert_int_equal(c.bos_token_id, -1);
	assert_int_equal(c.n_eos_token_ids, 0);
}

static void test_mqa_head_dim_and_dtype(void **state)
{
	struct rbln_llama_config c;
	struct rbln_error err = { 0 };

	(void)state;
	assert_int_equal(parse("{" BASE_FIELDS ", \"num_key_value_heads\": 1, \"head_dim\": 32, "
			       "\"dtype\": \"float32\", \"eos_token_id\": 7, \"bos_token_id\": null}",
			       &c, &err), 0);
	assert_int_equal(c.num_key_value_heads, 1);
	assert_int_equal(c.head_dim, 32);
	assert_int_equal(c.dtype, RBLN_TENSOR_F32);
	assert_int_equal(c.n_eos_token_ids, 1);
	assert_int_equal(c.eos_token_ids[0], 7);
	assert_int_equal(c.bos_token_id, -1);
}

/* transformers 5 moves theta and the scaling into rope_parameters. */
static void test_rope_parameters_layout(void **state)
{
	struct rbln_llama_config c;
	struct rbln_error err = { 0 };

	(void)state;
	assert_int_equal(parse("{" BASE_FIELDS ", \"rope_parameters\": {\"rope_type\": \"llama3\", "
			       "\"rope_theta\": 500000.0, \"factor\": 32.0, \"low_freq_factor\": 1.0, "
			       "\"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 8192}}",
			       &c, &err), 0);
	assert_int_equal(c.rope.type, RBLN_ROPE_LLAMA3);
	assert_true(c.rope.theta == 500000.0);
	assert_true(c.rope.factor == 32.0);
	assert_int_equal(parse("{" BASE_FIELDS ", \"rope_scaling\": {\"type\": \"linear\", "
			       "\"factor\": 2.0}, \"rope_theta\": 1000.0}", &c, &err), 0);
	assert_int_equal(c.rope.type, RBLN_ROPE_LINEAR);
	assert_true(c.rope.factor == 2.0);
	assert_true(c.rope.theta == 1000.0);
}

static void expect_error(const char *json, const char *field, const char *detail)
{
	struct rbln_llama_config c;
	struct rbln_error err = { 0 };

	assert_true(parse(json, &c, &err) < 0);
	test_assert_contains_all(err.msg, "config.json", field, detail, NULL);
}

static void test_validation_errors(void **state)
{
	(void)state;
	expect_error("{\"model_type\": \"llama\"}", "vocab_size", "missing");
	expect_error("{" BASE_FIELDS ", \"num_key_value_heads\": 3}", "num_key_value_heads",
		     "divide");
	expect_error("{" BASE_FIELDS ", \"num_key_value_heads\": 8}", "num_key_value_heads",
		     "[1, 4]");
	expect_error("{" BASE_FIELDS ", \"hidden_size\": \"64\"}", "hidden_size", "integer");
	expect_error("{" BASE_FIELDS ", \"hidden_size\": 66}", "hidden_size", "divisible");
	expect_error("{" BASE_FIELDS ", \"head_dim\": 15}", "head_dim", "even");
	expect_error("{" BASE_FIELDS ", \"rms_norm_eps\": -1}", "rms_norm_eps", "must be");
	expect_error("{" BASE_FIELDS ", \"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4}}",
		     "rope_scaling.rope_type", "yarn");
	expect_error("{" BASE_FIELDS ", \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8}}",
		     "rope_scaling.low_freq_factor", "missing");
	expect_error("{" BASE_FIELDS ", \"torch_dtype\": \"int8\"}", "torch_dtype", "int8");
	expect_error("{" BASE_FIELDS ", \"torch_dtype\": \"float16\", \"dtype\": \"bfloat16\"}",
		     "dtype", "contradicts");
	expect_error("{" BASE_FIELDS ", \"eos_token_id\": [1, \"x\"]}", "eos_token_id", "element 1");
	expect_error("{" BASE_FIELDS ", \"eos_token_id\": 5000}", "eos_token_id", "vocabulary");
	expect_error("{" BASE_FIELDS ", \"tie_word_embeddings\": 1}", "tie_word_embeddings",
		     "true or false");
	expect_error("{" BASE_FIELDS ", \"hidden_act\": \"gelu\"}", "hidden_act", "silu");
	expect_error("{\"model_type\": \"gpt2\"}", "model_type", "gpt2");
	expect_error("{" BASE_FIELDS ", \"architectures\": [\"LlamaModel\"]}", "architectures",
		     "LlamaForCausalLM");
}

static void test_bad_json_names_file(void **state)
{
	struct rbln_llama_config c;
	struct rbln_error err = { 0 };

	(void)state;
	assert_true(parse("{\"vocab_size\": 12,", &c, &err) < 0);
	test_assert_contains_all(err.msg, "config.json", "malformed JSON", NULL);
	assert_true(parse("{\"a\": 1}\n x", &c, &err) < 0);
	test_assert_contains_all(err.msg, "config.json", "line 2 column 2", NULL);
	assert_true(parse("[1]", &c, &err) < 0);
	test_assert_contains_all(err.msg, "config.json", "object", NULL);
}

static void test_generation_config_errors(void **state)
{
	struct rbln_generation_config g;
	struct rbln_error err = { 0 };
	const char *bad = "{\"top_p\": 1.5}";

	(void)state;
	assert_true(rbln_generation_config_parse(bad, strlen(bad), "generation_config.json", &g,
						 &err) < 0);
	test_assert_contains_all(err.msg, "generation_config.json", "top_p", NULL);
	bad = "{\"eos_token_id\": {\"a\": 1}}";
	assert_true(rbln_generation_config_parse(bad, strlen(bad), "generation_config.json", &g,
						 &err) < 0);
	test_assert_contains_all(err.msg, "eos_token_id", "list of token ids", NULL);
}

/* The llama3 scaling leaves high frequencies alone and slows low ones by factor. */
static void test_rope_inv_freq(void **state)
{
	struct rbln_llama_config c;
	struct rbln_rope_config plain;
	struct rbln_error err = { 0 };
	float f[16], base[16];
	int i;

	(void)state;
	assert_int_equal(rbln_llama_config_load(test_model_path("tiny-llama3"), &c, &err), 0);
	assert_int_equal(rbln_rope_inv_freq(&c.rope, c.head_dim, f, &err), 0);
	plain = c.rope;
	plain.type = RBLN_ROPE_DEFAULT;
	assert_int_equal(rbln_rope_inv_freq(&plain, c.head_dim, base, &err), 0);
	assert_true(base[0] == 1.0f);
	for (i = 0; i < 16; i++) {
		double expect = 1.0 / pow(500000.0, (2.0 * i) / 32.0);
		double wavelen = 2 * M_PI / base[i];

		assert_true(fabs(base[i] - expect) <= 1e-6 * expect);
		if (wavelen < 8192.0 / 4.0)		/* high frequency: unchanged */
			assert_true(f[i] == base[i]);
		else if (wavelen > 8192.0 / 1.0)	/* low frequency: divided */
			assert_true(fabs(f[i] - base[i] / 8.0f) <= 1e-6 * base[i]);
		else					/* smooth blend in between */
			assert_true(f[i] < base[i] && f[i] > base[i] / 8.0f);
	}
	assert_true(rbln_rope_inv_freq(&c.rope, 31, f, &err) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tiny_llama3_config),
		cmocka_unit_test(test_tiny_llama2_config),
		cmocka_unit_test(test_generation_configs),
		cmocka_unit_test(test_defaults_and_mha),
		cmocka_unit_test(test_mqa_head_dim_and_dtype),
		cmocka_unit_test(test_rope_parameters_layout),
		cmocka_unit_test(test_validation_errors),
		cmocka_unit_test(test_bad_json_names_file),
		cmocka_unit_test(test_generation_config_errors),
		cmocka_unit_test(test_rope_inv_freq),
	};

	return cmocka_run_group_tests_name("engine config", tests, NULL, NULL);
}
