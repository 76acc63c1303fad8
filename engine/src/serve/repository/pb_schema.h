/* SPDX-License-Identifier: MIT */
/*
 * A small descriptor language for protobuf messages, and the conversion of
 * a parsed text-format tree (pbtxt.h) into proto3 JSON checked against it.
 * Triton's ModelConfig is described in model_config_schema.c: knowing the
 * schema is what lets us reject a misspelt field or a wrong type with the
 * line it is on, and print /config the way Triton does.
 */
#ifndef RBLN_SERVE_PB_SCHEMA_H
#define RBLN_SERVE_PB_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "pbtxt.h"
#include "rbln_error.h"

enum pb_type {
	PB_STRING,
	PB_BOOL,
	PB_INT32,
	PB_UINT32,
	PB_INT64,
	PB_UINT64,
	PB_FLOAT,
	PB_DOUBLE,
	PB_ENUM,
	PB_MESSAGE,
	PB_MAP,
};

struct pb_message;

struct pb_enum {
	const char *name;
	const char *const *values;	/* value i has number i */
	size_t n;
};

struct pb_field {
	const char *name;
	enum pb_type type;
	bool repeated;
	const struct pb_enum *enumeration;	/* PB_ENUM (or the map value's) */
	const struct pb_message *message;	/* PB_MESSAGE (or the map value's) */
	enum pb_type map_key;			/* PB_MAP: PB_STRING or an integer type */
	enum pb_type map_value;			/* PB_MAP: a scalar, PB_ENUM or PB_MESSAGE */
	const char *oneof;			/* name of its oneof group, or NULL */
};

struct pb_message {
	const char *name;
	const struct pb_field *fields;
	size_t n_fields;
};

/* The descriptor of inference.ModelConfig. */
extern const struct pb_message serve_pb_model_config;

/*
 * Converts m to proto3 JSON, with every field checked against desc: names,
 * types, ranges, enum values, single fields given twice, oneof groups.
 * Primitive fields left out are printed with their defaults (as Triton's
 * /config does); absent messages stay absent.  Errors read "FILE:LINE: ...".
 */
int serve_pb_to_json(const struct pbtxt_msg *m, const struct pb_message *desc, const char *file,
	       json_object **out, struct rbln_error *err);

#endif
