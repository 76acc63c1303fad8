// SPDX-License-Identifier: MIT
/* Lifecycle and lookups of one safetensors file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "weights/safetensors_internal.h"

static struct rbln_safetensors *alloc_named(const char *name, struct rbln_error *err)
{
	struct rbln_safetensors *st = calloc(1, sizeof(*st));

	if (st)
		st->name = strdup(name);
	if (!st || !st->name) {
		free(st);
		rbln_error_set(err, -ENOMEM, "%s: out of memory", name);
		return NULL;
	}
	return st;
}

int rbln_safetensors_parse(const void *buf, size_t len, const char *name,
			   struct rbln_safetensors **out, struct rbln_error *err)
{
	struct rbln_safetensors *st = alloc_named(name, err);
	int rc;

	*out = NULL;
	if (!st)
		return -ENOMEM;
	rc = rbln_safetensors_parse_into(st, buf, len, err);
	if (rc) {
		rbln_safetensors_close(st);
		return rc;
	}
	*out = st;
	return 0;
}

int rbln_safetensors_open(const char *path, struct rbln_safetensors **out,
			  struct rbln_error *err)
{
	struct rbln_safetensors *st = alloc_named(path, err);
	int rc;

	*out = NULL;
	if (!st)
		return -ENOMEM;
	rc = rbln_file_map(path, &st->map, err);
	if (!rc)
		rc = rbln_safetensors_parse_into(st, st->map.addr, st->map.len, err);
	if (rc) {
		rbln_safetensors_close(st);
		return rc;
	}
	*out = st;
	return 0;
}

void rbln_safetensors_close(struct rbln_safetensors *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->count; i++)
		free((char *)st->tensors[i].name);
	free(st->tensors);
	for (i = 0; i < st->n_meta; i++) {
		free(st->meta[i].key);
		free(st->meta[i].value);
	}
	free(st->meta);
	rbln_strmap_free(&st->by_name);
	rbln_file_unmap(&st->map);
	free(st->name);
	free(st);
}

size_t rbln_safetensors_count(const struct rbln_safetensors *st)
{
	return st->count;
}

const struct rbln_tensor *rbln_safetensors_at(const struct rbln_safetensors *st, size_t i)
{
	return i < st->count ? &st->tensors[i] : NULL;
}

const struct rbln_tensor *rbln_safetensors_find(const struct rbln_safetensors *st,
						const char *name)
{
	int32_t i = rbln_strmap_get(&st->by_name, name, strlen(name));

	return i < 0 ? NULL : &st->tensors[i];
}

const char *rbln_safetensors_metadata(const struct rbln_safetensors *st, const char *key)
{
	size_t i;

	for (i = 0; i < st->n_meta; i++)
		if (strcmp(st->meta[i].key, key) == 0)
			return st->meta[i].value;
	return NULL;
}

const char *rbln_safetensors_name(const struct rbln_safetensors *st)
{
	return st->name;
}
