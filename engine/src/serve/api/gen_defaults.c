// SPDX-License-Identifier: MIT
/*
 * generation_config.json as request defaults.  vLLM (--generation-config
 * auto) takes temperature, top_p, top_k, min_p, repetition_penalty and
 * max_new_tokens from it when present; a field the file does not have
 * keeps vLLM's own default.  That is why this reads presence, which
 * rbln_generation_config_load() (transformers' defaults filled in) cannot say.
 */
#include "request_build.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"
#include "util/json.h"

int serve_gen_defaults_load(const char *dir, struct serve_gen_defaults *d,
			    struct rbln_error *err)
{
	char *path = rbln_path_join(dir, "generation_config.json");
	struct rbln_json_scope s = { .file = path, .prefix = "", .err = err };
	json_object *o = NULL;
	int rc;

	memset(d, 0, sizeof(*d));
	if (!path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	if (!rbln_file_exists(path)) {
		free(path);
		return 0;
	}
	rc = rbln_json_load_object(path, &o, err);
	if (rc)
		goto out;
	if ((rc = rbln_json_get_double(&s, o, "temperature", false, 0, 1e9, &d->temperature)) < 0)
		goto out;
	d->has_temperature = rc > 0;
	if ((rc = rbln_json_get_double(&s, o, "top_p", false, 0, 1, &d->top_p)) < 0)
		goto out;
	d->has_top_p = rc > 0;
	if ((rc = rbln_json_get_int(&s, o, "top_k", false, -1, INT32_MAX, &d->top_k)) < 0)
		goto out;
	d->has_top_k = rc > 0;
	if ((rc = rbln_json_get_double(&s, o, "min_p", false, 0, 1, &d->min_p)) < 0)
		goto out;
	d->has_min_p = rc > 0;
	if ((rc = rbln_json_get_double(&s, o, "repetition_penalty", false, 1e-9, 1e9,
				       &d->repetition_penalty)) < 0)
		goto out;
	d->has_repetition_penalty = rc > 0;
	if ((rc = rbln_json_get_int(&s, o, "max_new_tokens", false, 1, INT32_MAX,
				    &d->max_new_tokens)) < 0)
		goto out;
	d->has_max_new_tokens = rc > 0;
	rc = 0;
out:
	json_object_put(o);
	free(path);
	return rc;
}
