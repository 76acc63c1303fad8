// SPDX-License-Identifier: MIT
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "file.h"
#include "utf8.h"

/* json-c defaults to 32 levels; real configs need few, and a bound keeps
 * hostile input from recursing deeply. */
#define JSON_MAX_DEPTH 64

/* Line and column (in characters, as editors count them) of a byte offset. */
static void offset_to_line_col(const char *text, size_t off, size_t *line, size_t *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else if (((unsigned char)text[i] & 0xc0) != 0x80) {
			(*col)++;	/* UTF-8 continuation bytes belong to the character before */
		}
	}
}

/*
 * Why json-c stopped at byte `at`.  json-c calls a character it does not
 * expect "invalid utf-8 string" when it is not ASCII, even when it is
 * valid UTF-8 (curly quotes copied from a web page): name the character.
 */
static void stop_reason(const char *text, size_t len, size_t at, enum json_tokener_error jerr,
			char *buf, size_t n)
{
	size_t adv;
	uint32_t cp;

	if ((jerr == json_tokener_error_parse_utf8_string ||
	     jerr == json_tokener_error_parse_unexpected) && at < len) {
		if (rbln_utf8_next(text + at, len - at, &adv, &cp) == RBLN_UTF8_OK) {
			if (cp > 0x20 && cp < 0x7f)
				snprintf(buf, n, "unexpected character '%c'", (char)cp);
			else
				snprintf(buf, n, "unexpected character U+%04X", (unsigned)cp);
			return;
		}
		if (jerr == json_tokener_error_parse_utf8_string) {
			snprintf(buf, n, "invalid UTF-8 (byte 0x%02x)", (unsigned char)text[at]);
			return;
		}
	}
	snprintf(buf, n, "%s", json_tokener_error_desc(jerr));
}

static bool only_space(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			return false;
	return true;
}

int rbln_json_parse(const char *text, size_t len, const char *name, json_object **out,
		    struct rbln_error *err)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	json_object *obj;
	size_t end, line, col;
	char why[64];

	*out = NULL;
	if (len > INT32_MAX)
		return rbln_error_set(err, -EINVAL, "%s: JSON text too large", name);
	tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	if (!tok)
		return rbln_error_set(err, -ENOMEM, "%s: out of memory", name);
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!obj || jerr != json_tokener_success) {
		json_object_put(obj);
		if (jerr == json_tokener_continue)
			return rbln_error_set(err, -EINVAL, "%s: malformed JSON: unexpected end of input",
					      name);
		offset_to_line_col(text, end < len ? end : len, &line, &col);
		stop_reason(text, len, end, jerr, why, sizeof(why));
		return rbln_error_set(err, -EINVAL, "%s: malformed JSON at line %zu column %zu: %s",
				      name, line, col, why);
	}
	if (!only_space(text + end, len - end)) {
		json_object_put(obj);
		offset_to_line_col(text, end, &line, &col);
		return rbln_error_set(err, -EINVAL,
				      "%s: malformed JSON: trailing data at line %zu column %zu", name,
				      line, col);
	}
	*out = obj;
	return 0;
}

int rbln_json_load_file(const char *path, json_object **out, struct rbln_error *err)
{
	char *text;
	size_t len;
	int rc;

	*out = NULL;
	rc = rbln_file_read_max(path, RBLN_JSON_FILE_MAX, &text, &len, err);
	if (rc)
		return rc;
	rc = rbln_json_parse(text, len, path, out, err);
	free(text);
	return rc;
}

int rbln_json_load_object(const char *path, json_object **out, struct rbln_error *err)
{
	int rc = rbln_json_load_file(path, out, err);

	if (rc || json_object_is_type(*out, json_type_object))
		return rc;
	rc = rbln_error_set(err, -EINVAL, "%s: must be a JSON object, got %s", path,
			    rbln_json_type_name(*out));
	json_object_put(*out);
	*out = NULL;
	return rc;
}

const char *rbln_json_type_name(const json_object *o)
{
	switch (json_object_get_type(o)) {
	case json_type_null: return "null";
	case json_type_boolean: return "boolean";
	case json_type_double: return "number";
	case json_type_int: return "integer";
	case json_type_object: return "object";
	case json_type_array: return "array";
	case json_type_string: return "string";
	}
	return "unknown";
}

int rbln_json_field_error(const struct rbln_json_scope *s, const char *key, int code,
			  const char *fmt, ...)
{
	char detail[RBLN_ERROR_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return rbln_error_set(s->err, code, "%s: field '%s%s' %s", s->file, s->prefix, key, detail);
}

/* Looks the key up; 0 = absent/null, 1 = present (in *val). */
static int lookup(const struct rbln_json_scope *s, json_object *obj, const char *key,
		  bool required, json_object **val)
{
	*val = NULL;
	if (!json_object_object_get_ex(obj, key, val) || json_object_is_type(*val, json_type_null)) {
		if (required)
			return rbln_json_field_error(s, key, -EINVAL, "is required but %s",
						     *val ? "null" : "missing");
		return 0;
	}
	return 1;
}

int rbln_json_get_int(const struct rbln_json_scope *s, json_object *obj, const char *key,
		      bool required, int64_t min, int64_t max, int64_t *out)
{
	json_object *v;
	int64_t x;
	int rc = lookup(s, obj, key, required, &v);

	if (rc <= 0)
		return rc;
	if (!json_object_is_type(v, json_type_int))
		return rbln_json_field_error(s, key, -EINVAL, "must be an integer, got %s",
					     rbln_json_type_name(v));
	errno = 0;
	x = json_object_get_int64(v);
	if (x < min || x > max || (errno == ERANGE))
		return rbln_json_field_error(s, key, -EINVAL,
					     "must be in [%lld, %lld], got %s", (long long)min,
					     (long long)max, json_object_to_json_string(v));
	*out = x;
	return 1;
}

int rbln_json_get_double(const struct rbln_json_scope *s, json_object *obj, const char *key,
			 bool required, double min, double max, double *out)
{
	json_object *v;
	double x;
	int rc = lookup(s, obj, key, required, &v);

	if (rc <= 0)
		return rc;
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return rbln_json_field_error(s, key, -EINVAL, "must be a number, got %s",
					     rbln_json_type_name(v));
	x = json_object_get_double(v);
	if (!isfinite(x) || x < min || x > max)
		return rbln_json_field_error(s, key, -EINVAL, "must be in [%g, %g], got %s", min,
					     max, json_object_to_json_string(v));
	*out = x;
	return 1;
}

int rbln_json_get_bool(const struct rbln_json_scope *s, json_object *obj, const char *key,
		       bool required, bool *out)
{
	json_object *v;
	int rc = lookup(s, obj, key, required, &v);

	if (rc <= 0)
		return rc;
	if (!json_object_is_type(v, json_type_boolean))
		return rbln_json_field_error(s, key, -EINVAL, "must be true or false, got %s",
					     rbln_json_type_name(v));
	*out = json_object_get_boolean(v);
	return 1;
}

int rbln_json_get_string(const struct rbln_json_scope *s, json_object *obj, const char *key,
			 bool required, const char **out, size_t *len)
{
	json_object *v;
	int rc = lookup(s, obj, key, required, &v);

	if (rc <= 0)
		return rc;
	if (!json_object_is_type(v, json_type_string))
		return rbln_json_field_error(s, key, -EINVAL, "must be a string, got %s",
					     rbln_json_type_name(v));
	*out = json_object_get_string(v);
	if (len)
		*len = (size_t)json_object_get_string_len(v);
	return 1;
}

int rbln_json_get_typed(const struct rbln_json_scope *s, json_object *obj, const char *key,
			bool required, enum json_type type, json_object **out)
{
	json_object *v;
	int rc = lookup(s, obj, key, required, &v);

	if (rc <= 0)
		return rc;
	if (!json_object_is_type(v, type))
		return rbln_json_field_error(s, key, -EINVAL, "must be %s %s, got %s",
					     (type == json_type_array || type == json_type_object) ? "an" : "a",
					     json_type_to_name(type), rbln_json_type_name(v));
	*out = v;
	return 1;
}
