/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rbln_compat.h - the one place where rbln.ko meets kernel API differences.
 *
 * The driver is written against Debian's 6.12 kernel (bookworm-backports).
 * Everything that differs in the kernels it also builds against is wrapped
 * here, so that the rest of the driver reads like 6.12 code.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */
#ifndef RBLN_COMPAT_H
#define RBLN_COMPAT_H

#include <drm/gpu_scheduler.h>

/**
 * rbln_compat_sched_init() - drm_sched_init() with the 6.12 argument list
 * @sched: the scheduler
 * @ops: backend operations
 * @num_rqs: run queues (one per priority)
 * @credit_limit: jobs the hardware runs at the same time
 * @timeout: job timeout in jiffies
 * @timeout_wq: workqueue of the timeout handler
 * @name: name for messages
 * @dev: the device
 *
 * 6.12.0 takes the arguments one by one; later stable updates of some
 * distributions and 6.15+ take a &struct drm_sched_init_args. Kbuild
 * detects which one the headers have (RBLN_HAVE_SCHED_INIT_ARGS).
 *
 * Return: 0 or a negative errno.
 */
static inline int
rbln_compat_sched_init(struct drm_gpu_scheduler *sched,
		       const struct drm_sched_backend_ops *ops, u32 num_rqs,
		       u32 credit_limit, long timeout,
		       struct workqueue_struct *timeout_wq, const char *name,
		       struct device *dev)
{
#ifdef RBLN_HAVE_SCHED_INIT_ARGS
	const struct drm_sched_init_args args = {
		.ops = ops,
		.num_rqs = num_rqs,
		.credit_limit = credit_limit,
		.timeout = timeout,
		.timeout_wq = timeout_wq,
		.name = name,
		.dev = dev,
	};

	return drm_sched_init(sched, &args);
#else
	return drm_sched_init(sched, ops, NULL, num_rqs, credit_limit, 0,
			      timeout, timeout_wq, NULL, name, dev);
#endif
}

/**
 * rbln_compat_sched_job_init() - drm_sched_job_init() for a job of @file
 * @job: the job
 * @entity: its entity
 * @owner: owner cookie (the file)
 * @client_id: drm_file client id, passed where the kernel wants it
 *
 * Return: 0 or a negative errno.
 */
static inline int
rbln_compat_sched_job_init(struct drm_sched_job *job,
			   struct drm_sched_entity *entity, void *owner,
			   u64 client_id)
{
#ifdef RBLN_HAVE_SCHED_CLIENT_ID
	return drm_sched_job_init(job, entity, 1, owner, client_id);
#else
	return drm_sched_job_init(job, entity, 1, owner);
#endif
}

/**
 * rbln_compat_requeue_job() - give a timed-out job back to the scheduler
 * @sched: its scheduler
 * @job: the job drm_sched passed to &drm_sched_backend_ops.timedout_job
 *
 * drm_sched takes the job off its pending list before it calls the timeout
 * handler. When the handler decides that the job is not hung (or it only
 * resets other jobs), the job must go back to the head of the pending list,
 * otherwise it is never freed. Kernels 6.17+ do this in the core when the
 * handler returns DRM_GPU_SCHED_STAT_NO_HANG; before that, drivers with
 * firmware-style per-job recovery (xe's xe_sched_add_pending_job()) do it
 * themselves, as here. The caller has stopped the scheduler's work queue
 * with drm_sched_wqueue_stop(), so no job can be freed concurrently.
 */
static inline void
rbln_compat_requeue_job(struct drm_gpu_scheduler *sched,
			struct drm_sched_job *job)
{
	spin_lock(&sched->job_list_lock);
	list_add(&job->list, &sched->pending_list);
	spin_unlock(&sched->job_list_lock);
}

/*
 * &drm_driver.date was removed in 6.14 (Kbuild defines RBLN_HAVE_DRIVER_DATE
 * where it exists); DRM_GPU_SCHED_STAT_NOMINAL became
 * DRM_GPU_SCHED_STAT_RESET in 6.17.
 */
#ifdef RBLN_HAVE_SCHED_STAT_NOMINAL
#define RBLN_SCHED_STAT_RECOVERED	DRM_GPU_SCHED_STAT_NOMINAL
#else
#define RBLN_SCHED_STAT_RECOVERED	DRM_GPU_SCHED_STAT_RESET
#endif

/*
 * The driver calls dma-buf functions (its imports' vmap and mmap), which
 * are exported in the DMA_BUF namespace. MODULE_IMPORT_NS() takes the
 * namespace as a bare token up to 6.12 and as a string from 6.13 (Kbuild
 * defines RBLN_HAVE_IMPORT_NS_STRING there).
 */
#ifdef RBLN_HAVE_IMPORT_NS_STRING
#define RBLN_MODULE_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS("DMA_BUF")
#else
#define RBLN_MODULE_IMPORT_NS_DMA_BUF	MODULE_IMPORT_NS(DMA_BUF)
#endif

#endif /* RBLN_COMPAT_H */
