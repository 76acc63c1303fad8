// SPDX-License-Identifier: MIT
/*
 * KServe v2 infer requests, as Triton reads them: tensors named and typed
 * as the model configuration declares, shapes checked against its dims
 * (with the batch dimension when max_batch_size > 0), data as JSON or in
 * the binary tensor data extension that tritonclient.http uses by default.
 * Every element of the prompt tensor is one prompt (the Llama 2 tutorial's
 * client sends three in a [3, 1] tensor); the response has the same shape.
 */
#include "request.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request_internal.h"
#include "util/json.h"
#include "util/utf8.h"

struct infer_state {
	const struct serve_model_config *cfg;
	struct serve_request *r;
	struct rbln_error *err;
	const char *bin;	/* binary section */
	size_t bin_len;
	size_t bin_pos;
	json_object *values[64];	/* flat element list per declared input */
	int64_t shape[64][SERVE_MAX_DIMS];
	size_t rank[64];
};

static int shape_str(const int64_t *d, size_t n, char *buf, size_t len)
{
	size_t i, used = 0;

	used += (size_t)snprintf(buf + used, len - used, "[");
	for (i = 0; i < n && used < len - 24; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? "," : "",
					 (long long)d[i]);
	snprintf(buf + used, len - used, "]");
	return 0;
}

static int check_shape(struct infer_state *s, const struct serve_tensor *t, const int64_t *shape,
		       size_t rank)
{
	const struct serve_model_config *cfg = s->cfg;
	int64_t expect[SERVE_MAX_DIMS + 1];
	size_t n = 0, i;
	bool ok;
	char a[160], b[160];

	if (cfg->max_batch_size > 0)
		expect[n++] = -1;
	for (i = 0; i < t->n_dims; i++)
		expect[n++] = t->dims[i];
	ok = rank == n;
	for (i = 0; ok && i < n; i++)
		ok = expect[i] == -1 || expect[i] == shape[i];
	if (ok && cfg->max_batch_size > 0 && (shape[0] < 1 || shape[0] > cfg->max_batch_size)) {
		return rbln_error_set(s->err, -EINVAL, "inference request batch-size must be <= %d "
				      "for '%s', got %lld", cfg->max_batch_size, cfg->name,
				      (long long)shape[0]);
	}
	if (ok)
		return 0;
	shape_str(expect, n, a, sizeof(a));
	shape_str(shape, rank, b, sizeof(b));
	return rbln_error_set(s->err, -EINVAL, "unexpected shape for input '%s' for model '%s'. "
			      "Expected %s, got %s", t->name, cfg->name, a, b);
}

/* Flattens nested JSON arrays row-major (Triton accepts both forms). */
static int flatten(json_object *v, json_object *out, int depth)
{
	size_t i, n;

	if (!json_object_is_type(v, json_type_array))
		return json_object_array_add(out, json_object_get(v)) ? -ENOMEM : 0;
	if (depth > SERVE_MAX_DIMS)
		return -E2BIG;
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		int rc = flatten(json_object_array_get_idx(v, i), out, depth + 1);

		if (rc)
			return rc;
	}
	return 0;
}

static bool type_ok(json_object *v, enum serve_dtype t)
{
	switch (t) {
	case SERVE_DT_BYTES: return json_object_is_type(v, json_type_string);
	case SERVE_DT_BOOL: return json_object_is_type(v, json_type_boolean);
	case SERVE_DT_FP16: case SERVE_DT_FP32: case SERVE_DT_FP64: case SERVE_DT_BF16:
		return json_object_is_type(v, json_type_double) ||
		       json_object_is_type(v, json_type_int);
	default:
		return json_object_is_type(v, json_type_int);
	}
}

static uint64_t le(const unsigned char *p, size_t n)
{
	uint64_t x = 0;

	while (n--)
		x = (x << 8) | p[n];
	return x;
}

static float half_to_float(uint16_t h, bool bf16)
{
	uint32_t bits;
	float f;

	if (bf16) {
		bits = (uint32_t)h << 16;
	} else {
		uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;

		if (!exp && !man) {
			bits = sign;
		} else if (exp == 0x1f) {
			bits = sign | 0x7f800000u | (man << 13);
		} else if (!exp) {
			/* subnormal: normalize */
			exp = 127 - 15 + 1;
			while (!(man & 0x400)) {
				man <<= 1;
				exp--;
			}
			bits = sign | (exp << 23) | ((man & 0x3ff) << 13);
		} else {
			bits = sign | ((exp - 15 + 127) << 23) | (man << 13);
		}
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* Decodes n elements of type t from the binary section into JSON values. */
static int read_binary(struct infer_state *s, const struct serve_tensor *t, int64_t size,
		       size_t count, json_object *out)
{
	const unsigned char *p;
	size_t i, pos = 0, es = serve_dtype_size(t->dtype);

	if (size < 0 || (uint64_t)size > s->bin_len - s->bin_pos)
		return rbln_error_set(s->err, -EINVAL, "input '%s': binary_data_size %lld runs past "
				      "the %zu bytes of binary data after the JSON header",
				      t->name, (long long)size, s->bin_len - s->bin_pos);
	p = (const unsigned char *)s->bin + s->bin_pos;
	s->bin_pos += (size_t)size;
	for (i = 0; i < count; i++) {
		json_object *v = NULL;

		if (t->dtype == SERVE_DT_BYTES) {
			uint64_t n;

			if ((uint64_t)size - pos < 4)
				goto short_data;
			n = le(p + pos, 4);
			pos += 4;
			if ((uint64_t)size - pos < n)
				goto short_data;
			if (!rbln_utf8_valid((const char *)p + pos, n, NULL))
				return rbln_error_set(s->err, -EINVAL, "input '%s': element %zu is not "
						      "valid UTF-8 text", t->name, i);
			v = json_object_new_string_len((const char *)p + pos, (int)n);
			pos += n;
		} else {
			if ((uint64_t)size - pos < es)
				goto short_data;
			switch (t->dtype) {
			case SERVE_DT_BOOL: v = json_object_new_boolean(p[pos] != 0); break;
			case SERVE_DT_INT8: v = json_object_new_int64((int8_t)p[pos]); break;
			case SERVE_DT_INT16: v = json_object_new_int64((int16_t)le(p + pos, 2)); break;
			case SERVE_DT_INT32: v = json_object_new_int64((int32_t)le(p + pos, 4)); break;
			case SERVE_DT_INT64: v = json_object_new_int64((int64_t)le(p + pos, 8)); break;
			case SERVE_DT_UINT8: case SERVE_DT_UINT16: case SERVE_DT_UINT32:
				v = json_object_new_int64((int64_t)le(p + pos, es));
				break;
			case SERVE_DT_UINT64:
				v = json_object_new_uint64(le(p + pos, 8));
				break;
			case SERVE_DT_FP32: {
				uint32_t bits = (uint32_t)le(p + pos, 4);
				float f;

				memcpy(&f, &bits, 4);
				v = json_object_new_double(f);
				break;
			}
			case SERVE_DT_FP64: {
				uint64_t bits = le(p + pos, 8);
				double d;

				memcpy(&d, &bits, 8);
				v = json_object_new_double(d);
				break;
			}
			case SERVE_DT_FP16: case SERVE_DT_BF16:
				v = json_object_new_double(half_to_float((uint16_t)le(p + pos, 2),
									 t->dtype == SERVE_DT_BF16));
				break;
			default:
				break;
			}
			pos += es;
		}
		if (!v || json_object_array_add(out, v)) {
			json_object_put(v);
			return rbln_error_set(s->err, -ENOMEM, "out of memory");
		}
	}
	if (pos != (size_t)size)
		return rbln_error_set(s->err, -EINVAL, "input '%s': binary_data_size %lld holds "
				      "more than the %zu elements of its shape", t->name,
				      (long long)size, count);
	return 0;
short_data:
	return rbln_error_set(s->err, -EINVAL, "input '%s': binary_data_size %lld is too small "
			      "for %zu elements of %s", t->name, (long long)size, count,
			      serve_dtype_name(t->dtype));
}

static int read_input(struct infer_state *s, json_object *in, size_t index)
{
	const struct serve_model_config *cfg = s->cfg;
	json_object *name, *shape, *dtype, *data = NULL, *params = NULL, *sizev = NULL, *vals;
	const struct serve_tensor *t;
	int64_t dims[SERVE_MAX_DIMS];
	size_t rank, i, idx;
	uint64_t count = 1;
	int rc;

	if (!json_object_is_type(in, json_type_object))
		return rbln_error_set(s->err, -EINVAL, "field 'inputs[%zu]' must be an object", index);
	if (!json_object_object_get_ex(in, "name", &name) ||
	    !json_object_is_type(name, json_type_string))
		return rbln_error_set(s->err, -EINVAL, "field 'inputs[%zu].name' must be a string",
				      index);
	t = serve_model_input(cfg, json_object_get_string(name));
	if (!t)
		return rbln_error_set(s->err, -EINVAL, "unexpected inference input '%s' for model "
				      "'%s'", json_object_get_string(name), cfg->name);
	idx = (size_t)(t - cfg->inputs);
	if (s->values[idx])
		return rbln_error_set(s->err, -EINVAL, "input '%s' given twice", t->name);
	if (!json_object_object_get_ex(in, "datatype", &dtype) ||
	    !json_object_is_type(dtype, json_type_string))
		return rbln_error_set(s->err, -EINVAL, "field 'inputs[%zu].datatype' must be a "
				      "string", index);
	if (serve_dtype_from_name(json_object_get_string(dtype)) != t->dtype)
		return rbln_error_set(s->err, -EINVAL, "inference input '%s' data-type is '%s', but "
				      "model '%s' expects '%s'", t->name,
				      json_object_get_string(dtype), cfg->name,
				      serve_dtype_name(t->dtype));
	if (!json_object_object_get_ex(in, "shape", &shape) ||
	    !json_object_is_type(shape, json_type_array))
		return rbln_error_set(s->err, -EINVAL, "field 'inputs[%zu].shape' must be a list of "
				      "integers", index);
	rank = json_object_array_length(shape);
	if (rank > SERVE_MAX_DIMS)
		return rbln_error_set(s->err, -EINVAL, "input '%s' has more than %d dimensions",
				      t->name, SERVE_MAX_DIMS);
	for (i = 0; i < rank; i++) {
		json_object *d = json_object_array_get_idx(shape, i);

		if (!json_object_is_type(d, json_type_int) || json_object_get_int64(d) < 0)
			return rbln_error_set(s->err, -EINVAL, "field 'inputs[%zu].shape' must be a "
					      "list of integers >= 0", index);
		dims[i] = json_object_get_int64(d);
		if (dims[i] > (int64_t)(1u << 24) || count * (uint64_t)dims[i] > (1u << 24))
			return rbln_error_set(s->err, -EINVAL, "input '%s' has too many elements",
					      t->name);
		count *= (uint64_t)dims[i];
	}
	rc = check_shape(s, t, dims, rank);
	if (rc)
		return rc;
	vals = json_object_new_array();
	if (!vals)
		return rbln_error_set(s->err, -ENOMEM, "out of memory");
	s->values[idx] = vals;
	memcpy(s->shape[idx], dims, rank * sizeof(dims[0]));
	s->rank[idx] = rank;
	json_object_object_get_ex(in, "parameters", &params);
	if (params && json_object_is_type(params, json_type_object))
		json_object_object_get_ex(params, "binary_data_size", &sizev);
	if (sizev) {
		if (!json_object_is_type(sizev, json_type_int))
			return rbln_error_set(s->err, -EINVAL, "input '%s': binary_data_size must be "
					      "an integer", t->name);
		if (json_object_object_get_ex(in, "data", NULL))
			return rbln_error_set(s->err, -EINVAL, "input '%s' has both 'data' and "
					      "binary_data_size", t->name);
		return read_binary(s, t, json_object_get_int64(sizev), (size_t)count, vals);
	}
	if (!json_object_object_get_ex(in, "data", &data))
		return rbln_error_set(s->err, -EINVAL, "input '%s' has no 'data' (nor "
				      "binary_data_size)", t->name);
	rc = flatten(data, vals, 0);
	if (rc)
		return rbln_error_set(s->err, rc, "input '%s': data nested too deep", t->name);
	if (json_object_array_length(vals) != count)
		return rbln_error_set(s->err, -EINVAL, "input '%s': %zu data elements for shape of "
				      "%llu elements", t->name, json_object_array_length(vals),
				      (unsigned long long)count);
	for (i = 0; i < count; i++)
		if (!type_ok(json_object_array_get_idx(vals, i), t->dtype))
			return rbln_error_set(s->err, -EINVAL, "input '%s': element %zu is not of "
					      "type %s", t->name, i, serve_dtype_name(t->dtype));
	return 0;
}

/* One value for the whole request: one element, or one per prompt, all equal. */
static int one_value(struct infer_state *s, const struct serve_tensor *t, json_object *vals,
		     json_object **out)
{
	size_t n = json_object_array_length(vals), i;
	const char *first;

	if (!n)
		return rbln_error_set(s->err, -EINVAL, "input '%s' is empty", t->name);
	first = json_object_to_json_string(json_object_array_get_idx(vals, 0));
	for (i = 1; i < n; i++)
		if (strcmp(first, json_object_to_json_string(json_object_array_get_idx(vals, i))))
			return rbln_error_set(s->err, -EINVAL, "input '%s' must hold the same value "
					      "for every prompt of a request", t->name);
	*out = json_object_array_get_idx(vals, 0);
	return 0;
}

static int apply_inputs(struct infer_state *s)
{
	const struct serve_model_config *cfg = s->cfg;
	struct serve_request *r = s->r;
	size_t i, k;
	int rc;

	for (i = 0; i < cfg->n_inputs; i++) {
		const struct serve_tensor *t = &cfg->inputs[i];
		json_object *vals = s->values[i], *v = NULL;

		if (!vals) {
			if (!t->optional)
				return rbln_error_set(s->err, -EINVAL, "missing required input '%s' "
						      "for model '%s' (declared in config.pbtxt "
						      "without optional: true)", t->name,
						      cfg->name);
			continue;
		}
		if (t->role == SERVE_IN_PROMPT) {
			if (!json_object_array_length(vals))
				return rbln_error_set(s->err, -EINVAL, "input '%s' holds no prompt",
						      t->name);
			for (k = 0; k < json_object_array_length(vals); k++) {
				json_object *p = json_object_array_get_idx(vals, k);

				rc = serve_prompt_add_text(r, json_object_get_string(p),
							   (size_t)json_object_get_string_len(p),
							   s->err);
				if (rc)
					return rc;
			}
			memcpy(r->prompt_shape, s->shape[i], s->rank[i] * sizeof(int64_t));
			r->prompt_rank = s->rank[i];
			continue;
		}
		/* stop/bad words are lists of strings: the whole tensor is the value */
		if (t->role == SERVE_IN_PARAM && t->dtype == SERVE_DT_BYTES &&
		    strcmp(t->name, "sampling_parameters")) {
			rc = serve_params_apply(&r->opts, t->name, vals, SERVE_DIALECT_TRITON, NULL,
						s->err);
			if (rc)
				return rc > 0 ? rbln_error_set(s->err, -EINVAL, "unknown input '%s'",
							       t->name) : rc;
			continue;
		}
		rc = one_value(s, t, vals, &v);
		if (rc)
			return rc;
		switch (t->role) {
		case SERVE_IN_STREAM:
			if (json_object_get_boolean(v))
				return rbln_error_set(s->err, -EINVAL, "input 'stream' is true, but "
						      "infer returns one response: use "
						      "generate_stream to stream");
			break;
		case SERVE_IN_EXCLUDE_INPUT:
			r->prepend_input = !json_object_get_boolean(v);
			break;
		case SERVE_IN_SAMPLING_PARAMETERS:
			rc = serve_params_apply_json_string(&r->opts, json_object_get_string(v),
							    (size_t)json_object_get_string_len(v),
							    s->err);
			if (rc)
				return rc;
			break;
		case SERVE_IN_RETURN_FINISH_REASON:
			r->ret_finish_reason = json_object_get_boolean(v);
			break;
		case SERVE_IN_RETURN_CUMULATIVE_LOGPROB:
			r->ret_cumulative_logprob = json_object_get_boolean(v);
			break;
		case SERVE_IN_RETURN_LOGPROBS:
			r->ret_logprobs = json_object_get_boolean(v);
			break;
		case SERVE_IN_RETURN_NUM_INPUT_TOKENS:
			r->ret_num_input_tokens = json_object_get_boolean(v);
			break;
		case SERVE_IN_RETURN_NUM_OUTPUT_TOKENS:
			r->ret_num_output_tokens = json_object_get_boolean(v);
			break;
		case SERVE_IN_PARAM:
			rc = serve_params_apply(&r->opts, t->name, v, SERVE_DIALECT_TRITON, NULL,
						s->err);
			if (rc)
				return rc > 0 ? rbln_error_set(s->err, -EINVAL, "unknown input '%s'",
							       t->name) : rc;
			break;
		default:
			break;
		}
	}
	return 0;
}

static int read_parameters(struct infer_state *s, json_object *params)
{
	struct serve_request *r = s->r;

	if (!json_object_is_type(params, json_type_object))
		return rbln_error_set(s->err, -EINVAL, "field 'parameters' must be an object");
	json_object_object_foreach(params, key, val) {
		int rc;

		if (!strcmp(key, "binary_data_output")) {
			if (!json_object_is_type(val, json_type_boolean))
				return rbln_error_set(s->err, -EINVAL, "Unable to parse "
						      "'binary_data_output': must be true or false");
			r->binary_output = json_object_get_boolean(val);
		} else if (!strcmp(key, "timeout")) {
			if (!json_object_is_type(val, json_type_int) || json_object_get_int64(val) < 0)
				return rbln_error_set(s->err, -EINVAL, "Unable to parse 'timeout': "
						      "must be microseconds >= 0");
			r->timeout_us = json_object_get_int64(val);
		} else if (!strcmp(key, "priority")) {
			if (!json_object_is_type(val, json_type_int) || json_object_get_int64(val))
				return rbln_error_set(s->err, -EINVAL, "field 'priority' must be 0: "
						      "requests are served first come, first "
						      "served");
		} else if (!strncmp(key, "sequence_", 9)) {
			return rbln_error_set(s->err, -EINVAL, "parameter '%s' is for stateful "
					      "(sequence) models", key);
		} else if (!strncmp(key, "triton_", 7)) {
			return rbln_error_set(s->err, -EINVAL, "parameter keys starting with "
					      "'triton_' are reserved for Triton usage and should "
					      "not be specified.");
		} else {
			rc = serve_params_apply(&r->opts, key, val, SERVE_DIALECT_TRITON, "parameters",
						s->err);
			if (rc > 0)
				return rbln_error_set(s->err, -EINVAL, "unknown field '%s' in "
						      "parameters", key);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int read_outputs(struct infer_state *s, json_object *outs)
{
	const struct serve_model_config *cfg = s->cfg;
	struct serve_request *r = s->r;
	size_t n, i, k;

	if (!json_object_is_type(outs, json_type_array))
		return rbln_error_set(s->err, -EINVAL, "field 'outputs' must be a list");
	n = json_object_array_length(outs);
	if (n > cfg->n_outputs)
		return rbln_error_set(s->err, -EINVAL, "field 'outputs' asks for %zu outputs; model "
				      "'%s' has %zu", n, cfg->name, cfg->n_outputs);
	r->outputs = calloc(n ? n : 1, sizeof(*r->outputs));
	if (!r->outputs)
		return rbln_error_set(s->err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(outs, i), *name, *p, *b;
		const struct serve_tensor *t;

		if (!json_object_is_type(o, json_type_object) ||
		    !json_object_object_get_ex(o, "name", &name) ||
		    !json_object_is_type(name, json_type_string))
			return rbln_error_set(s->err, -EINVAL, "field 'outputs[%zu].name' must be a "
					      "string", i);
		t = serve_model_output(cfg, json_object_get_string(name));
		if (!t)
			return rbln_error_set(s->err, -EINVAL, "unexpected inference output '%s' for "
					      "model '%s'", json_object_get_string(name), cfg->name);
		for (k = 0; k < r->n_outputs; k++)
			if (r->outputs[k].tensor == t)
				return rbln_error_set(s->err, -EINVAL, "output '%s' requested twice",
						      t->name);
		r->outputs[r->n_outputs].tensor = t;
		r->outputs[r->n_outputs].binary = r->binary_output;
		if (json_object_object_get_ex(o, "parameters", &p)) {
			if (!json_object_is_type(p, json_type_object))
				return rbln_error_set(s->err, -EINVAL, "field 'outputs[%zu]."
						      "parameters' must be an object", i);
			json_object_object_foreach(p, key, val) {
				if (!strcmp(key, "binary_data")) {
					b = val;
					if (!json_object_is_type(b, json_type_boolean))
						return rbln_error_set(s->err, -EINVAL, "output '%s': "
								      "binary_data must be true "
								      "or false", t->name);
					r->outputs[r->n_outputs].binary = json_object_get_boolean(b);
				} else if (!strcmp(key, "classification")) {
					return rbln_error_set(s->err, -EINVAL, "output '%s': "
							      "classification is not supported "
							      "for text", t->name);
				} else {
					return rbln_error_set(s->err, -EINVAL, "output '%s': unknown "
							      "parameter '%s'", t->name, key);
				}
			}
		}
		r->n_outputs++;
	}
	return 0;
}

int serve_parse_infer(const struct serve_model_config *cfg, const char *body, size_t len,
		      size_t json_len, struct serve_request *r, struct rbln_error *err)
{
	struct infer_state s = { .cfg = cfg, .r = r, .err = err };
	json_object *o = NULL, *inputs, *v;
	size_t i, n;
	int rc;

	serve_request_init(r, SERVE_API_INFER);
	r->prepend_input = !cfg->exclude_input_default;
	if (json_len > len)
		return rbln_error_set(err, -EINVAL, "Inference-Header-Content-Length (%zu) exceeds "
				      "the body (%zu bytes)", json_len, len);
	s.bin = body + json_len;
	s.bin_len = len - json_len;
	rc = serve_request_body(body, json_len, false, &o, err);
	if (rc)
		goto out;
	json_object_object_foreach(o, key, val) {
		(void)val;
		if (strcmp(key, "id") && strcmp(key, "parameters") && strcmp(key, "inputs") &&
		    strcmp(key, "outputs")) {
			rc = rbln_error_set(err, -EINVAL, "unknown field '%s' (an infer request has "
					    "id, parameters, inputs and outputs)", key);
			goto out;
		}
	}
	if (json_object_object_get_ex(o, "id", &v)) {
		if (!json_object_is_type(v, json_type_string)) {
			rc = rbln_error_set(err, -EINVAL, "field 'id' must be a string");
			goto out;
		}
		r->id = strdup(json_object_get_string(v));
		if (!r->id) {
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
			goto out;
		}
	}
	if (json_object_object_get_ex(o, "parameters", &v)) {
		rc = read_parameters(&s, v);
		if (rc)
			goto out;
	}
	if (!json_object_object_get_ex(o, "inputs", &inputs) ||
	    !json_object_is_type(inputs, json_type_array)) {
		rc = rbln_error_set(err, -EINVAL, "field 'inputs' must be a list of tensors");
		goto out;
	}
	n = json_object_array_length(inputs);
	for (i = 0; i < n; i++) {
		rc = read_input(&s, json_object_array_get_idx(inputs, i), i);
		if (rc)
			goto out;
	}
	if (s.bin_pos != s.bin_len) {
		rc = rbln_error_set(err, -EINVAL, "%zu bytes of binary data after the JSON header "
				    "belong to no input", s.bin_len - s.bin_pos);
		goto out;
	}
	rc = apply_inputs(&s);
	if (rc)
		goto out;
	if (json_object_object_get_ex(o, "outputs", &v))
		rc = read_outputs(&s, v);
out:
	for (i = 0; i < 64; i++)
		json_object_put(s.values[i]);
	json_object_put(o);
	if (rc)
		serve_request_free(r);
	return rc;
}
