/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * rbln_model_kern_math.h - the arithmetic the compute kernels share:
 * element conversions, a vector exp and the scalar double functions of
 * ROPE, compiled once per CPU variant.
 *
 * Neither home has a math library the other has (the kernel has none), so
 * exp, log, sin and cos are written here, from fixed operations only:
 * their results are the same bits in both homes and in both variants (the
 * FMA of the AVX2 variant is never used here).
 *
 * The including file defines:
 *   RBLN_K_W       float lanes per vector (4, 8, 16)
 *   RBLN_K_VF      vector of RBLN_K_W float
 *   RBLN_K_VU      vector of RBLN_K_W u32
 *   RBLN_K_VI      vector of RBLN_K_W s32
 *   RBLN_K_VH      vector of RBLN_K_W u16
 *   RBLN_K_ATTR    the variant's target attribute (or nothing)
 *   RBLN_K(name)   the variant's name for a function
 *   RBLN_K_MADD(acc, x, y) acc += x * y (fused in the AVX2 variant)
 *   RBLN_K_MR      rows of the MATMUL register tile
 *   RBLN_K_GP      panels the GEMV runs side by side
 */

/*
 * RBLN_K_ASAN: compiled with AddressSanitizer. GCC defines
 * __SANITIZE_ADDRESS__, as the kernel's compiler-clang.h does for clang;
 * clang in userspace may say so only through __has_feature(), which older
 * GCC lacks, so that test is an #if of its own.
 */
#if defined(__SANITIZE_ADDRESS__)
#define RBLN_K_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RBLN_K_ASAN 1
#endif
#endif

/**
 * rbln_k_splat() - a vector with @x in every lane (the bits of @x, -0 kept)
 * @x: the value
 *
 * Return: the vector.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF RBLN_K(splat)(float x)
{
#ifdef RBLN_K_ASAN
	/*
	 * With AddressSanitizer a vector written lane by lane stays in
	 * memory, each lane's store checked: sixteen per row and k in the
	 * MATMUL tiles, which made the sanitized test suite's model runs
	 * 40 times slower than the plain ones. An initializer is one
	 * broadcast. Other builds keep the loop, which GCC already turns
	 * into one broadcast, so the tuned kernels' machine code stays as
	 * it was measured (the values are the same either way).
	 */
#if RBLN_K_W == 16
	RBLN_K_VF v = { x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x };
#elif RBLN_K_W == 8
	RBLN_K_VF v = { x, x, x, x, x, x, x, x };
#else
	RBLN_K_VF v = { x, x, x, x };
#endif
#else
	RBLN_K_VF v;
	u32 i;

	for (i = 0; i < RBLN_K_W; i++)
		v[i] = x;
#endif
	return v;
}

#define RBLN_K_SPLAT(x)	RBLN_K(splat)(x)

#define RBLN_K_F4	float __attribute__((vector_size(16)))
#define RBLN_K_F16_INF		0x7c00U
#define RBLN_K_F32_EXP		0x7f800000U
#define RBLN_K_F32_ABS		0x7fffffffU
#define RBLN_K_F32_SIGN		0x80000000U

/*
 * Vector select: lanes of @m (all ones or zero) pick @a, the others @b.
 * Integer masks, so that a NaN is moved, never computed with.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(sel)(RBLN_K_VI m, RBLN_K_VF a, RBLN_K_VF b)
{
	return (RBLN_K_VF)(((RBLN_K_VU)m & (RBLN_K_VU)a) |
			   (~(RBLN_K_VU)m & (RBLN_K_VU)b));
}

/* A vector of zeros (a compound literal confuses kernel style checks). */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF RBLN_K(zero)(void)
{
	RBLN_K_VF v = { 0 };

	return v;
}

/*
 * RBLN_K_W u16 lanes zero-extended to u32. A variant may name one
 * instruction for it (RBLN_K_WIDEN16): GCC builds the generic conversion
 * of 16 lanes from two halves.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VU RBLN_K(widen16)(RBLN_K_VH h)
{
#ifdef RBLN_K_WIDEN16
	return RBLN_K_WIDEN16(h);
#else
	return __builtin_convertvector(h, RBLN_K_VU);
#endif
}

/**
 * rbln_k_f16_load() - widen RBLN_K_W float16 values to float32 (exact)
 * @p: the values, any alignment
 *
 * Integer moves place sign, exponent and mantissa; one multiplication by
 * 2^112 rebiases the exponent of normal and subnormal values alike (exact:
 * every float16 is a float32). Infinities and NaNs get the float32
 * exponent directly, NaN payloads kept.
 *
 * Return: the widened values.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF RBLN_K(f16_load)(const u8 *p)
{
	const RBLN_K_VF rebias = RBLN_K_SPLAT(5192296858534827628530496329220096.0f);
	RBLN_K_VH h;
	RBLN_K_VU x, em, sign, bits;
	RBLN_K_VI special;
	RBLN_K_VF f;

	memcpy(&h, p, sizeof(h));
	x = RBLN_K(widen16)(h);
	sign = (x & 0x8000U) << 16;
	em = x & 0x7fffU;
	bits = em << 13;
	special = (RBLN_K_VI)em >= (RBLN_K_VI){ 0 } + (int)RBLN_K_F16_INF;
	f = (RBLN_K_VF)bits * rebias;
	bits = ((RBLN_K_VU)special & (bits | RBLN_K_F32_EXP)) |
	       (~(RBLN_K_VU)special & (RBLN_K_VU)f);
	return (RBLN_K_VF)(bits | sign);
}

/**
 * rbln_k_f16_to_f32() - widen one float16 value, as rbln_k_f16_load() does
 * @h: the value
 *
 * Return: the bits of the float32 value.
 */
static inline RBLN_K_ATTR u32 RBLN_K(f16_to_f32)(u16 h)
{
	u32 sign = (u32)(h & 0x8000U) << 16;
	u32 em = h & 0x7fffU;
	u32 bits = em << 13;
	float f;

	if (em >= RBLN_K_F16_INF)
		return bits | RBLN_K_F32_EXP | sign;
	memcpy(&f, &bits, sizeof(f));
	f *= 5192296858534827628530496329220096.0f;
	memcpy(&bits, &f, sizeof(bits));
	return bits | sign;
}

/**
 * rbln_k_f32_to_bf16() - narrow to bfloat16, rounding to nearest even
 * @x: float32 bits
 *
 * NaNs stay NaNs (quieted, sign and upper payload kept); overflow rounds
 * to infinity as IEEE rounding does.
 *
 * Return: the bfloat16 bits.
 */
static inline RBLN_K_ATTR u16 RBLN_K(f32_to_bf16)(u32 x)
{
	if ((x & RBLN_K_F32_ABS) > RBLN_K_F32_EXP)
		return (u16)((x >> 16) | 0x40U);
	return (u16)((x + 0x7fffU + ((x >> 16) & 1U)) >> 16);
}

/**
 * rbln_k_f32_to_f16() - narrow to float16, rounding to nearest even
 * @x: float32 bits
 *
 * Subnormal results are rounded as such, values from 65520 up become
 * infinity, NaNs stay NaNs (quieted, upper payload kept). Integer code
 * only, so every variant and home gives the same bits.
 *
 * Return: the float16 bits.
 */
static inline RBLN_K_ATTR u16 RBLN_K(f32_to_f16)(u32 x)
{
	u32 sign = (x >> 16) & 0x8000U;
	u32 a = x & RBLN_K_F32_ABS;
	s32 e = (s32)(a >> 23) - 127 + 15;
	u32 m, shift, half, rem;

	if (a > RBLN_K_F32_EXP)
		return (u16)(sign | 0x7e00U | ((a >> 13) & 0x3ffU));
	if (e >= 31)
		return (u16)(sign | RBLN_K_F16_INF);
	if (e <= 0) {
		/* Subnormal or zero: shift the full mantissa down. */
		if (e < -10)
			return (u16)sign;
		m = (a & 0x7fffffU) | 0x800000U;
		shift = (u32)(14 - e);
		half = 1U << (shift - 1);
		rem = m & ((1U << shift) - 1);
		m >>= shift;
		if (rem > half || (rem == half && (m & 1U)))
			m++;
		return (u16)(sign | m);
	}
	m = a >> 13;
	rem = a & 0x1fffU;
	/* Rebias the exponent in place; a carry may reach infinity. */
	m = ((u32)e << 10) | (m & 0x3ffU);
	if (rem > 0x1000U || (rem == 0x1000U && (m & 1U)))
		m++;
	return (u16)(sign | m);
}

/**
 * rbln_k_vexp() - e^x for each lane, float32
 * @x: the exponents
 *
 * Cody-Waite reduction x = n ln2 + r, a degree-7 polynomial for e^r (the
 * Cephes expf coefficients) and a scale by 2^n in two steps, so that
 * results down to the subnormal range are rounded once and results above
 * the float range become +inf. Below -104 the result is +0, NaN stays NaN.
 * Separate multiplies and adds in every variant: the same bits everywhere,
 * within 2 ulp of e^x.
 *
 * Return: the values.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF RBLN_K(vexp)(RBLN_K_VF x)
{
	const RBLN_K_VF lo = RBLN_K_SPLAT(-104.0f);
	const RBLN_K_VF hi = RBLN_K_SPLAT(89.0f);
	const RBLN_K_VF magic = RBLN_K_SPLAT(12582912.0f);
	RBLN_K_VF t, nf, r, p;
	RBLN_K_VI n, n1, n2;

	x = RBLN_K(sel)(x < lo, lo, x);
	x = RBLN_K(sel)(x > hi, hi, x);
	/* Adding 1.5 * 2^23 rounds to an integer held in the low bits. */
	t = x * 1.44269504088896341f + magic;
	nf = t - magic;
	n = (RBLN_K_VI)t - (RBLN_K_VI)magic;
	r = x - nf * 0.693359375f;
	r = r - nf * -0.000212194440f;
	p = r * 0.00019875691500f + 0.0013981999507f;
	p = p * r + 0.0083334519073f;
	p = p * r + 0.041665795894f;
	p = p * r + 0.16666665459f;
	p = p * r + 0.50000001201f;
	p = p * (r * r) + r + 1.0f;
	n1 = n >> 1;
	n2 = n - n1;
	p = p * (RBLN_K_VF)((n1 + 127) << 23);
	return p * (RBLN_K_VF)((n2 + 127) << 23);
}

/*
 * Lane i of the result is lane i ^ @n of @v (@n a constant power of two
 * below RBLN_K_W): each lane's partner in a halving tree, by one shuffle.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(xlane)(RBLN_K_VF v, u32 n)
{
#if RBLN_K_W == 16
	if (n == 8)
		return __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14,
					       15, 0, 1, 2, 3, 4, 5, 6, 7);
	if (n == 4)
		return __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3, 12,
					       13, 14, 15, 8, 9, 10, 11);
	if (n == 2)
		return __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5, 10,
					       11, 8, 9, 14, 15, 12, 13);
	return __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11,
				       10, 13, 12, 15, 14);
#elif RBLN_K_W == 8
	if (n == 4)
		return __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3);
	if (n == 2)
		return __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5);
	return __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6);
#else
	if (n == 2)
		return __builtin_shufflevector(v, v, 2, 3, 0, 1);
	return __builtin_shufflevector(v, v, 1, 0, 3, 2);
#endif
}

/*
 * The even lanes of @a then of @b (rbln_k_evens()), the odd ones
 * (rbln_k_odds()), and back (rbln_k_interleave(): @hi 0, the first W
 * lanes of the interleaved even and odd ones; 1, the last W).
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(evens)(RBLN_K_VF a, RBLN_K_VF b)
{
#if RBLN_K_W == 16
	return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18,
				       20, 22, 24, 26, 28, 30);
#elif RBLN_K_W == 8
	return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
#else
	return __builtin_shufflevector(a, b, 0, 2, 4, 6);
#endif
}

static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(odds)(RBLN_K_VF a, RBLN_K_VF b)
{
#if RBLN_K_W == 16
	return __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19,
				       21, 23, 25, 27, 29, 31);
#elif RBLN_K_W == 8
	return __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15);
#else
	return __builtin_shufflevector(a, b, 1, 3, 5, 7);
#endif
}

static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(interleave)(RBLN_K_VF ev, RBLN_K_VF od, u32 hi)
{
#if RBLN_K_W == 16
	if (hi)
		return __builtin_shufflevector(ev, od, 8, 24, 9, 25, 10, 26, 11,
					       27, 12, 28, 13, 29, 14, 30, 15,
					       31);
	return __builtin_shufflevector(ev, od, 0, 16, 1, 17, 2, 18, 3, 19, 4,
				       20, 5, 21, 6, 22, 7, 23);
#elif RBLN_K_W == 8
	if (hi)
		return __builtin_shufflevector(ev, od, 4, 12, 5, 13, 6, 14, 7,
					       15);
	return __builtin_shufflevector(ev, od, 0, 8, 1, 9, 2, 10, 3, 11);
#else
	if (hi)
		return __builtin_shufflevector(ev, od, 2, 6, 3, 7);
	return __builtin_shufflevector(ev, od, 0, 4, 1, 5);
#endif
}

/**
 * rbln_k_tsum() - one level of a transposing sum of vectors
 * @a: partial sums of some tokens, each in runs of 2 @n lanes
 * @b: the same for as many other tokens
 * @n: half a run, a constant power of two below RBLN_K_W
 *
 * Each run of 2 @n lanes is folded to @n lanes (its first half plus its
 * second, lane by lane), @a's runs first, then @b's. Starting from W
 * vectors of one token each and @n = W/2, W/4, ..., 1, this leaves one
 * vector whose lane t is the sum of token t's vector: W horizontal sums
 * for 2W - 2 shuffles, in a fixed order.
 *
 * Return: the folded runs of @a, then of @b.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(tsum)(RBLN_K_VF a, RBLN_K_VF b, u32 n)
{
#if RBLN_K_W == 16
	if (n == 8)
		return __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 16,
					       17, 18, 19, 20, 21, 22, 23) +
		       __builtin_shufflevector(a, b, 8, 9, 10, 11, 12, 13, 14,
					       15, 24, 25, 26, 27, 28, 29, 30,
					       31);
	if (n == 4)
		return __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10, 11,
					       16, 17, 18, 19, 24, 25, 26,
					       27) +
		       __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14, 15,
					       20, 21, 22, 23, 28, 29, 30,
					       31);
	if (n == 2)
		return __builtin_shufflevector(a, b, 0, 1, 4, 5, 8, 9, 12, 13,
					       16, 17, 20, 21, 24, 25, 28,
					       29) +
		       __builtin_shufflevector(a, b, 2, 3, 6, 7, 10, 11, 14, 15,
					       18, 19, 22, 23, 26, 27, 30,
					       31);
	return RBLN_K(evens)(a, b) + RBLN_K(odds)(a, b);
#elif RBLN_K_W == 8
	if (n == 4)
		return __builtin_shufflevector(a, b, 0, 1, 2, 3, 8, 9, 10,
					       11) +
		       __builtin_shufflevector(a, b, 4, 5, 6, 7, 12, 13, 14,
					       15);
	if (n == 2)
		return __builtin_shufflevector(a, b, 0, 1, 4, 5, 8, 9, 12,
					       13) +
		       __builtin_shufflevector(a, b, 2, 3, 6, 7, 10, 11, 14,
					       15);
	return RBLN_K(evens)(a, b) + RBLN_K(odds)(a, b);
#else
	if (n == 2)
		return __builtin_shufflevector(a, b, 0, 1, 4, 5) +
		       __builtin_shufflevector(a, b, 2, 3, 6, 7);
	return RBLN_K(evens)(a, b) + RBLN_K(odds)(a, b);
#endif
}

/**
 * rbln_k_hsum() - sum of the lanes of @v in a fixed order
 * @v: the vector
 *
 * Halves are added pairwise down to one lane (lane i + W/2 to lane i,
 * then again), the same tree in every call, by shuffles.
 *
 * Return: the sum.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR float RBLN_K(hsum)(RBLN_K_VF v)
{
	u32 n;

#pragma GCC unroll 4
	for (n = RBLN_K_W / 2; n; n /= 2)
		v = v + RBLN_K(xlane)(v, n);
	return v[0];
}

/**
 * rbln_k_hmax() - the largest lane of @v (NaN lanes other than lane 0
 *	never win)
 * @v: the vector
 *
 * A halving tree of "partner > lane" selects, the same every call; where
 * the largest value is a zero, either sign may win.
 *
 * Return: the maximum.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR float RBLN_K(hmax)(RBLN_K_VF v)
{
	RBLN_K_VF x;
	u32 n;

#pragma GCC unroll 4
	for (n = RBLN_K_W / 2; n; n /= 2) {
		x = RBLN_K(xlane)(v, n);
		v = RBLN_K(sel)(x > v, x, v);
	}
	return v[0];
}

/* ------------------------------------------------------ double scalars */

/**
 * rbln_k_log() - natural logarithm of a positive finite double
 * @x: the argument
 *
 * x = 2^e m with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s) with
 * s = (m - 1) / (m + 1), |s| < 0.172, summed to s^23 (error below 1e-18).
 *
 * Return: ln x, within a few ulp.
 */
static inline RBLN_K_ATTR double RBLN_K(log)(double x)
{
	u64 bits;
	s32 e;
	double m, s, s2, t, sum;
	u32 i;

	memcpy(&bits, &x, sizeof(bits));
	e = (s32)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
	memcpy(&m, &bits, sizeof(m));
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	s = (m - 1.0) / (m + 1.0);
	s2 = s * s;
	t = s;
	sum = 0.0;
	for (i = 1; i <= 23; i += 2) {
		sum += t / (double)i;
		t *= s2;
	}
	return (double)e * 0.693147180369123816490 +
	       ((double)e * 0.000000000190821492927058770002 + 2.0 * sum);
}

/**
 * rbln_k_exp() - e^x for a double of moderate size (|x| < 700)
 * @x: the argument
 *
 * Return: e^x, within a few ulp.
 */
static inline RBLN_K_ATTR double RBLN_K(exp)(double x)
{
	double k = (x * 1.44269504088896338700 + 6755399441055744.0) -
		   6755399441055744.0;
	double r = (x - k * 0.693147180369123816490) -
		   k * 0.000000000190821492927058770002;
	double term = 1.0, sum = 1.0;
	u64 bits;
	u32 i;

	for (i = 1; i <= 14; i++) {
		term = term * r / (double)i;
		sum += term;
	}
	bits = (u64)((s64)k + 1023) << 52;
	memcpy(&r, &bits, sizeof(r));
	return sum * r;
}

/**
 * rbln_k_sincos() - sine and cosine of a float32 angle, in double
 * @x: the angle, finite, |x| < 2^31
 * @s: its sine
 * @c: its cosine
 *
 * Reduction by pi/2 in four 21-bit parts, so that k * part is exact for
 * any k below 2^31; the fdlibm kernels on [-pi/4, pi/4].
 */
static inline RBLN_K_ATTR void RBLN_K(sincos)(double x, double *s, double *c)
{
	double k = (x * 0.636619772367581382433 + 6755399441055744.0) -
		   6755399441055744.0;
	double r = x - k * 1.570796012878418;
	double z, sn, cs;
	s64 q;

	r -= k * 0.0000003139164164167596;
	r -= k * 0.00000000000006223369259164557;
	r -= k * 0.000000000000000000029127304114676625;
	z = r * r;
	sn = r + r * z * (-0.166666666666666324348 +
	     z * (0.00833333333332248946124 +
	     z * (-0.000198412698298579493134 +
	     z * (0.00000275573137070700676789 +
	     z * (-0.0000000250507602534068634195 +
	     z * 0.000000000158969099521155010221)))));
	cs = 1.0 - 0.5 * z + z * z * (0.0416666666666666019037 +
	     z * (-0.00138888888888741095749 +
	     z * (0.0000248015872894767294178 +
	     z * (-0.000000275573143513906633035 +
	     z * (0.00000000208757232129817482790 +
	     z * -0.0000000000113596475577881948265)))));
	q = (s64)k & 3;
	if (q == 0) {
		*s = sn;
		*c = cs;
	} else if (q == 1) {
		*s = cs;
		*c = -sn;
	} else if (q == 2) {
		*s = -sn;
		*c = -cs;
	} else {
		*s = -cs;
		*c = sn;
	}
}
