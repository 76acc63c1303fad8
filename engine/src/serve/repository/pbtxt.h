/* SPDX-License-Identifier: MIT */
/*
 * The protocol-buffer text format, as Triton's config.pbtxt files use it:
 * fields "name: value", nested messages "name { ... }" (or "name: { }",
 * "name < >"), lists "name: [1, 2]" and "name [ { }, { } ]", strings with
 * C escapes (adjacent strings concatenate), numbers, identifiers (enum
 * values, true/false/True/False), "#" comments, optional "," or ";" after a
 * field.  The parser builds a schema-free tree with line numbers; the
 * meaning of fields (repeated or not, types) is model_config.c's business.
 */
#ifndef RBLN_SERVE_PBTXT_H
#define RBLN_SERVE_PBTXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_error.h"

enum pbtxt_kind {
	PBTXT_STRING,		/* str/len: the decoded bytes (may hold NULs) */
	PBTXT_NUMBER,		/* str: the literal, e.g. "-1", "0.5", "1e3", "0x10" */
	PBTXT_IDENT,		/* str: an identifier, e.g. TYPE_STRING, true */
	PBTXT_MESSAGE,		/* msg */
};

struct pbtxt_msg;

struct pbtxt_value {
	enum pbtxt_kind kind;
	char *str;		/* NUL-terminated (strings may contain NULs too) */
	size_t len;
	struct pbtxt_msg *msg;
	int line;
};

/* One occurrence of a field; a repeated field may occur several times. */
struct pbtxt_field {
	char *name;
	int line;
	bool list;		/* written with [ ] */
	size_t n_values;	/* 1 unless list (a list may be empty) */
	struct pbtxt_value *values;
};

struct pbtxt_msg {
	int line;		/* of the opening brace; 1 for the top level */
	size_t n_fields;
	struct pbtxt_field *fields;
};

/*
 * Parses text (len bytes, need not be NUL-terminated).  `name` prefixes
 * every error, which reads "NAME:LINE: ...".
 */
int serve_pbtxt_parse(const char *text, size_t len, const char *name, struct pbtxt_msg **out,
		struct rbln_error *err);
void serve_pbtxt_free(struct pbtxt_msg *m);

/* The integer of a NUMBER value (decimal, 0x hex, leading '-'); false if not one. */
bool serve_pbtxt_value_int(const struct pbtxt_value *v, int64_t *out);
/* The number of a NUMBER value, or inf/nan identifiers; false if not one. */
bool serve_pbtxt_value_double(const struct pbtxt_value *v, double *out);
/* true/false in the spellings protobuf accepts (true, True, t, 1, ...). */
bool serve_pbtxt_value_bool(const struct pbtxt_value *v, bool *out);
/* "string", "number", "identifier" or "message", for error messages. */
const char *serve_pbtxt_kind_name(enum pbtxt_kind k);

#endif
