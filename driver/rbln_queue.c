// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_queue.c - command queues. Each queue is a drm_sched entity of the
 * device's scheduler with the queue's priority; its jobs run one after the
 * other in submission order, and it remembers the fences of its recent
 * jobs so that DRM_IOCTL_RBLN_WAIT can name a job by its id.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/dma-fence.h>
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <drm/drm_file.h>

#include "rbln_accel.h"
#include "rbln_client.h"
#include "rbln_device.h"
#include "rbln_drv.h"
#include "rbln_queue.h"

static void rbln_queue_release_work(struct work_struct *work)
{
	struct rbln_queue *queue = container_of(work, struct rbln_queue,
						release_work);
	struct rbln_device *rdev = queue->rdev;
	unsigned int i;

	/* Every job of the queue has been freed: the entity is idle. */
	drm_sched_entity_destroy(&queue->entity);
	for (i = 0; i < RBLN_QUEUE_HISTORY; i++)
		dma_fence_put(queue->history[i]);
	dma_fence_put(queue->last_hw);
	rbln_client_put(queue->client);
	xa_destroy(&queue->errors);
	mutex_destroy(&queue->lock);
	kvfree(queue);

	atomic_dec(&rdev->live_queues);
	wake_up_all(&rdev->idle_wq);
}

static void rbln_queue_release(struct kref *kref)
{
	struct rbln_queue *queue = container_of(kref, struct rbln_queue,
						refcount);

	/* The last reference may go in scheduler context (a job's free). */
	queue_work(queue->rdev->wq, &queue->release_work);
}

/**
 * rbln_queue_get() - take a reference
 * @queue: the queue
 */
void rbln_queue_get(struct rbln_queue *queue)
{
	kref_get(&queue->refcount);
}

/**
 * rbln_queue_put() - drop a reference
 * @queue: the queue, may be NULL
 */
void rbln_queue_put(struct rbln_queue *queue)
{
	if (queue)
		kref_put(&queue->refcount, rbln_queue_release);
}

/**
 * rbln_queue_lookup() - find a queue of a file by id
 * @rfile: the file
 * @id: the queue id
 *
 * Return: the queue with a reference, or NULL.
 */
struct rbln_queue *rbln_queue_lookup(struct rbln_file *rfile, u32 id)
{
	struct rbln_queue *queue;

	xa_lock(&rfile->queues);
	queue = xa_load(&rfile->queues, id);
	if (queue)
		rbln_queue_get(queue);
	xa_unlock(&rfile->queues);
	return queue;
}

static int rbln_sched_priority(u32 priority, enum drm_sched_priority *prio)
{
	switch (priority) {
	case DRM_RBLN_PRIORITY_LOW:
		*prio = DRM_SCHED_PRIORITY_LOW;
		return 0;
	case DRM_RBLN_PRIORITY_NORMAL:
		*prio = DRM_SCHED_PRIORITY_NORMAL;
		return 0;
	case DRM_RBLN_PRIORITY_HIGH:
		*prio = DRM_SCHED_PRIORITY_HIGH;
		return 0;
	}
	return -EINVAL;
}

/**
 * rbln_ioctl_queue_create() - DRM_IOCTL_RBLN_QUEUE_CREATE
 * @dev: the DRM device
 * @data: &struct drm_rbln_queue_create
 * @file: the caller's file
 *
 * Return: 0, -EINVAL, -ENOSPC when the file has rbln_params.max_queues
 * queues already, or -ENOMEM.
 */
int rbln_ioctl_queue_create(struct drm_device *dev, void *data,
			    struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(dev);
	struct drm_rbln_queue_create *args = data;
	struct rbln_file *rfile = file->driver_priv;
	struct drm_gpu_scheduler *sched_list[] = { &rdev->sched };
	enum drm_sched_priority prio;
	struct rbln_queue *queue;
	u32 id;
	int ret;

	if (args->flags || args->pad)
		return -EINVAL;
	ret = rbln_sched_priority(args->priority, &prio);
	if (ret)
		return ret;

	queue = kvzalloc(sizeof(*queue), GFP_KERNEL_ACCOUNT);
	if (!queue)
		return -ENOMEM;

	kref_init(&queue->refcount);
	queue->rdev = rdev;
	queue->priority = args->priority;
	queue->client_id = file->client_id;
	queue->client = rfile->client;
	rbln_client_get(queue->client);
	queue->fence_context = dma_fence_context_alloc(1);
	mutex_init(&queue->lock);
	spin_lock_init(&queue->fence_lock);
	xa_init(&queue->errors);
	INIT_WORK(&queue->release_work, rbln_queue_release_work);

	ret = drm_sched_entity_init(&queue->entity, prio, sched_list,
				    ARRAY_SIZE(sched_list), NULL);
	if (ret)
		goto err_free;
	atomic_inc(&rdev->live_queues);

	mutex_lock(&rfile->lock);
	if (rfile->nqueues >= rbln_params.max_queues) {
		ret = -ENOSPC;
	} else {
		ret = xa_alloc_cyclic(&rfile->queues, &id, queue,
				      XA_LIMIT(1, U32_MAX),
				      &rfile->next_queue_id, GFP_KERNEL);
		if (ret >= 0) {
			queue->id = id;
			rfile->nqueues++;
			ret = 0;
		}
	}
	mutex_unlock(&rfile->lock);
	if (ret) {
		rbln_queue_put(queue);
		return ret;
	}

	args->queue_id = id;
	return 0;

err_free:
	rbln_client_put(queue->client);
	mutex_destroy(&queue->lock);
	kvfree(queue);
	return ret;
}

/**
 * rbln_ioctl_queue_destroy() - DRM_IOCTL_RBLN_QUEUE_DESTROY
 * @dev: the DRM device
 * @data: &struct drm_rbln_queue_destroy
 * @file: the caller's file
 *
 * Jobs already submitted keep their reference to the queue; they run and
 * signal, and the entity goes away after the last of them.
 *
 * Return: 0, -EINVAL or -ENOENT.
 */
int rbln_ioctl_queue_destroy(struct drm_device *dev, void *data,
			     struct drm_file *file)
{
	struct drm_rbln_queue_destroy *args = data;
	struct rbln_file *rfile = file->driver_priv;
	struct rbln_queue *queue;

	if (args->pad)
		return -EINVAL;

	mutex_lock(&rfile->lock);
	queue = xa_erase(&rfile->queues, args->queue_id);
	if (queue)
		rfile->nqueues--;
	mutex_unlock(&rfile->lock);
	if (!queue)
		return -ENOENT;

	rbln_queue_put(queue);
	return 0;
}

/**
 * rbln_file_queues_fini() - drop every queue of a closing file
 * @rfile: the file
 */
void rbln_file_queues_fini(struct rbln_file *rfile)
{
	struct rbln_queue *queue;
	unsigned long id;

	mutex_lock(&rfile->lock);
	xa_for_each(&rfile->queues, id, queue) {
		xa_erase(&rfile->queues, id);
		rbln_queue_put(queue);
	}
	rfile->nqueues = 0;
	mutex_unlock(&rfile->lock);
}

/**
 * rbln_queue_reserve() - make room in the history for the next job
 * @queue: the queue; the caller holds &rbln_queue.lock
 *
 * A queue has at most RBLN_QUEUE_HISTORY unfinished jobs: submitting more
 * waits for the oldest one, like a full hardware ring.
 *
 * Return: 0, or -ERESTARTSYS when a signal interrupted the wait.
 */
int rbln_queue_reserve(struct rbln_queue *queue)
{
	struct dma_fence *old;
	long ret;

	lockdep_assert_held(&queue->lock);
	spin_lock(&queue->fence_lock);
	old = dma_fence_get(queue->history[(queue->last_job_id + 1) %
					   RBLN_QUEUE_HISTORY]);
	spin_unlock(&queue->fence_lock);
	if (!old)
		return 0;

	ret = dma_fence_wait(old, true);
	dma_fence_put(old);
	return ret;
}

static void rbln_queue_log_error(struct rbln_queue *queue, u64 job_id,
				 int status)
{
	unsigned long first = 0;

	if (queue->nerrors >= RBLN_QUEUE_ERROR_LOG &&
	    xa_find(&queue->errors, &first, ULONG_MAX, XA_PRESENT)) {
		xa_erase(&queue->errors, first);
		queue->nerrors--;
	}
	if (!xa_is_err(xa_store(&queue->errors, job_id,
				xa_mk_value(-status), GFP_KERNEL)))
		queue->nerrors++;
}

/**
 * rbln_queue_record() - remember the finished fence of a new job
 * @queue: the queue; the caller holds &rbln_queue.lock and has called
 *	rbln_queue_reserve(), so the slot's previous job has ended
 * @job_id: the new job's id, one past the last one
 * @fence: its finished fence; the queue takes a reference
 */
void rbln_queue_record(struct rbln_queue *queue, u64 job_id,
		       struct dma_fence *fence)
{
	unsigned int slot = job_id % RBLN_QUEUE_HISTORY;
	struct dma_fence *old = queue->history[slot];
	int status;

	lockdep_assert_held(&queue->lock);
	if (old) {
		status = dma_fence_get_status(old);
		if (status < 0)
			rbln_queue_log_error(queue, job_id - RBLN_QUEUE_HISTORY,
					     status);
	}

	spin_lock(&queue->fence_lock);
	queue->history[slot] = dma_fence_get(fence);
	queue->last_job_id = job_id;
	spin_unlock(&queue->fence_lock);
	dma_fence_put(old);
}

/**
 * rbln_queue_job_fence() - the fence or the result of a job
 * @queue: the queue
 * @job_id: the job
 * @fence: set to the job's finished fence (referenced) while the queue
 *	still has it, else to NULL
 * @status: with @fence NULL, the job's result
 *
 * Return: 0, or -ENOENT for a job id the queue never gave out.
 */
int rbln_queue_job_fence(struct rbln_queue *queue, u64 job_id,
			 struct dma_fence **fence, int *status)
{
	void *entry;

	*fence = NULL;
	*status = 0;

	spin_lock(&queue->fence_lock);
	if (!job_id || job_id > queue->last_job_id) {
		spin_unlock(&queue->fence_lock);
		return -ENOENT;
	}
	if (queue->last_job_id - job_id < RBLN_QUEUE_HISTORY)
		*fence = dma_fence_get(queue->history[job_id %
						      RBLN_QUEUE_HISTORY]);
	spin_unlock(&queue->fence_lock);

	if (!*fence) {
		entry = xa_load(&queue->errors, job_id);
		if (entry)
			*status = -(int)xa_to_value(entry);
	}
	return 0;
}

/**
 * rbln_queue_set_hw_fence() - note the hardware fence of the job run last
 * @queue: the queue
 * @hw: the fence; the queue takes a reference
 */
void rbln_queue_set_hw_fence(struct rbln_queue *queue, struct dma_fence *hw)
{
	struct dma_fence *old;

	spin_lock(&queue->fence_lock);
	old = queue->last_hw;
	queue->last_hw = dma_fence_get(hw);
	spin_unlock(&queue->fence_lock);
	dma_fence_put(old);
}

/**
 * rbln_queue_hw_dependency() - what the next job of the queue waits for
 * @queue: the queue
 *
 * drm_sched ignores dependencies between jobs of one entity, because a
 * hardware ring runs them in order. The modeled device runs several jobs at
 * the same time, so the queue's order is kept here: a job becomes runnable
 * when the hardware fence of the queue's previous job has signalled.
 *
 * Return: that fence (referenced), or NULL when it has signalled.
 */
struct dma_fence *rbln_queue_hw_dependency(struct rbln_queue *queue)
{
	struct dma_fence *fence = NULL;

	spin_lock(&queue->fence_lock);
	if (queue->last_hw && !dma_fence_is_signaled(queue->last_hw))
		fence = dma_fence_get(queue->last_hw);
	spin_unlock(&queue->fence_lock);
	return fence;
}
