// SPDX-License-Identifier: MIT
/*
 * Submission to the emulated device: copy the stream, validate the copy
 * with the device model (the copy is what runs later, so the application
 * cannot change a stream after it was validated), build the job and hand
 * it to the scheduler.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emul.h"

/* One allocation: the job and its arrays. */
static struct emul_job *job_alloc(uint64_t stream_size, uint32_t num_bos,
				  uint32_t num_waits)
{
	size_t size = sizeof(struct emul_job) +
		      num_bos * (sizeof(struct rbln_model_bo) +
				 sizeof(struct emul_buf *)) +
		      num_waits * sizeof(struct emul_job_wait);
	struct emul_job *job = calloc(1, size);

	if (!job)
		return NULL;
	job->stream = malloc(stream_size);
	if (!job->stream) {
		free(job);
		return NULL;
	}
	job->stream_size = stream_size;
	job->waits = (struct emul_job_wait *)(job + 1);
	job->bos = (struct rbln_model_bo *)(job->waits + num_waits);
	job->bufs = (struct emul_buf **)(job->bos + num_bos);
	job->num_bos = num_bos;
	job->num_waits = num_waits;
	return job;
}

void emul_job_free(struct emul_job *job)
{
	free(job->stream);
	free(job);
}

static int reject_stream(const struct rbln_model_diag *diag)
{
	return npu_fail_stream(diag->cmd_index, diag->cmd_offset, diag->opcode,
			       rbln_model_opcode_name(diag->opcode),
			       diag->operand, rbln_model_error_str(diag->reason));
}

/* A wait fence signalled: one dependency fewer; the last one wakes the device. */
static void wait_fence_signalled(struct emul_fence_cb *cb)
{
	struct emul_job_wait *w = (struct emul_job_wait *)cb;
	struct emul_job *job = w->job;
	/* Read before the decrement: afterwards the job may run and be freed. */
	struct emul_hw *hw = job->owner->hw;

	if (atomic_fetch_sub(&job->pending, 1) == 1)
		emul_engines_kick(hw);
}

int emul_submit(npu_queue *q, const struct npu_submit_info *info,
		npu_fence *fence)
{
	struct emul_dev *d = emul_dev(q->dev);
	struct emul_job *job = job_alloc(info->cmd_size, info->num_buffers,
					 info->num_wait);

	if (!job)
		return npu_fail(-ENOMEM, NULL);
	memcpy(job->stream, emul_buf(info->cmd)->map + info->cmd_offset,
	       info->cmd_size);
	for (uint32_t i = 0; i < info->num_buffers; i++) {
		npu_buffer *buf = info->buffers[i].buffer;

		job->bufs[i] = emul_buf(buf);
		job->bos[i] = (struct rbln_model_bo){
			.cpu = job->bufs[i]->map,
			.size = buf->size,
			.access = info->buffers[i].access,
		};
	}

	struct rbln_model_diag diag;

	if (rbln_model_validate(job->stream, job->stream_size, job->bos,
				job->num_bos, &diag) != 0) {
		emul_job_free(job);
		return reject_stream(&diag);
	}

	/* Nothing can fail from here on. */
	emul_fence_init(fence);
	job->fence = npu_fence_ref(fence);
	job->owner = d;
	job->queue = emul_queue(q);
	for (uint32_t i = 0; i < job->num_bos; i++)
		emul_buf_busy(job->bufs[i]);
	pthread_mutex_lock(&d->lock);
	d->jobs++;
	pthread_mutex_unlock(&d->lock);

	/* The extra count keeps the job unrunnable until it is queued. */
	atomic_init(&job->pending, job->num_waits + 1);
	for (uint32_t i = 0; i < job->num_waits; i++) {
		struct emul_job_wait *w = &job->waits[i];

		w->job = job;
		w->fence = npu_fence_ref(info->wait[i]);
		w->cb.fn = wait_fence_signalled;
		if (!emul_fence_add_callback(w->fence, &w->cb))
			atomic_fetch_sub(&job->pending, 1);
	}

	pthread_mutex_lock(&d->hw->lock);
	emul_sched_enqueue(job);
	atomic_fetch_sub(&job->pending, 1);
	pthread_mutex_unlock(&d->hw->lock);
	emul_engines_kick(d->hw);
	return 0;
}
