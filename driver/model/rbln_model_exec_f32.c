// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_exec_f32.c - runs float32 commands: picks the CPU variant,
 * splits the work over the device's engines and brackets the float code.
 *
 * Built without FPU flags in the kernel: it only calls into
 * rbln_model_ops_f32.c, between rbln_os_fpu_begin() and rbln_os_fpu_end().
 * A bracket covers RBLN_MODEL_F32_CHUNK elements, because the kernel's
 * bracket disables preemption; cancellation is checked before each one.
 *
 * The split is by whole chunks and every element is computed by the same
 * code whichever engine runs it, so results are bit-identical for any
 * number of engines.
 */

#include "rbln_model_internal.h"

/**
 * struct rbln_model_add_job - one ADD shared by the engines running it
 * @env: the home's services
 * @fn: the CPU variant
 * @dst: output
 * @a: first input
 * @b: second input
 * @n: number of elements
 * @stop: set by the first part that sees cancellation; read by all parts
 */
struct rbln_model_add_job {
	const struct rbln_model_env *env;
	rbln_model_f32_add_fn fn;
	u8 *dst;
	const u8 *a;
	const u8 *b;
	u64 n;
	u32 stop;
};

/**
 * rbln_model_f32_add_select() - the ADD variant of the model's CPU variant
 *
 * Return: the AVX2 variant when the model runs its AVX2 or AVX-512 kernels
 * (rbln_model_cpu()), else the generic one. Both give identical bits;
 * only speed differs.
 */
rbln_model_f32_add_fn rbln_model_f32_add_select(void)
{
#if defined(__x86_64__)
	u32 cpu = rbln_model_cpu();

	/* avx512, amx and avx512+amx have the AVX2 ADD. */
	if (cpu == RBLN_MODEL_CPU_AVX2 || cpu == RBLN_MODEL_CPU_AVX512 ||
	    cpu == RBLN_MODEL_CPU_AMX || cpu == RBLN_MODEL_CPU_AVX512_AMX)
		return rbln_model_f32_add_avx2;
#endif
	return rbln_model_f32_add_generic;
}

/**
 * rbln_model_add_part() - run part @part of @nparts of an ADD
 * @arg: the &struct rbln_model_add_job
 * @part: which part, below @nparts
 * @nparts: number of parts
 *
 * Part i gets chunks [first, last) of a balanced split of the chunks; the
 * split is computed without multiplying large counts, so it cannot
 * overflow.
 */
static void rbln_model_add_part(void *arg, u32 part, u32 nparts)
{
	struct rbln_model_add_job *job = arg;
	const struct rbln_model_env *env = job->env;
	u64 chunks = (job->n + RBLN_MODEL_F32_CHUNK - 1) / RBLN_MODEL_F32_CHUNK;
	u64 per = chunks / nparts;
	u64 extra = chunks % nparts;
	u64 first = per * part + (part < extra ? part : extra);
	u64 last = first + per + (part < extra ? 1 : 0);
	u64 c, i, cnt;

	for (c = first; c < last; c++) {
		if (rbln_os_load_relaxed32(&job->stop))
			return;
		if (env->cancelled(env->priv)) {
			rbln_os_store_relaxed32(&job->stop, 1);
			return;
		}
		i = c * RBLN_MODEL_F32_CHUNK;
		cnt = job->n - i;
		if (cnt > RBLN_MODEL_F32_CHUNK)
			cnt = RBLN_MODEL_F32_CHUNK;
		i *= sizeof(float);
		rbln_os_fpu_begin();
		job->fn(job->dst + i, job->a + i, job->b + i, cnt);
		rbln_os_fpu_end();
	}
}

/**
 * rbln_model_exec_add() - RBLN_OP_ADD
 * @dst: output, equal to @a or @b or disjoint from both
 * @a: first input
 * @b: second input
 * @n: number of float32 elements, non-zero
 * @env: the home's services
 *
 * Spreads the work over up to env->engines parts of at least
 * RBLN_MODEL_F32_PART_MIN elements each when the home offers
 * env->parallel; otherwise runs it on the calling thread.
 *
 * Return: 0, or -RBLN_ECANCELED with some chunks of @dst written.
 */
int rbln_model_exec_add(u8 *dst, const u8 *a, const u8 *b, u64 n,
			const struct rbln_model_env *env)
{
	struct rbln_model_add_job job = {
		.env = env,
		.fn = rbln_model_f32_add_select(),
		.dst = dst,
		.a = a,
		.b = b,
		.n = n,
	};
	u64 nparts = n / RBLN_MODEL_F32_PART_MIN;

	if (nparts > env->engines)
		nparts = env->engines;
	if (env->parallel && nparts > 1)
		env->parallel(env->priv, rbln_model_add_part, &job, nparts);
	else
		rbln_model_add_part(&job, 0, 1);
	return rbln_os_load_relaxed32(&job.stop) ? -RBLN_ECANCELED : 0;
}
