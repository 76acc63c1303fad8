/* SPDX-License-Identifier: MIT */
/*
 * Element types of checkpoint tensors the engine can load (safetensors'
 * and config.json's dtypes), also used for the compiled weights and KV
 * cache. Not the device's element types: those are uapi/rbln_isa.h's
 * enum rbln_isa_dtype (RBLN_DTYPE_*), with other values; the compiler
 * converts where it encodes commands. These values are stored in weight
 * files (struct weight_file_header.dtype), so they never change.
 */
#ifndef RBLN_ENGINE_DTYPE_H
#define RBLN_ENGINE_DTYPE_H

#include <stddef.h>

enum rbln_dtype {
	RBLN_TENSOR_UNKNOWN = 0,
	RBLN_TENSOR_BF16,
	RBLN_TENSOR_F16,
	RBLN_TENSOR_F32,
};

/* "BF16", "F16", "F32" (safetensors spelling) or "unknown". */
const char *rbln_dtype_name(enum rbln_dtype dt);
/* Bytes per element; 0 for RBLN_TENSOR_UNKNOWN. */
size_t rbln_dtype_size(enum rbln_dtype dt);

#endif
