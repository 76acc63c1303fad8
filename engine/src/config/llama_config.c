// SPDX-License-Identifier: MIT
/*
 * config.json of a Llama-family checkpoint.  Field names and defaults follow
 * transformers' LlamaConfig; both the classic layout (rope_theta +
 * rope_scaling) and the newer rope_parameters object are understood.
 */
#include "rbln_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/token_ids.h"
#include "util/file.h"
#include "util/json.h"

#define MAX_DIM ((int64_t)1 << 24)	/* far above any real width; keeps products in range */

static int parse_dtype_field(const struct rbln_json_scope *s, json_object *root, const char *key,
			     enum rbln_dtype *out)
{
	static const struct { const char *name; enum rbln_dtype dt; } names[] = {
		{ "bfloat16", RBLN_TENSOR_BF16 },
		{ "float16", RBLN_TENSOR_F16 },
		{ "half", RBLN_TENSOR_F16 },
		{ "float32", RBLN_TENSOR_F32 },
		{ "float", RBLN_TENSOR_F32 },
	};
	const char *str;
	size_t i;
	int rc = rbln_json_get_string(s, root, key, false, &str, NULL);

	if (rc <= 0)
		return rc;
	if (strncmp(str, "torch.", 6) == 0)
		str += 6;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(str, names[i].name) == 0) {
			*out = names[i].dt;
			return 1;
		}
	}
	return rbln_json_field_error(s, key, -ENOTSUP,
				     "is \"%s\"; supported: bfloat16, float16, float32", str);
}

/* torch_dtype (transformers 4.x) or dtype (5.x); both present must agree. */
static int parse_dtype(const struct rbln_json_scope *s, json_object *root, enum rbln_dtype *out)
{
	enum rbln_dtype a = RBLN_TENSOR_UNKNOWN, b = RBLN_TENSOR_UNKNOWN;
	int rc;

	rc = parse_dtype_field(s, root, "torch_dtype", &a);
	if (rc < 0)
		return rc;
	rc = parse_dtype_field(s, root, "dtype", &b);
	if (rc < 0)
		return rc;
	if (a != RBLN_TENSOR_UNKNOWN && b != RBLN_TENSOR_UNKNOWN && a != b)
		return rbln_json_field_error(s, "dtype", -EINVAL, "(%s) contradicts torch_dtype (%s)",
					     rbln_dtype_name(b), rbln_dtype_name(a));
	*out = a != RBLN_TENSOR_UNKNOWN ? a : b;
	return 0;
}

static int parse_rope_type(const struct rbln_json_scope *s, json_object *obj,
			   enum rbln_rope_type *type)
{
	const char *key = "rope_type", *name = NULL;
	int rc = rbln_json_get_string(s, obj, key, false, &name, NULL);

	if (rc < 0)
		return rc;
	if (rc == 0) {
		/* Older configs spell it "type". */
		key = "type";
		rc = rbln_json_get_string(s, obj, key, false, &name, NULL);
		if (rc < 0)
			return rc;
	}
	if (rc == 0 || strcmp(name, "default") == 0) {
		*type = RBLN_ROPE_DEFAULT;
		return 0;
	}
	if (strcmp(name, "linear") == 0) {
		*type = RBLN_ROPE_LINEAR;
		return 0;
	}
	if (strcmp(name, "llama3") == 0) {
		*type = RBLN_ROPE_LLAMA3;
		return 0;
	}
	return rbln_json_field_error(s, key, -ENOTSUP,
				     "is \"%s\"; supported: default, linear, llama3", name);
}

/* The scaling fields, shared by rope_scaling and rope_parameters objects. */
static int parse_rope_scaling(const struct rbln_json_scope *s, json_object *obj,
			      struct rbln_rope_config *rope)
{
	int rc = parse_rope_type(s, obj, &rope->type);

	if (rc < 0)
		return rc;
	if (rope->type == RBLN_ROPE_DEFAULT)
		return 0;
	rc = rbln_json_get_double(s, obj, "factor", true, 1e-6, 1e6, &rope->factor);
	if (rc < 0 || rope->type == RBLN_ROPE_LINEAR)
		return rc < 0 ? rc : 0;

	rc = rbln_json_get_double(s, obj, "low_freq_factor", true, 1e-6, 1e6,
				  &rope->low_freq_factor);
	if (rc < 0)
		return rc;
	rc = rbln_json_get_double(s, obj, "high_freq_factor", true, 1e-6, 1e6,
				  &rope->high_freq_factor);
	if (rc < 0)
		return rc;
	/* The smoothing divides by their difference. */
	if (rope->high_freq_factor <= rope->low_freq_factor)
		return rbln_json_field_error(s, "high_freq_factor", -EINVAL,
					     "(%g) must be greater than low_freq_factor (%g)",
					     rope->high_freq_factor, rope->low_freq_factor);
	rc = rbln_json_get_int(s, obj, "original_max_position_embeddings", true, 1, MAX_DIM,
			       &rope->original_max_position_embeddings);
	return rc < 0 ? rc : 0;
}

static int parse_rope(const char *name, json_object *root, struct rbln_llama_config *cfg,
		      struct rbln_error *err)
{
	struct rbln_json_scope top = { name, "", err };
	struct rbln_json_scope params = { name, "rope_parameters.", err };
	struct rbln_json_scope scaling = { name, "rope_scaling.", err };
	json_object *obj = NULL;
	int rc;

	cfg->rope.type = RBLN_ROPE_DEFAULT;
	cfg->rope.theta = 10000.0;
	rc = rbln_json_get_double(&top, root, "rope_theta", false, 1e-6, 1e12, &cfg->rope.theta);
	if (rc < 0)
		return rc;

	/* transformers 5 moves theta and scaling into rope_parameters; when
	 * present it is authoritative, as it is for transformers. */
	rc = rbln_json_get_typed(&top, root, "rope_parameters", false, json_type_object, &obj);
	if (rc < 0)
		return rc;
	if (rc > 0) {
		rc = rbln_json_get_double(&params, obj, "rope_theta", false, 1e-6, 1e12,
					  &cfg->rope.theta);
		if (rc < 0)
			return rc;
		return parse_rope_scaling(&params, obj, &cfg->rope);
	}
	rc = rbln_json_get_typed(&top, root, "rope_scaling", false, json_type_object, &obj);
	if (rc <= 0)
		return rc;
	return parse_rope_scaling(&scaling, obj, &cfg->rope);
}

static int check_identity(const struct rbln_json_scope *s, json_object *root)
{
	json_object *arr;
	const char *str;
	size_t i, n;
	bool causal_lm = false;
	int rc;

	rc = rbln_json_get_string(s, root, "model_type", true, &str, NULL);
	if (rc < 0)
		return rc;
	if (strcmp(str, "llama") != 0)
		return rbln_json_field_error(s, "model_type", -ENOTSUP,
					     "is \"%s\"; this engine runs \"llama\" models", str);
	rc = rbln_json_get_typed(s, root, "architectures", false, json_type_array, &arr);
	if (rc < 0)
		return rc;
	if (rc > 0) {
		n = json_object_array_length(arr);
		for (i = 0; i < n; i++) {
			json_object *e = json_object_array_get_idx(arr, i);

			if (json_object_is_type(e, json_type_string) &&
			    strcmp(json_object_get_string(e), "LlamaForCausalLM") == 0)
				causal_lm = true;
		}
		if (!causal_lm)
			return rbln_json_field_error(s, "architectures", -ENOTSUP,
						     "does not list LlamaForCausalLM");
	}
	rc = rbln_json_get_string(s, root, "hidden_act", false, &str, NULL);
	if (rc < 0)
		return rc;
	if (rc > 0 && strcmp(str, "silu") != 0)
		return rbln_json_field_error(s, "hidden_act", -ENOTSUP,
					     "is \"%s\"; Llama uses \"silu\"", str);
	if (json_object_object_get_ex(root, "quantization_config", NULL))
		return rbln_json_field_error(s, "quantization_config", -ENOTSUP,
					     "is present; quantized checkpoints are not supported");
	return 0;
}

static int parse_shape(const struct rbln_json_scope *s, json_object *root,
		       struct rbln_llama_config *cfg)
{
	const struct {
		const char *key;
		int64_t *dst;
		int64_t max;
	} dims[] = {
		{ "vocab_size", &cfg->vocab_size, INT32_MAX },
		{ "hidden_size", &cfg->hidden_size, MAX_DIM },
		{ "intermediate_size", &cfg->intermediate_size, MAX_DIM },
		{ "num_hidden_layers", &cfg->num_hidden_layers, 4096 },
		{ "num_attention_heads", &cfg->num_attention_heads, 65536 },
		{ "max_position_embeddings", &cfg->max_position_embeddings, MAX_DIM },
	};
	size_t i;
	int rc;

	for (i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
		rc = rbln_json_get_int(s, root, dims[i].key, true, 1, dims[i].max, dims[i].dst);
		if (rc < 0)
			return rc;
	}
	cfg->num_key_value_heads = cfg->num_attention_heads;
	rc = rbln_json_get_int(s, root, "num_key_value_heads", false, 1, cfg->num_attention_heads,
			       &cfg->num_key_value_heads);
	if (rc < 0)
		return rc;
	if (cfg->num_attention_heads % cfg->num_key_value_heads)
		return rbln_json_field_error(s, "num_key_value_heads", -EINVAL,
					     "(%lld) must divide num_attention_heads (%lld)",
					     (long long)cfg->num_key_value_heads,
					     (long long)cfg->num_attention_heads);
	rc = rbln_json_get_int(s, root, "head_dim", false, 2, MAX_DIM, &cfg->head_dim);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		if (cfg->hidden_size % cfg->num_attention_heads)
			return rbln_json_field_error(s, "hidden_size", -EINVAL,
						     "(%lld) is not divisible by num_attention_heads (%lld) and no head_dim is given",
						     (long long)cfg->hidden_size,
						     (long long)cfg->num_attention_heads);
		cfg->head_dim = cfg->hidden_size / cfg->num_attention_heads;
	}
	/* RoPE rotates dimension pairs. */
	if (cfg->head_dim % 2)
		return rbln_json_field_error(s, "head_dim", -EINVAL, "(%lld) must be even",
					     (long long)cfg->head_dim);
	return 0;
}

static int parse_flags(const struct rbln_json_scope *s, json_object *root,
		       struct rbln_llama_config *cfg)
{
	int rc;

	cfg->rms_norm_eps = 1e-6;	/* LlamaConfig's default */
	rc = rbln_json_get_double(s, root, "rms_norm_eps", false, 1e-30, 1.0, &cfg->rms_norm_eps);
	if (rc < 0)
		return rc;
	if (cfg->rms_norm_eps <= 0)
		return rbln_json_field_error(s, "rms_norm_eps", -EINVAL, "must be positive");
	rc = rbln_json_get_bool(s, root, "tie_word_embeddings", false, &cfg->tie_word_embeddings);
	if (rc < 0)
		return rc;
	rc = rbln_json_get_bool(s, root, "attention_bias", false, &cfg->attention_bias);
	if (rc < 0)
		return rc;
	rc = rbln_json_get_bool(s, root, "mlp_bias", false, &cfg->mlp_bias);
	return rc < 0 ? rc : 0;
}

static int check_token_ids(const struct rbln_json_scope *s, const struct rbln_llama_config *cfg)
{
	size_t i;

	if (cfg->bos_token_id >= cfg->vocab_size)
		return rbln_json_field_error(s, "bos_token_id", -EINVAL,
					     "(%lld) is outside the vocabulary (vocab_size %lld)",
					     (long long)cfg->bos_token_id, (long long)cfg->vocab_size);
	if (cfg->pad_token_id >= cfg->vocab_size)
		return rbln_json_field_error(s, "pad_token_id", -EINVAL,
					     "(%lld) is outside the vocabulary (vocab_size %lld)",
					     (long long)cfg->pad_token_id, (long long)cfg->vocab_size);
	for (i = 0; i < cfg->n_eos_token_ids; i++)
		if (cfg->eos_token_ids[i] >= cfg->vocab_size)
			return rbln_json_field_error(s, "eos_token_id", -EINVAL,
						     "(%lld) is outside the vocabulary (vocab_size %lld)",
						     (long long)cfg->eos_token_ids[i],
						     (long long)cfg->vocab_size);
	return 0;
}

static int parse_tokens(const struct rbln_json_scope *s, json_object *root,
			struct rbln_llama_config *cfg)
{
	int rc;

	cfg->bos_token_id = -1;
	cfg->pad_token_id = -1;
	rc = rbln_json_get_int(s, root, "bos_token_id", false, 0, INT32_MAX, &cfg->bos_token_id);
	if (rc < 0)
		return rc;
	rc = rbln_json_get_int(s, root, "pad_token_id", false, 0, INT32_MAX, &cfg->pad_token_id);
	if (rc < 0)
		return rc;
	rc = rbln_json_get_token_ids(s, root, "eos_token_id", cfg->eos_token_ids, RBLN_MAX_EOS_IDS,
				     &cfg->n_eos_token_ids);
	if (rc < 0)
		return rc;
	return check_token_ids(s, cfg);
}

int rbln_llama_config_parse(const char *text, size_t len, const char *name,
			    struct rbln_llama_config *cfg, struct rbln_error *err)
{
	struct rbln_json_scope s = { name, "", err };
	json_object *root;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	rc = rbln_json_parse(text, len, name, &root, err);
	if (rc)
		return rc;
	if (!json_object_is_type(root, json_type_object)) {
		rc = rbln_error_set(err, -EINVAL, "%s: expected a JSON object, got %s", name,
				    rbln_json_type_name(root));
		goto out;
	}
	rc = check_identity(&s, root);
	if (!rc)
		rc = parse_shape(&s, root, cfg);
	if (!rc)
		rc = parse_flags(&s, root, cfg);
	if (!rc)
		rc = parse_rope(name, root, cfg, err);
	if (!rc)
		rc = parse_dtype(&s, root, &cfg->dtype);
	if (!rc)
		rc = parse_tokens(&s, root, cfg);
out:
	json_object_put(root);
	return rc;
}

int rbln_llama_config_load(const char *model_dir, struct rbln_llama_config *cfg,
			   struct rbln_error *err)
{
	char *path = rbln_path_join(model_dir, "config.json");
	char *text = NULL;
	size_t len;
	int rc;

	if (!path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rc = rbln_file_read_max(path, RBLN_JSON_FILE_MAX, &text, &len, err);
	if (!rc)
		rc = rbln_llama_config_parse(text, len, path, cfg, err);
	free(text);
	free(path);
	return rc;
}
