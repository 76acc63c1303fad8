/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * rbln_model_internal.h - what the files of the device model share.
 *
 * Not part of the model's API: homes include rbln_model.h only. The unit
 * tests include this header to reach the compute variants directly.
 */
#ifndef RBLN_MODEL_INTERNAL_H
#define RBLN_MODEL_INTERNAL_H

#include "rbln_model.h"

/*
 * The ISA is little-endian and the model reads it in host order; both homes
 * are x86_64. A big-endian home would need byte swaps in the decoder.
 */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the RBLN device model assumes a little-endian host"
#endif

/*
 * Bytes FILL and COPY move between two checks of env->cancelled(). In the
 * kernel this bounds how long an engine thread runs without a chance to
 * notice a reset (about 0.1 ms at memory speed).
 */
#define RBLN_MODEL_DMA_CHUNK		0x100000U	/* 1 MiB */

/*
 * float32 elements per FPU bracket: 64 KiB of output. kernel_fpu_begin()
 * disables preemption, so a bracket must stay short (a few microseconds).
 */
#define RBLN_MODEL_F32_CHUNK		16384U

/*
 * Fewest ADD elements (1 MiB of output) worth giving to one more engine:
 * below this, waking an engine costs more than the addition it would do.
 */
#define RBLN_MODEL_F32_PART_MIN		(256U * 1024U)

/* Largest number of operands of one command (ADD: dst, a, b). */
#define RBLN_MODEL_MAX_OPERANDS		3

/**
 * struct rbln_model_cmd - one command, decoded and checked
 * @u: the command, copied out of the stream (which may be unaligned)
 * @u.hdr: its header
 * @u.fill: as RBLN_OP_FILL
 * @u.copy: as RBLN_OP_COPY
 * @u.signal: as RBLN_OP_SEM_SIGNAL
 * @u.wait: as RBLN_OP_SEM_WAIT
 * @u.add: as RBLN_OP_ADD
 * @index: its index in the stream
 * @offset: its byte offset in the stream
 */
struct rbln_model_cmd {
	union {
		struct rbln_isa_cmd hdr;
		struct rbln_isa_fill fill;
		struct rbln_isa_copy copy;
		struct rbln_isa_sem_signal signal;
		struct rbln_isa_sem_wait wait;
		struct rbln_isa_add add;
	} u;
	u32 index;
	u32 offset;
};

/* rbln_model_validate.c */
void rbln_model_diag_set(struct rbln_model_diag *diag, u32 reason,
			 u32 cmd_index, u32 cmd_offset, u16 opcode,
			 u16 operand);
u32 rbln_model_check_header(const u8 *stream, u64 size,
			    struct rbln_model_diag *diag);
u32 rbln_model_decode(const u8 *stream, u64 size, u32 offset, u32 index,
		      const struct rbln_model_bo *bos, u32 nbos,
		      struct rbln_model_cmd *cmd, struct rbln_model_diag *diag);

/* rbln_model_ops_dma.c */
int rbln_model_fill(u8 *dst, u64 size, u32 value,
		    const struct rbln_model_env *env);
int rbln_model_copy(u8 *dst, const u8 *src, u64 size,
		    const struct rbln_model_env *env);

/* rbln_model_ops_sem.c */
void rbln_model_sem_signal(u64 *sem, u32 op, u64 value);
int rbln_model_sem_wait(const u64 *sem, u32 cond, u64 value, u64 timeout_ns,
			const struct rbln_model_env *env);
void rbln_model_barrier(void);

/*
 * rbln_model_ops_f32.c: the only file with float code (kernel: built with
 * CC_FLAGS_FPU). Its functions run inside rbln_os_fpu_begin()/_end() only.
 * Element pointers are passed as bytes so that no float type appears in the
 * files built without FPU support.
 */
typedef void (*rbln_model_f32_add_fn)(u8 *dst, const u8 *a, const u8 *b,
				      u64 n);
void rbln_model_f32_add_generic(u8 *dst, const u8 *a, const u8 *b, u64 n);
#if defined(__x86_64__)
void rbln_model_f32_add_avx2(u8 *dst, const u8 *a, const u8 *b, u64 n);
#endif

/* rbln_model_exec_f32.c */
rbln_model_f32_add_fn rbln_model_f32_add_select(void);
int rbln_model_exec_add(u8 *dst, const u8 *a, const u8 *b, u64 n,
			const struct rbln_model_env *env);

#endif /* RBLN_MODEL_INTERNAL_H */
