/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * rbln_model.h - the RBLN device model: validation and execution of command
 * streams (uapi/rbln_isa.h). Freestanding; see rbln_model_os.h.
 *
 * A home (rbln.ko or libnpu's emulated backend) copies the stream out of the
 * user-visible command buffer, calls rbln_model_validate() on the copy with
 * the submission's buffer list, and later, on an engine thread,
 * rbln_model_execute() on the same copy with the same buffers mapped. The
 * copy is what makes validation binding: userspace cannot change a stream
 * between its validation and its execution.
 */
#ifndef RBLN_MODEL_H
#define RBLN_MODEL_H

#include "rbln_model_os.h"
#include "rbln_isa.h"

/* Access bits of &rbln_model_bo.access; equal to DRM_RBLN_BO_READ/WRITE. */
#define RBLN_MODEL_READ		(1U << 0)
#define RBLN_MODEL_WRITE	(1U << 1)

/**
 * struct rbln_model_bo - one entry of the buffer list as the model sees it
 * @cpu: mapping of the whole buffer; may be NULL for validation only
 * @size: size of the buffer in bytes
 * @access: RBLN_MODEL_READ and/or RBLN_MODEL_WRITE
 */
struct rbln_model_bo {
	u8 *cpu;
	u64 size;
	u32 access;
};

/**
 * struct rbln_model_diag - where and why validation or execution stopped
 * @reason: an &enum rbln_isa_error value (RBLN_ISA_OK after execution)
 * @cmd_index: index of the command
 * @cmd_offset: its byte offset in the stream
 * @opcode: its opcode, RBLN_ISA_NO_INDEX if unreadable
 * @operand: index of the offending operand, RBLN_ISA_NO_INDEX if none
 *
 * Same layout as &struct drm_rbln_submit_diag, so homes copy it as is.
 */
struct rbln_model_diag {
	u32 reason;
	u32 cmd_index;
	u32 cmd_offset;
	u16 opcode;
	u16 operand;
};

/**
 * struct rbln_model_env - what the executing home provides
 * @now_ns: monotonic clock in nanoseconds (SEM_WAIT timeouts)
 * @relax: called while a SEM_WAIT is unsatisfied, @spins counting the polls
 *	so far; spins briefly, then sleeps (the home decides how)
 * @cancelled: true when the job must stop now (reset, unplug, hang); checked
 *	between commands, between chunks of long commands and while waiting
 * @parallel: run @fn(@arg, i, @nparts) for i in [0, @nparts) on the
 *	device's engines and return when all are done; NULL runs serially
 * @engines: number of engines @parallel spreads work over (at least 1)
 * @priv: passed to every callback
 */
struct rbln_model_env {
	u64 (*now_ns)(void *priv);
	void (*relax)(void *priv, u32 spins);
	bool (*cancelled)(void *priv);
	void (*parallel)(void *priv, void (*fn)(void *arg, u32 part, u32 nparts),
			 void *arg, u32 nparts);
	u32 engines;
	void *priv;
};

/**
 * rbln_model_validate() - check a whole stream against its buffer list
 * @stream: the stream (a private copy the caller will also execute)
 * @size: its size in bytes
 * @bos: the buffer list
 * @nbos: entries in @bos
 * @diag: filled with the reason and position of the first error; zeroed
 *	(reason RBLN_ISA_OK) on success. May be NULL.
 *
 * Never reads outside @stream[0..@size) and never touches buffer contents.
 *
 * Return: 0, or -RBLN_EINVAL with @diag saying why.
 */
int rbln_model_validate(const void *stream, u64 size,
			const struct rbln_model_bo *bos, u32 nbos,
			struct rbln_model_diag *diag);

/**
 * rbln_model_execute() - run a validated stream
 * @stream: the stream rbln_model_validate() accepted
 * @size: its size
 * @bos: the same buffer list, now with @cpu mappings
 * @nbos: entries in @bos
 * @env: the home's services
 * @diag: on failure, the command that failed (may be NULL)
 *
 * Return: 0; -RBLN_ETIMEDOUT when a SEM_WAIT expired; -RBLN_ECANCELED when
 * @env->cancelled() became true. Commands before the failing one have run.
 */
int rbln_model_execute(const void *stream, u64 size,
		       const struct rbln_model_bo *bos, u32 nbos,
		       const struct rbln_model_env *env,
		       struct rbln_model_diag *diag);

/**
 * rbln_model_error_str() - human-readable text of an &enum rbln_isa_error
 * @reason: the reason
 *
 * Return: a static string; "unknown error" for values out of range.
 */
const char *rbln_model_error_str(u32 reason);

/**
 * rbln_model_opcode_name() - mnemonic of an opcode ("COPY"), or NULL
 * @opcode: the opcode
 */
const char *rbln_model_opcode_name(u32 opcode);

#endif /* RBLN_MODEL_H */
