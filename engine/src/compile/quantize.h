/* SPDX-License-Identifier: MIT */
/*
 * Weight-only int8 quantisation (--quantize w8a16): each output channel
 * (a row of a linear layer's [n, k] weight) gets one float32 scale, its
 * largest magnitude / 127 (absmax), and each weight the int8 nearest to
 * weight / scale (ties to even). The device multiplies by f32(q) * scale.
 */
#ifndef RBLN_QUANTIZE_H
#define RBLN_QUANTIZE_H

#include <stdint.h>

#include "compile/weights_build.h"

/*
 * Quantises the rows [n, k] of @w (float32, row-major) into @q (int8
 * [n, k]) and @scales ([n]). A row of zeros has scale 0 and q 0.
 */
void rbln_quantize_rows_w8(const float *w, int64_t n, int64_t k, int8_t *q, float *scales);

/*
 * rbln_pack16() for w8a16: the matrix [n, k] that row_fn gives (read as
 * float32), quantised and packed as a MATMUL's RBLN_DTYPE_I8 operand in
 * @layout (packed or spaced panels) at dst: the int8 panels, then the
 * float32 scales of whole panels.
 */
int rbln_pack16_w8(pack_row_fn row_fn, const void *ctx, int64_t n, int64_t k,
		   enum npu_layout layout, unsigned char *dst);

#endif
