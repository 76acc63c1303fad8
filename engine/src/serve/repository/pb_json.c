// SPDX-License-Identifier: MIT
/*
 * Text-format tree -> proto3 JSON, checked against a descriptor (see
 * pb_schema.h).  Errors name the file, the line and the field's path
 * ("config.pbtxt:7: field 'input[0].data_type': unknown value 'TYPE_STR'").
 */
#include "pb_schema.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/text.h"
#include "util/utf8.h"

#define PATH_MAX_LEN 256

struct conv {
	const char *file;
	struct rbln_error *err;
};

static int conv_error(struct conv *c, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int conv_error(struct conv *c, int line, const char *fmt, ...)
{
	char msg[RBLN_ERROR_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return rbln_error_set(c->err, -EINVAL, "%s:%d: %s", c->file, line, msg);
}

/* Field paths for messages; a path cut short by the buffer is still useful. */
static void path_fmt(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void path_fmt(char *dst, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, n, fmt, ap);
	va_end(ap);
}

static const struct pb_field *find_field(const struct pb_message *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->n_fields; i++)
		if (!strcmp(d->fields[i].name, name))
			return &d->fields[i];
	return NULL;
}

static int unknown_field(struct conv *c, const struct pb_message *d, const char *path,
			 const struct pbtxt_field *f)
{
	const char *best = NULL;
	size_t i, bd = 3;

	for (i = 0; i < d->n_fields; i++) {
		size_t dist = rbln_edit_distance(f->name, d->fields[i].name);

		if (dist < bd) {
			bd = dist;
			best = d->fields[i].name;
		}
	}
	if (best)
		return conv_error(c, f->line, "unknown field '%s%s' (%s has no such field; did "
				  "you mean '%s'?)", path, f->name, d->name, best);
	return conv_error(c, f->line, "unknown field '%s%s' (%s has no such field)", path,
			  f->name, d->name);
}

static const char *type_name(enum pb_type t)
{
	switch (t) {
	case PB_STRING: return "a string";
	case PB_BOOL: return "true or false";
	case PB_INT32: return "a 32-bit integer";
	case PB_UINT32: return "an unsigned 32-bit integer";
	case PB_INT64: return "a 64-bit integer";
	case PB_UINT64: return "an unsigned 64-bit integer";
	case PB_FLOAT: case PB_DOUBLE: return "a number";
	case PB_ENUM: return "an enum value";
	case PB_MESSAGE: return "a message { ... }";
	case PB_MAP: return "a map entry { key: ... value: ... }";
	}
	return "?";
}

static int convert_message(struct conv *c, const struct pbtxt_msg *m,
			   const struct pb_message *d, const char *path, json_object **out);

/* One scalar/enum/message value of type t; label is the field path for messages. */
static int convert_value(struct conv *c, const struct pbtxt_value *v, enum pb_type t,
			 const struct pb_enum *en, const struct pb_message *md, const char *label,
			 json_object **out)
{
	int64_t i;
	double x;
	bool b;

	*out = NULL;
	switch (t) {
	case PB_STRING:
		if (v->kind != PBTXT_STRING)
			break;
		if (!rbln_utf8_valid(v->str, v->len, NULL))
			return conv_error(c, v->line, "field '%s': string is not valid UTF-8", label);
		*out = json_object_new_string_len(v->str, (int)v->len);
		return *out ? 0 : -ENOMEM;
	case PB_BOOL:
		if (!serve_pbtxt_value_bool(v, &b))
			break;
		*out = json_object_new_boolean(b);
		return *out ? 0 : -ENOMEM;
	case PB_INT32: case PB_UINT32: case PB_INT64: case PB_UINT64: {
		int64_t lo = t == PB_INT32 ? INT32_MIN : t == PB_INT64 ? INT64_MIN : 0;
		int64_t hi = t == PB_INT32 ? INT32_MAX : t == PB_UINT32 ? (int64_t)UINT32_MAX
									 : INT64_MAX;
		if (!serve_pbtxt_value_int(v, &i))
			break;
		if (i < lo || i > hi)
			return conv_error(c, v->line, "field '%s': %s is out of range for %s",
					  label, v->str, type_name(t));
		*out = json_object_new_int64(i);
		return *out ? 0 : -ENOMEM;
	}
	case PB_FLOAT: case PB_DOUBLE:
		if (!serve_pbtxt_value_double(v, &x))
			break;
		if (!isfinite(x))
			return conv_error(c, v->line, "field '%s': %s cannot be written in JSON",
					  label, v->str);
		*out = json_object_new_double(x);
		return *out ? 0 : -ENOMEM;
	case PB_ENUM: {
		size_t k;

		if (v->kind == PBTXT_IDENT) {
			for (k = 0; k < en->n; k++)
				if (!strcmp(v->str, en->values[k])) {
					*out = json_object_new_string(en->values[k]);
					return *out ? 0 : -ENOMEM;
				}
			{
				char list[320] = "";
				size_t used = 0;

				for (k = 0; k < en->n && used < sizeof(list) - 40; k++)
					used += (size_t)snprintf(list + used, sizeof(list) - used,
								 "%s%s", k ? ", " : "",
								 en->values[k]);
				return conv_error(c, v->line, "field '%s': unknown %s value '%s' "
						  "(one of: %s)", label, en->name, v->str, list);
			}
		}
		if (serve_pbtxt_value_int(v, &i)) {
			if (i < 0 || (uint64_t)i >= en->n)
				return conv_error(c, v->line, "field '%s': %s has no value number "
						  "%s", label, en->name, v->str);
			*out = json_object_new_string(en->values[i]);
			return *out ? 0 : -ENOMEM;
		}
		break;
	}
	case PB_MESSAGE:
		if (v->kind != PBTXT_MESSAGE)
			break;
		{
			char sub[PATH_MAX_LEN];

			path_fmt(sub, sizeof(sub), "%s.", label);
			return convert_message(c, v->msg, md, sub, out);
		}
	case PB_MAP:
		break;
	}
	if (v->kind == PBTXT_STRING)
		return conv_error(c, v->line, "field '%s' must be %s, got a string", label,
				  type_name(t));
	if (v->kind == PBTXT_MESSAGE)
		return conv_error(c, v->line, "field '%s' must be %s, got a message", label,
				  type_name(t));
	return conv_error(c, v->line, "field '%s' must be %s, got '%s'", label, type_name(t),
			  v->str);
}

/* A map entry { key: K value: V }. */
static int convert_map_entry(struct conv *c, const struct pbtxt_value *v,
			     const struct pb_field *fd, const char *label, json_object *map)
{
	const struct pbtxt_value *kv = NULL, *vv = NULL;
	json_object *val = NULL;
	char key[64];
	const char *keystr;
	size_t i;
	int rc;

	if (v->kind != PBTXT_MESSAGE)
		return conv_error(c, v->line, "field '%s' must be %s", label, type_name(PB_MAP));
	for (i = 0; i < v->msg->n_fields; i++) {
		const struct pbtxt_field *f = &v->msg->fields[i];
		const struct pbtxt_value **slot;

		if (!strcmp(f->name, "key"))
			slot = &kv;
		else if (!strcmp(f->name, "value"))
			slot = &vv;
		else
			return conv_error(c, f->line, "field '%s': a map entry has only 'key' and "
					  "'value', got '%s'", label, f->name);
		if (*slot || f->list || f->n_values != 1)
			return conv_error(c, f->line, "field '%s': map entry has more than one "
					  "'%s'", label, f->name);
		*slot = &f->values[0];
	}
	if (!kv)
		return conv_error(c, v->line, "field '%s': map entry without a 'key'", label);
	if (fd->map_key == PB_STRING) {
		if (kv->kind != PBTXT_STRING)
			return conv_error(c, kv->line, "field '%s': map key must be a string",
					  label);
		if (!rbln_utf8_valid(kv->str, kv->len, NULL) || strlen(kv->str) != kv->len)
			return conv_error(c, kv->line, "field '%s': map key is not valid UTF-8 "
					  "text", label);
		keystr = kv->str;
	} else {
		int64_t k;

		if (!serve_pbtxt_value_int(kv, &k) || k < 0)
			return conv_error(c, kv->line, "field '%s': map key must be %s", label,
					  type_name(fd->map_key));
		snprintf(key, sizeof(key), "%lld", (long long)k);
		keystr = key;
	}
	if (json_object_object_get_ex(map, keystr, NULL))
		return conv_error(c, kv->line, "field '%s': key '%s' given twice", label, keystr);
	if (vv) {
		char sub[PATH_MAX_LEN];

		path_fmt(sub, sizeof(sub), "%s[\"%.64s\"]", label, keystr);
		rc = convert_value(c, vv, fd->map_value, fd->enumeration, fd->message, sub, &val);
		if (rc)
			return rc;
	} else if (fd->map_value == PB_MESSAGE) {
		/* A missing value is the empty message. */
		char sub[PATH_MAX_LEN];
		struct pbtxt_msg empty = { .line = v->line };

		path_fmt(sub, sizeof(sub), "%s[\"%.64s\"].", label, keystr);
		rc = convert_message(c, &empty, fd->message, sub, &val);
		if (rc)
			return rc;
	} else {
		val = json_object_new_string("");
		if (!val)
			return -ENOMEM;
	}
	return json_object_object_add(map, keystr, val) ? -ENOMEM : 0;
}

static json_object *default_value(const struct pb_field *fd)
{
	if (fd->repeated)
		return json_object_new_array();
	switch (fd->type) {
	case PB_STRING: return json_object_new_string("");
	case PB_BOOL: return json_object_new_boolean(0);
	case PB_INT32: case PB_UINT32: case PB_INT64: case PB_UINT64:
		return json_object_new_int64(0);
	case PB_FLOAT: case PB_DOUBLE: return json_object_new_double(0);
	case PB_ENUM: return json_object_new_string(fd->enumeration->values[0]);
	case PB_MAP: return json_object_new_object();
	case PB_MESSAGE: return NULL;
	}
	return NULL;
}

static int convert_message(struct conv *c, const struct pbtxt_msg *m,
			   const struct pb_message *d, const char *path, json_object **out)
{
	json_object *obj = json_object_new_object();
	/* line of the first occurrence of each descriptor field (0 = none) */
	int seen[64] = { 0 };
	size_t i, j;
	int rc = 0;

	*out = NULL;
	if (!obj)
		return -ENOMEM;
	if (d->n_fields > 64) {
		json_object_put(obj);
		return rbln_error_set(c->err, -EINVAL, "%s: descriptor %s too large", c->file,
				      d->name);
	}
	for (i = 0; i < m->n_fields && !rc; i++) {
		const struct pbtxt_field *f = &m->fields[i];
		const struct pb_field *fd = find_field(d, f->name);
		size_t idx;
		char label[PATH_MAX_LEN];

		if (!fd) {
			rc = unknown_field(c, d, path, f);
			break;
		}
		idx = (size_t)(fd - d->fields);
		path_fmt(label, sizeof(label), "%s%s", path, f->name);
		if (fd->oneof) {
			for (j = 0; j < d->n_fields; j++) {
				const struct pb_field *o = &d->fields[j];

				if (j != idx && seen[j] && o->oneof && !strcmp(o->oneof, fd->oneof)) {
					rc = conv_error(c, f->line, "fields '%s%s' (line %d) and "
							"'%s' are alternatives (oneof %s): give "
							"one", path, o->name, seen[j], label,
							fd->oneof);
					break;
				}
			}
			if (rc)
				break;
		}
		if (fd->repeated || fd->type == PB_MAP) {
			json_object *arr;

			if (!json_object_object_get_ex(obj, fd->name, &arr)) {
				arr = fd->type == PB_MAP ? json_object_new_object()
							 : json_object_new_array();
				if (!arr || json_object_object_add(obj, fd->name, arr)) {
					json_object_put(arr);
					rc = -ENOMEM;
					break;
				}
			}
			for (j = 0; j < f->n_values && !rc; j++) {
				json_object *v = NULL;
				char el[PATH_MAX_LEN];

				if (fd->type == PB_MAP) {
					rc = convert_map_entry(c, &f->values[j], fd, label, arr);
					continue;
				}
				path_fmt(el, sizeof(el), "%s[%zu]", label,
					 json_object_array_length(arr));
				rc = convert_value(c, &f->values[j], fd->type, fd->enumeration,
						   fd->message, el, &v);
				if (!rc && json_object_array_add(arr, v)) {
					json_object_put(v);
					rc = -ENOMEM;
				}
			}
		} else {
			json_object *v = NULL;

			if (seen[idx]) {
				rc = conv_error(c, f->line, "field '%s' given twice (first on line "
						"%d) but it is not repeated", label, seen[idx]);
				break;
			}
			if (f->list) {
				rc = conv_error(c, f->line, "field '%s' is not repeated: give one "
						"value, not a list", label);
				break;
			}
			rc = convert_value(c, &f->values[0], fd->type, fd->enumeration,
					   fd->message, label, &v);
			if (!rc && json_object_object_add(obj, fd->name, v)) {
				json_object_put(v);
				rc = -ENOMEM;
			}
		}
		if (!seen[idx])
			seen[idx] = f->line;
	}
	/* Primitive fields not given print with their defaults, as in Triton. */
	for (j = 0; j < d->n_fields && !rc; j++) {
		const struct pb_field *fd = &d->fields[j];
		json_object *v;

		if (seen[j] || fd->oneof || (fd->type == PB_MESSAGE && !fd->repeated))
			continue;
		v = default_value(fd);
		if (!v || json_object_object_add(obj, fd->name, v)) {
			json_object_put(v);
			rc = -ENOMEM;
		}
	}
	if (rc) {
		json_object_put(obj);
		if (rc == -ENOMEM)
			rbln_error_set(c->err, rc, "%s: out of memory", c->file);
		return rc;
	}
	*out = obj;
	return 0;
}

int serve_pb_to_json(const struct pbtxt_msg *m, const struct pb_message *desc, const char *file,
	       json_object **out, struct rbln_error *err)
{
	struct conv c = { .file = file, .err = err };

	return convert_message(&c, m, desc, "", out);
}
