/* SPDX-License-Identifier: MIT */
#ifndef RBLN_CONFIG_TOKEN_IDS_H
#define RBLN_CONFIG_TOKEN_IDS_H

#include <stddef.h>
#include <stdint.h>

#include "util/json.h"

/*
 * Reads a token-id field that Hugging Face writes either as one number or
 * as a list (eos_token_id of Llama 3 is [128001, 128008, 128009]).
 * Returns 1 when present, 0 when absent or null, negative on error.
 */
int rbln_json_get_token_ids(const struct rbln_json_scope *s, json_object *obj, const char *key,
			    int64_t *ids, size_t cap, size_t *n);

#endif
