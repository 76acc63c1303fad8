// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_kern_amx_decode.c - MATMUL of a decode batch (up to 16 rows)
 * with bf16 activations (RBLN_MATMUL_A_BF16) on AMX-BF16 tiles (emulated
 * home only).
 *
 * A decode batch reads every weight once per command, so its product is
 * bound by how fast each core streams its panels. The float32 kernels
 * widen each weight vector and run one FMA per row on it: at 8 rows, about
 * eleven instructions per 16 weights, and measured on the 16-core Sapphire
 * Rapids the core then keeps too few reads in flight (MATMUL M=8 at 50-66%
 * of the read bandwidth, M=1 at 95%). Here a 64-byte line of weights (two
 * k steps of a panel) costs a load, one vpermw into the tiles' pair layout
 * and a store, and one tile dot product covers 32 k steps of 16 columns
 * for every row of the batch.
 *
 * Each activation is rounded to bf16 once per call (vcvtne2ps2bf16: to
 * nearest, ties to even, subnormals to zero), which the flag allows;
 * products are exact in float32 and the tiles sum them in float32, within
 * the flag's tolerance (rbln_isa.h). Per output element the order is
 * fixed: k blocks of 32 from k = 0 in increasing order, one dot product
 * each, whatever the rows, panels, engines or calls around it. The tiles
 * never mix rows, so a row of a batch is the same bits as the row alone.
 * The bits are this kernel's own.
 *
 * Panels run three at a time (C tiles tmm0-2, B blocks tmm3-5, the A
 * block in tmm6), their k blocks side by side: three streams of weights,
 * each prefetched ahead, as the GEMV reads four. Each block is repacked
 * one block ahead of its dot products, so a tile load does not wait for
 * the stores that wrote its data. Measured on the 16-core Sapphire Rapids
 * (rbln-kbench, 16 engines, 2048 x 8192 bf16, weights from memory, one
 * call, GB/s for M=1, GFLOP/s else): the avx512 MATMUL M=1 114, M=8 662,
 * M=16 676; this kernel M=1 98, M=8 772, M=16 1527. Tried in the same
 * call: each panel's 8 KiB run repacked before the next panel's (one
 * stream at a time) M=1 73-86, M=8 611-614, M=16 1125-1162; weights loaded
 * straight into the B tiles with four A rows per batch row picking the
 * k steps apart (no repack; columns past N and non-finite weights then
 * need another path) M=8 592-632, M=16 773-909.
 */

#include "rbln_model_kern_amx.h"

#if defined(__x86_64__)

#define RBLN_AMXD_ATTR	\
	__attribute__((__target__("avx512f,avx512bw,avx512bf16")))
/* k steps whose activations one pass rounds: a decode piece's k block. */
#define RBLN_AMXD_KMAX	1024U
#define RBLN_AMXD_NP	3U	/* panels at a time */
/* u32 words of one B block: 16 k pairs by 16 columns. */
#define RBLN_AMXD_BBLOCK	(RBLN_AMX_KB / 2 * 16)
/* bf16 elements of one k block of A: 16 rows of 32. */
#define RBLN_AMXD_ABLOCK	(RBLN_AMX_ROWS * RBLN_AMX_KB)
/* Bytes of one k block of a packed bf16 panel. */
#define RBLN_AMXD_WBLOCK	(RBLN_AMX_KB * RBLN_ISA_PACK_COLS * 2)

/**
 * struct rbln_amxd_call - one call's operands, staged for the tiles
 * @a: the rounded activations, [k block][row][32 k], k padded to a whole
 *	block with zeros
 * @b: two k blocks of each of the three panels, repacked: the one the
 *	tiles run and the next
 * @c: a C tile through memory, for a partial panel
 *
 * 39 KiB, on the engine thread's stack as rbln_model_kern_amx.c's.
 */
struct rbln_amxd_call {
	u16 a[RBLN_AMXD_KMAX / RBLN_AMX_KB * RBLN_AMXD_ABLOCK] RBLN_AMX_ALIGNED;
	u32 b[2][RBLN_AMXD_NP][RBLN_AMXD_BBLOCK] RBLN_AMX_ALIGNED;
	float c[RBLN_AMX_ROWS * 16] RBLN_AMX_ALIGNED;
};

/*
 * Activations [0, kc) of @nr rows at @a, @lda floats apart, rounded to
 * bf16 into the A blocks at @at (a partial last block padded with zeros).
 */
static RBLN_AMXD_ATTR void rbln_amxd_stage_a(u16 *at, const float *a,
					     u64 lda, u32 nr, u32 kc)
{
	float tail[RBLN_AMX_KB] RBLN_AMX_ALIGNED;
	rbln_amx_vf lo, hi;
	rbln_amx_vu v;
	const float *x;
	u32 r, kb, n;

	for (r = 0; r < nr; r++) {
		for (kb = 0; kb < kc; kb += RBLN_AMX_KB) {
			x = a + r * lda + kb;
			n = kc - kb < RBLN_AMX_KB ? kc - kb : RBLN_AMX_KB;
			if (n < RBLN_AMX_KB) {
				memset(tail, 0, sizeof(tail));
				memcpy(tail, x, (u64)n * 4);
				x = tail;
			}
			memcpy(&lo, x, sizeof(lo));
			memcpy(&hi, x + 16, sizeof(hi));
			__asm__("vcvtne2ps2bf16 %2, %1, %0"
				: "=v"(v) : "v"(hi), "v"(lo));
			memcpy(at + kb / RBLN_AMX_KB * RBLN_AMXD_ABLOCK +
			       r * RBLN_AMX_KB, &v, sizeof(v));
		}
	}
}

/*
 * C tiles tmm0 .. tmm(np - 1) += the A block at @a times the @np panels'
 * B blocks at @b.
 */
static inline RBLN_OS_INLINE void
rbln_amxd_dots(const u16 *a, const u32 (*b)[RBLN_AMXD_BBLOCK], u32 np)
{
	RBLN_AMX_LOAD(6, a, 64);
	RBLN_AMX_LOAD(3, b[0], 64);
	RBLN_AMX_DP(0, 6, 3);
	if (np > 1) {
		RBLN_AMX_LOAD(4, b[1], 64);
		RBLN_AMX_DP(1, 6, 4);
	}
	if (np > 2) {
		RBLN_AMX_LOAD(5, b[2], 64);
		RBLN_AMX_DP(2, 6, 5);
	}
}

/*
 * Block @i of the @np panels from @w (@ps bytes apart), whose k range has
 * @kc steps, repacked into @b.
 */
static void rbln_amxd_pack(const u8 *w, u64 ps, u32 np, u32 i, u32 kc,
			   u32 pf, u32 (*b)[RBLN_AMXD_BBLOCK])
{
	u32 j;

	for (j = 0; j < np; j++)
		rbln_amx_pack_b(w + j * ps + (u64)i * RBLN_AMXD_WBLOCK,
				kc - i * RBLN_AMX_KB, pf, b[j]);
}

/*
 * Rows [m, m + nr) times panels [p, p + np) over k in [k0, k1), the
 * activations staged at st->a: the C tiles from the output (or zero),
 * every k block of the panels repacked and multiplied, stored back.
 */
static void rbln_amxd_panels(struct rbln_amxd_call *st,
			     const struct rbln_model_mm *mm, u64 m, u32 nr,
			     u32 p, u32 np, u32 k0, u32 k1, u32 pf, bool zero)
{
	struct rbln_amx_out o[RBLN_AMXD_NP];
	u64 ps = mm->pstride;
	const u8 *w = mm->w + p * ps + (u64)k0 * RBLN_ISA_PACK_COLS * 2;
	u32 kc = k1 - k0, nb = (kc + RBLN_AMX_KB - 1) / RBLN_AMX_KB, i, j;
	const u16 *a;

	for (j = 0; j < np; j++) {
		o[j].ldc = mm->n;
		o[j].nrows = nr;
		rbln_amx_out_panel(&o[j], mm, m, p + j, nr);
		rbln_amx_c_in(&o[j], j, 0, zero, st->c);
	}
	rbln_amxd_pack(w, ps, np, 0, kc, pf, st->b[0]);
	for (i = 0; i < nb; i++) {
		if (i + 1 < nb)
			rbln_amxd_pack(w, ps, np, i + 1, kc, pf,
				       st->b[(i + 1) & 1]);
		a = st->a + i * RBLN_AMXD_ABLOCK;
		if (np == 3)
			rbln_amxd_dots(a, st->b[i & 1], 3);
		else if (np == 2)
			rbln_amxd_dots(a, st->b[i & 1], 2);
		else
			rbln_amxd_dots(a, st->b[i & 1], 1);
	}
	for (j = 0; j < np; j++)
		rbln_amx_c_out(&o[j], j, 0, st->c);
}

/**
 * rbln_model_mm_amx_decode() - one block of a MATMUL of packed bf16
 *	weights with RBLN_MATMUL_A_BF16 (&rbln_model_kernels.mm_decode)
 * @mm: the command
 * @m0: first row
 * @m1: one past the last row
 * @p0: first panel
 * @p1: one past the last panel
 * @k0: first k
 * @k1: one past the last k
 *
 * Any rows work (16 at a time); exec_mm.c gives it decode batches. Other
 * weights run the avx512 MATMUL.
 */
void rbln_model_mm_amx_decode(const struct rbln_model_mm *mm, u64 m0, u64 m1,
			      u32 p0, u32 p1, u32 k0, u32 k1)
{
	struct rbln_amxd_call st;
	const float *a = (const float *)mm->a;
	u32 nr, k, kn, p, np, pf;
	u64 m;

	pf = rbln_model_prefetch_bytes(RBLN_AMXD_NP,
				       RBLN_MODEL_AMX_DECODE_MIN_ROWS);
	if (mm->dtype != RBLN_DTYPE_BF16 || !mm->packed) {
		rbln_model_mm_avx512(mm, m0, m1, p0, p1, k0, k1);
		return;
	}
	for (m = m0; m < m1; m += nr) {
		nr = m1 - m < RBLN_AMX_ROWS ? (u32)(m1 - m) : RBLN_AMX_ROWS;
		rbln_amx_config(nr);
		for (k = k0; k < k1; k = kn) {
			kn = k1 - k > RBLN_AMXD_KMAX ? k + RBLN_AMXD_KMAX : k1;
			rbln_amxd_stage_a(st.a, a + m * mm->k + k, mm->k, nr,
					  kn - k);
			for (p = p0; p < p1; p += np) {
				np = p1 - p < RBLN_AMXD_NP ? p1 - p :
				     RBLN_AMXD_NP;
				rbln_amxd_panels(&st, mm, m, nr, p, np, k, kn,
						 pf, k == 0 && !mm->accumulate);
			}
		}
	}
	__asm__ volatile("tilerelease" : : : "memory");
}

#endif
