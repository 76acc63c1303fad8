// SPDX-License-Identifier: MIT
/*
 * SSE framing.  A payload line break (LF, CRLF or CR, all three end a line
 * in the event-stream grammar) must start a new "data:" field, or the
 * client would read the rest as a field of its own; compact JSON never has
 * one, but plain-text payloads may.
 */
#include "sse.h"

#include <errno.h>
#include <string.h>

#include "serve/api/responses.h"

int serve_sse_event(struct rbln_strbuf *sb, const char *payload, size_t len)
{
	size_t i = 0, start = 0;

	while (1) {
		if (i == len || payload[i] == '\n' || payload[i] == '\r') {
			if (rbln_strbuf_append(sb, "data: ", 6) ||
			    rbln_strbuf_append(sb, payload + start, i - start) ||
			    rbln_strbuf_append_char(sb, '\n'))
				return -ENOMEM;
			if (i == len)
				break;
			if (payload[i] == '\r' && i + 1 < len && payload[i + 1] == '\n')
				i++;
			start = ++i;
			continue;
		}
		i++;
	}
	return rbln_strbuf_append_char(sb, '\n') ? -ENOMEM : 0;
}

int serve_sse_json(struct rbln_strbuf *sb, json_object *o)
{
	size_t len;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE, &len);

	if (!s)
		return -ENOMEM;
	return serve_sse_event(sb, s, len);
}

int serve_sse_done(struct rbln_strbuf *sb)
{
	return serve_sse_event(sb, "[DONE]", 6);
}
