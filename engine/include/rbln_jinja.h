/* SPDX-License-Identifier: MIT */
/*
 * A Jinja2 subset interpreter for chat templates, configured like
 * transformers' template environment (trim_blocks, lstrip_blocks, loop
 * controls, tojson without HTML escaping, raise_exception, strftime_now).
 * Templates are compiled once (lexer -> AST) and rendered many times.
 */
#ifndef RBLN_JINJA_H
#define RBLN_JINJA_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "rbln_error.h"

struct json_object;
struct rbln_jinja_template;

/* `name` appears in errors ("chat template line 3: ..."). */
int rbln_jinja_compile(const char *src, size_t len, const char *name,
		       struct rbln_jinja_template **out, struct rbln_error *err);
void rbln_jinja_free(struct rbln_jinja_template *t);

struct rbln_jinja_options {
	time_t now;		/* strftime_now's clock; 0 = the current time */
	uint64_t max_steps;	/* evaluation budget; 0 = the default (20 million) */
};

/* Renders with the members of a JSON object as variables; *out is malloc'd. */
int rbln_jinja_render(const struct rbln_jinja_template *t, const struct json_object *vars,
		      const struct rbln_jinja_options *opt, char **out, size_t *out_len,
		      struct rbln_error *err);

#endif
