// SPDX-License-Identifier: MIT
/*
 * A json-c document as YAML, through libyaml's event emitter: objects
 * become block mappings, arrays block sequences, strings scalars. A string
 * that a YAML reader would take for another type (a number such as the
 * device name "0", true, null, ...) is double-quoted; the rest are plain
 * where libyaml allows it. The document holds only objects, arrays and
 * strings (a CDI spec), so no other json-c type needs a YAML form.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include <yaml.h>

#include "cdi_yaml.h"

/* What YAML 1.1 and 1.2 readers resolve to something other than a string. */
static bool looks_typed(const char *s)
{
	static const char *const words[] = {
		"", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False",
		"FALSE", "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off",
		"Off", "OFF", "y", "Y", "n", "N",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(s, words[i]) == 0)
			return true;
	return isdigit((unsigned char)s[0]) || s[0] == '.' ||
	       ((s[0] == '-' || s[0] == '+') && (isdigit((unsigned char)s[1]) || s[1] == '.'));
}

static int emit(yaml_emitter_t *em, yaml_event_t *ev)
{
	return yaml_emitter_emit(em, ev) ? 0 : -1;
}

static int scalar(yaml_emitter_t *em, const char *s)
{
	yaml_event_t ev;

	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s),
					  1, 1, looks_typed(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
					  : YAML_ANY_SCALAR_STYLE))
		return -1;
	return emit(em, &ev);
}

static int node(yaml_emitter_t *em, struct json_object *obj)
{
	yaml_event_t ev;

	switch (json_object_get_type(obj)) {
	case json_type_object:
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							 YAML_BLOCK_MAPPING_STYLE) || emit(em, &ev))
			return -1;
		json_object_object_foreach(obj, key, val) {
			if (scalar(em, key) || node(em, val))
				return -1;
		}
		return yaml_mapping_end_event_initialize(&ev) ? emit(em, &ev) : -1;
	case json_type_array:
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							  YAML_BLOCK_SEQUENCE_STYLE) ||
		    emit(em, &ev))
			return -1;
		for (size_t i = 0; i < json_object_array_length(obj); i++)
			if (node(em, json_object_array_get_idx(obj, i)))
				return -1;
		return yaml_sequence_end_event_initialize(&ev) ? emit(em, &ev) : -1;
	default:
		return scalar(em, json_object_get_string(obj));
	}
}

int rbln_cdi_write_yaml(FILE *out, struct json_object *doc, const char **err)
{
	yaml_emitter_t em;
	yaml_event_t ev;
	int rc = -1;

	if (!yaml_emitter_initialize(&em)) {
		*err = "out of memory";
		return -1;
	}
	yaml_emitter_set_output_file(&em, out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1);
	if (yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && !emit(&em, &ev) &&
	    yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && !emit(&em, &ev) &&
	    !node(&em, doc) &&
	    yaml_document_end_event_initialize(&ev, 1) && !emit(&em, &ev) &&
	    yaml_stream_end_event_initialize(&ev) && !emit(&em, &ev) &&
	    yaml_emitter_flush(&em))
		rc = 0;
	else
		*err = em.problem ? em.problem : "cannot write the YAML document";
	yaml_emitter_delete(&em);
	return rc;
}
