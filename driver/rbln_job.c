// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_job.c - jobs on the device's drm_sched scheduler: running them on
 * the engines, hardware fences, hang detection and recovery.
 *
 * The modeled device runs up to rbln_params.hw_queues jobs at the same
 * time (the scheduler's credit limit), one per hardware context. A job in
 * flight is watched: every call the model makes into its environment
 * counts as progress, and a job that makes none for the job timeout is
 * hung. Detection is the device's watchdog, which hands over to the
 * scheduler's timeout handler (drm_sched_fault()); the handler resets the
 * hung hardware contexts: their jobs end with -EIO, the reset is counted,
 * and every other job keeps running.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/dma-fence.h>
#include <linux/dma-fence-chain.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>

#include "rbln_budget.h"
#include "rbln_client.h"
#include "rbln_compat.h"
#include "rbln_device.h"
#include "rbln_drv.h"
#include "rbln_engine.h"
#include "rbln_job.h"
#include "rbln_queue.h"

/* How long recovery waits for the engines to drop a reset job. */
#define RBLN_RESET_WAIT_MS	10000

/**
 * struct rbln_fence - hardware fence of a job
 * @base: the fence
 * @lock: its lock; a fence may outlive its device
 */
struct rbln_fence {
	struct dma_fence base;
	spinlock_t lock; /* see above */
};

static const char *rbln_fence_driver_name(struct dma_fence *fence)
{
	return RBLN_DRIVER_NAME;
}

static const char *rbln_fence_timeline_name(struct dma_fence *fence)
{
	return "rbln-hw-queue";
}

/* Hardware fences initialized and not yet released (debugfs "live"). */
static atomic_t rbln_fences_live = ATOMIC_INIT(0);

/**
 * rbln_fences_alive() - hardware fences not yet released
 *
 * Each holds a reference to the module: with no file open and no dma-buf
 * exported, this is what keeps rmmod from succeeding.
 *
 * Return: the count, of every device together.
 */
int rbln_fences_alive(void)
{
	return atomic_read(&rbln_fences_live);
}

/*
 * Fences can outlive the module's devices (a sync_file made from a
 * syncobj keeps them), and their ops live in this module: each fence pins
 * the module until it is released.
 */
static void rbln_fence_release(struct dma_fence *fence)
{
	dma_fence_free(fence);
	atomic_dec(&rbln_fences_live);
	module_put(THIS_MODULE);
}

static const struct dma_fence_ops rbln_fence_ops = {
	.get_driver_name = rbln_fence_driver_name,
	.get_timeline_name = rbln_fence_timeline_name,
	.release = rbln_fence_release,
};

static void rbln_job_work(struct work_struct *work);

/* Jobs come from their own cache: objects left at unload are reported. */
static struct kmem_cache *rbln_job_cache;

/**
 * rbln_job_cache_init() - create the job cache at module load
 *
 * Return: 0 or -ENOMEM.
 */
int rbln_job_cache_init(void)
{
	/* Jobs are charged to the submitter's memory cgroup. */
	rbln_job_cache = KMEM_CACHE(rbln_job, SLAB_ACCOUNT);
	return rbln_job_cache ? 0 : -ENOMEM;
}

/**
 * rbln_job_cache_fini() - destroy the job cache at module unload
 */
void rbln_job_cache_fini(void)
{
	kmem_cache_destroy(rbln_job_cache);
}

/**
 * rbln_job_alloc() - allocate a job and its arrays
 * @rdev: the device
 * @bo_count: entries of the buffer list
 * @in_count: in-syncs
 *
 * Return: the job with one reference, or NULL.
 */
struct rbln_job *rbln_job_alloc(struct rbln_device *rdev, u32 bo_count,
				u32 in_count)
{
	struct rbln_job *job;

	job = kmem_cache_zalloc(rbln_job_cache, GFP_KERNEL);
	if (!job)
		return NULL;

	kref_init(&job->refcount);
	job->rdev = rdev;
	INIT_LIST_HEAD(&job->link);
	INIT_WORK(&job->work, rbln_job_work);
	init_completion(&job->exec_done);
	atomic_inc(&rdev->live_jobs);

	job->objs = kvcalloc(bo_count, sizeof(*job->objs), GFP_KERNEL_ACCOUNT);
	job->mbos = kvcalloc(bo_count, sizeof(*job->mbos), GFP_KERNEL_ACCOUNT);
	job->in_fences = kcalloc(in_count, sizeof(*job->in_fences),
				 GFP_KERNEL_ACCOUNT);
	job->hw = kzalloc(sizeof(*job->hw), GFP_KERNEL_ACCOUNT);
	if ((bo_count && (!job->objs || !job->mbos)) ||
	    (in_count && !job->in_fences) || !job->hw) {
		rbln_job_put(job);
		return NULL;
	}
	return job;
}

/*
 * A job lets go of its buffers and stream when it ends, before its fence
 * signals: once DRM_RBLN_WAIT says a buffer is idle, no job holds it, and
 * closing its handle returns the memory at once.
 */
static void rbln_job_release_buffers(struct rbln_job *job)
{
	u32 i;

	for (i = 0; i < job->bo_count; i++)
		drm_gem_object_put(job->objs[i]);
	job->bo_count = 0;
	for (i = 0; i < job->in_count; i++)
		dma_fence_put(job->in_fences[i]);
	job->in_count = 0;
	kvfree(job->cmd);
	job->cmd = NULL;
	rbln_budget_uncharge(job->cmd_charged);
	job->cmd_charged = 0;
}

/**
 * rbln_job_begin_flight() - count the job in its client's jobs in flight
 * @job: a new job of a queue
 *
 * It stays counted until it ends (or is freed without running).
 *
 * Return: 0, or -EBUSY when the client is at its max_jobs limit.
 */
int rbln_job_begin_flight(struct rbln_job *job)
{
	int ret = rbln_client_job_begin(job->queue->client);

	job->in_flight = !ret;
	return ret;
}

/*
 * The job ended: the client may submit another one. Called before the
 * job's fence signals, so a client that waited for it never sees -EBUSY
 * on account of it.
 */
static void rbln_job_end_flight(struct rbln_job *job)
{
	if (job->in_flight) {
		job->in_flight = false;
		rbln_client_job_end(job->queue->client);
	}
}

static void rbln_job_release(struct kref *kref)
{
	struct rbln_job *job = container_of(kref, struct rbln_job, refcount);
	struct rbln_device *rdev = job->rdev;

	rbln_job_release_buffers(job);
	if (job->queue)
		rbln_job_end_flight(job);
	if (job->done)
		dma_fence_put(job->done);
	else
		kfree(job->hw);
	rbln_queue_put(job->queue);
	kvfree(job->objs);
	kvfree(job->mbos);
	kfree(job->in_fences);
	kmem_cache_free(rbln_job_cache, job);

	atomic_dec(&rdev->live_jobs);
	wake_up_all(&rdev->idle_wq);
}

/**
 * rbln_job_put() - drop a reference to a job
 * @job: the job
 */
void rbln_job_put(struct rbln_job *job)
{
	kref_put(&job->refcount, rbln_job_release);
}

static void rbln_job_finish(struct rbln_job *job, int status)
{
	struct rbln_device *rdev = job->rdev;
	u64 now = ktime_get_ns();

	spin_lock(&rdev->run_lock);
	list_del_init(&job->link);
	if (!--rdev->nrunning)
		rdev->busy_ns += now - rdev->busy_since;
	if (job->started && now > job->start_ns)
		job->queue->client->busy_ns += now - job->start_ns;
	spin_unlock(&rdev->run_lock);

	rbln_job_release_buffers(job);
	rbln_job_end_flight(job);
	atomic64_inc(&job->queue->completed);
	if (status) {
		atomic64_inc(&job->queue->failed);
		dma_fence_set_error(job->done, status);
	}
	dma_fence_signal(job->done);
	complete_all(&job->exec_done);
	wake_up_all(&rdev->idle_wq);
}

static void rbln_job_work(struct work_struct *work)
{
	struct rbln_job *job = container_of(work, struct rbln_job, work);
	struct rbln_device *rdev = job->rdev;
	int status;

	spin_lock(&rdev->run_lock);
	job->started = true;
	job->wd_progress = atomic_read(&job->progress);
	job->wd_stamp = ktime_get_ns();
	job->start_ns = job->wd_stamp;
	spin_unlock(&rdev->run_lock);

	status = READ_ONCE(job->cancel);
	if (!status) {
		switch (job->fault) {
		case RBLN_FAULT_FAIL:
			drm_err(&rdev->drm,
				"injected fault: job %llu of queue %u fails\n",
				job->job_id, job->queue->id);
			status = -EIO;
			break;
		case RBLN_FAULT_HANG:
			drm_info(&rdev->drm,
				 "injected fault: job %llu of queue %u stops responding\n",
				 job->job_id, job->queue->id);
			wait_event_idle(rdev->hang_wq, READ_ONCE(job->cancel));
			status = READ_ONCE(job->cancel);
			break;
		default:
			status = rbln_engine_execute(job);
			break;
		}
	}

	rbln_job_finish(job, status);
	rbln_job_put(job);
}

static bool rbln_job_dependency_failed(struct rbln_job *job)
{
	u32 i;

	for (i = 0; i < job->in_count; i++) {
		struct dma_fence *f = dma_fence_chain_contained(job->in_fences[i]);

		if (dma_fence_get_status(f) < 0)
			return true;
	}
	return false;
}

static struct dma_fence *rbln_job_prepare(struct drm_sched_job *sched_job,
					  struct drm_sched_entity *entity)
{
	return rbln_queue_hw_dependency(to_rbln_job(sched_job)->queue);
}

static struct dma_fence *rbln_job_run(struct drm_sched_job *sched_job)
{
	struct rbln_job *job = to_rbln_job(sched_job);
	struct rbln_device *rdev = job->rdev;
	struct dma_fence *fence = &job->hw->base;
	int err = 0;

	spin_lock_init(&job->hw->lock);
	dma_fence_init(fence, &rbln_fence_ops, &job->hw->lock,
		       job->queue->fence_context, job->job_id);
	__module_get(THIS_MODULE);
	atomic_inc(&rbln_fences_live);
	job->done = fence;
	rbln_queue_set_hw_fence(job->queue, fence);

	if (sched_job->s_fence->finished.error || rbln_job_dependency_failed(job))
		err = -ECANCELED;

	spin_lock(&rdev->run_lock);
	if (rdev->dead)
		err = -ECANCELED;
	if (!err) {
		job->fault = atomic_xchg(&rdev->fault, RBLN_FAULT_NONE);
		list_add_tail(&job->link, &rdev->running);
		if (!rdev->nrunning++)
			rdev->busy_since = ktime_get_ns();
	}
	spin_unlock(&rdev->run_lock);

	if (err) {
		rbln_job_release_buffers(job);
		rbln_job_end_flight(job);
		atomic64_inc(&job->queue->completed);
		atomic64_inc(&job->queue->failed);
		dma_fence_set_error(fence, err);
		dma_fence_signal(fence);
		return dma_fence_get(fence);
	}

	kref_get(&job->refcount);
	queue_work_node(rdev->numa_node, rdev->exec_wq, &job->work);
	rbln_watchdog_kick(rdev);
	return dma_fence_get(fence);
}

/* Called with &rbln_device.run_lock held. */
static bool rbln_job_hung(struct rbln_job *job, u64 now, u64 timeout_ns)
{
	int progress;

	lockdep_assert_held(&job->rdev->run_lock);
	if (!job->started || job->cancel)
		return false;
	progress = atomic_read(&job->progress);
	if (progress != job->wd_progress) {
		job->wd_progress = progress;
		job->wd_stamp = now;
		return false;
	}
	return now - job->wd_stamp >= timeout_ns;
}

static bool rbln_reset_done(struct rbln_device *rdev)
{
	struct rbln_job *job;
	bool done = true;

	spin_lock(&rdev->run_lock);
	list_for_each_entry(job, &rdev->running, link) {
		if (job->cancel == -EIO) {
			done = false;
			break;
		}
	}
	spin_unlock(&rdev->run_lock);
	return done;
}

/*
 * Reset every hung hardware context: its job is cancelled with -EIO and
 * recovery waits until the engines have let go of it.
 */
static unsigned int rbln_reset_hung(struct rbln_device *rdev)
{
	u64 timeout_ns = jiffies_to_nsecs(rdev->timeout);
	u64 now = ktime_get_ns();
	struct rbln_job *job;
	unsigned int hung = 0;

	spin_lock(&rdev->run_lock);
	list_for_each_entry(job, &rdev->running, link) {
		if (!rbln_job_hung(job, now, timeout_ns))
			continue;
		drm_err(&rdev->drm,
			"job %llu of queue %u made no progress for %u ms, resetting its context\n",
			job->job_id, job->queue->id,
			jiffies_to_msecs(rdev->timeout));
		WRITE_ONCE(job->cancel, -EIO);
		hung++;
	}
	if (hung)
		rdev->in_reset = true;
	spin_unlock(&rdev->run_lock);
	if (!hung)
		return 0;

	atomic_inc(&rdev->resets);
	wake_up_all(&rdev->hang_wq);
	if (!wait_event_timeout(rdev->idle_wq, rbln_reset_done(rdev),
				msecs_to_jiffies(RBLN_RESET_WAIT_MS)))
		drm_err(&rdev->drm, "engines did not stop a reset job\n");

	spin_lock(&rdev->run_lock);
	rdev->in_reset = false;
	spin_unlock(&rdev->run_lock);
	drm_info(&rdev->drm, "reset %u context(s), %d resets so far\n", hung,
		 atomic_read(&rdev->resets));
	return hung;
}

static enum drm_gpu_sched_stat rbln_job_timedout(struct drm_sched_job *sched_job)
{
	struct rbln_device *rdev = to_rbln_job(sched_job)->rdev;

	/* Nothing is run or freed while the hung contexts are reset. */
	drm_sched_wqueue_stop(&rdev->sched);
	rbln_reset_hung(rdev);
	rbln_compat_requeue_job(&rdev->sched, sched_job);
	drm_sched_wqueue_start(&rdev->sched);
	return RBLN_SCHED_STAT_RECOVERED;
}

static void rbln_job_free(struct drm_sched_job *sched_job)
{
	drm_sched_job_cleanup(sched_job);
	rbln_job_put(to_rbln_job(sched_job));
}

static const struct drm_sched_backend_ops rbln_sched_ops = {
	.prepare_job = rbln_job_prepare,
	.run_job = rbln_job_run,
	.timedout_job = rbln_job_timedout,
	.free_job = rbln_job_free,
};

static unsigned long rbln_watchdog_period(struct rbln_device *rdev)
{
	return max(rdev->timeout / 4, 1L);
}

/**
 * rbln_watchdog_kick() - make sure the watchdog runs while jobs do
 * @rdev: the device
 */
void rbln_watchdog_kick(struct rbln_device *rdev)
{
	queue_delayed_work(rdev->reset_wq, &rdev->watchdog,
			   rbln_watchdog_period(rdev));
}

/**
 * rbln_watchdog_work() - look for hung jobs
 * @work: &rbln_device.watchdog
 *
 * drm_sched's own timeout restarts whenever any job of the scheduler
 * completes, so with several jobs in flight a hung one could hide behind
 * busy neighbours. The watchdog checks each job in flight and starts the
 * scheduler's timeout handler at once when one is hung.
 */
void rbln_watchdog_work(struct work_struct *work)
{
	struct rbln_device *rdev = container_of(to_delayed_work(work),
						struct rbln_device, watchdog);
	u64 timeout_ns = jiffies_to_nsecs(rdev->timeout);
	u64 now = ktime_get_ns();
	struct rbln_job *job;
	bool hung = false, busy;

	spin_lock(&rdev->run_lock);
	list_for_each_entry(job, &rdev->running, link)
		hung |= rbln_job_hung(job, now, timeout_ns);
	busy = !list_empty(&rdev->running);
	spin_unlock(&rdev->run_lock);

	if (hung)
		drm_sched_fault(&rdev->sched);
	if (busy)
		rbln_watchdog_kick(rdev);
}

/**
 * rbln_device_cancel_jobs() - mark a device dead and stop its jobs
 * @rdev: the device
 * @err: the errno running jobs end with
 *
 * Jobs that have not started fail without running from now on.
 */
void rbln_device_cancel_jobs(struct rbln_device *rdev, int err)
{
	struct rbln_job *job;

	spin_lock(&rdev->run_lock);
	rdev->dead = true;
	list_for_each_entry(job, &rdev->running, link) {
		if (!job->cancel)
			WRITE_ONCE(job->cancel, err);
	}
	spin_unlock(&rdev->run_lock);
	wake_up_all(&rdev->hang_wq);
}

/**
 * rbln_sched_init() - set up the device's scheduler
 * @rdev: the device
 *
 * Return: 0 or a negative errno.
 */
int rbln_sched_init(struct rbln_device *rdev)
{
	return rbln_compat_sched_init(&rdev->sched, &rbln_sched_ops,
				      DRM_SCHED_PRIORITY_COUNT,
				      rbln_params.hw_queues, rdev->timeout,
				      rdev->reset_wq, dev_name(rdev->drm.dev),
				      rdev->drm.dev);
}

/**
 * rbln_sched_fini() - tear the scheduler down; no job is left
 * @rdev: the device
 */
void rbln_sched_fini(struct rbln_device *rdev)
{
	drm_sched_fini(&rdev->sched);
}
