// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_validate_compute.c - validation of the compute opcodes of
 * ISA 1.1 (EMBED .. TOPK).
 *
 * Each check follows the order of rbln_model.h: the command's own fields
 * (pad, enums, float parameters, shape fields), then every operand alone
 * (rbln_model_check_operands()), then the relations: each operand's size
 * against the shape, then overlaps. Shape arithmetic is done with
 * overflow-checked multiplications, so no product can wrap into a size
 * that happens to match. Float parameters are judged by their bit
 * patterns: this file is built without FPU support in the kernel.
 */

#include "rbln_model_internal.h"

#define RBLN_MODEL_RW		(RBLN_MODEL_READ | RBLN_MODEL_WRITE)
#define RBLN_MODEL_F32_ONE	0x3f800000U	/* 1.0f */
#define RBLN_MODEL_F32_EXP	0x7f800000U	/* exponent bits */
#define RBLN_MODEL_F32_SIGN	0x80000000U
#define RBLN_MODEL_MAX_BLOCK	65536U

static const struct rbln_model_operand_rule rbln_model_rule_f32_r = {
	.access = RBLN_MODEL_READ, .offset_align = 4, .size_align = 4,
};

static const struct rbln_model_operand_rule rbln_model_rule_f32_w = {
	.access = RBLN_MODEL_WRITE, .offset_align = 4, .size_align = 4,
};

static const struct rbln_model_operand_rule rbln_model_rule_f32_rw = {
	.access = RBLN_MODEL_RW, .offset_align = 4, .size_align = 4,
};

static const struct rbln_model_operand_rule rbln_model_rule_seqs = {
	.access = RBLN_MODEL_READ, .offset_align = 4, .size_align = 16,
};

static const struct rbln_model_operand_rule rbln_model_rule_h_r = {
	.access = RBLN_MODEL_READ, .offset_align = 2, .size_align = 2,
};

static const struct rbln_model_operand_rule rbln_model_rule_h_w = {
	.access = RBLN_MODEL_WRITE, .offset_align = 2, .size_align = 2,
};

/* int8 weights and their float32 scales, read bytewise (no alignment). */
static const struct rbln_model_operand_rule rbln_model_rule_i8_r = {
	.access = RBLN_MODEL_READ, .offset_align = 1, .size_align = 1,
};

/*
 * True for the floating-point types, which every dtype field takes;
 * RBLN_DTYPE_I8 is only MATMUL's weight type.
 */
static bool rbln_model_float_dtype(u32 dtype)
{
	return dtype < RBLN_DTYPE_COUNT && dtype != RBLN_DTYPE_I8;
}

/* The rule for a tensor of @dtype, read or written. */
static const struct rbln_model_operand_rule *
rbln_model_rule_dtype(u32 dtype, bool write)
{
	if (dtype == RBLN_DTYPE_I8)
		return &rbln_model_rule_i8_r;
	if (dtype == RBLN_DTYPE_F32)
		return write ? &rbln_model_rule_f32_w : &rbln_model_rule_f32_r;
	return write ? &rbln_model_rule_h_w : &rbln_model_rule_h_r;
}

/**
 * rbln_model_mul() - @a * @b, or false when it does not fit 64 bits
 * @a: one factor
 * @b: the other
 * @r: the product
 *
 * Return: true when the product fits.
 */
static bool rbln_model_mul(u64 a, u64 b, u64 *r)
{
	return !__builtin_mul_overflow(a, b, r);
}

/**
 * rbln_model_rows_bytes() - bytes of @rows rows of @width floats, @stride apart
 * @rows: number of rows, at least 1
 * @stride: floats from one row to the next
 * @width: floats used in each row
 * @r: the size, ((rows - 1) * stride + width) * 4
 *
 * Return: true when the size fits 64 bits.
 */
static bool rbln_model_rows_bytes(u64 rows, u64 stride, u64 width, u64 *r)
{
	u64 x;

	if (!rbln_model_mul(rows - 1, stride, &x) ||
	    __builtin_add_overflow(x, width, &x))
		return false;
	return rbln_model_mul(x, 4, r);
}

/* A binary32 bit pattern that is a finite number. */
static bool rbln_model_f32_finite(u32 bits)
{
	return (bits & RBLN_MODEL_F32_EXP) != RBLN_MODEL_F32_EXP;
}

/* A finite binary32 strictly above zero. */
static bool rbln_model_f32_positive(u32 bits)
{
	return rbln_model_f32_finite(bits) && !(bits & RBLN_MODEL_F32_SIGN) &&
	       bits;
}

/*
 * Positive finite binary32 values order like their bit patterns, so the
 * comparisons below need no FPU.
 */
static bool rbln_model_f32_above(u32 bits, u32 floor)
{
	return rbln_model_f32_positive(bits) && bits > floor;
}

static bool rbln_model_dim_ok(u32 dim)
{
	return dim && dim <= RBLN_ISA_MAX_DIM;
}

/**
 * rbln_model_exact_rows() - rows of an operand made of whole rows
 * @op: the operand
 * @row: bytes per row, not zero
 * @rows: the number of rows
 *
 * Return: true when the size is a non-zero multiple of @row.
 */
static bool rbln_model_exact_rows(const struct rbln_isa_operand *op, u64 row,
				  u64 *rows)
{
	*rows = op->size / row;
	return *rows && op->size % row == 0;
}

/* An exact alias: the same bytes of the same buffer. */
static bool rbln_model_same(const struct rbln_isa_operand *x,
			    const struct rbln_isa_operand *y)
{
	return x->bo == y->bo && x->offset == y->offset && x->size == y->size;
}

/**
 * rbln_model_first_overlap() - the first operand that overlaps @x
 * @x: an operand that must overlap none of @ops
 * @ops: all operands of the command
 * @from: first index of @ops to compare
 * @to: one past the last
 * @operand: set to the index of the offending operand
 *
 * Return: RBLN_ISA_OK or RBLN_ISA_ERR_OVERLAP.
 */
static u32 rbln_model_first_overlap(const struct rbln_isa_operand *x,
				    const struct rbln_isa_operand *const *ops,
				    u32 from, u32 to, u16 *operand)
{
	u32 i;

	for (i = from; i < to; i++) {
		if (ops[i] != x && rbln_model_overlap(x, ops[i])) {
			*operand = i;
			return RBLN_ISA_ERR_OVERLAP;
		}
	}
	return RBLN_ISA_OK;
}

/* Fails with RBLN_ISA_ERR_SHAPE naming operand @i. */
static u32 rbln_model_shape_err(u16 *operand, u16 i)
{
	*operand = i;
	return RBLN_ISA_ERR_SHAPE;
}

static u32 rbln_model_check_embed(const struct rbln_isa_embed *c,
				  const struct rbln_model_bo *bos, u32 nbos,
				  u16 *operand)
{
	const struct rbln_isa_operand *ops[] = { &c->dst, &c->table, &c->ids };
	const struct rbln_model_operand_rule *rules[3];
	u64 rows, tokens, es;
	u32 reason;

	if (c->pad)
		return RBLN_ISA_ERR_RESERVED;
	if (!rbln_model_float_dtype(c->dtype))
		return RBLN_ISA_ERR_ENUM;
	if (!rbln_model_dim_ok(c->dim))
		return RBLN_ISA_ERR_SHAPE;
	rules[0] = &rbln_model_rule_f32_w;
	rules[1] = rbln_model_rule_dtype(c->dtype, false);
	rules[2] = &rbln_model_rule_f32_r;
	reason = rbln_model_check_operands(ops, rules, 3, bos, nbos, operand);
	if (reason != RBLN_ISA_OK)
		return reason;
	es = rbln_model_dtype_size(c->dtype);
	if (!rbln_model_exact_rows(&c->dst, (u64)c->dim * 4, &tokens))
		return rbln_model_shape_err(operand, 0);
	if (!rbln_model_exact_rows(&c->table, c->dim * es, &rows))
		return rbln_model_shape_err(operand, 1);
	if (c->ids.size != tokens * 4)
		return rbln_model_shape_err(operand, 2);
	return rbln_model_first_overlap(&c->dst, ops, 1, 3, operand);
}

static u32 rbln_model_check_rmsnorm(const struct rbln_isa_rmsnorm *c,
				    const struct rbln_model_bo *bos, u32 nbos,
				    u16 *operand)
{
	const struct rbln_isa_operand *ops[] = { &c->dst, &c->src, &c->weight };
	const struct rbln_model_operand_rule *rules[3];
	u64 rows;
	u32 reason;

	if (c->pad)
		return RBLN_ISA_ERR_RESERVED;
	if (!rbln_model_float_dtype(c->dtype))
		return RBLN_ISA_ERR_ENUM;
	/* eps >= +0.0: the bit patterns from +0 up to +inf exclusive. */
	if (!rbln_model_f32_finite(c->eps) || (c->eps & RBLN_MODEL_F32_SIGN))
		return RBLN_ISA_ERR_PARAM;
	if (!rbln_model_dim_ok(c->dim))
		return RBLN_ISA_ERR_SHAPE;
	rules[0] = &rbln_model_rule_f32_w;
	rules[1] = &rbln_model_rule_f32_r;
	rules[2] = rbln_model_rule_dtype(c->dtype, false);
	reason = rbln_model_check_operands(ops, rules, 3, bos, nbos, operand);
	if (reason != RBLN_ISA_OK)
		return reason;
	if (!rbln_model_exact_rows(&c->dst, (u64)c->dim * 4, &rows))
		return rbln_model_shape_err(operand, 0);
	if (c->src.size != c->dst.size)
		return rbln_model_shape_err(operand, 1);
	if (c->weight.size != (u64)c->dim * rbln_model_dtype_size(c->dtype))
		return rbln_model_shape_err(operand, 2);
	/* In place works row by row: a row is read whole before written. */
	if (!rbln_model_same(&c->dst, &c->src) &&
	    rbln_model_overlap(&c->dst, &c->src)) {
		*operand = 1;
		return RBLN_ISA_ERR_OVERLAP;
	}
	return rbln_model_first_overlap(&c->dst, ops, 2, 3, operand);
}

/**
 * rbln_model_matmul_wsize() - bytes of a MATMUL's weights
 * @c: the command, its fields checked
 * @size: the size its @w must have
 *
 * A packed layout has whole panels, the spaced one a gap after each;
 * int8 weights are followed by one float32 scale per column of whole
 * panels (rbln_isa.h), in every layout.
 *
 * Return: true when the size fits 64 bits.
 */
static bool rbln_model_matmul_wsize(const struct rbln_isa_matmul *c,
				    u64 *size)
{
	u64 panels = ((u64)c->n + RBLN_ISA_PACK_COLS - 1) / RBLN_ISA_PACK_COLS;
	u64 panel_cols = panels * RBLN_ISA_PACK_COLS;
	u64 x;

	if (c->layout != RBLN_LAYOUT_ROWMAJOR) {
		if (!rbln_model_mul(panels, rbln_model_panel_stride(c), size))
			return false;
	} else if (!rbln_model_mul(c->n, c->k, &x) ||
		   !rbln_model_mul(x, rbln_model_dtype_size(c->dtype), size)) {
		return false;
	}
	if (c->dtype == RBLN_DTYPE_I8)
		return !__builtin_add_overflow(*size, panel_cols * 4, size);
	return true;
}

static u32 rbln_model_check_matmul(const struct rbln_isa_matmul *c,
				   const struct rbln_model_bo *bos, u32 nbos,
				   u16 *operand)
{
	const struct rbln_isa_operand *ops[] = { &c->dst, &c->a, &c->w };
	const struct rbln_model_operand_rule *rules[3];
	u64 m, bytes;
	u32 reason;

	if (c->dtype >= RBLN_DTYPE_COUNT || c->layout >= RBLN_LAYOUT_COUNT)
		return RBLN_ISA_ERR_ENUM;
	if (!rbln_model_dim_ok(c->k) || !rbln_model_dim_ok(c->n))
		return RBLN_ISA_ERR_SHAPE;
	rules[0] = c->hdr.flags & RBLN_MATMUL_ACCUMULATE ?
		   &rbln_model_rule_f32_rw : &rbln_model_rule_f32_w;
	rules[1] = &rbln_model_rule_f32_r;
	rules[2] = rbln_model_rule_dtype(c->dtype, false);
	reason = rbln_model_check_operands(ops, rules, 3, bos, nbos, operand);
	if (reason != RBLN_ISA_OK)
		return reason;
	if (!rbln_model_exact_rows(&c->a, (u64)c->k * 4, &m))
		return rbln_model_shape_err(operand, 1);
	if (!rbln_model_mul(m, (u64)c->n * 4, &bytes) || bytes != c->dst.size)
		return rbln_model_shape_err(operand, 0);
	if (!rbln_model_matmul_wsize(c, &bytes) || bytes != c->w.size)
		return rbln_model_shape_err(operand, 2);
	return rbln_model_first_overlap(&c->dst, ops, 1, 3, operand);
}

/* The float parameters of a ROPE; RBLN_ISA_OK or the reason. */
static u32 rbln_model_check_rope_params(const struct rbln_isa_rope *c)
{
	if (!rbln_model_f32_above(c->theta, RBLN_MODEL_F32_ONE))
		return RBLN_ISA_ERR_PARAM;
	if (c->scaling == RBLN_ROPE_SCALING_DEFAULT) {
		if (c->factor || c->low_freq_factor || c->high_freq_factor ||
		    c->original_max_pos)
			return RBLN_ISA_ERR_RESERVED;
		return RBLN_ISA_OK;
	}
	if (!rbln_model_f32_positive(c->factor) ||
	    c->factor < RBLN_MODEL_F32_ONE ||
	    !rbln_model_f32_positive(c->low_freq_factor) ||
	    !rbln_model_f32_above(c->high_freq_factor, c->low_freq_factor) ||
	    !c->original_max_pos)
		return RBLN_ISA_ERR_PARAM;
	return RBLN_ISA_OK;
}

static u32 rbln_model_check_rope(const struct rbln_isa_rope *c,
				 const struct rbln_model_bo *bos, u32 nbos,
				 u16 *operand)
{
	const struct rbln_isa_operand *ops[] = { &c->x, &c->pos };
	const struct rbln_model_operand_rule *rules[] = {
		&rbln_model_rule_f32_rw, &rbln_model_rule_f32_r,
	};
	u64 width = (u64)c->heads * c->head_dim;
	u64 bytes;
	u32 reason;

	if (c->pad)
		return RBLN_ISA_ERR_RESERVED;
	if (c->scaling >= RBLN_ROPE_SCALING_COUNT)
		return RBLN_ISA_ERR_ENUM;
	reason = rbln_model_check_rope_params(c);
	if (reason != RBLN_ISA_OK)
		return reason;
	if (!c->heads || c->head_dim < 2 || c->head_dim % 2 ||
	    c->head_dim > RBLN_ISA_MAX_HEAD_DIM || width > RBLN_ISA_MAX_DIM ||
	    c->stride < width)
		return RBLN_ISA_ERR_SHAPE;
	reason = rbln_model_check_operands(ops, rules, 2, bos, nbos, operand);
	if (reason != RBLN_ISA_OK)
		return reason;
	if (!rbln_model_rows_bytes(c->pos.size / 4, c->stride, width, &bytes) ||
	    bytes != c->x.size)
		return rbln_model_shape_err(operand, 0);
	return rbln_model_first_overlap(&c->x, ops, 1, 2, operand);
}

/* SWIGLU's @dst against one input of row stride @stride. */
static bool rbln_model_swiglu_alias_ok(const struct rbln_isa_swiglu *c,
				       const struct rbln_isa_operand *in,
				       u32 stride)
{
	if (!rbln_model_overlap(&c->dst, in))
		return true;
	return stride == c->n && rbln_model_same(&c->dst, in);
}

static u32 rbln_model_check_swiglu(const struct rbln_isa_swiglu *c,
				   const struct rbln_model_bo *bos, u32 nbos,
				   u16 *operand)
{
	const struct rbln_isa_operand *ops[] = { &c->dst, &c->gate, &c->up };
	const struct rbln_model_operand_rule *rules[] = {
		&rbln_model_rule_f32_w, &rbln_model_rule_f32_r,
		&rbln_model_rule_f32_r,
	};
	u64 rows, bytes;
	u32 reason;

	if (c->pad)
		return RBLN_ISA_ERR_RESERVED;
	if (!rbln_model_dim_ok(c->n) || c->gate_stride < c->n ||
	    c->up_stride < c->n)
		return RBLN_ISA_ERR_SHAPE;
	reason = rbln_model_check_operands(ops, rules, 3, bos, nbos, operand);
	if (reason != RBLN_ISA_OK)
		return reason;
	if (!rbln_model_exact_rows(&c->dst, (u64)c->n * 4, &rows))
		return rbln_model_shape_err(operand, 0);
	if (!rbln_model_rows_bytes(rows, c->gate_stride, c->n, &bytes) ||
	    bytes != c->gate.size)
		return rbln_model_shape_err(operand, 1);
	if (!rbln_model_rows_bytes(rows, c->up_stride, c->n, &bytes) ||
	    bytes != c->up.size)
		return rbln_model_shape_err(operand, 2);
	if (!rbln_model_swiglu_alias_ok(c, &c->gate, c->gate_stride)) {
		*operand = 1;
		return RBLN_ISA_ERR_OVERLAP;
	}
	if (!rbln_model_swiglu_alias_ok(c, &c->up, c->up_stride)) {
		*operand = 2;
		return RBLN_ISA_ERR_OVERLAP;
	}
	return RBLN_ISA_OK;
}

/**
 * rbln_model_cache_shape_ok() - the shape fields of a paged KV cache
 * @block_size: tokens per block
 * @heads: KV heads
 * @head_dim: floats per head
 *
 * Return: true when all are in range.
 */
static bool rbln_model_cache_shape_ok(u32 block_size, u32 heads, u32 head_dim)
{
	return block_size && block_size <= RBLN_MODEL_MAX_BLOCK && heads &&
	       heads <= RBLN_ISA_MAX_DIM && head_dim && !(head_dim % 8) &&
	       head_dim <= RBLN_ISA_MAX_HEAD_DIM;
}

/* Bytes of one cache block; fits easily: 2^16 * 2^20 * 2^8 * 4. */
static u64 rbln_model_block_bytes(u32 block_size, u32 heads, u32 head_dim,
				  u32 dtype)
{
	return (u64)block_size * heads * head_dim *
	       rbln_model_dtype_size(dtype);
}

static u32 rbln_model_check_kv_write(const struct rbln_isa_kv_write *c,
				     const struct rbln_model_bo *bos, u32 nbos,
				     u16 *operand)
{
	const struct rbln_isa_operand *ops[] = {
		&c->k_cache, &c->v_cache, &c->k, &c->v, &c->slots,
	};
	const struct rbln_model_operand_rule *rules[5];
	u64 width = (u64)c->kv_heads * c->head_dim;
	u64 blocks, tokens, bytes;
	u32 reason;

	if (!rbln_model_float_dtype(c->dtype))
		return RBLN_ISA_ERR_ENUM;
	if (!rbln_model_cache_shape_ok(c->block_size, c->kv_heads,
				       c->head_dim) ||
	    c->k_stride < width || c->v_stride < width)
		return RBLN_ISA_ERR_SHAPE;
	rules[0] = rbln_model_rule_dtype(c->dtype, true);
	rules[1] = rules[0];
	rules[2] = &rbln_model_rule_f32_r;
	rules[3] = &rbln_model_rule_f32_r;
	rules[4] = &rbln_model_rule_f32_r;
	reason = rbln_model_check_operands(ops, rules, 5, bos, nbos, operand);
	if (reason != RBLN_ISA_OK)
		return reason;
	if (!rbln_model_exact_rows(&c->k_cache,
				   rbln_model_block_bytes(c->block_size,
							  c->kv_heads,
							  c->head_dim,
							  c->dtype), &blocks))
		return rbln_model_shape_err(operand, 0);
	if (c->v_cache.size != c->k_cache.size)
		return rbln_model_shape_err(operand, 1);
	tokens = c->slots.size / 4;
	if (!rbln_model_rows_bytes(tokens, c->k_stride, width, &bytes) ||
	    bytes != c->k.size)
		return rbln_model_shape_err(operand, 2);
	if (!rbln_model_rows_bytes(tokens, c->v_stride, width, &bytes) ||
	    bytes != c->v.size)
		return rbln_model_shape_err(operand, 3);
	reason = rbln_model_first_overlap(&c->k_cache, ops, 1, 5, operand);
	if (reason == RBLN_ISA_OK)
		reason = rbln_model_first_overlap(&c->v_cache, ops, 2, 5,
						  operand);
	return reason;
}

/**
 * rbln_model_attention_parts() - partitions per query row in @work
 * @c: the command, its shape fields checked
 *
 * Return: ceil(max_blocks * block_size / partition_len), below 2^37.
 */
static u64 rbln_model_attention_parts(const struct rbln_isa_attention *c)
{
	u64 tokens = (u64)c->max_blocks * c->block_size;

	return (tokens + c->partition_len - 1) / c->partition_len;
}

/**
 * rbln_model_attention_work() - floats per query row of an ATTENTION's @work
 * @c: the command, its shape fields checked
 *
 * q_heads * P * (head_dim + 2): at most 2^20 * 2^37 * 258 floats, which
 * may exceed 64 bits; such a command cannot have a buffer large enough and
 * gets ~0 here.
 *
 * Return: floats per query row, or ~0ULL when that overflows.
 */
u64 rbln_model_attention_work(const struct rbln_isa_attention *c)
{
	u64 x;

	if (!rbln_model_mul(c->q_heads, rbln_model_attention_parts(c), &x) ||
	    !rbln_model_mul(x, (u64)c->head_dim + 2, &x))
		return ~0ULL;
	return x;
}

static bool rbln_model_attention_shape_ok(const struct rbln_isa_attention *c)
{
	return rbln_model_cache_shape_ok(c->block_size, c->kv_heads,
					 c->head_dim) &&
	       c->q_heads && c->q_heads % c->kv_heads == 0 &&
	       (u64)c->q_heads * c->head_dim <= RBLN_ISA_MAX_DIM &&
	       c->q_stride >= c->q_heads * c->head_dim &&
	       rbln_model_dim_ok(c->max_blocks) &&
	       rbln_model_dim_ok(c->partition_len);
}

/* The relations of an ATTENTION's operands with its shape. */
static u32 rbln_model_attention_sizes(const struct rbln_isa_attention *c,
				      u16 *operand)
{
	u64 width = (u64)c->q_heads * c->head_dim;
	u64 rows, bytes, n;

	if (!rbln_model_exact_rows(&c->out, width * 4, &rows))
		return rbln_model_shape_err(operand, 0);
	if (!rbln_model_rows_bytes(rows, c->q_stride, width, &bytes) ||
	    bytes != c->q.size)
		return rbln_model_shape_err(operand, 1);
	if (!rbln_model_exact_rows(&c->k_cache,
				   rbln_model_block_bytes(c->block_size,
							  c->kv_heads,
							  c->head_dim,
							  c->dtype), &n))
		return rbln_model_shape_err(operand, 2);
	if (c->v_cache.size != c->k_cache.size)
		return rbln_model_shape_err(operand, 3);
	/* @seqs: whole descriptors, by its alignment rule. */
	if (!rbln_model_exact_rows(&c->block_tables, (u64)c->max_blocks * 4,
				   &n))
		return rbln_model_shape_err(operand, 5);
	if (!rbln_model_mul(rows, rbln_model_attention_work(c), &n) ||
	    !rbln_model_mul(n, 4, &bytes) || c->work.size < bytes)
		return rbln_model_shape_err(operand, 6);
	return RBLN_ISA_OK;
}

static u32 rbln_model_check_attention(const struct rbln_isa_attention *c,
				      const struct rbln_model_bo *bos,
				      u32 nbos, u16 *operand)
{
	const struct rbln_isa_operand *ops[] = {
		&c->out, &c->q, &c->k_cache, &c->v_cache, &c->seqs,
		&c->block_tables, &c->work,
	};
	const struct rbln_model_operand_rule *rules[7];
	u32 reason;
	u32 i;

	if (c->pad)
		return RBLN_ISA_ERR_RESERVED;
	if (!rbln_model_float_dtype(c->dtype))
		return RBLN_ISA_ERR_ENUM;
	if (!rbln_model_f32_positive(c->scale))
		return RBLN_ISA_ERR_PARAM;
	if (!rbln_model_attention_shape_ok(c))
		return RBLN_ISA_ERR_SHAPE;
	rules[0] = &rbln_model_rule_f32_w;
	rules[1] = &rbln_model_rule_f32_r;
	rules[2] = rbln_model_rule_dtype(c->dtype, false);
	rules[3] = rules[2];
	rules[4] = &rbln_model_rule_seqs;
	rules[5] = &rbln_model_rule_f32_r;
	rules[6] = &rbln_model_rule_f32_rw;
	reason = rbln_model_check_operands(ops, rules, 7, bos, nbos, operand);
	if (reason != RBLN_ISA_OK)
		return reason;
	reason = rbln_model_attention_sizes(c, operand);
	if (reason != RBLN_ISA_OK)
		return reason;
	reason = rbln_model_first_overlap(&c->out, ops, 1, 7, operand);
	for (i = 1; i < 6 && reason == RBLN_ISA_OK; i++) {
		if (rbln_model_overlap(&c->work, ops[i])) {
			*operand = 6;
			reason = RBLN_ISA_ERR_OVERLAP;
		}
	}
	return reason;
}

/**
 * rbln_model_check_select() - the operands shared by ARGMAX and TOPK
 * @values: float32 [R, k], written
 * @indices: int32 [R, k], written
 * @src: float32 [R, n], read
 * @n: row length
 * @k: elements per output row
 * @index_base: added to the indices
 * @bos: the buffer list
 * @nbos: entries in @bos
 * @operand: set to the index of a bad operand
 *
 * Return: RBLN_ISA_OK or the &enum rbln_isa_error reason.
 */
static u32 rbln_model_check_select(const struct rbln_isa_operand *values,
				   const struct rbln_isa_operand *indices,
				   const struct rbln_isa_operand *src, u32 n,
				   u32 k, u32 index_base,
				   const struct rbln_model_bo *bos, u32 nbos,
				   u16 *operand)
{
	const struct rbln_isa_operand *ops[] = { values, indices, src };
	const struct rbln_model_operand_rule *rules[] = {
		&rbln_model_rule_f32_w, &rbln_model_rule_f32_w,
		&rbln_model_rule_f32_r,
	};
	u64 rows;
	u32 reason;

	/* Every index plus the base stays a non-negative int32. */
	if (!rbln_model_dim_ok(n) || (u64)index_base + n > 0x80000000ULL)
		return RBLN_ISA_ERR_SHAPE;
	reason = rbln_model_check_operands(ops, rules, 3, bos, nbos, operand);
	if (reason != RBLN_ISA_OK)
		return reason;
	if (!rbln_model_exact_rows(src, (u64)n * 4, &rows))
		return rbln_model_shape_err(operand, 2);
	/* k <= n, so rows * k * 4 <= src.size: no overflow. */
	if (values->size != rows * k * 4)
		return rbln_model_shape_err(operand, 0);
	if (indices->size != rows * k * 4)
		return rbln_model_shape_err(operand, 1);
	reason = rbln_model_first_overlap(values, ops, 1, 3, operand);
	if (reason == RBLN_ISA_OK)
		reason = rbln_model_first_overlap(indices, ops, 2, 3, operand);
	return reason;
}

static u32 rbln_model_check_argmax(const struct rbln_isa_argmax *c,
				   const struct rbln_model_bo *bos, u32 nbos,
				   u16 *operand)
{
	return rbln_model_check_select(&c->values, &c->indices, &c->src, c->n,
				       1, c->index_base, bos, nbos, operand);
}

static u32 rbln_model_check_topk(const struct rbln_isa_topk *c,
				 const struct rbln_model_bo *bos, u32 nbos,
				 u16 *operand)
{
	if (c->pad)
		return RBLN_ISA_ERR_RESERVED;
	if (!c->k || c->k > RBLN_ISA_MAX_TOPK || c->k > c->n)
		return RBLN_ISA_ERR_SHAPE;
	return rbln_model_check_select(&c->values, &c->indices, &c->src, c->n,
				       c->k, c->index_base, bos, nbos,
				       operand);
}

/**
 * rbln_model_cmd_flags() - the header flags an opcode defines
 * @opcode: a known opcode
 *
 * Return: the mask of allowed bits of &rbln_isa_cmd.flags.
 */
u32 rbln_model_cmd_flags(u16 opcode)
{
	switch (opcode) {
	case RBLN_OP_MATMUL:
		return RBLN_MATMUL_ACCUMULATE | RBLN_MATMUL_A_BF16;
	case RBLN_OP_EMBED:
		return RBLN_EMBED_ZERO_OUTSIDE;
	case RBLN_OP_KV_WRITE:
	case RBLN_OP_ATTENTION:
		return RBLN_KV_HEAD_MAJOR;
	}
	return 0;
}

/**
 * rbln_model_cmd_size() - the size of a compute command of ISA 1.1
 * @opcode: the opcode
 *
 * Return: its size in bytes, or 0 for any other opcode.
 */
u16 rbln_model_cmd_size(u16 opcode)
{
	switch (opcode) {
	case RBLN_OP_EMBED:
		return sizeof(struct rbln_isa_embed);
	case RBLN_OP_RMSNORM:
		return sizeof(struct rbln_isa_rmsnorm);
	case RBLN_OP_MATMUL:
		return sizeof(struct rbln_isa_matmul);
	case RBLN_OP_ROPE:
		return sizeof(struct rbln_isa_rope);
	case RBLN_OP_SWIGLU:
		return sizeof(struct rbln_isa_swiglu);
	case RBLN_OP_KV_WRITE:
		return sizeof(struct rbln_isa_kv_write);
	case RBLN_OP_ATTENTION:
		return sizeof(struct rbln_isa_attention);
	case RBLN_OP_ARGMAX:
		return sizeof(struct rbln_isa_argmax);
	case RBLN_OP_TOPK:
		return sizeof(struct rbln_isa_topk);
	}
	return 0;
}

/**
 * rbln_model_check_compute() - check the body of a compute command
 * @cmd: the command, its header checked and its body copied out
 * @bos: the buffer list
 * @nbos: entries in @bos
 * @operand: set to the index of a bad operand
 *
 * Return: RBLN_ISA_OK or the &enum rbln_isa_error reason.
 */
u32 rbln_model_check_compute(const struct rbln_model_cmd *cmd,
			     const struct rbln_model_bo *bos, u32 nbos,
			     u16 *operand)
{
	switch (cmd->u.hdr.opcode) {
	case RBLN_OP_EMBED:
		return rbln_model_check_embed(&cmd->u.embed, bos, nbos, operand);
	case RBLN_OP_RMSNORM:
		return rbln_model_check_rmsnorm(&cmd->u.rmsnorm, bos, nbos,
						operand);
	case RBLN_OP_MATMUL:
		return rbln_model_check_matmul(&cmd->u.matmul, bos, nbos,
					       operand);
	case RBLN_OP_ROPE:
		return rbln_model_check_rope(&cmd->u.rope, bos, nbos, operand);
	case RBLN_OP_SWIGLU:
		return rbln_model_check_swiglu(&cmd->u.swiglu, bos, nbos,
					       operand);
	case RBLN_OP_KV_WRITE:
		return rbln_model_check_kv_write(&cmd->u.kv_write, bos, nbos,
						 operand);
	case RBLN_OP_ATTENTION:
		return rbln_model_check_attention(&cmd->u.attention, bos, nbos,
						  operand);
	case RBLN_OP_ARGMAX:
		return rbln_model_check_argmax(&cmd->u.argmax, bos, nbos,
					       operand);
	case RBLN_OP_TOPK:
		return rbln_model_check_topk(&cmd->u.topk, bos, nbos, operand);
	}
	return RBLN_ISA_ERR_OPCODE;
}
