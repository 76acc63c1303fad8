/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rbln_queue.h - command queues: one drm_sched entity each.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */
#ifndef RBLN_QUEUE_H
#define RBLN_QUEUE_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <drm/gpu_scheduler.h>

struct dma_fence;
struct rbln_client;
struct rbln_device;
struct rbln_file;

/* Finished fences a queue keeps for DRM_IOCTL_RBLN_WAIT (a power of 2). */
#define RBLN_QUEUE_HISTORY	1024
/* Failed jobs remembered after their fence left the history. */
#define RBLN_QUEUE_ERROR_LOG	1024

/**
 * struct rbln_queue - a command queue of one file
 * @refcount: the file's reference plus one per job
 * @rdev: the device
 * @id: queue id within the file
 * @priority: &enum drm_rbln_priority
 * @client_id: DRM client id of the file that created it
 * @client: accounting of that file (referenced); its jobs count there
 * @entity: the scheduler entity
 * @fence_context: fence context of the queue's hardware fences
 * @lock: serialises submission (job ids, entity pushes)
 * @fence_lock: protects @last_job_id, @history and @last_hw
 * @last_job_id: id of the newest job, 0 if none
 * @history: finished fences of the newest jobs, indexed by job id
 * @last_hw: hardware fence of the job that ran last; the next job of the
 *	queue waits for it (&drm_sched_backend_ops.prepare_job)
 * @errors: job id -> -status for failed jobs older than @history
 * @nerrors: entries of @errors
 * @completed: jobs that ended
 * @failed: jobs that ended with an error
 * @release_work: destroys the entity once nothing refers to the queue
 */
struct rbln_queue {
	struct kref refcount;
	struct rbln_device *rdev;
	u32 id;
	u32 priority;
	u64 client_id;
	struct rbln_client *client;
	struct drm_sched_entity entity;
	u64 fence_context;
	struct mutex lock; /* see above */
	spinlock_t fence_lock; /* see above */
	u64 last_job_id;
	struct dma_fence *history[RBLN_QUEUE_HISTORY];
	struct dma_fence *last_hw;
	struct xarray errors;
	unsigned int nerrors;
	atomic64_t completed;
	atomic64_t failed;
	struct work_struct release_work;
};

struct rbln_queue *rbln_queue_lookup(struct rbln_file *rfile, u32 id);
void rbln_queue_put(struct rbln_queue *queue);
void rbln_queue_get(struct rbln_queue *queue);
int rbln_queue_job_fence(struct rbln_queue *queue, u64 job_id,
			 struct dma_fence **fence, int *status);
int rbln_queue_reserve(struct rbln_queue *queue);
void rbln_queue_record(struct rbln_queue *queue, u64 job_id,
		       struct dma_fence *fence);
void rbln_queue_set_hw_fence(struct rbln_queue *queue, struct dma_fence *hw);
struct dma_fence *rbln_queue_hw_dependency(struct rbln_queue *queue);
void rbln_file_queues_fini(struct rbln_file *rfile);

#endif /* RBLN_QUEUE_H */
