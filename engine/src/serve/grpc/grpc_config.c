// SPDX-License-Identifier: MIT
/*
 * A model's configuration, kept as proto3 JSON (what GET .../config
 * prints), turned into an inference.ModelConfig message for the ModelConfig
 * RPC.  The conversion is driven by protobuf-c's descriptors of
 * model_config.proto, field by field (names as in the proto, maps as JSON
 * objects, enums by name, 64-bit integers as numbers or strings), so one
 * schema decides both forms and nothing is transcribed twice.
 */
#include "grpc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_config.pb-c.h"

static int from_object(const ProtobufCMessageDescriptor *d, json_object *o,
		       ProtobufCMessage **out, struct rbln_error *err);

static size_t elem_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	case PROTOBUF_C_TYPE_BOOL:
		return sizeof(protobuf_c_boolean);
	default:
		return 4;
	}
}

/* An integer given as a JSON number or, as proto3 JSON writes 64-bit ones, a string. */
static int json_int(json_object *v, int64_t *i, uint64_t *u)
{
	char *end;

	if (json_object_is_type(v, json_type_int)) {
		*i = json_object_get_int64(v);
		*u = json_object_get_uint64(v);
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return -EINVAL;
	errno = 0;
	*i = strtoll(json_object_get_string(v), &end, 10);
	*u = (uint64_t)*i;
	if (*json_object_get_string(v) != '-')
		*u = strtoull(json_object_get_string(v), &end, 10);
	return errno || end == json_object_get_string(v) || *end ? -EINVAL : 0;
}

static int set_value(const ProtobufCFieldDescriptor *f, void *dst, json_object *v,
		     struct rbln_error *err)
{
	int64_t i = 0;
	uint64_t u = 0;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		if (json_int(v, &i, &u))
			break;
		if (elem_size(f->type) == 8)
			memcpy(dst, f->type == PROTOBUF_C_TYPE_UINT64 ||
			       f->type == PROTOBUF_C_TYPE_FIXED64 ? (void *)&u : (void *)&i, 8);
		else if (f->type == PROTOBUF_C_TYPE_UINT32 || f->type == PROTOBUF_C_TYPE_FIXED32)
			*(uint32_t *)dst = (uint32_t)u;
		else
			*(int32_t *)dst = (int32_t)i;
		return 0;
	case PROTOBUF_C_TYPE_FLOAT:
		*(float *)dst = (float)json_object_get_double(v);
		return 0;
	case PROTOBUF_C_TYPE_DOUBLE:
		*(double *)dst = json_object_get_double(v);
		return 0;
	case PROTOBUF_C_TYPE_BOOL:
		*(protobuf_c_boolean *)dst = json_object_get_boolean(v);
		return 0;
	case PROTOBUF_C_TYPE_ENUM:
		if (json_object_is_type(v, json_type_string)) {
			const ProtobufCEnumValue *e = protobuf_c_enum_descriptor_get_value_by_name(
				f->descriptor, json_object_get_string(v));

			if (!e)
				break;
			*(int *)dst = e->value;
		} else {
			*(int *)dst = json_object_get_int(v);
		}
		return 0;
	case PROTOBUF_C_TYPE_STRING:
		*(char **)dst = strdup(json_object_get_string(v));
		return *(char **)dst ? 0 : rbln_error_set(err, -ENOMEM, "out of memory");
	case PROTOBUF_C_TYPE_MESSAGE:
		return from_object(f->descriptor, v, (ProtobufCMessage **)dst, err);
	default:
		break;
	}
	return rbln_error_set(err, -EINVAL, "field '%s' has a value of the wrong type", f->name);
}

/* A JSON object as the repeated key/value entries protobuf-c keeps a map in. */
static int map_entries(const ProtobufCFieldDescriptor *f, json_object *v, void **arr,
		       size_t *n, struct rbln_error *err)
{
	const ProtobufCMessageDescriptor *ed = f->descriptor;
	ProtobufCMessage **e;
	int rc;

	if (!json_object_is_type(v, json_type_object))
		return rbln_error_set(err, -EINVAL, "map '%s' is not an object", f->name);
	e = calloc((size_t)json_object_object_length(v) + 1, sizeof(*e));
	if (!e)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	*arr = e;
	json_object_object_foreach(v, key, val) {
		json_object *entry = json_object_new_object();

		json_object_object_add(entry, "key", json_object_new_string(key));
		json_object_object_add(entry, "value", json_object_get(val));
		rc = from_object(ed, entry, &e[*n], err);
		json_object_put(entry);
		if (rc)
			return rc;
		(*n)++;
	}
	return 0;
}

static int set_field(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, json_object *v,
		     struct rbln_error *err)
{
	char *base = (char *)m;
	size_t es = elem_size(f->type), n, i;
	void **arr = (void **)(base + f->offset);
	size_t *count = (size_t *)(base + f->quantifier_offset);
	const ProtobufCMessageDescriptor *sub = f->type == PROTOBUF_C_TYPE_MESSAGE
						? f->descriptor : NULL;

	if (f->label != PROTOBUF_C_LABEL_REPEATED) {
		if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
			*(uint32_t *)(base + f->quantifier_offset) = f->id;
		return set_value(f, base + f->offset, v, err);
	}
	/* a map: entries whose descriptor is named ...Entry with key and value */
	if (sub && json_object_is_type(v, json_type_object) &&
	    protobuf_c_message_descriptor_get_field_by_name(sub, "key"))
		return map_entries(f, v, arr, count, err);
	if (!json_object_is_type(v, json_type_array))
		return rbln_error_set(err, -EINVAL, "field '%s' is not a list", f->name);
	n = json_object_array_length(v);
	*arr = calloc(n ? n : 1, es);
	if (!*arr)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		int rc = set_value(f, (char *)*arr + i * es, json_object_array_get_idx(v, i), err);

		if (rc)
			return rc;
		*count = i + 1;
	}
	return 0;
}

static int from_object(const ProtobufCMessageDescriptor *d, json_object *o,
		       ProtobufCMessage **out, struct rbln_error *err)
{
	ProtobufCMessage *m;

	if (!json_object_is_type(o, json_type_object))
		return rbln_error_set(err, -EINVAL, "%s is not an object", d->name);
	m = calloc(1, d->sizeof_message);
	if (!m)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	d->message_init(m);
	*out = m;
	json_object_object_foreach(o, key, val) {
		const ProtobufCFieldDescriptor *f =
			protobuf_c_message_descriptor_get_field_by_name(d, key);
		int rc;

		if (!f)
			return rbln_error_set(err, -EINVAL, "%s has no field '%s'", d->name, key);
		if (json_object_is_type(val, json_type_null))
			continue;
		rc = set_field(m, f, val, err);
		if (rc)
			return rc;
	}
	return 0;
}

int serve_grpc_config_from_json(json_object *json, ProtobufCMessage **out, struct rbln_error *err)
{
	int rc;

	*out = NULL;
	rc = from_object(&inference__model_config__descriptor, json, out, err);
	if (rc) {
		serve_grpc_config_free(*out);
		*out = NULL;
	}
	return rc;
}

void serve_grpc_config_free(ProtobufCMessage *m)
{
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
}
