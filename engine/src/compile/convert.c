// SPDX-License-Identifier: MIT
/* dtype conversions by bit manipulation (see convert.h). */
#include "compile/convert.h"

#include <string.h>

static float bits_to_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static uint32_t f32_to_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

float rbln_convert_bf16_to_f32(uint16_t h)
{
	return bits_to_f32((uint32_t)h << 16);
}

float rbln_convert_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;

	if (exp == 0x1f)		/* inf, NaN (payload kept) */
		return bits_to_f32(sign | 0x7f800000u | man << 13);
	if (exp)
		return bits_to_f32(sign | (exp + 112) << 23 | man << 13);
	if (!man)
		return bits_to_f32(sign);
	/* Subnormal: value man * 2^-24, exact in float32. */
	{
		float v = (float)man * 5.9604644775390625e-8f;

		return sign ? -v : v;
	}
}

uint16_t rbln_convert_f32_to_bf16(float f)
{
	uint32_t u = f32_to_bits(f);

	if ((u & 0x7fffffffu) > 0x7f800000u)	/* NaN: keep it a quiet NaN */
		return (uint16_t)(u >> 16 | 0x40);
	u += 0x7fffu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

uint16_t rbln_convert_f32_to_f16(float f)
{
	uint32_t u = f32_to_bits(f);
	uint16_t sign = (uint16_t)(u >> 16 & 0x8000);
	uint32_t a = u & 0x7fffffffu;
	int32_t exp;
	uint32_t man, half, rem;

	if (a > 0x7f800000u)
		return sign | 0x7e00 | (uint16_t)(a >> 13 & 0x3ff);
	if (a >= 0x477ff000u)		/* rounds to 65520 or more: inf */
		return sign | 0x7c00;
	exp = (int32_t)(a >> 23) - 127;
	if (exp >= -14) {		/* normal half: round 13 bits away */
		man = a & 0x7fffff;
		half = (uint32_t)(exp + 15) << 10 | man >> 13;
		rem = man & 0x1fff;
		if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
			half++;		/* may carry into the exponent: correct */
		return sign | (uint16_t)half;
	}
	if (exp < -25)			/* below half the smallest subnormal */
		return sign;
	/* Subnormal: the value in units of 2^-24, rounded to nearest even. */
	man = (a & 0x7fffff) | 0x800000;
	{
		uint32_t shift = (uint32_t)(-exp - 14 + 13);	/* 14..24 */
		uint32_t q = man >> shift, r = man & ((1u << shift) - 1), h = 1u << (shift - 1);

		if (r > h || (r == h && (q & 1)))
			q++;
		return sign | (uint16_t)q;
	}
}

static float load_f32(const void *src, enum rbln_dtype dt, size_t i)
{
	const unsigned char *p = src;
	uint16_t h;
	float f;

	if (dt == RBLN_TENSOR_F32) {
		memcpy(&f, p + 4 * i, 4);
		return f;
	}
	memcpy(&h, p + 2 * i, 2);
	return dt == RBLN_TENSOR_BF16 ? rbln_convert_bf16_to_f32(h) : rbln_convert_f16_to_f32(h);
}

void rbln_convert_from_f32(void *dst, enum rbln_dtype dst_dt, const float *src, size_t n)
{
	unsigned char *d = dst;
	size_t i;
	uint16_t h;

	if (dst_dt == RBLN_TENSOR_F32) {
		memcpy(dst, src, 4 * n);
		return;
	}
	for (i = 0; i < n; i++) {
		h = dst_dt == RBLN_TENSOR_BF16 ? rbln_convert_f32_to_bf16(src[i]) :
						rbln_convert_f32_to_f16(src[i]);
		memcpy(d + 2 * i, &h, 2);
	}
}

void rbln_convert_elements(void *dst, enum rbln_dtype dst_dt, const void *src,
		      enum rbln_dtype src_dt, size_t n)
{
	unsigned char *d = dst;
	size_t i;

	if (dst_dt == src_dt) {
		memcpy(dst, src, n * rbln_dtype_size(dst_dt));
		return;
	}
	for (i = 0; i < n; i++) {
		float f = load_f32(src, src_dt, i);

		rbln_convert_from_f32(d + i * rbln_dtype_size(dst_dt), dst_dt, &f, 1);
	}
}
