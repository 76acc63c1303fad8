/* SPDX-License-Identifier: MIT */
/*
 * Llama-family model configuration: config.json and generation_config.json
 * of a Hugging Face checkpoint, validated field by field.
 */
#ifndef RBLN_CONFIG_H
#define RBLN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_dtype.h"
#include "rbln_error.h"

#define RBLN_MAX_EOS_IDS 16

enum rbln_rope_type {
	RBLN_ROPE_DEFAULT,	/* plain RoPE with rope_theta */
	RBLN_ROPE_LINEAR,	/* positions divided by factor */
	RBLN_ROPE_LLAMA3,	/* Llama 3.1 frequency-dependent scaling */
};

struct rbln_rope_config {
	enum rbln_rope_type type;
	double theta;
	double factor;			/* linear and llama3 */
	double low_freq_factor;		/* llama3 */
	double high_freq_factor;	/* llama3 */
	int64_t original_max_position_embeddings;	/* llama3 */
};

struct rbln_llama_config {
	int64_t vocab_size;
	int64_t hidden_size;
	int64_t intermediate_size;
	int64_t num_hidden_layers;
	int64_t num_attention_heads;
	int64_t num_key_value_heads;	/* == heads: MHA, 1: MQA, between: GQA */
	int64_t head_dim;		/* default hidden_size / num_attention_heads */
	int64_t max_position_embeddings;
	double rms_norm_eps;
	struct rbln_rope_config rope;
	bool tie_word_embeddings;
	bool attention_bias;
	bool mlp_bias;
	enum rbln_dtype dtype;		/* torch_dtype / dtype; UNKNOWN when absent */
	int64_t bos_token_id;		/* -1 when absent */
	int64_t eos_token_ids[RBLN_MAX_EOS_IDS];
	size_t n_eos_token_ids;
	int64_t pad_token_id;		/* -1 when absent */
};

/* Reads DIR/config.json. */
int rbln_llama_config_load(const char *model_dir, struct rbln_llama_config *cfg,
			   struct rbln_error *err);
/* Parses config.json text; `name` is used in error messages. */
int rbln_llama_config_parse(const char *text, size_t len, const char *name,
			    struct rbln_llama_config *cfg, struct rbln_error *err);

/*
 * Rotary inverse frequencies for the head_dim/2 dimension pairs, computed in
 * float32 in the order transformers uses, llama3/linear scaling applied
 * (linear scaling is folded in as inv_freq / factor).
 */
int rbln_rope_inv_freq(const struct rbln_rope_config *rope, int64_t head_dim, float *inv_freq,
		       struct rbln_error *err);

/* generation_config.json; fields absent from the file keep transformers' defaults. */
struct rbln_generation_config {
	bool present;			/* the file exists */
	int64_t bos_token_id;		/* -1 when absent */
	int64_t eos_token_ids[RBLN_MAX_EOS_IDS];
	size_t n_eos_token_ids;
	int64_t pad_token_id;		/* -1 when absent */
	bool do_sample;			/* default false */
	double temperature;		/* default 1.0 */
	double top_p;			/* default 1.0 */
	int64_t top_k;			/* default 50 */
	double min_p;			/* default 0 (off) */
	double repetition_penalty;	/* default 1.0 */
	int64_t max_new_tokens;		/* -1 when absent */
	int64_t max_length;		/* default 20 */
};

/* Reads DIR/generation_config.json; a missing file gives defaults, present = false. */
int rbln_generation_config_load(const char *model_dir, struct rbln_generation_config *gen,
				struct rbln_error *err);
int rbln_generation_config_parse(const char *text, size_t len, const char *name,
				 struct rbln_generation_config *gen, struct rbln_error *err);

#endif
