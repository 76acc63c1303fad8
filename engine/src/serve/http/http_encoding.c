// SPDX-License-Identifier: MIT
/*
 * gzip and deflate for the HTTP service (zlib): request bodies inflated
 * under the input size bound, whole replies compressed on request.
 */
#include "http_encoding.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

/* zlib's window bits: 15 is the largest window, +16 asks for the gzip wrapper. */
#define ZLIB_WINDOW_BITS 15
#define GZIP_WINDOW_BITS (15 + 16)
/* What inflate writes at a time: memory grows by this past the bound at most. */
#define INFLATE_CHUNK (64u << 10)

static const char *coding_name(enum serve_coding k)
{
	return k == SERVE_CODING_GZIP ? "gzip" : "deflate";
}

/* s[0..n) names coding (ASCII, without case)? */
static bool token_is(const char *s, size_t n, const char *coding)
{
	return strlen(coding) == n && !strncasecmp(s, coding, n);
}

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

static enum serve_coding coding_of(const char *s, size_t n)
{
	/* RFC 9110 8.4.1.3: x-gzip is gzip */
	if (token_is(s, n, "gzip") || token_is(s, n, "x-gzip"))
		return SERVE_CODING_GZIP;
	if (token_is(s, n, "deflate"))
		return SERVE_CODING_DEFLATE;
	if (token_is(s, n, "identity"))
		return SERVE_CODING_IDENTITY;
	return SERVE_CODING_UNKNOWN;
}

enum serve_coding serve_content_coding(const char *header)
{
	size_t n;

	if (!header)
		return SERVE_CODING_IDENTITY;
	n = strlen(header);
	trim(&header, &n);
	/* several codings ("gzip, deflate") are applied in turn: none of ours does that */
	return coding_of(header, n);
}

/* The q-value of one Accept-Encoding element's parameters (";q=0.5"); 1 without one. */
static double qvalue(const char *params, size_t n)
{
	const char *q;
	char num[16];
	size_t len;

	for (q = params; q + 2 <= params + n; q++)
		if ((q[0] == 'q' || q[0] == 'Q') && q[1] == '=' && (q == params || q[-1] == ';' ||
								   q[-1] == ' '))
			break;
	if (q + 2 > params + n)
		return 1.0;
	q += 2;
	len = (size_t)(params + n - q);
	if (len >= sizeof(num))
		len = sizeof(num) - 1;
	memcpy(num, q, len);
	num[len] = '\0';
	return strtod(num, NULL);
}

enum serve_coding serve_accepted_coding(const char *header)
{
	double q_gzip = -1, q_deflate = -1, q_any = -1;
	const char *p = header;

	while (p && *p) {
		size_t n = strcspn(p, ","), name_len = strcspn(p, ";,");
		const char *name = p;
		double q = qvalue(p + name_len, n - name_len);

		trim(&name, &name_len);
		if (token_is(name, name_len, "*"))
			q_any = q;
		else if (coding_of(name, name_len) == SERVE_CODING_GZIP)
			q_gzip = q;
		else if (coding_of(name, name_len) == SERVE_CODING_DEFLATE)
			q_deflate = q;
		p += n + (p[n] == ',');
	}
	/* "*" stands for the codings not named */
	if (q_gzip < 0)
		q_gzip = q_any;
	if (q_deflate < 0)
		q_deflate = q_any;
	if (q_gzip <= 0 && q_deflate <= 0)
		return SERVE_CODING_IDENTITY;
	return q_gzip >= q_deflate ? SERVE_CODING_GZIP : SERVE_CODING_DEFLATE;
}

/* Input for inflate from [*next, end): at most what a uInt counts. */
static void feed(z_stream *z, const unsigned char **next, const unsigned char *end)
{
	size_t left = (size_t)(end - *next);
	uInt n = left > UINT_MAX ? UINT_MAX : (uInt)left;

	z->next_in = (Bytef *)*next;
	z->avail_in = n;
	*next += n;
}

/* One more gzip member follows (RFC 1952 allows several, one after the other)? */
static bool gzip_member_follows(const z_stream *z, const unsigned char *next,
				const unsigned char *end)
{
	const unsigned char *p = z->avail_in ? z->next_in : next;
	size_t left = z->avail_in ? z->avail_in + (size_t)(end - next) : (size_t)(end - next);

	return left >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

static unsigned inflate_into(z_stream *z, enum serve_coding k, const struct rbln_strbuf *in,
			     struct rbln_strbuf *out, size_t max, char *msg, size_t msg_len)
{
	const unsigned char *next = (const unsigned char *)in->data, *end = next + in->len;
	int rc;

	feed(z, &next, end);
	for (;;) {
		if (rbln_strbuf_reserve(out, INFLATE_CHUNK)) {
			snprintf(msg, msg_len, "out of memory inflating the %s request body",
				 coding_name(k));
			return 500;
		}
		z->next_out = (Bytef *)out->data + out->len;
		z->avail_out = INFLATE_CHUNK;
		rc = inflate(z, Z_NO_FLUSH);
		out->len += INFLATE_CHUNK - z->avail_out;
		out->data[out->len] = '\0';
		if (out->len > max) {
			snprintf(msg, msg_len, "request size of the %s-decoded body exceeds the "
				 "maximum allowed input size of %zu. Use --http-max-input-size to "
				 "increase the limit.", coding_name(k), max);
			return 400;
		}
		if (!z->avail_in && next < end)
			feed(z, &next, end);
		if (rc == Z_STREAM_END) {
			if (!z->avail_in && next == end)
				return 0;
			if (k == SERVE_CODING_GZIP && gzip_member_follows(z, next, end)) {
				inflateReset(z);
				continue;
			}
			snprintf(msg, msg_len, "the %s request body has %zu bytes of trailing data "
				 "after the end of its compressed stream", coding_name(k),
				 (size_t)z->avail_in + (size_t)(end - next));
			return 400;
		}
		if (rc == Z_OK)
			continue;
		if (rc == Z_MEM_ERROR) {
			snprintf(msg, msg_len, "out of memory inflating the %s request body",
				 coding_name(k));
			return 500;
		}
		if (rc == Z_BUF_ERROR)	/* all input used and no end seen */
			snprintf(msg, msg_len, "the %s request body is truncated: its compressed "
				 "stream ends early", coding_name(k));
		else if (rc == Z_NEED_DICT)
			snprintf(msg, msg_len, "the deflate request body needs a preset dictionary, "
				 "which HTTP does not provide");
		else
			snprintf(msg, msg_len, "the %s request body is corrupt: %s", coding_name(k),
				 z->msg ? z->msg : "invalid compressed data");
		return 400;
	}
}

unsigned serve_inflate(enum serve_coding k, struct rbln_strbuf *body, size_t max, char *msg,
		       size_t msg_len)
{
	struct rbln_strbuf out = { 0 };
	z_stream z;
	unsigned status;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, k == SERVE_CODING_GZIP ? GZIP_WINDOW_BITS : ZLIB_WINDOW_BITS) != Z_OK) {
		snprintf(msg, msg_len, "cannot start inflating the %s request body",
			 coding_name(k));
		return 500;
	}
	status = inflate_into(&z, k, body, &out, max, msg, msg_len);
	inflateEnd(&z);
	if (status) {
		rbln_strbuf_free(&out);
		return status;
	}
	rbln_strbuf_free(body);
	*body = out;
	return 0;
}

int serve_deflate(enum serve_coding k, const void *data, size_t len, struct rbln_strbuf *out)
{
	z_stream z;
	uLong bound;
	int rc;

	if (len > UINT_MAX || (k != SERVE_CODING_GZIP && k != SERVE_CODING_DEFLATE))
		return -EINVAL;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED,
			 k == SERVE_CODING_GZIP ? GZIP_WINDOW_BITS : ZLIB_WINDOW_BITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	/* deflateBound is for the zlib wrapper; the gzip one is 12 bytes longer */
	bound = deflateBound(&z, (uLong)len) + 32;
	if (bound > UINT_MAX || rbln_strbuf_reserve(out, bound)) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out->data + out->len;
	z.avail_out = (uInt)bound;
	rc = deflate(&z, Z_FINISH);
	if (rc == Z_STREAM_END) {
		out->len += bound - z.avail_out;
		out->data[out->len] = '\0';
	}
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -ENOMEM;
}

unsigned serve_decode_request_body(struct MHD_Connection *c, struct rbln_strbuf *body,
				   size_t max, char *msg, size_t msg_len)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_CONTENT_ENCODING);
	enum serve_coding k = serve_content_coding(h);

	/* a request without a body has nothing encoded */
	if (!body->len || k == SERVE_CODING_IDENTITY)
		return 0;
	if (k == SERVE_CODING_UNKNOWN) {
		snprintf(msg, msg_len, "Unsupported Content-Encoding '%.64s': this server takes "
			 "%s", h, SERVE_ACCEPTED_CODINGS);
		return MHD_HTTP_UNSUPPORTED_MEDIA_TYPE;
	}
	return serve_inflate(k, body, max, msg, msg_len);
}

const char *serve_encode_reply(struct MHD_Connection *c, const void *data, size_t len,
			       struct rbln_strbuf *out)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_ACCEPT_ENCODING);
	enum serve_coding k = serve_accepted_coding(h);

	if (k == SERVE_CODING_IDENTITY || !len)
		return NULL;
	if (serve_deflate(k, data, len, out)) {
		rbln_strbuf_free(out);
		return NULL;	/* sent as it is: identity is always acceptable */
	}
	return coding_name(k);
}
