/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * rbln_model_kern_amx.h - the AMX-BF16 tile primitives that the tile
 * MATMULs share (emulated home only): the tile configuration, tile loads,
 * stores and dot products, a packed bf16 panel's k blocks in the tiles'
 * pair layout, and C tiles to and from the output.
 *
 * rbln_model_kern_amx.c runs prompts (float32 activations in three bf16
 * parts), rbln_model_kern_amx_decode.c decode batches with bf16
 * activations (one part). Included by those two files only.
 */

#ifndef RBLN_MODEL_KERN_AMX_H
#define RBLN_MODEL_KERN_AMX_H

#include "rbln_model_internal.h"

#if defined(__KERNEL__)
#error "the AMX variants are for the emulated home only"
#endif

#if defined(__x86_64__)

#define RBLN_AMX_ATTR	__attribute__((__target__("avx512f,avx512bw,avx2,fma")))
#define RBLN_AMX_KB	32U	/* k per tile block: 16 pairs of bf16 */
#define RBLN_AMX_ROWS	16U	/* rows of a tile */

#define rbln_amx_vu	u32 __attribute__((vector_size(64)))
#define rbln_amx_vf	float __attribute__((vector_size(64)))
#define rbln_amx_vi	int __attribute__((vector_size(64)))
#define rbln_amx_vh	u16 __attribute__((vector_size(32)))
#define rbln_amx_vw	u16 __attribute__((vector_size(64)))
#define RBLN_AMX_ALIGNED	RBLN_OS_ATTR(aligned(64))

/**
 * struct rbln_amx_cfg - the LDTILECFG operand (palette 1)
 * @palette: 1
 * @start_row: 0
 * @reserved: zero
 * @colsb: bytes per row of each tile
 * @rows: rows of each tile
 */
struct rbln_amx_cfg {
	u8 palette;
	u8 start_row;
	u8 reserved[14];
	u16 colsb[16];
	u8 rows[16];
} RBLN_AMX_ALIGNED;

/*
 * Every tile 64 bytes wide: those in @b_tiles (a mask) 16 rows (B blocks,
 * 16 k pairs), the others @rows rows (C tiles and A blocks; fewer than 16
 * rows, a decode batch, make the tile loads and dot products shorter).
 */
static inline void rbln_amx_config_tiles(u32 rows, u32 b_tiles)
{
	struct rbln_amx_cfg cfg;
	u32 t;

	memset(&cfg, 0, sizeof(cfg));
	cfg.palette = 1;
	for (t = 0; t < 8; t++) {
		cfg.colsb[t] = 64;
		cfg.rows[t] = b_tiles & (1U << t) ? RBLN_AMX_KB / 2 : rows;
	}
	__asm__ volatile("ldtilecfg %0" : : "m"(cfg));
}

/*
 * tmm0..2: C tiles of @rows rows; tmm3..5: B blocks (16 k pairs);
 * tmm6, tmm7: A parts of @rows rows.
 */
static inline void rbln_amx_config(u32 rows)
{
	rbln_amx_config_tiles(rows, 0x38);
}

/*
 * The tile instructions name their registers in the instruction, so the
 * C tile helpers have one case per C tile (tmm0-3): a jump.
 */
static inline RBLN_OS_INLINE void rbln_amx_zero(u32 t)
{
	switch (t) {
	case 0:
		__asm__ volatile("tilezero %%tmm0" : : : "memory");
		break;
	case 1:
		__asm__ volatile("tilezero %%tmm1" : : : "memory");
		break;
	case 2:
		__asm__ volatile("tilezero %%tmm2" : : : "memory");
		break;
	default:
		__asm__ volatile("tilezero %%tmm3" : : : "memory");
		break;
	}
}

/* C tile t (0-3) from rows @stride bytes apart at @p. */
static inline RBLN_OS_INLINE void rbln_amx_load(u32 t, const void *p,
						u64 stride)
{
	switch (t) {
	case 0:
		__asm__ volatile("tileloadd (%0,%1,1), %%tmm0"
				 : : "r"(p), "r"(stride) : "memory");
		break;
	case 1:
		__asm__ volatile("tileloadd (%0,%1,1), %%tmm1"
				 : : "r"(p), "r"(stride) : "memory");
		break;
	case 2:
		__asm__ volatile("tileloadd (%0,%1,1), %%tmm2"
				 : : "r"(p), "r"(stride) : "memory");
		break;
	default:
		__asm__ volatile("tileloadd (%0,%1,1), %%tmm3"
				 : : "r"(p), "r"(stride) : "memory");
		break;
	}
}

/* C tile t (0-3) to rows @stride bytes apart at @p. */
static inline RBLN_OS_INLINE void rbln_amx_store(u32 t, void *p, u64 stride)
{
	switch (t) {
	case 0:
		__asm__ volatile("tilestored %%tmm0, (%0,%1,1)"
				 : : "r"(p), "r"(stride) : "memory");
		break;
	case 1:
		__asm__ volatile("tilestored %%tmm1, (%0,%1,1)"
				 : : "r"(p), "r"(stride) : "memory");
		break;
	case 2:
		__asm__ volatile("tilestored %%tmm2, (%0,%1,1)"
				 : : "r"(p), "r"(stride) : "memory");
		break;
	default:
		__asm__ volatile("tilestored %%tmm3, (%0,%1,1)"
				 : : "r"(p), "r"(stride) : "memory");
		break;
	}
}

/* C tile tmm@c += A part tmm@a . B block tmm@b (registers named in the code). */
#define RBLN_AMX_DP(c, a, b) \
	({ \
		__asm__ volatile("tdpbf16ps %%tmm" #b ", %%tmm" #a \
				 ", %%tmm" #c : : : "memory"); \
	})

/* Tile tmm@t from rows @stride bytes apart at @p. */
#define RBLN_AMX_LOAD(t, p, stride) \
	({ \
		__asm__ volatile("tileloadd (%0,%1,1), %%tmm" #t \
				 : : "r"(p), "r"((u64)(stride)) : "memory"); \
	})

/*
 * One k block of a packed bf16 panel (row k holds column i in the low
 * half of word i and column i + 8 in its high half, rbln_isa.h) into the
 * B tile layout: row kk, column n holds k = 2kk in its low half and
 * 2kk + 1 in its high half. k steps at or past @kc are zero.
 */
static inline RBLN_AMX_ATTR void
rbln_amx_pack_b(const u8 *panel, u32 kc, u32 pf, u32 *t)
{
	u8 tail[RBLN_AMX_KB * RBLN_ISA_PACK_COLS * 2];
	rbln_amx_vw v;
	u32 kk;

	/* Rows 2kk and 2kk + 1 are 64 consecutive bytes: one permute. */
	if (kc < RBLN_AMX_KB) {
		memset(tail, 0, sizeof(tail));
		memcpy(tail, panel, (u64)kc * RBLN_ISA_PACK_COLS * 2);
		panel = tail;
	}
#pragma GCC unroll 4
	for (kk = 0; kk < RBLN_AMX_KB / 2; kk++) {
		/* Streaming weights (few rows): one line @pf bytes ahead. */
		if (pf)
			__builtin_prefetch(panel + kk * 64 + pf);
		memcpy(&v, panel + kk * 64, sizeof(v));
		v = __builtin_shufflevector(v, v,
					    0, 16, 2, 18, 4, 20, 6, 22,
					    8, 24, 10, 26, 12, 28, 14, 30,
					    1, 17, 3, 19, 5, 21, 7, 23,
					    9, 25, 11, 27, 13, 29, 15, 31);
		memcpy(t + kk * 16, &v, sizeof(v));
	}
}

static inline void rbln_amx_c_get(float *t, const float *c, u64 ldc,
				  u32 rows, u32 cols)
{
	u32 r;

	memset(t, 0, RBLN_AMX_ROWS * 64);
	for (r = 0; r < rows; r++)
		memcpy(t + r * 16, c + r * ldc, cols * 4);
}

static inline void rbln_amx_c_put(const float *t, float *c, u64 ldc,
				  u32 rows, u32 cols)
{
	u32 r;

	for (r = 0; r < rows; r++)
		memcpy(c + r * ldc, t + r * 16, cols * 4);
}

/**
 * struct rbln_amx_out - where one call's C tiles go
 * @c: output row m0 at the panel's first column
 * @ldc: floats between output rows
 * @nrows: rows of the call
 * @cfg_rows: rows the tiles hold
 * @cols: valid columns of the panel
 * @full: a whole 16-column panel
 */
struct rbln_amx_out {
	float *c;
	u64 ldc;
	u32 nrows;
	u32 cfg_rows;
	u32 cols;
	bool full;
};

/* Rows of row tile @rt. */
static inline u32 rbln_amx_rows_of(const struct rbln_amx_out *o, u32 rt)
{
	u32 left = o->nrows - rt * RBLN_AMX_ROWS;

	return left < RBLN_AMX_ROWS ? left : RBLN_AMX_ROWS;
}

/* Whether row tile @rt loads and stores in place (else through a buffer). */
static inline bool rbln_amx_direct(const struct rbln_amx_out *o, u32 rt)
{
	return o->full && rbln_amx_rows_of(o, rt) == o->cfg_rows;
}

/* The output of panel @p for the rows from @m0. */
static inline void rbln_amx_out_panel(struct rbln_amx_out *o,
				      const struct rbln_model_mm *mm, u64 m0,
				      u32 p, u32 cfg_rows)
{
	o->cols = mm->n - p * RBLN_ISA_PACK_COLS;
	o->full = o->cols >= RBLN_ISA_PACK_COLS;
	if (o->full)
		o->cols = RBLN_ISA_PACK_COLS;
	o->c = (float *)mm->c + m0 * o->ldc + p * RBLN_ISA_PACK_COLS;
	o->cfg_rows = cfg_rows;
}

/* C tile @t from row tile @rt of the output, or zero. */
static inline void rbln_amx_c_in(const struct rbln_amx_out *o, u32 t,
				 u32 rt, bool zero, float *buf)
{
	float *c = o->c + (u64)rt * RBLN_AMX_ROWS * o->ldc;

	if (zero) {
		rbln_amx_zero(t);
	} else if (rbln_amx_direct(o, rt)) {
		rbln_amx_load(t, c, o->ldc * 4);
	} else {
		rbln_amx_c_get(buf, c, o->ldc, rbln_amx_rows_of(o, rt),
			       o->cols);
		rbln_amx_load(t, buf, 64);
	}
}

/* C tile @t to row tile @rt of the output. */
static inline void rbln_amx_c_out(const struct rbln_amx_out *o, u32 t,
				  u32 rt, float *buf)
{
	float *c = o->c + (u64)rt * RBLN_AMX_ROWS * o->ldc;

	if (rbln_amx_direct(o, rt)) {
		rbln_amx_store(t, c, o->ldc * 4);
	} else {
		rbln_amx_store(t, buf, 64);
		rbln_amx_c_put(buf, c, o->ldc, rbln_amx_rows_of(o, rt),
			       o->cols);
	}
}

#endif /* __x86_64__ */

#endif
