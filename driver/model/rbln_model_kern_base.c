// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_kern_base.c - the portable compute kernels (SSE2 on x86-64).
 *
 * The same bodies as rbln_model_kern_avx2.c with 4-float vectors and a
 * separate multiply and add where the AVX2 variant fuses them. A 3 x 16
 * MATMUL tile keeps its twelve accumulators in the sixteen SSE registers.
 * In rbln.ko this file is built with CC_FLAGS_FPU and runs only inside
 * kernel_fpu_begin()/_end().
 */

#include "rbln_model_internal.h"

#define RBLN_K_W	4
#define RBLN_K_VF	float __attribute__((vector_size(16)))
#define RBLN_K_VU	u32 __attribute__((vector_size(16)))
#define RBLN_K_VI	s32 __attribute__((vector_size(16)))
#define RBLN_K_VH	u16 __attribute__((vector_size(8)))
#define RBLN_K_ATTR
#define RBLN_K(name)	rbln_k_base_##name
#define RBLN_K_MR	3
#define RBLN_K_GP	2

/* acc += x * y: one rounding here (FMA), two in the baseline. */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(madd)(RBLN_K_VF *acc, RBLN_K_VF x, RBLN_K_VF y)
{
	*acc = *acc + x * y;
}

#define RBLN_K_MADD(acc, x, y)	RBLN_K(madd)(&(acc), (x), (y))

/*
 * 4 int8 weights to float32, exactly: each byte moved to the top of its
 * 32-bit lane and shifted back arithmetically (SSE2 has no pmovsxbd),
 * then converted as int32.
 */
static inline RBLN_OS_INLINE RBLN_K_VF
RBLN_K(i8_load)(const u8 *p)
{
	/* "= { 0 }" only because checkpatch reads a bare one as an extern. */
	s8 q __attribute__((vector_size(16))) = { 0 };
	s16 h __attribute__((vector_size(16))) = { 0 };
	RBLN_K_VI x = { 0 };
	u32 w;

	/*
	 * One u32 (a movd), not a copy into a zeroed vector, which GCC
	 * built on the stack and read back across a store-forwarding
	 * stall (see the AVX2 rbln_k_i8_load()). Byte i fills lane i
	 * (punpcklbw, punpcklwd); the shift keeps its top copy, signed.
	 */
	memcpy(&w, p, sizeof(w));
	x[0] = (s32)w;
	q = (s8 __attribute__((vector_size(16))))x;
	q = __builtin_shufflevector(q, q, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5,
				    6, 6, 7, 7);
	h = (s16 __attribute__((vector_size(16))))q;
	x = (RBLN_K_VI)__builtin_shufflevector(h, h, 0, 0, 1, 1, 2, 2, 3, 3);
	return __builtin_convertvector(x >> 24, RBLN_K_VF);
}

#include "rbln_model_kern_math.h"
#include "rbln_model_kern_mm.h"
#include "rbln_model_kern_nn.h"
#include "rbln_model_kern_attn.h"

const struct rbln_model_kernels rbln_model_kernels_baseline = {
	.name = "baseline",
	.mm = rbln_k_base_mm,
	.embed = rbln_k_base_embed,
	.rms_sumsq = rbln_k_base_rms_sumsq,
	.rms_scale = rbln_k_base_rms_scale,
	.rms_inv = rbln_k_base_rms_inv,
	.rope = rbln_k_base_rope,
	.swiglu = rbln_k_base_swiglu,
	.kv_write = rbln_k_base_kv_write,
	.attn_part = rbln_k_base_attn_part,
	.attn_merge = rbln_k_base_attn_merge,
	.argmax = rbln_k_base_argmax,
	.topk = rbln_k_base_topk,
	.topk_sort = rbln_k_base_topk_sort,
};
