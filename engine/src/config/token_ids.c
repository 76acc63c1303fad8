// SPDX-License-Identifier: MIT
#include "token_ids.h"

#include <errno.h>

int rbln_json_get_token_ids(const struct rbln_json_scope *s, json_object *obj, const char *key,
			    int64_t *ids, size_t cap, size_t *n)
{
	json_object *v;
	size_t i, len;

	*n = 0;
	if (!json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (json_object_is_type(v, json_type_int)) {
		int rc = rbln_json_get_int(s, obj, key, true, 0, INT32_MAX, &ids[0]);

		if (rc < 0)
			return rc;
		*n = 1;
		return 1;
	}
	if (!json_object_is_type(v, json_type_array))
		return rbln_json_field_error(s, key, -EINVAL,
					     "must be a token id or a list of token ids, got %s",
					     rbln_json_type_name(v));
	len = json_object_array_length(v);
	if (len > cap)
		return rbln_json_field_error(s, key, -EINVAL, "lists %zu token ids, at most %zu supported",
					     len, cap);
	for (i = 0; i < len; i++) {
		json_object *e = json_object_array_get_idx(v, i);

		if (!json_object_is_type(e, json_type_int) || json_object_get_int64(e) < 0 ||
		    json_object_get_int64(e) > INT32_MAX)
			return rbln_json_field_error(s, key, -EINVAL,
						     "element %zu must be a token id (integer >= 0), got %s",
						     i, json_object_to_json_string(e));
		ids[i] = json_object_get_int64(e);
	}
	*n = len;
	return 1;
}
