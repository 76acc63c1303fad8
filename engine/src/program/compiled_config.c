// SPDX-License-Identifier: MIT
/*
 * rbln_config.json: the compile parameters of a compiled directory.
 *
 * Reading re-applies the compile rules (rbln_compile_resolve()) to the
 * recorded values with the copied config.json, and requires the result to
 * equal what is recorded: a hand-edited or damaged file is refused with
 * the rule it breaks, and the runtime can trust every field.
 */
#include "program/compiled_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"
#include "util/json.h"

static const char *dtype_json(enum rbln_dtype dt)
{
	switch (dt) {
	case RBLN_DTYPE_BF16:
		return "bfloat16";
	case RBLN_DTYPE_F16:
		return "float16";
	default:
		return "float32";
	}
}

int compiled_dtype_parse(const char *s, enum rbln_dtype *dt)
{
	if (!strcmp(s, "bfloat16") || !strcmp(s, "bf16"))
		*dt = RBLN_DTYPE_BF16;
	else if (!strcmp(s, "float16") || !strcmp(s, "fp16") || !strcmp(s, "f16"))
		*dt = RBLN_DTYPE_F16;
	else if (!strcmp(s, "float32") || !strcmp(s, "fp32") || !strcmp(s, "f32"))
		*dt = RBLN_DTYPE_F32;
	else
		return -EINVAL;
	return 0;
}

const char *compiled_dtype_name(enum rbln_dtype dt)
{
	return dtype_json(dt);
}

static int add(json_object *o, const char *key, json_object *v)
{
	if (!v)
		return -ENOMEM;
	json_object_object_add(o, key, v);
	return 0;
}

int compiled_config_write(const char *dir, const struct rbln_compiled_config *cc,
			  struct rbln_error *err)
{
	json_object *o = json_object_new_object(), *list = json_object_new_array();
	char id[32], *path = NULL, *tmp = NULL;
	const char *text;
	FILE *f = NULL;
	size_t i;
	int rc = 0;

	if (!o || !list) {
		rc = -ENOMEM;
		goto out;
	}
	snprintf(id, sizeof(id), "%016llx", (unsigned long long)cc->compile_id);
	for (i = 0; i < cc->n_decoder_batch_sizes && !rc; i++)
		rc = json_object_array_add(list,
					   json_object_new_int64(cc->decoder_batch_sizes[i]));
	rc |= add(o, "format", json_object_new_int64(cc->format));
	rc |= add(o, "model_type", json_object_new_string("llama"));
	rc |= add(o, "tensor_parallel_size", json_object_new_int64(cc->tensor_parallel_size));
	rc |= add(o, "batch_size", json_object_new_int64(cc->batch_size));
	rc |= add(o, "max_seq_len", json_object_new_int64(cc->max_seq_len));
	rc |= add(o, "attn_impl", json_object_new_string(rbln_attn_impl_name(cc->attn_impl)));
	if (cc->attn_impl == RBLN_ATTN_FLASH)
		rc |= add(o, "kvcache_partition_len",
			  json_object_new_int64(cc->kvcache_partition_len));
	else
		json_object_object_add(o, "kvcache_partition_len", NULL);
	rc |= add(o, "kvcache_block_size", json_object_new_int64(cc->kvcache_block_size));
	rc |= add(o, "kvcache_num_blocks", json_object_new_int64(cc->kvcache_num_blocks));
	json_object_object_add(o, "decoder_batch_sizes", list);
	list = NULL;
	rc |= add(o, "prefill_chunk_size", json_object_new_int64(cc->prefill_chunk_size));
	rc |= add(o, "dtype", json_object_new_string(dtype_json(cc->dtype)));
	rc |= add(o, "kv_cache_dtype", json_object_new_string(dtype_json(cc->kv_cache_dtype)));
	rc |= add(o, "dummy_weights", json_object_new_boolean(cc->dummy_weights));
	rc |= add(o, "compile_id", json_object_new_string(id));
	if (rc) {
		rc = -ENOMEM;
		goto out;
	}
	path = rbln_path_join(dir, "rbln_config.json");
	tmp = rbln_path_join(dir, "rbln_config.json.tmp");
	if (!path || !tmp) {
		rc = -ENOMEM;
		goto out;
	}
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
					      JSON_C_TO_STRING_SPACED |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	f = fopen(tmp, "wx");	/* O_EXCL: never through a planted file or link */
	if (!f || fprintf(f, "%s\n", text) < 0 || fclose(f)) {
		rc = rbln_error_set(err, -errno, "%s: cannot write: %s", tmp, strerror(errno));
		f = NULL;
		goto out;
	}
	f = NULL;
	if (rename(tmp, path))
		rc = rbln_error_set(err, -errno, "%s: cannot rename: %s", tmp, strerror(errno));
out:
	if (rc == -ENOMEM)
		rbln_error_set(err, rc, "out of memory");
	json_object_put(list);
	json_object_put(o);
	free(path);
	free(tmp);
	return rc;
}

static int get_u32(const struct rbln_json_scope *s, json_object *o, const char *key,
		   bool required, uint32_t *out)
{
	int64_t v = 0;
	int rc = rbln_json_get_int(s, o, key, required, 1, INT32_MAX, &v);

	if (rc > 0)
		*out = (uint32_t)v;
	return rc < 0 ? rc : 0;
}

static int get_dtype(const struct rbln_json_scope *s, json_object *o, const char *key,
		     enum rbln_dtype *dt)
{
	const char *str;
	int rc = rbln_json_get_string(s, o, key, true, &str, NULL);

	if (rc < 0)
		return rc;
	if (compiled_dtype_parse(str, dt))
		return rbln_json_field_error(s, key, -EINVAL, "is \"%s\"; expected bfloat16, "
					     "float16 or float32", str);
	return 0;
}

/* Reads the recorded values as compile options plus the fields resolve cannot derive. */
static int read_fields(const struct rbln_json_scope *s, json_object *o,
		       struct rbln_compile_options *opt, struct rbln_compiled_config *rec)
{
	json_object *list;
	const char *str;
	int64_t fmt;
	size_t i, n;
	int rc;

	rc = rbln_json_get_int(s, o, "format", true, 0, INT32_MAX, &fmt);
	if (rc < 0)
		return rc;
	if (fmt != RBLN_COMPILED_FORMAT)
		return rbln_json_field_error(s, "format", -EINVAL, "is %lld; this engine reads "
					     "format %d: recompile the model", (long long)fmt,
					     RBLN_COMPILED_FORMAT);
	rc = rbln_json_get_string(s, o, "model_type", true, &str, NULL);
	if (rc < 0)
		return rc;
	if (strcmp(str, "llama"))
		return rbln_json_field_error(s, "model_type", -ENOTSUP, "is \"%s\"; only llama "
					     "is supported", str);
	if ((rc = get_u32(s, o, "tensor_parallel_size", true, &opt->tensor_parallel_size)) ||
	    (rc = get_u32(s, o, "batch_size", true, &opt->batch_size)) ||
	    (rc = get_u32(s, o, "max_seq_len", true, &opt->max_seq_len)) ||
	    (rc = get_u32(s, o, "kvcache_partition_len", false, &opt->kvcache_partition_len)) ||
	    (rc = get_u32(s, o, "kvcache_block_size", true, &opt->kvcache_block_size)) ||
	    (rc = get_u32(s, o, "kvcache_num_blocks", true, &opt->kvcache_num_blocks)) ||
	    (rc = get_u32(s, o, "prefill_chunk_size", true, &opt->prefill_chunk_size)) ||
	    (rc = get_dtype(s, o, "dtype", &opt->dtype)) ||
	    (rc = get_dtype(s, o, "kv_cache_dtype", &opt->kv_cache_dtype)))
		return rc;
	rc = rbln_json_get_string(s, o, "attn_impl", true, &str, NULL);
	if (rc < 0)
		return rc;
	if (strcmp(str, rbln_attn_impl_name(opt->kvcache_partition_len ? RBLN_ATTN_FLASH :
					    RBLN_ATTN_EAGER)))
		return rbln_json_field_error(s, "attn_impl", -EINVAL, "is \"%s\", which "
					     "contradicts kvcache_partition_len", str);
	rc = rbln_json_get_bool(s, o, "dummy_weights", true, &opt->dummy_weights);
	if (rc < 0)
		return rc;
	rc = rbln_json_get_typed(s, o, "decoder_batch_sizes", true, json_type_array, &list);
	if (rc < 0)
		return rc;
	n = json_object_array_length(list);
	if (!n || n > RBLN_MAX_DECODER_BATCHES)
		return rbln_json_field_error(s, "decoder_batch_sizes", -EINVAL, "must have 1 to "
					     "%d entries", RBLN_MAX_DECODER_BATCHES);
	for (i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(list, i);

		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 1 ||
		    json_object_get_int64(v) > INT32_MAX)
			return rbln_json_field_error(s, "decoder_batch_sizes", -EINVAL,
						     "entry %zu is not a positive integer", i);
		opt->decoder_batch_sizes[i] = (uint32_t)json_object_get_int64(v);
		rec->decoder_batch_sizes[i] = opt->decoder_batch_sizes[i];
	}
	opt->n_decoder_batch_sizes = n;
	rec->n_decoder_batch_sizes = n;
	rc = rbln_json_get_string(s, o, "compile_id", true, &str, NULL);
	if (rc < 0)
		return rc;
	{
		char *end;

		rec->compile_id = strtoull(str, &end, 16);
		if (strlen(str) != 16 || *end)
			return rbln_json_field_error(s, "compile_id", -EINVAL, "must be 16 hex "
						     "digits, got \"%s\"", str);
	}
	return 0;
}

int rbln_compiled_config_load(const char *dir, struct rbln_compiled_config *cc,
			      struct rbln_error *err)
{
	struct rbln_compile_options opt;
	struct rbln_compiled_config rec;
	struct rbln_llama_config model;
	json_object *o = NULL;
	char *path = rbln_path_join(dir, "rbln_config.json");
	struct rbln_json_scope s = { .file = path, .prefix = "", .err = err };
	size_t i;
	int rc;

	memset(&opt, 0, sizeof(opt));
	memset(&rec, 0, sizeof(rec));
	if (!path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rc = rbln_json_load_object(path, &o, err);
	if (rc)
		goto out;
	rc = read_fields(&s, o, &opt, &rec);
	if (rc)
		goto out;
	rc = rbln_llama_config_load(dir, &model, err);
	if (rc)
		goto out;
	rc = rbln_compile_resolve(&model, &opt, cc, err);
	if (rc) {
		rbln_error_prefix(err, "%s: ", path);
		goto out;
	}
	/* The list must be recorded as resolved: sorted, with batch_size in it. */
	for (i = 0; i < rec.n_decoder_batch_sizes; i++)
		if (cc->n_decoder_batch_sizes != rec.n_decoder_batch_sizes ||
		    cc->decoder_batch_sizes[i] != rec.decoder_batch_sizes[i]) {
			rc = rbln_error_set(err, -EINVAL, "%s: field 'decoder_batch_sizes' is "
					    "not in the compiled form (descending, including "
					    "batch_size %u)", path, cc->batch_size);
			goto out;
		}
	cc->compile_id = rec.compile_id;
out:
	json_object_put(o);
	free(path);
	return rc;
}
