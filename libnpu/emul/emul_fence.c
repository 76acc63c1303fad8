// SPDX-License-Identifier: MIT
/*
 * Fences of the emulated backend: a status behind a mutex, a condition
 * variable for waiting threads, and callbacks for waiting jobs (which
 * must not occupy a thread each), like the kernel's dma_fence.
 */
#include <errno.h>

#include "emul.h"

void emul_fence_init(npu_fence *f)
{
	struct emul_fence *ef = emul_fence(f);

	pthread_mutex_init(&ef->lock, NULL);
	emul_cond_init(&ef->cond);
	atomic_init(&ef->signalled, false);
	ef->status = 0;
	ef->callbacks = NULL;
}

void emul_fence_destroy(npu_fence *f)
{
	struct emul_fence *ef = emul_fence(f);

	pthread_cond_destroy(&ef->cond);
	pthread_mutex_destroy(&ef->lock);
}

void emul_fence_signal(npu_fence *f, int status)
{
	struct emul_fence *ef = emul_fence(f);

	pthread_mutex_lock(&ef->lock);
	ef->status = status;
	atomic_store_explicit(&ef->signalled, true, memory_order_release);
	struct emul_fence_cb *cb = ef->callbacks;

	ef->callbacks = NULL;
	pthread_cond_broadcast(&ef->cond);
	pthread_mutex_unlock(&ef->lock);

	/*
	 * Outside the lock, so that a callback may take other locks. A
	 * callback may free its own node, so read the link first.
	 */
	while (cb) {
		struct emul_fence_cb *next = cb->next;

		cb->fn(cb);
		cb = next;
	}
}

bool emul_fence_add_callback(npu_fence *f, struct emul_fence_cb *cb)
{
	struct emul_fence *ef = emul_fence(f);
	bool added = false;

	pthread_mutex_lock(&ef->lock);
	if (!ef->signalled) {
		cb->next = ef->callbacks;
		ef->callbacks = cb;
		added = true;
	}
	pthread_mutex_unlock(&ef->lock);
	return added;
}

int emul_fence_status(npu_fence *f)
{
	struct emul_fence *ef = emul_fence(f);

	pthread_mutex_lock(&ef->lock);
	int status = ef->signalled ? ef->status : -EBUSY;

	pthread_mutex_unlock(&ef->lock);
	return status;
}

/* Poll for up to the context's spin time (never past @deadline). */
static void spin_for_signal(struct emul_fence *ef, int64_t spin_ns,
			    int64_t deadline)
{
	if (spin_ns <= 0 || deadline <= 0)
		return;
	int64_t now = npu_now_ns();
	int64_t stop = deadline - now < spin_ns ? deadline : now + spin_ns;

	for (unsigned int step = 0;
	     !atomic_load_explicit(&ef->signalled, memory_order_acquire) &&
	     npu_now_ns() < stop; step++)
		emul_poll_step(step);
}

int emul_fence_wait(npu_fence *f, int64_t deadline)
{
	struct emul_fence *ef = emul_fence(f);
	struct timespec ts = emul_timespec(deadline);

	spin_for_signal(ef, emul_ctx(f->dev->ctx)->spin_ns, deadline);
	pthread_mutex_lock(&ef->lock);
	while (!ef->signalled) {
		if (deadline == INT64_MAX)
			pthread_cond_wait(&ef->cond, &ef->lock);
		else if (pthread_cond_timedwait(&ef->cond, &ef->lock, &ts) ==
			 ETIMEDOUT)
			break;
	}
	int status = ef->signalled ? ef->status : -ETIME;

	pthread_mutex_unlock(&ef->lock);
	return status;
}
