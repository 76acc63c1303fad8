/* SPDX-License-Identifier: MIT */
/*
 * isa_encode.h - the one encoder of command streams (uapi/rbln_isa.h).
 *
 * A stream is bytes in memory: the header, then the commands, each filled
 * field by field from the uapi structures. Operands are plain
 * &struct rbln_isa_operand: their @bo is whatever index the caller's
 * submission gives the buffer. libnpu's stream builder maps buffer handles
 * to buffer-list indices and calls this encoder; the engine's compiler
 * encodes offline, its operands naming program slots (the runtime lists a
 * program's buffers in slot order, so a slot is the index).
 *
 * Nothing here checks ranges: the device validates the whole stream at
 * submission (and the compiler runs the same validator offline), so there
 * is one source of truth for what is valid. The encoder's only errors are
 * running out of memory and growing past the stream's size limit; both are
 * sticky, so a caller may encode many commands and look once.
 *
 * An internal static library (libnpu/isa/meson.build), not libnpu's API.
 */
#ifndef ISA_ENCODE_H
#define ISA_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_isa.h"

/**
 * struct isa_stream - a command stream being encoded
 * @data: header and commands; the header's size always equals @size
 * @size: bytes used in @data
 * @capacity: bytes allocated at @data
 * @limit: largest @size allowed (a multiple of RBLN_ISA_ALIGN)
 * @error: first error (-ENOMEM or -E2BIG), sticky until
 *	isa_stream_reset(); 0 if none
 * @minor: the header's version_minor: the least ISA minor version that
 *	gives the commands so far their meaning (1.1 the compute opcodes,
 *	1.2 RBLN_KV_HEAD_MAJOR and RBLN_DTYPE_I8, 1.3 RBLN_MATMUL_A_BF16;
 *	bytes the encoder does not recognise claim RBLN_ISA_VERSION_MINOR).
 *	A stream of a lower minor is valid on every later device with the
 *	same meaning (uapi/rbln_isa.h), so a stream runs on every device
 *	that has what it uses, an older one included.
 */
struct isa_stream {
	uint8_t *data;
	size_t size;
	size_t capacity;
	size_t limit;
	int error;
	uint16_t minor;
};

/**
 * isa_stream_init() - an empty stream (the header only)
 * @limit: the largest stream the consumer accepts in bytes (a device's
 *	max_cmd_size); capped at what the header's 32-bit size field holds
 *
 * Return: 0 or -ENOMEM (then isa_stream_free() is still safe).
 */
int isa_stream_init(struct isa_stream *s, uint64_t limit);
void isa_stream_free(struct isa_stream *s);
/** isa_stream_reset() - back to the header only, the error cleared. */
void isa_stream_reset(struct isa_stream *s);

/**
 * isa_encode_raw() - append @size bytes of ready-made command(s)
 *
 * @size must be a multiple of RBLN_ISA_ALIGN (the caller checks it; the
 * encoder's own commands always are).
 */
void isa_encode_raw(struct isa_stream *s, const void *cmd, size_t size);

static inline struct rbln_isa_operand isa_operand(uint32_t bo, uint64_t offset,
						  uint64_t size)
{
	struct rbln_isa_operand op = { .bo = bo, .offset = offset, .size = size };

	return op;
}

/* Data movement and synchronisation (opcodes 0x00-0x0f) and ADD. */
void isa_encode_nop(struct isa_stream *s);
void isa_encode_barrier(struct isa_stream *s);
void isa_encode_fill(struct isa_stream *s, struct rbln_isa_operand dst,
		     uint32_t value);
void isa_encode_copy(struct isa_stream *s, struct rbln_isa_operand dst,
		     struct rbln_isa_operand src);
void isa_encode_sem_signal(struct isa_stream *s, struct rbln_isa_operand sem,
			   enum rbln_isa_sem_op op, uint64_t value);
void isa_encode_sem_wait(struct isa_stream *s, struct rbln_isa_operand sem,
			 enum rbln_isa_sem_cond cond, uint64_t value,
			 uint64_t timeout_ns);
void isa_encode_add(struct isa_stream *s, struct rbln_isa_operand dst,
		    struct rbln_isa_operand a, struct rbln_isa_operand b);

/* Compute (ISA 1.1). Enumerated fields are stored as given. */
void isa_encode_embed(struct isa_stream *s, struct rbln_isa_operand dst,
		      struct rbln_isa_operand table, struct rbln_isa_operand ids,
		      enum rbln_isa_dtype dtype, uint32_t dim, uint32_t id_base,
		      bool zero_outside);
void isa_encode_rmsnorm(struct isa_stream *s, struct rbln_isa_operand dst,
			struct rbln_isa_operand src,
			struct rbln_isa_operand weight,
			enum rbln_isa_dtype dtype, uint32_t dim, float eps);
/**
 * isa_encode_matmul() - RBLN_OP_MATMUL
 * @flags: the command's flags: RBLN_MATMUL_ACCUMULATE (add to @dst, the
 *	residual add) and RBLN_MATMUL_A_BF16 (ISA 1.3: the device may round
 *	the activations to bfloat16), stored as given (the device refuses
 *	any other bit). A bool passes as RBLN_MATMUL_ACCUMULATE (bit 0), as
 *	this parameter was before 1.3.
 */
void isa_encode_matmul(struct isa_stream *s, struct rbln_isa_operand dst,
		       struct rbln_isa_operand a, struct rbln_isa_operand w,
		       enum rbln_isa_dtype dtype, enum rbln_isa_layout layout,
		       uint32_t k, uint32_t n, uint32_t flags);

/**
 * struct isa_rope_params - the frequencies of RBLN_OP_ROPE
 * @llama3: RBLN_ROPE_SCALING_LLAMA3 with the four fields below; false:
 *	the default frequencies (the fields below are not encoded)
 */
struct isa_rope_params {
	bool llama3;
	float theta;
	float factor;
	float low_freq_factor;
	float high_freq_factor;
	uint32_t original_max_pos;
};

void isa_encode_rope(struct isa_stream *s, struct rbln_isa_operand x,
		     struct rbln_isa_operand pos, uint32_t heads,
		     uint32_t head_dim, uint32_t stride,
		     const struct isa_rope_params *rope);
void isa_encode_swiglu(struct isa_stream *s, struct rbln_isa_operand dst,
		       struct rbln_isa_operand gate, struct rbln_isa_operand up,
		       uint32_t n, uint32_t gate_stride, uint32_t up_stride);

/**
 * struct isa_kv_shape - a paged KV cache as KV_WRITE and ATTENTION see it
 * @token_major: the ISA 1.1 layout [block][token][kv_head][head_dim]; by
 *	default (false) the head-major one (RBLN_KV_HEAD_MAJOR), which decode
 *	attention reads several times faster
 */
struct isa_kv_shape {
	enum rbln_isa_dtype dtype;
	uint32_t block_size;
	uint32_t kv_heads;
	uint32_t head_dim;
	bool token_major;
};

void isa_encode_kv_write(struct isa_stream *s, struct rbln_isa_operand k_cache,
			 struct rbln_isa_operand v_cache,
			 struct rbln_isa_operand k, struct rbln_isa_operand v,
			 struct rbln_isa_operand slots,
			 const struct isa_kv_shape *kv, uint32_t k_stride,
			 uint32_t v_stride);

/** struct isa_attention - the operands and fields of RBLN_OP_ATTENTION */
struct isa_attention {
	struct rbln_isa_operand out, q, k_cache, v_cache, seqs, block_tables;
	struct rbln_isa_operand work;
	struct isa_kv_shape kv;
	uint32_t q_heads;
	uint32_t q_stride;
	uint32_t max_blocks;
	uint32_t partition_len;
	float scale;
};

void isa_encode_attention(struct isa_stream *s, const struct isa_attention *a);
void isa_encode_argmax(struct isa_stream *s, struct rbln_isa_operand values,
		       struct rbln_isa_operand indices,
		       struct rbln_isa_operand src, uint32_t n,
		       uint32_t index_base);
void isa_encode_topk(struct isa_stream *s, struct rbln_isa_operand values,
		     struct rbln_isa_operand indices,
		     struct rbln_isa_operand src, uint32_t n, uint32_t k,
		     uint32_t index_base);

/**
 * struct isa_allreduce - one rank's part of a float32 sum all-reduce
 * @ranks: the group's size, at least 2
 * @rank: this rank (isa_encode_allreduce_scattered() only)
 * @phases_before: arrival phases the counter has counted before this
 *	all-reduce (isa_encode_allreduce() uses one, the scattered form two)
 * @arrivals: the group's one arrival counter (a __u64 semaphore every
 *	rank can write), zero before phase 0
 * @areas: [@ranks] each rank's partial, published (written) by that rank
 *	before this call's commands, in area isa_allreduce_area() of its
 *	communication buffer; all of one size
 * @dst: receives the sum (the size of an area)
 * @add_to_dst: add the sum to what @dst holds instead of storing it; the
 *	sum is formed in @sum first (isa_encode_allreduce() only)
 * @sum: scratch of an area's size, used when @add_to_dst
 * @timeout_ns: the SEM_WAIT timeout
 */
struct isa_allreduce {
	uint32_t ranks;
	uint32_t rank;
	uint64_t phases_before;
	struct rbln_isa_operand arrivals;
	const struct rbln_isa_operand *areas;
	struct rbln_isa_operand dst;
	bool add_to_dst;
	struct rbln_isa_operand sum;
	uint64_t timeout_ns;
};

/**
 * isa_allreduce_area() - which of a rank's two areas the all-reduce that
 * has @earlier all-reduces of the group before it publishes in
 */
static inline unsigned int isa_allreduce_area(uint64_t earlier)
{
	return (unsigned int)(earlier % 2);
}

/**
 * isa_encode_allreduce() - the one all-reduce construction of the stack
 *
 * Each rank adds 1 to the one arrival counter and waits until all ranks
 * have arrived (one phase), then sums every rank's area in rank order (so
 * every rank computes the same bits) straight from the peers' memory. One
 * counter means one SEM_WAIT per collective, not one per peer: on an
 * oversubscribed host every extra wait is a thread polling for a core.
 * Two areas used alternately make it safe to publish the next partial
 * before the peers finished reading this one: a rank that arrived at an
 * all-reduce has finished with the one before, and nothing publishes the
 * next but one before every rank arrived. The counter only grows, so one
 * group serves any number of collectives; a caller may also zero it
 * between uses when no device runs.
 */
void isa_encode_allreduce(struct isa_stream *s, const struct isa_allreduce *ar);

/**
 * isa_encode_allreduce_scattered() - the same construction with the sum
 * split across the ranks
 *
 * As isa_encode_allreduce(), but rank r sums only chunk r of the areas
 * (in rank order: the same bits), writes it into chunk r of every rank's
 * area (so @areas must be writable), and after a second phase every rank
 * copies its own, now complete, area into @dst. Each rank reads and adds
 * 1/ranks of the data instead of all of it, for one more wait. Chunk r of
 * any area is read and written by rank r only; every access to a rank's
 * area is over once all ranks passed the second wait, so a caller that
 * only uses this form may publish every all-reduce into the same area.
 * Uses two phases; @add_to_dst must be false.
 */
void isa_encode_allreduce_scattered(struct isa_stream *s,
				    const struct isa_allreduce *ar);

#endif /* ISA_ENCODE_H */
