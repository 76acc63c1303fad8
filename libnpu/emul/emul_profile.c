// SPDX-License-Identifier: MIT
/*
 * RBLN_EMUL_PROFILE=1: where an emulated device's time goes, per opcode,
 * and how much of it the device was idle between jobs.
 *
 * The device model reports each command's time (env->timed); engine 0,
 * the only thread that runs streams, adds it to its device's table, so no
 * locking is needed. When the device's engines stop (its last handle
 * closes) the table is printed to stderr, largest share first, and
 * cleared. Printing only happens when the variable asks for it, as with
 * Mesa's or libdrm's debug variables: a library stays quiet by default.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emul.h"

bool emul_profile_wanted(void)
{
	const char *v = getenv("RBLN_EMUL_PROFILE");

	return v && *v && strcmp(v, "0") != 0;
}

void emul_profile_op(void *priv, u32 opcode, u64 ns)
{
	struct emul_hw *hw = priv;

	if (opcode < RBLN_OP_COUNT) {
		hw->profile[opcode].calls++;
		hw->profile[opcode].ns += ns;
	}
}

/*
 * Engine 0 idle between jobs is time the host took to submit the next one
 * (sampling, building inputs, the submission itself): in a decode loop it
 * is the part of a step that no kernel can speed up.
 */
void emul_profile_job(struct emul_hw *hw, int64_t start_ns, int64_t end_ns)
{
	struct emul_job_time *t = &hw->job_time;

	t->jobs++;
	t->busy_ns += (uint64_t)(end_ns - start_ns);
	if (t->last_end_ns && start_ns > t->last_end_ns)
		t->idle_ns += (uint64_t)(start_ns - t->last_end_ns);
	t->last_end_ns = end_ns;
}

static int by_time(const void *a, const void *b)
{
	const struct emul_op_time *x = *(const struct emul_op_time *const *)a;
	const struct emul_op_time *y = *(const struct emul_op_time *const *)b;

	return (x->ns < y->ns) - (x->ns > y->ns);
}

void emul_profile_report(struct emul_hw *hw)
{
	const struct emul_op_time *rows[RBLN_OP_COUNT];
	uint64_t total = 0, calls = 0;
	unsigned int n = 0;

	for (unsigned int op = 0; op < RBLN_OP_COUNT; op++) {
		if (!hw->profile[op].calls)
			continue;
		rows[n++] = &hw->profile[op];
		total += hw->profile[op].ns;
		calls += hw->profile[op].calls;
	}
	if (!n)
		return;
	qsort(rows, n, sizeof(rows[0]), by_time);
	fprintf(stderr, "rbln emulated device %u (%u engines): %" PRIu64
		" commands, %.3f s in commands\n", hw->index, hw->num_engines, calls,
		(double)total * 1e-9);
	fprintf(stderr, "  %" PRIu64 " job%s: %.3f s running, %.3f s idle between jobs\n",
		hw->job_time.jobs, hw->job_time.jobs == 1 ? "" : "s",
		(double)hw->job_time.busy_ns * 1e-9,
		(double)hw->job_time.idle_ns * 1e-9);
	fprintf(stderr, "  %-12s %10s %12s %7s %10s\n", "opcode", "calls", "total ms",
		"share", "avg us");
	for (unsigned int i = 0; i < n; i++) {
		unsigned int op = (unsigned int)(rows[i] - hw->profile);

		fprintf(stderr, "  %-12s %10" PRIu64 " %12.3f %6.1f%% %10.2f\n",
			rbln_model_opcode_name(op), rows[i]->calls, (double)rows[i]->ns * 1e-6,
			100.0 * (double)rows[i]->ns / (double)(total ? total : 1),
			(double)rows[i]->ns * 1e-3 / (double)rows[i]->calls);
	}
	memset(hw->profile, 0, sizeof(hw->profile));
	memset(&hw->job_time, 0, sizeof(hw->job_time));
}
