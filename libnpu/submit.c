// SPDX-License-Identifier: MIT
/*
 * npu_submit(): everything about a submission that can be checked without
 * reading the stream, so that both backends reject the same mistakes with
 * the same messages. The stream itself is validated by the device model
 * (emulated backend) or the driver (kernel backend).
 */
#include <errno.h>
#include <stdlib.h>

#include "npu_common.h"

static int check_cmd(const npu_queue *q, const struct npu_submit_info *info)
{
	const struct npu_device_info *limits = &q->dev->info;

	if (!info->cmd)
		return npu_fail(-EINVAL, "npu_submit: no command buffer");
	if (info->cmd->dev != q->dev)
		return npu_fail(-EINVAL,
				"npu_submit: the command buffer belongs to another device handle");
	if (info->cmd_offset % 8)
		return npu_fail(-EINVAL, "npu_submit: cmd_offset %llu is not 8-aligned",
				(unsigned long long)info->cmd_offset);
	if (info->cmd_size == 0 || info->cmd_size % 8)
		return npu_fail(-EINVAL,
				"npu_submit: cmd_size %llu is not a non-zero multiple of 8",
				(unsigned long long)info->cmd_size);
	if (info->cmd_size > limits->max_cmd_size)
		return npu_fail(-EINVAL,
				"npu_submit: cmd_size %llu exceeds the device's %llu bytes",
				(unsigned long long)info->cmd_size,
				(unsigned long long)limits->max_cmd_size);
	if (info->cmd_offset > info->cmd->size ||
	    info->cmd_size > info->cmd->size - info->cmd_offset)
		return npu_fail(-EINVAL,
				"npu_submit: stream %llu+%llu past command buffer of %llu bytes",
				(unsigned long long)info->cmd_offset,
				(unsigned long long)info->cmd_size,
				(unsigned long long)info->cmd->size);
	return 0;
}

static int check_buffers(const npu_queue *q, const struct npu_submit_info *info)
{
	if (info->num_buffers > q->dev->info.max_submit_buffers)
		return npu_fail(-EINVAL,
				"npu_submit: %u buffers exceed the device's limit of %u",
				info->num_buffers, q->dev->info.max_submit_buffers);
	if (info->num_buffers && !info->buffers)
		return npu_fail(-EINVAL, "npu_submit: buffers is NULL");

	for (uint32_t i = 0; i < info->num_buffers; i++) {
		const struct npu_buffer_use *use = &info->buffers[i];

		if (!use->buffer)
			return npu_fail(-EINVAL, "npu_submit: buffer %u is NULL", i);
		if (use->buffer->dev != q->dev)
			return npu_fail(-EINVAL,
					"npu_submit: buffer %u belongs to another device handle (share it with npu_buffer_share())",
					i);
		if (!use->access || (use->access & ~NPU_ACCESS_RW))
			return npu_fail(-EINVAL,
					"npu_submit: buffer %u has access 0x%x (need READ and/or WRITE)",
					i, use->access);
		/* The list is at most a few hundred entries: quadratic is fine. */
		for (uint32_t j = 0; j < i; j++)
			if (info->buffers[j].buffer == use->buffer)
				return npu_fail(-EINVAL,
						"npu_submit: buffer %u is the same as buffer %u",
						i, j);
	}
	return 0;
}

static int check_waits(const npu_queue *q, const struct npu_submit_info *info)
{
	if (info->num_wait && !info->wait)
		return npu_fail(-EINVAL, "npu_submit: wait is NULL");
	for (uint32_t i = 0; i < info->num_wait; i++) {
		if (!info->wait[i])
			return npu_fail(-EINVAL, "npu_submit: wait fence %u is NULL", i);
		if (info->wait[i]->dev->ctx != q->dev->ctx)
			return npu_fail(-EINVAL,
					"npu_submit: wait fence %u belongs to another context",
					i);
	}
	return 0;
}

int npu_submit(npu_queue *q, const struct npu_submit_info *info,
	       npu_fence **fence)
{
	if (!q || !info)
		return npu_fail(-EINVAL, "npu_submit: %s is NULL",
				q ? "info" : "queue");
	if (fence)
		*fence = NULL;

	int err = check_cmd(q, info);

	if (!err)
		err = check_buffers(q, info);
	if (!err)
		err = check_waits(q, info);
	if (err)
		return err;

	npu_fence *f = npu_fence_new(q->dev);

	if (!f)
		return npu_fail(-ENOMEM, NULL);
	err = q->dev->ctx->ops->submit(q, info, f);
	if (err) {
		npu_fence_discard(f);
		return err;
	}
	if (fence)
		*fence = f;
	else
		npu_fence_release(f);
	return 0;
}
