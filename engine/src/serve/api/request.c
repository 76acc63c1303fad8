// SPDX-License-Identifier: MIT
/* Shared parts of the request parsers: freeing, JSON body reading. */
#include "request.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "request_internal.h"
#include "util/json.h"

void serve_request_free(struct serve_request *r)
{
	size_t i;

	serve_gen_options_free(&r->opts);
	for (i = 0; i < r->n_prompts; i++) {
		free(r->prompts[i].text);
		free(r->prompts[i].ids);
	}
	free(r->prompts);
	free(r->id);
	free(r->outputs);
	free(r->model);
	free(r->messages_json);
	free(r->chat_kwargs_json);
	memset(r, 0, sizeof(*r));
}

void serve_request_init(struct serve_request *r, enum serve_api api)
{
	memset(r, 0, sizeof(*r));
	serve_gen_options_init(&r->opts);
	r->api = api;
	r->n = 1;
}

/*
 * json-c keeps a "\u0000" inside a string, but every C consumer after it
 * stops at the NUL: "a\u0000b" would be served as "a", and a key
 * "x\u0000y" read as "x".  Text with a NUL is refused, saying where.
 */
static int reject_nul(const char *s, size_t len, struct rbln_error *err)
{
	bool in_string = false;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!s[i])
			return rbln_error_set(err, -EINVAL, "the request body contains a NUL byte "
					      "at offset %zu", i);
		if (!in_string) {
			in_string = s[i] == '"';
			continue;
		}
		if (s[i] == '"') {
			in_string = false;
			continue;
		}
		if (s[i] != '\\' || i + 1 >= len)
			continue;
		i++;	/* the escaped character: an escaped backslash is not an escape */
		if (s[i] == 'u' && len - i > 4 && !memcmp(s + i + 1, "0000", 4))
			return rbln_error_set(err, -EINVAL, "the request body contains \\u0000 (a "
					      "NUL character) in a string at offset %zu: text "
					      "cannot contain NUL", i - 1);
	}
	return 0;
}

int serve_request_body(const char *body, size_t len, bool allow_empty, json_object **out,
		       struct rbln_error *err)
{
	size_t i;
	int rc;

	*out = NULL;
	rc = reject_nul(body, len, err);
	if (rc)
		return rc;
	for (i = 0; i < len; i++)
		if (body[i] != ' ' && body[i] != '\t' && body[i] != '\r' && body[i] != '\n')
			break;
	if (i == len) {
		if (!allow_empty)
			return rbln_error_set(err, -EINVAL, "the request body is empty; a JSON object "
					      "is expected");
		*out = json_object_new_object();
		return *out ? 0 : rbln_error_set(err, -ENOMEM, "out of memory");
	}
	rc = rbln_json_parse(body, len, "request body", out, err);
	if (rc)
		return rc;
	if (!json_object_is_type(*out, json_type_object)) {
		rc = rbln_error_set(err, -EINVAL, "the request body must be a JSON object, got %s",
				    rbln_json_type_name(*out));
		json_object_put(*out);
		*out = NULL;
	}
	return rc;
}

int serve_prompt_add_text(struct serve_request *r, const char *text, size_t len,
			  struct rbln_error *err)
{
	struct serve_prompt *np;

	/* binary BYTES tensors are not JSON: a NUL there would cut the prompt short */
	if (memchr(text, '\0', len))
		return rbln_error_set(err, -EINVAL, "the prompt contains a NUL byte at offset %zu: "
				      "text cannot contain NUL",
				      (size_t)((const char *)memchr(text, '\0', len) - text));
	np = realloc(r->prompts, (r->n_prompts + 1) * sizeof(*np));
	if (!np)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	r->prompts = np;
	memset(&np[r->n_prompts], 0, sizeof(*np));
	np[r->n_prompts].text = malloc(len + 1);
	if (!np[r->n_prompts].text)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	memcpy(np[r->n_prompts].text, text, len);
	np[r->n_prompts].text[len] = '\0';
	r->n_prompts++;
	return 0;
}
