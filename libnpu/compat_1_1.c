// SPDX-License-Identifier: MIT
/*
 * libnpu 1.1's npu_stream_kv_write() and npu_stream_attention(), for
 * binaries linked before ISA 1.2.
 *
 * Release 1.2 appended a cache @layout to struct npu_kv_write and struct
 * npu_attention. A program built against the 1.1 header passes the
 * shorter structures, so the 1.2 functions must not read them: the 1.1
 * versions of the two symbols (npu_stream_kv_write@LIBNPU_1.1, ...) copy
 * what a 1.1 caller passed into the current structure, with the layout
 * 1.1 had (token-major), and call the current function. Programs built
 * now bind to the default @@LIBNPU_1.2 versions (libnpu.map).
 */
#include <stddef.h>
#include <string.h>

#include "npu_common.h"

/* The 1.1 structures end where 1.2 added @layout. */
#define V11_KV_WRITE_SIZE	offsetof(struct npu_kv_write, layout)
#define V11_ATTENTION_SIZE	offsetof(struct npu_attention, layout)

void npu_stream_kv_write_v11(npu_stream *s, const void *op);
void npu_stream_attention_v11(npu_stream *s, const void *op);

void npu_stream_kv_write_v11(npu_stream *s, const void *op)
{
	struct npu_kv_write kw = { .layout = NPU_KV_TOKEN_MAJOR };

	memcpy(&kw, op, V11_KV_WRITE_SIZE);
	npu_stream_kv_write(s, &kw);
}
__asm__(".symver npu_stream_kv_write_v11, npu_stream_kv_write@LIBNPU_1.1");

void npu_stream_attention_v11(npu_stream *s, const void *op)
{
	struct npu_attention at = { .layout = NPU_KV_TOKEN_MAJOR };

	memcpy(&at, op, V11_ATTENTION_SIZE);
	npu_stream_attention(s, &at);
}
__asm__(".symver npu_stream_attention_v11, npu_stream_attention@LIBNPU_1.1");
