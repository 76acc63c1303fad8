// SPDX-License-Identifier: MIT
/*
 * Queues: jobs of one queue run in submission order; the backend
 * schedules between queues by priority.
 */
#include <errno.h>
#include <stdlib.h>

#include "npu_common.h"

int npu_queue_create(npu_device *dev, enum npu_priority prio,
		     npu_queue **out)
{
	if (!dev || !out)
		return npu_fail(-EINVAL, "npu_queue_create: %s is NULL",
				dev ? "out" : "device");
	*out = NULL;
	if (prio != NPU_PRIORITY_LOW && prio != NPU_PRIORITY_NORMAL &&
	    prio != NPU_PRIORITY_HIGH)
		return npu_fail(-EINVAL, "npu_queue_create: unknown priority %d",
				(int)prio);

	npu_queue *q = npu_object_alloc(sizeof(*q),
					dev->ctx->ops->queue_priv_size);

	if (!q)
		return npu_fail(-ENOMEM, NULL);
	q->dev = dev;
	q->prio = prio;
	int err = dev->ctx->ops->queue_create(q);

	if (err) {
		free(q);
		return err;
	}
	*out = q;
	return 0;
}

void npu_queue_destroy(npu_queue *q)
{
	if (!q)
		return;
	q->dev->ctx->ops->queue_destroy(q);
	free(q);
}

npu_device *npu_queue_device(const npu_queue *q)
{
	return q ? q->dev : NULL;
}
