// SPDX-License-Identifier: MIT
/*
 * RBLN_EMUL_PROFILE=1: where an emulated device's time goes, per opcode,
 * and how much of it the device was idle between jobs; MATMUL's time also
 * per shape, with the rates that say what bounds each (weights read per
 * second for a few rows, multiply-adds for many).
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

/*
 * The line of @mm's shape: its own, a free one, or the last, shared by the
 * shapes that come after the table is full.
 */
static struct emul_mm_time *mm_line(struct emul_hw *hw,
				    const struct rbln_isa_matmul *mm)
{
	uint64_t m = mm->a.size / ((uint64_t)mm->k * 4);
	bool a_bf16 = mm->hdr.flags & RBLN_MATMUL_A_BF16;
	struct emul_mm_time *t;

	for (unsigned int i = 0; i < EMUL_PROFILE_SHAPES; i++) {
		t = &hw->mm_time[i];
		if (!t->calls) {
			*t = (struct emul_mm_time){ .m = m, .k = mm->k,
				.n = mm->n, .dtype = mm->dtype,
				.a_bf16 = a_bf16 };
			return t;
		}
		if (t->m == m && t->k == mm->k && t->n == mm->n &&
		    t->dtype == mm->dtype && t->a_bf16 == a_bf16)
			return t;
	}
	return &hw->mm_time[EMUL_PROFILE_SHAPES];
}

void emul_profile_op(void *priv, const struct rbln_isa_cmd *cmd, u64 ns)
{
	struct emul_hw *hw = priv;
	struct emul_mm_time *t;

	if (cmd->opcode >= RBLN_OP_COUNT)
		return;
	hw->profile[cmd->opcode].calls++;
	hw->profile[cmd->opcode].ns += ns;
	if (cmd->opcode != RBLN_OP_MATMUL)
		return;
	/* The model decoded and validated it: a whole rbln_isa_matmul. */
	t = mm_line(hw, (const struct rbln_isa_matmul *)cmd);
	t->calls++;
	t->ns += ns;
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

static int by_mm_time(const void *a, const void *b)
{
	const struct emul_mm_time *x = *(const struct emul_mm_time *const *)a;
	const struct emul_mm_time *y = *(const struct emul_mm_time *const *)b;

	return (x->ns < y->ns) - (x->ns > y->ns);
}

static const char *dtype_name(uint32_t dtype)
{
	static const char *const names[RBLN_DTYPE_COUNT] = {
		[RBLN_DTYPE_F32] = "f32", [RBLN_DTYPE_F16] = "f16",
		[RBLN_DTYPE_BF16] = "bf16", [RBLN_DTYPE_I8] = "int8",
	};

	return dtype < RBLN_DTYPE_COUNT ? names[dtype] : "?";
}

/*
 * MATMUL's lines by shape, largest first, after the opcodes (whose
 * commands took @total ns): weights read per second (the k x n elements,
 * without a layout's gaps or int8's scales) and multiply-adds per second
 * (2 m k n operations), since a product of a few rows is bound by the first
 * and one of many by the second.
 */
static void report_shapes(struct emul_hw *hw, uint64_t total)
{
	const struct emul_mm_time *rows[EMUL_PROFILE_SHAPES + 1];
	char shape[80];
	unsigned int n = 0;

	for (unsigned int i = 0; i <= EMUL_PROFILE_SHAPES; i++)
		if (hw->mm_time[i].calls)
			rows[n++] = &hw->mm_time[i];
	if (!n)
		return;
	qsort(rows, n, sizeof(rows[0]), by_mm_time);
	fprintf(stderr, "  %-34s %10s %12s %7s %10s %9s %9s\n",
		"MATMUL by shape", "calls", "total ms", "share", "avg us",
		"wt GB/s", "GFLOP/s");
	for (unsigned int i = 0; i < n; i++) {
		const struct emul_mm_time *t = rows[i];
		double s = (double)t->ns * 1e-9;
		/* A rate of a command too quick for the clock: no division by 0. */
		double rs = s > 0 ? s : 1e-9;

		if (!t->m) {
			fprintf(stderr, "  %-34s %10" PRIu64 " %12.3f %6.1f%% %10.2f\n",
				"other shapes", t->calls, s * 1e3,
				100.0 * (double)t->ns / (double)(total ? total : 1),
				s * 1e6 / (double)t->calls);
			continue;
		}
		snprintf(shape, sizeof(shape), "M=%" PRIu64 " K=%u N=%u %s%s",
			 t->m, t->k, t->n, dtype_name(t->dtype),
			 t->a_bf16 ? " bf16a" : "");
		fprintf(stderr, "  %-34s %10" PRIu64 " %12.3f %6.1f%% %10.2f %9.1f %9.1f\n",
			shape, t->calls, s * 1e3,
			100.0 * (double)t->ns / (double)(total ? total : 1),
			s * 1e6 / (double)t->calls,
			(double)t->calls * t->k * t->n * rbln_model_dtype_size(t->dtype) /
			rs * 1e-9,
			(double)t->calls * 2.0 * (double)t->m * t->k * t->n /
			rs * 1e-9);
	}
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
	report_shapes(hw, total);
	memset(hw->profile, 0, sizeof(hw->profile));
	memset(hw->mm_time, 0, sizeof(hw->mm_time));
	memset(&hw->job_time, 0, sizeof(hw->job_time));
}
