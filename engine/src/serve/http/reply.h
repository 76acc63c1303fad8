/* SPDX-License-Identifier: MIT */
/* The functions HTTP handlers answer with (reply.c): a leaf of the HTTP service. */
#ifndef RBLN_SERVE_REPLY_H
#define RBLN_SERVE_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>
#include <microhttpd.h>

/* Queues a reply with a body (copied), never compressed; extra_header may be NULL. */
enum MHD_Result serve_http_reply(struct MHD_Connection *c, unsigned status,
				 const char *content_type, const void *data, size_t len,
				 const char *extra_header, const char *extra_value);
/*
 * The same, the body compressed as the client's Accept-Encoding asks.  Only
 * answers that tritonserver compresses go through it: successful inference
 * answers (and the metrics).  tritonserver sends everything else as it is,
 * and clients count on it: tritonclient.http.aio sends aiohttp's default
 * "Accept-Encoding: gzip, deflate" on every call but inflates only
 * inference answers, so a compressed model config or error breaks it.
 */
enum MHD_Result serve_http_reply_encoded(struct MHD_Connection *c, unsigned status,
					 const char *content_type, const void *data, size_t len,
					 const char *extra_header, const char *extra_value);
/* Queues o (and drops it) as application/json. */
enum MHD_Result serve_http_json(struct MHD_Connection *c, unsigned status, json_object *o);
/*
 * Errors never show where the server keeps its files: an absolute path in
 * msg is cut to its last component (the routes /v1/... and /v2/... stay).
 */
void serve_redact_paths(char *msg);
/* {"error": msg} (paths redacted), or OpenAI's error object for the /v1 routes. */
enum MHD_Result serve_http_error(struct MHD_Connection *c, unsigned status, const char *msg,
				 bool openai);
/* The HTTP status of a negative errno (Triton's mapping). */
unsigned serve_http_status(int err);

#endif
