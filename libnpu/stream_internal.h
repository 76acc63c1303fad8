/* SPDX-License-Identifier: MIT */
/*
 * stream_internal.h - the command-stream builder's state, shared by
 * stream.c (lifetime, buffer list, submission) and stream_cmds.c (one
 * function per opcode).
 */
#ifndef NPU_STREAM_INTERNAL_H
#define NPU_STREAM_INTERNAL_H

#include <pthread.h>

#include "npu_common.h"
#include "rbln_isa.h"

/**
 * struct npu_stream - a command stream being built
 * @lock: makes every builder call atomic (the API is thread-safe even if
 *	sharing one builder between threads is rarely useful)
 * @dev: the device whose buffers the stream names
 * @data: header and commands; the header's size tracks @size
 * @size: bytes used in @data
 * @capacity: bytes allocated at @data
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
	uint8_t *data;
	size_t size;
	size_t capacity;
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
 * npu_stream_append() - append @size bytes of command at @cmd (size a
 * multiple of 8) after the header fields are filled; the caller holds
 * @s->lock and has checked s->error.
 */
void npu_stream_append(npu_stream *s, const void *cmd, size_t size);

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
/** Unlock after npu_stream_begin(). */
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
