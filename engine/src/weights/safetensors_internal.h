/* SPDX-License-Identifier: MIT */
#ifndef RBLN_SAFETENSORS_INTERNAL_H
#define RBLN_SAFETENSORS_INTERNAL_H

#include "rbln_safetensors.h"
#include "util/file.h"
#include "util/hashmap.h"

struct rbln_safetensors_meta {
	char *key;
	char *value;
};

struct rbln_safetensors {
	char *name;
	struct rbln_mapping map;	/* empty when parsing a caller's buffer */
	struct rbln_tensor *tensors;	/* sorted by data offset */
	size_t count;
	struct rbln_strmap by_name;	/* name -> index into tensors */
	struct rbln_safetensors_meta *meta;
	size_t n_meta;
};

/* Validates buf[0..len) into st (whose name is already set). */
int rbln_safetensors_parse_into(struct rbln_safetensors *st, const void *buf, size_t len,
				struct rbln_error *err);

#endif
