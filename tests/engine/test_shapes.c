// SPDX-License-Identifier: MIT
/*
 * Shapes the reference models do not have, with random weights: every
 * tensor-parallel degree gives the logits of TP 1 (MQA replicated on all
 * ranks, GQA with as many KV heads as ranks, head_dim 64, float32 and
 * float16 weights, a float16 KV cache); and linear RoPE scaling, which the
 * compiler expresses as the device's llama3 scaling, rotates as
 * transformers' inv_freq / factor does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/program_build.h"
#include "engine_helpers.h"
#include "libnpu.h"

struct shape {
	const char *name;
	int heads, kv_heads, head_dim, hidden, inter, vocab;
	const char *dtype;
	uint32_t tps[3];
	enum rbln_dtype kv_dtype;
};

/* A config.json of this shape in a fresh directory. */
static char *write_config(const struct shape *sh)
{
	char *dir = test_mkdtemp(), *path = test_join(dir, "config.json"), text[1024];

	snprintf(text, sizeof(text),
		 "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
		 "\"hidden_size\": %d, \"intermediate_size\": %d, \"num_hidden_layers\": 2, "
		 "\"num_attention_heads\": %d, \"num_key_value_heads\": %d, \"head_dim\": %d, "
		 "\"vocab_size\": %d, \"max_position_embeddings\": 512, \"rms_norm_eps\": 1e-5, "
		 "\"rope_theta\": 10000.0, \"rope_scaling\": {\"rope_type\": \"linear\", "
		 "\"factor\": 2.0}, \"tie_word_embeddings\": false, \"torch_dtype\": \"%s\", "
		 "\"bos_token_id\": 1, \"eos_token_id\": 2}",
		 sh->hidden, sh->inter, sh->heads, sh->kv_heads, sh->head_dim, sh->vocab,
		 sh->dtype);
	test_write_text(path, text);
	free(path);
	return dir;
}

/* The logits after a 40-token prompt, compiled at tensor-parallel size tp. */
static float *prompt_logits(const char *hf, const struct shape *sh, uint32_t tp)
{
	struct rbln_compile_options o = {
		.tensor_parallel_size = tp, .dummy_weights = true, .dummy_seed = 11,
		.max_seq_len = 512, .kvcache_partition_len = 64, .prefill_chunk_size = 64,
		.kv_cache_dtype = sh->kv_dtype,
	};
	struct rbln_sampling_params sp;
	struct rbln_error err = { 0 };
	struct rbln_runtime *e;
	struct rbln_seq *s;
	int32_t ids[40];
	char *dir = test_mkdtemp();
	const float *logits;
	float *out;
	size_t i, vocab;

	if (rbln_compile(hf, dir, &o, &err))
		fail_msg("%s tp %u: %s", sh->name, tp, err.msg);
	e = eh_open(dir);
	for (i = 0; i < 40; i++)
		ids[i] = (int32_t)((i * 37 + 5) % (size_t)sh->vocab);
	eh_greedy(&sp, 2);
	if (rbln_runtime_add(e, ids, 40, &sp, RBLN_SEQ_KEEP_PROMPT_LOGITS, &s, &err))
		fail_msg("%s", err.msg);
	eh_run_all(e);
	logits = rbln_seq_prompt_logits(s, &vocab);
	assert_non_null(logits);
	assert_int_equal(vocab, sh->vocab);
	out = malloc(vocab * sizeof(float));
	memcpy(out, logits, vocab * sizeof(float));
	rbln_runtime_close(e);
	test_rmtree(dir);
	free(dir);
	return out;
}

static void check_tp_agree(const struct shape *sh)
{
	char *hf = write_config(sh);
	float *base = prompt_logits(hf, sh, 1), *other, scale = 0;
	size_t t, i;

	for (i = 0; i < (size_t)sh->vocab; i++)
		scale = fmaxf(scale, fabsf(base[i]));
	assert_true(scale > 0);
	for (t = 0; t < 3 && sh->tps[t]; t++) {
		other = prompt_logits(hf, sh, sh->tps[t]);
		for (i = 0; i < (size_t)sh->vocab; i++)
			if (!(fabsf(other[i] - base[i]) <= 1e-4f * scale))
				fail_msg("%s: tp %u logit %zu is %g, tp 1 %g", sh->name,
					 sh->tps[t], i, other[i], base[i]);
		free(other);
	}
	free(base);
	test_rmtree(hf);
	free(hf);
}

static void test_mqa(void **state)
{
	static const struct shape sh = { "MQA bf16", 4, 1, 64, 256, 512, 512, "bfloat16",
					 { 2, 4 }, RBLN_TENSOR_F32 };

	(void)state;
	check_tp_agree(&sh);
}

static void test_gqa_f32_weights_f16_cache(void **state)
{
	static const struct shape sh = { "GQA f32", 8, 4, 32, 256, 384, 256, "float32",
					 { 4, 8 }, RBLN_TENSOR_F16 };

	(void)state;
	check_tp_agree(&sh);
}

static void test_mha_f16(void **state)
{
	static const struct shape sh = { "MHA f16", 4, 4, 48, 192, 256, 320, "float16",
					 { 2 }, RBLN_TENSOR_BF16 };

	(void)state;
	check_tp_agree(&sh);
}

/* Linear scaling through the device's llama3 ROPE equals inv_freq / factor. */
static void test_linear_rope(void **state)
{
	struct rbln_rope_config rope = { .type = RBLN_ROPE_LINEAR, .theta = 10000.0,
					 .factor = 4.0 };
	enum { HD = 64, T = 8 };
	struct isa_rope_params p;
	struct npu_context *ctx;
	npu_device *dev;
	npu_queue *q;
	npu_buffer *xb, *pb;
	npu_stream *st;
	npu_fence *f;
	float inv[HD / 2], x0[T * HD], *x;
	int32_t *pos;
	void *m;
	int t, i;

	(void)state;
	rbln_program_rope_params(&rope, &p);
	assert_true(p.llama3);
	assert_int_equal(rbln_rope_inv_freq(&rope, HD, inv, NULL), 0);
	assert_int_equal(npu_context_create(NULL, &ctx), 0);
	assert_int_equal(npu_device_open(ctx, 0, &dev), 0);
	assert_int_equal(npu_queue_create(dev, NPU_PRIORITY_NORMAL, &q), 0);
	assert_int_equal(npu_buffer_alloc(dev, sizeof(x0), 0, &xb), 0);
	assert_int_equal(npu_buffer_alloc(dev, T * 4, 0, &pb), 0);
	assert_int_equal(npu_buffer_map(xb, &m), 0);
	x = m;
	assert_int_equal(npu_buffer_map(pb, &m), 0);
	pos = m;
	for (i = 0; i < T * HD; i++)
		x0[i] = x[i] = (float)((i * 7919) % 200 - 100) / 100.0f;
	for (t = 0; t < T; t++)
		pos[t] = t * 97;
	assert_int_equal(npu_stream_create(dev, &st), 0);
	npu_stream_rope(st, &(struct npu_rope){
		.x = { xb, 0 }, .pos = { pb, 0 }, .tokens = T, .heads = 1, .head_dim = HD,
		.theta = p.theta, .llama3 = 1, .factor = p.factor,
		.low_freq_factor = p.low_freq_factor, .high_freq_factor = p.high_freq_factor,
		.original_max_pos = p.original_max_pos });
	assert_int_equal(npu_stream_submit(st, q, NULL, 0, &f), 0);
	assert_int_equal(npu_fence_wait(f, NPU_TIMEOUT_INFINITE), 0);
	npu_fence_release(f);
	for (t = 0; t < T; t++) {
		for (i = 0; i < HD / 2; i++) {
			double a = (double)((float)pos[t] * inv[i]);
			double c = cos(a), s = sin(a);
			double x1 = x0[t * HD + i], x2 = x0[t * HD + i + HD / 2];

			assert_true(fabs(x[t * HD + i] - (x1 * c - x2 * s)) < 1e-3);
			assert_true(fabs(x[t * HD + i + HD / 2] - (x2 * c + x1 * s)) < 1e-3);
		}
	}
	npu_stream_destroy(st);
	npu_buffer_free(xb);
	npu_buffer_free(pb);
	npu_queue_destroy(q);
	npu_device_close(dev);
	npu_context_destroy(ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mqa),
		cmocka_unit_test(test_gqa_f32_weights_f16_cache),
		cmocka_unit_test(test_mha_f16),
		cmocka_unit_test(test_linear_rope),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
