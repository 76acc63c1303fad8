/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rbln_isa.h - the command-stream format ("ISA") executed by RBLN devices.
 *
 * A stream is a &struct rbln_isa_stream_header followed by commands, all
 * little-endian, each command a &struct rbln_isa_cmd followed by its body,
 * its total size a multiple of 8 bytes. Commands execute in order; the only
 * concurrency inside a stream is the device splitting one command across its
 * engines, which is invisible to the stream.
 *
 * Operands name memory as (buffer-list index, offset, size) with a
 * &struct rbln_isa_operand; the buffer list is the submission's (see
 * &struct drm_rbln_submit). A stream is validated whole before anything
 * executes: every field below that is documented "must be zero" is checked,
 * every operand range is checked against its buffer, and every access
 * against the buffer-list flags. A malformed stream is rejected with an
 * &enum rbln_isa_error reason, the offending command and operand.
 *
 * Documentation/uapi.md describes every opcode with an example.
 */
#ifndef _UAPI_RBLN_ISA_H_
#define _UAPI_RBLN_ISA_H_

#include <linux/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

/** RBLN_ISA_MAGIC: "RBLN" read as a little-endian __u32. */
#define RBLN_ISA_MAGIC			0x4e4c4252U
/** RBLN_ISA_VERSION_MAJOR: streams of another major version are rejected. */
#define RBLN_ISA_VERSION_MAJOR		1
/**
 * RBLN_ISA_VERSION_MINOR: streams of a higher minor version are rejected.
 * 1.1 added the compute opcodes 0x11-0x19; 1.2 added the head-major KV cache
 * layout (RBLN_KV_HEAD_MAJOR) and int8 MATMUL weights (RBLN_DTYPE_I8); 1.3
 * added MATMUL's bfloat16 activations (RBLN_MATMUL_A_BF16); 1.4 added the
 * spaced panel layout of MATMUL weights (RBLN_LAYOUT_PACKED16_SPACED). Every
 * stream of a lower minor version is valid with the same meaning.
 */
#define RBLN_ISA_VERSION_MINOR		4
/** RBLN_ISA_VERSION: as reported in &drm_rbln_device_info.isa_version. */
#define RBLN_ISA_VERSION \
	((RBLN_ISA_VERSION_MAJOR << 16) | RBLN_ISA_VERSION_MINOR)

/** RBLN_ISA_ALIGN: alignment of the stream and of every command size. */
#define RBLN_ISA_ALIGN			8
/** RBLN_ISA_CMD_MAX_SIZE: largest size of one command in bytes. */
#define RBLN_ISA_CMD_MAX_SIZE		4096
/** RBLN_ISA_SEM_WAIT_MAX_NS: largest SEM_WAIT timeout (60 s). */
#define RBLN_ISA_SEM_WAIT_MAX_NS	60000000000ULL
/** RBLN_ISA_NO_INDEX: &drm_rbln_submit_diag opcode/operand "not known". */
#define RBLN_ISA_NO_INDEX		0xffff

/**
 * struct rbln_isa_stream_header - first 16 bytes of every stream
 */
struct rbln_isa_stream_header {
	/** @magic: RBLN_ISA_MAGIC. */
	__u32 magic;
	/** @version_major: RBLN_ISA_VERSION_MAJOR. */
	__u16 version_major;
	/** @version_minor: at most RBLN_ISA_VERSION_MINOR. */
	__u16 version_minor;
	/** @size: bytes of the stream including this header; equals cmd_size. */
	__u32 size;
	/** @flags: must be zero. */
	__u32 flags;
};

/**
 * enum rbln_isa_opcode - command opcodes
 * @RBLN_OP_NOP: do nothing; the one command whose size may be any multiple
 *	of 8 from 8 up (padding). Body: ignored bytes, must be zero.
 * @RBLN_OP_BARRIER: every earlier command of the stream has completed and
 *	its writes are visible to every device before any later command
 *	starts. &struct rbln_isa_cmd only.
 * @RBLN_OP_FILL: &struct rbln_isa_fill.
 * @RBLN_OP_COPY: &struct rbln_isa_copy.
 * @RBLN_OP_SEM_SIGNAL: &struct rbln_isa_sem_signal.
 * @RBLN_OP_SEM_WAIT: &struct rbln_isa_sem_wait.
 * @RBLN_OP_ADD: &struct rbln_isa_add, element-wise float32 addition.
 * @RBLN_OP_EMBED: &struct rbln_isa_embed, gather table rows by token id
 *	(ISA 1.1).
 * @RBLN_OP_RMSNORM: &struct rbln_isa_rmsnorm, RMS normalisation of rows
 *	(ISA 1.1).
 * @RBLN_OP_MATMUL: &struct rbln_isa_matmul, activations times weights
 *	(ISA 1.1).
 * @RBLN_OP_ROPE: &struct rbln_isa_rope, rotary position embedding in place
 *	(ISA 1.1).
 * @RBLN_OP_SWIGLU: &struct rbln_isa_swiglu, silu(gate) * up (ISA 1.1).
 * @RBLN_OP_KV_WRITE: &struct rbln_isa_kv_write, store keys and values in a
 *	paged cache (ISA 1.1).
 * @RBLN_OP_ATTENTION: &struct rbln_isa_attention, causal attention over a
 *	paged cache, by KV partitions (ISA 1.1).
 * @RBLN_OP_ARGMAX: &struct rbln_isa_argmax, largest element of each row
 *	(ISA 1.1).
 * @RBLN_OP_TOPK: &struct rbln_isa_topk, k largest elements of each row
 *	(ISA 1.1).
 * @RBLN_OP_COUNT: one past the highest opcode.
 *
 * Opcodes 0x00-0x0f move and synchronise data; 0x10 and up compute.
 * Documentation/isa-compute.md gives the numerics of every compute opcode.
 */
enum rbln_isa_opcode {
	RBLN_OP_NOP = 0x00,
	RBLN_OP_BARRIER = 0x01,
	RBLN_OP_FILL = 0x02,
	RBLN_OP_COPY = 0x03,
	RBLN_OP_SEM_SIGNAL = 0x04,
	RBLN_OP_SEM_WAIT = 0x05,
	RBLN_OP_ADD = 0x10,
	RBLN_OP_EMBED = 0x11,
	RBLN_OP_RMSNORM = 0x12,
	RBLN_OP_MATMUL = 0x13,
	RBLN_OP_ROPE = 0x14,
	RBLN_OP_SWIGLU = 0x15,
	RBLN_OP_KV_WRITE = 0x16,
	RBLN_OP_ATTENTION = 0x17,
	RBLN_OP_ARGMAX = 0x18,
	RBLN_OP_TOPK = 0x19,
	RBLN_OP_COUNT,
};

/**
 * struct rbln_isa_cmd - header of every command
 */
struct rbln_isa_cmd {
	/** @opcode: an &enum rbln_isa_opcode value. */
	__u16 opcode;
	/** @size: bytes of the command including this header, a multiple of 8. */
	__u16 size;
	/**
	 * @flags: bits the opcode defines (RBLN_MATMUL_ACCUMULATE,
	 * RBLN_EMBED_ZERO_OUTSIDE, RBLN_KV_HEAD_MAJOR); every other bit must
	 * be zero.
	 */
	__u32 flags;
};

/**
 * struct rbln_isa_operand - a byte range of a buffer of the buffer list
 */
struct rbln_isa_operand {
	/** @bo: index into the submission's buffer list. */
	__u32 bo;
	/** @flags: must be zero. */
	__u32 flags;
	/** @offset: byte offset in the buffer. */
	__u64 offset;
	/** @size: length in bytes; offset + size may not exceed the buffer. */
	__u64 size;
};

/**
 * struct rbln_isa_fill - RBLN_OP_FILL: store a 32-bit pattern repeatedly
 *
 * @dst must be writable, its offset and size multiples of 4, size non-zero.
 */
struct rbln_isa_fill {
	/** @hdr: opcode RBLN_OP_FILL, size 40. */
	struct rbln_isa_cmd hdr;
	/** @dst: destination range. */
	struct rbln_isa_operand dst;
	/** @value: the pattern, stored little-endian at every 4-byte step. */
	__u32 value;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * struct rbln_isa_copy - RBLN_OP_COPY: DMA between or within buffers
 *
 * @dst writable, @src readable, equal non-zero sizes, any alignment. The
 * ranges may overlap (the result is as if @src were read whole first) and
 * may lie in buffers imported from other devices (peer DMA).
 */
struct rbln_isa_copy {
	/** @hdr: opcode RBLN_OP_COPY, size 56. */
	struct rbln_isa_cmd hdr;
	/** @dst: destination range. */
	struct rbln_isa_operand dst;
	/** @src: source range. */
	struct rbln_isa_operand src;
};

/**
 * enum rbln_isa_sem_op - how RBLN_OP_SEM_SIGNAL changes the counter
 * @RBLN_SEM_SET: store the value
 * @RBLN_SEM_ADD: add the value atomically (wrapping)
 */
enum rbln_isa_sem_op {
	RBLN_SEM_SET = 0,
	RBLN_SEM_ADD = 1,
};

/**
 * struct rbln_isa_sem_signal - RBLN_OP_SEM_SIGNAL: update a semaphore
 *
 * The semaphore is a little-endian __u64 counter: @sem has size 8, an
 * offset that is a multiple of 8 and is writable. Every write of earlier
 * commands is visible before the new value is (release order), also to
 * other devices that share the buffer.
 */
struct rbln_isa_sem_signal {
	/** @hdr: opcode RBLN_OP_SEM_SIGNAL, size 48. */
	struct rbln_isa_cmd hdr;
	/** @sem: the counter. */
	struct rbln_isa_operand sem;
	/** @op: an &enum rbln_isa_sem_op value. */
	__u32 op;
	/** @pad: must be zero. */
	__u32 pad;
	/** @value: operand of @op. */
	__u64 value;
};

/**
 * enum rbln_isa_sem_cond - when RBLN_OP_SEM_WAIT is satisfied
 * @RBLN_SEM_GEQ: counter >= value
 * @RBLN_SEM_EQ: counter == value
 */
enum rbln_isa_sem_cond {
	RBLN_SEM_GEQ = 0,
	RBLN_SEM_EQ = 1,
};

/**
 * struct rbln_isa_sem_wait - RBLN_OP_SEM_WAIT: wait for a semaphore
 *
 * @sem as for SEM_SIGNAL but readable. Later commands see every write made
 * before the signal that satisfied the wait (acquire order). When
 * @timeout_ns passes first, the job ends with status -ETIMEDOUT.
 */
struct rbln_isa_sem_wait {
	/** @hdr: opcode RBLN_OP_SEM_WAIT, size 56. */
	struct rbln_isa_cmd hdr;
	/** @sem: the counter. */
	struct rbln_isa_operand sem;
	/** @cond: an &enum rbln_isa_sem_cond value. */
	__u32 cond;
	/** @pad: must be zero. */
	__u32 pad;
	/** @value: value compared with the counter. */
	__u64 value;
	/** @timeout_ns: 1 to RBLN_ISA_SEM_WAIT_MAX_NS, from the wait's start. */
	__u64 timeout_ns;
};

/**
 * struct rbln_isa_add - RBLN_OP_ADD: dst[i] = a[i] + b[i] in float32
 *
 * All three sizes equal, non-zero, multiples of 4, offsets multiples of 4;
 * @a and @b readable, @dst writable. @dst may alias @a or @b exactly
 * (in-place accumulate); any other overlap is rejected. IEEE-754 binary32
 * round-to-nearest-even, no flush of denormals.
 */
struct rbln_isa_add {
	/** @hdr: opcode RBLN_OP_ADD, size 80. */
	struct rbln_isa_cmd hdr;
	/** @dst: output. */
	struct rbln_isa_operand dst;
	/** @a: first input. */
	struct rbln_isa_operand a;
	/** @b: second input. */
	struct rbln_isa_operand b;
};

/*
 * Compute opcodes of ISA 1.1. Tensors are dense, row-major and little-endian
 * unless a layout says otherwise; shapes are given in elements by the
 * command's fields and by operand sizes, which must agree exactly
 * (RBLN_ISA_ERR_SHAPE otherwise). float32 and int32 operands have offsets
 * and sizes that are multiples of 4, float16 and bfloat16 ones multiples of
 * 2. Float parameters travel as IEEE-754 binary32 bit patterns in __u32
 * fields. Index data read at run time (token ids, positions, slots, block
 * tables, sequence descriptors) is checked where it is used: a value out of
 * range ends the job with -EIO (a device fault) before any memory outside
 * the operands is touched. Documentation/isa-compute.md has the numerics.
 */

/** RBLN_ISA_MAX_DIM: largest row length, head count or matrix dimension. */
#define RBLN_ISA_MAX_DIM		(1U << 20)
/** RBLN_ISA_MAX_HEAD_DIM: largest head_dim of ROPE, KV_WRITE, ATTENTION. */
#define RBLN_ISA_MAX_HEAD_DIM		256
/** RBLN_ISA_MAX_TOPK: largest k of RBLN_OP_TOPK. */
#define RBLN_ISA_MAX_TOPK		1024
/** RBLN_ISA_PACK_COLS: output columns per panel of the packed layouts. */
#define RBLN_ISA_PACK_COLS		16
/**
 * RBLN_ISA_PANEL_GAP: bytes after each panel of RBLN_LAYOUT_PACKED16_SPACED
 * (2 KiB and one cache line), which the device never reads.
 */
#define RBLN_ISA_PANEL_GAP		2112

/**
 * enum rbln_isa_dtype - element types of weights, tables and caches
 * @RBLN_DTYPE_F32: IEEE-754 binary32
 * @RBLN_DTYPE_F16: IEEE-754 binary16
 * @RBLN_DTYPE_BF16: bfloat16 (the upper 16 bits of a binary32)
 * @RBLN_DTYPE_I8: signed 8-bit integers with float32 scales per output
 *	column (weight-only quantisation); valid only as the weights of
 *	RBLN_OP_MATMUL (see &struct rbln_isa_matmul), an enum error elsewhere
 * @RBLN_DTYPE_COUNT: number of types
 */
enum rbln_isa_dtype {
	RBLN_DTYPE_F32 = 0,
	RBLN_DTYPE_F16 = 1,
	RBLN_DTYPE_BF16 = 2,
	RBLN_DTYPE_I8 = 3,
	RBLN_DTYPE_COUNT,
};

/**
 * RBLN_EMBED_ZERO_OUTSIDE: &rbln_isa_embed flag: ids outside the table's
 * range give rows of zeros instead of a fault (vocabulary-parallel shards,
 * summed by an all-reduce afterwards).
 */
#define RBLN_EMBED_ZERO_OUTSIDE		0x1U

/**
 * struct rbln_isa_embed - RBLN_OP_EMBED: dst[t] = table[ids[t] - id_base]
 *
 * @ids is int32 [T]; @table holds rows of @dim elements of @dtype, its size
 * a multiple of one row (rows = size / row); @dst is float32 [T, @dim].
 * An id outside [@id_base, @id_base + rows) faults the job, or with
 * RBLN_EMBED_ZERO_OUTSIDE in hdr.flags gives a row of +0.0. Elements are
 * widened exactly to float32. @dst overlaps neither input.
 */
struct rbln_isa_embed {
	/** @hdr: opcode RBLN_OP_EMBED, size 96, flags RBLN_EMBED_ZERO_OUTSIDE. */
	struct rbln_isa_cmd hdr;
	/** @dst: float32 [T, dim], written. */
	struct rbln_isa_operand dst;
	/** @table: [rows, dim] of @dtype, read. */
	struct rbln_isa_operand table;
	/** @ids: int32 [T], read. */
	struct rbln_isa_operand ids;
	/** @dtype: an &enum rbln_isa_dtype value, the type of @table. */
	__u32 dtype;
	/** @dim: elements per row, 1 to RBLN_ISA_MAX_DIM. */
	__u32 dim;
	/** @id_base: the id of the table's first row. */
	__u32 id_base;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * struct rbln_isa_rmsnorm - RBLN_OP_RMSNORM: RMS normalisation of rows
 *
 * For each row x of @src (float32 [R, @dim]):
 * dst = (x * (1 / sqrt(sum(x * x) / dim + eps))) * weight, as Llama's
 * RMSNorm. @weight is [@dim] of @dtype. @dst equals @src exactly (in place)
 * or overlaps neither input.
 */
struct rbln_isa_rmsnorm {
	/** @hdr: opcode RBLN_OP_RMSNORM, size 96. */
	struct rbln_isa_cmd hdr;
	/** @dst: float32 [R, dim], written. */
	struct rbln_isa_operand dst;
	/** @src: float32 [R, dim], read. */
	struct rbln_isa_operand src;
	/** @weight: [dim] of @dtype, read. */
	struct rbln_isa_operand weight;
	/** @dtype: an &enum rbln_isa_dtype value, the type of @weight. */
	__u32 dtype;
	/** @dim: elements per row, 1 to RBLN_ISA_MAX_DIM. */
	__u32 dim;
	/** @eps: binary32 bits; finite and not negative. */
	__u32 eps;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * enum rbln_isa_layout - how MATMUL weights are stored
 * @RBLN_LAYOUT_ROWMAJOR: [N, K] row-major, as checkpoints store a linear
 *	layer's weight
 * @RBLN_LAYOUT_PACKED16: panels of RBLN_ISA_PACK_COLS output columns,
 *	laid out so the device reads each panel once, front to back (see
 *	&struct rbln_isa_matmul)
 * @RBLN_LAYOUT_PACKED16_SPACED: (ISA 1.4) the panels of
 *	RBLN_LAYOUT_PACKED16, each followed by RBLN_ISA_PANEL_GAP unused
 *	bytes, so that panels read side by side do not all start at the same
 *	offset modulo a large power of two
 * @RBLN_LAYOUT_COUNT: number of layouts
 */
enum rbln_isa_layout {
	RBLN_LAYOUT_ROWMAJOR = 0,
	RBLN_LAYOUT_PACKED16 = 1,
	RBLN_LAYOUT_PACKED16_SPACED = 2,
	RBLN_LAYOUT_COUNT,
};

/**
 * RBLN_MATMUL_ACCUMULATE: &rbln_isa_matmul flag: add the product to what
 * @dst holds (residual add) instead of overwriting it.
 */
#define RBLN_MATMUL_ACCUMULATE		0x1U

/**
 * RBLN_MATMUL_A_BF16: &rbln_isa_matmul flag (ISA 1.3): the device may
 * round each activation to bfloat16 (to nearest, ties to even; a
 * subnormal may become zero) before it multiplies, as bfloat16 hardware
 * and bf16 CPU paths do, in exchange for the bfloat16 dot-product units'
 * speed. Products and sums stay float32. Whether it rounds depends on the
 * CPU variant and the product's shape, so the result is either the exact
 * float32 product or one of the rounded activations: within
 * (k + 1) * 2^-24 * sum|a w| + 2^-8 * sum|a w| of the real product.
 */
#define RBLN_MATMUL_A_BF16		0x2U

/**
 * struct rbln_isa_matmul - RBLN_OP_MATMUL: dst[m, n] = sum_k a[m, k] * w[n, k]
 *
 * @a is float32 [M, @k] (M = a.size / (4 * k), at least 1), @dst float32
 * [M, @n]. Each output is one accumulation over k in increasing order,
 * starting from +0.0, or from dst's old value with RBLN_MATMUL_ACCUMULATE
 * (then @dst must also be readable).
 *
 * @w holds the weights as @dtype in @layout. RBLN_LAYOUT_ROWMAJOR: [@n, @k],
 * size n * k elements. RBLN_LAYOUT_PACKED16: P = ceil(n / 16) panels, each
 * k * 16 elements, panel p holding output columns 16p .. 16p + 15 (columns
 * past @n are ignored). In a panel, element (kk, j) of column 16p + j sits at
 * index kk * 16 + s(j), where s(j) = j for float32 and float16 and, for
 * bfloat16, s(j) = 2j for j < 8 and 2(j - 8) + 1 for j >= 8: each 32-bit
 * word holds columns j and j + 8, which the device widens with one shift
 * and one mask. Size: P * k * 16 elements. RBLN_LAYOUT_PACKED16_SPACED:
 * the same panels, panel p starting at byte p * (k * 16 * e +
 * RBLN_ISA_PANEL_GAP) for elements of e bytes, the gap after every panel
 * (the last one's too) unread. Size: P * (k * 16 * e + RBLN_ISA_PANEL_GAP)
 * bytes.
 *
 * RBLN_DTYPE_I8 (int8 weights, s(j) = j): the weights in any layout are
 * followed directly, at byte offset n * k (row-major), P * k * 16
 * (packed) or P * (k * 16 + RBLN_ISA_PANEL_GAP) (spaced), by P * 16
 * float32 scales, one per output column (those past @n are ignored; the
 * offset needs no alignment). Column c's weight is the
 * float32 product f32(w[c, kk]) * scale[c], rounded once, and the product
 * uses it as it would a float32 weight. Size: the weights' bytes plus
 * P * 64.
 *
 * @dst overlaps neither input.
 */
struct rbln_isa_matmul {
	/**
	 * @hdr: opcode RBLN_OP_MATMUL, size 96, flags RBLN_MATMUL_ACCUMULATE
	 * and RBLN_MATMUL_A_BF16.
	 */
	struct rbln_isa_cmd hdr;
	/** @dst: float32 [M, n], written (and read when accumulating). */
	struct rbln_isa_operand dst;
	/** @a: float32 [M, k], read. */
	struct rbln_isa_operand a;
	/** @w: weights of @dtype in @layout, read. */
	struct rbln_isa_operand w;
	/** @dtype: an &enum rbln_isa_dtype value, the type of @w. */
	__u32 dtype;
	/** @layout: an &enum rbln_isa_layout value. */
	__u32 layout;
	/** @k: the reduction dimension, 1 to RBLN_ISA_MAX_DIM. */
	__u32 k;
	/** @n: output columns, 1 to RBLN_ISA_MAX_DIM. */
	__u32 n;
};

/**
 * enum rbln_isa_rope_scaling - frequency scaling of RBLN_OP_ROPE
 * @RBLN_ROPE_SCALING_DEFAULT: inv_freq[i] = theta ^ (-2i / head_dim); the scaling
 *	fields of &struct rbln_isa_rope must be zero
 * @RBLN_ROPE_SCALING_LLAMA3: Hugging Face's "llama3" rope_type: low frequencies
 *	divided by factor, high ones kept, a smooth ramp between
 * @RBLN_ROPE_SCALING_COUNT: number of types
 */
enum rbln_isa_rope_scaling {
	RBLN_ROPE_SCALING_DEFAULT = 0,
	RBLN_ROPE_SCALING_LLAMA3 = 1,
	RBLN_ROPE_SCALING_COUNT,
};

/**
 * struct rbln_isa_rope - RBLN_OP_ROPE: rotary embedding, in place
 *
 * @x holds T token rows, @stride floats apart, each starting with @heads
 * heads of @head_dim floats (x.size = ((T - 1) * stride + heads *
 * head_dim) * 4; a stride larger than heads * head_dim skips the rest of
 * a fused QKV row). @pos is int32 [T], each at least 0. For token t, head
 * h, i < head_dim / 2, with angle = pos[t] * inv_freq[i], the pair
 * (x1, x2) = (x[i], x[i + head_dim / 2]) becomes
 * (x1 * cos - x2 * sin, x2 * cos + x1 * sin): the "rotate half" pairing of
 * Hugging Face Llama. @pos does not overlap @x.
 */
struct rbln_isa_rope {
	/** @hdr: opcode RBLN_OP_ROPE, size 96. */
	struct rbln_isa_cmd hdr;
	/** @x: float32 rows, read and written. */
	struct rbln_isa_operand x;
	/** @pos: int32 [T] positions, read. */
	struct rbln_isa_operand pos;
	/** @heads: heads per token row, at least 1. */
	__u32 heads;
	/** @head_dim: even, 2 to RBLN_ISA_MAX_HEAD_DIM. */
	__u32 head_dim;
	/** @stride: floats from one token row to the next, >= heads * head_dim. */
	__u32 stride;
	/** @scaling: an &enum rbln_isa_rope_scaling value. */
	__u32 scaling;
	/** @theta: binary32 base of the frequencies, finite and > 1. */
	__u32 theta;
	/** @factor: binary32 llama3 factor, finite and >= 1. */
	__u32 factor;
	/** @low_freq_factor: binary32 llama3 low_freq_factor, finite and > 0. */
	__u32 low_freq_factor;
	/** @high_freq_factor: binary32, finite and > @low_freq_factor. */
	__u32 high_freq_factor;
	/** @original_max_pos: llama3 original_max_position_embeddings, >= 1. */
	__u32 original_max_pos;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * struct rbln_isa_swiglu - RBLN_OP_SWIGLU: dst = silu(gate) * up
 *
 * @dst is float32 [R, @n]; @gate and @up hold R rows of @n floats, row r
 * at r * stride (a stride of 2n reads a fused gate_up output). silu(g) =
 * g / (1 + exp(-g)). @dst overlaps neither input, except that it may equal
 * one exactly when that input's stride is @n.
 */
struct rbln_isa_swiglu {
	/** @hdr: opcode RBLN_OP_SWIGLU, size 96. */
	struct rbln_isa_cmd hdr;
	/** @dst: float32 [R, n], written. */
	struct rbln_isa_operand dst;
	/** @gate: float32 rows, read. */
	struct rbln_isa_operand gate;
	/** @up: float32 rows, read. */
	struct rbln_isa_operand up;
	/** @n: elements per row, 1 to RBLN_ISA_MAX_DIM. */
	__u32 n;
	/** @gate_stride: floats between rows of @gate, >= n. */
	__u32 gate_stride;
	/** @up_stride: floats between rows of @up, >= n. */
	__u32 up_stride;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * RBLN_KV_HEAD_MAJOR: &rbln_isa_kv_write and &rbln_isa_attention flag
 * (ISA 1.2): the caches are laid out [num_blocks, kv_heads, block_size,
 * head_dim], so one KV head's keys (and values) of a block are one
 * contiguous run that attention streams. Without it the layout is that of
 * ISA 1.1, [num_blocks, block_size, kv_heads, head_dim]. A cache must be
 * written and read with the same flag.
 */
#define RBLN_KV_HEAD_MAJOR		0x1U

/**
 * struct rbln_isa_kv_write - RBLN_OP_KV_WRITE: store keys and values
 *
 * The paged KV cache: @k_cache and @v_cache, equal sizes, each
 * [num_blocks, @block_size, @kv_heads, @head_dim] of @dtype, or
 * [num_blocks, @kv_heads, @block_size, @head_dim] with RBLN_KV_HEAD_MAJOR
 * in hdr.flags (num_blocks = size / one block). @k and @v hold T token
 * rows (T = slots.size / 4) of kv_heads * head_dim floats, @k_stride and
 * @v_stride floats apart. Token t goes to slot s = slots[t] (block s /
 * block_size, offset s % block_size); a negative slot skips the token
 * (padding), a slot at or past num_blocks * block_size faults the job.
 * float32 is narrowed to @dtype rounding to nearest even. No operand
 * overlaps another.
 */
struct rbln_isa_kv_write {
	/** @hdr: opcode RBLN_OP_KV_WRITE, size 152, flag RBLN_KV_HEAD_MAJOR. */
	struct rbln_isa_cmd hdr;
	/** @k_cache: key cache, written. */
	struct rbln_isa_operand k_cache;
	/** @v_cache: value cache, written. */
	struct rbln_isa_operand v_cache;
	/** @k: float32 key rows, read. */
	struct rbln_isa_operand k;
	/** @v: float32 value rows, read. */
	struct rbln_isa_operand v;
	/** @slots: int32 [T] cache slots, read. */
	struct rbln_isa_operand slots;
	/** @dtype: an &enum rbln_isa_dtype value, the type of the caches. */
	__u32 dtype;
	/** @block_size: tokens per cache block, 1 to 65536. */
	__u32 block_size;
	/** @kv_heads: heads per token, at least 1. */
	__u32 kv_heads;
	/** @head_dim: a multiple of 8, up to RBLN_ISA_MAX_HEAD_DIM. */
	__u32 head_dim;
	/** @k_stride: floats between rows of @k, >= kv_heads * head_dim. */
	__u32 k_stride;
	/** @v_stride: floats between rows of @v, >= kv_heads * head_dim. */
	__u32 v_stride;
};

/**
 * struct rbln_isa_attention - RBLN_OP_ATTENTION: paged causal attention
 *
 * @seqs is int32 [B, 4]: per sequence {q_start, q_len, ctx_len, table_row}.
 * Its q_len query rows are rows q_start .. q_start + q_len - 1 of @q and
 * @out; its keys and values are the first ctx_len tokens of the cache,
 * token j in block block_tables[table_row][j / block_size] at offset
 * j % block_size (@block_tables: int32 [rows, @max_blocks]). The new
 * chunk's keys must already be in the cache (KV_WRITE first). Query row i
 * sits at position ctx_len - q_len + i and attends to tokens 0 .. that
 * position (causal). Decode is q_len 1; a prefill chunk is q_len > 1 over
 * a cached prefix of ctx_len - q_len tokens. A sequence with q_len 0 is
 * skipped. Values out of range (q_start + q_len > T, ctx_len < q_len or
 * above max_blocks * block_size, table_row or a block id outside its
 * table or cache, a negative value) fault the job.
 *
 * Query head h uses KV head h / (q_heads / kv_heads) (GQA; MQA with one KV
 * head). Scores are scale * dot(q, k). The tokens of each row are split
 * into partitions of @partition_len; each partition yields an online
 * softmax partial result (max, sum of exponentials, unnormalised output),
 * stored in @work, and the partials are merged in partition order
 * (flash decoding). @work must hold T * q_heads * P * (head_dim + 2) floats,
 * P = ceil(max_blocks * block_size / partition_len).
 *
 * @q holds T rows @q_stride floats apart, each q_heads * head_dim floats;
 * @out is float32 [T, q_heads, head_dim]. @out and @work overlap nothing.
 * RBLN_KV_HEAD_MAJOR in hdr.flags reads caches of that layout; the layout
 * changes no result.
 */
struct rbln_isa_attention {
	/** @hdr: opcode RBLN_OP_ATTENTION, size 216, flag RBLN_KV_HEAD_MAJOR. */
	struct rbln_isa_cmd hdr;
	/** @out: float32 [T, q_heads, head_dim], written. */
	struct rbln_isa_operand out;
	/** @q: float32 query rows, read. */
	struct rbln_isa_operand q;
	/** @k_cache: key cache as for &struct rbln_isa_kv_write, read. */
	struct rbln_isa_operand k_cache;
	/** @v_cache: value cache, same size, read. */
	struct rbln_isa_operand v_cache;
	/** @seqs: int32 [B, 4] sequence descriptors, read. */
	struct rbln_isa_operand seqs;
	/** @block_tables: int32 [rows, max_blocks], read. */
	struct rbln_isa_operand block_tables;
	/** @work: float32 scratch for the partial results, written and read. */
	struct rbln_isa_operand work;
	/** @dtype: an &enum rbln_isa_dtype value, the type of the caches. */
	__u32 dtype;
	/** @block_size: tokens per cache block, 1 to 65536. */
	__u32 block_size;
	/** @q_heads: query heads, a multiple of @kv_heads. */
	__u32 q_heads;
	/** @kv_heads: key/value heads, at least 1. */
	__u32 kv_heads;
	/** @head_dim: a multiple of 8, up to RBLN_ISA_MAX_HEAD_DIM. */
	__u32 head_dim;
	/** @q_stride: floats between rows of @q, >= q_heads * head_dim. */
	__u32 q_stride;
	/** @max_blocks: entries per block-table row, at least 1. */
	__u32 max_blocks;
	/** @partition_len: tokens per KV partition, 1 to RBLN_ISA_MAX_DIM. */
	__u32 partition_len;
	/** @scale: binary32 score scale, finite and > 0 (1 / sqrt(head_dim)). */
	__u32 scale;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * struct rbln_isa_argmax - RBLN_OP_ARGMAX: the largest element of each row
 *
 * @src is float32 [R, @n]; @values float32 [R] gets the largest element,
 * @indices int32 [R] its column plus @index_base (the first column of a
 * vocabulary shard). Order: NaN above +inf, then numbers; the lowest
 * column wins ties. No operand overlaps another.
 */
struct rbln_isa_argmax {
	/** @hdr: opcode RBLN_OP_ARGMAX, size 88. */
	struct rbln_isa_cmd hdr;
	/** @values: float32 [R], written. */
	struct rbln_isa_operand values;
	/** @indices: int32 [R], written. */
	struct rbln_isa_operand indices;
	/** @src: float32 [R, n], read. */
	struct rbln_isa_operand src;
	/** @n: elements per row, 1 to RBLN_ISA_MAX_DIM. */
	__u32 n;
	/** @index_base: added to every index; n - 1 + index_base < 2^31. */
	__u32 index_base;
};

/**
 * struct rbln_isa_topk - RBLN_OP_TOPK: the @k largest elements of each row
 *
 * As RBLN_OP_ARGMAX, with @values float32 [R, @k] and @indices int32
 * [R, @k] in descending order of value (the order of RBLN_OP_ARGMAX), so
 * that the first column equals ARGMAX's result.
 */
struct rbln_isa_topk {
	/** @hdr: opcode RBLN_OP_TOPK, size 96. */
	struct rbln_isa_cmd hdr;
	/** @values: float32 [R, k], written. */
	struct rbln_isa_operand values;
	/** @indices: int32 [R, k], written. */
	struct rbln_isa_operand indices;
	/** @src: float32 [R, n], read. */
	struct rbln_isa_operand src;
	/** @n: elements per row, 1 to RBLN_ISA_MAX_DIM. */
	__u32 n;
	/** @k: elements kept, 1 to min(n, RBLN_ISA_MAX_TOPK). */
	__u32 k;
	/** @index_base: as for &struct rbln_isa_argmax. */
	__u32 index_base;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * enum rbln_isa_error - why a stream was rejected
 * @RBLN_ISA_OK: no error
 * @RBLN_ISA_ERR_STREAM_SIZE: stream size too small, too large or unaligned
 * @RBLN_ISA_ERR_MAGIC: header magic is not RBLN_ISA_MAGIC
 * @RBLN_ISA_ERR_VERSION: unsupported ISA version
 * @RBLN_ISA_ERR_HEADER_SIZE: header size field differs from the stream size
 * @RBLN_ISA_ERR_TRUNCATED: a command runs past the end of the stream
 * @RBLN_ISA_ERR_OPCODE: unknown opcode
 * @RBLN_ISA_ERR_CMD_SIZE: command size wrong for its opcode or unaligned
 * @RBLN_ISA_ERR_RESERVED: a flags, pad or reserved field is not zero
 * @RBLN_ISA_ERR_BO_INDEX: operand names a buffer outside the buffer list
 * @RBLN_ISA_ERR_OVERFLOW: operand offset + size overflows 64 bits
 * @RBLN_ISA_ERR_BOUNDS: operand range extends past its buffer
 * @RBLN_ISA_ERR_ALIGN: operand offset or size misaligned for the opcode
 * @RBLN_ISA_ERR_LENGTH: operand size zero or sizes that must match differ
 * @RBLN_ISA_ERR_ACCESS: buffer-list flags forbid the access
 * @RBLN_ISA_ERR_ENUM: an enumerated field (sem op or cond, dtype, layout,
 *	rope scaling) out of range, or RBLN_DTYPE_I8 outside MATMUL's weights
 * @RBLN_ISA_ERR_TIMEOUT: SEM_WAIT timeout zero or above the maximum
 * @RBLN_ISA_ERR_OVERLAP: operands overlap in a way the opcode forbids
 * @RBLN_ISA_ERR_SHAPE: a shape field is zero or out of range, or an operand
 *	size disagrees with the shape (ISA 1.1)
 * @RBLN_ISA_ERR_PARAM: a float parameter (eps, theta, scale, rope scaling)
 *	is not finite or out of its range (ISA 1.1)
 * @RBLN_ISA_ERR_COUNT: number of reasons
 */
enum rbln_isa_error {
	RBLN_ISA_OK = 0,
	RBLN_ISA_ERR_STREAM_SIZE,
	RBLN_ISA_ERR_MAGIC,
	RBLN_ISA_ERR_VERSION,
	RBLN_ISA_ERR_HEADER_SIZE,
	RBLN_ISA_ERR_TRUNCATED,
	RBLN_ISA_ERR_OPCODE,
	RBLN_ISA_ERR_CMD_SIZE,
	RBLN_ISA_ERR_RESERVED,
	RBLN_ISA_ERR_BO_INDEX,
	RBLN_ISA_ERR_OVERFLOW,
	RBLN_ISA_ERR_BOUNDS,
	RBLN_ISA_ERR_ALIGN,
	RBLN_ISA_ERR_LENGTH,
	RBLN_ISA_ERR_ACCESS,
	RBLN_ISA_ERR_ENUM,
	RBLN_ISA_ERR_TIMEOUT,
	RBLN_ISA_ERR_OVERLAP,
	RBLN_ISA_ERR_SHAPE,
	RBLN_ISA_ERR_PARAM,
	RBLN_ISA_ERR_COUNT,
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_RBLN_ISA_H_ */
