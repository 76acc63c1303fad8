/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * model_test.h - helpers shared by the device-model unit tests: a stream
 * builder, a seeded random generator, plain-C reference implementations of
 * the opcodes and a fake home (&struct rbln_model_env) whose clock,
 * cancellation and engines the tests control.
 */
#ifndef MODEL_TEST_H
#define MODEL_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rbln_model_internal.h"

/* ------------------------------------------------------------ streams */

/**
 * struct sb - a command stream under construction
 * @buf: the bytes (header first)
 * @len: bytes used
 * @cap: bytes allocated
 * @ncmds: commands appended
 * @offsets: byte offset of each command
 */
struct sb {
	uint8_t *buf;
	size_t len;
	size_t cap;
	uint32_t ncmds;
	uint32_t offsets[8192];
};

#define OPND(b, off, sz) \
	((struct rbln_isa_operand){ .bo = (b), .offset = (off), .size = (sz) })

void sb_init(struct sb *sb);
void sb_free(struct sb *sb);
/* Appends a command of @size bytes (copied from @cmd) and returns its index. */
uint32_t sb_raw(struct sb *sb, const void *cmd, size_t size);
uint32_t sb_nop(struct sb *sb, uint16_t size);
uint32_t sb_barrier(struct sb *sb);
uint32_t sb_fill(struct sb *sb, struct rbln_isa_operand dst, uint32_t value);
uint32_t sb_copy(struct sb *sb, struct rbln_isa_operand dst,
		 struct rbln_isa_operand src);
uint32_t sb_signal(struct sb *sb, struct rbln_isa_operand sem, uint32_t op,
		   uint64_t value);
uint32_t sb_wait(struct sb *sb, struct rbln_isa_operand sem, uint32_t cond,
		 uint64_t value, uint64_t timeout_ns);
uint32_t sb_add(struct sb *sb, struct rbln_isa_operand dst,
		struct rbln_isa_operand a, struct rbln_isa_operand b);
/* The command's bytes, to corrupt a field after building. */
void *sb_cmd(struct sb *sb, uint32_t index);
/* Sets the header's size field to the stream length. */
void sb_seal(struct sb *sb);

/* ------------------------------------------------------------ random */

/* Seeds from RBLN_TEST_SEED or the clock, and prints the seed as TAP. */
void rng_seed_from_env(void);
uint64_t rng_next(void);
/* Uniform in [lo, hi]. */
uint64_t rng_range(uint64_t lo, uint64_t hi);
void rng_bytes(void *p, size_t n);
/* float32 bit patterns, a third of them special (NaN, inf, denormal, 0). */
void rng_floats(void *p, size_t n);

/* ------------------------------------------------------------ reference */

void ref_fill(uint8_t *dst, uint64_t size, uint32_t value);
void ref_copy(uint8_t *dst, const uint8_t *src, uint64_t size);
/* The ADD contract of rbln_model.h, one element at a time. */
uint32_t ref_add1(uint32_t a, uint32_t b);
void ref_add(uint8_t *dst, const uint8_t *a, const uint8_t *b, uint64_t n);

/* ------------------------------------------------------------ compute */

/* A command of the compute opcodes, appended as it is. */
#define sb_cmd_struct(sb, c) sb_raw((sb), &(c), sizeof(c))

/* Uniform float in [lo, hi) (never all zeros over a buffer). */
float rng_uniform(float lo, float hi);
/* @n floats, uniform in [lo, hi). */
void rng_fill(float *p, size_t n, float lo, float hi);

/* Conversions of the tests' own (independent of the model's). */
uint16_t test_f32_to_bf16(float x);
float test_bf16_to_f32(uint16_t h);
uint16_t test_f32_to_f16(float x);
float test_f16_to_f32(uint16_t h);
/*
 * One past the float types, the types of every dtype field; RBLN_DTYPE_I8
 * is only MATMUL's weight type (test_mm.c).
 */
#define TEST_FLOAT_DTYPES	RBLN_DTYPE_I8

uint32_t test_dtype_size(uint32_t dtype);
/* Stores @n floats as @dtype at @dst; returns them as stored (rounded). */
void test_store(void *dst, uint32_t dtype, float *vals, size_t n);
float test_load(const void *src, uint32_t dtype, size_t i);
uint32_t f32_bits(float x);
float bits_f32(uint32_t x);

/* A buffer of @n bytes, each 0xff (float NaN, int32 -1): "poisoned". */
uint8_t *poisoned(size_t n);

/*
 * The CPU variants this machine can run: RBLN_MODEL_CPU_BASELINE, and
 * RBLN_MODEL_CPU_AVX2, _AVX512, _AMX and _AVX512_AMX when the CPU has
 * them (at most
 * RBLN_MODEL_CPU_COUNT entries). Returns how many.
 */
uint32_t test_variants(uint32_t *v);
/* Forces variant @v (asserting that the model accepts it). */
void test_set_variant(uint32_t v);

/* ------------------------------------------------------------ fake home */

/**
 * struct fake_env - a home the tests script
 * @env: what the model sees; priv points back here
 * @now: the clock, advanced by @tick on every now_ns() call
 * @tick: nanoseconds per now_ns() call
 * @now_calls: now_ns() calls so far
 * @cancel_after: cancelled() turns true from this call on (0: never)
 * @cancel_calls: cancelled() calls so far
 * @relax_calls: relax() calls so far
 * @last_spins: @spins of the last relax() call
 * @spins_monotonic: false once relax() saw @spins not one more than before
 * @set_sem: relax() stores @set_value here when @relax_calls reaches @set_at
 * @set_at: see @set_sem
 * @set_value: see @set_sem
 * @parallel_calls: parallel() calls so far
 * @parallel_parts: @nparts of the last parallel() call
 * @reverse: run parts last to first (a different schedule, same result)
 */
struct fake_env {
	struct rbln_model_env env;
	uint64_t now;
	uint64_t tick;
	uint64_t now_calls;
	uint64_t cancel_after;
	uint64_t cancel_calls;
	uint64_t relax_calls;
	uint32_t last_spins;
	int spins_monotonic;
	uint64_t *set_sem;
	uint64_t set_at;
	uint64_t set_value;
	uint32_t parallel_calls;
	uint32_t parallel_parts;
	int reverse;
};

/* A fake home with @engines engines; parallel() only when @engines > 1. */
void fake_env_init(struct fake_env *f, uint32_t engines);

/* A real home: CLOCK_MONOTONIC, sched_yield(), one thread per part. */
struct rbln_model_env *real_env(uint32_t engines);

/* ------------------------------------------------------------ running */

/*
 * Validates a copy of @s of exactly @len bytes (so that AddressSanitizer
 * sees any read past the end), optionally at an odd address.
 */
int validate_copy(const void *s, size_t len, const struct rbln_model_bo *bos,
		  uint32_t nbos, struct rbln_model_diag *diag, int misalign);

/* Validates and executes; both must succeed. */
void run_ok(struct sb *sb, const struct rbln_model_bo *bos, uint32_t nbos,
	    const struct rbln_model_env *env);
/* Validates (must succeed) and executes; returns what execution returned. */
int run_ret(struct sb *sb, const struct rbln_model_bo *bos, uint32_t nbos,
	    const struct rbln_model_env *env);

/*
 * Asserts a rejection with every field of the diagnostic, for the stream
 * at its natural alignment and at an odd address. @index HDR_ERR: an error
 * of the stream header (command 0, offset 0).
 */
#define HDR_ERR 0xffffffffU
#define expect_reject(sb, bos, nbos, reason, index, opcode, operand) \
	expect_reject_at(sb, bos, nbos, reason, index, opcode, operand, \
			 __FILE__, __LINE__)
void expect_reject_at(struct sb *sb, const struct rbln_model_bo *bos,
		      uint32_t nbos, uint32_t reason, uint32_t index,
		      uint16_t opcode, uint16_t operand, const char *file,
		      int line);

#endif /* MODEL_TEST_H */
