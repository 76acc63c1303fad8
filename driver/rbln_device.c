// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_device.c - life cycle of one modeled NPU: NUMA placement, work
 * queues, engines and scheduler, unplug and release, capacity accounting
 * and the modeled utilization, temperature and power.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/math64.h>
#include <linux/nodemask.h>
#include <linux/platform_device.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "rbln_budget.h"
#include "rbln_device.h"
#include "rbln_drv.h"
#include "rbln_engine.h"
#include "rbln_job.h"

/* Utilization is averaged over windows of one to two seconds. */
#define RBLN_UTIL_WINDOW_NS	NSEC_PER_SEC

/* Modeled thermals: idle and full-load points, linear in utilization. */
#define RBLN_TEMP_IDLE_MC	32000
#define RBLN_TEMP_FULL_MC	78000
#define RBLN_POWER_IDLE_UW	15000000
#define RBLN_POWER_FULL_UW	65000000

static int rbln_pick_node(unsigned int index)
{
	unsigned int nth, n = 0;
	int node;

	if (rbln_params.numa_node != NUMA_NO_NODE)
		return rbln_params.numa_node;

	nth = index % num_online_nodes();
	for_each_online_node(node) {
		if (n++ == nth)
			return node;
	}
	return first_online_node;
}

static void rbln_device_destroy_wqs(struct drm_device *drm, void *arg)
{
	struct rbln_device *rdev = arg;

	if (rdev->wq)
		destroy_workqueue(rdev->wq);
	if (rdev->exec_wq)
		destroy_workqueue(rdev->exec_wq);
	if (rdev->reset_wq)
		destroy_workqueue(rdev->reset_wq);
}

static void rbln_device_fini_engines(struct drm_device *drm, void *arg)
{
	rbln_engines_fini(arg);
}

/*
 * Runs when the last reference to the DRM device is gone: every file is
 * closed, but jobs of closed files may still be queued or running. Let
 * them drain (a dead device fails them at once), then stop the scheduler.
 */
static void rbln_device_fini_sched(struct drm_device *drm, void *arg)
{
	struct rbln_device *rdev = arg;

	rbln_device_cancel_jobs(rdev, -ECANCELED);
	wait_event(rdev->idle_wq, !atomic_read(&rdev->live_queues) &&
		   !atomic_read(&rdev->live_jobs));
	/* Nothing runs: the watchdog does not come back once stopped. */
	cancel_delayed_work_sync(&rdev->watchdog);
	rbln_sched_fini(rdev);
}

/**
 * rbln_device_init() - set up everything of a device but its DRM node
 * @rdev: the device, embedded in a freshly allocated &drm_device
 *
 * Every resource is released by a managed action when the DRM device is
 * released, also on failure here.
 *
 * Return: 0 or a negative errno.
 */
int rbln_device_init(struct rbln_device *rdev)
{
	u64 now = ktime_get_ns();
	int ret;

	rdev->numa_node = rbln_pick_node(rdev->index);
	set_dev_node(&rdev->pdev->dev, rdev->numa_node);
	rdev->mem_total = rbln_params.mem_size;
	atomic64_set(&rdev->mem_used, 0);
	spin_lock_init(&rdev->run_lock);
	INIT_LIST_HEAD(&rdev->running);
	rdev->util_t0 = now;
	rdev->util_t1 = now;
	INIT_DELAYED_WORK(&rdev->watchdog, rbln_watchdog_work);
	init_waitqueue_head(&rdev->hang_wq);
	init_waitqueue_head(&rdev->idle_wq);
	atomic_set(&rdev->fault, RBLN_FAULT_NONE);
	rdev->timeout = msecs_to_jiffies(rbln_params.job_timeout_ms);

	ret = drmm_add_action_or_reset(&rdev->drm, rbln_device_destroy_wqs,
				       rdev);
	if (ret)
		return ret;

	rdev->reset_wq = alloc_ordered_workqueue("rbln%u-reset", 0,
						 rdev->index);
	rdev->exec_wq = alloc_workqueue("rbln%u-exec", WQ_UNBOUND,
					rbln_params.hw_queues, rdev->index);
	rdev->wq = alloc_workqueue("rbln%u", WQ_UNBOUND, 0, rdev->index);
	if (!rdev->reset_wq || !rdev->exec_wq || !rdev->wq)
		return -ENOMEM;

	ret = rbln_engines_init(rdev, rbln_params.engines);
	if (ret)
		return ret;
	ret = drmm_add_action_or_reset(&rdev->drm, rbln_device_fini_engines,
				       rdev);
	if (ret)
		return ret;

	ret = rbln_sched_init(rdev);
	if (ret)
		return ret;
	return drmm_add_action_or_reset(&rdev->drm, rbln_device_fini_sched,
					rdev);
}

/**
 * rbln_device_unplug() - the platform device goes away
 * @rdev: the device
 *
 * New ioctls fail with -ENODEV from here on; jobs that are running are
 * cancelled and queued ones fail without running. Open files, buffers and
 * fences stay valid until their owners let go of them.
 */
void rbln_device_unplug(struct rbln_device *rdev)
{
	drm_dev_unplug(&rdev->drm);
	rbln_device_cancel_jobs(rdev, -ECANCELED);
}

/**
 * rbln_device_status() - current &enum rbln_status
 * @rdev: the device
 *
 * Return: the status.
 */
enum rbln_status rbln_device_status(struct rbln_device *rdev)
{
	enum rbln_status status;

	spin_lock(&rdev->run_lock);
	if (!READ_ONCE(rdev->ready) || rdev->dead)
		status = RBLN_STATUS_INIT;
	else if (rdev->in_reset)
		status = RBLN_STATUS_FAULT;
	else if (rdev->nrunning)
		status = RBLN_STATUS_BUSY;
	else
		status = RBLN_STATUS_READY;
	spin_unlock(&rdev->run_lock);
	return status;
}

/**
 * rbln_status_name() - sysfs spelling of a status
 * @status: the status
 *
 * Return: a static string.
 */
const char *rbln_status_name(enum rbln_status status)
{
	switch (status) {
	case RBLN_STATUS_INIT:
		return "INIT";
	case RBLN_STATUS_READY:
		return "READY";
	case RBLN_STATUS_BUSY:
		return "BUSY";
	case RBLN_STATUS_FAULT:
		return "FAULT";
	}
	return "UNKNOWN";
}

/* Called with &rbln_device.run_lock held. */
static u64 rbln_busy_locked(struct rbln_device *rdev, u64 now)
{
	u64 busy = rdev->busy_ns;

	lockdep_assert_held(&rdev->run_lock);
	if (rdev->nrunning && now > rdev->busy_since)
		busy += now - rdev->busy_since;
	return busy;
}

/**
 * rbln_device_busy_ns() - time the device spent running jobs
 * @rdev: the device
 *
 * Return: nanoseconds with at least one job executing, since probe.
 */
u64 rbln_device_busy_ns(struct rbln_device *rdev)
{
	u64 busy;

	spin_lock(&rdev->run_lock);
	busy = rbln_busy_locked(rdev, ktime_get_ns());
	spin_unlock(&rdev->run_lock);
	return busy;
}

/**
 * rbln_device_utilization() - recent share of busy time
 * @rdev: the device
 *
 * Return: percent of the last one to two seconds with a job executing.
 */
unsigned int rbln_device_utilization(struct rbln_device *rdev)
{
	u64 now = ktime_get_ns();
	u64 busy, span, used;

	spin_lock(&rdev->run_lock);
	busy = rbln_busy_locked(rdev, now);
	if (now - rdev->util_t0 >= RBLN_UTIL_WINDOW_NS) {
		rdev->util_t1 = rdev->util_t0;
		rdev->util_b1 = rdev->util_b0;
		rdev->util_t0 = now;
		rdev->util_b0 = busy;
	}
	span = now - rdev->util_t1;
	used = busy - rdev->util_b1;
	spin_unlock(&rdev->run_lock);

	if (!span)
		return 0;
	return min_t(u64, div64_u64(used * 100, span), 100);
}

/**
 * rbln_device_temperature() - modeled die temperature
 * @rdev: the device
 *
 * Return: millidegrees Celsius, linear in utilization.
 */
unsigned int rbln_device_temperature(struct rbln_device *rdev)
{
	unsigned int util = rbln_device_utilization(rdev);

	return RBLN_TEMP_IDLE_MC +
	       (RBLN_TEMP_FULL_MC - RBLN_TEMP_IDLE_MC) / 100 * util;
}

/**
 * rbln_device_power() - modeled board power
 * @rdev: the device
 *
 * Return: microwatts, linear in utilization.
 */
unsigned int rbln_device_power(struct rbln_device *rdev)
{
	unsigned int util = rbln_device_utilization(rdev);

	return RBLN_POWER_IDLE_UW +
	       (RBLN_POWER_FULL_UW - RBLN_POWER_IDLE_UW) / 100 * util;
}

/**
 * rbln_device_charge() - reserve device memory
 * @rdev: the device
 * @size: bytes
 *
 * Return: 0, or -ENOMEM when the capacity would be exceeded.
 */
int rbln_device_charge(struct rbln_device *rdev, u64 size)
{
	return rbln_charge_bounded(&rdev->mem_used, rdev->mem_total, size);
}

/**
 * rbln_device_uncharge() - give back device memory
 * @rdev: the device
 * @size: bytes charged before
 */
void rbln_device_uncharge(struct rbln_device *rdev, u64 size)
{
	atomic64_sub(size, &rdev->mem_used);
}
