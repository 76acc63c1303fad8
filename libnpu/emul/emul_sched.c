// SPDX-License-Identifier: MIT
/*
 * The device scheduler: per-queue FIFOs and the choice of the next job.
 *
 * A job is runnable when it heads its queue's FIFO and all its wait
 * fences have signalled. Among runnable jobs the highest priority wins;
 * within a priority the queues take turns, because a queue that had a job
 * picked moves to the tail of the device's queue list and the scan takes
 * the first best candidate. A device runs one job at a time (its first
 * engine runs the stream, the others help with splits), so a job waiting
 * for a semaphore that only a later job of the same device would signal
 * waits until its SEM_WAIT times out: cross-device, not cross-queue,
 * semaphores are what the ISA is for.
 */
#include <errno.h>
#include <stdlib.h>

#include "emul.h"

static void link_tail(struct emul_hw *hw, struct emul_queue *q)
{
	if (!hw->queues) {
		q->prev = q->next = q;
		hw->queues = q;
		return;
	}
	struct emul_queue *tail = hw->queues->prev;

	q->prev = tail;
	q->next = hw->queues;
	tail->next = q;
	hw->queues->prev = q;
}

static void unlink_queue(struct emul_hw *hw, struct emul_queue *q)
{
	if (q->next == q) {
		hw->queues = NULL;
	} else {
		q->prev->next = q->next;
		q->next->prev = q->prev;
		if (hw->queues == q)
			hw->queues = q->next;
	}
	q->prev = q->next = NULL;
}

int emul_queue_create(npu_queue *q)
{
	struct emul_dev *d = emul_dev(q->dev);
	struct emul_queue *eq = calloc(1, sizeof(*eq));

	if (!eq)
		return npu_fail(-ENOMEM, NULL);
	eq->prio = q->prio;
	eq->owner = d;
	pthread_mutex_lock(&d->hw->lock);
	link_tail(d->hw, eq);
	pthread_mutex_unlock(&d->hw->lock);
	((struct emul_queue_handle *)npu_priv(q))->queue = eq;
	return 0;
}

void emul_queue_destroy(npu_queue *q)
{
	struct emul_hw *hw = emul_dev(q->dev)->hw;
	struct emul_queue *eq = emul_queue(q);

	pthread_mutex_lock(&hw->lock);
	eq->destroyed = true;
	emul_sched_reap_queue(hw, eq);
	pthread_mutex_unlock(&hw->lock);
}

void emul_sched_reap_queue(struct emul_hw *hw, struct emul_queue *q)
{
	if (q->destroyed && !q->head) {
		unlink_queue(hw, q);
		free(q);
	}
}

void emul_sched_enqueue(struct emul_job *job)
{
	struct emul_queue *q = job->queue;

	job->next = NULL;
	if (q->tail)
		q->tail->next = job;
	else
		q->head = job;
	q->tail = job;
}

static bool head_runnable(const struct emul_queue *q)
{
	return q->head && atomic_load(&q->head->pending) == 0;
}

struct emul_job *emul_sched_pick(struct emul_hw *hw)
{
	struct emul_queue *best = NULL;
	struct emul_queue *q = hw->queues;

	if (!q)
		return NULL;
	do {
		if (head_runnable(q) && (!best || q->prio > best->prio))
			best = q;
		q = q->next;
	} while (q != hw->queues);
	if (!best)
		return NULL;

	struct emul_job *job = best->head;

	best->head = job->next;
	if (!best->head)
		best->tail = NULL;
	/* The job no longer needs its queue: it only counts for its owner. */
	job->queue = NULL;
	unlink_queue(hw, best);
	if (best->destroyed && !best->head)
		free(best);
	else
		link_tail(hw, best);
	return job;
}
