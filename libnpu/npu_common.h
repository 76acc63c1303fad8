/* SPDX-License-Identifier: MIT */
/*
 * npu_common.h - helpers shared by the files of the common layer (not by
 * backends: those see npu_backend.h only).
 */
#ifndef NPU_COMMON_H
#define NPU_COMMON_H

#include "npu_backend.h"

/**
 * npu_parse_device_list() - parse an RBLN_DEVICES value
 * @spec: "0-3", "0,2,5", " 1 , 4-6 " ...; "" or blanks select no device
 * @source: name for messages ("RBLN_DEVICES")
 * @hw_count: devices the backend has; every index must be below it
 * @out: receives a malloc'ed array of hardware indices in the order given
 * @count: receives its length
 *
 * Return: 0, or -EINVAL (malformed, out of range, listed twice) with the
 * detail naming the position and the problem.
 */
int npu_parse_device_list(const char *spec, const char *source,
			  unsigned int hw_count, unsigned int **out,
			  unsigned int *count);

/**
 * npu_backend_choose() - the backend for a requested kind
 * @requested: NPU_BACKEND_AUTO (then RBLN_BACKEND, then whether rbln
 *	devices exist), or a kind
 * @ops: receives the backend
 */
int npu_backend_choose(enum npu_backend requested,
		       const struct npu_backend_ops **ops);

/** Take a context reference (one per device). */
void npu_context_get(npu_context *ctx);
/** Drop a context reference; the last one frees it. */
void npu_context_put(npu_context *ctx);

/** Allocate a zeroed object of @size plus @priv_size backend bytes. */
void *npu_object_alloc(size_t size, size_t priv_size);

/**
 * npu_fence_new() - a fence of @dev for submit(): refcount 1, a device
 * reference taken, backend part zeroed
 */
npu_fence *npu_fence_new(npu_device *dev);
/** Free a fence that submit() refused (no fence_destroy()). */
void npu_fence_discard(npu_fence *f);

#endif /* NPU_COMMON_H */
