/* SPDX-License-Identifier: MIT */
/*
 * Writing command streams (uapi/rbln_isa.h) offline, without a device.
 *
 * Operands name a program slot (weights, KV cache, scratch, ...) instead of
 * a submission's buffer-list index; the runtime submits each program with
 * its buffers listed in slot order, so a slot number is the index.
 *
 * This header keeps uapi/rbln_isa.h out of the engine's other sources and
 * needs none of the engine's headers in return: rbln_isa.h's enumerators
 * (RBLN_DTYPE_BF16, RBLN_ROPE_LLAMA3) share names with rbln_dtype.h's and
 * rbln_config.h's, so no file can include both.
 */
#ifndef RBLN_ISA_EMIT_H
#define RBLN_ISA_EMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_error.h"
#include "util/strbuf.h"

/* Device limits the compiler checks against (equal to rbln_isa.h's). */
#define EMIT_MAX_HEAD_DIM 256u
#define EMIT_PACK_COLS 16u
#define EMIT_SEM_WAIT_MAX_NS 60000000000ull

/* Element types, with rbln_isa.h's values. */
enum emit_dtype {
	EMIT_F32 = 0,
	EMIT_F16 = 1,
	EMIT_BF16 = 2,
};

/* ROPE frequencies: plain (llama3 false) or Hugging Face's llama3 scaling. */
struct emit_rope_params {
	bool llama3;
	float theta;
	float factor;
	float low_freq_factor;
	float high_freq_factor;
	uint32_t original_max_pos;
};

struct emit_op {
	uint32_t slot;
	uint64_t offset;
	uint64_t size;
};

struct emit_stream {
	struct rbln_strbuf buf;
	int error;		/* first error (sticky), 0 if none */
	uint32_t commands;
};

void emit_init(struct emit_stream *s);
void emit_free(struct emit_stream *s);
/* Completes the header; the data stays owned by s. */
int emit_finish(struct emit_stream *s, const void **data, size_t *len);

void emit_embed(struct emit_stream *s, struct emit_op dst, struct emit_op table,
		struct emit_op ids, enum emit_dtype dt, uint32_t dim, uint32_t id_base,
		bool zero_outside);
void emit_rmsnorm(struct emit_stream *s, struct emit_op dst, struct emit_op src,
		  struct emit_op weight, enum emit_dtype dt, uint32_t dim, float eps);
/* Weights in the packed 16-column layout. */
void emit_matmul(struct emit_stream *s, struct emit_op dst, struct emit_op a, struct emit_op w,
		 enum emit_dtype dt, uint32_t k, uint32_t n, bool accumulate);
void emit_rope(struct emit_stream *s, struct emit_op x, struct emit_op pos, uint32_t heads,
	       uint32_t head_dim, uint32_t stride, const struct emit_rope_params *rope);
void emit_swiglu(struct emit_stream *s, struct emit_op dst, struct emit_op gate,
		 struct emit_op up, uint32_t n, uint32_t gate_stride, uint32_t up_stride);

struct emit_kv_shape {
	enum emit_dtype dtype;
	uint32_t block_size;
	uint32_t kv_heads;
	uint32_t head_dim;
};

void emit_kv_write(struct emit_stream *s, struct emit_op k_cache, struct emit_op v_cache,
		   struct emit_op k, struct emit_op v, struct emit_op slots,
		   const struct emit_kv_shape *kv, uint32_t k_stride, uint32_t v_stride);

struct emit_attention {
	struct emit_op out, q, k_cache, v_cache, seqs, block_tables, work;
	struct emit_kv_shape kv;
	uint32_t q_heads;
	uint32_t q_stride;
	uint32_t max_blocks;
	uint32_t partition_len;
	float scale;
};

void emit_attention(struct emit_stream *s, const struct emit_attention *a);
void emit_argmax(struct emit_stream *s, struct emit_op values, struct emit_op indices,
		 struct emit_op src, uint32_t n, uint32_t index_base);
void emit_add(struct emit_stream *s, struct emit_op dst, struct emit_op a, struct emit_op b);
void emit_sem_add(struct emit_stream *s, struct emit_op sem, uint64_t value);
void emit_sem_wait_geq(struct emit_stream *s, struct emit_op sem, uint64_t value,
		       uint64_t timeout_ns);

#define EMIT_ACCESS_READ 1u
#define EMIT_ACCESS_WRITE 2u

/*
 * Checks a finished stream with the device model's own validator against
 * slots of the given sizes and EMIT_ACCESS_* bits; the message names the
 * command, its opcode, the operand and the reason.
 */
int emit_validate(const void *stream, size_t len, const uint64_t *slot_sizes,
		  const uint32_t *slot_access, uint32_t n_slots, const char *what,
		  struct rbln_error *err);

#endif
