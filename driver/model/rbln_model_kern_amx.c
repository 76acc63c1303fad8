// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_kern_amx.c - MATMUL on AMX-BF16 tiles (emulated home only).
 *
 * Weights are bfloat16 already; a float32 activation x is split into three
 * bfloat16 parts by truncation: hi = x with its low 16 bits cleared,
 * mid = (x - hi) likewise, lo = x - hi - mid. Each difference is exact in
 * float32 and lo has at most 8 significant bits, so hi + mid + lo == x
 * exactly (bar denormals, which the tiles treat as zero). W.x is then
 * W.hi + W.mid + W.lo: every bf16 x bf16 product is exact in float32 and
 * the tile unit sums them in float32, so the result is a float32 dot
 * product like the other variants', within the same float64-reference
 * tolerance. Two parts (hi + lo, x to ~16 bits) leave an error of up to
 * 2^-16 of |a||w| per term, above the tolerance (k + 2) * 2^-24 for short
 * products (tried: the k = 1 and k = 40 cases of the tests fail): the
 * third part costs a third more tile work and makes the split exact.
 *
 * Per output element the order is fixed: k in blocks of 32 from k0, in a
 * block the hi part, then mid, then lo, each a tile dot product over the
 * block's 16 k pairs. Rows never mix, so a row of a batch is the same bits
 * as the row alone, and the split over engines changes nothing. The
 * results are this variant's own bits, not those of avx2/avx512.
 *
 * The tiles hold 16 rows of 64 bytes: a C tile 16 x 16 floats, an A tile
 * 16 rows x 32 bf16 (one part), the B tile 16 k pairs x 16 columns in
 * the pair-interleaved ("VNNI") layout, repacked from a packed bf16 panel
 * per k block (or gathered from row-major weights: the same bits).
 * Float32 and float16 weights run the avx512 MATMUL.
 *
 * The kernel home never uses AMX (the tile state is too large for
 * kernel_fpu_begin()): Kbuild.model does not list this file, and
 * rbln_os_cpu_has_amx() is false there.
 */

#include "rbln_model_kern_amx.h"

#if defined(__x86_64__)

#define RBLN_AMX_PARTS	3U	/* bf16 parts of an activation */
#define RBLN_AMX_PG	32U	/* panels staged at once: 512 columns (exec_mm.c) */
/*
 * k steps staged at once (a bracket of exec_mm.c runs up to 1024, in
 * runs of this many): the B blocks of all the call's panels over them
 * (256 KiB, L2) and one row tile's A parts (24 KiB, L1; and the next's).
 */
#define RBLN_AMX_KMAX	256U

/* u32 words of one panel's B blocks over RBLN_AMX_KMAX k steps. */
#define RBLN_AMX_BPANEL	(RBLN_AMX_KMAX / 2 * 16)
/* bf16 elements of one part of one row tile over RBLN_AMX_KMAX k steps. */
#define RBLN_AMX_APLANE	(RBLN_AMX_ROWS * RBLN_AMX_KMAX)

/* The top 16 bits of a float's bits, as a float. */
static inline u32 rbln_amx_bits(float x)
{
	u32 b;

	memcpy(&b, &x, 4);
	return b;
}

static inline float rbln_amx_float(u32 b)
{
	float x;

	memcpy(&x, &b, 4);
	return x;
}

/* The high halves of 32 words (two vectors) as one vector of 32 bf16. */
static inline RBLN_OS_INLINE RBLN_AMX_ATTR rbln_amx_vw
rbln_amx_high_halves(rbln_amx_vu a, rbln_amx_vu b)
{
	return __builtin_shufflevector((rbln_amx_vw)a, (rbln_amx_vw)b,
				       1, 3, 5, 7, 9, 11, 13, 15,
				       17, 19, 21, 23, 25, 27, 29, 31,
				       33, 35, 37, 39, 41, 43, 45, 47,
				       49, 51, 53, 55, 57, 59, 61, 63);
}

/*
 * The parts of 32 finite floats at @x: hi = x with the low 16 bits
 * cleared, mid likewise of x - hi, lo = x - hi - mid; the same bits as
 * rbln_amx_split() gives them, in fewer instructions (no NaN or infinity
 * cases, one permute packs 32 halves). Returns false, writing nothing,
 * when one of them is not finite.
 */
static inline RBLN_OS_INLINE RBLN_AMX_ATTR bool
rbln_amx_split32(const float *x, u16 *hi, u16 *mid, u16 *lo)
{
	const rbln_amx_vu top = (rbln_amx_vu){} + 0xffff0000U;
	const rbln_amx_vu exp = (rbln_amx_vu){} + 0x7f800000U;
	rbln_amx_vu b0, b1, h0, h1, m0, m1;
	rbln_amx_vw v;

	memcpy(&b0, x, sizeof(b0));
	memcpy(&b1, x + 16, sizeof(b1));
	/* vpcmpd, predicate 0 (equal): the one spelling GCC and clang share. */
	if (__builtin_ia32_cmpd512_mask((rbln_amx_vi)(b0 & exp),
					(rbln_amx_vi)exp, 0, 0xffff) |
	    __builtin_ia32_cmpd512_mask((rbln_amx_vi)(b1 & exp),
					(rbln_amx_vi)exp, 0, 0xffff))
		return false;
	h0 = b0 & top;
	h1 = b1 & top;
	v = rbln_amx_high_halves(h0, h1);
	memcpy(hi, &v, sizeof(v));
	m0 = (rbln_amx_vu)((rbln_amx_vf)b0 - (rbln_amx_vf)h0);
	m1 = (rbln_amx_vu)((rbln_amx_vf)b1 - (rbln_amx_vf)h1);
	b0 = (rbln_amx_vu)((rbln_amx_vf)m0 - (rbln_amx_vf)(m0 & top));
	b1 = (rbln_amx_vu)((rbln_amx_vf)m1 - (rbln_amx_vf)(m1 & top));
	v = rbln_amx_high_halves(m0, m1);
	memcpy(mid, &v, sizeof(v));
	v = rbln_amx_high_halves(b0, b1);
	memcpy(lo, &v, sizeof(v));
	return true;
}

/* The parts of 16 floats at @x, any values (rbln_amx_split()). */
static inline RBLN_OS_INLINE RBLN_AMX_ATTR void
rbln_amx_split16(const float *x, u16 *hi, u16 *mid, u16 *lo)
{
	const rbln_amx_vu top = (rbln_amx_vu){} + 0xffff0000U;
	const rbln_amx_vu exp = (rbln_amx_vu){} + 0x7f800000U;
	rbln_amx_vu b, h, m, l, nf, nan;
	rbln_amx_vh hv, mv, lv;
	rbln_amx_vf r;

	memcpy(&b, x, sizeof(b));
	nf = (rbln_amx_vu)((b & exp) == exp);
	nan = nf & (rbln_amx_vu)((b & 0x007fffffU) != 0);
	h = (b & top) | (nan & 0x00400000U);
	r = (rbln_amx_vf)b - (rbln_amx_vf)h;
	r = (rbln_amx_vf)((rbln_amx_vu)r & ~nf);
	m = (rbln_amx_vu)r & top;
	l = (rbln_amx_vu)(r - (rbln_amx_vf)m);
	hv = __builtin_convertvector(h >> 16, rbln_amx_vh);
	mv = __builtin_convertvector(m >> 16, rbln_amx_vh);
	lv = __builtin_convertvector(l >> 16, rbln_amx_vh);
	memcpy(hi, &hv, sizeof(hv));
	memcpy(mid, &mv, sizeof(mv));
	memcpy(lo, &lv, sizeof(lv));
}

/*
 * The hi/mid/lo parts of n floats at @x into @hi, @mid, @lo (bf16). A NaN
 * keeps a NaN hi (its payload may be in the cleared bits); a non-finite x
 * has zero mid and lo, so that inf - inf makes no NaN.
 */
static RBLN_AMX_ATTR void rbln_amx_split(const float *x, u32 n, u16 *hi,
					 u16 *mid, u16 *lo)
{
	u32 i = 0, bits, hb, mb;
	float s;

	while (i + 16 <= n) {
		if (i + 32 <= n &&
		    rbln_amx_split32(x + i, hi + i, mid + i, lo + i)) {
			i += 32;
			continue;
		}
		rbln_amx_split16(x + i, hi + i, mid + i, lo + i);
		i += 16;
	}
	for (; i < n; i++) {
		bits = rbln_amx_bits(x[i]);
		hb = bits & 0xffff0000U;
		hi[i] = (u16)(hb >> 16);
		mid[i] = 0;
		lo[i] = 0;
		if ((bits & 0x7f800000U) == 0x7f800000U) {
			if (bits & 0x007fffffU)
				hi[i] |= 0x0040;
			continue;
		}
		s = x[i] - rbln_amx_float(hb);
		mb = rbln_amx_bits(s) & 0xffff0000U;
		mid[i] = (u16)(mb >> 16);
		lo[i] = (u16)(rbln_amx_bits(s - rbln_amx_float(mb)) >> 16);
	}
}

/*
 * The same block from row-major weights: column n of panel @p is row n
 * of the checkpoint's matrix; columns past mm->n are zero.
 */
static void rbln_amx_pack_b_rm(const struct rbln_model_mm *mm, u32 p, u32 k,
			       u32 kc, u32 *t)
{
	const u8 *row;
	u32 j, kk, n;
	u16 e0, e1;

	memset(t, 0, RBLN_AMX_KB / 2 * 64);
	for (j = 0; j < RBLN_ISA_PACK_COLS; j++) {
		n = p * RBLN_ISA_PACK_COLS + j;
		if (n >= mm->n)
			break;
		row = mm->w + ((u64)n * mm->k + k) * 2;
		for (kk = 0; kk < RBLN_AMX_KB / 2 && 2 * kk < kc; kk++) {
			memcpy(&e0, row + 4 * kk, 2);
			e1 = 0;
			if (2 * kk + 1 < kc)
				memcpy(&e1, row + 4 * kk + 2, 2);
			t[kk * 16 + j] = e0 | (u32)e1 << 16;
		}
	}
}

/**
 * struct rbln_amx_call - one call's operands, staged for the tiles
 * @a: the A parts of two row tiles, the one the tiles run and the next:
 *	[part][k block][row][32 k], k padded to whole blocks and rows to a
 *	whole tile with zeros
 * @b: the B blocks of all the call's panels over its k range, repacked
 *	once for all its row tiles (a tile load right after the stores
 *	that wrote its data waits for them: the panels that the first row
 *	tile meets are repacked just before, the rest are ready)
 * @c: a C tile through memory, for partial tiles
 */
struct rbln_amx_call {
	u16 a[2][RBLN_AMX_PARTS * RBLN_AMX_APLANE] RBLN_AMX_ALIGNED;
	u32 b[RBLN_AMX_PG * RBLN_AMX_BPANEL] RBLN_AMX_ALIGNED;
	float c[RBLN_AMX_ROWS * 16] RBLN_AMX_ALIGNED;
};

/*
 * A call's staging (305 KiB) lives on the stack of the engine thread that
 * runs it (rbln_model_mm_amx()): the emulated home runs the model only on
 * its own engine threads, whose stacks it sizes (RBLN_MODEL_EMUL_STACK,
 * 512 KiB, of at least 1 MiB). No static TLS: every thread of the process
 * would carry it.
 */

/* Panel @p's k steps [k0, k0 + kc) as B blocks at @t. */
static void rbln_amx_pack_panel(const struct rbln_model_mm *mm, u32 p,
				u32 k0, u32 kc, u32 *t)
{
	u32 kb;

	for (kb = 0; kb < kc; kb += RBLN_AMX_KB) {
		if (mm->packed)
			rbln_amx_pack_b(mm->w + p * mm->pstride +
					(u64)(k0 + kb) * RBLN_ISA_PACK_COLS * 2,
					kc - kb, mm->prefetch, t + kb * 8);
		else
			rbln_amx_pack_b_rm(mm, p, k0 + kb, kc - kb, t + kb * 8);
	}
}

/*
 * Ask for panel @p's k steps [k0, k0 + kc) of packed weights into L2 (no
 * result depends on it): each panel's run is a few KiB far from the
 * last, where the hardware prefetcher starts cold, so the repack of the
 * next pair of panels would wait on memory while the tiles run this one.
 */
static void rbln_amx_prefetch_panel(const struct rbln_model_mm *mm, u32 p,
				    u32 k0, u32 kc)
{
	const u8 *w = mm->w + p * mm->pstride +
		      (u64)k0 * RBLN_ISA_PACK_COLS * 2;
	u64 off, bytes = (u64)kc * RBLN_ISA_PACK_COLS * 2;

	if (!mm->packed)
		return;
	for (off = 0; off < bytes; off += 64)
		__builtin_prefetch(w + off, 0, 2);
}

/*
 * bf16 elements from a part's start to its A tile of k steps
 * [kb, kb + 32): each tile's 16 rows of 64 bytes are contiguous.
 */
static inline u64 rbln_amx_a_tile(u32 kb)
{
	return (u64)kb * RBLN_AMX_ROWS;
}

/*
 * One block of C tiles: the row tile staged at @at times the @np (1-3)
 * staged panels from @b, tmm0-2. Per k block the B blocks go into tmm3-5 once;
 * then per part (hi, mid, lo: each element's fixed order) the A tile
 * into tmm6 or tmm7 (alternating, so that a load need not wait for the
 * products reading the other) and up to three dot products that do not
 * wait on each other, so the tile unit overlaps them. Each C tile goes
 * through memory once per call (256 k steps: 24 products), where two
 * row tiles by two panels, with A parts for two row tiles in L1, could
 * only take 128 k steps per visit.
 */
static inline RBLN_OS_INLINE void
rbln_amx_block(const u16 *at, const u32 *b, u32 kc, u32 np)
{
	const u32 *b1 = b + RBLN_AMX_BPANEL, *b2 = b1 + RBLN_AMX_BPANEL;
	const u16 *a;
	u32 kb;

	for (kb = 0; kb < kc; kb += RBLN_AMX_KB) {
		a = at + rbln_amx_a_tile(kb);
		RBLN_AMX_LOAD(3, b + kb * 8, 64);
		if (np > 1)
			RBLN_AMX_LOAD(4, b1 + kb * 8, 64);
		if (np > 2)
			RBLN_AMX_LOAD(5, b2 + kb * 8, 64);
		RBLN_AMX_LOAD(6, a, 64);
		RBLN_AMX_DP(0, 6, 3);
		if (np > 1)
			RBLN_AMX_DP(1, 6, 4);
		if (np > 2)
			RBLN_AMX_DP(2, 6, 5);
		RBLN_AMX_LOAD(7, a + RBLN_AMX_APLANE, 64);
		RBLN_AMX_DP(0, 7, 3);
		if (np > 1)
			RBLN_AMX_DP(1, 7, 4);
		if (np > 2)
			RBLN_AMX_DP(2, 7, 5);
		RBLN_AMX_LOAD(6, a + 2 * RBLN_AMX_APLANE, 64);
		RBLN_AMX_DP(0, 6, 3);
		if (np > 1)
			RBLN_AMX_DP(1, 6, 4);
		if (np > 2)
			RBLN_AMX_DP(2, 6, 5);
	}
}

/*
 * Rows [rb, re) of a row tile into its A parts at @at: the tile's @nr
 * rows (at most 16) start at row @r0 of @a, @lda floats apart, k steps
 * [0, kc); the padding the tiles read is zero (k past kc; rows from nr
 * up to re where whole tiles of 16 rows are read).
 */
static RBLN_AMX_ATTR void rbln_amx_stage_a(u16 *at, const float *a, u64 lda,
					   u32 r0, u32 nr, u32 kc, u32 rb,
					   u32 re)
{
	u32 r, part, kb, n;
	u16 *t;

	for (r = rb; r < re; r++) {
		for (kb = 0; kb < kc; kb += RBLN_AMX_KB) {
			t = at + rbln_amx_a_tile(kb) + r * RBLN_AMX_KB;
			n = r >= nr ? 0 : kc - kb < RBLN_AMX_KB ? kc - kb :
			    RBLN_AMX_KB;
			if (n < RBLN_AMX_KB)
				for (part = 0; part < RBLN_AMX_PARTS; part++)
					memset(t + part * RBLN_AMX_APLANE + n,
					       0, (RBLN_AMX_KB - n) * 2);
			if (n)
				rbln_amx_split(a + (u64)(r0 + r) * lda + kb, n,
					       t, t + RBLN_AMX_APLANE,
					       t + 2 * RBLN_AMX_APLANE);
		}
	}
}

/*
 * Panels [p, p + np) of the call's [p0, p1) over k in [k0, k0 + kc) into
 * their staged B blocks, the next @np panels asked for meanwhile.
 */
static void rbln_amx_stage_b(struct rbln_amx_call *st,
			     const struct rbln_model_mm *mm, u32 p0, u32 p,
			     u32 np, u32 p1, u32 k0, u32 kc)
{
	u32 j;

	for (j = p; j < p + np; j++)
		rbln_amx_pack_panel(mm, j, k0, kc,
				    st->b + (j - p0) * RBLN_AMX_BPANEL);
	for (j = p + np; j < p1 && j < p + 2 * np; j++)
		rbln_amx_prefetch_panel(mm, j, k0, kc);
}

/*
 * The C tiles of row tile @rt times the @np panels of @o (from their
 * output, or zero), the A parts at @at times the B blocks at @b over @kc
 * k steps added, stored back.
 */
static inline RBLN_OS_INLINE void
rbln_amx_tiles(struct rbln_amx_call *st, const struct rbln_amx_out *o,
	       const u16 *at, const u32 *b, u32 rt, u32 np, u32 kc, bool zero)
{
	u32 j;

	for (j = 0; j < np; j++)
		rbln_amx_c_in(&o[j], j, rt, zero, st->c);
	if (np == 3)
		rbln_amx_block(at, b, kc, 3);
	else if (np == 2)
		rbln_amx_block(at, b, kc, 2);
	else
		rbln_amx_block(at, b, kc, 1);
	for (j = 0; j < np; j++)
		rbln_amx_c_out(&o[j], j, rt, st->c);
}

/*
 * Rows [m0, m1) times panels [p0, p1) (at most RBLN_AMX_PG) over k in
 * [k0, k1) (at most RBLN_AMX_KMAX), bf16 weights; the tiles hold
 * @cfg_rows rows (16, or all rows when fewer). Each panel's B blocks are
 * repacked once for all row tiles, while the first row tile meets them
 * (the next panels prefetched meanwhile, so the weights' reads overlap
 * tile work). Each row tile runs the call's whole k range with its A
 * parts in L1 while all panels pass, so that between calls only one row
 * tile's C tiles (32 KiB) go through memory, not those of all rows,
 * which the outputs' long rows (powers of two apart) would spread over
 * few cache sets. The next row tile's A parts are split into the other
 * half of @st->a a few rows after each block of tiles: the vector unit
 * splits (and waits on the activations' loads) while the tile unit
 * still runs the products just issued.
 */
static RBLN_AMX_ATTR void
rbln_amx_mm_rows(struct rbln_amx_call *st, const struct rbln_model_mm *mm,
		 u64 m0, u64 m1, u32 p0, u32 p1, u32 k0, u32 k1, u32 cfg_rows)
{
	struct rbln_amx_out o[3];
	u32 nrows = (u32)(m1 - m0), kc = k1 - k0;
	u32 tiles = (nrows + RBLN_AMX_ROWS - 1) / RBLN_AMX_ROWS;
	bool zero = k0 == 0 && !mm->accumulate;
	const float *a = (const float *)mm->a + m0 * mm->k + k0;
	/* Rows of the next row tile to split per block of panels. */
	u32 step = RBLN_AMX_ROWS / ((p1 - p0 + 2) / 3) + 1;
	u32 p, j, rt, np, cur = 0, nr, end, r;

	for (j = 0; j < 3; j++) {
		o[j].ldc = mm->n;
		o[j].nrows = nrows;
	}
	nr = nrows < RBLN_AMX_ROWS ? nrows : RBLN_AMX_ROWS;
	rbln_amx_stage_a(st->a[0], a, mm->k, 0, nr, kc, 0,
			 cfg_rows == RBLN_AMX_ROWS ? RBLN_AMX_ROWS : nr);
	for (rt = 0; rt < tiles; rt++, cur ^= 1) {
		/* The next row tile, split while the tiles run this one. */
		nr = 0;
		if (rt + 1 < tiles)
			nr = nrows - (rt + 1) * RBLN_AMX_ROWS;
		if (nr > RBLN_AMX_ROWS)
			nr = RBLN_AMX_ROWS;
		end = nr && cfg_rows == RBLN_AMX_ROWS ? RBLN_AMX_ROWS : nr;
		r = 0;
		for (p = p0; p < p1; p += np) {
			np = p1 - p >= 3 ? 3 : p1 - p;
			if (rt == 0)
				rbln_amx_stage_b(st, mm, p0, p, np, p1, k0, kc);
			for (j = 0; j < np; j++)
				rbln_amx_out_panel(&o[j], mm, m0, p + j,
						   cfg_rows);
			rbln_amx_tiles(st, o, st->a[cur], st->b + (p - p0) *
				       RBLN_AMX_BPANEL, rt, np, kc, zero);
			if (r < end) {
				rbln_amx_stage_a(st->a[cur ^ 1], a, mm->k,
						 (rt + 1) * RBLN_AMX_ROWS, nr,
						 kc, r, r + step < end ?
						 r + step : end);
				r += step;
			}
		}
		if (r < end)
			rbln_amx_stage_a(st->a[cur ^ 1], a, mm->k,
					 (rt + 1) * RBLN_AMX_ROWS, nr, kc, r,
					 end);
	}
}

/**
 * rbln_model_mm_amx() - one block of a MATMUL (&rbln_model_kernels.mm)
 * @mm: the command
 * @m0: first row
 * @m1: one past the last row
 * @p0: first panel
 * @p1: one past the last panel
 * @k0: first k
 * @k1: one past the last k
 */
void rbln_model_mm_amx(const struct rbln_model_mm *mm, u64 m0, u64 m1,
		       u32 p0, u32 p1, u32 k0, u32 k1)
{
	struct rbln_amx_call st;
	u32 k, kn, p, pn, rows;

	if (mm->dtype != RBLN_DTYPE_BF16) {
		rbln_model_mm_avx512(mm, m0, m1, p0, p1, k0, k1);
		return;
	}
	rows = m1 - m0 < RBLN_AMX_ROWS ? (u32)(m1 - m0) : RBLN_AMX_ROWS;
	rbln_amx_config(rows);
	for (k = k0; k < k1; k = kn) {
		kn = k1 - k > RBLN_AMX_KMAX ? k + RBLN_AMX_KMAX : k1;
		for (p = p0; p < p1; p = pn) {
			pn = p1 - p > RBLN_AMX_PG ? p + RBLN_AMX_PG : p1;
			rbln_amx_mm_rows(&st, mm, m0, m1, p, pn, k, kn, rows);
		}
	}
	__asm__ volatile("tilerelease" : : : "memory");
}

#endif
