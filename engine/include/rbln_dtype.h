/* SPDX-License-Identifier: MIT */
/* Element types of checkpoint tensors the engine can load. */
#ifndef RBLN_DTYPE_H
#define RBLN_DTYPE_H

#include <stddef.h>

enum rbln_dtype {
	RBLN_DTYPE_UNKNOWN = 0,
	RBLN_DTYPE_BF16,
	RBLN_DTYPE_F16,
	RBLN_DTYPE_F32,
};

/* "BF16", "F16", "F32" (safetensors spelling) or "unknown". */
const char *rbln_dtype_name(enum rbln_dtype dt);
/* Bytes per element; 0 for RBLN_DTYPE_UNKNOWN. */
size_t rbln_dtype_size(enum rbln_dtype dt);

#endif
