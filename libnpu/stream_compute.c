// SPDX-License-Identifier: MIT
/*
 * Builders of the compute commands of ISA 1.1: each turns a shape into
 * operand sizes (overflow-checked: a size that wraps would name the wrong
 * bytes, so it is a builder error, not something for the device to find)
 * and appends the command. Everything else (ranges, alignment, aliasing)
 * is the device's validation, as for the other commands.
 */
#include <errno.h>
#include <string.h>

#include "stream_internal.h"

static uint32_t f32_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof(u));
	return u;
}

static uint32_t dtype_size(enum npu_dtype dtype)
{
	return dtype == NPU_DTYPE_F32 ? 4 : 2;
}

/* @a * @b * @c, false on overflow. */
static bool mul3(uint64_t a, uint64_t b, uint64_t c, uint64_t *r)
{
	uint64_t x;

	return !__builtin_mul_overflow(a, b, &x) &&
	       !__builtin_mul_overflow(x, c, r);
}

/* Bytes of @rows float32 rows of @width, @stride floats apart. */
static bool rows_bytes(uint64_t rows, uint64_t stride, uint64_t width,
		       uint64_t *r)
{
	uint64_t x;

	return rows && !__builtin_mul_overflow(rows - 1, stride, &x) &&
	       !__builtin_add_overflow(x, width, &x) &&
	       !__builtin_mul_overflow(x, 4, r);
}

/* Record a shape error on @s (locked); always false. */
static bool shape_error(npu_stream *s, const char *what)
{
	npu_stream_set_error(s, npu_fail(-EINVAL,
		"%s: shape out of range (a size is zero or overflows)", what));
	return false;
}

static struct rbln_isa_cmd header(enum rbln_isa_opcode opcode, size_t size,
				  uint32_t flags)
{
	return (struct rbln_isa_cmd){ .opcode = (uint16_t)opcode,
				      .size = (uint16_t)size, .flags = flags };
}

/* Appends @size bytes of @cmd when @ok; unlocks @s. */
static void finish(npu_stream *s, bool ok, const void *cmd, size_t size)
{
	if (ok)
		npu_stream_append(s, cmd, size);
	npu_stream_end(s);
}

#define T_READ	NPU_ACCESS_READ
#define T_WRITE	NPU_ACCESS_WRITE

/* An operand for tensor @t of @size bytes. */
static bool tensor(npu_stream *s, struct rbln_isa_operand *op,
		   struct npu_tensor t, uint32_t access, uint64_t size,
		   const char *what)
{
	return npu_stream_operand(s, op, t.buf, access, t.offset, size, what);
}

void npu_stream_embed(npu_stream *s, const struct npu_embed *op)
{
	struct rbln_isa_embed c;
	uint64_t dsz, tsz;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	c = (struct rbln_isa_embed){
		.hdr = header(RBLN_OP_EMBED, sizeof(c),
			      op->zero_outside ? RBLN_EMBED_ZERO_OUTSIDE : 0),
		.dtype = (uint32_t)op->dtype, .dim = op->dim,
		.id_base = op->id_base,
	};
	ok = mul3(op->tokens, op->dim, 4, &dsz) && dsz &&
	     mul3(op->rows, op->dim, dtype_size(op->dtype), &tsz) && tsz &&
	     op->tokens <= UINT64_MAX / 4;
	if (!ok)
		ok = shape_error(s, "npu_stream_embed");
	ok = ok && tensor(s, &c.dst, op->dst, T_WRITE, dsz, "embed dst") &&
	     tensor(s, &c.table, op->table, T_READ, tsz, "embed table") &&
	     tensor(s, &c.ids, op->ids, T_READ, op->tokens * 4, "embed ids");
	finish(s, ok, &c, sizeof(c));
}

void npu_stream_rmsnorm(npu_stream *s, const struct npu_rmsnorm *op)
{
	struct rbln_isa_rmsnorm c;
	uint64_t size;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	c = (struct rbln_isa_rmsnorm){
		.hdr = header(RBLN_OP_RMSNORM, sizeof(c), 0),
		.dtype = (uint32_t)op->dtype, .dim = op->dim,
		.eps = f32_bits(op->eps),
	};
	ok = mul3(op->rows, op->dim, 4, &size) && size;
	if (!ok)
		ok = shape_error(s, "npu_stream_rmsnorm");
	ok = ok && tensor(s, &c.dst, op->dst, T_WRITE, size, "rmsnorm dst") &&
	     tensor(s, &c.src, op->src, T_READ, size, "rmsnorm src") &&
	     tensor(s, &c.weight, op->weight, T_READ,
		    (uint64_t)op->dim * dtype_size(op->dtype),
		    "rmsnorm weight");
	finish(s, ok, &c, sizeof(c));
}

uint64_t npu_packed_weights_size(enum npu_dtype dtype, uint32_t n, uint32_t k)
{
	uint64_t cols = ((uint64_t)n + RBLN_ISA_PACK_COLS - 1) /
			RBLN_ISA_PACK_COLS * RBLN_ISA_PACK_COLS;

	return cols * k * dtype_size(dtype);
}

void npu_stream_matmul(npu_stream *s, const struct npu_matmul *op)
{
	struct rbln_isa_matmul c;
	uint64_t asz, dsz, wsz;
	uint32_t dacc;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	c = (struct rbln_isa_matmul){
		.hdr = header(RBLN_OP_MATMUL, sizeof(c),
			      op->accumulate ? RBLN_MATMUL_ACCUMULATE : 0),
		.dtype = (uint32_t)op->dtype, .layout = (uint32_t)op->layout,
		.k = op->k, .n = op->n,
	};
	wsz = op->layout == NPU_LAYOUT_PACKED16 ?
	      npu_packed_weights_size(op->dtype, op->n, op->k) :
	      (uint64_t)op->n * op->k * dtype_size(op->dtype);
	ok = mul3(op->m, op->k, 4, &asz) && asz &&
	     mul3(op->m, op->n, 4, &dsz) && dsz && wsz;
	if (!ok)
		ok = shape_error(s, "npu_stream_matmul");
	dacc = op->accumulate ? NPU_ACCESS_RW : T_WRITE;
	ok = ok && tensor(s, &c.dst, op->dst, dacc, dsz, "matmul dst") &&
	     tensor(s, &c.a, op->a, T_READ, asz, "matmul a") &&
	     tensor(s, &c.w, op->w, T_READ, wsz, "matmul w");
	finish(s, ok, &c, sizeof(c));
}

void npu_stream_rope(npu_stream *s, const struct npu_rope *op)
{
	uint32_t stride = op->stride ? op->stride : op->heads * op->head_dim;
	struct rbln_isa_rope c;
	uint64_t size;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	c = (struct rbln_isa_rope){
		.hdr = header(RBLN_OP_ROPE, sizeof(c), 0),
		.heads = op->heads, .head_dim = op->head_dim,
		.stride = stride, .theta = f32_bits(op->theta),
	};
	if (op->llama3) {
		c.scaling = RBLN_ROPE_SCALING_LLAMA3;
		c.factor = f32_bits(op->factor);
		c.low_freq_factor = f32_bits(op->low_freq_factor);
		c.high_freq_factor = f32_bits(op->high_freq_factor);
		c.original_max_pos = op->original_max_pos;
	}
	ok = rows_bytes(op->tokens, stride, (uint64_t)op->heads * op->head_dim,
			&size) && op->tokens <= UINT64_MAX / 4;
	if (!ok)
		ok = shape_error(s, "npu_stream_rope");
	ok = ok && tensor(s, &c.x, op->x, NPU_ACCESS_RW, size, "rope x") &&
	     tensor(s, &c.pos, op->pos, T_READ, op->tokens * 4, "rope pos");
	finish(s, ok, &c, sizeof(c));
}

void npu_stream_swiglu(npu_stream *s, const struct npu_swiglu *op)
{
	uint32_t gs = op->gate_stride ? op->gate_stride : op->n;
	uint32_t us = op->up_stride ? op->up_stride : op->n;
	struct rbln_isa_swiglu c;
	uint64_t dsz, gsz, usz;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	c = (struct rbln_isa_swiglu){
		.hdr = header(RBLN_OP_SWIGLU, sizeof(c), 0),
		.n = op->n, .gate_stride = gs, .up_stride = us,
	};
	ok = mul3(op->rows, op->n, 4, &dsz) && dsz &&
	     rows_bytes(op->rows, gs, op->n, &gsz) &&
	     rows_bytes(op->rows, us, op->n, &usz);
	if (!ok)
		ok = shape_error(s, "npu_stream_swiglu");
	ok = ok && tensor(s, &c.dst, op->dst, T_WRITE, dsz, "swiglu dst") &&
	     tensor(s, &c.gate, op->gate, T_READ, gsz, "swiglu gate") &&
	     tensor(s, &c.up, op->up, T_READ, usz, "swiglu up");
	finish(s, ok, &c, sizeof(c));
}

void npu_stream_kv_write(npu_stream *s, const struct npu_kv_write *op)
{
	uint64_t width = (uint64_t)op->kv_heads * op->head_dim;
	uint32_t ks = op->k_stride ? op->k_stride : (uint32_t)width;
	uint32_t vs = op->v_stride ? op->v_stride : (uint32_t)width;
	struct rbln_isa_kv_write c;
	uint64_t csz, ksz, vsz;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	c = (struct rbln_isa_kv_write){
		.hdr = header(RBLN_OP_KV_WRITE, sizeof(c), 0),
		.dtype = (uint32_t)op->dtype, .block_size = op->block_size,
		.kv_heads = op->kv_heads, .head_dim = op->head_dim,
		.k_stride = ks, .v_stride = vs,
	};
	ok = mul3(op->num_blocks, op->block_size, width, &csz) &&
	     mul3(csz, dtype_size(op->dtype), 1, &csz) && csz &&
	     rows_bytes(op->tokens, ks, width, &ksz) &&
	     rows_bytes(op->tokens, vs, width, &vsz) &&
	     op->tokens <= UINT64_MAX / 4;
	if (!ok)
		ok = shape_error(s, "npu_stream_kv_write");
	ok = ok &&
	     tensor(s, &c.k_cache, op->k_cache, T_WRITE, csz, "kv_write k_cache") &&
	     tensor(s, &c.v_cache, op->v_cache, T_WRITE, csz, "kv_write v_cache") &&
	     tensor(s, &c.k, op->k, T_READ, ksz, "kv_write k") &&
	     tensor(s, &c.v, op->v, T_READ, vsz, "kv_write v") &&
	     tensor(s, &c.slots, op->slots, T_READ, op->tokens * 4,
		    "kv_write slots");
	finish(s, ok, &c, sizeof(c));
}

uint64_t npu_attention_work_size(const struct npu_attention *op)
{
	uint64_t tokens = (uint64_t)op->max_blocks * op->block_size;
	uint64_t parts, size;

	if (!op->partition_len)
		return 0;
	parts = (tokens + op->partition_len - 1) / op->partition_len;
	if (!mul3(op->rows, op->q_heads, parts, &size) ||
	    !mul3(size, (uint64_t)op->head_dim + 2, 4, &size))
		return 0;
	return size;
}

void npu_stream_attention(npu_stream *s, const struct npu_attention *op)
{
	uint64_t width = (uint64_t)op->q_heads * op->head_dim;
	uint32_t qs = op->q_stride ? op->q_stride : (uint32_t)width;
	uint64_t osz, qsz, csz, ssz, tsz, wsz = npu_attention_work_size(op);
	struct rbln_isa_attention c;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	c = (struct rbln_isa_attention){
		.hdr = header(RBLN_OP_ATTENTION, sizeof(c), 0),
		.dtype = (uint32_t)op->dtype, .block_size = op->block_size,
		.q_heads = op->q_heads, .kv_heads = op->kv_heads,
		.head_dim = op->head_dim, .q_stride = qs,
		.max_blocks = op->max_blocks,
		.partition_len = op->partition_len, .scale = f32_bits(op->scale),
	};
	ok = mul3(op->rows, width, 4, &osz) && osz &&
	     rows_bytes(op->rows, qs, width, &qsz) &&
	     mul3(op->num_blocks, (uint64_t)op->block_size * op->kv_heads,
		  (uint64_t)op->head_dim * dtype_size(op->dtype), &csz) &&
	     csz && mul3(op->num_seqs, 16, 1, &ssz) && ssz &&
	     mul3(op->table_rows, op->max_blocks, 4, &tsz) && tsz && wsz;
	if (!ok)
		ok = shape_error(s, "npu_stream_attention");
	ok = ok && tensor(s, &c.out, op->out, T_WRITE, osz, "attention out") &&
	     tensor(s, &c.q, op->q, T_READ, qsz, "attention q") &&
	     tensor(s, &c.k_cache, op->k_cache, T_READ, csz,
		    "attention k_cache") &&
	     tensor(s, &c.v_cache, op->v_cache, T_READ, csz,
		    "attention v_cache") &&
	     tensor(s, &c.seqs, op->seqs, T_READ, ssz, "attention seqs") &&
	     tensor(s, &c.block_tables, op->block_tables, T_READ, tsz,
		    "attention block_tables") &&
	     tensor(s, &c.work, op->work, NPU_ACCESS_RW, wsz,
		    "attention work");
	finish(s, ok, &c, sizeof(c));
}

/* ARGMAX and TOPK share their operands. */
static bool select_operands(npu_stream *s, const struct npu_topk *op,
			    struct rbln_isa_operand *values,
			    struct rbln_isa_operand *indices,
			    struct rbln_isa_operand *src, const char *what)
{
	uint64_t osz, ssz;

	if (!mul3(op->rows, op->k, 4, &osz) || !osz ||
	    !mul3(op->rows, op->n, 4, &ssz) || !ssz)
		return shape_error(s, what);
	return tensor(s, values, op->values, T_WRITE, osz, what) &&
	       tensor(s, indices, op->indices, T_WRITE, osz, what) &&
	       tensor(s, src, op->src, T_READ, ssz, what);
}

void npu_stream_argmax(npu_stream *s, const struct npu_topk *op)
{
	struct rbln_isa_argmax c;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	c = (struct rbln_isa_argmax){
		.hdr = header(RBLN_OP_ARGMAX, sizeof(c), 0),
		.n = op->n, .index_base = op->index_base,
	};
	if (op->k != 1)
		ok = shape_error(s, "npu_stream_argmax (k must be 1)");
	else
		ok = select_operands(s, op, &c.values, &c.indices, &c.src,
				     "npu_stream_argmax");
	finish(s, ok, &c, sizeof(c));
}

void npu_stream_topk(npu_stream *s, const struct npu_topk *op)
{
	struct rbln_isa_topk c;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	c = (struct rbln_isa_topk){
		.hdr = header(RBLN_OP_TOPK, sizeof(c), 0),
		.n = op->n, .k = op->k, .index_base = op->index_base,
	};
	ok = select_operands(s, op, &c.values, &c.indices, &c.src,
			     "npu_stream_topk");
	finish(s, ok, &c, sizeof(c));
}

int npu_pack_weights(void *dst, const void *src, enum npu_dtype dtype,
		     uint32_t n, uint32_t k)
{
	uint32_t es = dtype_size(dtype), j, slot;
	uint8_t *out = dst;
	const uint8_t *in = src;
	uint64_t row, kk;

	if (!dst || !src || !n || !k || (unsigned int)dtype > NPU_DTYPE_BF16)
		return npu_fail(-EINVAL, "npu_pack_weights: bad arguments");
	memset(out, 0, npu_packed_weights_size(dtype, n, k));
	for (row = 0; row < n; row++) {
		j = (uint32_t)(row % RBLN_ISA_PACK_COLS);
		/* bfloat16: each 32-bit word pairs columns j and j + 8. */
		slot = j;
		if (dtype == NPU_DTYPE_BF16)
			slot = j < 8 ? 2 * j : 2 * (j - 8) + 1;
		for (kk = 0; kk < k; kk++)
			memcpy(out + ((row / RBLN_ISA_PACK_COLS * k + kk) *
				      RBLN_ISA_PACK_COLS + slot) * es,
			       in + (row * k + kk) * es, es);
	}
	return 0;
}
