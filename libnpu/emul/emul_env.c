// SPDX-License-Identifier: MIT
/*
 * What the device model asks of its home (struct rbln_model_env), for the
 * emulated devices: the clock, how to wait for a semaphore, whether to
 * stop, and the engines to split work over.
 */
#include <sched.h>
#include <time.h>

#include "emul.h"

static u64 env_now_ns(void *priv)
{
	(void)priv;
	return (u64)npu_now_ns();
}

/* Polls spent spinning, then yielding, before a waiter starts to sleep. */
#define RELAX_SPINS	64
#define RELAX_YIELDS	256
#define RELAX_SLEEP_NS	50000

/*
 * A SEM_WAIT usually waits for another device, i.e. another thread that
 * needs a core. Spinning briefly catches the fast handoff; yielding lets
 * the signaller run; sleeping keeps eight waiting devices from occupying
 * two cores while they wait for the one that works.
 */
static void env_relax(void *priv, u32 spins)
{
	(void)priv;
	if (spins < RELAX_SPINS) {
		emul_cpu_relax();
		return;
	}
	if (spins < RELAX_YIELDS) {
		sched_yield();
		return;
	}
	struct timespec ts = { .tv_sec = 0, .tv_nsec = RELAX_SLEEP_NS };

	nanosleep(&ts, NULL);
}

static bool env_cancelled(void *priv)
{
	struct emul_hw *hw = priv;

	return atomic_load_explicit(&hw->cancel, memory_order_relaxed);
}

static void env_parallel(void *priv, void (*fn)(void *arg, u32 part, u32 nparts),
			 void *arg, u32 nparts)
{
	emul_engines_parallel(priv, fn, arg, nparts);
}

void emul_env_init(struct emul_hw *hw, struct rbln_model_env *env)
{
	*env = (struct rbln_model_env){
		.now_ns = env_now_ns,
		.relax = env_relax,
		.cancelled = env_cancelled,
		/* With one engine there is nobody to split with. */
		.parallel = hw->num_engines > 1 ? env_parallel : NULL,
		.engines = hw->num_engines,
		.timed = hw->ctx->profile ? emul_profile_op : NULL,
		.priv = hw,
	};
}
