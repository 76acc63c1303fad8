// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_wait.c - DRM_IOCTL_RBLN_WAIT: wait for a job or for a buffer to be
 * idle, with an absolute CLOCK_MONOTONIC deadline.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include "rbln_accel.h"
#include "rbln_drv.h"
#include "rbln_queue.h"

/* Jiffies until an absolute deadline; 0 polls, never negative. */
static long rbln_timeout_jiffies(s64 deadline_ns)
{
	s64 now = ktime_get_ns();
	u64 left;

	if (deadline_ns <= now)
		return 0;
	left = nsecs_to_jiffies64((u64)deadline_ns - (u64)now);
	if (left >= MAX_SCHEDULE_TIMEOUT - 1)
		return MAX_SCHEDULE_TIMEOUT;
	/* Round up so that a short wait is not turned into a poll. */
	return left + 1;
}

/*
 * What userspace sees as a job's result: its own errors pass through;
 * whatever the scheduler says about a job that never ran (a killed entity,
 * a device gone) is -ECANCELED.
 */
static int rbln_job_status(int err)
{
	switch (err) {
	case 0:
	case -ETIMEDOUT:
	case -EIO:
	case -ECANCELED:
		return err;
	default:
		return -ECANCELED;
	}
}

static int rbln_wait_job(struct rbln_file *rfile, struct drm_rbln_wait *args)
{
	struct rbln_queue *queue;
	struct dma_fence *fence;
	int status, ret;
	long left;

	queue = rbln_queue_lookup(rfile, args->handle);
	if (!queue)
		return -ENOENT;
	ret = rbln_queue_job_fence(queue, args->job_id, &fence, &status);
	rbln_queue_put(queue);
	if (ret)
		return ret;

	if (fence) {
		left = dma_fence_wait_timeout(fence, true,
					      rbln_timeout_jiffies(args->timeout_ns));
		if (left < 0) {
			ret = left;
		} else if (!left && !dma_fence_is_signaled(fence)) {
			ret = -ETIME;
		} else {
			status = dma_fence_get_status(fence);
			if (status > 0)
				status = 0;
		}
		dma_fence_put(fence);
		if (ret)
			return ret;
	}
	args->status = rbln_job_status(status);
	return 0;
}

static int rbln_wait_bo(struct drm_file *file, struct drm_rbln_wait *args)
{
	struct drm_gem_object *obj;
	long left;
	int ret = 0;

	if (args->job_id)
		return -EINVAL;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;

	left = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_BOOKKEEP, true,
				     rbln_timeout_jiffies(args->timeout_ns));
	if (left < 0)
		ret = left;
	else if (!left)
		ret = -ETIME;
	drm_gem_object_put(obj);
	args->status = 0;
	return ret;
}

/**
 * rbln_ioctl_wait() - DRM_IOCTL_RBLN_WAIT
 * @dev: the DRM device
 * @data: &struct drm_rbln_wait
 * @file: the caller's file
 *
 * Return: 0 when done (the job's result in @status), -ETIME when the
 * deadline passed first, -EINVAL, -ENOENT, or -ERESTARTSYS when a signal
 * interrupted the wait (restarting it keeps the absolute deadline).
 */
int rbln_ioctl_wait(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_rbln_wait *args = data;

	if (args->flags)
		return -EINVAL;

	switch (args->type) {
	case DRM_RBLN_WAIT_JOB:
		return rbln_wait_job(file->driver_priv, args);
	case DRM_RBLN_WAIT_BO:
		return rbln_wait_bo(file, args);
	default:
		return -EINVAL;
	}
}
