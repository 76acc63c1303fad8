// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_kern_dpbf16.c - MATMUL of bf16 weights on AVX512-BF16 dot
 * products, for commands that allow bf16 activations (RBLN_MATMUL_A_BF16).
 *
 * vdpbf16ps multiplies 16 pairs of bf16 by 16 pairs and adds each lane's
 * two products to a float32 lane: twice the multiply-adds of a float32
 * FMA per instruction. Weights are bf16 already, so only the activations
 * change: each is rounded to bf16 (vcvtne2ps2bf16: to nearest, ties to
 * even, subnormals to zero), which the flag allows; products are exact in
 * float32 and sums stay float32, within the flag's tolerance (rbln_isa.h).
 * With float32 activations (the flag unset) an exact product would need
 * three bf16 parts per activation (rbln_model_kern_amx.c): three dot
 * products for two FMAs' work, slower than the avx512 MATMUL, so this
 * kernel is for the flag only.
 *
 * A lane of the dot product is one output column over a pair of k steps:
 * the panel's rows k and k + 1 (64 contiguous bytes, each 32-bit word
 * holding columns j and j + 8, rbln_isa.h) are permuted by one vpermw
 * into the pairs of columns 0..15, and an activation pair is broadcast
 * from a row tile's converted activations. A register tile is up to
 * RBLN_DP_MR rows by two panels (a decode batch's: by three or four,
 * RBLN_DP_NP_STREAM); a call converts RBLN_DP_KC activations of
 * each row at a time (a small buffer, for the kernel's 2 KiB frames) and
 * runs the tile over every panel of the call, the running sums stored in
 * the output between chunks (exactly, as the other kernels' k blocks).
 * Per output element the order is fixed (pairs in increasing k from k0),
 * whatever the rows, panels, engines or k blocks around it, so a row of a
 * batch is the same bits as the row alone; the bits are this kernel's,
 * not those of the float32 kernels (within the tolerance). Each home runs
 * it on the same CPUs (rbln_model_mm_a_bf16_ok()), so both homes give the
 * same bits.
 *
 * In rbln.ko this file is built with CC_FLAGS_FPU and runs only inside
 * kernel_fpu_begin()/_end(), which saves and restores the ZMM state.
 */

#include "rbln_model_internal.h"

#if defined(__x86_64__)

#define RBLN_DP_ATTR	__attribute__((__target__("avx512f,avx512bw,avx512bf16")))
#define RBLN_DP_MR	8U	/* rows of a register tile */
#define RBLN_DP_NP	2U	/* panels of a register tile */
/*
 * A decode batch's weights stream from memory: its tiles take all its
 * rows, up to 8, so that each line of weights comes from memory once, and
 * run 3 panels side by side (4 for up to 4 rows: 12 to 24 sums), each
 * stream prefetched ahead (rbln_dp_tile()). Measured on the 2-core Zen 5
 * (M=8, K=2048, N=8192, weights from memory, 2 threads): tiles of 4 rows
 * by 4 panels, one pass of 4 rows from memory and one from L2, 228-238
 * GFLOP/s; 8 rows by 3 panels 190-244; with the prefetches into L2 325-331
 * (into L1 294); the same tiles on weights in L2 211 a core.
 */
#define RBLN_DP_NP_STREAM	4U
#define RBLN_DP_NP_STREAM_WIDE	3U	/* panels of a stream tile of 5-8 rows */
/*
 * k steps converted at a time: in the kernel 64 (a 1 KiB buffer for the
 * 2 KiB frames), in userspace a whole k block of rbln_model_exec_mm.c
 * (fewer reloads of the sums). The sums go through the output exactly
 * between chunks, so both give the same bits.
 */
#if defined(__KERNEL__)
#define RBLN_DP_KC	64U
#else
#define RBLN_DP_KC	256U
#endif
#define RBLN_DP_PAIRS	(RBLN_DP_KC / 2)
#define RBLN_DP_ROW	(RBLN_ISA_PACK_COLS * 2U)	/* bytes of a panel row */

#define rbln_dp_vf	float __attribute__((vector_size(64)))
#define rbln_dp_vu	u32 __attribute__((vector_size(64)))
#define rbln_dp_vh	u16 __attribute__((vector_size(64)))
#define RBLN_DP_ALIGNED	RBLN_OS_ATTR(__aligned__(64))

/*
 * Word indexes of vpermw taking rows k and k + 1 of a packed bf16 panel
 * (words 0-15 and 16-31; word 2i is column i, 2i + 1 column i + 8) to
 * lane c = (row k column c, row k + 1 column c).
 */
static const rbln_dp_vh rbln_dp_pair_idx = {
	0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30,
	1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31,
};

/* A vector of zeros (a compound literal confuses kernel style checks). */
static inline RBLN_OS_INLINE RBLN_DP_ATTR rbln_dp_vf rbln_dp_zero(void)
{
	rbln_dp_vf z;

	memset(&z, 0, sizeof(z));
	return z;
}

/* acc += the pairs of @b times the pair at @a, broadcast. */
static inline RBLN_OS_INLINE RBLN_DP_ATTR rbln_dp_vf
rbln_dp_madd(rbln_dp_vf acc, rbln_dp_vu b, const u32 *a)
{
	__asm__("vdpbf16ps %2%{1to16%}, %1, %0"
		: "+v"(acc) : "v"(b), "m"(*a));
	return acc;
}

/* Rows k and k + 1 of a panel (64 bytes at @w) as 16 column pairs. */
static inline RBLN_OS_INLINE RBLN_DP_ATTR rbln_dp_vu
rbln_dp_pairs(const u8 *w, rbln_dp_vh idx)
{
	rbln_dp_vu v;

	__asm__("vpermw %2, %1, %0"
		: "=v"(v) : "v"(idx), "m"(*(const rbln_dp_vh *)w));
	return v;
}

/*
 * 32 float32 at @x to 16 bf16 pairs (x[2i] low, x[2i + 1] high), rounded
 * to nearest even.
 */
static inline RBLN_OS_INLINE RBLN_DP_ATTR rbln_dp_vu
rbln_dp_cvt(rbln_dp_vf lo, rbln_dp_vf hi)
{
	rbln_dp_vu v;

	__asm__("vcvtne2ps2bf16 %2, %1, %0" : "=v"(v) : "v"(hi), "v"(lo));
	return v;
}

/*
 * Activations [k, k + kc) of @mr rows, @lda floats apart, as bf16 pairs
 * into @ap (RBLN_DP_PAIRS per row); an odd @kc's last pair is (a, 0).
 */
static RBLN_DP_ATTR void rbln_dp_convert(const float *a, u64 lda, u32 mr,
					 u32 kc, u32 *ap)
{
	rbln_dp_vf x[2];
	rbln_dp_vu v;
	u32 r, k, n;

	for (r = 0; r < mr; r++) {
		for (k = 0; k + 32 <= kc; k += 32) {
			/* Constant sizes: vector loads and a store. */
			memcpy(x, a + r * lda + k, sizeof(x));
			v = rbln_dp_cvt(x[0], x[1]);
			memcpy(ap + r * RBLN_DP_PAIRS + k / 2, &v, sizeof(v));
		}
		if (k < kc) {
			n = kc - k;
			memset(x, 0, sizeof(x));
			memcpy(x, a + r * lda + k, n * sizeof(float));
			v = rbln_dp_cvt(x[0], x[1]);
			memcpy(ap + r * RBLN_DP_PAIRS + k / 2, &v,
			       (n + 1) / 2 * sizeof(u32));
		}
	}
}

/*
 * The pairs of a panel's last, odd k step: row k and a row of zeros (not
 * the next row, which may lie past the weights or hold an infinity that
 * the activation's zero would turn into NaN).
 */
static inline RBLN_OS_INLINE RBLN_DP_ATTR rbln_dp_vu
rbln_dp_pairs_last(const u8 *w, rbln_dp_vh idx)
{
	u8 t[2 * RBLN_DP_ROW] RBLN_DP_ALIGNED;

	memcpy(t, w, RBLN_DP_ROW);
	memset(t + RBLN_DP_ROW, 0, RBLN_DP_ROW);
	return rbln_dp_pairs(t, idx);
}

/*
 * One pair of k steps of a register tile: @acc[r * np + g] += the pairs of
 * panel g (@bv) times row r's pair (@ap, RBLN_DP_PAIRS apart).
 */
static inline RBLN_OS_INLINE RBLN_DP_ATTR void
rbln_dp_step(rbln_dp_vf *acc, const rbln_dp_vu *bv, const u32 *ap, u32 mr,
	     u32 np)
{
	u32 r, g;

#pragma GCC unroll 16
	for (r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (g = 0; g < np; g++)
			acc[r * np + g] = rbln_dp_madd(acc[r * np + g], bv[g],
						       ap + r * RBLN_DP_PAIRS);
}

/**
 * rbln_dp_tile() - C[mr x 16 np] (+)= pairs of A[mr] * np panels
 * @ap: the rows' activation pairs (RBLN_DP_PAIRS per row)
 * @b: the first panel's row at the chunk's first k
 * @pstride: bytes from one panel to the next
 * @c: first output row at the first panel's first column
 * @ldc: floats between output rows
 * @cols: valid columns of the last panel, 1 to 16
 * @mr: rows, 1 to RBLN_DP_MR; a constant where this is inlined
 * @np: panels, 1 to RBLN_DP_NP_STREAM (rbln_dp_panels()); a constant where
 *	this is inlined
 * @kc: k steps of the chunk, 1 to RBLN_DP_KC
 * @zero: start from zero instead of from @c
 * @pf: bytes ahead to prefetch each panel's stream, 0 for none
 *
 * The prefetches go to L2 (prefetcht1): at a pair of k steps per line of
 * each panel, the tile's dot products take long enough that the hardware
 * prefetchers alone leave the reads waiting on memory; into L1 they
 * would crowd its fill buffers.
 */
static inline RBLN_OS_INLINE RBLN_DP_ATTR void
rbln_dp_tile(const u32 *ap, const u8 *b, u64 pstride, float *c, u64 ldc,
	     u32 cols, u32 mr, u32 np, u32 kc, bool zero, u32 pf)
{
	rbln_dp_vf acc[RBLN_DP_MR * RBLN_DP_NP_STREAM_WIDE] RBLN_OS_UNINIT;
	rbln_dp_vu bv[RBLN_DP_NP_STREAM];
	rbln_dp_vh idx = rbln_dp_pair_idx;
	u16 last = (u16)((1U << cols) - 1U);
	u32 r, g, kp, full = kc / 2;

#pragma GCC unroll 16
	for (r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (g = 0; g < np; g++) {
			u16 m = g + 1 == np ? last : (u16)~0U;
			float *o = c + r * ldc + g * RBLN_ISA_PACK_COLS;

			acc[r * np + g] = rbln_dp_zero();
			if (!zero)
				acc[r * np + g] =
					__builtin_ia32_loadups512_mask(o,
								       acc[r * np + g],
								       m);
		}
	for (kp = 0; kp < full; kp++) {
		if (pf)
#pragma GCC unroll 4
			for (g = 0; g < np; g++)
				__builtin_prefetch(b + g * pstride +
						   2 * kp * RBLN_DP_ROW + pf,
						   0, 2);
#pragma GCC unroll 4
		for (g = 0; g < np; g++)
			bv[g] = rbln_dp_pairs(b + g * pstride +
					      2 * kp * RBLN_DP_ROW, idx);
		rbln_dp_step(acc, bv, ap + kp, mr, np);
	}
	if (kc & 1) {
#pragma GCC unroll 4
		for (g = 0; g < np; g++)
			bv[g] = rbln_dp_pairs_last(b + g * pstride +
						   2 * full * RBLN_DP_ROW, idx);
		rbln_dp_step(acc, bv, ap + full, mr, np);
	}
#pragma GCC unroll 16
	for (r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (g = 0; g < np; g++)
			__builtin_ia32_storeups512_mask(c + r * ldc +
							g * RBLN_ISA_PACK_COLS,
							acc[r * np + g],
							g + 1 == np ? last :
							(u16)~0U);
}

/*
 * rbln_dp_tile() of @mr rows with @np a constant: 1, 2 or @wide, the
 * widest tile for @mr (RBLN_DP_NP_STREAM or RBLN_DP_NP_STREAM_WIDE).
 */
static inline RBLN_OS_INLINE RBLN_DP_ATTR void
rbln_dp_tile_np(const u32 *ap, const u8 *b, u64 pstride, float *c, u64 ldc,
		u32 cols, u32 mr, u32 np, u32 wide, u32 kc, bool zero, u32 pf)
{
	if (np == wide)
		rbln_dp_tile(ap, b, pstride, c, ldc, cols, mr, wide, kc, zero,
			     pf);
	else if (np == 2)
		rbln_dp_tile(ap, b, pstride, c, ldc, cols, mr, 2, kc, zero,
			     pf);
	else
		rbln_dp_tile(ap, b, pstride, c, ldc, cols, mr, 1, kc, zero,
			     pf);
}

/*
 * rbln_dp_tile() for a run-time row and panel count, one instance per
 * pair so that the tile's loops unroll and its sums stay in registers; in
 * two functions of a few instances each, for the kernel's 2 KiB frames.
 */
static RBLN_OS_NOINLINE RBLN_DP_ATTR void
rbln_dp_tile_few(const u32 *ap, const u8 *b, u64 pstride, float *c,
		 u64 ldc, u32 cols, u32 mr, u32 np, u32 kc, bool zero, u32 pf)
{
	const u32 w = RBLN_DP_NP_STREAM;

	if (mr == 1)
		rbln_dp_tile_np(ap, b, pstride, c, ldc, cols, 1, np, w, kc,
				zero, pf);
	else if (mr == 2)
		rbln_dp_tile_np(ap, b, pstride, c, ldc, cols, 2, np, w, kc,
				zero, pf);
	else if (mr == 3)
		rbln_dp_tile_np(ap, b, pstride, c, ldc, cols, 3, np, w, kc,
				zero, pf);
	else
		rbln_dp_tile_np(ap, b, pstride, c, ldc, cols, 4, np, w, kc,
				zero, pf);
}

static RBLN_OS_NOINLINE RBLN_DP_ATTR void
rbln_dp_tile_many(const u32 *ap, const u8 *b, u64 pstride, float *c,
		  u64 ldc, u32 cols, u32 mr, u32 np, u32 kc, bool zero, u32 pf)
{
	const u32 w = RBLN_DP_NP_STREAM_WIDE;

	if (mr == 5)
		rbln_dp_tile_np(ap, b, pstride, c, ldc, cols, 5, np, w, kc,
				zero, pf);
	else if (mr == 6)
		rbln_dp_tile_np(ap, b, pstride, c, ldc, cols, 6, np, w, kc,
				zero, pf);
	else if (mr == 7)
		rbln_dp_tile_np(ap, b, pstride, c, ldc, cols, 7, np, w, kc,
				zero, pf);
	else
		rbln_dp_tile_np(ap, b, pstride, c, ldc, cols, 8, np, w, kc,
				zero, pf);
}

/*
 * Panels of the next tile of @mr rows when @left remain: RBLN_DP_NP, or
 * for a stream (@stream) RBLN_DP_NP_STREAM up to 4 rows and
 * RBLN_DP_NP_STREAM_WIDE above; then whole tiles only (of 4, 3 left take
 * 2 and 1).
 */
static u32 rbln_dp_panels(u32 left, u32 mr, bool stream)
{
	u32 most = !stream ? RBLN_DP_NP : mr <= 4 ? RBLN_DP_NP_STREAM :
		   RBLN_DP_NP_STREAM_WIDE;

	if (left >= most)
		return most;
	return left == 3 ? 2 : left;
}

/*
 * Rows of the next tile when @left remain: as many tiles as full
 * @most-row ones would take, of equal height.
 */
static u32 rbln_dp_rows(u64 left, u32 most)
{
	u64 tiles = (left + most - 1) / most;

	return (u32)((left + tiles - 1) / tiles);
}

/**
 * rbln_model_mm_dpbf16() - one block of a MATMUL of packed bf16 weights
 *	with bf16 activations allowed (&rbln_model_kernels.mm_a_bf16)
 * @mm: the command
 * @m0: first row
 * @m1: one past the last row
 * @p0: first panel
 * @p1: one past the last panel
 * @k0: first k, even
 * @k1: one past the last k
 *
 * Rows outer, then chunks of k, panels inner: a row tile's converted
 * chunk stays in L1 across the panels, the panels' k block in L2 across
 * row tiles. A decode batch (&rbln_model_mm.prefetch set: its weights
 * stream) takes stream tiles (RBLN_DP_NP_STREAM), prefetched that far
 * ahead.
 */
void rbln_model_mm_dpbf16(const struct rbln_model_mm *mm, u64 m0, u64 m1,
			  u32 p0, u32 p1, u32 k0, u32 k1)
{
	u32 ap[RBLN_DP_MR * RBLN_DP_PAIRS] RBLN_DP_ALIGNED;
	u64 pstride = mm->pstride;
	const float *a = (const float *)mm->a;
	float *c = (float *)mm->c;
	u32 mr, kc, np, cols, k, p;
	const u8 *b;
	float *ct;
	bool zero;
	u64 m;

	for (m = m0; m < m1; m += mr) {
		mr = rbln_dp_rows(m1 - m, RBLN_DP_MR);
		for (k = k0; k < k1; k += kc) {
			kc = k1 - k < RBLN_DP_KC ? k1 - k : RBLN_DP_KC;
			zero = k == 0 && !mm->accumulate;
			rbln_dp_convert(a + m * mm->k + k, mm->k, mr, kc, ap);
			for (p = p0; p < p1; p += np) {
				np = rbln_dp_panels(p1 - p, mr, mm->prefetch);
				cols = mm->n - (p + np - 1) * RBLN_ISA_PACK_COLS;
				if (cols > RBLN_ISA_PACK_COLS)
					cols = RBLN_ISA_PACK_COLS;
				b = mm->w + p * pstride + (u64)k * RBLN_DP_ROW;
				ct = c + m * mm->n + p * RBLN_ISA_PACK_COLS;
				if (mr <= 4)
					rbln_dp_tile_few(ap, b, pstride, ct,
							 mm->n, cols, mr, np,
							 kc, zero,
							 mm->prefetch);
				else
					rbln_dp_tile_many(ap, b, pstride, ct,
							  mm->n, cols, mr, np,
							  kc, zero,
							  mm->prefetch);
			}
		}
	}
}

#endif
