// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_ops_dma.c - the DMA engine: FILL and COPY.
 *
 * Both move at most RBLN_MODEL_DMA_CHUNK bytes between two checks of
 * env->cancelled(), so a reset or unplug never waits for a multi-gigabyte
 * transfer to finish, and a kernel engine thread is never stuck in one call
 * for long.
 */

#include "rbln_model_internal.h"

/*
 * FILL writes the pattern into a small prefix by doubling, then replicates
 * that prefix, which stays in the L1 cache, over the rest.
 */
#define RBLN_MODEL_FILL_BLOCK	4096U

/**
 * rbln_model_min() - the smaller of two sizes
 * @x: one size
 * @y: the other
 *
 * Return: the smaller.
 */
static u64 rbln_model_min(u64 x, u64 y)
{
	return x < y ? x : y;
}

/**
 * rbln_model_fill_span() - store a 32-bit pattern over a range
 * @dst: start of the range, any alignment
 * @len: its length, a non-zero multiple of 4
 * @value: the pattern, stored little-endian (the host's order)
 */
static void rbln_model_fill_span(u8 *dst, u64 len, u32 value)
{
	u64 done = sizeof(value);
	u64 n;

	if ((value & 0xff) * 0x01010101U == value) {
		memset(dst, value & 0xff, len);
		return;
	}
	memcpy(dst, &value, sizeof(value));
	/* Doubling keeps the copy's source and destination disjoint. */
	while (done < len && done < RBLN_MODEL_FILL_BLOCK) {
		n = rbln_model_min(done, len - done);
		memcpy(dst + done, dst, n);
		done += n;
	}
	/* @done is a multiple of 4, so every block starts in phase. */
	while (done < len) {
		n = rbln_model_min(RBLN_MODEL_FILL_BLOCK, len - done);
		memcpy(dst + done, dst, n);
		done += n;
	}
}

/**
 * rbln_model_fill() - RBLN_OP_FILL
 * @dst: destination, its length a non-zero multiple of 4
 * @size: length in bytes
 * @value: the 32-bit pattern
 * @env: the home's services
 *
 * Return: 0, or -RBLN_ECANCELED with a prefix of @dst written.
 */
int rbln_model_fill(u8 *dst, u64 size, u32 value,
		    const struct rbln_model_env *env)
{
	u64 done = 0;
	u64 n;

	while (done < size) {
		if (done && env->cancelled(env->priv))
			return -RBLN_ECANCELED;
		/* The chunk is a multiple of 4: each chunk starts in phase. */
		n = rbln_model_min(size - done, RBLN_MODEL_DMA_CHUNK);
		rbln_model_fill_span(dst + done, n, value);
		done += n;
	}
	return 0;
}

/**
 * rbln_model_copy() - RBLN_OP_COPY, as if @src were read whole first
 * @dst: destination
 * @src: source, which may overlap @dst
 * @size: bytes to copy, non-zero
 * @env: the home's services
 *
 * Chunks run front to back unless @dst overlaps @src from above; then they
 * run back to front, so no chunk overwrites source bytes a later chunk still
 * has to read. Within a chunk memmove() handles the overlap.
 *
 * Return: 0, or -RBLN_ECANCELED with part of @dst written.
 */
int rbln_model_copy(u8 *dst, const u8 *src, u64 size,
		    const struct rbln_model_env *env)
{
	uintptr_t d = (uintptr_t)dst;
	uintptr_t s = (uintptr_t)src;
	bool overlap = d < s + size && s < d + size;
	u64 done = 0;
	u64 n;

	if (overlap && d > s) {
		while (done < size) {
			if (done && env->cancelled(env->priv))
				return -RBLN_ECANCELED;
			n = rbln_model_min(size - done, RBLN_MODEL_DMA_CHUNK);
			done += n;
			memmove(dst + size - done, src + size - done, n);
		}
		return 0;
	}
	while (done < size) {
		if (done && env->cancelled(env->priv))
			return -RBLN_ECANCELED;
		n = rbln_model_min(size - done, RBLN_MODEL_DMA_CHUNK);
		if (overlap)
			memmove(dst + done, src + done, n);
		else
			memcpy(dst + done, src + done, n);
		done += n;
	}
	return 0;
}
