// SPDX-License-Identifier: MIT
/*
 * gzip and deflate of the HTTP service (http_encoding.c): the headers'
 * codings and q-values, round trips, and the bodies a hostile client
 * sends: truncated, trailing garbage, a trailer claiming 2 GB, a bomb
 * past the bound, several gzip members.
 */
#include "serve_test.h"

#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "serve/http/http_encoding.h"

#define MSG_LEN 256

static void test_content_coding(void **state)
{
	(void)state;
	assert_int_equal(serve_content_coding(NULL), SERVE_CODING_IDENTITY);
	assert_int_equal(serve_content_coding("gzip"), SERVE_CODING_GZIP);
	assert_int_equal(serve_content_coding(" X-GZip "), SERVE_CODING_GZIP);
	assert_int_equal(serve_content_coding("deflate"), SERVE_CODING_DEFLATE);
	assert_int_equal(serve_content_coding("identity"), SERVE_CODING_IDENTITY);
	assert_int_equal(serve_content_coding("br"), SERVE_CODING_UNKNOWN);
	assert_int_equal(serve_content_coding("gzip, deflate"), SERVE_CODING_UNKNOWN);
	assert_int_equal(serve_content_coding(""), SERVE_CODING_UNKNOWN);
}

static void test_accepted_coding(void **state)
{
	(void)state;
	assert_int_equal(serve_accepted_coding(NULL), SERVE_CODING_IDENTITY);
	assert_int_equal(serve_accepted_coding("gzip"), SERVE_CODING_GZIP);
	assert_int_equal(serve_accepted_coding("deflate"), SERVE_CODING_DEFLATE);
	assert_int_equal(serve_accepted_coding("gzip, deflate, br"), SERVE_CODING_GZIP);
	assert_int_equal(serve_accepted_coding("gzip;q=0.2, deflate;q=0.8"), SERVE_CODING_DEFLATE);
	assert_int_equal(serve_accepted_coding("deflate; q=0.5 ,gzip;Q=0.9"), SERVE_CODING_GZIP);
	assert_int_equal(serve_accepted_coding("gzip;q=0"), SERVE_CODING_IDENTITY);
	assert_int_equal(serve_accepted_coding("*"), SERVE_CODING_GZIP);
	assert_int_equal(serve_accepted_coding("*;q=0, deflate"), SERVE_CODING_DEFLATE);
	assert_int_equal(serve_accepted_coding("br, identity"), SERVE_CODING_IDENTITY);
	assert_int_equal(serve_accepted_coding(",,;q=,gzip;q=abc"), SERVE_CODING_IDENTITY);
}

static void pack(enum serve_coding k, const char *text, struct rbln_strbuf *out)
{
	memset(out, 0, sizeof(*out));
	assert_int_equal(serve_deflate(k, text, strlen(text), out), 0);
}

static unsigned unpack(enum serve_coding k, const void *data, size_t len, size_t max,
		       struct rbln_strbuf *body, char *msg)
{
	memset(body, 0, sizeof(*body));
	assert_int_equal(rbln_strbuf_append(body, data, len), 0);
	msg[0] = '\0';
	return serve_inflate(k, body, max, msg, MSG_LEN);
}

static void test_round_trip(void **state)
{
	static const char text[] = "{\"text_input\": \"What is the capital of France?\"}";
	enum serve_coding k;
	struct rbln_strbuf z, body;
	char msg[MSG_LEN];

	(void)state;
	for (k = SERVE_CODING_GZIP; k <= SERVE_CODING_DEFLATE; k++) {
		pack(k, text, &z);
		assert_int_equal(unpack(k, z.data, z.len, 1 << 20, &body, msg), 0);
		assert_int_equal(body.len, strlen(text));
		assert_string_equal(body.data, text);
		rbln_strbuf_free(&body);
		/* exactly the bound is allowed; a byte less is not */
		assert_int_equal(unpack(k, z.data, z.len, strlen(text), &body, msg), 0);
		rbln_strbuf_free(&body);
		assert_int_equal(unpack(k, z.data, z.len, strlen(text) - 1, &body, msg), 400);
		assert_non_null(strstr(msg, "exceeds the maximum allowed input size"));
		rbln_strbuf_free(&body);
		rbln_strbuf_free(&z);
	}
	assert_int_equal(serve_deflate(SERVE_CODING_UNKNOWN, "x", 1, &z), -EINVAL);
}

static void test_hostile_bodies(void **state)
{
	struct rbln_strbuf z, body, two = { 0 };
	char msg[MSG_LEN];
	unsigned char *bomb;
	size_t n = 64u << 20;

	(void)state;
	pack(SERVE_CODING_GZIP, "{\"a\": 1}", &z);
	assert_int_equal(unpack(SERVE_CODING_GZIP, z.data, z.len / 2, 1024, &body, msg), 400);
	assert_non_null(strstr(msg, "truncated"));
	rbln_strbuf_free(&body);
	assert_int_equal(unpack(SERVE_CODING_GZIP, z.data, z.len - 8, 1024, &body, msg), 400);
	assert_non_null(strstr(msg, "truncated"));
	rbln_strbuf_free(&body);
	/* trailing garbage: named with its size */
	assert_int_equal(rbln_strbuf_append(&z, "junk", 4), 0);
	assert_int_equal(unpack(SERVE_CODING_GZIP, z.data, z.len, 1024, &body, msg), 400);
	assert_non_null(strstr(msg, "4 bytes of trailing data"));
	rbln_strbuf_free(&body);
	/* a trailer claiming 2 GB (ISIZE): refused by the length check, nothing allocated */
	z.len -= 4;
	memcpy(z.data + z.len - 4, "\x00\x00\x00\x80", 4);
	assert_int_equal(unpack(SERVE_CODING_GZIP, z.data, z.len, 1024, &body, msg), 400);
	assert_non_null(strstr(msg, "incorrect length check"));
	rbln_strbuf_free(&body);
	assert_int_equal(unpack(SERVE_CODING_DEFLATE, "plain", 5, 1024, &body, msg), 400);
	assert_non_null(strstr(msg, "deflate request body is corrupt"));
	rbln_strbuf_free(&body);
	rbln_strbuf_free(&z);
	/* two gzip members are one body */
	pack(SERVE_CODING_GZIP, "{\"a\":", &z);
	assert_int_equal(rbln_strbuf_append(&two, z.data, z.len), 0);
	rbln_strbuf_free(&z);
	pack(SERVE_CODING_GZIP, " 1}", &z);
	assert_int_equal(rbln_strbuf_append(&two, z.data, z.len), 0);
	assert_int_equal(unpack(SERVE_CODING_GZIP, two.data, two.len, 1024, &body, msg), 0);
	assert_string_equal(body.data, "{\"a\": 1}");
	rbln_strbuf_free(&body);
	rbln_strbuf_free(&two);
	rbln_strbuf_free(&z);
	/* a bomb: 64 MiB of zeros stop at the 1 MiB bound (plus one chunk at most) */
	bomb = calloc(1, n);
	assert_non_null(bomb);
	memset(&z, 0, sizeof(z));
	assert_int_equal(serve_deflate(SERVE_CODING_GZIP, bomb, n, &z), 0);
	free(bomb);
	assert_true(z.len < (1u << 20));
	memset(&body, 0, sizeof(body));
	assert_int_equal(rbln_strbuf_append(&body, z.data, z.len), 0);
	assert_int_equal(serve_inflate(SERVE_CODING_GZIP, &body, 1u << 20, msg, sizeof(msg)), 400);
	assert_non_null(strstr(msg, "exceeds the maximum allowed input size of 1048576"));
	/* the body is left as it came: nothing of the inflated data is kept */
	assert_int_equal(body.len, z.len);
	rbln_strbuf_free(&body);
	rbln_strbuf_free(&z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_content_coding),
		cmocka_unit_test(test_accepted_coding),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_hostile_bodies),
	};

	return cmocka_run_group_tests_name("serve-encoding", tests, NULL, NULL);
}
