/* SPDX-License-Identifier: MIT */
/*
 * safetensors files: an 8-byte little-endian header length, a JSON header
 * describing every tensor (dtype, shape, data_offsets), then the data.
 * Everything in the header is checked before any tensor is handed out, so
 * a truncated or inconsistent file yields an error naming the file and the
 * tensor, never a read out of bounds.
 */
#ifndef RBLN_SAFETENSORS_H
#define RBLN_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "rbln_dtype.h"
#include "rbln_error.h"

#define RBLN_TENSOR_MAX_DIMS 8
/* The safetensors reference implementation refuses larger headers too. */
#define RBLN_SAFETENSORS_MAX_HEADER 100000000u

struct rbln_tensor {
	const char *name;
	enum rbln_dtype dtype;
	size_t ndim;
	int64_t shape[RBLN_TENSOR_MAX_DIMS];
	size_t nbytes;
	const void *data;	/* inside the file mapping; not necessarily aligned */
	const char *file;	/* path (or name) of the file holding the tensor */
};

struct rbln_safetensors;

/*
 * Validates a whole safetensors image held in memory; the buffer must
 * outlive the result.  `name` appears in errors.
 */
int rbln_safetensors_parse(const void *buf, size_t len, const char *name,
			   struct rbln_safetensors **out, struct rbln_error *err);
/* Maps a file read-only and validates it. */
int rbln_safetensors_open(const char *path, struct rbln_safetensors **out,
			  struct rbln_error *err);
void rbln_safetensors_close(struct rbln_safetensors *st);

size_t rbln_safetensors_count(const struct rbln_safetensors *st);
/* Tensors in data-offset order. */
const struct rbln_tensor *rbln_safetensors_at(const struct rbln_safetensors *st, size_t i);
const struct rbln_tensor *rbln_safetensors_find(const struct rbln_safetensors *st,
						const char *name);
/* A value of the optional __metadata__ string map, or NULL. */
const char *rbln_safetensors_metadata(const struct rbln_safetensors *st, const char *key);
const char *rbln_safetensors_name(const struct rbln_safetensors *st);

#endif
