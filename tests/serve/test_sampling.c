// SPDX-License-Identifier: MIT
/* rbln_sampling_params_validate(): every field's bounds, errors naming the field. */
#include "serve_test.h"

#include <math.h>
#include <string.h>

#include "rbln_serving.h"

static const struct rbln_sampling_limits lim = { .vocab_size = 4096, .max_model_len = 2048,
						 .max_logprobs = 5 };

static const char *bad(struct rbln_sampling_params *p, const char *const *names,
		       struct rbln_error *err)
{
	memset(err, 0, sizeof(*err));
	assert_int_equal(rbln_sampling_params_validate(p, &lim, names, err), -EINVAL);
	return err->msg;
}

static void test_defaults_valid(void **state)
{
	struct rbln_sampling_params p;
	struct rbln_error err = { 0 };

	(void)state;
	rbln_sampling_params_init(&p);
	assert_true(p.temperature == 1.0);
	assert_int_equal(p.top_k, -1);
	assert_true(p.top_p == 1.0);
	assert_int_equal(p.max_tokens, -1);
	assert_int_equal(p.logprobs, -1);
	assert_true(p.skip_special_tokens);
	assert_int_equal(rbln_sampling_params_validate(&p, &lim, NULL, &err), 0);
	/* boundary values that are valid */
	p.temperature = 0;
	p.top_k = 0;
	p.top_p = 1;
	p.min_p = 1;
	p.repetition_penalty = 0.01;
	p.presence_penalty = -2;
	p.frequency_penalty = 2;
	p.max_tokens = 1;
	p.min_tokens = 1;
	p.logprobs = 5;
	assert_int_equal(rbln_sampling_params_validate(&p, &lim, NULL, &err), 0);
	assert_string_equal(rbln_sampling_field_name(RBLN_SP_REPETITION_PENALTY),
			    "repetition_penalty");
}

static void test_each_field(void **state)
{
	struct rbln_sampling_params p;
	struct rbln_error err;
	int32_t ids[] = { 1, 4096 };
	int32_t ok_ids[] = { 5 };
	struct rbln_token_seq words[2] = { { ok_ids, 1 }, { ids, 2 } };
	const char *stops[] = { "a", "" };

	(void)state;
#define CASE(stmt, ...)                                                            \
	do {                                                                       \
		rbln_sampling_params_init(&p);                                     \
		stmt;                                                              \
		assert_contains_all(bad(&p, NULL, &err), __VA_ARGS__, NULL);       \
	} while (0)
	CASE(p.temperature = -0.5, "field 'temperature' must be a number >= 0", "-0.5");
	CASE(p.temperature = NAN, "field 'temperature'");
	CASE(p.top_k = -2, "field 'top_k' must be -1 or 0 (off) or at least 1, got -2");
	CASE(p.top_p = 0, "field 'top_p' must be in (0, 1], got 0");
	CASE(p.top_p = 1.5, "field 'top_p' must be in (0, 1], got 1.5");
	CASE(p.min_p = -0.1, "field 'min_p' must be in [0, 1]");
	CASE(p.repetition_penalty = 0, "field 'repetition_penalty' must be a number > 0");
	CASE(p.presence_penalty = 2.5, "field 'presence_penalty' must be in [-2, 2], got 2.5");
	CASE(p.frequency_penalty = -3, "field 'frequency_penalty' must be in [-2, 2], got -3");
	CASE(p.max_tokens = 0, "field 'max_tokens' must be at least 1, got 0");
	CASE(p.min_tokens = -1, "field 'min_tokens' must be >= 0");
	CASE((p.max_tokens = 4, p.min_tokens = 5),
	     "field 'min_tokens' (5) must not exceed max_tokens (4)");
	CASE((p.stop_token_ids = ids, p.n_stop_token_ids = 2),
	     "field 'stop_token_ids' entry 1 is 4096, outside the vocabulary (0..4095)");
	CASE((p.bad_words = words, p.n_bad_words = 2),
	     "field 'bad_words' entry 1 has token id 4096 outside the vocabulary");
	CASE((words[0].len = 0, p.bad_words = words, p.n_bad_words = 1),
	     "field 'bad_words' entry 0 is empty");
	CASE(p.logprobs = 6, "field 'logprobs' must be between 0 and 5, got 6");
	CASE((p.stop = stops, p.n_stop = 2), "field 'stop' entry 1 is an empty string");
#undef CASE
}

/* The client's own spelling is named: TensorRT-LLM's random_seed, OpenAI's max_completion_tokens. */
static void test_client_names(void **state)
{
	struct rbln_sampling_params p;
	struct rbln_error err;
	const char *names[RBLN_SP_FIELD_COUNT] = { 0 };

	(void)state;
	names[RBLN_SP_MAX_TOKENS] = "max_completion_tokens";
	names[RBLN_SP_MIN_TOKENS] = "min_length";
	names[RBLN_SP_TOP_P] = "runtime_top_p";
	rbln_sampling_params_init(&p);
	p.max_tokens = 2;
	p.min_tokens = 3;
	assert_contains_all(bad(&p, names, &err), "field 'min_length' (3) must not exceed "
			    "max_completion_tokens (2)", NULL);
	rbln_sampling_params_init(&p);
	p.top_p = 7;
	assert_contains_all(bad(&p, names, &err), "field 'runtime_top_p'", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_valid),
		cmocka_unit_test(test_each_field),
		cmocka_unit_test(test_client_names),
	};

	return cmocka_run_group_tests_name("serve-sampling", tests, NULL, NULL);
}
