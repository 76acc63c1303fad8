// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_submit.c - DRM_IOCTL_RBLN_SUBMIT.
 *
 * The stream is copied out of the command buffer into kernel memory and
 * validated by the device model against the buffer list; only that copy is
 * ever executed, so userspace cannot change a stream after validation. A
 * job waits for its in-syncs and for the previous job of its queue; its
 * finished fence goes to the out-sync and, for DRM_RBLN_WAIT_BO, into the
 * reservation object of every buffer it uses (as bookkeeping only: jobs
 * never wait for each other implicitly, semaphores would deadlock).
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/uaccess.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>

#include "rbln_accel.h"
#include "rbln_budget.h"
#include "rbln_compat.h"
#include "rbln_device.h"
#include "rbln_drv.h"
#include "rbln_gem.h"
#include "rbln_job.h"
#include "rbln_queue.h"

/* The model's diagnosis is copied to userspace as is. */
static_assert(sizeof(struct rbln_model_diag) ==
	      sizeof(struct drm_rbln_submit_diag));
static_assert(offsetof(struct rbln_model_diag, cmd_offset) ==
	      offsetof(struct drm_rbln_submit_diag, cmd_offset));
static_assert(offsetof(struct rbln_model_diag, operand) ==
	      offsetof(struct drm_rbln_submit_diag, operand));
static_assert(RBLN_MODEL_READ == DRM_RBLN_BO_READ);
static_assert(RBLN_MODEL_WRITE == DRM_RBLN_BO_WRITE);

static int rbln_submit_bos(struct rbln_job *job, struct drm_file *file,
			   const struct drm_rbln_submit *args)
{
	struct drm_rbln_bo_ref *refs;
	u32 i, j;
	int ret = 0;

	if (!args->bo_count)
		return 0;

	refs = kvmalloc_array(args->bo_count, sizeof(*refs), GFP_KERNEL);
	if (!refs)
		return -ENOMEM;
	if (copy_from_user(refs, u64_to_user_ptr(args->bos),
			   array_size(args->bo_count, sizeof(*refs)))) {
		ret = -EFAULT;
		goto out;
	}

	for (i = 0; i < args->bo_count; i++) {
		if (!refs[i].flags || (refs[i].flags & ~DRM_RBLN_BO_ACCESS_MASK)) {
			ret = -EINVAL;
			goto out;
		}
	}

	for (i = 0; i < args->bo_count; i++) {
		struct drm_gem_object *obj;

		obj = drm_gem_object_lookup(file, refs[i].handle);
		if (!obj) {
			ret = -ENOENT;
			goto out;
		}
		job->objs[i] = obj;
		job->bo_count = i + 1;
		if (!rbln_gem_is_rbln(obj)) {
			ret = -EINVAL;
			goto out;
		}
		/* A buffer may appear once per list. */
		for (j = 0; j < i; j++) {
			if (job->objs[j] == obj) {
				ret = -EINVAL;
				goto out;
			}
		}
		job->mbos[i].size = obj->size;
		job->mbos[i].access = refs[i].flags;
	}

out:
	kvfree(refs);
	return ret;
}

static int rbln_submit_copy_cmd(struct rbln_job *job, struct drm_file *file,
				const struct drm_rbln_submit *args,
				struct rbln_model_diag *diag)
{
	struct drm_gem_object *obj;
	void *vaddr;
	u64 end, size;
	int ret = 0;

	obj = drm_gem_object_lookup(file, args->cmd_handle);
	if (!obj)
		return -ENOENT;

	if (check_add_overflow(args->cmd_offset, args->cmd_size, &end) ||
	    end > obj->size) {
		ret = -EINVAL;
		goto out;
	}
	if (args->cmd_size > RBLN_MAX_CMD_SIZE) {
		diag->reason = RBLN_ISA_ERR_STREAM_SIZE;
		diag->opcode = RBLN_ISA_NO_INDEX;
		diag->operand = RBLN_ISA_NO_INDEX;
		ret = -EINVAL;
		goto out;
	}

	vaddr = rbln_gem_kmap(obj);
	if (IS_ERR(vaddr)) {
		ret = PTR_ERR(vaddr);
		goto out;
	}

	/*
	 * Streams of any size, even 0, go to the model for its verdict. The
	 * copy is host memory held until the job ends: it counts against
	 * the host budget like a buffer.
	 */
	size = max_t(u64, args->cmd_size, RBLN_ISA_ALIGN);
	ret = rbln_budget_charge(size);
	if (ret)
		goto out;
	job->cmd_charged = size;
	job->cmd = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!job->cmd) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(job->cmd, vaddr + args->cmd_offset, args->cmd_size);
	job->cmd_size = args->cmd_size;

out:
	drm_gem_object_put(obj);
	return ret;
}

static int rbln_submit_in_syncs(struct rbln_job *job, struct drm_file *file,
				const struct drm_rbln_submit *args)
{
	struct drm_rbln_sync *syncs;
	u32 i;
	int ret = 0;

	if (!args->in_sync_count)
		return 0;

	syncs = kvmalloc_array(args->in_sync_count, sizeof(*syncs),
			       GFP_KERNEL);
	if (!syncs)
		return -ENOMEM;
	if (copy_from_user(syncs, u64_to_user_ptr(args->in_syncs),
			   array_size(args->in_sync_count, sizeof(*syncs)))) {
		ret = -EFAULT;
		goto out;
	}

	for (i = 0; i < args->in_sync_count; i++) {
		if (syncs[i].flags) {
			ret = -EINVAL;
			goto out;
		}
	}

	/*
	 * drm_sched_job_add_syncobj_dependency() takes a 32-bit point; the
	 * uapi's points are 64-bit, so look the fence up here.
	 */
	for (i = 0; i < args->in_sync_count; i++) {
		ret = drm_syncobj_find_fence(file, syncs[i].handle,
					     syncs[i].point, 0,
					     &job->in_fences[i]);
		if (ret)
			goto out;
		job->in_count = i + 1;
	}

out:
	kvfree(syncs);
	return ret;
}

static int rbln_submit_map_bos(struct rbln_job *job)
{
	u32 i;

	for (i = 0; i < job->bo_count; i++) {
		void *vaddr = rbln_gem_kmap(job->objs[i]);

		if (IS_ERR(vaddr))
			return PTR_ERR(vaddr);
		job->mbos[i].cpu = vaddr;
	}
	return 0;
}

/*
 * Give the job its id and hand it to the scheduler. Nothing fails after
 * drm_sched_job_arm().
 */
static int rbln_submit_push(struct rbln_job *job, u64 *job_id,
			    struct dma_fence **finished)
{
	struct rbln_queue *queue = job->queue;
	struct ww_acquire_ctx ctx;
	struct dma_fence *fence;
	u32 i;
	int ret;

	ret = mutex_lock_interruptible(&queue->lock);
	if (ret)
		return ret;

	ret = rbln_queue_reserve(queue);
	if (ret)
		goto out_unlock;

	ret = drm_gem_lock_reservations(job->objs, job->bo_count, &ctx);
	if (ret)
		goto out_unlock;
	for (i = 0; i < job->bo_count; i++) {
		ret = dma_resv_reserve_fences(job->objs[i]->resv, 1);
		if (ret)
			goto out_unlock_resv;
	}

	job->job_id = queue->last_job_id + 1;
	drm_sched_job_arm(&job->base);
	fence = dma_fence_get(&job->base.s_fence->finished);
	/*
	 * Jobs of other queues that depend on this one must wait for it to
	 * finish, not only to be scheduled: the device runs jobs of several
	 * queues at the same time.
	 */
	set_bit(DRM_SCHED_FENCE_DONT_PIPELINE, &fence->flags);
	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->objs[i]->resv, fence,
				   DMA_RESV_USAGE_BOOKKEEP);
	rbln_queue_record(queue, job->job_id, fence);
	*job_id = job->job_id;
	*finished = fence;
	drm_gem_unlock_reservations(job->objs, job->bo_count, &ctx);

	/*
	 * From here on the job belongs to the scheduler and may run, end and
	 * be freed at any time.
	 */
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&queue->lock);
	return 0;

out_unlock_resv:
	drm_gem_unlock_reservations(job->objs, job->bo_count, &ctx);
out_unlock:
	mutex_unlock(&queue->lock);
	return ret;
}

/**
 * rbln_ioctl_submit() - DRM_IOCTL_RBLN_SUBMIT
 * @dev: the DRM device
 * @data: &struct drm_rbln_submit
 * @file: the caller's file
 *
 * Return: 0; -EINVAL for bad fields, limits or a stream that does not
 * validate (with @diag filled); -ENOENT for unknown queue, buffer or
 * syncobj handles; -EFAULT for bad user pointers; -EBUSY when the file has
 * rbln_params.max_jobs jobs in flight; -ENOMEM, also when the stream's
 * copy does not fit the host budget; -ENODEV after unplug; -ERESTARTSYS
 * when interrupted.
 */
int rbln_ioctl_submit(struct drm_device *dev, void *data,
		      struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(dev);
	struct rbln_file *rfile = file->driver_priv;
	struct drm_rbln_submit *args = data;
	void __user *udiag = u64_to_user_ptr(args->diag);
	struct rbln_model_diag diag = {};
	struct drm_syncobj *syncobj = NULL;
	struct dma_fence_chain *chain = NULL;
	struct dma_fence *finished = NULL;
	struct rbln_queue *queue;
	struct rbln_job *job;
	bool sched_job = false;
	u64 job_id = 0;
	u32 i;
	int idx, ret;

	if (args->flags || args->pad || args->out_sync.flags)
		return -EINVAL;
	if (!args->out_sync.handle && args->out_sync.point)
		return -EINVAL;
	if (args->bo_count > RBLN_MAX_SUBMIT_BOS ||
	    args->in_sync_count > RBLN_MAX_SUBMIT_SYNCS)
		return -EINVAL;
	if (!IS_ALIGNED(args->cmd_offset, RBLN_ISA_ALIGN))
		return -EINVAL;
	if (udiag && copy_to_user(udiag, &diag, sizeof(diag)))
		return -EFAULT;

	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;

	queue = rbln_queue_lookup(rfile, args->queue_id);
	if (!queue) {
		ret = -ENOENT;
		goto out_exit;
	}
	job = rbln_job_alloc(rdev, args->bo_count, args->in_sync_count);
	if (!job) {
		rbln_queue_put(queue);
		ret = -ENOMEM;
		goto out_exit;
	}
	job->queue = queue;

	ret = rbln_job_begin_flight(job);
	if (ret)
		goto out_put;

	ret = rbln_submit_bos(job, file, args);
	if (ret)
		goto out_put;

	ret = rbln_submit_copy_cmd(job, file, args, &diag);
	if (!ret && rbln_model_validate(job->cmd, job->cmd_size, job->mbos,
					job->bo_count, &diag))
		ret = -EINVAL;
	if (diag.reason != RBLN_ISA_OK && udiag &&
	    copy_to_user(udiag, &diag, sizeof(diag)))
		ret = -EFAULT;
	if (ret)
		goto out_put;

	ret = rbln_submit_in_syncs(job, file, args);
	if (ret)
		goto out_put;

	if (args->out_sync.handle) {
		syncobj = drm_syncobj_find(file, args->out_sync.handle);
		if (!syncobj) {
			ret = -ENOENT;
			goto out_put;
		}
		if (args->out_sync.point) {
			chain = dma_fence_chain_alloc();
			if (!chain) {
				ret = -ENOMEM;
				goto out_put;
			}
		}
	}

	ret = rbln_submit_map_bos(job);
	if (ret)
		goto out_put;

	ret = rbln_compat_sched_job_init(&job->base, &job->queue->entity, rfile,
					 file->client_id);
	if (ret)
		goto out_put;
	sched_job = true;

	for (i = 0; i < job->in_count; i++) {
		ret = drm_sched_job_add_dependency(&job->base,
						   dma_fence_get(job->in_fences[i]));
		if (ret)
			goto out_put;
	}

	ret = rbln_submit_push(job, &job_id, &finished);
	if (ret)
		goto out_put;

	if (syncobj) {
		if (chain) {
			drm_syncobj_add_point(syncobj, chain, finished,
					      args->out_sync.point);
			chain = NULL;
		} else {
			drm_syncobj_replace_fence(syncobj, finished);
		}
	}
	args->job_id = job_id;
	dma_fence_put(finished);
	goto out_syncobj;

out_put:
	if (sched_job)
		drm_sched_job_cleanup(&job->base);
	rbln_job_put(job);
out_syncobj:
	dma_fence_chain_free(chain);
	if (syncobj)
		drm_syncobj_put(syncobj);
out_exit:
	drm_dev_exit(idx);
	return ret;
}
