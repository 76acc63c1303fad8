/* SPDX-License-Identifier: MIT */
/*
 * Element conversions between the checkpoint dtypes, exact where the
 * target can hold the value and rounding to nearest even otherwise (as
 * torch's .to() does), so a --dtype change equals converting the
 * checkpoint with transformers.
 */
#ifndef RBLN_CONVERT_H
#define RBLN_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "rbln_dtype.h"

float rbln_convert_bf16_to_f32(uint16_t h);
float rbln_convert_f16_to_f32(uint16_t h);
uint16_t rbln_convert_f32_to_bf16(float f);
uint16_t rbln_convert_f32_to_f16(float f);

/* n elements from src (src_dt, any alignment) to dst (dst_dt). */
void rbln_convert_elements(void *dst, enum rbln_dtype dst_dt, const void *src,
		      enum rbln_dtype src_dt, size_t n);
/* n floats to dst (dst_dt). */
void rbln_convert_from_f32(void *dst, enum rbln_dtype dst_dt, const float *src, size_t n);

#endif
