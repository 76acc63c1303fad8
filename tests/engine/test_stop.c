// SPDX-License-Identifier: MIT
/*
 * Stop strings over streamed pieces: matches across piece boundaries,
 * held-back prefixes released when they turn out not to match, the
 * earliest of several stops, include_stop, and nothing after a match.
 */
#include <stdlib.h>
#include <string.h>

#include "rbln_stop.h"
#include "test_common.h"

/* Feeds the pieces, returns everything emitted (malloc'd); *hit: a stop matched. */
static char *feed(struct rbln_stop_matcher *m, const char *const *pieces, bool *hit)
{
	char *all = calloc(1, 4096);
	const char *out;
	size_t n, i;
	int rc;

	assert_non_null(all);
	*hit = false;
	for (i = 0; pieces[i]; i++) {
		rc = rbln_stop_push(m, pieces[i], strlen(pieces[i]), &out, &n);
		assert_true(rc >= 0);
		strncat(all, out, n);
		if (rc == 1)
			*hit = true;
	}
	if (!*hit) {
		rbln_stop_finish(m, &out, &n);
		strncat(all, out, n);
	}
	return all;
}

static char *run(const char *const *stops, size_t n_stops, bool include,
		 const char *const *pieces, bool *hit, int *which)
{
	struct rbln_stop_matcher *m;
	char *text;

	assert_int_equal(rbln_stop_new(stops, n_stops, include, &m), 0);
	text = feed(m, pieces, hit);
	*which = rbln_stop_matched(m);
	rbln_stop_free(m);
	return text;
}

static void test_across_pieces(void **state)
{
	const char *stops[] = { "[User]" };
	const char *pieces[] = { "Hello", " wor", "ld.\n[Us", "er]", " more", NULL };
	bool hit;
	int which;
	char *t = run(stops, 1, false, pieces, &hit, &which);

	(void)state;
	assert_true(hit);
	assert_int_equal(which, 0);
	assert_string_equal(t, "Hello world.\n");
	free(t);
}

static void test_include_stop(void **state)
{
	const char *stops[] = { "END" };
	const char *pieces[] = { "abcE", "N", "Dxyz", NULL };
	bool hit;
	int which;
	char *t = run(stops, 1, true, pieces, &hit, &which);

	(void)state;
	assert_true(hit);
	assert_string_equal(t, "abcEND");
	free(t);
}

/* A held-back prefix that does not complete is released, in order. */
static void test_false_prefix_released(void **state)
{
	const char *stops[] = { "[Assistant]" };
	const char *pieces[] = { "a [Assi", "gnment] b", NULL };
	bool hit;
	int which;
	char *t = run(stops, 1, false, pieces, &hit, &which);

	(void)state;
	assert_false(hit);
	assert_int_equal(which, -1);
	assert_string_equal(t, "a [Assignment] b");
	free(t);
}

/* The held-back text is not emitted early: nothing of "[Us" shows before it resolves. */
static void test_holds_back(void **state)
{
	const char *stops[] = { "[User]" };
	struct rbln_stop_matcher *m;
	const char *out;
	size_t n;

	(void)state;
	assert_int_equal(rbln_stop_new(stops, 1, false, &m), 0);
	assert_int_equal(rbln_stop_push(m, "ok [Us", 6, &out, &n), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(out, "ok ", 3);
	assert_int_equal(rbln_stop_push(m, "er]x", 4, &out, &n), 1);
	assert_int_equal(n, 0);
	assert_int_equal(rbln_stop_push(m, "later", 5, &out, &n), 1);
	assert_int_equal(n, 0);
	rbln_stop_free(m);
}

static void test_earliest_of_several(void **state)
{
	const char *stops[] = { "world", "lo w", "xyz" };
	const char *pieces[] = { "hello world", NULL };
	bool hit;
	int which;
	char *t = run(stops, 3, false, pieces, &hit, &which);

	(void)state;
	assert_true(hit);
	assert_int_equal(which, 1);
	assert_string_equal(t, "hel");
	free(t);
}

/* Multi-byte characters: a stop in Korean text, split inside the pieces. */
static void test_utf8(void **state)
{
	const char *stops[] = { "메모리" };
	const char *pieces[] = { "Flash 메", "모리 사용", NULL };
	bool hit;
	int which;
	char *t = run(stops, 1, false, pieces, &hit, &which);

	(void)state;
	assert_true(hit);
	assert_string_equal(t, "Flash ");
	free(t);
}

static void test_no_stops_passthrough(void **state)
{
	const char *pieces[] = { "a", "b", "", "c", NULL };
	bool hit;
	int which;
	char *t = run(NULL, 0, false, pieces, &hit, &which);

	(void)state;
	assert_false(hit);
	assert_string_equal(t, "abc");
	free(t);
}

static void test_empty_stop_rejected(void **state)
{
	const char *stops[] = { "" };
	struct rbln_stop_matcher *m = NULL;

	(void)state;
	assert_int_not_equal(rbln_stop_new(stops, 1, false, &m), 0);
	assert_null(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_across_pieces),
		cmocka_unit_test(test_include_stop),
		cmocka_unit_test(test_false_prefix_released),
		cmocka_unit_test(test_holds_back),
		cmocka_unit_test(test_earliest_of_several),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_no_stops_passthrough),
		cmocka_unit_test(test_empty_stop_rejected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
