// SPDX-License-Identifier: MIT
/*
 * rbln_config.json: the one reader and writer of the file.  Part of the
 * front-end library, so every front end reads it the same way: the
 * runtime through rbln_compiled_config_load() (compiled_load.c, which
 * re-applies the compile rules) and rbln-serve, which checks model.json
 * against a compiled directory that may come from the RBLN SDK.
 */
#include "config/compiled_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"
#include "util/json.h"
#include "util/text.h"

const char *rbln_attn_impl_name(enum rbln_attn_impl a)
{
	return a == RBLN_ATTN_FLASH ? "flash_attn" : "eager";
}

const char *const rbln_quantize_names[] = {
	[RBLN_QUANT_NONE] = "none", [RBLN_QUANT_W8A16] = "w8a16", NULL,
};

const char *const rbln_matmul_precision_names[] = {
	[RBLN_MATMUL_F32] = "float32", [RBLN_MATMUL_BF16] = "bf16", NULL,
};

const char *const rbln_weight_layout_names[] = {
	[RBLN_WEIGHTS_AUTO] = "auto", [RBLN_WEIGHTS_SPACED] = "spaced",
	[RBLN_WEIGHTS_PACKED16] = "packed16", NULL,
};

/*
 * E_name() and E_parse() of enum E, whose spellings are the table E_names
 * (rbln_compiled_config.h declares them): rbln_name_of() and
 * rbln_name_index() with the enum's type.
 */
#define ENUM_SPELLINGS(E)							\
	const char *E##_name(enum E v)						\
	{									\
		return rbln_name_of(E##_names, v);				\
	}									\
										\
	int E##_parse(const char *s, enum E *out)				\
	{									\
		int v = rbln_name_index(E##_names, s);				\
										\
		if (v >= 0)							\
			*out = (enum E)v;					\
		return v < 0 ? v : 0;						\
	}

ENUM_SPELLINGS(rbln_quantize)		/* rbln_quantize_name(), rbln_quantize_parse() */
ENUM_SPELLINGS(rbln_matmul_precision)	/* rbln_matmul_precision_name(), _parse() */
ENUM_SPELLINGS(rbln_weight_layout)	/* rbln_weight_layout_name(), _parse() */

static const char *dtype_json(enum rbln_dtype dt)
{
	switch (dt) {
	case RBLN_TENSOR_BF16:
		return "bfloat16";
	case RBLN_TENSOR_F16:
		return "float16";
	default:
		return "float32";
	}
}

int rbln_compiled_dtype_parse(const char *s, enum rbln_dtype *dt)
{
	if (!strcmp(s, "bfloat16") || !strcmp(s, "bf16"))
		*dt = RBLN_TENSOR_BF16;
	else if (!strcmp(s, "float16") || !strcmp(s, "fp16") || !strcmp(s, "f16"))
		*dt = RBLN_TENSOR_F16;
	else if (!strcmp(s, "float32") || !strcmp(s, "fp32") || !strcmp(s, "f32"))
		*dt = RBLN_TENSOR_F32;
	else
		return -EINVAL;
	return 0;
}

const char *rbln_compiled_dtype_name(enum rbln_dtype dt)
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

int rbln_compiled_config_write(const char *dir, const struct rbln_compiled_config *cc,
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
	rc |= add(o, "quantize", json_object_new_string(rbln_quantize_name(cc->quantize)));
	rc |= add(o, "matmul_precision",
		  json_object_new_string(rbln_matmul_precision_name(cc->matmul_precision)));
	rc |= add(o, "weight_layout",
		  json_object_new_string(rbln_weight_layout_name(cc->weight_layout)));
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
	if (rbln_compiled_dtype_parse(str, dt))
		return rbln_json_field_error(s, key, -EINVAL, "is \"%s\"; expected bfloat16, "
					     "float16 or float32", str);
	return 0;
}

/*
 * A key spelled as one of @names (rbln_name_index()): its value, or a
 * negative error.  Absent, the first value (0): "quantize" and
 * "matmul_precision" are absent in directories compiled before they
 * existed, whose programs have float weights and multiply float32
 * activations.
 */
static int get_name(const struct rbln_json_scope *s, json_object *o, const char *key,
		    const char *const names[])
{
	const char *str;
	char choices[64];
	int rc = rbln_json_get_string(s, o, key, false, &str, NULL);

	if (rc <= 0)
		return rc;
	rc = rbln_name_index(names, str);
	if (rc >= 0)
		return rc;
	rbln_name_choices(names, " or ", choices, sizeof(choices));
	return rbln_json_field_error(s, key, -EINVAL, "is \"%s\"; expected %s", str, choices);
}

/* What only this engine's compiler writes, first: which format and model. */
static int read_format(const struct rbln_json_scope *s, json_object *o,
		       struct rbln_compiled_config *cc)
{
	const char *str;
	int64_t fmt;
	int rc;

	rc = rbln_json_get_int(s, o, "format", true, 0, INT32_MAX, &fmt);
	if (rc < 0)
		return rc;
	if (fmt != RBLN_COMPILED_FORMAT)
		return rbln_json_field_error(s, "format", -EINVAL, "is %lld; this engine reads "
					     "format %d: recompile the model", (long long)fmt,
					     RBLN_COMPILED_FORMAT);
	cc->format = (uint32_t)fmt;
	rc = rbln_json_get_string(s, o, "model_type", true, &str, NULL);
	if (rc < 0)
		return rc;
	if (strcmp(str, "llama"))
		return rbln_json_field_error(s, "model_type", -ENOTSUP, "is \"%s\"; only llama "
					     "is supported", str);
	return 0;
}

/* The sizes of the compiled programs: the keys every compiler of the format writes. */
static int read_sizes(const struct rbln_json_scope *s, json_object *o, bool all,
		      struct rbln_compiled_config *cc)
{
	int rc;

	if ((rc = get_u32(s, o, "tensor_parallel_size", all, &cc->tensor_parallel_size)) ||
	    (rc = get_u32(s, o, "batch_size", all, &cc->batch_size)) ||
	    (rc = get_u32(s, o, "max_seq_len", all, &cc->max_seq_len)) ||
	    (rc = get_u32(s, o, "kvcache_partition_len", false, &cc->kvcache_partition_len)) ||
	    (rc = get_u32(s, o, "kvcache_block_size", all, &cc->kvcache_block_size)) ||
	    (rc = get_u32(s, o, "kvcache_num_blocks", all, &cc->kvcache_num_blocks)) ||
	    (rc = get_u32(s, o, "prefill_chunk_size", all, &cc->prefill_chunk_size)))
		return rc;
	cc->attn_impl = cc->kvcache_partition_len ? RBLN_ATTN_FLASH : RBLN_ATTN_EAGER;
	return 0;
}

/* This engine's data types, attention and weights. */
static int read_kinds(const struct rbln_json_scope *s, json_object *o,
		      struct rbln_compiled_config *cc)
{
	const char *str;
	int rc;

	if ((rc = get_dtype(s, o, "dtype", &cc->dtype)) ||
	    (rc = get_dtype(s, o, "kv_cache_dtype", &cc->kv_cache_dtype)))
		return rc;
	rc = get_name(s, o, "quantize", rbln_quantize_names);
	if (rc < 0)
		return rc;
	cc->quantize = (enum rbln_quantize)rc;
	rc = get_name(s, o, "matmul_precision", rbln_matmul_precision_names);
	if (rc < 0)
		return rc;
	cc->matmul_precision = (enum rbln_matmul_precision)rc;
	/* Absent: compiled before the spaced panels, whose matrices have none. */
	cc->weight_layout = RBLN_WEIGHTS_PACKED16;
	if (rbln_json_get_string(s, o, "weight_layout", false, &str, NULL) > 0) {
		/* A compiled layout, never "auto" (the first name). */
		rc = get_name(s, o, "weight_layout", rbln_weight_layout_names + 1);
		if (rc < 0)
			return rc;
		cc->weight_layout = (enum rbln_weight_layout)(rc + 1);
	}
	rc = rbln_json_get_string(s, o, "attn_impl", true, &str, NULL);
	if (rc < 0)
		return rc;
	if (strcmp(str, rbln_attn_impl_name(cc->attn_impl)))
		return rbln_json_field_error(s, "attn_impl", -EINVAL, "is \"%s\", which "
					     "contradicts kvcache_partition_len", str);
	rc = rbln_json_get_bool(s, o, "dummy_weights", true, &cc->dummy_weights);
	return rc < 0 ? rc : 0;
}

static int read_decoder_batches(const struct rbln_json_scope *s, json_object *o, bool all,
				struct rbln_compiled_config *cc)
{
	json_object *list;
	size_t i, n;
	int rc;

	rc = rbln_json_get_typed(s, o, "decoder_batch_sizes", all, json_type_array, &list);
	if (rc <= 0)
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
		cc->decoder_batch_sizes[i] = (uint32_t)json_object_get_int64(v);
	}
	cc->n_decoder_batch_sizes = n;
	return 0;
}

static int read_compile_id(const struct rbln_json_scope *s, json_object *o,
			   struct rbln_compiled_config *cc)
{
	const char *str;
	char *end;
	int rc = rbln_json_get_string(s, o, "compile_id", true, &str, NULL);

	if (rc < 0)
		return rc;
	cc->compile_id = strtoull(str, &end, 16);
	if (strlen(str) != 16 || *end)
		return rbln_json_field_error(s, "compile_id", -EINVAL, "must be 16 hex digits, "
					     "got \"%s\"", str);
	return 0;
}

/* In the order of the file as written, so the first bad key is the one named. */
static int read_keys(const struct rbln_json_scope *s, json_object *o, bool all,
		     struct rbln_compiled_config *cc)
{
	int rc = all ? read_format(s, o, cc) : 0;

	if (!rc)
		rc = read_sizes(s, o, all, cc);
	if (!rc && all)
		rc = read_kinds(s, o, cc);
	if (!rc)
		rc = read_decoder_batches(s, o, all, cc);
	if (!rc && all)
		rc = read_compile_id(s, o, cc);
	return rc;
}

int rbln_compiled_config_read(const char *dir, enum rbln_compiled_keys keys,
			      struct rbln_compiled_config *cc, struct rbln_error *err)
{
	char *path = rbln_path_join(dir, "rbln_config.json");
	struct rbln_json_scope s = { .file = path, .prefix = "", .err = err };
	bool all = keys == RBLN_COMPILED_ALL_KEYS;
	json_object *o = NULL;
	int rc;

	memset(cc, 0, sizeof(*cc));
	if (!path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rc = rbln_json_load_object(path, &o, err);
	if (!rc)
		rc = read_keys(&s, o, all, cc);
	json_object_put(o);
	free(path);
	return rc;
}
