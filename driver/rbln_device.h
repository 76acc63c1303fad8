/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rbln_device.h - one modeled RBLN NPU.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */
#ifndef RBLN_DEVICE_H
#define RBLN_DEVICE_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <drm/drm_device.h>
#include <drm/gpu_scheduler.h>

#include "rbln_engine.h"

struct platform_device;

/**
 * enum rbln_status - what sysfs "status" reports
 * @RBLN_STATUS_INIT: being set up (or torn down)
 * @RBLN_STATUS_READY: idle, accepting work
 * @RBLN_STATUS_BUSY: running at least one job
 * @RBLN_STATUS_FAULT: recovering from a hung job
 */
enum rbln_status {
	RBLN_STATUS_INIT,
	RBLN_STATUS_READY,
	RBLN_STATUS_BUSY,
	RBLN_STATUS_FAULT,
};

/**
 * enum rbln_fault - fault injected into the next job (debugfs "fault")
 * @RBLN_FAULT_NONE: run normally
 * @RBLN_FAULT_HANG: the job never completes until the watchdog resets it
 * @RBLN_FAULT_FAIL: the job fails at once with -EIO, as on a device error
 */
enum rbln_fault {
	RBLN_FAULT_NONE,
	RBLN_FAULT_HANG,
	RBLN_FAULT_FAIL,
};

/**
 * struct rbln_device - one modeled NPU
 * @drm: the DRM device (accel node)
 * @pdev: the platform device it hangs off
 * @index: N of /dev/rblnN
 * @numa_node: node of its engines, -1 for none
 * @mem_total: capacity of device memory in bytes
 * @mem_used: bytes charged by device buffers
 * @sched: the job scheduler
 * @timeout: job timeout in jiffies
 * @reset_wq: ordered queue of the timeout (reset) handler
 * @exec_wq: unbound queue running jobs
 * @wq: queue for deferred object destruction
 * @engines: the neural engines (kthreads that split commands)
 * @run_lock: protects @running, @nrunning, @busy_ns, @busy_since, the
 *	utilization samples and the watchdog fields of running jobs
 * @running: jobs executing now
 * @nrunning: entries of @running
 * @busy_ns: time with at least one job running, before @busy_since
 * @busy_since: when @nrunning last became non-zero
 * @util_t0: start of the utilization window (ns)
 * @util_b0: busy time at @util_t0
 * @util_t1: end of the previous window
 * @util_b1: busy time at @util_t1
 * @watchdog: periodic check of running jobs for hangs
 * @hang_wq: where injected hangs sleep
 * @idle_wq: woken when @live_jobs or @live_queues drop
 * @live_jobs: jobs created and not yet freed
 * @live_queues: queues created and not yet destroyed
 * @resets: hung-job recoveries so far
 * @in_reset: recovery in progress (status FAULT)
 * @ready: set up completely (status leaves INIT)
 * @dead: unplugged: no new job executes
 * @fault: &enum rbln_fault for the next job
 */
struct rbln_device {
	struct drm_device drm;
	struct platform_device *pdev;
	unsigned int index;
	int numa_node;
	u64 mem_total;
	atomic64_t mem_used;

	struct drm_gpu_scheduler sched;
	long timeout;
	struct workqueue_struct *reset_wq;
	struct workqueue_struct *exec_wq;
	struct workqueue_struct *wq;
	struct rbln_engines engines;

	spinlock_t run_lock; /* see above */
	struct list_head running;
	unsigned int nrunning;
	u64 busy_ns;
	u64 busy_since;
	u64 util_t0;
	u64 util_b0;
	u64 util_t1;
	u64 util_b1;
	struct delayed_work watchdog;

	wait_queue_head_t hang_wq;
	wait_queue_head_t idle_wq;
	atomic_t live_jobs;
	atomic_t live_queues;
	atomic_t resets;
	bool in_reset;
	bool ready;
	bool dead;
	atomic_t fault;
};

static inline struct rbln_device *to_rbln_device(struct drm_device *drm)
{
	return container_of(drm, struct rbln_device, drm);
}

int rbln_device_init(struct rbln_device *rdev);
void rbln_device_unplug(struct rbln_device *rdev);
enum rbln_status rbln_device_status(struct rbln_device *rdev);
const char *rbln_status_name(enum rbln_status status);
u64 rbln_device_busy_ns(struct rbln_device *rdev);
unsigned int rbln_device_utilization(struct rbln_device *rdev);
unsigned int rbln_device_temperature(struct rbln_device *rdev);
unsigned int rbln_device_power(struct rbln_device *rdev);
int rbln_device_charge(struct rbln_device *rdev, u64 size);
void rbln_device_uncharge(struct rbln_device *rdev, u64 size);

#endif /* RBLN_DEVICE_H */
