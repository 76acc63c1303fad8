/* SPDX-License-Identifier: MIT */
/*
 * Checking a compiled program's command stream offline, with the device
 * model's own validator (the streams are encoded by the ISA encoder,
 * libnpu/isa/isa_encode.h).
 *
 * A program's operands name slots (weights, KV cache, scratch, ...)
 * instead of a submission's buffer-list indices: the runtime submits each
 * program with its buffers listed in slot order, so a slot number is the
 * index, and a slot's access is the buffer-list entry's
 * (DRM_RBLN_BO_READ | DRM_RBLN_BO_WRITE of uapi/rbln_accel.h).
 */
#ifndef RBLN_PROGRAM_ISA_VALIDATE_H
#define RBLN_PROGRAM_ISA_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "rbln_accel.h"
#include "rbln_error.h"

/*
 * Checks a finished stream against slots of the given sizes and
 * DRM_RBLN_BO_* access bits; the message names the command, its opcode,
 * the operand and the reason.
 */
int rbln_program_validate_stream(const void *stream, size_t len, const uint64_t *slot_sizes,
			    const uint32_t *slot_access, uint32_t n_slots, const char *what,
			    struct rbln_error *err);

#endif
