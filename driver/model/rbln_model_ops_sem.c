// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_ops_sem.c - semaphores and barriers: SEM_SIGNAL, SEM_WAIT,
 * BARRIER.
 *
 * A semaphore is a u64 counter in a buffer that other devices (other engine
 * threads, in the emulated backend even other processes) map too. Signals
 * publish with release order and waits observe with acquire order, so the
 * data a device wrote before signalling is what the waiter reads after its
 * wait: that pairing is the whole cross-device memory model of the ISA.
 */

#include "rbln_model_internal.h"

/**
 * rbln_model_sem_signal() - RBLN_OP_SEM_SIGNAL
 * @sem: the counter, naturally aligned
 * @op: RBLN_SEM_SET or RBLN_SEM_ADD
 * @value: the value to store or add (wrapping)
 */
void rbln_model_sem_signal(u64 *sem, u32 op, u64 value)
{
	if (op == RBLN_SEM_ADD)
		rbln_os_add_release64(sem, value);
	else
		rbln_os_store_release64(sem, value);
}

/**
 * rbln_model_sem_ready() - whether a counter satisfies a wait
 * @counter: the counter's value
 * @cond: RBLN_SEM_GEQ or RBLN_SEM_EQ
 * @value: the value of the wait
 *
 * Return: true when the wait is satisfied.
 */
static bool rbln_model_sem_ready(u64 counter, u32 cond, u64 value)
{
	if (cond == RBLN_SEM_EQ)
		return counter == value;
	return counter >= value;
}

/**
 * rbln_model_sem_wait() - RBLN_OP_SEM_WAIT
 * @sem: the counter, naturally aligned
 * @cond: RBLN_SEM_GEQ or RBLN_SEM_EQ
 * @value: the value compared with the counter
 * @timeout_ns: how long to wait from now, 1 to RBLN_ISA_SEM_WAIT_MAX_NS
 * @env: the home's clock, back-off and cancellation
 *
 * The counter is polled before the clock is read, so a wait that is already
 * satisfied succeeds even when its deadline has passed by the time it is
 * looked at. Between polls the home decides how to back off (spin, yield,
 * sleep), told how many polls have failed so far.
 *
 * Return: 0; -RBLN_ETIMEDOUT when @timeout_ns passed first;
 * -RBLN_ECANCELED when the job was cancelled while waiting.
 */
int rbln_model_sem_wait(const u64 *sem, u32 cond, u64 value, u64 timeout_ns,
			const struct rbln_model_env *env)
{
	u64 start = env->now_ns(env->priv);
	u32 spins = 0;
	u64 now;

	for (;;) {
		if (rbln_model_sem_ready(rbln_os_load_acquire64(sem), cond,
					 value))
			return 0;
		if (env->cancelled(env->priv))
			return -RBLN_ECANCELED;
		now = env->now_ns(env->priv);
		/* A clock that steps back counts as no time passed. */
		if (now >= start && now - start >= timeout_ns)
			return -RBLN_ETIMEDOUT;
		if (spins != 0xffffffffU)
			spins++;
		env->relax(env->priv, spins);
	}
}

/**
 * rbln_model_barrier() - RBLN_OP_BARRIER
 *
 * Commands already run in order and env->parallel returns only when all
 * parts are done, so what is left is visibility to other devices: a full
 * fence orders every earlier write before every later access.
 */
void rbln_model_barrier(void)
{
	rbln_os_fence();
}
