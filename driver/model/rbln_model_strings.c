// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_strings.c - names of validation errors and opcodes, for
 * diagnostics (libnpu's error detail, kernel log, tools).
 */

#include "rbln_model_internal.h"

static const char *const rbln_model_errors[RBLN_ISA_ERR_COUNT] = {
	[RBLN_ISA_OK] = "no error",
	[RBLN_ISA_ERR_STREAM_SIZE] =
		"stream size too small, too large or not a multiple of 8",
	[RBLN_ISA_ERR_MAGIC] = "bad stream magic",
	[RBLN_ISA_ERR_VERSION] = "unsupported ISA version",
	[RBLN_ISA_ERR_HEADER_SIZE] =
		"header size field differs from the stream size",
	[RBLN_ISA_ERR_TRUNCATED] = "command runs past the end of the stream",
	[RBLN_ISA_ERR_OPCODE] = "unknown opcode",
	[RBLN_ISA_ERR_CMD_SIZE] = "command size wrong for its opcode",
	[RBLN_ISA_ERR_RESERVED] = "reserved field (flags, pad) is not zero",
	[RBLN_ISA_ERR_BO_INDEX] = "buffer index outside the buffer list",
	[RBLN_ISA_ERR_OVERFLOW] = "offset + size overflows",
	[RBLN_ISA_ERR_BOUNDS] = "range extends past the end of its buffer",
	[RBLN_ISA_ERR_ALIGN] = "offset or size misaligned",
	[RBLN_ISA_ERR_LENGTH] = "size is zero or sizes differ",
	[RBLN_ISA_ERR_ACCESS] = "buffer-list flags forbid the access",
	[RBLN_ISA_ERR_ENUM] =
		"enumerated field (sem op or cond, dtype, layout, scaling) out of range, or int8 outside MATMUL's weights",
	[RBLN_ISA_ERR_TIMEOUT] = "semaphore wait timeout zero or above 60 s",
	[RBLN_ISA_ERR_OVERLAP] = "operands overlap",
	[RBLN_ISA_ERR_SHAPE] =
		"shape field out of range or operand size disagrees with the shape",
	[RBLN_ISA_ERR_PARAM] = "float parameter not finite or out of range",
};

static const char *const rbln_model_opcodes[RBLN_OP_COUNT] = {
	[RBLN_OP_NOP] = "NOP",
	[RBLN_OP_BARRIER] = "BARRIER",
	[RBLN_OP_FILL] = "FILL",
	[RBLN_OP_COPY] = "COPY",
	[RBLN_OP_SEM_SIGNAL] = "SEM_SIGNAL",
	[RBLN_OP_SEM_WAIT] = "SEM_WAIT",
	[RBLN_OP_ADD] = "ADD",
	[RBLN_OP_EMBED] = "EMBED",
	[RBLN_OP_RMSNORM] = "RMSNORM",
	[RBLN_OP_MATMUL] = "MATMUL",
	[RBLN_OP_ROPE] = "ROPE",
	[RBLN_OP_SWIGLU] = "SWIGLU",
	[RBLN_OP_KV_WRITE] = "KV_WRITE",
	[RBLN_OP_ATTENTION] = "ATTENTION",
	[RBLN_OP_ARGMAX] = "ARGMAX",
	[RBLN_OP_TOPK] = "TOPK",
};

/**
 * rbln_model_error_str() - human-readable text of an &enum rbln_isa_error
 * @reason: the reason
 *
 * Return: a static string; "unknown error" for values out of range.
 */
const char *rbln_model_error_str(u32 reason)
{
	if (reason >= RBLN_ISA_ERR_COUNT)
		return "unknown error";
	return rbln_model_errors[reason];
}

/**
 * rbln_model_opcode_name() - mnemonic of an opcode
 * @opcode: the opcode
 *
 * Also the model's list of the opcodes the ISA defines: the validator
 * treats an opcode without a name as unknown.
 *
 * Return: the mnemonic ("COPY"), or NULL for an unknown opcode.
 */
const char *rbln_model_opcode_name(u32 opcode)
{
	if (opcode >= RBLN_OP_COUNT)
		return NULL;
	return rbln_model_opcodes[opcode];
}
