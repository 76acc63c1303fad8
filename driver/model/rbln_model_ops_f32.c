// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_ops_f32.c - float32 compute kernels (ADD).
 *
 * The one file of the model with floating-point code. In rbln.ko it is built
 * with CC_FLAGS_FPU and its functions run only between rbln_os_fpu_begin()
 * and rbln_os_fpu_end() (see rbln_model_exec_f32.c); both homes build it
 * with -ffp-contract=off and never with -ffast-math.
 *
 * The kernels use GCC vector extensions: 8 floats per step, as two SSE2
 * operations in the baseline variant and one in the AVX2 variant. IEEE
 * addition is exactly rounded, so the width cannot change a result; the
 * only freedom the compilers have is which NaN an addition returns, and
 * that is pinned down explicitly (rbln_model_add4(), rbln_model_add8()).
 */

#include "rbln_model_internal.h"

/*
 * 16 bytes is an SSE2 register, 32 bytes an AVX one; GCC lowers a 32-byte
 * compare to scalar code when AVX is off, so each variant uses its own
 * register width. Vectors are loaded and stored with memcpy(), which
 * compiles to unaligned vector moves: buffer offsets are only multiples of
 * 4. Type macros rather than typedefs, as kernel style asks.
 */
#define RBLN_F32X4	float __attribute__((vector_size(16)))
#define RBLN_U32X4	u32 __attribute__((vector_size(16)))
#define RBLN_F32X8	float __attribute__((vector_size(32)))
#define RBLN_U32X8	u32 __attribute__((vector_size(32)))

#define RBLN_MODEL_F32_STEP	32U		/* bytes per step: 8 lanes */
#define RBLN_MODEL_F32_QUIET	0x00400000U	/* quiet bit of a NaN */
#define RBLN_MODEL_F32_DEFNAN	0xffc00000U	/* x86 default NaN */

/*
 * rbln_model_add4() and rbln_model_add8() compute, for 4 or 8 lanes, the sum
 * with deterministic NaNs. Which NaN a + b returns when an input is NaN
 * depends on the order of the machine instruction's operands, which a
 * compiler may swap: addition commutes. Selecting the NaN by hand makes the
 * result independent of the compiler (GCC in the kernel, GCC or clang in
 * userspace): a's NaN quieted, else b's, else the default NaN for an
 * invalid operation (inf - inf). Lanes without NaN are the plain IEEE sum,
 * round to nearest even. The two differ only in the vector type.
 *
 * Vectors travel through memory, not as arguments: a 32-byte vector
 * argument has a different ABI with and without AVX.
 */

/**
 * rbln_model_add4() - add 4 float32 lanes with deterministic NaNs
 * @dst: where the 4 sums go
 * @pa: the 4 first operands
 * @pb: the 4 second operands
 */
static inline void rbln_model_add4(u8 *dst, const u8 *pa, const u8 *pb)
{
	RBLN_F32X4 a, b, sum;
	RBLN_U32X4 sum_nan, a_nan, b_nan, r;

	memcpy(&a, pa, sizeof(a));
	memcpy(&b, pb, sizeof(b));
	sum = a + b;
	sum_nan = (RBLN_U32X4)(sum != sum);
	a_nan = (RBLN_U32X4)(a != a);
	b_nan = (RBLN_U32X4)(b != b);
	r = (RBLN_U32X4)sum;

	r = (r & ~sum_nan) | (sum_nan & RBLN_MODEL_F32_DEFNAN);
	r = (r & ~b_nan) | (b_nan & ((RBLN_U32X4)b | RBLN_MODEL_F32_QUIET));
	r = (r & ~a_nan) | (a_nan & ((RBLN_U32X4)a | RBLN_MODEL_F32_QUIET));
	memcpy(dst, &r, sizeof(r));
}

/**
 * rbln_model_add8() - add 8 float32 lanes with deterministic NaNs
 * @dst: where the 8 sums go
 * @pa: the 8 first operands
 * @pb: the 8 second operands
 */
static inline void rbln_model_add8(u8 *dst, const u8 *pa, const u8 *pb)
{
	RBLN_F32X8 a, b, sum;
	RBLN_U32X8 sum_nan, a_nan, b_nan, r;

	memcpy(&a, pa, sizeof(a));
	memcpy(&b, pb, sizeof(b));
	sum = a + b;
	sum_nan = (RBLN_U32X8)(sum != sum);
	a_nan = (RBLN_U32X8)(a != a);
	b_nan = (RBLN_U32X8)(b != b);
	r = (RBLN_U32X8)sum;

	r = (r & ~sum_nan) | (sum_nan & RBLN_MODEL_F32_DEFNAN);
	r = (r & ~b_nan) | (b_nan & ((RBLN_U32X8)b | RBLN_MODEL_F32_QUIET));
	r = (r & ~a_nan) | (a_nan & ((RBLN_U32X8)a | RBLN_MODEL_F32_QUIET));
	memcpy(dst, &r, sizeof(r));
}

/**
 * rbln_model_add_step() - add 8 float32 lanes at the variant's width
 * @dst: where the 8 sums go
 * @a: the 8 first operands
 * @b: the 8 second operands
 * @wide: true for one 32-byte operation, false for two 16-byte ones; a
 *	constant in every caller, so only one branch is compiled
 */
static inline void rbln_model_add_step(u8 *dst, const u8 *a, const u8 *b,
				       bool wide)
{
	if (wide) {
		rbln_model_add8(dst, a, b);
	} else {
		rbln_model_add4(dst, a, b);
		rbln_model_add4(dst + 16, a + 16, b + 16);
	}
}

/**
 * rbln_model_f32_add_body() - dst[i] = a[i] + b[i] for @n elements
 * @dst: output, equal to @a or @b or disjoint from both
 * @a: first input
 * @b: second input
 * @n: number of float32 elements
 * @wide: as for rbln_model_add_step()
 *
 * Inlined into each CPU variant (they are flattened), so that each is
 * compiled for its own instruction set. The tail of fewer than 8 elements
 * goes through the same lane code on a zero-padded copy, so there is one
 * definition of the result for every element.
 */
static inline void rbln_model_f32_add_body(u8 *dst, const u8 *a,
					   const u8 *b, u64 n, bool wide)
{
	u8 ta[RBLN_MODEL_F32_STEP] = { 0 };
	u8 tb[RBLN_MODEL_F32_STEP] = { 0 };
	u8 tr[RBLN_MODEL_F32_STEP];
	u64 len = n * sizeof(float);

	while (len >= RBLN_MODEL_F32_STEP) {
		rbln_model_add_step(dst, a, b, wide);
		dst += RBLN_MODEL_F32_STEP;
		a += RBLN_MODEL_F32_STEP;
		b += RBLN_MODEL_F32_STEP;
		len -= RBLN_MODEL_F32_STEP;
	}
	if (!len)
		return;
	memcpy(ta, a, len);
	memcpy(tb, b, len);
	rbln_model_add_step(tr, ta, tb, wide);
	memcpy(dst, tr, len);
}

/**
 * rbln_model_f32_add_generic() - ADD for any CPU of the architecture
 * @dst: output, equal to @a or @b or disjoint from both
 * @a: first input
 * @b: second input
 * @n: number of float32 elements
 */
__attribute__((__flatten__))
void rbln_model_f32_add_generic(u8 *dst, const u8 *a, const u8 *b, u64 n)
{
	rbln_model_f32_add_body(dst, a, b, n, false);
}

#if defined(__x86_64__)
/**
 * rbln_model_f32_add_avx2() - ADD for CPUs with AVX2 (256-bit lanes)
 * @dst: output, equal to @a or @b or disjoint from both
 * @a: first input
 * @b: second input
 * @n: number of float32 elements
 *
 * Bit-identical to rbln_model_f32_add_generic(): the same source compiled
 * for wider registers.
 */
__attribute__((__target__("avx2"), __flatten__))
void rbln_model_f32_add_avx2(u8 *dst, const u8 *a, const u8 *b, u64 n)
{
	rbln_model_f32_add_body(dst, a, b, n, true);
}
#endif
