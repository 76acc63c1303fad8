// SPDX-License-Identifier: MIT
/*
 * Running one job on engine 0 and ending it.
 *
 * A job whose wait fence failed does not run: it ends with -ECANCELED, as
 * a drm_sched job whose dependency carries an error is not run either.
 * Its buffers may hold what the failed job left half-done, and running on
 * them would turn one failure into wrong data downstream.
 */
#include <errno.h>

#include "emul.h"

static bool a_wait_failed(const struct emul_job *job)
{
	for (uint32_t i = 0; i < job->num_waits; i++)
		if (emul_fence_status(job->waits[i].fence) != 0)
			return true;
	return false;
}

void emul_job_run(struct emul_hw *hw, struct emul_job *job)
{
	struct rbln_model_env env;
	int64_t start = hw->ctx->profile ? npu_now_ns() : 0;
	int status;

	if (a_wait_failed(job)) {
		status = -ECANCELED;
	} else {
		emul_env_init(hw, &env);
		status = rbln_model_execute(job->stream, job->stream_size,
					    job->bos, job->num_bos, &env, NULL);
	}

	/*
	 * The order matters. The fence signals before the buffers go idle, so
	 * that "no job uses the buffer" (npu_buffer_wait_idle(), and the wait
	 * in npu_buffer_free()) implies the job's fence has its final status.
	 * Wait fences (which hold their devices) are dropped before the
	 * owner's job count, because once that count is zero the owner's
	 * close may finish and with it the context. The job's own fence
	 * reference goes last: the fence holds the owner's device, which
	 * keeps it valid until then.
	 */
	if (hw->ctx->profile)
		emul_profile_job(hw, start, npu_now_ns());
	emul_fence_signal(job->fence, status);
	for (uint32_t i = 0; i < job->num_bos; i++)
		emul_buf_unbusy(job->bufs[i]);
	for (uint32_t i = 0; i < job->num_waits; i++)
		npu_fence_release(job->waits[i].fence);

	struct emul_dev *owner = job->owner;
	npu_fence *fence = job->fence;

	emul_job_free(job);
	emul_dev_job_done(owner);
	npu_fence_release(fence);
}
