/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * rbln_model_kern_mm.h - MATMUL kernels, compiled once per CPU variant
 * (included by rbln_model_kern_avx512.c, rbln_model_kern_avx2.c and
 * rbln_model_kern_base.c, which define the RBLN_K_* macros and
 * rbln_k_i8_load(), the widening of RBLN_K_W int8 weights to float32; see
 * rbln_model_kern_math.h).
 *
 * Loops over rows and vectors of a tile carry "#pragma GCC unroll" (GCC
 * and clang): unrolled, the accumulators live in registers; as loops, in
 * memory.
 *
 * Every output element is one chain of multiply-adds over k in increasing
 * order, starting from zero (or from the old output when accumulating),
 * whatever the tiling: the row block, the panel, the engine or the k block
 * an element is computed in changes nothing, because a k block ends by
 * storing the running sums (exact) and the next one continues from them.
 * So results are the same bits for any M, any split over engines and both
 * weight layouts, and a row of a batch equals that row alone.
 *
 * The register tile is RBLN_K_MR rows by one 16-column panel: 6 x 16 in
 * the AVX2 variant, twelve 8-lane accumulators, so that the two FMA units
 * always have independent work; per k it loads one panel row (32 bytes of
 * bfloat16), widens it with a shift and a mask, and broadcasts RBLN_K_MR
 * activations. The packed layout exists so this loop reads the weights
 * front to back with no gather. One activation row (M = 1) is a
 * bandwidth-bound GEMV: it runs RBLN_K_GP panels side by side, to keep
 * enough independent chains in flight to saturate memory. A variant that
 * defines RBLN_K_WIDE_ROWS (avx512) runs a decode batch of 2 to 16 rows
 * the same way: tiles of at most RBLN_K_WIDE_ROWS rows by
 * RBLN_K_WIDE_PANELS() panels side by side (rbln_k_wide()).
 *
 * int8 weights (RBLN_DTYPE_I8) are widened to float32 and multiplied by
 * their column's scale in the panel-row load (one rounding, the same in
 * every variant), with the panel's 16 scales loaded once per tile or
 * GEMV: the multiply-add chain over k is then that of float32 weights
 * equal to the dequantised ones, and k blocks continue exactly as above.
 */

#define RBLN_K_NV	(RBLN_ISA_PACK_COLS / RBLN_K_W)
/*
 * Weights that stream from memory (the GEMV's, and a tile's when the
 * product has few rows: &rbln_model_mm.prefetch) are prefetched
 * rbln_model_prefetch_bytes() ahead, a distance that depends on the CPU's
 * own prefetchers (see there).
 */
#define RBLN_K_BF16_HI	0xffff0000U

/**
 * rbln_k_panel_scales() - the 16 scales of a panel of int8 weights
 * @sc: the panel's 16 float32 scales (any alignment), NULL for other types
 * @dtype: the panel's type, a constant where this is inlined
 * @sv: the scales as RBLN_K_NV vectors (zero for other types)
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(panel_scales)(const u8 *sc, u32 dtype, RBLN_K_VF *sv)
{
	u32 h;

#pragma GCC unroll 16
	for (h = 0; h < RBLN_K_NV; h++) {
		if (dtype == RBLN_DTYPE_I8)
			memcpy(&sv[h], sc + h * sizeof(sv[h]), sizeof(sv[h]));
		else
			sv[h] = RBLN_K(zero)();
	}
}

/**
 * rbln_k_panel_row() - widen one 16-column row of a packed panel
 * @b: the 16 elements (any alignment)
 * @dtype: their type, a constant where this is inlined
 * @sv: the panel's scales (rbln_k_panel_scales()), used for int8 only
 * @v: the 16 floats, as RBLN_K_NV vectors of consecutive columns
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(panel_row)(const u8 *b, u32 dtype, const RBLN_K_VF *sv, RBLN_K_VF *v)
{
	u32 h;

	if (dtype == RBLN_DTYPE_I8) {
		/* f32(w) * scale: exact widening, then one rounding. */
#pragma GCC unroll 16
		for (h = 0; h < RBLN_K_NV; h++)
			v[h] = RBLN_K(i8_load)(b + h * RBLN_K_W) * sv[h];
	} else if (dtype == RBLN_DTYPE_F32) {
#pragma GCC unroll 16
		for (h = 0; h < RBLN_K_NV; h++)
			memcpy(&v[h], b + h * sizeof(*v), sizeof(*v));
	} else if (dtype == RBLN_DTYPE_BF16) {
#if RBLN_K_W == RBLN_ISA_PACK_COLS
		/*
		 * One vector for the whole row: columns 0-7 from the low
		 * halves of the eight words, 8-15 from the high halves,
		 * joined in registers (two stores and a wider load would
		 * stall store forwarding on every k).
		 */
		u32 w8 __attribute__((vector_size(32)));

		memcpy(&w8, b, sizeof(w8));
		v[0] = (RBLN_K_VF)__builtin_shufflevector(w8 << 16,
							  w8 & RBLN_K_BF16_HI,
							  0, 1, 2, 3, 4, 5, 6, 7,
							  8, 9, 10, 11, 12, 13,
							  14, 15);
#else
		RBLN_K_VU raw;

		/* Word i holds columns i and i + 8 (rbln_isa.h). */
#pragma GCC unroll 16
		for (h = 0; h < RBLN_K_NV / 2; h++) {
			memcpy(&raw, b + h * sizeof(raw), sizeof(raw));
			v[h] = (RBLN_K_VF)(raw << 16);
			v[h + RBLN_K_NV / 2] = (RBLN_K_VF)(raw & RBLN_K_BF16_HI);
		}
#endif
	} else {
#pragma GCC unroll 16
		for (h = 0; h < RBLN_K_NV; h++)
			v[h] = RBLN_K(f16_load)(b + h * RBLN_K_W * 2);
	}
}

/**
 * rbln_k_tile() - C[mr x 16] (+)= A[mr x kc] * panel[kc x 16]
 * @a: first activation row at the first k
 * @lda: floats between activation rows
 * @b: the panel's row at the first k (16 elements per k)
 * @dtype: the panel's element type
 * @sc: the panel's 16 scales for int8 weights, else NULL
 * @c: first output row at the panel's first column (16 valid columns)
 * @ldc: floats between output rows
 * @mr: rows, 1 to RBLN_K_MR (at most 12); a constant where this is inlined
 * @kc: k steps, at least 1
 * @zero: start from zero instead of from @c
 * @pf: bytes ahead to prefetch the panel, 0 for none
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(tile)(const float *a, u64 lda, const u8 *b, u32 dtype, const u8 *sc,
	     float *c, u64 ldc, u32 mr, u32 kc, bool zero, u32 pf)
{
	RBLN_K_VF acc[RBLN_K_MR][RBLN_K_NV];
	RBLN_K_VF bv[RBLN_K_NV];
	RBLN_K_VF sv[RBLN_K_NV];
	RBLN_K_VF av;
	u32 es = rbln_model_dtype_size(dtype);
	u32 r, v, k;

	RBLN_K(panel_scales)(sc, dtype, sv);
#pragma GCC unroll 16
	for (r = 0; r < mr; r++)
#pragma GCC unroll 16
		for (v = 0; v < RBLN_K_NV; v++) {
			if (zero)
				acc[r][v] = RBLN_K(zero)();
			else
				memcpy(&acc[r][v], c + r * ldc + v * RBLN_K_W,
				       sizeof(acc[r][v]));
		}
	for (k = 0; k < kc; k++) {
		/* A few rows stream their panel from memory. */
		if (pf && !((k * RBLN_ISA_PACK_COLS * es) & 63))
			__builtin_prefetch(b + (u64)k * RBLN_ISA_PACK_COLS * es +
					   pf);
		RBLN_K(panel_row)(b + (u64)k * RBLN_ISA_PACK_COLS * es, dtype,
				  sv, bv);
#pragma GCC unroll 16
		for (r = 0; r < mr; r++) {
			av = RBLN_K_SPLAT(a[r * lda + k]);
#pragma GCC unroll 16
			for (v = 0; v < RBLN_K_NV; v++)
				RBLN_K_MADD(acc[r][v], av, bv[v]);
		}
	}
#pragma GCC unroll 16
	for (r = 0; r < mr; r++)
#pragma GCC unroll 16
		for (v = 0; v < RBLN_K_NV; v++)
			memcpy(c + r * ldc + v * RBLN_K_W, &acc[r][v],
			       sizeof(acc[r][v]));
}

/* rbln_k_tile() with the dtype a constant: one instance per type. */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(tile_dt)(const float *a, u64 lda, const u8 *b, u32 dtype,
		const u8 *sc, float *c, u64 ldc, u32 mr, u32 kc, bool zero,
		u32 pf)
{
	if (dtype == RBLN_DTYPE_BF16)
		RBLN_K(tile)(a, lda, b, RBLN_DTYPE_BF16, sc, c, ldc, mr, kc,
			     zero, pf);
	else if (dtype == RBLN_DTYPE_I8)
		RBLN_K(tile)(a, lda, b, RBLN_DTYPE_I8, sc, c, ldc, mr, kc,
			     zero, pf);
	else if (dtype == RBLN_DTYPE_F16)
		RBLN_K(tile)(a, lda, b, RBLN_DTYPE_F16, sc, c, ldc, mr, kc,
			     zero, pf);
	else
		RBLN_K(tile)(a, lda, b, RBLN_DTYPE_F32, sc, c, ldc, mr, kc,
			     zero, pf);
}

/**
 * rbln_k_tile_any() - rbln_k_tile() for a run-time row count and dtype
 * @a: as for rbln_k_tile()
 * @lda: as for rbln_k_tile()
 * @b: as for rbln_k_tile()
 * @dtype: as for rbln_k_tile()
 * @sc: as for rbln_k_tile()
 * @c: as for rbln_k_tile()
 * @ldc: as for rbln_k_tile()
 * @mr: 1 to RBLN_K_MR
 * @kc: as for rbln_k_tile()
 * @zero: as for rbln_k_tile()
 * @pf: as for rbln_k_tile()
 *
 * One instance per (row count, dtype), so that the loops over rows and
 * vectors unroll fully and the accumulators stay in registers.
 */
static RBLN_K_ATTR void
RBLN_K(tile_any)(const float *a, u64 lda, const u8 *b, u32 dtype,
		 const u8 *sc, float *c, u64 ldc, u32 mr, u32 kc, bool zero,
		 u32 pf)
{
	switch (mr) {
	case 1:
		RBLN_K(tile_dt)(a, lda, b, dtype, sc, c, ldc, 1, kc,
				zero, pf);
		break;
	case 2:
		RBLN_K(tile_dt)(a, lda, b, dtype, sc, c, ldc, 2, kc,
				zero, pf);
		break;
#if RBLN_K_MR > 3
	case 4:
		RBLN_K(tile_dt)(a, lda, b, dtype, sc, c, ldc, 4, kc,
				zero, pf);
		break;
	case 5:
		RBLN_K(tile_dt)(a, lda, b, dtype, sc, c, ldc, 5, kc,
				zero, pf);
		break;
	case 6:
		RBLN_K(tile_dt)(a, lda, b, dtype, sc, c, ldc, 6, kc,
				zero, pf);
		break;
#endif
#if RBLN_K_MR > 6
	case 7:
		RBLN_K(tile_dt)(a, lda, b, dtype, sc, c, ldc, 7, kc,
				zero, pf);
		break;
	case 8:
		RBLN_K(tile_dt)(a, lda, b, dtype, sc, c, ldc, 8, kc,
				zero, pf);
		break;
	case 9:
		RBLN_K(tile_dt)(a, lda, b, dtype, sc, c, ldc, 9, kc,
				zero, pf);
		break;
	case 10:
		RBLN_K(tile_dt)(a, lda, b, dtype, sc, c, ldc, 10, kc,
				zero, pf);
		break;
	case 11:
		RBLN_K(tile_dt)(a, lda, b, dtype, sc, c, ldc, 11, kc,
				zero, pf);
		break;
	case 12:
		RBLN_K(tile_dt)(a, lda, b, dtype, sc, c, ldc, 12, kc,
				zero, pf);
		break;
#endif
	default:
		RBLN_K(tile_dt)(a, lda, b, dtype, sc, c, ldc, 3, kc,
				zero, pf);
		break;
	}
}

/**
 * rbln_k_tile_edge() - rbln_k_tile_any() for a panel with fewer than 16
 *	valid columns, through a full tile on the stack
 * @a: as for rbln_k_tile()
 * @lda: as for rbln_k_tile()
 * @b: as for rbln_k_tile()
 * @dtype: as for rbln_k_tile()
 * @sc: as for rbln_k_tile()
 * @c: as for rbln_k_tile(), @cols valid columns
 * @ldc: as for rbln_k_tile()
 * @mr: 1 to RBLN_K_MR
 * @kc: as for rbln_k_tile()
 * @zero: as for rbln_k_tile()
 * @cols: valid columns, 1 to 15
 * @pf: as for rbln_k_tile()
 */
static RBLN_K_ATTR void
RBLN_K(tile_edge)(const float *a, u64 lda, const u8 *b, u32 dtype,
		  const u8 *sc, float *c, u64 ldc, u32 mr, u32 kc, bool zero,
		  u32 cols, u32 pf)
{
	float t[RBLN_K_MR][RBLN_ISA_PACK_COLS];
	u32 r;

#pragma GCC unroll 16
	for (r = 0; r < mr; r++) {
		memset(t[r], 0, sizeof(t[r]));
		if (!zero)
			memcpy(t[r], c + r * ldc, cols * sizeof(float));
	}
	RBLN_K(tile_any)(a, lda, b, dtype, sc, &t[0][0], RBLN_ISA_PACK_COLS,
			 mr, kc, zero, pf);
#pragma GCC unroll 16
	for (r = 0; r < mr; r++)
		memcpy(c + r * ldc, t[r], cols * sizeof(float));
}

#if RBLN_K_W == RBLN_ISA_PACK_COLS
/*
 * The GEMV's bf16 rows in lane order: one widening load of the row's 16
 * halves in memory order and a shift, where rbln_k_panel_row() shifts,
 * masks and joins two halves. Lane 2i then holds column i and lane 2i + 1
 * column i + 8 (word i of the row, rbln_isa.h), so the sums are kept in
 * that order and put in column order only when loaded and stored; each
 * lane's multiply-adds are the same, so are the bits.
 */
#define RBLN_K_GEMV_LANES	1

static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(bf16_lanes)(const u8 *b)
{
	RBLN_K_VH h;

	memcpy(&h, b, sizeof(h));
	return (RBLN_K_VF)(RBLN_K(widen16)(h) << 16);
}

static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(to_lanes)(RBLN_K_VF v)
{
	return __builtin_shufflevector(v, v, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12,
				       5, 13, 6, 14, 7, 15);
}

static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(from_lanes)(RBLN_K_VF v)
{
	return __builtin_shufflevector(v, v, 0, 2, 4, 6, 8, 10, 12, 14, 1, 3,
				       5, 7, 9, 11, 13, 15);
}
#else
#define RBLN_K_GEMV_LANES	0

/* Never called: rbln_k_gemv() keeps column order in these variants. */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(bf16_lanes)(const u8 *b)
{
	(void)b;
	return RBLN_K(zero)();
}

static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(to_lanes)(RBLN_K_VF v)
{
	return v;
}

static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(from_lanes)(RBLN_K_VF v)
{
	return v;
}
#endif

/**
 * rbln_k_gemv() - one row times @np full panels
 * @a: the activation row at the first k
 * @b: the first panel's row at the first k
 * @pstride: bytes from one panel to the next
 * @dtype: the panels' element type, a constant where inlined
 * @sc: the first panel's 16 scales for int8 weights (the next panels'
 *	follow), else NULL
 * @c: the output row at the first panel's first column
 * @kc: k steps
 * @zero: start from zero instead of from @c
 * @np: panels, 2 to RBLN_K_GP, a constant where inlined
 *
 * The chains of the @np panels are independent, which hides the FMA
 * latency that one panel's two chains would expose; the loads of the
 * panels are separate sequential streams the prefetchers follow.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(gemv)(const float *a, const u8 *b, u64 pstride, u32 dtype,
	     const u8 *sc, float *c, u32 kc, bool zero, u32 np)
{
	RBLN_K_VF acc[RBLN_K_GP][RBLN_K_NV];
	RBLN_K_VF sv[RBLN_K_GP][RBLN_K_NV];
	RBLN_K_VF bv[RBLN_K_NV];
	RBLN_K_VF av;
	u32 es = rbln_model_dtype_size(dtype);
	u32 pf = rbln_model_prefetch_bytes(np, 1);
	u64 row = RBLN_ISA_PACK_COLS * es;
	bool lanes = RBLN_K_GEMV_LANES && dtype == RBLN_DTYPE_BF16;
	u32 g, v, k;

#pragma GCC unroll 16
	for (g = 0; g < np; g++)
		/* No offset from the NULL of the float types. */
		RBLN_K(panel_scales)(dtype == RBLN_DTYPE_I8 ?
				     sc + g * RBLN_ISA_PACK_COLS * 4 : sc,
				     dtype, sv[g]);
#pragma GCC unroll 16
	for (g = 0; g < np; g++)
#pragma GCC unroll 16
		for (v = 0; v < RBLN_K_NV; v++) {
			if (zero)
				acc[g][v] = RBLN_K(zero)();
			else
				memcpy(&acc[g][v],
				       c + g * RBLN_ISA_PACK_COLS +
				       v * RBLN_K_W, sizeof(acc[g][v]));
			if (lanes)
				acc[g][v] = RBLN_K(to_lanes)(acc[g][v]);
		}
	for (k = 0; k < kc; k++) {
		av = RBLN_K_SPLAT(a[k]);
		/* One prefetch per cache line of each panel's stream. */
		if (pf && !((k * row) & 63))
#pragma GCC unroll 16
			for (g = 0; g < np; g++)
				__builtin_prefetch(b + g * pstride + k * row +
						   pf);
#pragma GCC unroll 16
		for (g = 0; g < np; g++) {
			if (lanes) {
				RBLN_K_MADD(acc[g][0], av,
					    RBLN_K(bf16_lanes)(b + g * pstride +
							       k * row));
				continue;
			}
			RBLN_K(panel_row)(b + g * pstride + k * row, dtype,
					  sv[g], bv);
#pragma GCC unroll 16
			for (v = 0; v < RBLN_K_NV; v++)
				RBLN_K_MADD(acc[g][v], av, bv[v]);
		}
	}
#pragma GCC unroll 16
	for (g = 0; g < np; g++)
#pragma GCC unroll 16
		for (v = 0; v < RBLN_K_NV; v++) {
			if (lanes)
				acc[g][v] = RBLN_K(from_lanes)(acc[g][v]);
			memcpy(c + g * RBLN_ISA_PACK_COLS + v * RBLN_K_W,
			       &acc[g][v], sizeof(acc[g][v]));
		}
}

/* rbln_k_gemv() of @np panels with @dtype made a constant. */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(gemv_dtype)(const float *a, const u8 *b, u64 pstride, u32 dtype,
		   const u8 *sc, float *c, u32 kc, bool zero, u32 np)
{
	if (dtype == RBLN_DTYPE_BF16)
		RBLN_K(gemv)(a, b, pstride, RBLN_DTYPE_BF16, sc, c, kc, zero, np);
	else if (dtype == RBLN_DTYPE_I8)
		RBLN_K(gemv)(a, b, pstride, RBLN_DTYPE_I8, sc, c, kc, zero, np);
	else if (dtype == RBLN_DTYPE_F16)
		RBLN_K(gemv)(a, b, pstride, RBLN_DTYPE_F16, sc, c, kc, zero, np);
	else
		RBLN_K(gemv)(a, b, pstride, RBLN_DTYPE_F32, sc, c, kc, zero, np);
}

static RBLN_K_ATTR void
RBLN_K(gemv_any)(const float *a, const u8 *b, u64 pstride, u32 dtype,
		 const u8 *sc, float *c, u32 kc, bool zero)
{
	RBLN_K(gemv_dtype)(a, b, pstride, dtype, sc, c, kc, zero, RBLN_K_GP);
}

/*
 * rbln_k_gemv() of two panels: a narrow last piece's (two panels at K =
 * 2048, rbln_model_exec_mm.c) two chains, where the tile kernel would run
 * them one chain at a time, each waiting on its multiply-adds' latency.
 * The same sums in the same order: the same bits. Measured with a decode
 * step's 65 products alternating with and without (one process each):
 * the 2-core Zen 5, 5000 rounds, 1.007x in its fast phase (ahead in 1148
 * of 1815) and 1.004x in its slow one; the 16-core Sapphire Rapids, 1500
 * rounds at 16 engines, 1.009x (ahead in 834), 300 at 8, 1.008x.
 */
static RBLN_K_ATTR void
RBLN_K(gemv2_any)(const float *a, const u8 *b, u64 pstride, u32 dtype,
		  const u8 *sc, float *c, u32 kc, bool zero)
{
	RBLN_K(gemv_dtype)(a, b, pstride, dtype, sc, c, kc, zero, 2);
}

#ifdef RBLN_K_WIDE_ROWS
/**
 * rbln_k_wide() - C[mr x 16 gp] (+)= A[mr x kc] * gp panels[kc x 16]
 * @a: first activation row at the first k
 * @lda: floats between activation rows
 * @b: the first panel's row at the first k (16 elements per k)
 * @pstride: bytes from one panel to the next
 * @dtype: the panels' element type, a constant where this is inlined
 * @sc: the first panel's 16 scales for int8 weights (the next panels'
 *	follow), else NULL
 * @c: first output row at the first panel's first column (16 gp valid
 *	columns)
 * @ldc: floats between output rows
 * @mr: rows, 2 to RBLN_K_WIDE_ROWS; a constant where this is inlined
 * @gp: panels side by side, RBLN_K_WIDE_PANELS(@mr), @mr * @gp at most
 *	RBLN_K_WIDE_ACC (the accumulators); a constant where this is inlined
 * @kc: k steps, at least 1
 * @zero: start from zero instead of from @c
 * @pf: bytes ahead to prefetch the panels, 0 for none
 *
 * The tile of a decode batch: rbln_k_tile()'s chains, one per output
 * element over k in the same order, for several panels side by side, so
 * that the weights stream as the GEMV's do and each panel row loaded
 * feeds @mr chains. rbln_k_tile() and rbln_k_gemv() stay as they are
 * rather than becoming this function's one-panel and one-row cases: the
 * generalisation compiles them to other machine code, and the one-row
 * GEMV's speed is what decode B=1 rests on.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(wide)(const float *a, u64 lda, const u8 *b, u64 pstride, u32 dtype,
	     const u8 *sc, float *c, u64 ldc, u32 mr, u32 gp, u32 kc,
	     bool zero, u32 pf)
{
	RBLN_K_VF acc[RBLN_K_WIDE_ACC][RBLN_K_NV] RBLN_OS_UNINIT;
	RBLN_K_VF sv[RBLN_K_GP][RBLN_K_NV];
	RBLN_K_VF bv[RBLN_K_NV];
	RBLN_K_VF av;
	u64 row = RBLN_ISA_PACK_COLS * rbln_model_dtype_size(dtype);
	u32 r, g, v, k;

#pragma GCC unroll 16
	for (g = 0; g < gp; g++)
		/* No offset from the NULL of the float types. */
		RBLN_K(panel_scales)(dtype == RBLN_DTYPE_I8 ?
				     sc + g * RBLN_ISA_PACK_COLS * 4 : sc,
				     dtype, sv[g]);
#pragma GCC unroll 16
	for (r = 0; r < mr; r++)
#pragma GCC unroll 16
		for (g = 0; g < gp; g++)
#pragma GCC unroll 16
			for (v = 0; v < RBLN_K_NV; v++) {
				if (zero)
					acc[r * gp + g][v] = RBLN_K(zero)();
				else
					memcpy(&acc[r * gp + g][v],
					       c + r * ldc +
					       g * RBLN_ISA_PACK_COLS +
					       v * RBLN_K_W,
					       sizeof(acc[r * gp + g][v]));
			}
	for (k = 0; k < kc; k++) {
		/* One prefetch per cache line of each panel's stream. */
		if (pf && !((k * row) & 63))
#pragma GCC unroll 16
			for (g = 0; g < gp; g++)
				__builtin_prefetch(b + g * pstride + k * row +
						   pf);
#pragma GCC unroll 16
		for (g = 0; g < gp; g++) {
			RBLN_K(panel_row)(b + g * pstride + k * row, dtype,
					  sv[g], bv);
#pragma GCC unroll 16
			for (r = 0; r < mr; r++) {
				av = RBLN_K_SPLAT(a[r * lda + k]);
#pragma GCC unroll 16
				for (v = 0; v < RBLN_K_NV; v++)
					RBLN_K_MADD(acc[r * gp + g][v], av,
						    bv[v]);
			}
		}
	}
#pragma GCC unroll 16
	for (r = 0; r < mr; r++)
#pragma GCC unroll 16
		for (g = 0; g < gp; g++)
#pragma GCC unroll 16
			for (v = 0; v < RBLN_K_NV; v++)
				memcpy(c + r * ldc + g * RBLN_ISA_PACK_COLS +
				       v * RBLN_K_W, &acc[r * gp + g][v],
				       sizeof(acc[r * gp + g][v]));
}

/* rbln_k_wide() of @mr rows with the dtype a constant, one per type. */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(wide_dt)(const float *a, u64 lda, const u8 *b, u64 pstride,
		u32 dtype, const u8 *sc, float *c, u64 ldc, u32 mr, u32 kc,
		bool zero, u32 pf)
{
	u32 gp = RBLN_K_WIDE_PANELS(mr);

	if (dtype == RBLN_DTYPE_BF16)
		RBLN_K(wide)(a, lda, b, pstride, RBLN_DTYPE_BF16, sc, c, ldc,
			     mr, gp, kc, zero, pf);
	else if (dtype == RBLN_DTYPE_I8)
		RBLN_K(wide)(a, lda, b, pstride, RBLN_DTYPE_I8, sc, c, ldc,
			     mr, gp, kc, zero, pf);
	else if (dtype == RBLN_DTYPE_F16)
		RBLN_K(wide)(a, lda, b, pstride, RBLN_DTYPE_F16, sc, c, ldc,
			     mr, gp, kc, zero, pf);
	else
		RBLN_K(wide)(a, lda, b, pstride, RBLN_DTYPE_F32, sc, c, ldc,
			     mr, gp, kc, zero, pf);
}

/*
 * rbln_k_wide_any() in three functions of a few instances each, for 2 to
 * 4, 5 and 6, 7 and 8 rows: each instance spills some registers to slots
 * of its own, and one function of all of them passed the kernel's 2 KiB
 * frame limit.
 */
static RBLN_OS_NOINLINE RBLN_K_ATTR void
RBLN_K(wide_few)(const float *a, u64 lda, const u8 *b, u64 pstride,
		 u32 dtype, const u8 *sc, float *c, u64 ldc, u32 mr, u32 kc,
		 bool zero, u32 pf)
{
	if (mr == 2)
		RBLN_K(wide_dt)(a, lda, b, pstride, dtype, sc, c, ldc, 2, kc,
				zero, pf);
	else if (mr == 3)
		RBLN_K(wide_dt)(a, lda, b, pstride, dtype, sc, c, ldc, 3, kc,
				zero, pf);
	else
		RBLN_K(wide_dt)(a, lda, b, pstride, dtype, sc, c, ldc, 4, kc,
				zero, pf);
}

static RBLN_OS_NOINLINE RBLN_K_ATTR void
RBLN_K(wide_six)(const float *a, u64 lda, const u8 *b, u64 pstride,
		 u32 dtype, const u8 *sc, float *c, u64 ldc, u32 mr, u32 kc,
		 bool zero, u32 pf)
{
	if (mr == 5)
		RBLN_K(wide_dt)(a, lda, b, pstride, dtype, sc, c, ldc, 5, kc,
				zero, pf);
	else
		RBLN_K(wide_dt)(a, lda, b, pstride, dtype, sc, c, ldc, 6, kc,
				zero, pf);
}

static RBLN_OS_NOINLINE RBLN_K_ATTR void
RBLN_K(wide_eight)(const float *a, u64 lda, const u8 *b, u64 pstride,
		   u32 dtype, const u8 *sc, float *c, u64 ldc, u32 mr,
		   u32 kc, bool zero, u32 pf)
{
	if (mr == 7)
		RBLN_K(wide_dt)(a, lda, b, pstride, dtype, sc, c, ldc, 7, kc,
				zero, pf);
	else
		RBLN_K(wide_dt)(a, lda, b, pstride, dtype, sc, c, ldc, 8, kc,
				zero, pf);
}

/**
 * rbln_k_wide_any() - rbln_k_wide() for a run-time row count and dtype
 * @a: as for rbln_k_wide()
 * @lda: as for rbln_k_wide()
 * @b: as for rbln_k_wide()
 * @pstride: as for rbln_k_wide()
 * @dtype: as for rbln_k_wide()
 * @sc: as for rbln_k_wide()
 * @c: as for rbln_k_wide()
 * @ldc: as for rbln_k_wide()
 * @mr: 2 to RBLN_K_WIDE_ROWS
 * @kc: as for rbln_k_wide()
 * @zero: as for rbln_k_wide()
 *
 * One instance per (row count, dtype), as rbln_k_tile_any(), so that
 * the loops over rows, panels and vectors unroll fully and the
 * accumulators stay in registers.
 */
static RBLN_K_ATTR void
RBLN_K(wide_any)(const float *a, u64 lda, const u8 *b, u64 pstride,
		 u32 dtype, const u8 *sc, float *c, u64 ldc, u32 mr, u32 kc,
		 bool zero)
{
	u32 pf = rbln_model_prefetch_bytes(RBLN_K_WIDE_PANELS(mr), mr);

	if (mr <= 4)
		RBLN_K(wide_few)(a, lda, b, pstride, dtype, sc, c, ldc, mr, kc,
				 zero, pf);
	else if (mr <= 6)
		RBLN_K(wide_six)(a, lda, b, pstride, dtype, sc, c, ldc, mr, kc,
				 zero, pf);
	else
		RBLN_K(wide_eight)(a, lda, b, pstride, dtype, sc, c, ldc, mr,
				   kc, zero, pf);
}

/*
 * Rows of the next wide tile when @left of a decode batch remain: as
 * rbln_k_rows(), in tiles of at most RBLN_K_WIDE_ROWS.
 */
static inline u32 RBLN_K(wide_rows)(u64 left)
{
	u64 tiles = (left + RBLN_K_WIDE_ROWS - 1) / RBLN_K_WIDE_ROWS;

	return (u32)((left + tiles - 1) / tiles);
}
#endif

/* The 16 scales of panel @p of int8 weights, NULL for the float types. */
static inline const u8 *RBLN_K(scales_of)(const struct rbln_model_mm *mm,
					  u32 p)
{
	return mm->scales ? mm->scales + (u64)p * RBLN_ISA_PACK_COLS * 4 :
	       NULL;
}

/*
 * Rows of the next tile when @left remain: the same number of tiles as
 * full RBLN_K_MR-row tiles would take, of equal height, so no tile is
 * left with one or two rows, too few chains to cover the FMA latency.
 */
static inline u32 RBLN_K(rows)(u64 left)
{
	u64 tiles = (left + RBLN_K_MR - 1) / RBLN_K_MR;

	return (u32)((left + tiles - 1) / tiles);
}

/**
 * rbln_k_mm_packed() - MATMUL on packed weights, one block of work
 * @mm: the command
 * @m0: first row
 * @m1: one past the last row
 * @p0: first panel
 * @p1: one past the last panel
 * @k0: first k
 * @k1: one past the last k
 *
 * Rows outer, panels inner: the few activation rows of a tile stay in L1
 * across the panels, the panels' k block stays in L2 across row tiles.
 */
static RBLN_K_ATTR void
RBLN_K(mm_packed)(const struct rbln_model_mm *mm, u64 m0, u64 m1, u32 p0,
		  u32 p1, u32 k0, u32 k1)
{
	u32 es = rbln_model_dtype_size(mm->dtype);
	u64 pstride = mm->pstride;
	const u8 *w = mm->w + (u64)k0 * RBLN_ISA_PACK_COLS * es;
	const float *a = (const float *)mm->a;
	float *c = (float *)mm->c;
	bool zero = k0 == 0 && !mm->accumulate;
	u32 full = mm->n / RBLN_ISA_PACK_COLS;
	u32 kc = k1 - k0;
	u32 mr, p, cols;
	u64 m;

	for (m = m0; m < m1; m += mr) {
		mr = RBLN_K(rows)(m1 - m);
		p = p0;
		/* One row, whole panels: the streaming GEMV. */
		for (; mr == 1 && p + RBLN_K_GP <= p1 && p + RBLN_K_GP <= full;
		     p += RBLN_K_GP)
			RBLN_K(gemv_any)(a + m * mm->k + k0, w + p * pstride,
					 pstride, mm->dtype,
					 RBLN_K(scales_of)(mm, p),
					 c + m * mm->n + p * RBLN_ISA_PACK_COLS,
					 kc, zero);
		/* A narrow piece's pair of panels (or the pair left over). */
		for (; mr == 1 && RBLN_K_GP > 2 && p + 2 <= p1 && p + 2 <= full; p += 2)
			RBLN_K(gemv2_any)(a + m * mm->k + k0, w + p * pstride,
					  pstride, mm->dtype,
					  RBLN_K(scales_of)(mm, p),
					  c + m * mm->n +
					  p * RBLN_ISA_PACK_COLS, kc, zero);
#ifdef RBLN_K_WIDE_ROWS
		/*
		 * 2 to 16 rows whose weights stream (a decode batch): wide
		 * tiles of their own height; one row keeps the GEMV above.
		 */
		if (mm->prefetch && mr > 1) {
			mr = RBLN_K(wide_rows)(m1 - m);
			for (; p + RBLN_K_WIDE_PANELS(mr) <= p1 &&
			     p + RBLN_K_WIDE_PANELS(mr) <= full;
			     p += RBLN_K_WIDE_PANELS(mr))
				RBLN_K(wide_any)(a + m * mm->k + k0, mm->k,
						 w + p * pstride, pstride,
						 mm->dtype,
						 RBLN_K(scales_of)(mm, p),
						 c + m * mm->n +
						 p * RBLN_ISA_PACK_COLS,
						 mm->n, mr, kc, zero);
		}
#endif
		for (; p < p1; p++) {
			cols = mm->n - p * RBLN_ISA_PACK_COLS;
			if (cols >= RBLN_ISA_PACK_COLS)
				RBLN_K(tile_any)(a + m * mm->k + k0, mm->k,
						 w + p * pstride, mm->dtype,
						 RBLN_K(scales_of)(mm, p),
						 c + m * mm->n +
						 p * RBLN_ISA_PACK_COLS,
						 mm->n, mr, kc, zero, mm->prefetch);
			else
				RBLN_K(tile_edge)(a + m * mm->k + k0, mm->k,
						  w + p * pstride, mm->dtype,
						  RBLN_K(scales_of)(mm, p),
						  c + m * mm->n +
						  p * RBLN_ISA_PACK_COLS,
						  mm->n, mr, kc, zero, cols,
						  mm->prefetch);
		}
	}
}

/*
 * Row-major weights are packed on the fly, RBLN_K_RM_KB k steps of one
 * panel at a time, into a 1 KiB tile on the stack (the kernel stack is
 * small), then run through the same tile kernel: the results are the same
 * bits as with packed weights.
 */
#define RBLN_K_RM_BYTES	1024U

/**
 * rbln_k_pack_rm() - pack k steps [k, k + kb) of panel @p of row-major
 *	weights into the packed layout
 * @mm: the command (RBLN_LAYOUT_ROWMAJOR)
 * @p: the panel
 * @k: first k step
 * @kb: k steps
 * @t: the packed tile (kb rows of 16 elements)
 */
static RBLN_K_ATTR void
RBLN_K(pack_rm)(const struct rbln_model_mm *mm, u32 p, u32 k, u32 kb, u8 *t)
{
	u32 es = rbln_model_dtype_size(mm->dtype);
	u32 j, kk, n, slot;

	memset(t, 0, (u64)kb * RBLN_ISA_PACK_COLS * es);
	for (j = 0; j < RBLN_ISA_PACK_COLS; j++) {
		n = p * RBLN_ISA_PACK_COLS + j;
		if (n >= mm->n)
			break;
		slot = j;
		if (mm->dtype == RBLN_DTYPE_BF16)
			slot = j < 8 ? 2 * j : 2 * (j - 8) + 1;
		for (kk = 0; kk < kb; kk++)
			memcpy(t + ((u64)kk * RBLN_ISA_PACK_COLS + slot) * es,
			       mm->w + ((u64)n * mm->k + k + kk) * es, es);
	}
}

/**
 * rbln_k_mm_rowmajor() - MATMUL on row-major weights, one block of work
 * @mm: the command
 * @m0: first row
 * @m1: one past the last row
 * @p0: first panel
 * @p1: one past the last panel
 * @k0: first k
 * @k1: one past the last k
 */
static RBLN_K_ATTR void
RBLN_K(mm_rowmajor)(const struct rbln_model_mm *mm, u64 m0, u64 m1, u32 p0,
		    u32 p1, u32 k0, u32 k1)
{
	u8 t[RBLN_K_RM_BYTES];
	u32 es = rbln_model_dtype_size(mm->dtype);
	u32 kbmax = RBLN_K_RM_BYTES / (RBLN_ISA_PACK_COLS * es);
	const float *a = (const float *)mm->a;
	float *c = (float *)mm->c;
	u32 p, k, kb, mr, cols;
	bool zero;
	u64 m;

	for (p = p0; p < p1; p++) {
		cols = mm->n - p * RBLN_ISA_PACK_COLS;
		for (k = k0; k < k1; k += kb) {
			kb = k1 - k < kbmax ? k1 - k : kbmax;
			zero = k == 0 && !mm->accumulate;
			RBLN_K(pack_rm)(mm, p, k, kb, t);
			for (m = m0; m < m1; m += mr) {
				mr = RBLN_K(rows)(m1 - m);
				if (cols >= RBLN_ISA_PACK_COLS)
					RBLN_K(tile_any)(a + m * mm->k + k,
							 mm->k, t, mm->dtype,
							 RBLN_K(scales_of)(mm,
									   p),
							 c + m * mm->n +
							 p * RBLN_ISA_PACK_COLS,
							 mm->n, mr, kb, zero, 0);
				else
					RBLN_K(tile_edge)(a + m * mm->k + k,
							  mm->k, t, mm->dtype,
							  RBLN_K(scales_of)(mm,
									    p),
							  c + m * mm->n +
							  p * RBLN_ISA_PACK_COLS,
							  mm->n, mr, kb, zero,
							  cols, 0);
			}
		}
	}
}

static RBLN_K_ATTR void
RBLN_K(mm)(const struct rbln_model_mm *mm, u64 m0, u64 m1, u32 p0, u32 p1,
	   u32 k0, u32 k1)
{
	if (mm->packed)
		RBLN_K(mm_packed)(mm, m0, m1, p0, p1, k0, k1);
	else
		RBLN_K(mm_rowmajor)(mm, m0, m1, p0, p1, k0, k1);
}
