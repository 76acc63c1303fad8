// SPDX-License-Identifier: MIT
/* Server-sent events framing. */
#include "serve_test.h"

#include <stdlib.h>
#include <string.h>

#include "serve/http/sse.h"

static void check(const char *payload, const char *expect)
{
	struct rbln_strbuf sb = { 0 };

	assert_int_equal(serve_sse_event(&sb, payload, strlen(payload)), 0);
	assert_string_equal(sb.data, expect);
	rbln_strbuf_free(&sb);
}

static void test_framing(void **state)
{
	(void)state;
	check("{\"text_output\":\"A\"}", "data: {\"text_output\":\"A\"}\n\n");
	check("", "data: \n\n");
	/* every line ending starts a new data field, so no line can escape its event */
	check("a\nb", "data: a\ndata: b\n\n");
	check("a\r\nb", "data: a\ndata: b\n\n");
	check("a\rb\n", "data: a\ndata: b\ndata: \n\n");
	check("\n\nevent: x", "data: \ndata: \ndata: event: x\n\n");
}

static void test_json_and_done(void **state)
{
	struct rbln_strbuf sb = { 0 };
	json_object *o = json_object_new_object();

	(void)state;
	json_object_object_add(o, "text_output", json_object_new_string("line1\nline2 / \"q\""));
	assert_int_equal(serve_sse_json(&sb, o), 0);
	/* JSON escapes the newline: one data line; slashes are not escaped */
	assert_string_equal(sb.data, "data: {\"text_output\":\"line1\\nline2 / \\\"q\\\"\"}\n\n");
	assert_int_equal(serve_sse_done(&sb), 0);
	assert_true(strstr(sb.data, "\n\ndata: [DONE]\n\n") != NULL);
	json_object_put(o);
	rbln_strbuf_free(&sb);
}

/* Concatenated events split back into their payloads, as an SSE client does. */
static void test_roundtrip(void **state)
{
	const char *payloads[] = { "{\"a\":1}", "x\ny", "", "[DONE]" };
	struct rbln_strbuf sb = { 0 };
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(serve_sse_event(&sb, payloads[i], strlen(payloads[i])), 0);
	{
		const char *p = sb.data;

		for (i = 0; i < 4; i++) {
			const char *end = strstr(p, "\n\n");
			char data[64] = "";
			const char *line = p;

			assert_non_null(end);
			/* join data lines with \n */
			while (line < end + 1) {
				const char *nl = strchr(line, '\n');

				assert_true(!strncmp(line, "data: ", 6));
				if (line != p)
					strcat(data, "\n");
				strncat(data, line + 6, (size_t)(nl - line - 6));
				line = nl + 1;
			}
			assert_string_equal(data, payloads[i]);
			p = end + 2;
		}
		assert_int_equal(*p, '\0');
	}
	rbln_strbuf_free(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_framing),
		cmocka_unit_test(test_json_and_done),
		cmocka_unit_test(test_roundtrip),
	};

	return cmocka_run_group_tests_name("serve-sse", tests, NULL, NULL);
}
