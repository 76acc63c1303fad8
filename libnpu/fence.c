// SPDX-License-Identifier: MIT
/*
 * Fences: reference counting and relative-to-absolute timeouts; the
 * waiting itself is the backend's.
 */
#include <errno.h>
#include <stdlib.h>

#include "npu_common.h"

npu_fence *npu_fence_new(npu_device *dev)
{
	npu_fence *f = npu_object_alloc(sizeof(*f),
					dev->ctx->ops->fence_priv_size);

	if (!f)
		return NULL;
	f->dev = dev;
	atomic_init(&f->refs, 1);
	atomic_fetch_add_explicit(&dev->refs, 1, memory_order_relaxed);
	return f;
}

void npu_fence_discard(npu_fence *f)
{
	npu_device *dev = f->dev;

	free(f);
	npu_device_put(dev);
}

npu_fence *npu_fence_ref(npu_fence *f)
{
	if (f)
		atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
	return f;
}

void npu_fence_release(npu_fence *f)
{
	if (!f)
		return;
	if (atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1)
		return;
	npu_device *dev = f->dev;

	dev->ctx->ops->fence_destroy(f);
	free(f);
	npu_device_put(dev);
}

static int wait_until(npu_fence *f, int64_t deadline)
{
	return f->dev->ctx->ops->fence_wait(f, deadline);
}

int npu_fence_wait(npu_fence *f, int64_t timeout_ns)
{
	if (!f)
		return npu_fail(-EINVAL, "npu_fence_wait: fence is NULL");
	int status = wait_until(f, npu_deadline(timeout_ns));

	if (status == -ETIME)
		return npu_fail(-ETIME, "npu_fence_wait: job still running after %lld ns",
				(long long)timeout_ns);
	if (status)
		return npu_fail(status, "job failed: %s", npu_strerror(status));
	return 0;
}

int npu_fence_poll(npu_fence *f)
{
	if (!f)
		return npu_fail(-EINVAL, "npu_fence_poll: fence is NULL");
	/* A deadline in the past makes every backend only look. */
	int status = wait_until(f, 0);

	if (status == -ETIME)
		return npu_fail(-EBUSY, "npu_fence_poll: job still running");
	if (status)
		return npu_fail(status, "job failed: %s", npu_strerror(status));
	return 0;
}

int npu_fence_wait_all(npu_fence *const *f, unsigned int n, int64_t timeout_ns)
{
	if (n && !f)
		return npu_fail(-EINVAL, "npu_fence_wait_all: fences is NULL");
	for (unsigned int i = 0; i < n; i++)
		if (!f[i])
			return npu_fail(-EINVAL, "npu_fence_wait_all: fence %u is NULL", i);

	/* One deadline for all, so n fences do not wait n times the timeout. */
	int64_t deadline = npu_deadline(timeout_ns);
	int first_failure = 0;

	for (unsigned int i = 0; i < n; i++) {
		int status = wait_until(f[i], deadline);

		if (status == -ETIME)
			return npu_fail(-ETIME,
					"npu_fence_wait_all: fence %u still running after %lld ns",
					i, (long long)timeout_ns);
		if (status && !first_failure)
			first_failure = npu_fail(status, "fence %u: job failed: %s",
						 i, npu_strerror(status));
	}
	return first_failure;
}
