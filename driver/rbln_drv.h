/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rbln_drv.h - driver-wide definitions of rbln.ko: module parameters,
 * limits reported through DRM_IOCTL_RBLN_QUERY, per-file state, ioctls.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */
#ifndef RBLN_DRV_H
#define RBLN_DRV_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "rbln_model.h"

struct dentry;
struct drm_device;
struct drm_file;
struct rbln_client;
struct rbln_device;

#define RBLN_DRIVER_NAME	"rbln"
#define RBLN_DRIVER_DESC	"RBLN NPU (modeled)"
#define RBLN_PRODUCT_NAME	"RBLN-CA12"

/* Limits; reported in &struct drm_rbln_device_info. */
#define RBLN_MAX_DEVICES	64
#define RBLN_MAX_MEM_SIZE	(64ULL << 40)
#define RBLN_MAX_ENGINES	16
#define RBLN_MAX_QUEUES		1024
#define RBLN_MAX_JOBS		65536
#define RBLN_MAX_SUBMIT_BOS	256
#define RBLN_MAX_SUBMIT_SYNCS	64
#define RBLN_MAX_CMD_SIZE	RBLN_MODEL_MAX_STREAM_SIZE

/**
 * struct rbln_params - module parameters, checked at load
 * @num_devices: devices to model
 * @mem_size: device memory of each device in bytes; 0 at load means
 *	"derive it from the host" (rbln_budget_init() sets the value used)
 * @numa_node: node of every device, or -1 to spread over online nodes
 * @engines: engine kthreads per device
 * @job_timeout_ms: a job that makes no progress this long is reset
 * @hw_queues: jobs one device executes at the same time
 * @max_queues: queues one open file may have on its device
 * @max_jobs: jobs one open file may have in flight (submitted, not ended)
 */
struct rbln_params {
	unsigned int num_devices;
	u64 mem_size;
	int numa_node;
	unsigned int engines;
	unsigned int job_timeout_ms;
	unsigned int hw_queues;
	unsigned int max_queues;
	unsigned int max_jobs;
};

extern struct rbln_params rbln_params;

/**
 * struct rbln_file - state of one open device file (a "context")
 * @rdev: the device
 * @file: the DRM file
 * @lock: serialises queue creation and destruction
 * @queues: queue id -> &struct rbln_queue
 * @next_queue_id: cursor of cyclic queue id allocation
 * @nqueues: live entries of @queues
 * @client: usage and jobs in flight of the file; outlives it while jobs
 *	of its queues do
 */
struct rbln_file {
	struct rbln_device *rdev;
	struct drm_file *file;
	struct mutex lock; /* see above */
	struct xarray queues;
	u32 next_queue_id;
	unsigned int nqueues;
	struct rbln_client *client;
};

int rbln_ioctl_query(struct drm_device *dev, void *data, struct drm_file *file);
int rbln_ioctl_bo_create(struct drm_device *dev, void *data,
			 struct drm_file *file);
int rbln_ioctl_bo_mmap_offset(struct drm_device *dev, void *data,
			      struct drm_file *file);
int rbln_ioctl_bo_info(struct drm_device *dev, void *data,
		       struct drm_file *file);
int rbln_ioctl_queue_create(struct drm_device *dev, void *data,
			    struct drm_file *file);
int rbln_ioctl_queue_destroy(struct drm_device *dev, void *data,
			     struct drm_file *file);
int rbln_ioctl_submit(struct drm_device *dev, void *data,
		      struct drm_file *file);
int rbln_ioctl_wait(struct drm_device *dev, void *data, struct drm_file *file);

void rbln_debugfs_init(struct rbln_device *rdev);
void rbln_debugfs_buffers_init(struct rbln_device *rdev, struct dentry *root);
extern const struct attribute_group *rbln_dev_groups[];

#endif /* RBLN_DRV_H */
