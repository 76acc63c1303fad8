// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_kern_avx512.c - MATMUL for CPUs with AVX-512F.
 *
 * The MATMUL bodies of the other variants (rbln_model_kern_mm.h) with
 * 16-float vectors: one vector is a whole 16-column panel row, and a
 * register tile is RBLN_K_MR rows of one panel, each row one chain of
 * fused multiply-adds. Per output element that is the same chain, over k
 * in the same order, with the same single rounding as the AVX2 variant:
 * the results are the AVX2 variant's bits, at up to twice its arithmetic
 * per instruction. ATTENTION is here too (below); the other kernels of
 * this variant are the AVX2 ones (rbln_model_kern_avx2.c): they are bound
 * by memory, not by arithmetic.
 *
 * In rbln.ko this file is built with CC_FLAGS_FPU and runs only inside
 * kernel_fpu_begin()/_end(), which saves and restores the ZMM state.
 */

#include "rbln_model_internal.h"

#if defined(__x86_64__)

#define RBLN_K_W	16
#define RBLN_K_VF	float __attribute__((vector_size(64)))
#define RBLN_K_VU	u32 __attribute__((vector_size(64)))
#define RBLN_K_VI	s32 __attribute__((vector_size(64)))
#define RBLN_K_VH	u16 __attribute__((vector_size(32)))
#define RBLN_K_ATTR	__attribute__((__target__("avx512f,avx2,fma")))
#define RBLN_K(name)	rbln_k_avx512_##name
/*
 * Twelve one-vector accumulators: two FMA pipes of four cycles' latency
 * need eight independent chains; twelve leave room for the loads. The
 * GEMV reads four panels side by side, as the AVX2 one: it waits on
 * memory, and more streams only split the prefetchers' attention.
 */
#define RBLN_K_MR	12
#define RBLN_K_GP	4
/*
 * A decode batch of 2 to 16 rows runs tiles of up to eight rows by two
 * panels (four for up to four rows): 16 accumulators and two or four
 * weight streams, as the GEMV's four, where one panel per tile left the
 * weights one stream with a single load per k behind eight FMAs. One row
 * keeps the GEMV.
 */
#define RBLN_K_WIDE_ROWS	8
#define RBLN_K_WIDE_PANELS(mr)	((mr) <= 4 ? 4U : 2U)
#define RBLN_K_WIDE_ACC	16

/* acc += x * y with one rounding (FMA), as in the AVX2 variant. */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(madd)(RBLN_K_VF *acc, RBLN_K_VF x, RBLN_K_VF y)
{
	*acc = __builtin_ia32_vfmaddps512_mask(x, y, *acc, (u16)~0U, 4);
}

#define RBLN_K_MADD(acc, x, y)	RBLN_K(madd)(&(acc), (x), (y))

/*
 * 16 int8 weights to float32, exactly: vpmovsxbd then vcvtdq2ps (the
 * generic __builtin_convertvector() from bytes converts lane by lane).
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(i8_load)(const u8 *p)
{
	char q __attribute__((vector_size(16))) = { 0 };
	RBLN_K_VI x, none = { 0 };

	memcpy(&q, p, sizeof(q));
#if defined(__clang__)
	/* clang has no GCC pmovsx builtins; this is its vpmovsxbd. */
	(void)none;
	x = __builtin_convertvector(q, RBLN_K_VI);
#else
	x = __builtin_ia32_pmovsxbd512_mask(q, none, (u16)~0U);
#endif
	return __builtin_convertvector(x, RBLN_K_VF);
}

#if !defined(__clang__)
/* vpmovzxwd: 16 u16 lanes to u32 in one instruction. */
#define RBLN_K_WIDEN16(h)						\
	((RBLN_K_VU)__builtin_ia32_pmovzxwd512_mask(			\
		(s16 __attribute__((vector_size(32))))(h),		\
		(RBLN_K_VI){ 0 }, (u16)~0U))
#endif

#include "rbln_model_kern_math.h"
#include "rbln_model_kern_mm.h"
#include "rbln_model_kern_attn.h"

/**
 * rbln_model_mm_avx512() - one block of a MATMUL (&rbln_model_kernels.mm)
 * @mm: the command
 * @m0: first row
 * @m1: one past the last row
 * @p0: first panel
 * @p1: one past the last panel
 * @k0: first k
 * @k1: one past the last k
 */
void rbln_model_mm_avx512(const struct rbln_model_mm *mm, u64 m0, u64 m1,
			  u32 p0, u32 p1, u32 k0, u32 k1)
{
	rbln_k_avx512_mm(mm, m0, m1, p0, p1, k0, k1);
}

/*
 * ATTENTION (rbln_model_kern_attn.h) with 16-float vectors: a head of 64
 * elements is four loads and four fused multiply-adds per query head
 * instead of eight. Scores and sums are added in a different (fixed) order
 * than in the AVX2 variant, so the bits differ from it within the float
 * tolerances. Heads whose size is not a multiple of 16 (the caches allow
 * multiples of 8) run the AVX2 kernels: a 16-float load would read past
 * the head.
 */

/**
 * rbln_model_attn_part_avx512() - &rbln_model_kernels.attn_part
 * @at: the command
 * @seq: the sequence
 * @k0: first KV head
 * @k1: one past the last
 * @part: the partition
 * @i0: first query row of the sequence
 * @i1: one past the last
 * @j0: first token, from the partition's start
 * @j1: one past the last token, from the partition's start
 *
 * Return: 0, or -RBLN_EIO for a bad block id.
 */
int rbln_model_attn_part_avx512(const struct rbln_model_attn *at,
				const struct rbln_model_seq *seq, u32 k0,
				u32 k1, u64 part, u32 i0, u32 i1, u64 j0,
				u64 j1)
{
	if (at->cmd->head_dim % RBLN_K_W)
		return rbln_model_kernels_avx2.attn_part(at, seq, k0, k1, part,
							 i0, i1, j0, j1);
	return rbln_k_avx512_attn_part(at, seq, k0, k1, part, i0, i1, j0, j1);
}

/**
 * rbln_model_attn_merge_avx512() - &rbln_model_kernels.attn_merge
 * @at: the command
 * @seq: the sequence
 * @i0: first query row of the sequence
 * @i1: one past the last
 */
void rbln_model_attn_merge_avx512(const struct rbln_model_attn *at,
				  const struct rbln_model_seq *seq, u32 i0,
				  u32 i1)
{
	if (at->cmd->head_dim % RBLN_K_W)
		rbln_model_kernels_avx2.attn_merge(at, seq, i0, i1);
	else
		rbln_k_avx512_attn_merge(at, seq, i0, i1);
}

#endif
