/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rbln_job.h - jobs: one validated command stream with its buffers, run by
 * drm_sched on the device's engines; hang detection and recovery.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */
#ifndef RBLN_JOB_H
#define RBLN_JOB_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/workqueue.h>
#include <drm/gpu_scheduler.h>

#include "rbln_model.h"

struct dma_fence;
struct drm_gem_object;
struct rbln_device;
struct rbln_fence;
struct rbln_queue;

/**
 * struct rbln_job - one submission
 * @base: the scheduler job
 * @refcount: the scheduler's reference plus the executing engine's
 * @rdev: the device
 * @queue: its queue (referenced)
 * @job_id: per-queue sequence number
 * @cmd: the kernel copy of the stream that was validated
 * @cmd_size: its size in bytes
 * @cmd_charged: bytes of @cmd charged to the host budget
 * @bo_count: entries of @objs and @mbos
 * @objs: the buffers (referenced)
 * @mbos: the buffer list as the model sees it (kernel mappings)
 * @in_count: entries of @in_fences
 * @in_fences: fences of the in-syncs (referenced), checked for errors
 * @hw: the hardware fence, allocated at submission
 * @done: @hw once initialized by run_job, signalled when execution ends
 * @work: executes the job on the device's exec workqueue
 * @link: entry in &rbln_device.running
 * @exec_done: completed when the engine let go of the job
 * @fault: &enum rbln_fault injected into this job
 * @cancel: 0, or the errno the job must stop with (reset, unplug)
 * @started: execution began (watchdog fields and @start_ns valid)
 * @start_ns: when execution began, for the client's busy time
 * @in_flight: counted in the client's jobs in flight until it ends
 * @progress: counts the model's calls into the environment
 * @wd_progress: @progress when the watchdog last saw it change
 * @wd_stamp: when that was (ns)
 * @diag: where execution stopped, for messages
 */
struct rbln_job {
	struct drm_sched_job base;
	struct kref refcount;
	struct rbln_device *rdev;
	struct rbln_queue *queue;
	u64 job_id;

	void *cmd;
	u64 cmd_size;
	u64 cmd_charged;
	u32 bo_count;
	struct drm_gem_object **objs;
	struct rbln_model_bo *mbos;
	u32 in_count;
	struct dma_fence **in_fences;

	struct rbln_fence *hw;
	struct dma_fence *done;
	struct work_struct work;
	struct list_head link;
	struct completion exec_done;
	int fault;
	int cancel;
	bool started;
	u64 start_ns;
	bool in_flight;
	atomic_t progress;
	int wd_progress;
	u64 wd_stamp;
	struct rbln_model_diag diag;
};

static inline struct rbln_job *to_rbln_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct rbln_job, base);
}

struct rbln_job *rbln_job_alloc(struct rbln_device *rdev, u32 bo_count,
				u32 in_count);
void rbln_job_put(struct rbln_job *job);
int rbln_job_begin_flight(struct rbln_job *job);
int rbln_fences_alive(void);
int rbln_job_cache_init(void);
void rbln_job_cache_fini(void);
int rbln_sched_init(struct rbln_device *rdev);
void rbln_sched_fini(struct rbln_device *rdev);
void rbln_device_cancel_jobs(struct rbln_device *rdev, int err);
void rbln_watchdog_work(struct work_struct *work);
void rbln_watchdog_kick(struct rbln_device *rdev);

#endif /* RBLN_JOB_H */
