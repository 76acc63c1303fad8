// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_query.c - DRM_IOCTL_RBLN_QUERY.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <drm/drm_file.h>

#include "rbln_accel.h"
#include "rbln_device.h"
#include "rbln_drv.h"
#include "rbln_isa.h"

static void rbln_fill_device_info(struct rbln_device *rdev,
				  struct drm_rbln_device_info *info)
{
	memset(info, 0, sizeof(*info));
	info->index = rdev->index;
	info->device_count = rbln_params.num_devices;
	info->mem_total = rdev->mem_total;
	info->mem_used = atomic64_read(&rdev->mem_used);
	info->num_engines = rdev->engines.count;
	info->numa_node = rdev->numa_node;
	info->isa_version = RBLN_ISA_VERSION;
	info->max_queues = rbln_params.max_queues;
	info->capabilities = DRM_RBLN_CAP_SEMAPHORES |
			     DRM_RBLN_CAP_PEER_BUFFERS |
			     DRM_RBLN_CAP_TIMELINE_SYNCOBJ |
			     DRM_RBLN_CAP_COMPUTE_F32;
	info->max_bo_size = rdev->mem_total;
	info->max_submit_bos = RBLN_MAX_SUBMIT_BOS;
	info->max_submit_syncs = RBLN_MAX_SUBMIT_SYNCS;
	info->max_cmd_size = RBLN_MAX_CMD_SIZE;
	strscpy(info->name, RBLN_PRODUCT_NAME, sizeof(info->name));
}

/**
 * rbln_ioctl_query() - DRM_IOCTL_RBLN_QUERY
 * @dev: the DRM device
 * @data: &struct drm_rbln_query
 * @file: the caller's file
 *
 * With @size 0 only the full size of the answer is returned; otherwise
 * min(@size, full size) bytes are copied and that count is returned.
 *
 * Return: 0, -EINVAL or -EFAULT.
 */
int rbln_ioctl_query(struct drm_device *dev, void *data,
		     struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(dev);
	struct drm_rbln_query *args = data;
	struct drm_rbln_device_info info;
	u32 len;

	if (args->flags || args->pad)
		return -EINVAL;

	switch (args->param) {
	case DRM_RBLN_QUERY_DEVICE_INFO:
		break;
	default:
		return -EINVAL;
	}

	if (!args->size) {
		args->size = sizeof(info);
		return 0;
	}

	rbln_fill_device_info(rdev, &info);
	len = min_t(u32, args->size, sizeof(info));
	if (copy_to_user(u64_to_user_ptr(args->data), &info, len))
		return -EFAULT;
	args->size = len;
	return 0;
}
