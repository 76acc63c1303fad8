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
#define RBLN_MODEL_READ		0x1U
#define RBLN_MODEL_WRITE	0x2U

/**
 * RBLN_MODEL_MAX_STREAM_SIZE - largest stream the model accepts (16 MiB)
 *
 * Bounds the work one validation does (it runs in the submit ioctl) and keeps
 * every command offset within &rbln_model_diag.cmd_offset. 16 MiB holds over
 * 200000 ADD commands, far more than one step of a compiled program needs.
 * Homes report at most this as &drm_rbln_device_info.max_cmd_size.
 */
#define RBLN_MODEL_MAX_STREAM_SIZE	(16U << 20)

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
 *
 * Errors of the stream header (size, magic, version, header size, header
 * flags) have @cmd_index 0 and @cmd_offset 0 (the header's own offset; real
 * commands start at 16) with @opcode and @operand RBLN_ISA_NO_INDEX.
 * Errors in a field of a command that is not an operand (flags, pad, NOP
 * body, op, cond, timeout) have @operand RBLN_ISA_NO_INDEX. Operands are
 * numbered in the order of the command structure: FILL dst 0; COPY dst 0,
 * src 1; SEM_SIGNAL/SEM_WAIT sem 0; ADD dst 0, a 1, b 2.
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
 * @timed: when not NULL, called after each command with the command, as
 *	decoded (a struct rbln_isa_* of its opcode, which starts with its
 *	struct rbln_isa_cmd header), and the nanoseconds it took (by
 *	@now_ns): a home's profile per opcode, or per MATMUL shape
 * @priv: passed to every callback
 *
 * @now_ns, @relax and @cancelled are required. @cancelled and @now_ns are
 * also called from the engines @parallel runs parts on, concurrently.
 */
struct rbln_model_env {
	u64 (*now_ns)(void *priv);
	void (*relax)(void *priv, u32 spins);
	bool (*cancelled)(void *priv);
	void (*parallel)(void *priv,
			 void (*fn)(void *arg, u32 part, u32 nparts),
			 void *arg, u32 nparts);
	u32 engines;
	void (*timed)(void *priv, const struct rbln_isa_cmd *cmd, u64 ns);
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
 * @stream needs no particular alignment. Checks run in stream order and the
 * first failure is reported; within a command: the header (opcode, size,
 * truncation, flags), then the other fields (pad, NOP body, op or cond,
 * timeout; for compute opcodes pad, enums, float parameters, shape
 * fields), then each operand in order (flags, bo index, overflow, bounds,
 * alignment, length, access), then relations between operands (equal
 * lengths, sizes against the shape in operand order, overlap). @bos
 * entries are distinct buffers: overlap is judged by bo index and offsets.
 *
 * Return: 0, or -RBLN_EINVAL with @diag saying why.
 */
int rbln_model_validate(const void *stream, u64 size,
			const struct rbln_model_bo *bos, u32 nbos,
			struct rbln_model_diag *diag);

/*
 * Stack that rbln_model_execute() may take in the emulated home, whose
 * threads it runs on must have at least this much free: the amx variant
 * stages a MATMUL call's operands there (rbln_model_kern_amx.c). The
 * kernel home's kernels keep to the kernel's small frames.
 */
#define RBLN_MODEL_EMUL_STACK	(512U << 10)

/**
 * rbln_model_execute() - run a validated stream
 * @stream: the stream rbln_model_validate() accepted
 * @size: its size
 * @bos: the same buffer list, now with @cpu mappings
 * @nbos: entries in @bos
 * @env: the home's services
 * @diag: on failure, the command that failed (may be NULL)
 *
 * The stream is decoded and checked again command by command as it runs (a
 * few compares per command), so a stream that was not validated is refused
 * with -RBLN_EINVAL at its first bad command instead of touching memory it
 * must not. A command whose buffer has no @cpu mapping fails with -RBLN_EIO.
 *
 * Index data the compute opcodes read at run time (token ids, positions,
 * slots, block tables, sequence descriptors) is checked as it is used: a
 * value out of range stops the command with -RBLN_EIO before anything
 * outside its operands is touched (some of its output may be written).
 *
 * ADD produces IEEE-754 binary32 sums rounded to nearest even, denormals
 * kept, in both homes. NaN results are made deterministic (the compilers of
 * the two homes may order the operands of an addition differently, which
 * changes which NaN propagates): if @a is NaN the result is @a quieted, else
 * if @b is NaN it is @b quieted, else an invalid operation (inf - inf) gives
 * the x86 default NaN 0xffc00000. This is what x86 ADDSS does in that order.
 *
 * Return: 0; -RBLN_ETIMEDOUT when a SEM_WAIT expired; -RBLN_ECANCELED when
 * @env->cancelled() became true; -RBLN_EINVAL for a stream that does not
 * validate or an @env without its required callbacks; -RBLN_EIO as above
 * (unmapped buffer, index data out of range).
 * Commands before the failing one have run; @diag then names the failing
 * command, filled as rbln_model_validate() does for -RBLN_EINVAL, else with
 * @reason RBLN_ISA_OK and @operand RBLN_ISA_NO_INDEX. Zeroed on success.
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
 * rbln_model_opcode_name() - mnemonic of an opcode
 * @opcode: the opcode
 *
 * Return: a static string ("COPY"), or NULL for an opcode the ISA does not
 * define.
 */
const char *rbln_model_opcode_name(u32 opcode);

/**
 * rbln_model_dtype_size() - bytes per element of an &enum rbln_isa_dtype
 * @dtype: a valid dtype
 *
 * Inline: the kernels use it in address arithmetic, where a constant
 * dtype must fold into a constant stride; homes use it to size what a
 * command reads (a profile's rates).
 *
 * Return: 4 for float32, 2 for the 16-bit types, 1 for int8.
 */
static inline u32 rbln_model_dtype_size(u32 dtype)
{
	if (dtype == RBLN_DTYPE_I8)
		return 1;
	return dtype == RBLN_DTYPE_F32 ? 4 : 2;
}

/**
 * enum rbln_model_cpu - CPU variants of the compute kernels
 * @RBLN_MODEL_CPU_AUTO: the best the CPU supports (the default): avx512+amx
 *	where the emulated home has AMX tiles, never amx
 * @RBLN_MODEL_CPU_BASELINE: portable code (SSE2 on x86-64), separate
 *	multiply and add
 * @RBLN_MODEL_CPU_AVX2: AVX2 with fused multiply-add (x86-64 CPUs with
 *	AVX2 and FMA)
 * @RBLN_MODEL_CPU_AVX512: MATMUL with AVX-512 fused multiply-adds, the
 *	other kernels of the AVX2 variant (CPUs with AVX-512F, AVX2 and FMA)
 * @RBLN_MODEL_CPU_AMX: MATMUL of bf16 packed weights on AMX-BF16 tiles,
 *	the rest as avx512 (emulated home only; CPUs with AMX-TILE, AMX-BF16
 *	and AVX-512F where the OS grants the tile state)
 * @RBLN_MODEL_CPU_AVX512_AMX: "avx512+amx": a MATMUL of enough rows (a
 *	prompt's chunk) runs as amx, every other one and every other op as
 *	avx512; the choice is per command, by its row count (emulated home
 *	only, where amx runs)
 * @RBLN_MODEL_CPU_COUNT: number of values
 *
 * Each variant is deterministic: the same stream on the same data gives
 * the same bits, whatever the number of engines and in both homes. The
 * variants differ from the baseline where they fuse a multiply and an add
 * (MATMUL, ATTENTION), within the tolerances of Documentation/isa-compute.md;
 * every other opcode gives the same bits in all. The avx512 variant gives
 * the avx2 variant's bits (the same fused chain per output element). The
 * amx variant's MATMUL has bits of its own (three bf16 parts of each
 * activation, rbln_model_kern_amx.c), within the same tolerances; the
 * avx512+amx variant gives per command either the amx or the avx512 bits,
 * so a row's bits depend on how many rows its MATMUL has (a prompt's chunk
 * or a decode step), within the same tolerances.
 */
enum rbln_model_cpu {
	RBLN_MODEL_CPU_AUTO = 0,
	RBLN_MODEL_CPU_BASELINE = 1,
	RBLN_MODEL_CPU_AVX2 = 2,
	RBLN_MODEL_CPU_AVX512 = 3,
	RBLN_MODEL_CPU_AMX = 4,
	RBLN_MODEL_CPU_AVX512_AMX = 5,
	RBLN_MODEL_CPU_COUNT,
};

/**
 * rbln_model_set_cpu() - force a CPU variant (tests, module parameter)
 * @cpu: an &enum rbln_model_cpu value
 *
 * Applies to every command that starts afterwards, in every device of the
 * home (the choice is global to the model). The kernel calls it from a
 * module parameter at load, the emulated backend from RBLN_CPU_VARIANT.
 *
 * Return: 0, or -RBLN_EINVAL for an unknown value or a variant this CPU
 * cannot run (the choice is then unchanged).
 */
int rbln_model_set_cpu(u32 cpu);

/**
 * rbln_model_cpu() - the CPU variant commands run with
 *
 * Return: RBLN_MODEL_CPU_BASELINE, _AVX2, _AVX512, _AMX or _AVX512_AMX
 * (never AUTO).
 */
u32 rbln_model_cpu(void);

/**
 * rbln_model_cpu_name() - name of an &enum rbln_model_cpu value
 * @cpu: the value
 *
 * Return: "auto", "baseline", "avx2", "avx512", "amx" or "avx512+amx"; NULL
 * for other values.
 */
const char *rbln_model_cpu_name(u32 cpu);

/**
 * rbln_model_cpu_parse() - the &enum rbln_model_cpu value of a name
 * @name: "auto", "baseline", "avx2", "avx512", "amx" or "avx512+amx" (a
 *	trailing newline is ignored, as sysfs writes have one)
 *
 * Return: the value, or -RBLN_EINVAL for another name.
 */
int rbln_model_cpu_parse(const char *name);

#endif /* RBLN_MODEL_H */
