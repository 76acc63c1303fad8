/* SPDX-License-Identifier: MIT */
/*
 * HTTP content codings, as tritonserver has them: request bodies sent with
 * "Content-Encoding: gzip" or "deflate" (tritonclient's
 * request_compression_algorithm) are inflated before they are parsed, and
 * whole responses are compressed for a client that sends Accept-Encoding
 * (response_compression_algorithm).  Event streams are never compressed: a
 * compressor holds back the bytes of each event until it has more, which
 * would delay every token.
 */
#ifndef RBLN_SERVE_HTTP_ENCODING_H
#define RBLN_SERVE_HTTP_ENCODING_H

#include <stddef.h>

#include <microhttpd.h>

#include "util/strbuf.h"

enum serve_coding {
	SERVE_CODING_IDENTITY,
	SERVE_CODING_GZIP,
	SERVE_CODING_DEFLATE,	/* the zlib format (RFC 1950), as HTTP's "deflate" is */
	SERVE_CODING_UNKNOWN,
};

/* The coding a Content-Encoding header names (NULL: identity). */
enum serve_coding serve_content_coding(const char *header);

/*
 * The coding the client prefers among gzip and deflate by the q-values of
 * its Accept-Encoding header (NULL: identity); identity when it takes neither.
 */
enum serve_coding serve_accepted_coding(const char *header);

/*
 * Inflates body in place.  The inflated size is bounded by max (a small
 * body must not become gigabytes in memory): past it, or when the data is
 * corrupt, truncated or followed by other bytes, it answers 400 with msg
 * saying which; 500 when memory runs out; 0 when done.
 */
unsigned serve_inflate(enum serve_coding k, struct rbln_strbuf *body, size_t max, char *msg,
		       size_t msg_len);

/* Compresses data into out (empty before); 0, or -ENOMEM/-EINVAL. */
int serve_deflate(enum serve_coding k, const void *data, size_t len, struct rbln_strbuf *out);

/*
 * The request's body as the handlers need it: decoded by its
 * Content-Encoding.  0 when usable; else the HTTP status to answer with
 * msg (415 for a coding this server does not have, whose answer must carry
 * SERVE_ACCEPTED_CODINGS as its Accept-Encoding header).
 */
unsigned serve_decode_request_body(struct MHD_Connection *c, struct rbln_strbuf *body,
				   size_t max, char *msg, size_t msg_len);

#define SERVE_ACCEPTED_CODINGS "gzip, deflate"

/*
 * A reply's body as the client asked for it: the name of the coding used,
 * with the compressed bytes in out, or NULL to send data as it is.
 */
const char *serve_encode_reply(struct MHD_Connection *c, const void *data, size_t len,
			       struct rbln_strbuf *out);

#endif
