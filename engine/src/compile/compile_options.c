// SPDX-License-Identifier: MIT
/*
 * The compile parameters: defaults and rules.  The rules are the RBLN SDK's
 * (optimum-rbln's RBLNDecoderOnlyModelForCausalLMConfig and
 * validate_attention_method), plus what this device's kernels require.  The
 * SDK's bounds that come from the real chip's memory (partitions of 4k-32k
 * tokens, flash attention only from 8k) are left out: the emulated device
 * has no such sizes, and the small reference models need short partitions.
 */
#include "rbln_compile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rbln_isa.h"

#define DEFAULT_PREFILL_CHUNK 128u
#define PREFILL_CHUNK_MULTIPLE 64u
#define MAX_BATCH 1024u

static int check_tp(const struct rbln_llama_config *m, uint32_t tp, struct rbln_error *err)
{
	if (tp < 1 || tp > RBLN_MAX_TENSOR_PARALLEL)
		return rbln_error_set(err, -EINVAL, "--tensor-parallel-size must be 1 to %d, got %u",
				      RBLN_MAX_TENSOR_PARALLEL, tp);
	if (m->num_attention_heads % tp)
		return rbln_error_set(err, -EINVAL, "--tensor-parallel-size %u does not divide "
				      "num_attention_heads (%lld): each rank computes whole heads",
				      tp, (long long)m->num_attention_heads);
	/* KV heads are split when there are enough, else replicated. */
	if (m->num_key_value_heads >= tp ? m->num_key_value_heads % tp :
	    tp % m->num_key_value_heads)
		return rbln_error_set(err, -EINVAL, "--tensor-parallel-size %u and "
				      "num_key_value_heads (%lld): one must divide the other, so "
				      "that KV heads are split or replicated evenly",
				      tp, (long long)m->num_key_value_heads);
	if (m->intermediate_size % tp)
		return rbln_error_set(err, -EINVAL, "--tensor-parallel-size %u does not divide "
				      "intermediate_size (%lld), the MLP width split across ranks",
				      tp, (long long)m->intermediate_size);
	if (m->vocab_size % tp)
		return rbln_error_set(err, -EINVAL, "--tensor-parallel-size %u does not divide "
				      "vocab_size (%lld), split across ranks for the embedding "
				      "and lm_head", tp, (long long)m->vocab_size);
	return 0;
}

static int check_model(const struct rbln_llama_config *m, struct rbln_error *err)
{
	if (m->head_dim % 8 || m->head_dim > RBLN_ISA_MAX_HEAD_DIM)
		return rbln_error_set(err, -ENOTSUP, "config.json: head_dim %lld is not supported "
				      "by the device's attention (a multiple of 8 up to %d)",
				      (long long)m->head_dim, RBLN_ISA_MAX_HEAD_DIM);
	if (m->attention_bias || m->mlp_bias)
		return rbln_error_set(err, -ENOTSUP, "config.json: %s is not supported (Llama "
				      "checkpoints have no biases)",
				      m->attention_bias ? "attention_bias" : "mlp_bias");
	if (m->rope.theta <= 1.0)
		return rbln_error_set(err, -ENOTSUP, "config.json: rope_theta %g must be above 1 "
				      "for the device's ROPE", m->rope.theta);
	return 0;
}

/*
 * The bytes of the model's weights (embeddings, per layer QKV, O, gate/up,
 * down and two norms, the final norm, lm_head), computed with overflow
 * checks: every config value has its own range, but their products and
 * sums can still wrap and make the weight writer run past its mapping.
 */
#define MAX_WEIGHT_BYTES ((uint64_t)1 << 46)	/* 64 TiB: above any real model */

static bool weight_bytes(const struct rbln_llama_config *m, enum rbln_dtype dt, uint64_t *out)
{
	uint64_t h = (uint64_t)m->hidden_size, q = (uint64_t)m->num_attention_heads *
		     (uint64_t)m->head_dim, kv, per_layer, vocab_part, t;
	bool o = false;

	o |= __builtin_mul_overflow((uint64_t)m->num_key_value_heads, (uint64_t)m->head_dim, &kv);
	/* qkv: h x (q + 2 kv); o: q x h; gate/up/down: 3 x h x inter; norms: 2 h */
	o |= __builtin_add_overflow(q, 2 * kv, &t);
	o |= __builtin_mul_overflow(h, t, &per_layer);
	o |= __builtin_mul_overflow(q, h, &t);
	o |= __builtin_add_overflow(per_layer, t, &per_layer);
	o |= __builtin_mul_overflow(h, (uint64_t)m->intermediate_size, &t);
	o |= __builtin_mul_overflow(t, 3, &t);
	o |= __builtin_add_overflow(per_layer, t, &per_layer);
	o |= __builtin_add_overflow(per_layer, 2 * h, &per_layer);
	o |= __builtin_mul_overflow(per_layer, (uint64_t)m->num_hidden_layers, &per_layer);
	/* embeddings and lm_head (each vocab x h), final norm */
	o |= __builtin_mul_overflow((uint64_t)m->vocab_size, h, &vocab_part);
	o |= __builtin_mul_overflow(vocab_part, 2, &vocab_part);
	o |= __builtin_add_overflow(per_layer, vocab_part, &t);
	o |= __builtin_add_overflow(t, h, &t);
	o |= __builtin_mul_overflow(t, (uint64_t)rbln_dtype_size(dt), &t);
	*out = t;
	return !o;
}

static int check_weight_size(const struct rbln_llama_config *m, enum rbln_dtype dt,
			     struct rbln_error *err)
{
	uint64_t bytes;

	if (!weight_bytes(m, dt, &bytes))
		return rbln_error_set(err, -EFBIG, "config.json: the model's weights would take "
				      "more than 2^64 bytes (vocab_size %lld, hidden_size %lld, "
				      "intermediate_size %lld, num_hidden_layers %lld)",
				      (long long)m->vocab_size, (long long)m->hidden_size,
				      (long long)m->intermediate_size,
				      (long long)m->num_hidden_layers);
	if (bytes > MAX_WEIGHT_BYTES)
		return rbln_error_set(err, -EFBIG, "config.json: the model's weights would take "
				      "%llu bytes in %s, more than the %llu the compiler handles",
				      (unsigned long long)bytes, rbln_dtype_name(dt),
				      (unsigned long long)MAX_WEIGHT_BYTES);
	return 0;
}

static int resolve_attention(const struct rbln_compile_options *opt,
			     struct rbln_compiled_config *cc, struct rbln_error *err)
{
	uint32_t msl = cc->max_seq_len, part = opt->kvcache_partition_len;
	uint32_t block = opt->kvcache_block_size;

	if (part) {
		cc->attn_impl = RBLN_ATTN_FLASH;
		if (msl % part || msl / part < 2)
			return rbln_error_set(err, -EINVAL, "--max-seq-len %u must be a multiple of "
					      "--kvcache-partition-len %u, at least twice it, for "
					      "flash attention", msl, part);
		if (!block)
			block = part;
		if (block != part)
			return rbln_error_set(err, -EINVAL, "--kvcache-block-size %u must equal "
					      "--kvcache-partition-len %u with flash attention",
					      block, part);
	} else {
		cc->attn_impl = RBLN_ATTN_EAGER;
		part = msl;
		if (!block)
			block = msl;
		if (block != msl)
			return rbln_error_set(err, -EINVAL, "--kvcache-block-size %u must equal "
					      "--max-seq-len %u with eager attention (give "
					      "--kvcache-partition-len for paged flash attention)",
					      block, msl);
	}
	if (block > 65536)
		return rbln_error_set(err, -EINVAL, "--kvcache-block-size %u is above the device's "
				      "limit of 65536 tokens", block);
	cc->kvcache_partition_len = part;
	cc->kvcache_block_size = block;
	return 0;
}

static int resolve_blocks(const struct rbln_compile_options *opt, struct rbln_compiled_config *cc,
			  struct rbln_error *err)
{
	uint32_t per_seq = cc->max_seq_len / cc->kvcache_block_size;
	uint64_t n = opt->kvcache_num_blocks ? opt->kvcache_num_blocks :
		     (uint64_t)cc->batch_size * per_seq;

	if (n < per_seq)
		return rbln_error_set(err, -EINVAL, "--kvcache-num-blocks %llu cannot hold one "
				      "sequence of --max-seq-len %u (%u blocks of %u tokens)",
				      (unsigned long long)n, cc->max_seq_len, per_seq,
				      cc->kvcache_block_size);
	if (n > INT32_MAX / cc->kvcache_block_size)
		return rbln_error_set(err, -EINVAL, "--kvcache-num-blocks %llu: cache slots would "
				      "exceed 2^31", (unsigned long long)n);
	cc->kvcache_num_blocks = (uint32_t)n;
	return 0;
}

static int cmp_desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The SDK's rules: each at most batch_size; sorted descending; batch_size appended. */
static int resolve_decoder_batches(const struct rbln_compile_options *opt,
				   struct rbln_compiled_config *cc, struct rbln_error *err)
{
	size_t i, j, n = opt->n_decoder_batch_sizes;
	bool has_max = false;

	if (n > RBLN_MAX_DECODER_BATCHES)
		return rbln_error_set(err, -EINVAL, "--decoder-batch-sizes: at most %d sizes",
				      RBLN_MAX_DECODER_BATCHES);
	for (i = 0; i < n; i++) {
		uint32_t b = opt->decoder_batch_sizes[i];

		if (b < 1 || b > cc->batch_size)
			return rbln_error_set(err, -EINVAL, "--decoder-batch-sizes: %u must be 1 to "
					      "--batch-size (%u)", b, cc->batch_size);
		for (j = 0; j < i; j++)
			if (opt->decoder_batch_sizes[j] == b)
				return rbln_error_set(err, -EINVAL, "--decoder-batch-sizes: %u is "
						      "listed twice", b);
		cc->decoder_batch_sizes[i] = b;
		has_max |= b == cc->batch_size;
	}
	if (!has_max) {
		if (n == RBLN_MAX_DECODER_BATCHES)
			return rbln_error_set(err, -EINVAL, "--decoder-batch-sizes: no room to append "
					      "--batch-size %u (at most %d sizes)", cc->batch_size,
					      RBLN_MAX_DECODER_BATCHES);
		cc->decoder_batch_sizes[n++] = cc->batch_size;
	}
	qsort(cc->decoder_batch_sizes, n, sizeof(cc->decoder_batch_sizes[0]), cmp_desc);
	cc->n_decoder_batch_sizes = n;
	return 0;
}

/*
 * --weight-layout auto: the layout the emulated devices, which run the
 * matrix products on this host's CPU, stream faster there. A model runs
 * in either layout anywhere; this is about speed only. Measured with a 1B
 * decode step's 65 GEMVs, the two layouts alternating in one process
 * (engine guide, 2026-11-28 22:30 UTC): on a 16-core Sapphire Rapids the
 * spaced panels read 4-8% more than packed16 with 2, 8 and 16 engines; on
 * a 2-core Zen 5 packed16 read 7-16% more than spaced in the guest's fast
 * phases (64.6 against 60.6 GB/s, 70.9 against 60.9) and 1-3% in its slow
 * ones.
 */
static enum rbln_weight_layout host_weight_layout(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	if (__builtin_cpu_is("intel"))
		return RBLN_WEIGHTS_SPACED;
#endif
	return RBLN_WEIGHTS_PACKED16;
}

static int resolve_chunk(const struct rbln_compile_options *opt, struct rbln_compiled_config *cc,
			 struct rbln_error *err)
{
	uint32_t c = opt->prefill_chunk_size ? opt->prefill_chunk_size : DEFAULT_PREFILL_CHUNK;

	if (c % PREFILL_CHUNK_MULTIPLE)
		return rbln_error_set(err, -EINVAL, "--prefill-chunk-size %u must be a positive "
				      "multiple of %u", c, PREFILL_CHUNK_MULTIPLE);
	if (c > cc->max_seq_len)
		return rbln_error_set(err, -EINVAL, "--prefill-chunk-size %u is above --max-seq-len "
				      "%u", c, cc->max_seq_len);
	if (c < cc->batch_size)
		return rbln_error_set(err, -EINVAL, "--prefill-chunk-size %u is below --batch-size "
				      "%u: a prefill step must hold one token of every sequence",
				      c, cc->batch_size);
	cc->prefill_chunk_size = c;
	return 0;
}

int rbln_compile_resolve(const struct rbln_llama_config *model,
			 const struct rbln_compile_options *opt,
			 struct rbln_compiled_config *cc, struct rbln_error *err)
{
	uint32_t tp = opt->tensor_parallel_size ? opt->tensor_parallel_size : 1;
	int rc;

	memset(cc, 0, sizeof(*cc));
	cc->format = RBLN_COMPILED_FORMAT;
	cc->model = *model;
	rc = check_model(model, err);
	if (rc)
		return rc;
	rc = check_tp(model, tp, err);
	if (rc)
		return rc;
	cc->tensor_parallel_size = tp;

	cc->batch_size = opt->batch_size ? opt->batch_size : 1;
	if (cc->batch_size > MAX_BATCH)
		return rbln_error_set(err, -EINVAL, "--batch-size %u is above %u", cc->batch_size,
				      MAX_BATCH);
	if (opt->max_seq_len) {
		if (opt->max_seq_len > model->max_position_embeddings)
			return rbln_error_set(err, -EINVAL, "--max-seq-len %u is above the model's "
					      "max_position_embeddings (%lld)", opt->max_seq_len,
					      (long long)model->max_position_embeddings);
		cc->max_seq_len = opt->max_seq_len;
	} else {
		if (model->max_position_embeddings > INT32_MAX / 2)
			return rbln_error_set(err, -EINVAL, "config.json: max_position_embeddings "
					      "%lld is too large; give --max-seq-len",
					      (long long)model->max_position_embeddings);
		cc->max_seq_len = (uint32_t)model->max_position_embeddings;
	}
	if (cc->max_seq_len < 2)
		return rbln_error_set(err, -EINVAL, "--max-seq-len must be at least 2");

	rc = resolve_attention(opt, cc, err);
	if (!rc)
		rc = resolve_blocks(opt, cc, err);
	if (!rc)
		rc = resolve_decoder_batches(opt, cc, err);
	if (!rc)
		rc = resolve_chunk(opt, cc, err);
	if (rc)
		return rc;
	cc->dtype = opt->dtype != RBLN_TENSOR_UNKNOWN ? opt->dtype : model->dtype;
	if (cc->dtype == RBLN_TENSOR_UNKNOWN)
		cc->dtype = RBLN_TENSOR_F32;	/* transformers' default */
	cc->kv_cache_dtype = opt->kv_cache_dtype != RBLN_TENSOR_UNKNOWN ? opt->kv_cache_dtype :
			     RBLN_TENSOR_F32;
	cc->quantize = opt->quantize;
	if (opt->matmul_precision != RBLN_MATMUL_F32 && opt->matmul_precision != RBLN_MATMUL_BF16)
		return rbln_error_set(err, -EINVAL, "--matmul-precision: %d is not float32 or bf16",
				      (int)opt->matmul_precision);
	cc->matmul_precision = opt->matmul_precision;
	if (opt->weight_layout != RBLN_WEIGHTS_AUTO && opt->weight_layout != RBLN_WEIGHTS_SPACED &&
	    opt->weight_layout != RBLN_WEIGHTS_PACKED16)
		return rbln_error_set(err, -EINVAL, "--weight-layout: %d is not auto, spaced or "
				      "packed16", (int)opt->weight_layout);
	cc->weight_layout = opt->weight_layout == RBLN_WEIGHTS_AUTO ? host_weight_layout() :
			    opt->weight_layout;
	cc->dummy_weights = opt->dummy_weights;
	return check_weight_size(model, cc->dtype, err);
}

int rbln_compile_parse_batch_sizes(const char *text, struct rbln_compile_options *opt,
				   struct rbln_error *err)
{
	const char *p = text;
	size_t n = 0;

	if (*p == '[')
		p++;
	while (*p && *p != ']') {
		char *end;
		unsigned long v;

		while (*p == ' ' || *p == ',')
			p++;
		if (!*p || *p == ']')
			break;
		if (*p < '0' || *p > '9')
			return rbln_error_set(err, -EINVAL, "--decoder-batch-sizes '%s': expected a "
					      "list of numbers such as 8,4,1", text);
		v = strtoul(p, &end, 10);
		if (v < 1 || v > MAX_BATCH)
			return rbln_error_set(err, -EINVAL, "--decoder-batch-sizes '%s': %lu is not "
					      "1 to %u", text, v, MAX_BATCH);
		if (n == RBLN_MAX_DECODER_BATCHES)
			return rbln_error_set(err, -EINVAL, "--decoder-batch-sizes '%s': at most %d "
					      "sizes", text, RBLN_MAX_DECODER_BATCHES);
		opt->decoder_batch_sizes[n++] = (uint32_t)v;
		p = end;
	}
	if (*p == ']' && p[1])
		return rbln_error_set(err, -EINVAL, "--decoder-batch-sizes '%s': text after ']'",
				      text);
	if (!n)
		return rbln_error_set(err, -EINVAL, "--decoder-batch-sizes '%s': no sizes", text);
	opt->n_decoder_batch_sizes = n;
	return 0;
}
