// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_kern_avx2.c - the compute kernels for CPUs with AVX2 and FMA.
 *
 * The bodies are shared with the baseline (rbln_model_kern_base.c); here
 * every function carries target("avx2,fma") and the vectors are 8 floats
 * wide. Multiply-adds of MATMUL and ATTENTION are fused (one rounding):
 * the explicit builtin, never a compiler contraction (both homes build
 * with -ffp-contract=off). In rbln.ko this file is built with CC_FLAGS_FPU
 * and runs only inside kernel_fpu_begin()/_end().
 */

#include "rbln_model_internal.h"

#if defined(__x86_64__)

#define RBLN_K_W	8
#define RBLN_K_VF	float __attribute__((vector_size(32)))
#define RBLN_K_VU	u32 __attribute__((vector_size(32)))
#define RBLN_K_VI	s32 __attribute__((vector_size(32)))
#define RBLN_K_VH	u16 __attribute__((vector_size(16)))
#define RBLN_K_ATTR	__attribute__((__target__("avx2,fma")))
#define RBLN_K(name)	rbln_k_avx2_##name
#define RBLN_K_MR	6
#define RBLN_K_GP	4

/* acc += x * y: one rounding here (FMA), two in the baseline. */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(madd)(RBLN_K_VF *acc, RBLN_K_VF x, RBLN_K_VF y)
{
	*acc = __builtin_ia32_vfmaddps256(x, y, *acc);
}

#define RBLN_K_MADD(acc, x, y)	RBLN_K(madd)(&(acc), (x), (y))

/*
 * 8 int8 weights to float32, exactly: vpmovsxbd then vcvtdq2ps (the
 * generic __builtin_convertvector() from bytes converts lane by lane).
 * The 8 bytes come in as one u64 (a vmovq): copied into a zeroed 16-byte
 * vector, GCC 12 stored the zeros and the 8 bytes to the stack and read
 * the 16 back, a store-forwarding stall on every load that held the
 * int8 GEMV to 2 GB/s on a Zen 3 (rbln-kbench, 2026-12-07).
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(i8_load)(const u8 *p)
{
	/* "= { 0 }" only because checkpatch reads a bare one as an extern. */
	s64 wq __attribute__((vector_size(16))) = { 0 };
	char q __attribute__((vector_size(16))) = { 0 };
	u64 w;

	memcpy(&w, p, sizeof(w));
	wq[0] = (s64)w;
	q = (char __attribute__((vector_size(16))))wq;
#if defined(__clang__)
	/* clang has no GCC pmovsx builtins; this is its vpmovsxbd. */
	char q8 __attribute__((vector_size(8))) =
		__builtin_shufflevector(q, q, 0, 1, 2, 3, 4, 5, 6, 7);

	return __builtin_convertvector(__builtin_convertvector(q8, RBLN_K_VI),
				       RBLN_K_VF);
#else
	return __builtin_convertvector(__builtin_ia32_pmovsxbd256(q),
				       RBLN_K_VF);
#endif
}

#include "rbln_model_kern_math.h"
#include "rbln_model_kern_mm.h"
#include "rbln_model_kern_nn.h"
#include "rbln_model_kern_attn.h"

/*
 * The AVX2 kernels other than MATMUL and ATTENTION, which all the tables
 * below share.
 */
#define RBLN_K_AVX2_NON_MM \
	.embed = rbln_k_avx2_embed, \
	.rms_sumsq = rbln_k_avx2_rms_sumsq, \
	.rms_scale = rbln_k_avx2_rms_scale, \
	.rms_inv = rbln_k_avx2_rms_inv, \
	.rope = rbln_k_avx2_rope, \
	.swiglu = rbln_k_avx2_swiglu, \
	.kv_write = rbln_k_avx2_kv_write, \
	.argmax = rbln_k_avx2_argmax, \
	.topk = rbln_k_avx2_topk, \
	.topk_sort = rbln_k_avx2_topk_sort

/* The AVX-512 ATTENTION (rbln_model_kern_avx512.c). */
#define RBLN_K_AVX512_ATTN \
	.attn_part = rbln_model_attn_part_avx512, \
	.attn_merge = rbln_model_attn_merge_avx512

const struct rbln_model_kernels rbln_model_kernels_avx2 = {
	.name = "avx2",
	.mm = rbln_k_avx2_mm,
	.attn_part = rbln_k_avx2_attn_part,
	.attn_merge = rbln_k_avx2_attn_merge,
	RBLN_K_AVX2_NON_MM,
};

/*
 * The AVX-512 variant: its own MATMUL (rbln_model_kern_avx512.c) and
 * ATTENTION, the AVX2 kernels for the rest (bound by memory, not
 * arithmetic).
 */
const struct rbln_model_kernels rbln_model_kernels_avx512 = {
	.name = "avx512",
	.mm = rbln_model_mm_avx512,
	.mm_a_bf16 = rbln_model_mm_dpbf16,
	.mm_a_bf16_min_rows = RBLN_MODEL_A_BF16_MIN_ROWS,
	RBLN_K_AVX512_ATTN,
	RBLN_K_AVX2_NON_MM,
};

#if !defined(__KERNEL__)
/*
 * The AMX variant (emulated home only): every MATMUL of bf16 weights on
 * tiles (rbln_model_kern_amx.c), the rest as avx512.
 */
const struct rbln_model_kernels rbln_model_kernels_amx = {
	.name = "amx",
	.mm = rbln_model_mm_avx512,
	.mm_tiles = rbln_model_mm_amx,
	.mm_tiles_min_rows = 1,
	.mm_decode = rbln_model_mm_amx_decode,
	.mm_decode_min_rows = RBLN_MODEL_AMX_DECODE_MIN_ROWS,
	RBLN_K_AVX512_ATTN,
	RBLN_K_AVX2_NON_MM,
};

/*
 * What auto takes where amx runs: a MATMUL of RBLN_MODEL_AMX_MIN_ROWS
 * rows or more (a prompt's chunk) on tiles, smaller ones (a decode
 * batch) as avx512, whose GEMV streams weights faster.
 */
const struct rbln_model_kernels rbln_model_kernels_avx512_amx = {
	.name = "avx512+amx",
	.mm = rbln_model_mm_avx512,
	.mm_tiles = rbln_model_mm_amx,
	.mm_tiles_min_rows = RBLN_MODEL_AMX_MIN_ROWS,
	.mm_decode = rbln_model_mm_amx_decode,
	.mm_decode_min_rows = RBLN_MODEL_AMX_DECODE_MIN_ROWS,
	RBLN_K_AVX512_ATTN,
	RBLN_K_AVX2_NON_MM,
};
#endif

#endif
