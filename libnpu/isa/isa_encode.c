// SPDX-License-Identifier: MIT
/*
 * One encoding function per opcode: each fills the uapi structure field by
 * field (every other byte zero, as the validator requires of pads and
 * reserved fields) and appends it.
 */
#include <string.h>

#include "isa_encode.h"

static uint32_t f32_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof(u));
	return u;
}

static struct rbln_isa_cmd header(enum rbln_isa_opcode opcode, size_t size,
				  uint32_t flags)
{
	struct rbln_isa_cmd hdr = { .opcode = (uint16_t)opcode,
				    .size = (uint16_t)size, .flags = flags };

	return hdr;
}

void isa_encode_nop(struct isa_stream *s)
{
	struct rbln_isa_cmd c = header(RBLN_OP_NOP, sizeof(c), 0);

	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_barrier(struct isa_stream *s)
{
	struct rbln_isa_cmd c = header(RBLN_OP_BARRIER, sizeof(c), 0);

	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_fill(struct isa_stream *s, struct rbln_isa_operand dst,
		     uint32_t value)
{
	struct rbln_isa_fill c = {
		.hdr = header(RBLN_OP_FILL, sizeof(c), 0),
		.dst = dst, .value = value,
	};

	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_copy(struct isa_stream *s, struct rbln_isa_operand dst,
		     struct rbln_isa_operand src)
{
	struct rbln_isa_copy c = {
		.hdr = header(RBLN_OP_COPY, sizeof(c), 0),
		.dst = dst, .src = src,
	};

	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_sem_signal(struct isa_stream *s, struct rbln_isa_operand sem,
			   enum rbln_isa_sem_op op, uint64_t value)
{
	struct rbln_isa_sem_signal c = {
		.hdr = header(RBLN_OP_SEM_SIGNAL, sizeof(c), 0),
		.sem = sem, .op = (uint32_t)op, .value = value,
	};

	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_sem_wait(struct isa_stream *s, struct rbln_isa_operand sem,
			 enum rbln_isa_sem_cond cond, uint64_t value,
			 uint64_t timeout_ns)
{
	struct rbln_isa_sem_wait c = {
		.hdr = header(RBLN_OP_SEM_WAIT, sizeof(c), 0),
		.sem = sem, .cond = (uint32_t)cond, .value = value,
		.timeout_ns = timeout_ns,
	};

	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_add(struct isa_stream *s, struct rbln_isa_operand dst,
		    struct rbln_isa_operand a, struct rbln_isa_operand b)
{
	struct rbln_isa_add c = {
		.hdr = header(RBLN_OP_ADD, sizeof(c), 0),
		.dst = dst, .a = a, .b = b,
	};

	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_embed(struct isa_stream *s, struct rbln_isa_operand dst,
		      struct rbln_isa_operand table, struct rbln_isa_operand ids,
		      enum rbln_isa_dtype dtype, uint32_t dim, uint32_t id_base,
		      bool zero_outside)
{
	struct rbln_isa_embed c = {
		.hdr = header(RBLN_OP_EMBED, sizeof(c),
			      zero_outside ? RBLN_EMBED_ZERO_OUTSIDE : 0),
		.dst = dst, .table = table, .ids = ids,
		.dtype = (uint32_t)dtype, .dim = dim, .id_base = id_base,
	};

	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_rmsnorm(struct isa_stream *s, struct rbln_isa_operand dst,
			struct rbln_isa_operand src,
			struct rbln_isa_operand weight,
			enum rbln_isa_dtype dtype, uint32_t dim, float eps)
{
	struct rbln_isa_rmsnorm c = {
		.hdr = header(RBLN_OP_RMSNORM, sizeof(c), 0),
		.dst = dst, .src = src, .weight = weight,
		.dtype = (uint32_t)dtype, .dim = dim, .eps = f32_bits(eps),
	};

	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_matmul(struct isa_stream *s, struct rbln_isa_operand dst,
		       struct rbln_isa_operand a, struct rbln_isa_operand w,
		       enum rbln_isa_dtype dtype, enum rbln_isa_layout layout,
		       uint32_t k, uint32_t n, uint32_t flags)
{
	struct rbln_isa_matmul c = {
		.hdr = header(RBLN_OP_MATMUL, sizeof(c), flags),
		.dst = dst, .a = a, .w = w,
		.dtype = (uint32_t)dtype, .layout = (uint32_t)layout,
		.k = k, .n = n,
	};

	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_rope(struct isa_stream *s, struct rbln_isa_operand x,
		     struct rbln_isa_operand pos, uint32_t heads,
		     uint32_t head_dim, uint32_t stride,
		     const struct isa_rope_params *rope)
{
	struct rbln_isa_rope c = {
		.hdr = header(RBLN_OP_ROPE, sizeof(c), 0),
		.x = x, .pos = pos, .heads = heads, .head_dim = head_dim,
		.stride = stride, .scaling = RBLN_ROPE_SCALING_DEFAULT,
		.theta = f32_bits(rope->theta),
	};

	if (rope->llama3) {
		c.scaling = RBLN_ROPE_SCALING_LLAMA3;
		c.factor = f32_bits(rope->factor);
		c.low_freq_factor = f32_bits(rope->low_freq_factor);
		c.high_freq_factor = f32_bits(rope->high_freq_factor);
		c.original_max_pos = rope->original_max_pos;
	}
	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_swiglu(struct isa_stream *s, struct rbln_isa_operand dst,
		       struct rbln_isa_operand gate, struct rbln_isa_operand up,
		       uint32_t n, uint32_t gate_stride, uint32_t up_stride)
{
	struct rbln_isa_swiglu c = {
		.hdr = header(RBLN_OP_SWIGLU, sizeof(c), 0),
		.dst = dst, .gate = gate, .up = up, .n = n,
		.gate_stride = gate_stride, .up_stride = up_stride,
	};

	isa_encode_raw(s, &c, sizeof(c));
}

/* The header flag of a cache's layout. */
static uint32_t kv_flags(const struct isa_kv_shape *kv)
{
	return kv->token_major ? 0 : RBLN_KV_HEAD_MAJOR;
}

void isa_encode_kv_write(struct isa_stream *s, struct rbln_isa_operand k_cache,
			 struct rbln_isa_operand v_cache,
			 struct rbln_isa_operand k, struct rbln_isa_operand v,
			 struct rbln_isa_operand slots,
			 const struct isa_kv_shape *kv, uint32_t k_stride,
			 uint32_t v_stride)
{
	struct rbln_isa_kv_write c = {
		.hdr = header(RBLN_OP_KV_WRITE, sizeof(c), kv_flags(kv)),
		.k_cache = k_cache, .v_cache = v_cache, .k = k, .v = v,
		.slots = slots, .dtype = (uint32_t)kv->dtype,
		.block_size = kv->block_size, .kv_heads = kv->kv_heads,
		.head_dim = kv->head_dim, .k_stride = k_stride,
		.v_stride = v_stride,
	};

	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_attention(struct isa_stream *s, const struct isa_attention *a)
{
	struct rbln_isa_attention c = {
		.hdr = header(RBLN_OP_ATTENTION, sizeof(c), kv_flags(&a->kv)),
		.out = a->out, .q = a->q, .k_cache = a->k_cache,
		.v_cache = a->v_cache, .seqs = a->seqs,
		.block_tables = a->block_tables, .work = a->work,
		.dtype = (uint32_t)a->kv.dtype, .block_size = a->kv.block_size,
		.q_heads = a->q_heads, .kv_heads = a->kv.kv_heads,
		.head_dim = a->kv.head_dim, .q_stride = a->q_stride,
		.max_blocks = a->max_blocks, .partition_len = a->partition_len,
		.scale = f32_bits(a->scale),
	};

	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_argmax(struct isa_stream *s, struct rbln_isa_operand values,
		       struct rbln_isa_operand indices,
		       struct rbln_isa_operand src, uint32_t n,
		       uint32_t index_base)
{
	struct rbln_isa_argmax c = {
		.hdr = header(RBLN_OP_ARGMAX, sizeof(c), 0),
		.values = values, .indices = indices, .src = src,
		.n = n, .index_base = index_base,
	};

	isa_encode_raw(s, &c, sizeof(c));
}

void isa_encode_topk(struct isa_stream *s, struct rbln_isa_operand values,
		     struct rbln_isa_operand indices,
		     struct rbln_isa_operand src, uint32_t n, uint32_t k,
		     uint32_t index_base)
{
	struct rbln_isa_topk c = {
		.hdr = header(RBLN_OP_TOPK, sizeof(c), 0),
		.values = values, .indices = indices, .src = src,
		.n = n, .k = k, .index_base = index_base,
	};

	isa_encode_raw(s, &c, sizeof(c));
}
