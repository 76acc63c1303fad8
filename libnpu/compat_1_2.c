// SPDX-License-Identifier: MIT
/*
 * libnpu 1.2's npu_stream_matmul(), for binaries linked before ISA 1.3.
 *
 * Release 1.3 appended @a_bf16 (RBLN_MATMUL_A_BF16) to struct npu_matmul.
 * A program built against the 1.2 header (or the 1.1 one: the structure
 * did not change in 1.2) passes the shorter structure and is bound to
 * npu_stream_matmul@LIBNPU_1.1, the node of the release that gave the
 * function its previous form; the 1.3 function must not read past that
 * structure. So the 1.1 version of the symbol copies what such a caller
 * passed into the current structure, with float32 activations as before
 * 1.3, and calls the current function. Programs built now bind to the
 * default @@LIBNPU_1.3 version (libnpu.map).
 */
#include <stddef.h>
#include <string.h>

#include "npu_common.h"

/* The 1.2 structure ends where 1.3 added @a_bf16. */
#define V12_MATMUL_SIZE	offsetof(struct npu_matmul, a_bf16)

void npu_stream_matmul_v12(npu_stream *s, const void *op);

void npu_stream_matmul_v12(npu_stream *s, const void *op)
{
	struct npu_matmul mm = { .a_bf16 = 0 };

	memcpy(&mm, op, V12_MATMUL_SIZE);
	npu_stream_matmul(s, &mm);
}
__asm__(".symver npu_stream_matmul_v12, npu_stream_matmul@LIBNPU_1.1");
