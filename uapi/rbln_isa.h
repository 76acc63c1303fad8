/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rbln_isa.h - the command-stream format ("ISA") executed by RBLN devices.
 *
 * A stream is a &struct rbln_isa_stream_header followed by commands, all
 * little-endian, each command a &struct rbln_isa_cmd followed by its body,
 * its total size a multiple of 8 bytes. Commands execute in order; the only
 * concurrency inside a stream is the device splitting one command across its
 * engines, which is invisible to the stream.
 *
 * Operands name memory as (buffer-list index, offset, size) with a
 * &struct rbln_isa_operand; the buffer list is the submission's (see
 * &struct drm_rbln_submit). A stream is validated whole before anything
 * executes: every field below that is documented "must be zero" is checked,
 * every operand range is checked against its buffer, and every access
 * against the buffer-list flags. A malformed stream is rejected with an
 * &enum rbln_isa_error reason, the offending command and operand.
 *
 * Documentation/uapi.md describes every opcode with an example.
 */
#ifndef _UAPI_RBLN_ISA_H_
#define _UAPI_RBLN_ISA_H_

#include <linux/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

/** RBLN_ISA_MAGIC: "RBLN" read as a little-endian __u32. */
#define RBLN_ISA_MAGIC			0x4e4c4252U
/** RBLN_ISA_VERSION_MAJOR: streams of another major version are rejected. */
#define RBLN_ISA_VERSION_MAJOR		1
/** RBLN_ISA_VERSION_MINOR: streams of a higher minor version are rejected. */
#define RBLN_ISA_VERSION_MINOR		0
/** RBLN_ISA_VERSION: as reported in &drm_rbln_device_info.isa_version. */
#define RBLN_ISA_VERSION \
	((RBLN_ISA_VERSION_MAJOR << 16) | RBLN_ISA_VERSION_MINOR)

/** RBLN_ISA_ALIGN: alignment of the stream and of every command size. */
#define RBLN_ISA_ALIGN			8
/** RBLN_ISA_CMD_MAX_SIZE: largest size of one command in bytes. */
#define RBLN_ISA_CMD_MAX_SIZE		4096
/** RBLN_ISA_SEM_WAIT_MAX_NS: largest SEM_WAIT timeout (60 s). */
#define RBLN_ISA_SEM_WAIT_MAX_NS	60000000000ULL
/** RBLN_ISA_NO_INDEX: &drm_rbln_submit_diag opcode/operand "not known". */
#define RBLN_ISA_NO_INDEX		0xffff

/**
 * struct rbln_isa_stream_header - first 16 bytes of every stream
 */
struct rbln_isa_stream_header {
	/** @magic: RBLN_ISA_MAGIC. */
	__u32 magic;
	/** @version_major: RBLN_ISA_VERSION_MAJOR. */
	__u16 version_major;
	/** @version_minor: at most RBLN_ISA_VERSION_MINOR. */
	__u16 version_minor;
	/** @size: bytes of the stream including this header; equals cmd_size. */
	__u32 size;
	/** @flags: must be zero. */
	__u32 flags;
};

/**
 * enum rbln_isa_opcode - command opcodes
 * @RBLN_OP_NOP: do nothing; the one command whose size may be any multiple
 *	of 8 from 8 up (padding). Body: ignored bytes, must be zero.
 * @RBLN_OP_BARRIER: every earlier command of the stream has completed and
 *	its writes are visible to every device before any later command
 *	starts. &struct rbln_isa_cmd only.
 * @RBLN_OP_FILL: &struct rbln_isa_fill.
 * @RBLN_OP_COPY: &struct rbln_isa_copy.
 * @RBLN_OP_SEM_SIGNAL: &struct rbln_isa_sem_signal.
 * @RBLN_OP_SEM_WAIT: &struct rbln_isa_sem_wait.
 * @RBLN_OP_ADD: &struct rbln_isa_add, element-wise float32 addition.
 * @RBLN_OP_COUNT: one past the highest opcode.
 *
 * Opcodes 0x00-0x0f move and synchronise data; 0x10 and up compute.
 */
enum rbln_isa_opcode {
	RBLN_OP_NOP = 0x00,
	RBLN_OP_BARRIER = 0x01,
	RBLN_OP_FILL = 0x02,
	RBLN_OP_COPY = 0x03,
	RBLN_OP_SEM_SIGNAL = 0x04,
	RBLN_OP_SEM_WAIT = 0x05,
	RBLN_OP_ADD = 0x10,
	RBLN_OP_COUNT,
};

/**
 * struct rbln_isa_cmd - header of every command
 */
struct rbln_isa_cmd {
	/** @opcode: an &enum rbln_isa_opcode value. */
	__u16 opcode;
	/** @size: bytes of the command including this header, a multiple of 8. */
	__u16 size;
	/** @flags: must be zero (no opcode defines flags in ISA 1.0). */
	__u32 flags;
};

/**
 * struct rbln_isa_operand - a byte range of a buffer of the buffer list
 */
struct rbln_isa_operand {
	/** @bo: index into the submission's buffer list. */
	__u32 bo;
	/** @flags: must be zero. */
	__u32 flags;
	/** @offset: byte offset in the buffer. */
	__u64 offset;
	/** @size: length in bytes; offset + size may not exceed the buffer. */
	__u64 size;
};

/**
 * struct rbln_isa_fill - RBLN_OP_FILL: store a 32-bit pattern repeatedly
 *
 * @dst must be writable, its offset and size multiples of 4, size non-zero.
 */
struct rbln_isa_fill {
	/** @hdr: opcode RBLN_OP_FILL, size 40. */
	struct rbln_isa_cmd hdr;
	/** @dst: destination range. */
	struct rbln_isa_operand dst;
	/** @value: the pattern, stored little-endian at every 4-byte step. */
	__u32 value;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * struct rbln_isa_copy - RBLN_OP_COPY: DMA between or within buffers
 *
 * @dst writable, @src readable, equal non-zero sizes, any alignment. The
 * ranges may overlap (the result is as if @src were read whole first) and
 * may lie in buffers imported from other devices (peer DMA).
 */
struct rbln_isa_copy {
	/** @hdr: opcode RBLN_OP_COPY, size 56. */
	struct rbln_isa_cmd hdr;
	/** @dst: destination range. */
	struct rbln_isa_operand dst;
	/** @src: source range. */
	struct rbln_isa_operand src;
};

/**
 * enum rbln_isa_sem_op - how RBLN_OP_SEM_SIGNAL changes the counter
 * @RBLN_SEM_SET: store the value
 * @RBLN_SEM_ADD: add the value atomically (wrapping)
 */
enum rbln_isa_sem_op {
	RBLN_SEM_SET = 0,
	RBLN_SEM_ADD = 1,
};

/**
 * struct rbln_isa_sem_signal - RBLN_OP_SEM_SIGNAL: update a semaphore
 *
 * The semaphore is a little-endian __u64 counter: @sem has size 8, an
 * offset that is a multiple of 8 and is writable. Every write of earlier
 * commands is visible before the new value is (release order), also to
 * other devices that share the buffer.
 */
struct rbln_isa_sem_signal {
	/** @hdr: opcode RBLN_OP_SEM_SIGNAL, size 48. */
	struct rbln_isa_cmd hdr;
	/** @sem: the counter. */
	struct rbln_isa_operand sem;
	/** @op: an &enum rbln_isa_sem_op value. */
	__u32 op;
	/** @pad: must be zero. */
	__u32 pad;
	/** @value: operand of @op. */
	__u64 value;
};

/**
 * enum rbln_isa_sem_cond - when RBLN_OP_SEM_WAIT is satisfied
 * @RBLN_SEM_GEQ: counter >= value
 * @RBLN_SEM_EQ: counter == value
 */
enum rbln_isa_sem_cond {
	RBLN_SEM_GEQ = 0,
	RBLN_SEM_EQ = 1,
};

/**
 * struct rbln_isa_sem_wait - RBLN_OP_SEM_WAIT: wait for a semaphore
 *
 * @sem as for SEM_SIGNAL but readable. Later commands see every write made
 * before the signal that satisfied the wait (acquire order). When
 * @timeout_ns passes first, the job ends with status -ETIMEDOUT.
 */
struct rbln_isa_sem_wait {
	/** @hdr: opcode RBLN_OP_SEM_WAIT, size 56. */
	struct rbln_isa_cmd hdr;
	/** @sem: the counter. */
	struct rbln_isa_operand sem;
	/** @cond: an &enum rbln_isa_sem_cond value. */
	__u32 cond;
	/** @pad: must be zero. */
	__u32 pad;
	/** @value: value compared with the counter. */
	__u64 value;
	/** @timeout_ns: 1 to RBLN_ISA_SEM_WAIT_MAX_NS, from the wait's start. */
	__u64 timeout_ns;
};

/**
 * struct rbln_isa_add - RBLN_OP_ADD: dst[i] = a[i] + b[i] in float32
 *
 * All three sizes equal, non-zero, multiples of 4, offsets multiples of 4;
 * @a and @b readable, @dst writable. @dst may alias @a or @b exactly
 * (in-place accumulate); any other overlap is rejected. IEEE-754 binary32
 * round-to-nearest-even, no flush of denormals.
 */
struct rbln_isa_add {
	/** @hdr: opcode RBLN_OP_ADD, size 80. */
	struct rbln_isa_cmd hdr;
	/** @dst: output. */
	struct rbln_isa_operand dst;
	/** @a: first input. */
	struct rbln_isa_operand a;
	/** @b: second input. */
	struct rbln_isa_operand b;
};

/**
 * enum rbln_isa_error - why a stream was rejected
 * @RBLN_ISA_OK: no error
 * @RBLN_ISA_ERR_STREAM_SIZE: stream size too small, too large or unaligned
 * @RBLN_ISA_ERR_MAGIC: header magic is not RBLN_ISA_MAGIC
 * @RBLN_ISA_ERR_VERSION: unsupported ISA version
 * @RBLN_ISA_ERR_HEADER_SIZE: header size field differs from the stream size
 * @RBLN_ISA_ERR_TRUNCATED: a command runs past the end of the stream
 * @RBLN_ISA_ERR_OPCODE: unknown opcode
 * @RBLN_ISA_ERR_CMD_SIZE: command size wrong for its opcode or unaligned
 * @RBLN_ISA_ERR_RESERVED: a flags, pad or reserved field is not zero
 * @RBLN_ISA_ERR_BO_INDEX: operand names a buffer outside the buffer list
 * @RBLN_ISA_ERR_OVERFLOW: operand offset + size overflows 64 bits
 * @RBLN_ISA_ERR_BOUNDS: operand range extends past its buffer
 * @RBLN_ISA_ERR_ALIGN: operand offset or size misaligned for the opcode
 * @RBLN_ISA_ERR_LENGTH: operand size zero or sizes that must match differ
 * @RBLN_ISA_ERR_ACCESS: buffer-list flags forbid the access
 * @RBLN_ISA_ERR_ENUM: an enumerated field (sem op or cond) out of range
 * @RBLN_ISA_ERR_TIMEOUT: SEM_WAIT timeout zero or above the maximum
 * @RBLN_ISA_ERR_OVERLAP: operands overlap in a way the opcode forbids
 * @RBLN_ISA_ERR_COUNT: number of reasons
 */
enum rbln_isa_error {
	RBLN_ISA_OK = 0,
	RBLN_ISA_ERR_STREAM_SIZE,
	RBLN_ISA_ERR_MAGIC,
	RBLN_ISA_ERR_VERSION,
	RBLN_ISA_ERR_HEADER_SIZE,
	RBLN_ISA_ERR_TRUNCATED,
	RBLN_ISA_ERR_OPCODE,
	RBLN_ISA_ERR_CMD_SIZE,
	RBLN_ISA_ERR_RESERVED,
	RBLN_ISA_ERR_BO_INDEX,
	RBLN_ISA_ERR_OVERFLOW,
	RBLN_ISA_ERR_BOUNDS,
	RBLN_ISA_ERR_ALIGN,
	RBLN_ISA_ERR_LENGTH,
	RBLN_ISA_ERR_ACCESS,
	RBLN_ISA_ERR_ENUM,
	RBLN_ISA_ERR_TIMEOUT,
	RBLN_ISA_ERR_OVERLAP,
	RBLN_ISA_ERR_COUNT,
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_RBLN_ISA_H_ */
