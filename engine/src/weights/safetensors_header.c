// SPDX-License-Identifier: MIT
/*
 * The safetensors header parser.  It never trusts the file: the header
 * length is bounded by the file size, every tensor entry must have exactly
 * dtype/shape/data_offsets with sane values, each byte range must match
 * shape * element size, and the ranges must tile the data area exactly
 * (no gaps, no overlaps, nothing past the end) as the format requires.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "weights/safetensors_internal.h"

struct entry_ctx {
	const char *file;
	const char *tensor;
	struct rbln_error *err;
};

/* Every safetensors dtype, so that valid-but-unsupported ones get a clear
 * "not supported" instead of "unknown". */
static int parse_dtype(const struct entry_ctx *c, json_object *v, enum rbln_dtype *out)
{
	static const char *const unsupported[] = {
		"BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2",
		"I16", "U16", "I32", "U32", "F64", "I64", "U64", "C64",
	};
	const char *s;
	size_t i;

	if (!json_object_is_type(v, json_type_string))
		return rbln_error_set(c->err, -EINVAL, "%s: tensor '%s': dtype must be a string, got %s",
				      c->file, c->tensor, rbln_json_type_name(v));
	s = json_object_get_string(v);
	/* "F16\u0000x" must not pass for F16 through strcmp. */
	if (strlen(s) != (size_t)json_object_get_string_len(v))
		return rbln_error_set(c->err, -EINVAL,
				      "%s: tensor '%s': dtype \"%.32s...\" contains a NUL byte",
				      c->file, c->tensor, s);
	if (strcmp(s, "BF16") == 0)
		*out = RBLN_TENSOR_BF16;
	else if (strcmp(s, "F16") == 0)
		*out = RBLN_TENSOR_F16;
	else if (strcmp(s, "F32") == 0)
		*out = RBLN_TENSOR_F32;
	else {
		for (i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++)
			if (strcmp(s, unsupported[i]) == 0)
				return rbln_error_set(c->err, -ENOTSUP,
						      "%s: tensor '%s': dtype %s is not supported (BF16, F16 or F32 expected)",
						      c->file, c->tensor, s);
		return rbln_error_set(c->err, -EINVAL, "%s: tensor '%s': unknown dtype \"%.32s\"",
				      c->file, c->tensor, s);
	}
	return 0;
}

static int parse_shape(const struct entry_ctx *c, json_object *v, struct rbln_tensor *t,
		       uint64_t *elems)
{
	size_t i, n;

	if (!json_object_is_type(v, json_type_array))
		return rbln_error_set(c->err, -EINVAL, "%s: tensor '%s': shape must be an array, got %s",
				      c->file, c->tensor, rbln_json_type_name(v));
	n = json_object_array_length(v);
	if (n > RBLN_TENSOR_MAX_DIMS)
		return rbln_error_set(c->err, -EINVAL, "%s: tensor '%s': %zu dimensions, at most %d supported",
				      c->file, c->tensor, n, RBLN_TENSOR_MAX_DIMS);
	*elems = 1;
	for (i = 0; i < n; i++) {
		json_object *d = json_object_array_get_idx(v, i);
		int64_t x;

		if (!json_object_is_type(d, json_type_int) || (x = json_object_get_int64(d)) < 0)
			return rbln_error_set(c->err, -EINVAL,
					      "%s: tensor '%s': shape[%zu] must be a non-negative integer, got %s",
					      c->file, c->tensor, i, json_object_to_json_string(d));
		if (x && *elems > UINT64_MAX / (uint64_t)x)
			return rbln_error_set(c->err, -EINVAL, "%s: tensor '%s': shape overflows",
					      c->file, c->tensor);
		*elems *= (uint64_t)x;
		t->shape[i] = x;
	}
	t->ndim = n;
	return 0;
}

static int parse_offsets(const struct entry_ctx *c, json_object *v, uint64_t off[2])
{
	size_t i;

	if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) != 2)
		return rbln_error_set(c->err, -EINVAL,
				      "%s: tensor '%s': data_offsets must be an array [begin, end]",
				      c->file, c->tensor);
	for (i = 0; i < 2; i++) {
		json_object *d = json_object_array_get_idx(v, i);

		if (!json_object_is_type(d, json_type_int) || json_object_get_int64(d) < 0)
			return rbln_error_set(c->err, -EINVAL,
					      "%s: tensor '%s': data_offsets[%zu] must be a non-negative integer, got %s",
					      c->file, c->tensor, i, json_object_to_json_string(d));
		off[i] = (uint64_t)json_object_get_int64(d);
	}
	if (off[0] > off[1])
		return rbln_error_set(c->err, -EINVAL,
				      "%s: tensor '%s': data_offsets [%llu, %llu] end before they begin",
				      c->file, c->tensor, (unsigned long long)off[0],
				      (unsigned long long)off[1]);
	return 0;
}

/* One "name": {"dtype", "shape", "data_offsets"} entry. */
static int parse_entry(const struct entry_ctx *c, json_object *v, const char *data,
		       uint64_t data_len, struct rbln_tensor *t, uint64_t off[2])
{
	json_object *dtype = NULL, *shape = NULL, *offsets = NULL;
	uint64_t elems = 0, nbytes;
	int rc;

	if (!json_object_is_type(v, json_type_object))
		return rbln_error_set(c->err, -EINVAL, "%s: tensor '%s': entry must be an object, got %s",
				      c->file, c->tensor, rbln_json_type_name(v));
	json_object_object_foreach(v, key, val) {
		if (strcmp(key, "dtype") == 0)
			dtype = val;
		else if (strcmp(key, "shape") == 0)
			shape = val;
		else if (strcmp(key, "data_offsets") == 0)
			offsets = val;
		else
			return rbln_error_set(c->err, -EINVAL, "%s: tensor '%s': unexpected field '%.64s'",
					      c->file, c->tensor, key);
	}
	if (!dtype || !shape || !offsets)
		return rbln_error_set(c->err, -EINVAL, "%s: tensor '%s': missing field '%s'", c->file,
				      c->tensor, !dtype ? "dtype" : !shape ? "shape" : "data_offsets");
	if ((rc = parse_dtype(c, dtype, &t->dtype)) || (rc = parse_shape(c, shape, t, &elems)) ||
	    (rc = parse_offsets(c, offsets, off)))
		return rc;
	if (elems > UINT64_MAX / rbln_dtype_size(t->dtype))
		return rbln_error_set(c->err, -EINVAL, "%s: tensor '%s': shape overflows", c->file,
				      c->tensor);
	nbytes = elems * rbln_dtype_size(t->dtype);
	if (off[1] - off[0] != nbytes)
		return rbln_error_set(c->err, -EINVAL,
				      "%s: tensor '%s': data_offsets [%llu, %llu] hold %llu bytes but shape and dtype %s need %llu",
				      c->file, c->tensor, (unsigned long long)off[0],
				      (unsigned long long)off[1], (unsigned long long)(off[1] - off[0]),
				      rbln_dtype_name(t->dtype), (unsigned long long)nbytes);
	if (off[1] > data_len)
		return rbln_error_set(c->err, -EINVAL,
				      "%s: tensor '%s': data_offsets [%llu, %llu] run past the end of the data (%llu bytes): file truncated?",
				      c->file, c->tensor, (unsigned long long)off[0],
				      (unsigned long long)off[1], (unsigned long long)data_len);
	t->nbytes = (size_t)nbytes;
	t->data = data + off[0];
	return 0;
}

static int parse_metadata(struct rbln_safetensors *st, json_object *v, struct rbln_error *err)
{
	size_t n = 0;

	if (!json_object_is_type(v, json_type_object))
		return rbln_error_set(err, -EINVAL, "%s: __metadata__ must be an object, got %s",
				      st->name, rbln_json_type_name(v));
	st->meta = calloc((size_t)json_object_object_length(v) + 1, sizeof(*st->meta));
	if (!st->meta)
		return rbln_error_set(err, -ENOMEM, "%s: out of memory", st->name);
	json_object_object_foreach(v, key, val) {
		if (!json_object_is_type(val, json_type_string))
			return rbln_error_set(err, -EINVAL,
					      "%s: __metadata__ value of '%.64s' must be a string, got %s",
					      st->name, key, rbln_json_type_name(val));
		st->meta[n].key = strdup(key);
		st->meta[n].value = strdup(json_object_get_string(val));
		st->n_meta = ++n;
		if (!st->meta[n - 1].key || !st->meta[n - 1].value)
			return rbln_error_set(err, -ENOMEM, "%s: out of memory", st->name);
	}
	return 0;
}

struct span {
	uint64_t begin, end;
	size_t index;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

/* The data area must be exactly the concatenation of the tensors. */
static int check_tiling(struct rbln_safetensors *st, struct span *spans, uint64_t data_len,
			struct rbln_error *err)
{
	uint64_t pos = 0;
	size_t i;

	qsort(spans, st->count, sizeof(*spans), span_cmp);
	for (i = 0; i < st->count; i++) {
		const struct span *s = &spans[i];
		const char *name = st->tensors[s->index].name;

		if (s->begin < pos)
			return rbln_error_set(err, -EINVAL,
					      "%s: tensor '%s': data_offsets [%llu, %llu] overlap tensor '%s' (ends at %llu)",
					      st->name, name, (unsigned long long)s->begin,
					      (unsigned long long)s->end,
					      st->tensors[spans[i - 1].index].name,
					      (unsigned long long)pos);
		if (s->begin > pos)
			return rbln_error_set(err, -EINVAL,
					      "%s: tensor '%s': data_offsets begin at %llu, leaving unused bytes [%llu, %llu) before it",
					      st->name, name, (unsigned long long)s->begin,
					      (unsigned long long)pos, (unsigned long long)s->begin);
		pos = s->end;
	}
	if (pos != data_len)
		return rbln_error_set(err, -EINVAL,
				      "%s: %llu bytes of data follow the last tensor%s%s%s",
				      st->name, (unsigned long long)(data_len - pos),
				      st->count ? " ('" : "", st->count ? st->tensors[spans[st->count - 1].index].name : "",
				      st->count ? "')" : "");
	return 0;
}

/* Reorders tensors by data offset and indexes them by name. */
static int finish_index(struct rbln_safetensors *st, struct span *spans, struct rbln_error *err)
{
	struct rbln_tensor *sorted = malloc((st->count ? st->count : 1) * sizeof(*sorted));
	size_t i;

	if (!sorted)
		return rbln_error_set(err, -ENOMEM, "%s: out of memory", st->name);
	for (i = 0; i < st->count; i++)
		sorted[i] = st->tensors[spans[i].index];
	free(st->tensors);
	st->tensors = sorted;
	for (i = 0; i < st->count; i++) {
		const char *n = st->tensors[i].name;

		if (rbln_strmap_put(&st->by_name, n, strlen(n), (int32_t)i, NULL))
			return rbln_error_set(err, -ENOMEM, "%s: out of memory", st->name);
	}
	return 0;
}

static int parse_tensors(struct rbln_safetensors *st, json_object *root, const char *data,
			 uint64_t data_len, struct rbln_error *err)
{
	size_t cap = (size_t)json_object_object_length(root);
	struct span *spans;
	int rc = 0;

	st->tensors = calloc(cap ? cap : 1, sizeof(*st->tensors));
	spans = calloc(cap ? cap : 1, sizeof(*spans));
	if (!st->tensors || !spans) {
		free(spans);
		return rbln_error_set(err, -ENOMEM, "%s: out of memory", st->name);
	}
	json_object_object_foreach(root, key, val) {
		struct entry_ctx c = { st->name, key, err };
		struct rbln_tensor *t = &st->tensors[st->count];
		uint64_t off[2];

		if (strcmp(key, "__metadata__") == 0) {
			rc = parse_metadata(st, val, err);
			if (rc)
				break;
			continue;
		}
		t->name = strdup(key);
		t->file = st->name;
		if (!t->name) {
			rc = rbln_error_set(err, -ENOMEM, "%s: out of memory", st->name);
			break;
		}
		spans[st->count].index = st->count;
		st->count++;
		rc = parse_entry(&c, val, data, data_len, t, off);
		if (rc)
			break;
		spans[st->count - 1].begin = off[0];
		spans[st->count - 1].end = off[1];
	}
	if (!rc)
		rc = check_tiling(st, spans, data_len, err);
	if (!rc)
		rc = finish_index(st, spans, err);
	free(spans);
	return rc;
}

static uint64_t read_le64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

int rbln_safetensors_parse_into(struct rbln_safetensors *st, const void *buf, size_t len,
				struct rbln_error *err)
{
	const unsigned char *bytes = buf;
	json_object *root;
	uint64_t hlen;
	int rc;

	if (len < 8)
		return rbln_error_set(err, -EINVAL,
				      "%s: %zu bytes is too short for a safetensors file (8-byte header length missing)",
				      st->name, len);
	hlen = read_le64(bytes);
	if (hlen > RBLN_SAFETENSORS_MAX_HEADER)
		return rbln_error_set(err, -EINVAL, "%s: header length %llu exceeds the %u-byte limit",
				      st->name, (unsigned long long)hlen, RBLN_SAFETENSORS_MAX_HEADER);
	if (hlen > len - 8)
		return rbln_error_set(err, -EINVAL,
				      "%s: header length %llu runs past the end of the file (%zu bytes): file truncated?",
				      st->name, (unsigned long long)hlen, len);
	if (hlen < 2 || bytes[8] != '{')
		return rbln_error_set(err, -EINVAL, "%s: header does not start with a JSON object",
				      st->name);
	rc = rbln_json_parse((const char *)bytes + 8, (size_t)hlen, st->name, &root, err);
	if (rc) {
		rbln_error_prefix(err, "safetensors header: ");
		return rc;
	}
	if (!json_object_is_type(root, json_type_object))
		rc = rbln_error_set(err, -EINVAL, "%s: header is not a JSON object", st->name);
	else
		rc = parse_tensors(st, root, (const char *)bytes + 8 + hlen, len - 8 - hlen, err);
	json_object_put(root);
	return rc;
}
