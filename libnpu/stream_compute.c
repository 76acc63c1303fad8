// SPDX-License-Identifier: MIT
/*
 * Builders of the compute commands of ISA 1.1 (and the flags and fields
 * 1.2 and 1.3 added to them): each turns a shape into
 * operand sizes (overflow-checked: a size that wraps would name the wrong
 * bytes, so it is a builder error, not something for the device to find)
 * and has the ISA encoder append the command. Everything else (ranges,
 * alignment, aliasing) is the device's validation, as for the other
 * commands.
 */
#include <errno.h>
#include <string.h>

#include "stream_internal.h"

/* libnpu.h's public enums carry the ISA's values, so they pass through. */
_Static_assert((int)NPU_DTYPE_F32 == RBLN_DTYPE_F32 &&
	       (int)NPU_DTYPE_F16 == RBLN_DTYPE_F16 &&
	       (int)NPU_DTYPE_BF16 == RBLN_DTYPE_BF16 &&
	       (int)NPU_DTYPE_I8 == RBLN_DTYPE_I8, "dtype values");
_Static_assert((int)NPU_LAYOUT_ROWMAJOR == RBLN_LAYOUT_ROWMAJOR &&
	       (int)NPU_LAYOUT_PACKED16 == RBLN_LAYOUT_PACKED16 &&
	       (int)NPU_LAYOUT_PACKED16_SPACED == RBLN_LAYOUT_PACKED16_SPACED,
	       "layout values");

static uint32_t dtype_size(enum npu_dtype dtype)
{
	if (dtype == NPU_DTYPE_I8)
		return 1;
	return dtype == NPU_DTYPE_F32 ? 4 : 2;
}

/* Columns of whole 16-column panels. */
static uint64_t panel_cols(uint32_t n)
{
	return ((uint64_t)n + RBLN_ISA_PACK_COLS - 1) / RBLN_ISA_PACK_COLS *
	       RBLN_ISA_PACK_COLS;
}

/* Bytes of the float32 scales after int8 weights, 0 for the float types. */
static uint64_t scales_size(enum npu_dtype dtype, uint32_t n)
{
	return dtype == NPU_DTYPE_I8 ? panel_cols(n) * 4 : 0;
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

#define T_READ	NPU_ACCESS_READ
#define T_WRITE	NPU_ACCESS_WRITE

/* An operand for tensor @t of @size bytes. */
static bool tensor(npu_stream *s, struct rbln_isa_operand *op,
		   struct npu_tensor t, uint32_t access, uint64_t size,
		   const char *what)
{
	return npu_stream_operand(s, op, t.buf, access, t.offset, size, what);
}

/* A KV cache layout into @token_major; false (recorded) if unknown. */
static bool kv_layout(npu_stream *s, enum npu_kv_layout layout,
		      bool *token_major, const char *what)
{
	if (layout != NPU_KV_TOKEN_MAJOR && layout != NPU_KV_HEAD_MAJOR) {
		npu_stream_set_error(s, npu_fail(-EINVAL,
			"%s: layout %d is not an npu_kv_layout", what,
			(int)layout));
		return false;
	}
	*token_major = layout == NPU_KV_TOKEN_MAJOR;
	return true;
}

/* dtypes as the ISA encodes them (equal values, see above). */
static enum rbln_isa_dtype isa_dtype(enum npu_dtype dtype)
{
	return (enum rbln_isa_dtype)dtype;
}

void npu_stream_embed(npu_stream *s, const struct npu_embed *op)
{
	struct rbln_isa_operand dst, table, ids;
	uint64_t dsz, tsz;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	ok = mul3(op->tokens, op->dim, 4, &dsz) && dsz &&
	     mul3(op->rows, op->dim, dtype_size(op->dtype), &tsz) && tsz &&
	     op->tokens <= UINT64_MAX / 4;
	if (!ok)
		ok = shape_error(s, "npu_stream_embed");
	ok = ok && tensor(s, &dst, op->dst, T_WRITE, dsz, "embed dst") &&
	     tensor(s, &table, op->table, T_READ, tsz, "embed table") &&
	     tensor(s, &ids, op->ids, T_READ, op->tokens * 4, "embed ids");
	if (ok)
		isa_encode_embed(&s->enc, dst, table, ids, isa_dtype(op->dtype),
				 op->dim, op->id_base, op->zero_outside);
	npu_stream_end(s);
}

void npu_stream_rmsnorm(npu_stream *s, const struct npu_rmsnorm *op)
{
	struct rbln_isa_operand dst, src, weight;
	uint64_t size;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	ok = mul3(op->rows, op->dim, 4, &size) && size;
	if (!ok)
		ok = shape_error(s, "npu_stream_rmsnorm");
	ok = ok && tensor(s, &dst, op->dst, T_WRITE, size, "rmsnorm dst") &&
	     tensor(s, &src, op->src, T_READ, size, "rmsnorm src") &&
	     tensor(s, &weight, op->weight, T_READ,
		    (uint64_t)op->dim * dtype_size(op->dtype),
		    "rmsnorm weight");
	if (ok)
		isa_encode_rmsnorm(&s->enc, dst, src, weight,
				   isa_dtype(op->dtype), op->dim, op->eps);
	npu_stream_end(s);
}

/* Bytes from one panel to the next in a packed @layout. */
static uint64_t panel_stride(enum npu_dtype dtype, enum npu_layout layout,
			     uint32_t k)
{
	uint64_t bytes = (uint64_t)k * RBLN_ISA_PACK_COLS * dtype_size(dtype);

	return layout == NPU_LAYOUT_PACKED16_SPACED ?
	       bytes + RBLN_ISA_PANEL_GAP : bytes;
}

uint64_t npu_weights_size(enum npu_dtype dtype, enum npu_layout layout,
			  uint32_t n, uint32_t k)
{
	uint64_t panels = panel_cols(n) / RBLN_ISA_PACK_COLS, w;
	bool ok;

	switch (layout) {
	case NPU_LAYOUT_ROWMAJOR:
		ok = mul3(n, k, dtype_size(dtype), &w);
		break;
	case NPU_LAYOUT_PACKED16:
	case NPU_LAYOUT_PACKED16_SPACED:
		ok = mul3(panels, panel_stride(dtype, layout, k), 1, &w);
		break;
	default:
		return 0;
	}
	/* The scales are at most 2^34 bytes. */
	if (!ok || __builtin_add_overflow(w, scales_size(dtype, n), &w))
		return 0;
	return w;
}

uint64_t npu_packed_weights_size(enum npu_dtype dtype, uint32_t n, uint32_t k)
{
	return npu_weights_size(dtype, NPU_LAYOUT_PACKED16, n, k);
}

void npu_stream_matmul(npu_stream *s, const struct npu_matmul *op)
{
	uint32_t flags = (op->accumulate ? RBLN_MATMUL_ACCUMULATE : 0) |
			 (op->a_bf16 ? RBLN_MATMUL_A_BF16 : 0);
	struct rbln_isa_operand dst, a, w;
	uint64_t asz, dsz, wsz;
	uint32_t dacc;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	if ((unsigned int)op->layout > NPU_LAYOUT_PACKED16_SPACED) {
		npu_stream_set_error(s, npu_fail(-EINVAL,
			"npu_stream_matmul: layout %d is not an npu_layout",
			(int)op->layout));
		npu_stream_end(s);
		return;
	}
	wsz = npu_weights_size(op->dtype, op->layout, op->n, op->k);
	ok = mul3(op->m, op->k, 4, &asz) && asz &&
	     mul3(op->m, op->n, 4, &dsz) && dsz && wsz;
	if (!ok)
		ok = shape_error(s, "npu_stream_matmul");
	if (ok && op->a_bf16 != 0 && op->a_bf16 != 1) {
		npu_stream_set_error(s, npu_fail(-EINVAL,
			"npu_stream_matmul: a_bf16 is %d, not 0 or 1",
			op->a_bf16));
		ok = false;
	}
	dacc = op->accumulate ? NPU_ACCESS_RW : T_WRITE;
	ok = ok && tensor(s, &dst, op->dst, dacc, dsz, "matmul dst") &&
	     tensor(s, &a, op->a, T_READ, asz, "matmul a") &&
	     tensor(s, &w, op->w, T_READ, wsz, "matmul w");
	if (ok)
		isa_encode_matmul(&s->enc, dst, a, w, isa_dtype(op->dtype),
				  (enum rbln_isa_layout)op->layout, op->k,
				  op->n, flags);
	npu_stream_end(s);
}

void npu_stream_rope(npu_stream *s, const struct npu_rope *op)
{
	uint32_t stride = op->stride ? op->stride : op->heads * op->head_dim;
	struct isa_rope_params rope = {
		.llama3 = op->llama3, .theta = op->theta, .factor = op->factor,
		.low_freq_factor = op->low_freq_factor,
		.high_freq_factor = op->high_freq_factor,
		.original_max_pos = op->original_max_pos,
	};
	struct rbln_isa_operand x, pos;
	uint64_t size;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	ok = rows_bytes(op->tokens, stride, (uint64_t)op->heads * op->head_dim,
			&size) && op->tokens <= UINT64_MAX / 4;
	if (!ok)
		ok = shape_error(s, "npu_stream_rope");
	ok = ok && tensor(s, &x, op->x, NPU_ACCESS_RW, size, "rope x") &&
	     tensor(s, &pos, op->pos, T_READ, op->tokens * 4, "rope pos");
	if (ok)
		isa_encode_rope(&s->enc, x, pos, op->heads, op->head_dim, stride,
				&rope);
	npu_stream_end(s);
}

void npu_stream_swiglu(npu_stream *s, const struct npu_swiglu *op)
{
	uint32_t gs = op->gate_stride ? op->gate_stride : op->n;
	uint32_t us = op->up_stride ? op->up_stride : op->n;
	struct rbln_isa_operand dst, gate, up;
	uint64_t dsz, gsz, usz;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	ok = mul3(op->rows, op->n, 4, &dsz) && dsz &&
	     rows_bytes(op->rows, gs, op->n, &gsz) &&
	     rows_bytes(op->rows, us, op->n, &usz);
	if (!ok)
		ok = shape_error(s, "npu_stream_swiglu");
	ok = ok && tensor(s, &dst, op->dst, T_WRITE, dsz, "swiglu dst") &&
	     tensor(s, &gate, op->gate, T_READ, gsz, "swiglu gate") &&
	     tensor(s, &up, op->up, T_READ, usz, "swiglu up");
	if (ok)
		isa_encode_swiglu(&s->enc, dst, gate, up, op->n, gs, us);
	npu_stream_end(s);
}

void npu_stream_kv_write(npu_stream *s, const struct npu_kv_write *op)
{
	uint64_t width = (uint64_t)op->kv_heads * op->head_dim;
	uint32_t ks = op->k_stride ? op->k_stride : (uint32_t)width;
	uint32_t vs = op->v_stride ? op->v_stride : (uint32_t)width;
	struct isa_kv_shape kv = {
		.dtype = isa_dtype(op->dtype), .block_size = op->block_size,
		.kv_heads = op->kv_heads, .head_dim = op->head_dim,
	};
	struct rbln_isa_operand kc, vc, k, v, slots;
	uint64_t csz, ksz, vsz;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	ok = mul3(op->num_blocks, op->block_size, width, &csz) &&
	     mul3(csz, dtype_size(op->dtype), 1, &csz) && csz &&
	     rows_bytes(op->tokens, ks, width, &ksz) &&
	     rows_bytes(op->tokens, vs, width, &vsz) &&
	     op->tokens <= UINT64_MAX / 4;
	if (!ok)
		ok = shape_error(s, "npu_stream_kv_write");
	ok = ok && kv_layout(s, op->layout, &kv.token_major,
			     "npu_stream_kv_write") &&
	     tensor(s, &kc, op->k_cache, T_WRITE, csz, "kv_write k_cache") &&
	     tensor(s, &vc, op->v_cache, T_WRITE, csz, "kv_write v_cache") &&
	     tensor(s, &k, op->k, T_READ, ksz, "kv_write k") &&
	     tensor(s, &v, op->v, T_READ, vsz, "kv_write v") &&
	     tensor(s, &slots, op->slots, T_READ, op->tokens * 4,
		    "kv_write slots");
	if (ok)
		isa_encode_kv_write(&s->enc, kc, vc, k, v, slots, &kv, ks, vs);
	npu_stream_end(s);
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
	struct isa_attention a = {
		.kv = {
			.dtype = isa_dtype(op->dtype),
			.block_size = op->block_size,
			.kv_heads = op->kv_heads, .head_dim = op->head_dim,
		},
		.q_heads = op->q_heads, .q_stride = qs,
		.max_blocks = op->max_blocks,
		.partition_len = op->partition_len, .scale = op->scale,
	};
	bool ok;

	if (!npu_stream_begin(s))
		return;
	ok = mul3(op->rows, width, 4, &osz) && osz &&
	     rows_bytes(op->rows, qs, width, &qsz) &&
	     mul3(op->num_blocks, (uint64_t)op->block_size * op->kv_heads,
		  (uint64_t)op->head_dim * dtype_size(op->dtype), &csz) &&
	     csz && mul3(op->num_seqs, 16, 1, &ssz) && ssz &&
	     mul3(op->table_rows, op->max_blocks, 4, &tsz) && tsz && wsz;
	if (!ok)
		ok = shape_error(s, "npu_stream_attention");
	ok = ok && kv_layout(s, op->layout, &a.kv.token_major,
			     "npu_stream_attention") &&
	     tensor(s, &a.out, op->out, T_WRITE, osz, "attention out") &&
	     tensor(s, &a.q, op->q, T_READ, qsz, "attention q") &&
	     tensor(s, &a.k_cache, op->k_cache, T_READ, csz,
		    "attention k_cache") &&
	     tensor(s, &a.v_cache, op->v_cache, T_READ, csz,
		    "attention v_cache") &&
	     tensor(s, &a.seqs, op->seqs, T_READ, ssz, "attention seqs") &&
	     tensor(s, &a.block_tables, op->block_tables, T_READ, tsz,
		    "attention block_tables") &&
	     tensor(s, &a.work, op->work, NPU_ACCESS_RW, wsz,
		    "attention work");
	if (ok)
		isa_encode_attention(&s->enc, &a);
	npu_stream_end(s);
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
	struct rbln_isa_operand values, indices, src;
	bool ok;

	if (!npu_stream_begin(s))
		return;
	if (op->k != 1)
		ok = shape_error(s, "npu_stream_argmax (k must be 1)");
	else
		ok = select_operands(s, op, &values, &indices, &src,
				     "npu_stream_argmax");
	if (ok)
		isa_encode_argmax(&s->enc, values, indices, src, op->n,
				  op->index_base);
	npu_stream_end(s);
}

void npu_stream_topk(npu_stream *s, const struct npu_topk *op)
{
	struct rbln_isa_operand values, indices, src;

	if (!npu_stream_begin(s))
		return;
	if (select_operands(s, op, &values, &indices, &src, "npu_stream_topk"))
		isa_encode_topk(&s->enc, values, indices, src, op->n, op->k,
				op->index_base);
	npu_stream_end(s);
}

int npu_pack_weights_layout(void *dst, const void *src, enum npu_dtype dtype,
			    enum npu_layout layout, uint32_t n, uint32_t k)
{
	uint32_t es = dtype_size(dtype), j, slot;
	uint64_t row, kk, stride = panel_stride(dtype, layout, k);
	uint8_t *out = dst;
	const uint8_t *in = src;

	if (!dst || !src || !n || !k || (unsigned int)dtype > NPU_DTYPE_I8 ||
	    (layout != NPU_LAYOUT_PACKED16 &&
	     layout != NPU_LAYOUT_PACKED16_SPACED))
		return npu_fail(-EINVAL, "npu_pack_weights: bad arguments");
	memset(out, 0, npu_weights_size(dtype, layout, n, k));
	/* int8: the scales follow the weights in every layout. */
	memcpy(out + panel_cols(n) / RBLN_ISA_PACK_COLS * stride,
	       in + (uint64_t)n * k * es, scales_size(dtype, n));
	for (row = 0; row < n; row++) {
		j = (uint32_t)(row % RBLN_ISA_PACK_COLS);
		/* bfloat16: each 32-bit word pairs columns j and j + 8. */
		slot = j;
		if (dtype == NPU_DTYPE_BF16)
			slot = j < 8 ? 2 * j : 2 * (j - 8) + 1;
		for (kk = 0; kk < k; kk++)
			memcpy(out + row / RBLN_ISA_PACK_COLS * stride +
			       (kk * RBLN_ISA_PACK_COLS + slot) * es,
			       in + (row * k + kk) * es, es);
	}
	return 0;
}

int npu_pack_weights(void *dst, const void *src, enum npu_dtype dtype,
		     uint32_t n, uint32_t k)
{
	return npu_pack_weights_layout(dst, src, dtype, NPU_LAYOUT_PACKED16,
				       n, k);
}
