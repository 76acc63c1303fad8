// SPDX-License-Identifier: MIT
/*
 * Device handles. A handle is referenced by the application (until
 * npu_device_close()) and by every live fence of the device, so that a
 * fence can always reach its device (the kernel backend waits on the
 * device's fd) even after the application closed the handle.
 */
#include <errno.h>
#include <stdlib.h>

#include "npu_common.h"

static int check_index(npu_context *ctx, unsigned int index, const char *fn)
{
	if (!ctx)
		return npu_fail(-EINVAL, "%s: context is NULL", fn);
	if (index >= ctx->visible_count)
		return npu_fail(-ENODEV, "%s: device %u does not exist (%u visible)",
				fn, index, ctx->visible_count);
	return 0;
}

int npu_device_open(npu_context *ctx, unsigned int index, npu_device **out)
{
	int err = check_index(ctx, index, "npu_device_open");

	if (err)
		return err;
	if (!out)
		return npu_fail(-EINVAL, "npu_device_open: out is NULL");
	*out = NULL;

	npu_device *dev = npu_object_alloc(sizeof(*dev),
					   ctx->ops->device_priv_size);

	if (!dev)
		return npu_fail(-ENOMEM, NULL);
	dev->ctx = ctx;
	atomic_init(&dev->refs, 1);
	dev->index = index;
	dev->hw_index = ctx->visible[index];
	err = ctx->ops->device_open(dev);
	if (err) {
		free(dev);
		return err;
	}
	npu_context_get(ctx);
	err = ctx->ops->device_query(dev, &dev->info);
	if (err) {
		npu_device_close(dev);
		return err;
	}
	dev->info.index = index;
	*out = dev;
	return 0;
}

void npu_device_put(npu_device *dev)
{
	if (atomic_fetch_sub_explicit(&dev->refs, 1, memory_order_acq_rel) != 1)
		return;
	npu_context *ctx = dev->ctx;

	if (ctx->ops->device_release)
		ctx->ops->device_release(dev);
	free(dev);
	npu_context_put(ctx);
}

void npu_device_close(npu_device *dev)
{
	if (!dev)
		return;
	dev->ctx->ops->device_close(dev);
	npu_device_put(dev);
}

int npu_device_query(npu_device *dev, struct npu_device_info *info)
{
	if (!dev || !info)
		return npu_fail(-EINVAL, "npu_device_query: %s is NULL",
				dev ? "info" : "device");
	int err = dev->ctx->ops->device_query(dev, info);

	if (err)
		return err;
	info->index = dev->index;
	return 0;
}

int npu_device_info_get(npu_context *ctx, unsigned int index,
			struct npu_device_info *info)
{
	int err = check_index(ctx, index, "npu_device_info_get");

	if (err)
		return err;
	if (!info)
		return npu_fail(-EINVAL, "npu_device_info_get: info is NULL");
	err = ctx->ops->device_info(ctx, ctx->visible[index], info);
	if (err)
		return err;
	info->index = index;
	return 0;
}

npu_context *npu_device_context(const npu_device *dev)
{
	return dev ? dev->ctx : NULL;
}
