// SPDX-License-Identifier: MIT
/*
 * Validation of a program's stream with the device model's validator, the
 * same code that rbln.ko and the emulated devices run at submission.  The
 * compiler checks its output with it, and the runtime checks every program
 * file it loads, so that a damaged file is reported by name at load time
 * rather than as a failed submission in the middle of serving.
 */
#include <errno.h>
#include <stdlib.h>

#include "rbln_model.h"

#include "program/isa_validate.h"

_Static_assert(DRM_RBLN_BO_READ == RBLN_MODEL_READ && DRM_RBLN_BO_WRITE == RBLN_MODEL_WRITE,
	       "access bits");

int rbln_program_validate_stream(const void *stream, size_t len, const uint64_t *slot_sizes,
			    const uint32_t *slot_access, uint32_t n_slots, const char *what,
			    struct rbln_error *err)
{
	struct rbln_model_bo *bos = calloc(n_slots ? n_slots : 1, sizeof(*bos));
	struct rbln_model_diag diag;
	const char *op;
	uint32_t i;
	int rc;

	if (!bos)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < n_slots; i++) {
		bos[i].size = slot_sizes[i];
		bos[i].access = slot_access[i];
	}
	rc = rbln_model_validate(stream, len, bos, n_slots, &diag);
	free(bos);
	if (!rc)
		return 0;
	op = rbln_model_opcode_name(diag.opcode);
	if (diag.operand != RBLN_ISA_NO_INDEX)
		return rbln_error_set(err, -EINVAL, "%s: command %u (%s at byte %u) operand %u: %s",
				      what, diag.cmd_index, op ? op : "?", diag.cmd_offset,
				      diag.operand, rbln_model_error_str(diag.reason));
	return rbln_error_set(err, -EINVAL, "%s: command %u (%s at byte %u): %s", what,
			      diag.cmd_index, op ? op : "?", diag.cmd_offset,
			      rbln_model_error_str(diag.reason));
}
