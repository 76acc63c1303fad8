/* SPDX-License-Identifier: MIT */
/* Helpers shared by the request parsers (request_*.c). */
#ifndef RBLN_SERVE_REQUEST_INTERNAL_H
#define RBLN_SERVE_REQUEST_INTERNAL_H

#include <json-c/json.h>

#include "request.h"

void serve_request_init(struct serve_request *r, enum serve_api api);

/* The body as a JSON object; an empty body is {} when allow_empty (as Triton's generate). */
int serve_request_body(const char *body, size_t len, bool allow_empty, json_object **out,
		       struct rbln_error *err);

/* Appends a text prompt (len bytes, NUL added). */
int serve_prompt_add_text(struct serve_request *r, const char *text, size_t len,
			  struct rbln_error *err);

#endif
