/* SPDX-License-Identifier: MIT */
/*
 * Server-sent events framing (the WHATWG event-stream format), as Triton's
 * generate_stream and OpenAI streams use it: every event is "data:" lines
 * ended by an empty line.
 */
#ifndef RBLN_SERVE_SSE_H
#define RBLN_SERVE_SSE_H

#include <stddef.h>

#include <json-c/json.h>

#include "util/strbuf.h"

/* One event whose data is payload; a line break in it starts another data: line. */
int serve_sse_event(struct rbln_strbuf *sb, const char *payload, size_t len);
/* One event with a JSON object as its data. */
int serve_sse_json(struct rbln_strbuf *sb, json_object *o);
/* OpenAI's end of stream: "data: [DONE]". */
int serve_sse_done(struct rbln_strbuf *sb);

#endif
