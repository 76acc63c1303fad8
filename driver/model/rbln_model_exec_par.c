// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_exec_par.c - a compute command cut into pieces that the
 * device's engines claim one at a time.
 *
 * Pieces are claimed from a shared counter rather than split up front:
 * attention pieces differ in cost by the lengths of their sequences, and
 * a static split would leave engines idle. Which engine runs a piece never
 * changes its result (each piece writes its own outputs with the same
 * code), so the bits do not depend on the engine count or the schedule.
 * Each engine checks for cancellation before every piece, and the pieces
 * open their own FPU brackets, so no bracket spans a cancellation check:
 * in the kernel that check may reschedule.
 */

#include "rbln_model_internal.h"

/**
 * rbln_model_par_stopped() - whether the command must stop now
 * @par: the command's state
 *
 * Also polls the home's cancellation flag: pieces call it between their
 * FPU brackets so that a long piece notices a reset.
 *
 * Return: true when a piece failed or the job was cancelled.
 */
bool rbln_model_par_stopped(struct rbln_model_par *par)
{
	const struct rbln_model_env *env = par->env;

	if (rbln_os_load_relaxed32(&par->stop))
		return true;
	if (env->cancelled(env->priv)) {
		rbln_os_store_relaxed32((u32 *)&par->err, (u32)-RBLN_ECANCELED);
		rbln_os_store_relaxed32(&par->stop, 1);
		return true;
	}
	return false;
}

/*
 * One engine's share: claim pieces until none are left or one failed.
 * Which part an engine runs does not matter, only that it claims.
 */
static void rbln_model_par_part(void *arg, u32 part, u32 nparts)
{
	struct rbln_model_par *par = arg;
	u64 piece;
	int ret;

	(void)part;
	(void)nparts;
	for (;;) {
		if (rbln_model_par_stopped(par))
			return;
		piece = rbln_os_fetch_add64(&par->next, 1);
		if (piece >= par->pieces)
			return;
		ret = par->fn(par, piece);
		if (ret) {
			rbln_os_store_relaxed32((u32 *)&par->err, (u32)ret);
			rbln_os_store_relaxed32(&par->stop, 1);
			return;
		}
	}
}

/**
 * rbln_model_par_run() - run every piece of a command
 * @par: the command: @env, @fn, @ctx and @pieces set, @kern set or NULL
 *	(then the variant's, read now), the rest zero
 * @min_pieces_per_part: fewest pieces worth waking one more engine for
 *
 * Return: 0, the first error a piece returned, or -RBLN_ECANCELED.
 */
int rbln_model_par_run(struct rbln_model_par *par, u64 min_pieces_per_part)
{
	const struct rbln_model_env *env = par->env;
	u64 nparts = par->pieces /
		     (min_pieces_per_part ? min_pieces_per_part : 1);

	/* An op that chose its kernels by the variant set them already. */
	if (!par->kern)
		par->kern = rbln_model_kernels();
	if (nparts > env->engines)
		nparts = env->engines;
	if (env->parallel && nparts > 1)
		env->parallel(env->priv, rbln_model_par_part, par, nparts);
	else
		rbln_model_par_part(par, 0, 1);
	return (int)rbln_os_load_relaxed32((u32 *)&par->err);
}
