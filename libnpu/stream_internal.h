/* SPDX-License-Identifier: MIT */
/*
 * stream_internal.h - the command-stream builder's state, shared by
 * stream.c (lifetime, buffer list, submission), stream_cmds.c and
 * stream_compute.c (one function per opcode) and collective.c. The bytes
 * are written by the ISA encoder (libnpu/isa/isa_encode.h); the builder
 * adds what the encoder does not know: buffer handles mapped to
 * buffer-list indices, locking, and errors with messages.
 */
#ifndef NPU_STREAM_INTERNAL_H
#define NPU_STREAM_INTERNAL_H

#include <pthread.h>

#include "npu_common.h"
#include "isa_encode.h"

/**
 * struct npu_stream - a command stream being built
 * @lock: makes every builder call atomic (the API is thread-safe even if
 *	sharing one builder between threads is rarely useful)
 * @dev: the device whose buffers the stream names
 * @enc: the encoded stream (header and commands), limited to the
 *	device's max_cmd_size
 * @uses: the buffer list
 * @num_uses: entries used in @uses
 * @uses_capacity: entries allocated at @uses
 * @error: first builder error (sticky), 0 if none
 * @error_detail: npu_error_detail() of that error, repeated by submit
 * @cmd: host command buffer the stream is copied to for submission
 */
struct npu_stream {
	pthread_mutex_t lock;
	npu_device *dev;
	struct isa_stream enc;
	struct npu_buffer_use *uses;
	uint32_t num_uses;
	uint32_t uses_capacity;
	int error;
	char error_detail[256];
	npu_buffer *cmd;
};

/** Record @err as the stream's error unless it has one; returns @err. */
int npu_stream_set_error(npu_stream *s, int err);

/**
 * npu_stream_use() - buffer-list index of @buf with at least @access,
 * adding or widening the entry; caller holds @s->lock. Returns
 * NPU_STREAM_NO_BUFFER and sets the stream error on failure.
 */
uint32_t npu_stream_use(npu_stream *s, npu_buffer *buf, uint32_t access,
			const char *what);

#define NPU_STREAM_NO_BUFFER UINT32_MAX

/** Lock @s for a builder call; false (unlocked) if NULL or failed. */
bool npu_stream_begin(npu_stream *s);
/**
 * npu_stream_end() - unlock after npu_stream_begin(), first turning an
 * encoder failure of the call (out of memory, stream too large) into the
 * stream's error
 */
void npu_stream_end(npu_stream *s);

/**
 * npu_stream_operand() - fill @op naming @offset/@size of @buf with
 * @access in the buffer list; false (stream error set) when refused.
 * Caller holds @s->lock.
 */
bool npu_stream_operand(npu_stream *s, struct rbln_isa_operand *op,
			npu_buffer *buf, uint32_t access, uint64_t offset,
			uint64_t size, const char *what);

#endif /* NPU_STREAM_INTERNAL_H */
