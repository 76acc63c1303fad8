// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_engine.c - the model's home in the kernel: neural engines and the
 * &struct rbln_model_env that rbln_model_execute() runs with.
 *
 * A job executes on a worker of the device's exec workqueue (queued on the
 * device's NUMA node). When the model splits a command into parts
 * (&rbln_model_env.parallel), the parts go to the device's engine kthreads,
 * created on the same node; the submitting worker takes parts itself too,
 * so a command never waits for an engine that is busy elsewhere.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/build_bug.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/topology.h>

#include "rbln_device.h"
#include "rbln_engine.h"
#include "rbln_job.h"
#include "rbln_model.h"

static_assert(RBLN_EIO == EIO);
static_assert(RBLN_EINVAL == EINVAL);
static_assert(RBLN_ETIMEDOUT == ETIMEDOUT);
static_assert(RBLN_ECANCELED == ECANCELED);

/* SEM_WAIT polling: spin this many times, then sleep 10 us doubling to 1 ms. */
#define RBLN_RELAX_SPINS	4
#define RBLN_RELAX_MIN_US	10
#define RBLN_RELAX_MAX_US	1000

/**
 * struct rbln_par - one command split into parts for the engines
 * @link: entry in &rbln_engines.work while parts are unclaimed
 * @fn: the model's part function
 * @arg: its argument
 * @nparts: number of parts
 * @next: next unclaimed part, under &rbln_engines.lock
 * @done: parts finished
 */
struct rbln_par {
	struct list_head link;
	void (*fn)(void *arg, u32 part, u32 nparts);
	void *arg;
	u32 nparts;
	u32 next;
	atomic_t done;
};

/* Called with &rbln_engines.lock held. */
static bool rbln_par_claim(struct rbln_engines *eng, struct rbln_par *par,
			   u32 *part)
{
	lockdep_assert_held(&eng->lock);
	if (par->next >= par->nparts)
		return false;
	*part = par->next++;
	if (par->next == par->nparts)
		list_del_init(&par->link);
	return true;
}

static void rbln_par_run(struct rbln_engines *eng, struct rbln_par *par,
			 u32 part)
{
	u32 nparts = par->nparts;

	par->fn(par->arg, part, nparts);
	/* The owner may return as soon as the count is complete. */
	if (atomic_inc_return(&par->done) == nparts)
		wake_up_all(&eng->done);
}

static int rbln_engine_thread(void *data)
{
	struct rbln_engines *eng = data;

	while (!kthread_should_stop()) {
		struct rbln_par *par = NULL;
		u32 part = 0;

		spin_lock(&eng->lock);
		if (!list_empty(&eng->work)) {
			par = list_first_entry(&eng->work, struct rbln_par,
					       link);
			if (!rbln_par_claim(eng, par, &part))
				par = NULL;
		}
		spin_unlock(&eng->lock);

		if (par) {
			rbln_par_run(eng, par, part);
			cond_resched();
			continue;
		}
		/*
		 * Exclusive: rbln_env_parallel() wakes as many engines as
		 * its parts need, not all (kthread_stop() wakes this task
		 * directly).
		 */
		wait_event_interruptible_exclusive(eng->wake,
						   !list_empty_careful(&eng->work) ||
						   kthread_should_stop());
	}
	return 0;
}

/**
 * rbln_engines_init() - start the engine kthreads of a device
 * @rdev: the device (its NUMA node is set)
 * @count: number of engines
 *
 * Return: 0, or a negative errno with nothing left running.
 */
int rbln_engines_init(struct rbln_device *rdev, unsigned int count)
{
	struct rbln_engines *eng = &rdev->engines;
	int node = rdev->numa_node;
	unsigned int i;

	spin_lock_init(&eng->lock);
	INIT_LIST_HEAD(&eng->work);
	init_waitqueue_head(&eng->wake);
	init_waitqueue_head(&eng->done);

	eng->tasks = kcalloc_node(count, sizeof(*eng->tasks), GFP_KERNEL, node);
	if (!eng->tasks)
		return -ENOMEM;

	for (i = 0; i < count; i++) {
		struct task_struct *task;

		task = kthread_create_on_node(rbln_engine_thread, eng, node,
					      "rbln%u/ne%u", rdev->index, i);
		if (IS_ERR(task)) {
			rbln_engines_fini(rdev);
			return PTR_ERR(task);
		}
		if (node != NUMA_NO_NODE &&
		    cpumask_intersects(cpumask_of_node(node), cpu_online_mask))
			set_cpus_allowed_ptr(task, cpumask_of_node(node));
		eng->tasks[eng->count++] = task;
		wake_up_process(task);
	}
	return 0;
}

/**
 * rbln_engines_fini() - stop the engine kthreads
 * @rdev: the device; no job runs any more
 */
void rbln_engines_fini(struct rbln_device *rdev)
{
	struct rbln_engines *eng = &rdev->engines;
	unsigned int i;

	for (i = 0; i < eng->count; i++)
		kthread_stop(eng->tasks[i]);
	eng->count = 0;
	kfree(eng->tasks);
	eng->tasks = NULL;
}

/*
 * The model calls relax and cancelled outside its FPU sections, but the
 * environment does not rely on it: it only sleeps where sleeping is
 * allowed.
 */
static bool rbln_may_sleep(void)
{
	return preemptible();
}

static u64 rbln_env_now_ns(void *priv)
{
	return ktime_get_ns();
}

static void rbln_env_relax(void *priv, u32 spins)
{
	struct rbln_job *job = priv;
	unsigned int us;

	atomic_inc(&job->progress);
	if (spins < RBLN_RELAX_SPINS || !rbln_may_sleep()) {
		cpu_relax();
		return;
	}
	us = RBLN_RELAX_MIN_US << min(spins - RBLN_RELAX_SPINS, 7U);
	us = min(us, RBLN_RELAX_MAX_US);
	usleep_range(us, us + us / 4);
}

static bool rbln_env_cancelled(void *priv)
{
	struct rbln_job *job = priv;

	atomic_inc(&job->progress);
	if (rbln_may_sleep())
		cond_resched();
	return READ_ONCE(job->cancel) != 0;
}

static void rbln_env_parallel(void *priv,
			      void (*fn)(void *arg, u32 part, u32 nparts),
			      void *arg, u32 nparts)
{
	struct rbln_job *job = priv;
	struct rbln_engines *eng = &job->rdev->engines;
	struct rbln_par par = {
		.fn = fn,
		.arg = arg,
		.nparts = nparts,
	};
	u32 part;

	atomic_inc(&job->progress);
	if (nparts <= 1 || eng->count <= 1 || !rbln_may_sleep()) {
		for (part = 0; part < nparts; part++)
			fn(arg, part, nparts);
		return;
	}

	atomic_set(&par.done, 0);
	spin_lock(&eng->lock);
	list_add_tail(&par.link, &eng->work);
	spin_unlock(&eng->lock);
	/* Only the engines the parts need: the caller runs parts too. */
	wake_up_nr(&eng->wake, nparts - 1);

	for (;;) {
		bool claimed;

		spin_lock(&eng->lock);
		claimed = rbln_par_claim(eng, &par, &part);
		spin_unlock(&eng->lock);
		if (!claimed)
			break;
		rbln_par_run(eng, &par, part);
	}
	wait_event(eng->done, atomic_read(&par.done) == nparts);
}

/**
 * rbln_engine_execute() - run a job's validated stream with the model
 * @job: the job; its buffers are mapped
 *
 * Return: 0, -ETIMEDOUT (a SEM_WAIT expired), or the job's cancel reason
 * (-EIO after a reset, -ECANCELED on unplug).
 */
int rbln_engine_execute(struct rbln_job *job)
{
	const struct rbln_model_env env = {
		.now_ns = rbln_env_now_ns,
		.relax = rbln_env_relax,
		.cancelled = rbln_env_cancelled,
		.parallel = rbln_env_parallel,
		.engines = max(job->rdev->engines.count, 1U),
		.priv = job,
	};
	int ret;

	ret = rbln_model_execute(job->cmd, job->cmd_size, job->mbos,
				 job->bo_count, &env, &job->diag);
	switch (ret) {
	case 0:
		return 0;
	case -RBLN_ETIMEDOUT:
		return -ETIMEDOUT;
	case -RBLN_ECANCELED:
		return READ_ONCE(job->cancel) ?: -ECANCELED;
	default:
		return -EIO;
	}
}
