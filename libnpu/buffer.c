// SPDX-License-Identifier: MIT
/*
 * Buffers: argument checks and object lifetime; the memory itself is the
 * backend's (GEM objects or memfds).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "npu_common.h"

#define NPU_BUFFER_FLAGS_MASK (NPU_BUFFER_HOST | NPU_BUFFER_PRIVATE)

static npu_buffer *buffer_new(npu_device *dev)
{
	npu_buffer *buf = npu_object_alloc(sizeof(*buf),
					   dev->ctx->ops->buffer_priv_size);

	if (buf)
		buf->dev = dev;
	return buf;
}

int npu_buffer_alloc(npu_device *dev, uint64_t size, uint32_t flags,
		     npu_buffer **out)
{
	if (!dev || !out)
		return npu_fail(-EINVAL, "npu_buffer_alloc: %s is NULL",
				dev ? "out" : "device");
	*out = NULL;
	if (size == 0)
		return npu_fail(-EINVAL, "npu_buffer_alloc: size is zero");
	if (flags & ~NPU_BUFFER_FLAGS_MASK)
		return npu_fail(-EINVAL, "npu_buffer_alloc: unknown flags 0x%x",
				flags & ~NPU_BUFFER_FLAGS_MASK);

	npu_buffer *buf = buffer_new(dev);

	if (!buf)
		return npu_fail(-ENOMEM, NULL);
	buf->flags = flags;
	int err = dev->ctx->ops->buffer_alloc(buf, size, flags);

	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	return 0;
}

void npu_buffer_free(npu_buffer *buf)
{
	if (!buf)
		return;
	buf->dev->ctx->ops->buffer_free(buf);
	free(buf);
}

uint64_t npu_buffer_size(const npu_buffer *buf)
{
	return buf ? buf->size : 0;
}

npu_device *npu_buffer_device(const npu_buffer *buf)
{
	return buf ? buf->dev : NULL;
}

int npu_buffer_map(npu_buffer *buf, void **ptr)
{
	if (!buf || !ptr)
		return npu_fail(-EINVAL, "npu_buffer_map: %s is NULL",
				buf ? "ptr" : "buffer");
	return buf->dev->ctx->ops->buffer_map(buf, ptr);
}

int npu_buffer_export(npu_buffer *buf, int *fd)
{
	if (!buf || !fd)
		return npu_fail(-EINVAL, "npu_buffer_export: %s is NULL",
				buf ? "fd" : "buffer");
	*fd = -1;
	if (buf->flags & NPU_BUFFER_PRIVATE)
		return npu_fail(-EPERM,
				"npu_buffer_export: the buffer was allocated with NPU_BUFFER_PRIVATE (never exported)");
	return buf->dev->ctx->ops->buffer_export(buf, fd);
}

int npu_buffer_import(npu_device *dev, int fd, npu_buffer **out)
{
	if (!dev || !out)
		return npu_fail(-EINVAL, "npu_buffer_import: %s is NULL",
				dev ? "out" : "device");
	*out = NULL;
	if (fd < 0)
		return npu_fail(-EBADF, "npu_buffer_import: fd %d is invalid", fd);

	npu_buffer *buf = buffer_new(dev);

	if (!buf)
		return npu_fail(-ENOMEM, NULL);
	buf->imported = true;
	int err = dev->ctx->ops->buffer_import(buf, fd);

	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	return 0;
}

int npu_buffer_share(npu_buffer *buf, npu_device *dev, npu_buffer **out)
{
	int fd;

	if (!buf || !dev || !out)
		return npu_fail(-EINVAL, "npu_buffer_share: %s is NULL",
				!buf ? "buffer" : !dev ? "device" : "out");
	*out = NULL;
	if (buf->dev->ctx != dev->ctx)
		return npu_fail(-EINVAL,
				"npu_buffer_share: the device belongs to another context");

	int err = npu_buffer_export(buf, &fd);

	if (err)
		return err;
	err = npu_buffer_import(dev, fd, out);
	close(fd);
	return err;
}

int npu_buffer_wait_idle(npu_buffer *buf, int64_t timeout_ns)
{
	if (!buf)
		return npu_fail(-EINVAL, "npu_buffer_wait_idle: buffer is NULL");
	int err = buf->dev->ctx->ops->buffer_wait_idle(buf,
						       npu_deadline(timeout_ns));

	if (err == -ETIME)
		return npu_fail(-ETIME,
				"npu_buffer_wait_idle: still in use after %lld ns",
				(long long)timeout_ns);
	return err;
}
