// SPDX-License-Identifier: MIT
/*
 * model.json reading.  vLLM passes the file to AsyncEngineArgs(**json), so
 * an unknown key is an error there too; we say which key and suggest the
 * nearest known one, because a misspelt max_model_len silently ignored
 * would serve the wrong context length.
 */
#include "model_json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "util/file.h"
#include "util/text.h"
#include "util/json.h"

/* Engine arguments accepted without effect, with the reason. */
static const struct {
	const char *name;
	const char *why;
} inert[] = {
	{ "enforce_eager", "there are no CUDA graphs" },
	{ "trust_remote_code", "no remote code is run" },
	{ "gpu_memory_utilization", "the KV cache is sized by the compiled model" },
	{ "swap_space", "preempted sequences are recomputed, not swapped" },
	{ "enable_chunked_prefill", "prefills are always chunked" },
	{ "tokenizer_mode", "the fast tokenizer (tokenizer.json) is always used" },
	{ "disable_custom_all_reduce", "collectives are libnpu's" },
	{ "max_seq_len_to_capture", "there are no CUDA graphs" },
};

static const char *const known[] = {
	"model", "tokenizer", "max_num_seqs", "max_num_batched_tokens", "max_model_len",
	"block_size", "tensor_parallel_size", "device", "dtype", "seed", "max_logprobs",
	"disable_log_requests", "disable_log_stats", "enable_prefix_caching", "quantization",
	"pipeline_parallel_size",
};

static bool is_known(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(known[i], key))
			return true;
	for (i = 0; i < sizeof(inert) / sizeof(inert[0]); i++)
		if (!strcmp(inert[i].name, key))
			return true;
	return false;
}

static int unknown_key(const char *path, const char *key, struct rbln_error *err)
{
	const char *best = NULL;
	size_t i, bd = 4;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		size_t d = rbln_edit_distance(key, known[i]);

		if (d < bd) {
			bd = d;
			best = known[i];
		}
	}
	if (best)
		return rbln_error_set(err, -EINVAL, "%s: unknown field '%s' (did you mean '%s'?)",
				      path, key, best);
	return rbln_error_set(err, -EINVAL, "%s: unknown field '%s'", path, key);
}

/*
 * The Llama 2 tutorial writes "disable_log_requests": "true"; vLLM takes
 * any non-empty string as true there, we take the two spellings that mean it.
 */
static int get_flag(const struct rbln_json_scope *s, json_object *obj, const char *key,
		    bool *out)
{
	json_object *v;

	if (json_object_object_get_ex(obj, key, &v) && json_object_is_type(v, json_type_string)) {
		const char *t = json_object_get_string(v);

		if (!strcmp(t, "true") || !strcmp(t, "True")) {
			*out = true;
			return 1;
		}
		if (!strcmp(t, "false") || !strcmp(t, "False")) {
			*out = false;
			return 1;
		}
		return rbln_json_field_error(s, key, -EINVAL, "must be true or false, got \"%s\"",
					     t);
	}
	return rbln_json_get_bool(s, obj, key, false, out);
}

static int dup_field(const struct rbln_json_scope *s, json_object *obj, const char *key,
		     bool required, char **out)
{
	const char *v;
	size_t len;
	int rc = rbln_json_get_string(s, obj, key, required, &v, &len);

	if (rc <= 0)
		return rc;
	if (!len)
		return rbln_json_field_error(s, key, -EINVAL, "must not be empty");
	if (strlen(v) != len)
		return rbln_json_field_error(s, key, -EINVAL, "contains a NUL character");
	*out = strdup(v);
	return *out ? 1 : rbln_error_set(s->err, -ENOMEM, "out of memory");
}

static int read_fields(const struct rbln_json_scope *s, json_object *o,
		       struct serve_model_json *mj)
{
	static const struct {
		const char *key;
		size_t off;
	} ints[] = {
		{ "max_num_seqs", offsetof(struct serve_model_json, max_num_seqs) },
		{ "max_num_batched_tokens", offsetof(struct serve_model_json, max_num_batched_tokens) },
		{ "max_model_len", offsetof(struct serve_model_json, max_model_len) },
		{ "block_size", offsetof(struct serve_model_json, block_size) },
		{ "tensor_parallel_size", offsetof(struct serve_model_json, tensor_parallel_size) },
	};
	int64_t pp = 1;
	bool b = false;
	size_t i;
	int rc;

	rc = dup_field(s, o, "model", true, &mj->model);
	if (rc < 0)
		return rc;
	rc = dup_field(s, o, "tokenizer", false, &mj->tokenizer);
	if (rc < 0)
		return rc;
	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		rc = rbln_json_get_int(s, o, ints[i].key, false, 1, INT32_MAX,
				       (int64_t *)((char *)mj + ints[i].off));
		if (rc < 0)
			return rc;
	}
	rc = dup_field(s, o, "device", false, &mj->device);
	if (rc < 0)
		return rc;
	if (mj->device && strcmp(mj->device, "rbln") && strcmp(mj->device, "auto"))
		return rbln_json_field_error(s, "device", -EINVAL, "must be \"rbln\" (or "
					     "\"auto\"), got \"%s\"", mj->device);
	rc = dup_field(s, o, "dtype", false, &mj->dtype);
	if (rc < 0)
		return rc;
	if (mj->dtype) {
		static const char *const dtypes[] = { "auto", "bfloat16", "float16", "half",
						      "float32", "float" };

		for (i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
			if (!strcmp(mj->dtype, dtypes[i]))
				break;
		if (i == sizeof(dtypes) / sizeof(dtypes[0]))
			return rbln_json_field_error(s, "dtype", -EINVAL, "must be one of auto, "
						     "bfloat16, float16, half, float32, float; "
						     "got \"%s\"", mj->dtype);
	}
	rc = rbln_json_get_int(s, o, "seed", false, INT64_MIN, INT64_MAX, &mj->seed);
	if (rc < 0)
		return rc;
	mj->has_seed = rc > 0;
	rc = rbln_json_get_int(s, o, "max_logprobs", false, 0, 1024, &mj->max_logprobs);
	if (rc < 0)
		return rc;
	rc = get_flag(s, o, "disable_log_requests", &mj->disable_log_requests);
	if (rc < 0)
		return rc;
	rc = get_flag(s, o, "disable_log_stats", &mj->disable_log_stats);
	if (rc < 0)
		return rc;
	rc = get_flag(s, o, "enable_prefix_caching", &b);
	if (rc < 0)
		return rc;
	if (b)
		return rbln_json_field_error(s, "enable_prefix_caching", -EINVAL,
					     "is not supported: KV blocks are not shared "
					     "between requests");
	if (json_object_object_get_ex(o, "quantization", NULL)) {
		json_object *q;

		json_object_object_get_ex(o, "quantization", &q);
		if (q && !json_object_is_type(q, json_type_null))
			return rbln_json_field_error(s, "quantization", -EINVAL,
						     "is not supported: weights run in the "
						     "compiled dtype");
	}
	rc = rbln_json_get_int(s, o, "pipeline_parallel_size", false, 1, 64, &pp);
	if (rc < 0)
		return rc;
	if (pp != 1)
		return rbln_json_field_error(s, "pipeline_parallel_size", -EINVAL,
					     "must be 1: models are split by tensor "
					     "parallelism only");
	for (i = 0; i < sizeof(inert) / sizeof(inert[0]); i++) {
		json_object *v;

		if (json_object_object_get_ex(o, inert[i].name, &v) &&
		    (json_object_is_type(v, json_type_object) ||
		     json_object_is_type(v, json_type_array)))
			return rbln_json_field_error(s, inert[i].name, -EINVAL,
						     "must be a plain value (it has no effect "
						     "here: %s)", inert[i].why);
	}
	/* vLLM requires a step to fit one token of every running sequence. */
	if (mj->max_num_batched_tokens && mj->max_num_seqs &&
	    mj->max_num_batched_tokens < mj->max_num_seqs)
		return rbln_json_field_error(s, "max_num_batched_tokens", -EINVAL,
					     "(%lld) must be at least max_num_seqs (%lld)",
					     (long long)mj->max_num_batched_tokens,
					     (long long)mj->max_num_seqs);
	return 0;
}

int serve_model_json_parse(const char *text, size_t len, const char *path,
			   struct serve_model_json *mj, struct rbln_error *err)
{
	struct rbln_json_scope s = { .file = path, .prefix = "", .err = err };
	json_object *o;
	int rc;

	memset(mj, 0, sizeof(*mj));
	mj->file = strdup(path);
	if (!mj->file)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rc = rbln_json_parse(text, len, path, &o, err);
	if (rc) {
		serve_model_json_free(mj);
		return rc;
	}
	if (!json_object_is_type(o, json_type_object)) {
		rc = rbln_error_set(err, -EINVAL, "%s: must be a JSON object, got %s", path,
				    rbln_json_type_name(o));
	} else {
		json_object_object_foreach(o, key, val) {
			(void)val;
			if (!is_known(key)) {
				rc = unknown_key(path, key, err);
				break;
			}
		}
		if (!rc)
			rc = read_fields(&s, o, mj);
	}
	json_object_put(o);
	if (rc)
		serve_model_json_free(mj);
	return rc;
}

int serve_model_json_load(const char *path, struct serve_model_json *mj,
			  struct rbln_error *err)
{
	char *text;
	size_t len;
	int rc;

	memset(mj, 0, sizeof(*mj));
	rc = rbln_file_read(path, &text, &len, err);
	if (rc)
		return rc;
	rc = serve_model_json_parse(text, len, path, mj, err);
	free(text);
	return rc;
}

void serve_model_json_free(struct serve_model_json *mj)
{
	free(mj->file);
	free(mj->model);
	free(mj->tokenizer);
	free(mj->device);
	free(mj->dtype);
	memset(mj, 0, sizeof(*mj));
}
