// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_kern_avx512_attn.c - ATTENTION for CPUs with AVX-512F.
 *
 * The flash-decoding bodies of the other variants (rbln_model_kern_attn.h)
 * with 16-float vectors: a head of 64 elements is four loads and four
 * fused multiply-adds per query head instead of eight, so a tile's keys
 * and values are consumed in half the instructions and more of them are
 * in flight while the first loads of a token wait on memory. Scores and
 * sums are added in a different (fixed) order than in the AVX2 variant,
 * so the bits differ from it within the float tolerances; both homes
 * compile this same file, so their bits are the same.
 *
 * Heads whose size is not a multiple of 16 (the caches allow multiples of
 * 8) run the AVX2 kernels: a 16-float load would read past the head.
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

/* acc += x * y with one rounding (FMA), as in the AVX2 variant. */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(madd)(RBLN_K_VF *acc, RBLN_K_VF x, RBLN_K_VF y)
{
	*acc = __builtin_ia32_vfmaddps512_mask(x, y, *acc, (u16)~0U, 4);
}

#define RBLN_K_MADD(acc, x, y)	RBLN_K(madd)(&(acc), (x), (y))

#include "rbln_model_kern_math.h"
#include "rbln_model_kern_attn.h"

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
