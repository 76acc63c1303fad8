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

/**
 * rbln_k_splat() - a vector with @x in every lane (the bits of @x, -0 kept)
 * @x: the value
 *
 * Return: the vector.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF RBLN_K(splat)(float x)
{
	RBLN_K_VF v;
	u32 i;

	for (i = 0; i < RBLN_K_W; i++)
		v[i] = x;
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
	x = __builtin_convertvector(h, RBLN_K_VU);
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

/**
 * rbln_k_hsum() - sum of the lanes of @v in a fixed order
 * @v: the vector
 *
 * Halves are added pairwise down to one lane (lane i + W/2 to lane i,
 * then again), the same tree in every call.
 *
 * Return: the sum.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR float RBLN_K(hsum)(RBLN_K_VF v)
{
	float l[RBLN_K_W];
	u32 n, i;

	memcpy(l, &v, sizeof(l));
	for (n = RBLN_K_W / 2; n; n /= 2)
		for (i = 0; i < n; i++)
			l[i] += l[i + n];
	return l[0];
}

/**
 * rbln_k_hmax() - the largest lane of @v (NaN lanes never win)
 * @v: the vector
 *
 * Return: the maximum, in the same order of comparisons every time.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR float RBLN_K(hmax)(RBLN_K_VF v)
{
	float l[RBLN_K_W], m;
	u32 i;

	memcpy(l, &v, sizeof(l));
	m = l[0];
	for (i = 1; i < RBLN_K_W; i++)
		m = l[i] > m ? l[i] : m;
	return m;
}

#define RBLN_K_F8	float __attribute__((vector_size(32)))

#if RBLN_K_W >= 8
/* rbln_k_hsum4()'s tree on four 8-lane vectors. */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(hsum4_8)(RBLN_K_F8 v0, RBLN_K_F8 v1, RBLN_K_F8 v2, RBLN_K_F8 v3,
		float *out)
{
	RBLN_K_F8 a = __builtin_shufflevector(v0, v1, 0, 2, 8, 10, 4, 6, 12,
					      14) +
		      __builtin_shufflevector(v0, v1, 1, 3, 9, 11, 5, 7, 13, 15);
	RBLN_K_F8 b = __builtin_shufflevector(v2, v3, 0, 2, 8, 10, 4, 6, 12,
					      14) +
		      __builtin_shufflevector(v2, v3, 1, 3, 9, 11, 5, 7, 13, 15);
	RBLN_K_F8 c = __builtin_shufflevector(a, b, 0, 2, 8, 10, 4, 6, 12,
					      14) +
		      __builtin_shufflevector(a, b, 1, 3, 9, 11, 5, 7, 13, 15);
	RBLN_K_F4 r;

	r = __builtin_shufflevector(c, c, 0, 1, 2, 3) +
	    __builtin_shufflevector(c, c, 4, 5, 6, 7);
	memcpy(out, &r, 4 * sizeof(float));
}
#endif

/**
 * rbln_k_hsum4() - the lane sums of four vectors at once
 * @v: the four vectors
 * @out: their four sums
 *
 * A transposing tree of pairwise adds (a shuffle network instead of four
 * separate reductions): adjacent lanes first, then pairs of pairs, then
 * the two halves of a 256-bit vector. 16-lane vectors first add their
 * 256-bit halves (lane i + 8 to lane i). A fixed order, like
 * rbln_k_hsum()'s but not the same one.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(hsum4)(const RBLN_K_VF *v, float *out)
{
#if RBLN_K_W == 16
	RBLN_K_F8 h[4];
	u32 i;

	for (i = 0; i < 4; i++)
		h[i] = __builtin_shufflevector(v[i], v[i], 0, 1, 2, 3, 4, 5, 6,
					       7) +
		       __builtin_shufflevector(v[i], v[i], 8, 9, 10, 11, 12,
					       13, 14, 15);
	RBLN_K(hsum4_8)(h[0], h[1], h[2], h[3], out);
#elif RBLN_K_W == 8
	RBLN_K(hsum4_8)(v[0], v[1], v[2], v[3], out);
#else
	RBLN_K_VF a = __builtin_shufflevector(v[0], v[1], 0, 2, 4, 6) +
		      __builtin_shufflevector(v[0], v[1], 1, 3, 5, 7);
	RBLN_K_VF b = __builtin_shufflevector(v[2], v[3], 0, 2, 4, 6) +
		      __builtin_shufflevector(v[2], v[3], 1, 3, 5, 7);
	RBLN_K_VF r = __builtin_shufflevector(a, b, 0, 2, 4, 6) +
		      __builtin_shufflevector(a, b, 1, 3, 5, 7);

	memcpy(out, &r, 4 * sizeof(float));
#endif
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
