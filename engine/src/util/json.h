/* SPDX-License-Identifier: MIT */
/*
 * json-c helpers that validate while they read: each accessor checks the
 * type and range of one field and, on failure, records an error naming the
 * file and the dotted field path ("config.json: field 'rope_scaling.factor'
 * must be a number >= 1, got string").
 */
#ifndef RBLN_JSON_H
#define RBLN_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "rbln_error.h"

/*
 * The most a JSON configuration file (config.json, tokenizer_config.json,
 * an index...) may have; tokenizer.json, mostly vocabulary, may have
 * RBLN_FILE_READ_MAX.
 */
#define RBLN_JSON_FILE_MAX ((size_t)16 << 20)

/* Parses one complete JSON document (strict syntax, UTF-8 checked). */
int rbln_json_parse(const char *text, size_t len, const char *name, json_object **out,
		    struct rbln_error *err);
/* Reads and parses a file of at most RBLN_JSON_FILE_MAX bytes. */
int rbln_json_load_file(const char *path, json_object **out, struct rbln_error *err);
/* rbln_json_load_file() of a document that must be an object ("PATH: must be ..."). */
int rbln_json_load_object(const char *path, json_object **out, struct rbln_error *err);

const char *rbln_json_type_name(const json_object *o);

/* Where fields live, for error messages: file name and field path prefix. */
struct rbln_json_scope {
	const char *file;
	const char *prefix;	/* "" or "rope_scaling." */
	struct rbln_error *err;
};

/*
 * Each getter returns 1 when the field is present and valid, 0 when it is
 * absent or JSON null and not required, and a negative code on error.
 */
int rbln_json_get_int(const struct rbln_json_scope *s, json_object *obj, const char *key,
		      bool required, int64_t min, int64_t max, int64_t *out);
int rbln_json_get_double(const struct rbln_json_scope *s, json_object *obj, const char *key,
			 bool required, double min, double max, double *out);
int rbln_json_get_bool(const struct rbln_json_scope *s, json_object *obj, const char *key,
		       bool required, bool *out);
int rbln_json_get_string(const struct rbln_json_scope *s, json_object *obj, const char *key,
			 bool required, const char **out, size_t *len);
int rbln_json_get_typed(const struct rbln_json_scope *s, json_object *obj, const char *key,
			bool required, enum json_type type, json_object **out);

/* Reports a field error in the standard form; returns code. */
int rbln_json_field_error(const struct rbln_json_scope *s, const char *key, int code,
			  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
