// SPDX-License-Identifier: MIT
/*
 * How every HTTP handler answers: a body, a JSON object, an error in
 * Triton's or OpenAI's shape, and the status of an errno.  A leaf: it
 * knows libmicrohttpd and the API's response bodies, nothing of the server
 * or its dispatch, so the handlers and the dispatcher both build on it
 * without needing each other.
 */
#include "reply.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "http_encoding.h"
#include "rbln_error.h"
#include "serve/api/responses.h"
#include "util/strbuf.h"

unsigned serve_http_status(int err)
{
	switch (err) {
	case -EINVAL:
	case -E2BIG:
	case -ERANGE:
		return MHD_HTTP_BAD_REQUEST;
	case -ENOENT:
		return MHD_HTTP_NOT_FOUND;
	case -EBUSY:
	case -EAGAIN:
	case -ESHUTDOWN:
	case -ETIMEDOUT:
	case -ENOSYS:
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	default:
		return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     const char *content_type, const void *data, size_t len,
			     const char *extra_header, const char *extra_value, bool encode)
{
	struct rbln_strbuf packed = { 0 };
	const char *coding = encode ? serve_encode_reply(c, data, len, &packed) : NULL;
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (coding) {
		data = packed.data;
		len = packed.len;
	}
	r = MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
	rbln_strbuf_free(&packed);
	if (!r)
		return MHD_NO;
	if (coding)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, coding);
	if (encode)
		MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (content_type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	if (extra_header)
		MHD_add_response_header(r, extra_header, extra_value);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result serve_http_reply(struct MHD_Connection *c, unsigned status,
				 const char *content_type, const void *data, size_t len,
				 const char *extra_header, const char *extra_value)
{
	return reply(c, status, content_type, data, len, extra_header, extra_value, false);
}

enum MHD_Result serve_http_reply_encoded(struct MHD_Connection *c, unsigned status,
					 const char *content_type, const void *data, size_t len,
					 const char *extra_header, const char *extra_value)
{
	return reply(c, status, content_type, data, len, extra_header, extra_value, true);
}

enum MHD_Result serve_http_json(struct MHD_Connection *c, unsigned status, json_object *o)
{
	struct rbln_strbuf sb = { 0 };
	enum MHD_Result ret;

	if (!o || serve_json_append(&sb, o)) {
		json_object_put(o);
		rbln_strbuf_free(&sb);
		return MHD_NO;
	}
	json_object_put(o);
	ret = serve_http_reply(c, status, "application/json", sb.data, sb.len, NULL, NULL);
	rbln_strbuf_free(&sb);
	return ret;
}

/* Where a word starts: a file path is a word that starts with '/'. */
static bool word_start(const char *msg, const char *p)
{
	return p == msg || strchr(" \t'\"(`=", p[-1]);
}

void serve_redact_paths(char *msg)
{
	char *p = msg, *end, *last;

	while ((p = strchr(p, '/'))) {
		end = p + strcspn(p, " \t'\"`),;");
		if (!word_start(msg, p) || !strncmp(p, "/v1/", 4) || !strncmp(p, "/v2/", 4)) {
			p = end;
			continue;
		}
		last = p;
		for (char *q = p; q < end; q++)
			if (*q == '/')
				last = q + 1;
		if (last > p + 1) {	/* "/a/b/name" -> "name": keeps what it is, not where */
			memmove(p, last, strlen(last) + 1);
			end = p + (end - last);
		}
		p = end;
	}
}

enum MHD_Result serve_http_error(struct MHD_Connection *c, unsigned status, const char *msg,
				 bool openai)
{
	char text[RBLN_ERROR_MSG_MAX];

	snprintf(text, sizeof(text), "%s", msg);
	serve_redact_paths(text);
	return serve_http_json(c, status, openai ? serve_openai_error_json(text, (int)status)
						 : serve_error_json(text));
}
