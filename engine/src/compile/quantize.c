// SPDX-License-Identifier: MIT
#include "compile/quantize.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "libnpu.h"
#include "rbln_isa.h"

void rbln_quantize_rows_w8(const float *w, int64_t n, int64_t k, int8_t *q, float *scales)
{
	int64_t r, i;

	for (r = 0; r < n; r++) {
		const float *row = w + r * k;
		double absmax = 0.0, x;
		float scale;

		for (i = 0; i < k; i++)
			absmax = fmax(absmax, fabs((double)row[i]));
		scale = (float)(absmax / 127.0);
		scales[r] = scale;
		for (i = 0; i < k; i++) {
			/*
			 * Divided by the float32 scale the device uses; the
			 * clamp catches the absmax element rounding past 127.
			 */
			x = scale > 0.0f ? nearbyint((double)row[i] / scale) : 0.0;
			q[r * k + i] = (int8_t)fmin(127.0, fmax(-127.0, x));
		}
	}
}

int rbln_pack16_w8(pack_row_fn row_fn, const void *ctx, int64_t n, int64_t k,
		   enum npu_layout layout, unsigned char *dst)
{
	const size_t panel = (size_t)RBLN_ISA_PACK_COLS * (size_t)k;
	const int64_t panels = (n + RBLN_ISA_PACK_COLS - 1) / RBLN_ISA_PACK_COLS;
	/* Bytes from one panel to the next: the spaced layout's gap, or none. */
	const size_t stride = npu_weights_size(NPU_DTYPE_I8, layout, RBLN_ISA_PACK_COLS,
					       (uint32_t)k) - RBLN_ISA_PACK_COLS * sizeof(float);
	float *rows = malloc(panel * sizeof(float));
	float scales[RBLN_ISA_PACK_COLS];
	/* One panel as the row-major operand (cols * k int8, then 16 scales), then packed. */
	unsigned char *rm = malloc(panel + sizeof(scales));
	unsigned char *packed = malloc(panel + sizeof(scales));
	int64_t p0, r, cols;
	int rc = rows && rm && packed ? 0 : -ENOMEM;

	/* Panel by panel, as rbln_pack16(): the int8 panels first, all scales after them. */
	for (p0 = 0; p0 < n && !rc; p0 += RBLN_ISA_PACK_COLS) {
		cols = n - p0 < RBLN_ISA_PACK_COLS ? n - p0 : RBLN_ISA_PACK_COLS;
		for (r = 0; r < cols; r++)
			row_fn(ctx, p0 + r, RBLN_TENSOR_F32, rows + r * k);
		memset(scales, 0, sizeof(scales));
		rbln_quantize_rows_w8(rows, cols, k, (int8_t *)rm, scales);
		memcpy(rm + (size_t)cols * (size_t)k, scales, sizeof(scales));
		rc = npu_pack_weights(packed, rm, NPU_DTYPE_I8, (uint32_t)cols, (uint32_t)k);
		if (rc)
			break;
		memcpy(dst + (size_t)(p0 / RBLN_ISA_PACK_COLS) * stride, packed, panel);
		memcpy(dst + (size_t)panels * stride + (size_t)(p0 / RBLN_ISA_PACK_COLS) * sizeof(scales),
		       packed + panel, sizeof(scales));
	}
	free(rows);
	free(rm);
	free(packed);
	return rc;
}
