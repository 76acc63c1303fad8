/* SPDX-License-Identifier: MIT */
/* One rank's weight file: its shards of every tensor, laid out for the kernels. */
#ifndef RBLN_WEIGHTS_BUILD_H
#define RBLN_WEIGHTS_BUILD_H

#include "compile/progress.h"
#include "compile/weight_source.h"
#include "libnpu.h"
#include "program/layout.h"

/* The bytes rbln_weights_build() writes for a rank (for the progress total). */
uint64_t rbln_weights_build_size(const struct rbln_layout_shape *s);

int rbln_weights_build(const struct rbln_compiled_config *cc, const struct rbln_layout_shape *s,
		  const struct weight_source *src, const char *path, struct progress *pg,
		  struct rbln_error *err);

/*
 * Packs the matrix [n, k] whose row r row_fn gives into the device's
 * 16-column panels of dtype dt in @layout, NPU_LAYOUT_PACKED16 or
 * NPU_LAYOUT_PACKED16_SPACED (npu_pack_weights_layout()).
 */
typedef void (*pack_row_fn)(const void *ctx, int64_t r, enum rbln_dtype dt, void *out);
int rbln_pack16(pack_row_fn row_fn, const void *ctx, int64_t n, int64_t k, enum rbln_dtype dt,
		enum npu_layout layout, unsigned char *dst);

#endif
