// SPDX-License-Identifier: MIT
#include "engine_helpers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

char *eh_compile(const char *model, const struct rbln_compile_options *opt)
{
	struct rbln_error err = { 0 };
	char *dir = test_mkdtemp();

	if (rbln_compile(test_model_path(model), dir, opt, &err))
		fail_msg("compiling %s: %s", model, err.msg);
	return dir;
}

struct rbln_runtime *eh_open(const char *dir)
{
	struct rbln_error err = { 0 };
	struct rbln_runtime *e = NULL;

	if (rbln_runtime_open(dir, NULL, &e, &err))
		fail_msg("opening %s: %s", dir, err.msg);
	return e;
}

void eh_greedy(struct rbln_sampling_params *p, int64_t max_tokens)
{
	rbln_sampling_params_init(p);
	p->temperature = 0.0;
	p->max_tokens = max_tokens;
	p->ignore_eos = true;
}

void eh_run_all(struct rbln_runtime *e)
{
	struct rbln_error err = { 0 };
	int rc;

	do {
		rc = rbln_runtime_step(e, NULL, &err);
		if (rc < 0)
			fail_msg("step failed: %s", err.msg);
	} while (rc > 0);
}

int32_t *eh_json_ids(json_object *arr, size_t *n)
{
	size_t i, len = json_object_array_length(arr);
	int32_t *ids = malloc((len ? len : 1) * sizeof(*ids));

	assert_non_null(ids);
	for (i = 0; i < len; i++)
		ids[i] = json_object_get_int(json_object_array_get_idx(arr, i));
	*n = len;
	return ids;
}

int eh_env_size(const char *name, size_t min, size_t max, size_t *value)
{
	const char *s = getenv(name);
	unsigned long long v;
	char *end;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || *s == '-' || v < min || v > max) {
		fprintf(stderr, "%s=%s: not a whole number from %zu to %zu\n", name, s, min, max);
		return -1;
	}
	*value = (size_t)v;
	return 0;
}
