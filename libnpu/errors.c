// SPDX-License-Identifier: MIT
/*
 * Error codes and the per-thread detail message.
 *
 * libnpu returns plain negative errno values so that callers can compare
 * against <errno.h>; the detail message carries what a bare code cannot
 * (which device, which command, how many bytes). It lives in thread-local
 * storage so that concurrent failures on different threads do not mix.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "npu_backend.h"
#include "rbln_isa.h"

/* Long enough for a stream diagnostic with a long reason text. */
#define NPU_DETAIL_MAX 512

static _Thread_local char npu_detail[NPU_DETAIL_MAX];

const char *npu_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err == 0)
		return "Success";
	/* strerrordesc_np() is thread-safe and not localised, unlike strerror(). */
	const char *text = strerrordesc_np(err);

	return text ? text : "Unknown error";
}

const char *npu_error_detail(void)
{
	return npu_detail;
}

int npu_fail(int err, const char *fmt, ...)
{
	if (!fmt) {
		snprintf(npu_detail, sizeof(npu_detail), "%s", npu_strerror(err));
		return err;
	}
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(npu_detail, sizeof(npu_detail), fmt, ap);
	va_end(ap);
	return err;
}

int npu_fail_stream(unsigned int cmd_index, unsigned int cmd_offset,
		    unsigned int opcode, const char *opcode_name,
		    unsigned int operand, const char *reason_text)
{
	char op[32];
	char where[32];

	/* The model reports header errors as command 0 at offset 0. */
	if (cmd_offset == 0 && opcode == RBLN_ISA_NO_INDEX)
		return npu_fail(-EINVAL, "invalid command stream: header: %s",
				reason_text);
	if (opcode_name)
		snprintf(op, sizeof(op), "%s", opcode_name);
	else if (opcode == RBLN_ISA_NO_INDEX)
		snprintf(op, sizeof(op), "unreadable opcode");
	else
		snprintf(op, sizeof(op), "opcode 0x%x", opcode);

	if (operand == RBLN_ISA_NO_INDEX)
		snprintf(where, sizeof(where), "no operand");
	else
		snprintf(where, sizeof(where), "operand %u", operand);

	return npu_fail(-EINVAL,
			"invalid command stream: command %u (%s) at byte %u, %s: %s",
			cmd_index, op, cmd_offset, where, reason_text);
}
