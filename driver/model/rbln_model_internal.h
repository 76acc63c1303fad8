/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * rbln_model_internal.h - what the files of the device model share.
 *
 * Not part of the model's API: homes include rbln_model.h only. The unit
 * tests include this header to reach the compute variants directly.
 */
#ifndef RBLN_MODEL_INTERNAL_H
#define RBLN_MODEL_INTERNAL_H

#include "rbln_model.h"

/*
 * The ISA is little-endian and the model reads it in host order; both homes
 * are x86_64. A big-endian home would need byte swaps in the decoder.
 */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the RBLN device model assumes a little-endian host"
#endif

/*
 * Bytes FILL and COPY move between two checks of env->cancelled(). In the
 * kernel this bounds how long an engine thread runs without a chance to
 * notice a reset (about 0.1 ms at memory speed).
 */
#define RBLN_MODEL_DMA_CHUNK		0x100000U	/* 1 MiB */

/*
 * float32 elements per FPU bracket: 64 KiB of output. kernel_fpu_begin()
 * disables preemption, so a bracket must stay short (a few microseconds).
 */
#define RBLN_MODEL_F32_CHUNK		16384U

/*
 * Fewest ADD elements (1 MiB of output) worth giving to one more engine:
 * below this, waking an engine costs more than the addition it would do.
 */
#define RBLN_MODEL_F32_PART_MIN		(256U * 1024U)

/*
 * Tokens ATTENTION scores at a time (online softmax rescales once per
 * tile): part of the numerics, so every piece of work starts on a tile
 * boundary of its partition. 32, not 16: a tile's maximum, exponentials
 * and rescale of the partials are per tile, and with 16 tokens they took
 * as long as the dot products (rbln-kbench, one engine: 7.8 GB/s at 16,
 * 10.6 at 32, 10.4 at 64 and 10.7 at 128, before the tile's work was
 * cut further).
 */
#define RBLN_MODEL_ATTN_TILE		32U

/*
 * Bytes ahead each key and value of ATTENTION is prefetched into L2
 * (prefetcht1), in both cache layouts and on every CPU: a constant, so a
 * token's prefetches are one instruction each, where a distance and a
 * cache chosen per CPU at run time cost a branch per token. Measured with
 * rbln-kbench (ctx 4096, 8 KV heads of 64, bf16, GB/s) on the 2-core Zen
 * 5, three rounds alternating, head-major batch 8 / batch 1 / token-major
 * batch 8: one engine 16.8-17.4 / 16.6-17.3 / 9.1-9.8 against 15.5-16.1 /
 * 14.1-15.5 / 7.4-8.7 with the run-time choice (4 KiB into L2 there, and
 * no prefetch for token-major caches), two engines 27.9-29.4 / 27.7-29.3 /
 * 16.5-17.7 against 25.9-29.7 / 26.1-29.1 / 12.8-14.6 (2026-12-08). The
 * run-time choice was 2 KiB into L1 on Intel: on the 16-core Sapphire
 * Rapids 0 to 8 KiB into L1 or L2 read within the noise of one call
 * (55-66 GB/s, 16 engines); 8 and 16 KiB on the Zen 5 no better than 4.
 */
#define RBLN_MODEL_ATTN_PREFETCH	4096U

/* Largest number of operands of one command (ATTENTION). */
#define RBLN_MODEL_MAX_OPERANDS		7

/**
 * struct rbln_model_cmd - one command, decoded and checked
 * @u: the command, copied out of the stream (which may be unaligned)
 * @u.hdr: its header
 * @u.fill: as RBLN_OP_FILL
 * @u.copy: as RBLN_OP_COPY
 * @u.signal: as RBLN_OP_SEM_SIGNAL
 * @u.wait: as RBLN_OP_SEM_WAIT
 * @u.add: as RBLN_OP_ADD
 * @u.embed: as RBLN_OP_EMBED
 * @u.rmsnorm: as RBLN_OP_RMSNORM
 * @u.matmul: as RBLN_OP_MATMUL
 * @u.rope: as RBLN_OP_ROPE
 * @u.swiglu: as RBLN_OP_SWIGLU
 * @u.kv_write: as RBLN_OP_KV_WRITE
 * @u.attention: as RBLN_OP_ATTENTION
 * @u.argmax: as RBLN_OP_ARGMAX
 * @u.topk: as RBLN_OP_TOPK
 * @index: its index in the stream
 * @offset: its byte offset in the stream
 */
struct rbln_model_cmd {
	union {
		struct rbln_isa_cmd hdr;
		struct rbln_isa_fill fill;
		struct rbln_isa_copy copy;
		struct rbln_isa_sem_signal signal;
		struct rbln_isa_sem_wait wait;
		struct rbln_isa_add add;
		struct rbln_isa_embed embed;
		struct rbln_isa_rmsnorm rmsnorm;
		struct rbln_isa_matmul matmul;
		struct rbln_isa_rope rope;
		struct rbln_isa_swiglu swiglu;
		struct rbln_isa_kv_write kv_write;
		struct rbln_isa_attention attention;
		struct rbln_isa_argmax argmax;
		struct rbln_isa_topk topk;
	} u;
	u32 index;
	u32 offset;
};

/* rbln_model_validate.c */
void rbln_model_diag_set(struct rbln_model_diag *diag, u32 reason,
			 u32 cmd_index, u32 cmd_offset, u16 opcode,
			 u16 operand);
u32 rbln_model_check_header(const u8 *stream, u64 size,
			    struct rbln_model_diag *diag);
u32 rbln_model_decode(const u8 *stream, u64 size, u32 offset, u32 index,
		      const struct rbln_model_bo *bos, u32 nbos,
		      struct rbln_model_cmd *cmd, struct rbln_model_diag *diag);

/**
 * struct rbln_model_operand_rule - what one operand of an opcode must obey
 * @access: RBLN_MODEL_READ and/or RBLN_MODEL_WRITE the buffer must allow
 * @offset_align: the offset must be a multiple of this (a power of two)
 * @size_align: the size must be a multiple of this (a power of two)
 * @exact_size: the size must equal this; 0 for any non-zero size
 */
struct rbln_model_operand_rule {
	u32 access;
	u32 offset_align;
	u32 size_align;
	u32 exact_size;
};

u32 rbln_model_check_operands(const struct rbln_isa_operand *const *ops,
			      const struct rbln_model_operand_rule *const *rules,
			      u32 n, const struct rbln_model_bo *bos, u32 nbos,
			      u16 *operand);
bool rbln_model_overlap(const struct rbln_isa_operand *x,
			const struct rbln_isa_operand *y);

/* rbln_model_validate_compute.c: the opcodes of ISA 1.1 */
u32 rbln_model_cmd_flags(u16 opcode);
u16 rbln_model_cmd_size(u16 opcode);
u32 rbln_model_check_compute(const struct rbln_model_cmd *cmd,
			     const struct rbln_model_bo *bos, u32 nbos,
			     u16 *operand);

/**
 * rbln_model_panel_stride() - bytes from one 16-column panel of a MATMUL's
 *	packed weights to the next
 * @c: the command (a packed layout, its dtype checked)
 *
 * The panel's k rows, plus RBLN_ISA_PANEL_GAP in the spaced layout: what
 * the validator sizes the operand by and every kernel steps by.
 */
static inline u64 rbln_model_panel_stride(const struct rbln_isa_matmul *c)
{
	u64 bytes = (u64)c->k * RBLN_ISA_PACK_COLS *
		    rbln_model_dtype_size(c->dtype);

	return c->layout == RBLN_LAYOUT_PACKED16_SPACED ?
	       bytes + RBLN_ISA_PANEL_GAP : bytes;
}

u64 rbln_model_attention_work(const struct rbln_isa_attention *c);

/* rbln_model_ops_dma.c */
int rbln_model_fill(u8 *dst, u64 size, u32 value,
		    const struct rbln_model_env *env);
int rbln_model_copy(u8 *dst, const u8 *src, u64 size,
		    const struct rbln_model_env *env);

/* rbln_model_ops_sem.c */
void rbln_model_sem_signal(u64 *sem, u32 op, u64 value);
int rbln_model_sem_wait(const u64 *sem, u32 cond, u64 value, u64 timeout_ns,
			const struct rbln_model_env *env);
void rbln_model_barrier(void);

/*
 * rbln_model_ops_f32.c: the only file with float code (kernel: built with
 * CC_FLAGS_FPU). Its functions run inside rbln_os_fpu_begin()/_end() only.
 * Element pointers are passed as bytes so that no float type appears in the
 * files built without FPU support.
 */
typedef void (*rbln_model_f32_add_fn)(u8 *dst, const u8 *a, const u8 *b,
				      u64 n);
void rbln_model_f32_add_generic(u8 *dst, const u8 *a, const u8 *b, u64 n);
#if defined(__x86_64__)
void rbln_model_f32_add_avx2(u8 *dst, const u8 *a, const u8 *b, u64 n);
#endif

/* rbln_model_exec_f32.c */
rbln_model_f32_add_fn rbln_model_f32_add_select(void);
int rbln_model_exec_add(u8 *dst, const u8 *a, const u8 *b, u64 n,
			const struct rbln_model_env *env);

/*
 * The compute kernels of ISA 1.1 (rbln_model_kern_*.c, built with FPU
 * support in the kernel), one table per CPU variant. Every function runs
 * inside one rbln_os_fpu_begin()/_end() bracket and does a bounded amount
 * of work; the exec files choose the pieces. Floats cross this interface
 * only as pointers and bit patterns: the exec files have no FPU.
 */

/**
 * struct rbln_model_mm - one MATMUL as the kernels see it
 * @c: output rows, @n floats each
 * @a: input rows, @k floats each
 * @w: weights in @layout
 * @m: rows
 * @n: output columns
 * @k: reduction length
 * @dtype: type of @w
 * @packed: @w is in one of the two packed layouts (else row-major)
 * @pstride: packed layouts: bytes from one panel to the next
 *	(rbln_model_panel_stride())
 * @accumulate: start from @c's old values rather than from zero
 * @a_bf16: the command allows activations rounded to bf16
 *	(RBLN_MATMUL_A_BF16)
 * @scales: RBLN_DTYPE_I8: the float32 scales after the weights, 16 per
 *	panel (any alignment); NULL for the float types
 * @prefetch: bytes ahead a tile of rows prefetches its panel of packed
 *	weights, 0 for none: set when so few rows share the weights that
 *	they stream from memory
 */
struct rbln_model_mm {
	u8 *c;
	const u8 *a;
	const u8 *w;
	u64 m;
	u32 n;
	u32 k;
	u32 dtype;
	bool packed;
	u64 pstride;
	bool accumulate;
	bool a_bf16;
	const u8 *scales;
	u32 prefetch;
};

/**
 * struct rbln_model_attn - one ATTENTION as the kernels see it
 * @cmd: the command
 * @out: output rows
 * @q: query rows
 * @k_cache: key cache
 * @v_cache: value cache
 * @seqs: sequence descriptors (runtime data)
 * @tables: block tables (runtime data)
 * @work: partial results
 * @nseqs: number of sequences
 * @rows: query rows (T)
 * @num_blocks: blocks per cache
 * @table_rows: rows of @tables
 * @parts: partitions per row in @work (P)
 * @group: query heads per KV head
 * @kv_per_piece: KV heads one piece of phase one covers
 * @kv_groups: pieces per (sequence, partition): ceil(kv_heads / that)
 * @row_blocks: pieces per (sequence, partition, KV head group): blocks of
 *	@rows_per_block query rows, the last one to the sequence's end
 * @rows_per_block: query rows of one such block
 * @head_major: the caches are [block][kv_head][token][head_dim]
 *	(RBLN_KV_HEAD_MAJOR), else [block][token][kv_head][head_dim]
 * @block_bytes: bytes of one cache block
 * @token_bytes: bytes from one token of a head to the next in a block
 * @head_bytes: bytes from one KV head of a token to the next
 */
struct rbln_model_attn {
	const struct rbln_isa_attention *cmd;
	u8 *out;
	const u8 *q;
	const u8 *k_cache;
	const u8 *v_cache;
	const u8 *seqs;
	const u8 *tables;
	u8 *work;
	u64 nseqs;
	u64 rows;
	u64 num_blocks;
	u64 table_rows;
	u64 parts;
	u32 group;
	u32 kv_per_piece;
	u32 kv_groups;
	u32 row_blocks;
	u32 rows_per_block;
	bool head_major;
	u64 block_bytes;
	u64 token_bytes;
	u64 head_bytes;
};

/**
 * struct rbln_model_seq - one checked sequence descriptor of ATTENTION
 * @q_start: first query row
 * @q_len: query rows
 * @ctx_len: tokens in the cache, the new ones included
 * @table: its block-table row
 */
struct rbln_model_seq {
	u64 q_start;
	u32 q_len;
	u32 ctx_len;
	const u8 *table;
};

/**
 * struct rbln_model_kernels - the compute kernels of one CPU variant
 * @name: "baseline", "avx2", "avx512", "amx" or "avx512+amx"
 * @mm: MATMUL rows [m0, m1) x panels [p0, p1) of 16 columns, over
 *	k in [k0, k1); continues the sums in @c unless k0 is 0 and the
 *	command does not accumulate
 * @mm_tiles: NULL, or a MATMUL of bf16 weights on matrix tiles (same
 *	contract as @mm), run in larger pieces (rbln_model_exec_mm.c)
 * @mm_tiles_min_rows: fewest rows of a command that @mm_tiles runs; the
 *	choice is per command, so one command has one kernel's bits
 * @mm_a_bf16: NULL, or a MATMUL of packed bf16 weights that rounds the
 *	activations to bf16 (same contract as @mm otherwise), for commands
 *	with RBLN_MATMUL_A_BF16 where rbln_model_mm_a_bf16_ok()
 * @mm_a_bf16_min_rows: fewest rows of a command that @mm_a_bf16 runs
 * @mm_decode: NULL, or a MATMUL of packed bf16 weights for commands of at
 *	most 16 rows (RBLN_MODEL_MM_STREAM_ROWS) with RBLN_MATMUL_A_BF16 (a
 *	decode batch), which may round the activations to bf16 (same
 *	contract as @mm otherwise); preferred to every other kernel there
 * @mm_decode_min_rows: fewest rows of a command that @mm_decode runs
 * @embed: EMBED token rows [t0, t1), columns [c0, c1); -RBLN_EIO on a bad id
 * @rms_sumsq: add the squares of @n floats at @x to the 8 partial sums
 *	in @acc (lane i takes elements i, i + 8, ...: the order is fixed)
 * @rms_scale: dst = (x * inv) * w for @n elements; inv is the bits of a
 *	float computed by @rms_inv
 * @rms_inv: 1 / sqrt(sum / dim + eps) from the 8 partial sums
 * @rope: ROPE token rows [t0, t1); -RBLN_EIO on a negative position
 * @swiglu: dst = silu(gate) * up over @n elements
 * @kv_write: KV_WRITE tokens [t0, t1); -RBLN_EIO on a bad slot
 * @attn_part: ATTENTION: continue the partial results of one sequence,
 *	KV heads [k0, k1) and partition over its tokens [j0, j1) (j0 a
 *	multiple of RBLN_MODEL_ATTN_TILE from the partition's start; j0 at
 *	the start begins the partials) for query rows [i0, i1) of the
 *	sequence; -RBLN_EIO on a bad block id
 * @attn_merge: merge the partials of the sequence's query rows [i0, i1)
 *	(all heads) into the output
 * @argmax: fold @n elements starting at column @col into the running
 *	best (@best: value bits and index)
 * @topk: fold @n elements starting at column @col into the running heap
 *	of @k (value, index) pairs at @vals and @idx, holding @have
 * @topk_sort: sort a full heap into descending order
 */
struct rbln_model_kernels {
	const char *name;
	void (*mm)(const struct rbln_model_mm *mm, u64 m0, u64 m1, u32 p0,
		   u32 p1, u32 k0, u32 k1);
	void (*mm_tiles)(const struct rbln_model_mm *mm, u64 m0, u64 m1,
			 u32 p0, u32 p1, u32 k0, u32 k1);
	u32 mm_tiles_min_rows;
	void (*mm_a_bf16)(const struct rbln_model_mm *mm, u64 m0, u64 m1,
			  u32 p0, u32 p1, u32 k0, u32 k1);
	u32 mm_a_bf16_min_rows;
	void (*mm_decode)(const struct rbln_model_mm *mm, u64 m0, u64 m1,
			  u32 p0, u32 p1, u32 k0, u32 k1);
	u32 mm_decode_min_rows;
	int (*embed)(const struct rbln_isa_embed *c, u8 *dst, const u8 *table,
		     const u8 *ids, u64 rows, u64 t0, u64 t1, u32 c0, u32 c1);
	void (*rms_sumsq)(const u8 *x, u32 n, u32 *acc);
	void (*rms_scale)(u8 *dst, const u8 *x, const u8 *w, u32 dtype, u32 n,
			  u32 inv);
	u32 (*rms_inv)(const u32 *acc, u32 dim, u32 eps);
	int (*rope)(const struct rbln_isa_rope *c, u8 *x, const u8 *pos,
		    u64 t0, u64 t1);
	void (*swiglu)(u8 *dst, const u8 *gate, const u8 *up, u32 n);
	int (*kv_write)(const struct rbln_isa_kv_write *c, u8 *kc, u8 *vc,
			const u8 *k, const u8 *v, const u8 *slots,
			u64 num_blocks, u64 t0, u64 t1);
	int (*attn_part)(const struct rbln_model_attn *at,
			 const struct rbln_model_seq *seq, u32 k0, u32 k1,
			 u64 part, u32 i0, u32 i1, u64 j0, u64 j1);
	void (*attn_merge)(const struct rbln_model_attn *at,
			   const struct rbln_model_seq *seq, u32 i0, u32 i1);
	void (*argmax)(const u8 *x, u32 n, u32 col, u32 *best);
	void (*topk)(const u8 *x, u32 n, u32 col, u8 *vals, u8 *idx, u32 k,
		     u32 *have);
	void (*topk_sort)(u8 *vals, u8 *idx, u32 k);
};

extern const struct rbln_model_kernels rbln_model_kernels_baseline;
bool rbln_model_mm_a_bf16_ok(void);
#if defined(__x86_64__)
extern const struct rbln_model_kernels rbln_model_kernels_avx2;
extern const struct rbln_model_kernels rbln_model_kernels_avx512;
/* rbln_model_kern_avx512.c: the AVX-512 variant's MATMUL */
void rbln_model_mm_avx512(const struct rbln_model_mm *mm, u64 m0, u64 m1,
			  u32 p0, u32 p1, u32 k0, u32 k1);
/*
 * rbln_model_kern_dpbf16.c: MATMUL of packed bf16 weights on AVX512-BF16
 * dot products, for commands with RBLN_MATMUL_A_BF16, on CPUs where
 * rbln_model_mm_a_bf16_ok()
 */
void rbln_model_mm_dpbf16(const struct rbln_model_mm *mm, u64 m0, u64 m1,
			  u32 p0, u32 p1, u32 k0, u32 k1);
/*
 * Fewest rows of a MATMUL that runs rbln_model_mm_dpbf16(). Measured on
 * the 2-core Zen 5 (2 threads, 2048x8192 bf16, GFLOP/s, float32 kernels
 * vs dot products, alternating in one run): with the weights in 512 MiB
 * (from memory, 34 GB/s that hour) M=1 34.0 vs 33.3, M=2 68.2 vs 67.2,
 * M=4 131 vs 130, M=6 139 vs 195, M=8 150 vs 256; with one 32 MiB matrix
 * (partly in the host's L3, as when memory is faster) M=1 75-85 vs 83-103,
 * M=2 105 vs 132, M=3 133 vs 221, M=4 137 vs 189. From 2 rows the dot
 * products are never slower; one row keeps the float32 GEMV, which the
 * bf16 and float32 runs then share.
 */
#define RBLN_MODEL_A_BF16_MIN_ROWS	2U
/* rbln_model_kern_avx512.c: the AVX-512 variant's ATTENTION */
int rbln_model_attn_part_avx512(const struct rbln_model_attn *at,
				const struct rbln_model_seq *seq, u32 k0,
				u32 k1, u64 part, u32 i0, u32 i1, u64 j0,
				u64 j1);
void rbln_model_attn_merge_avx512(const struct rbln_model_attn *at,
				  const struct rbln_model_seq *seq, u32 i0,
				  u32 i1);
#if !defined(__KERNEL__)
extern const struct rbln_model_kernels rbln_model_kernels_amx;
extern const struct rbln_model_kernels rbln_model_kernels_avx512_amx;
/*
 * Fewest rows of a MATMUL that avx512+amx runs on the tiles. Measured on
 * the 16-core Sapphire Rapids (Documentation/benchmark-log.md, 2026-11-25,
 * bf16 2048x8192 / 8192x2048, GFLOP/s, avx512 vs tiles): M=8 539/523 vs
 * 437/374, M=16 743/623 vs 744/664 (a tie), M=32 839/712 vs 1150/916.
 */
#define RBLN_MODEL_AMX_MIN_ROWS	32U
/* rbln_model_kern_amx.c: the AMX variants' MATMUL (emulated home only) */
void rbln_model_mm_amx(const struct rbln_model_mm *mm, u64 m0, u64 m1,
		       u32 p0, u32 p1, u32 k0, u32 k1);
/*
 * rbln_model_kern_amx_decode.c: a decode batch's MATMUL with bf16
 * activations on the tiles (emulated home only)
 */
void rbln_model_mm_amx_decode(const struct rbln_model_mm *mm, u64 m0, u64 m1,
			      u32 p0, u32 p1, u32 k0, u32 k1);
/*
 * Fewest rows of a MATMUL with RBLN_MATMUL_A_BF16 that the AMX variants
 * run on rbln_model_mm_amx_decode(). Measured on the 16-core Sapphire
 * Rapids (2048 x 8192 bf16 from memory, avx512 vs tiles): M=1 114 vs
 * 98 GB/s, M=8 662 vs 772 GFLOP/s, M=16 676 vs 1527.
 */
#define RBLN_MODEL_AMX_DECODE_MIN_ROWS	8U
#endif
#endif

/* rbln_model_cpu.c */
const struct rbln_model_kernels *rbln_model_kernels(void);
u32 rbln_model_prefetch_bytes(u32 streams, u32 rows);

/* rbln_model_exec_par.c: pieces of one command spread over the engines */
struct rbln_model_par;
/**
 * typedef rbln_model_piece_fn - run piece @piece of a command
 * @par: the command's state (its @ctx is the op's own)
 * @piece: which piece, below &rbln_model_par.pieces
 *
 * Runs outside any FPU bracket: it opens its own around kernel calls.
 *
 * Return: 0, or a negative RBLN_E* error that stops the command.
 */
typedef int (*rbln_model_piece_fn)(struct rbln_model_par *par, u64 piece);

/**
 * struct rbln_model_par - a command cut into pieces the engines claim
 * @env: the home's services
 * @kern: the CPU variant's kernels
 * @fn: runs one piece
 * @ctx: the op's own state
 * @pieces: number of pieces
 * @next: next unclaimed piece (atomic)
 * @stop: set when a piece failed or the job was cancelled (atomic)
 * @err: the first error
 */
struct rbln_model_par {
	const struct rbln_model_env *env;
	const struct rbln_model_kernels *kern;
	rbln_model_piece_fn fn;
	void *ctx;
	u64 pieces;
	u64 next;
	u32 stop;
	int err;
};

int rbln_model_par_run(struct rbln_model_par *par, u64 min_pieces_per_part);
bool rbln_model_par_stopped(struct rbln_model_par *par);

/* rbln_model_exec_mm.c, rbln_model_exec_attn.c, rbln_model_exec_nn.c */
int rbln_model_exec_matmul(const struct rbln_isa_matmul *c,
			   const struct rbln_model_bo *bos,
			   const struct rbln_model_env *env);
int rbln_model_exec_attention(const struct rbln_isa_attention *c,
			      const struct rbln_model_bo *bos,
			      const struct rbln_model_env *env);
int rbln_model_exec_embed(const struct rbln_isa_embed *c,
			  const struct rbln_model_bo *bos,
			  const struct rbln_model_env *env);
int rbln_model_exec_rmsnorm(const struct rbln_isa_rmsnorm *c,
			    const struct rbln_model_bo *bos,
			    const struct rbln_model_env *env);
int rbln_model_exec_rope(const struct rbln_isa_rope *c,
			 const struct rbln_model_bo *bos,
			 const struct rbln_model_env *env);
int rbln_model_exec_swiglu(const struct rbln_isa_swiglu *c,
			   const struct rbln_model_bo *bos,
			   const struct rbln_model_env *env);
int rbln_model_exec_kv_write(const struct rbln_isa_kv_write *c,
			     const struct rbln_model_bo *bos,
			     const struct rbln_model_env *env);
int rbln_model_exec_argmax(const struct rbln_isa_argmax *c,
			   const struct rbln_model_bo *bos,
			   const struct rbln_model_env *env);
int rbln_model_exec_topk(const struct rbln_isa_topk *c,
			 const struct rbln_model_bo *bos,
			 const struct rbln_model_env *env);
u8 *rbln_model_bo_ptr(const struct rbln_model_bo *bos,
		      const struct rbln_isa_operand *op);

#endif /* RBLN_MODEL_INTERNAL_H */
