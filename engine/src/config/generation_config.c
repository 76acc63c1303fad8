// SPDX-License-Identifier: MIT
/* generation_config.json: sampling defaults shipped with a checkpoint. */
#include "rbln_config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/token_ids.h"
#include "util/file.h"
#include "util/json.h"

static void set_defaults(struct rbln_generation_config *gen)
{
	/* transformers' GenerationConfig defaults. */
	memset(gen, 0, sizeof(*gen));
	gen->bos_token_id = -1;
	gen->pad_token_id = -1;
	gen->temperature = 1.0;
	gen->top_p = 1.0;
	gen->top_k = 50;
	gen->repetition_penalty = 1.0;
	gen->max_new_tokens = -1;
	gen->max_length = 20;
}

static int parse_fields(const struct rbln_json_scope *s, json_object *root,
			struct rbln_generation_config *gen)
{
	int rc;

	if ((rc = rbln_json_get_int(s, root, "bos_token_id", false, 0, INT32_MAX,
				    &gen->bos_token_id)) < 0 ||
	    (rc = rbln_json_get_int(s, root, "pad_token_id", false, 0, INT32_MAX,
				    &gen->pad_token_id)) < 0 ||
	    (rc = rbln_json_get_token_ids(s, root, "eos_token_id", gen->eos_token_ids,
					  RBLN_MAX_EOS_IDS, &gen->n_eos_token_ids)) < 0 ||
	    (rc = rbln_json_get_bool(s, root, "do_sample", false, &gen->do_sample)) < 0 ||
	    (rc = rbln_json_get_double(s, root, "temperature", false, 0.0, 1e6,
				       &gen->temperature)) < 0 ||
	    (rc = rbln_json_get_double(s, root, "top_p", false, 0.0, 1.0, &gen->top_p)) < 0 ||
	    (rc = rbln_json_get_int(s, root, "top_k", false, 0, INT32_MAX, &gen->top_k)) < 0 ||
	    (rc = rbln_json_get_double(s, root, "min_p", false, 0.0, 1.0, &gen->min_p)) < 0 ||
	    (rc = rbln_json_get_double(s, root, "repetition_penalty", false, 1e-6, 1e6,
				       &gen->repetition_penalty)) < 0 ||
	    (rc = rbln_json_get_int(s, root, "max_new_tokens", false, 0, INT32_MAX,
				    &gen->max_new_tokens)) < 0 ||
	    (rc = rbln_json_get_int(s, root, "max_length", false, 0, INT32_MAX,
				    &gen->max_length)) < 0)
		return rc;
	if (gen->top_p <= 0.0)
		return rbln_json_field_error(s, "top_p", -EINVAL, "must be in (0, 1], got 0");
	return 0;
}

int rbln_generation_config_parse(const char *text, size_t len, const char *name,
				 struct rbln_generation_config *gen, struct rbln_error *err)
{
	struct rbln_json_scope s = { name, "", err };
	json_object *root;
	int rc;

	set_defaults(gen);
	rc = rbln_json_parse(text, len, name, &root, err);
	if (rc)
		return rc;
	if (!json_object_is_type(root, json_type_object))
		rc = rbln_error_set(err, -EINVAL, "%s: expected a JSON object, got %s", name,
				    rbln_json_type_name(root));
	else
		rc = parse_fields(&s, root, gen);
	json_object_put(root);
	if (!rc)
		gen->present = true;
	return rc;
}

int rbln_generation_config_load(const char *model_dir, struct rbln_generation_config *gen,
				struct rbln_error *err)
{
	char *path = rbln_path_join(model_dir, "generation_config.json");
	char *text = NULL;
	size_t len;
	int rc;

	set_defaults(gen);
	if (!path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	if (!rbln_file_exists(path)) {
		free(path);
		return 0;
	}
	rc = rbln_file_read_max(path, RBLN_JSON_FILE_MAX, &text, &len, err);
	if (!rc)
		rc = rbln_generation_config_parse(text, len, path, gen, err);
	free(text);
	free(path);
	return rc;
}
