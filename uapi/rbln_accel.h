/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rbln_accel.h - user/kernel interface of the rbln DRM accel driver, v1.
 *
 * The driver models RBLN NPUs. Every structure here follows
 * Documentation/process/botching-up-ioctls.rst: fixed-size types, __u64 for
 * user pointers, explicit padding, natural alignment. Every pad, reserved
 * field and unknown flag must be zero; the driver rejects anything else with
 * -EINVAL so that it can be given meaning later. Timeouts are absolute
 * CLOCK_MONOTONIC nanoseconds.
 *
 * GEM close, PRIME export/import and syncobj creation, waits and transfers
 * use the generic DRM ioctls (DRM_IOCTL_GEM_CLOSE, DRM_IOCTL_PRIME_*,
 * DRM_IOCTL_SYNCOBJ_*).
 *
 * The command-stream format executed by the device is in rbln_isa.h.
 */
#ifndef _UAPI_RBLN_ACCEL_H_
#define _UAPI_RBLN_ACCEL_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_RBLN_QUERY			0x00
#define DRM_RBLN_BO_CREATE		0x01
#define DRM_RBLN_BO_MMAP_OFFSET		0x02
#define DRM_RBLN_BO_INFO		0x03
#define DRM_RBLN_QUEUE_CREATE		0x04
#define DRM_RBLN_QUEUE_DESTROY		0x05
#define DRM_RBLN_SUBMIT			0x06
#define DRM_RBLN_WAIT			0x07

#define DRM_IOCTL_RBLN_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_QUERY, struct drm_rbln_query)
#define DRM_IOCTL_RBLN_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_BO_CREATE, struct drm_rbln_bo_create)
#define DRM_IOCTL_RBLN_BO_MMAP_OFFSET \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_BO_MMAP_OFFSET, \
		 struct drm_rbln_bo_mmap_offset)
#define DRM_IOCTL_RBLN_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_BO_INFO, struct drm_rbln_bo_info)
#define DRM_IOCTL_RBLN_QUEUE_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_QUEUE_CREATE, \
		 struct drm_rbln_queue_create)
#define DRM_IOCTL_RBLN_QUEUE_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_RBLN_QUEUE_DESTROY, \
		struct drm_rbln_queue_destroy)
#define DRM_IOCTL_RBLN_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_SUBMIT, struct drm_rbln_submit)
#define DRM_IOCTL_RBLN_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_WAIT, struct drm_rbln_wait)

/* ---------------------------------------------------------------- query */

/**
 * enum drm_rbln_query_param - what DRM_IOCTL_RBLN_QUERY returns
 * @DRM_RBLN_QUERY_DEVICE_INFO: a &struct drm_rbln_device_info
 */
enum drm_rbln_query_param {
	DRM_RBLN_QUERY_DEVICE_INFO = 0,
};

/* Capability bits of &drm_rbln_device_info.capabilities. */
/** DRM_RBLN_CAP_SEMAPHORES: SEM_SIGNAL/SEM_WAIT commands. */
#define DRM_RBLN_CAP_SEMAPHORES		(1ULL << 0)
/** DRM_RBLN_CAP_PEER_BUFFERS: imported (PRIME) buffers usable in streams. */
#define DRM_RBLN_CAP_PEER_BUFFERS	(1ULL << 1)
/** DRM_RBLN_CAP_TIMELINE_SYNCOBJ: timeline points on in/out syncs. */
#define DRM_RBLN_CAP_TIMELINE_SYNCOBJ	(1ULL << 2)
/** DRM_RBLN_CAP_COMPUTE_F32: float32 compute opcodes. */
#define DRM_RBLN_CAP_COMPUTE_F32	(1ULL << 3)

/** DRM_RBLN_DEVICE_NAME_LEN: size of &drm_rbln_device_info.name. */
#define DRM_RBLN_DEVICE_NAME_LEN	32

/**
 * struct drm_rbln_device_info - static and dynamic facts about one device
 *
 * Returned by DRM_RBLN_QUERY_DEVICE_INFO. New fields are only ever appended;
 * see &struct drm_rbln_query for how the size is negotiated.
 */
struct drm_rbln_device_info {
	/** @index: index of this device (N of /dev/rblnN). */
	__u32 index;
	/** @device_count: number of devices the driver models. */
	__u32 device_count;
	/** @mem_total: device memory capacity in bytes. */
	__u64 mem_total;
	/** @mem_used: device memory in use now, in bytes, by all clients. */
	__u64 mem_used;
	/** @num_engines: neural engines (execution threads) of the device. */
	__u32 num_engines;
	/** @numa_node: NUMA node of the device memory and engines, -1 if none. */
	__s32 numa_node;
	/** @isa_version: command-stream ISA version, major << 16 | minor. */
	__u32 isa_version;
	/** @max_queues: queues one file may create on the device. */
	__u32 max_queues;
	/** @capabilities: DRM_RBLN_CAP_* bits. */
	__u64 capabilities;
	/** @max_bo_size: largest buffer one DRM_IOCTL_RBLN_BO_CREATE may ask. */
	__u64 max_bo_size;
	/** @max_submit_bos: largest &drm_rbln_submit.bo_count. */
	__u32 max_submit_bos;
	/** @max_submit_syncs: largest &drm_rbln_submit.in_sync_count. */
	__u32 max_submit_syncs;
	/** @max_cmd_size: largest &drm_rbln_submit.cmd_size in bytes. */
	__u64 max_cmd_size;
	/** @name: product name, NUL-terminated. */
	char name[DRM_RBLN_DEVICE_NAME_LEN];
};

/**
 * struct drm_rbln_query - read information about the device
 *
 * With @size 0 the driver only stores the full size of the answer in @size.
 * Otherwise it copies min(@size, full size) bytes to @data and stores that
 * count in @size: older userspace reads a prefix of a newer answer, newer
 * userspace learns which trailing fields an older driver did not fill.
 */
struct drm_rbln_query {
	/** @param: an &enum drm_rbln_query_param value. */
	__u32 param;
	/** @size: in: bytes available at @data; out: bytes written (or needed). */
	__u32 size;
	/** @data: user pointer to the answer's buffer. */
	__u64 data;
	/** @flags: must be zero. */
	__u32 flags;
	/** @pad: must be zero. */
	__u32 pad;
};

/* ---------------------------------------------------------------- buffers */

/**
 * DRM_RBLN_BO_HOST - buffer in host memory, visible to the device
 *
 * Not counted against the device memory capacity (but, like every buffer,
 * against the driver's host memory budget); meant for staging and for
 * command streams.
 */
#define DRM_RBLN_BO_HOST		(1U << 0)
/** DRM_RBLN_BO_FLAGS_MASK: all valid &drm_rbln_bo_create.flags. */
#define DRM_RBLN_BO_FLAGS_MASK		DRM_RBLN_BO_HOST
/**
 * DRM_RBLN_BO_IMPORTED - reported in &drm_rbln_bo_info.flags for buffers
 * imported through PRIME (never valid at creation).
 */
#define DRM_RBLN_BO_IMPORTED		(1U << 31)

/**
 * struct drm_rbln_bo_create - create a buffer object
 *
 * Device buffers are charged to the device's memory capacity; creation past
 * the capacity fails with -ENOMEM. Every buffer is also charged to the
 * driver's host memory budget (half of RAM, shared by all devices and
 * clients): creation past it fails with -ENOMEM as well. Contents start
 * zeroed.
 */
struct drm_rbln_bo_create {
	/** @size: in: size in bytes, 1 to max_bo_size; rounded up to pages. */
	__u64 size;
	/** @flags: in: DRM_RBLN_BO_* creation flags. */
	__u32 flags;
	/** @handle: out: GEM handle of the new buffer. */
	__u32 handle;
};

/**
 * struct drm_rbln_bo_mmap_offset - fake offset for mmap() of a buffer
 */
struct drm_rbln_bo_mmap_offset {
	/** @handle: in: GEM handle. */
	__u32 handle;
	/** @pad: must be zero. */
	__u32 pad;
	/** @offset: out: offset to pass to mmap() on the device file. */
	__u64 offset;
};

/**
 * struct drm_rbln_bo_info - facts about a buffer object
 */
struct drm_rbln_bo_info {
	/** @handle: in: GEM handle. */
	__u32 handle;
	/** @flags: out: creation flags, plus DRM_RBLN_BO_IMPORTED. */
	__u32 flags;
	/** @size: out: size in bytes (page-rounded). */
	__u64 size;
};

/* ---------------------------------------------------------------- queues */

/**
 * enum drm_rbln_priority - scheduling priority of a queue
 * @DRM_RBLN_PRIORITY_LOW: runs when nothing else is ready
 * @DRM_RBLN_PRIORITY_NORMAL: the default
 * @DRM_RBLN_PRIORITY_HIGH: runs before normal and low (needs no privilege)
 */
enum drm_rbln_priority {
	DRM_RBLN_PRIORITY_LOW = 0,
	DRM_RBLN_PRIORITY_NORMAL = 1,
	DRM_RBLN_PRIORITY_HIGH = 2,
};

/**
 * struct drm_rbln_queue_create - create a command queue
 *
 * Jobs of one queue execute in submission order; jobs of different queues
 * are independent unless linked through syncobjs or semaphores. A file has
 * at most &drm_rbln_device_info.max_queues queues; creating one more fails
 * with -ENOSPC.
 */
struct drm_rbln_queue_create {
	/** @priority: in: an &enum drm_rbln_priority value. */
	__u32 priority;
	/** @flags: in: must be zero. */
	__u32 flags;
	/** @queue_id: out: identifier of the queue within this file. */
	__u32 queue_id;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * struct drm_rbln_queue_destroy - destroy a command queue
 *
 * Jobs already submitted still run to completion and signal their syncs.
 */
struct drm_rbln_queue_destroy {
	/** @queue_id: in: queue to destroy. */
	__u32 queue_id;
	/** @pad: must be zero. */
	__u32 pad;
};

/* ---------------------------------------------------------------- submit */

/** DRM_RBLN_BO_READ: the stream may read the buffer. */
#define DRM_RBLN_BO_READ		(1U << 0)
/** DRM_RBLN_BO_WRITE: the stream may write the buffer. */
#define DRM_RBLN_BO_WRITE		(1U << 1)
/** DRM_RBLN_BO_ACCESS_MASK: all valid &drm_rbln_bo_ref.flags. */
#define DRM_RBLN_BO_ACCESS_MASK		(DRM_RBLN_BO_READ | DRM_RBLN_BO_WRITE)

/**
 * struct drm_rbln_bo_ref - one entry of a submission's buffer list
 *
 * Operands of the command stream name buffers by their index in this list.
 * A buffer may appear once per list.
 */
struct drm_rbln_bo_ref {
	/** @handle: GEM handle (own or PRIME-imported). */
	__u32 handle;
	/** @flags: DRM_RBLN_BO_READ and/or DRM_RBLN_BO_WRITE, not zero. */
	__u32 flags;
};

/**
 * struct drm_rbln_sync - a syncobj and timeline point
 */
struct drm_rbln_sync {
	/** @handle: syncobj handle. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
	/** @point: timeline point; 0 for a binary syncobj. */
	__u64 point;
};

/**
 * struct drm_rbln_submit_diag - why a command stream was rejected
 *
 * Filled when DRM_IOCTL_RBLN_SUBMIT fails with -EINVAL because the command
 * stream did not validate (and zeroed otherwise), so that userspace can name
 * the offending command.
 */
struct drm_rbln_submit_diag {
	/** @reason: an &enum rbln_isa_error value (rbln_isa.h). */
	__u32 reason;
	/** @cmd_index: index of the offending command in the stream. */
	__u32 cmd_index;
	/** @cmd_offset: byte offset of that command in the stream. */
	__u32 cmd_offset;
	/** @opcode: its opcode, or 0xffff if it could not be read. */
	__u16 opcode;
	/** @operand: index of the offending operand, or 0xffff if none. */
	__u16 operand;
};

/**
 * struct drm_rbln_submit - submit a command stream to a queue
 *
 * The driver copies @cmd_size bytes at @cmd_offset of the command buffer,
 * validates the copy completely against the buffer list (rbln_isa.h) and
 * only then queues it, so a stream is either rejected whole or executed.
 * The job starts when every in-sync has signalled and every earlier job of
 * the queue has finished.
 *
 * A file has at most max_jobs (a module parameter) jobs in flight, i.e.
 * submitted and not yet ended, over all its queues: a submission past it
 * fails at once with -EBUSY and succeeds again once one of them ends.
 */
struct drm_rbln_submit {
	/** @queue_id: queue to run on. */
	__u32 queue_id;
	/** @flags: must be zero. */
	__u32 flags;
	/** @cmd_handle: GEM handle of the buffer holding the stream. */
	__u32 cmd_handle;
	/** @bo_count: entries at @bos, at most max_submit_bos. */
	__u32 bo_count;
	/** @cmd_offset: byte offset of the stream in the buffer, 8-aligned. */
	__u64 cmd_offset;
	/** @cmd_size: stream size in bytes, 8-aligned, at most max_cmd_size. */
	__u64 cmd_size;
	/** @bos: user pointer to &struct drm_rbln_bo_ref [@bo_count]. */
	__u64 bos;
	/** @in_syncs: user pointer to &struct drm_rbln_sync [@in_sync_count]. */
	__u64 in_syncs;
	/** @in_sync_count: syncs to wait for, at most max_submit_syncs. */
	__u32 in_sync_count;
	/** @pad: must be zero. */
	__u32 pad;
	/** @out_sync: syncobj (and point) to signal at job end; handle 0: none. */
	struct drm_rbln_sync out_sync;
	/** @diag: optional user pointer to &struct drm_rbln_submit_diag. */
	__u64 diag;
	/** @job_id: out: per-queue sequence number of the job, from 1. */
	__u64 job_id;
};

/* ---------------------------------------------------------------- wait */

/**
 * enum drm_rbln_wait_type - what DRM_IOCTL_RBLN_WAIT waits for
 * @DRM_RBLN_WAIT_JOB: job @job_id of queue @handle finished
 * @DRM_RBLN_WAIT_BO: every job using buffer @handle finished
 */
enum drm_rbln_wait_type {
	DRM_RBLN_WAIT_JOB = 0,
	DRM_RBLN_WAIT_BO = 1,
};

/**
 * struct drm_rbln_wait - wait for a job or for a buffer to be idle
 *
 * Returns 0 when done, -ETIME when @timeout_ns passed first. For a job,
 * @status then holds its result: 0, or a negative errno (see
 * Documentation/uapi.md: -ETIMEDOUT semaphore wait expired, -EIO device
 * fault or reset, -ECANCELED never ran).
 */
struct drm_rbln_wait {
	/** @type: an &enum drm_rbln_wait_type value. */
	__u32 type;
	/** @handle: queue id (JOB) or GEM handle (BO). */
	__u32 handle;
	/** @job_id: job to wait for (JOB); must be zero for BO. */
	__u64 job_id;
	/** @timeout_ns: absolute CLOCK_MONOTONIC deadline in nanoseconds. */
	__s64 timeout_ns;
	/** @status: out: result of the job (JOB), zero for BO. */
	__s32 status;
	/** @flags: must be zero. */
	__u32 flags;
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_RBLN_ACCEL_H_ */
