/* SPDX-License-Identifier: MIT */
/*
 * npu_backend.h - the interface between libnpu's common layer and its
 * backends ("kernel": rbln.ko through libdrm; "emul": the device model
 * in-process). Internal: not installed.
 *
 * Division of labour
 *  - The common layer (context.c, device.c, buffer.c, queue.c, fence.c,
 *    submit.c, stream*.c) owns the public handles: it checks every argument
 *    the API documents, allocates each object together with its backend
 *    part, keeps the reference counts, turns relative timeouts into
 *    absolute deadlines, and parses RBLN_DEVICES. A backend hook is only
 *    ever called with arguments the common layer has checked (see each
 *    hook), so backends check what only they can know (capacity, the
 *    stream contents, the kernel's answers).
 *  - Each object (device, buffer, queue, fence) is one allocation: the
 *    common struct below followed by @priv, a backend-private area of
 *    npu_backend_ops.*_priv_size bytes, zeroed, aligned for any type. A
 *    backend reaches it with npu_priv(obj) and defines its layout freely,
 *    e.g. the kernel backend:
 *
 *	struct kdev   { int fd; ... };                       // device
 *	struct kbuf   { uint32_t gem_handle; void *map; };   // buffer
 *	struct kqueue { uint32_t queue_id; };                // queue
 *	struct kfence { uint32_t syncobj; uint32_t queue_id; uint64_t job_id; };
 *
 *  - Failures: every hook returns 0 or a negative errno and, on failure,
 *    sets the thread's detail message with npu_fail() (errors.c).
 *
 * Lifetimes
 *  - A context lives while it has devices; a device lives while it has its
 *    handle (until npu_device_close()) or fences: every fence holds a
 *    reference on the device that signals it, so a kernel fence can still
 *    reach its device fd for DRM_IOCTL_RBLN_WAIT and syncobj destruction
 *    after the application closed the device handle. npu_device_close()
 *    calls device_close(), which waits for the handle's jobs; the last
 *    reference calls device_release().
 *  - Buffers and queues belong to the device handle and are freed before
 *    npu_device_close() (the API's contract).
 *
 * Fences
 *  A fence is created by the common layer (refcount 1, @dev referenced)
 *  right before submit() and handed to it; submit() fills the backend part
 *  (kernel: the out-syncobj, queue id and job id of DRM_IOCTL_RBLN_SUBMIT).
 *  fence_wait() waits until an absolute CLOCK_MONOTONIC deadline and
 *  returns -ETIME if the job has not finished by then, else the job's own
 *  status (0 or a negative errno: -ETIMEDOUT, -EIO, -ECANCELED), which the
 *  kernel backend gets from DRM_IOCTL_RBLN_WAIT (type JOB). A deadline of
 *  0 only polls; INT64_MAX waits forever.
 *
 *  Wait fences passed to submit() may belong to any device of the same
 *  context (f->dev differs from q->dev): the kernel backend turns such a
 *  fence into an in-sync by exporting its syncobj as a sync_file from the
 *  fence's device fd (npu_priv(f->dev)) and importing it into a syncobj of
 *  the submitting device's fd.
 *
 * Buffers
 *  buffer_export() yields a file descriptor the caller owns (kernel: a
 *  dma-buf from PRIME; emul: a dup of the buffer's memfd) and
 *  buffer_import() takes one without consuming it. Importing into a device
 *  a buffer it already has is allowed (npu_buffer_share() to its own
 *  device): DRM PRIME then returns the existing GEM handle, so the kernel
 *  backend must count handle users before DRM_IOCTL_GEM_CLOSE.
 *
 * Adding a backend: define a `const struct npu_backend_ops` and list it in
 * backend.c. The kernel backend is already wired up: backend.c refers to
 * npu_backend_kernel_ops as a weak hidden symbol and selects it (by
 * RBLN_BACKEND, or because npu_rbln_nodes() finds devices) once a source
 * file that defines it is added to `kernel_backend_sources` in
 * libnpu/meson.build.
 */
#ifndef NPU_BACKEND_H
#define NPU_BACKEND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libnpu.h"

/* ------------------------------------------------------------- objects */

/**
 * struct npu_context - a set of devices behind one backend
 * @ops: the backend
 * @kind: NPU_BACKEND_KERNEL or NPU_BACKEND_EMUL
 * @refs: the application's reference plus one per device
 * @hw_count: devices the backend has (set by context_init)
 * @visible_count: devices visible through RBLN_DEVICES
 * @visible: visible index -> hardware index, @visible_count entries
 * @backend: the backend's context state (set by context_init, freed by
 *	context_fini)
 */
struct npu_context {
	const struct npu_backend_ops *ops;
	enum npu_backend kind;
	atomic_uint refs;
	unsigned int hw_count;
	unsigned int visible_count;
	unsigned int *visible;
	void *backend;
};

/**
 * struct npu_device - an open device handle
 * @ctx: the context (referenced)
 * @refs: the handle's reference plus one per live fence
 * @index: visible index
 * @hw_index: the backend's device index
 * @info: what device_query() said at open; static fields stay true
 *	(limits, NUMA node), mem_used is stale
 * @priv: backend part, npu_backend_ops.device_priv_size bytes
 */
struct npu_device {
	npu_context *ctx;
	atomic_uint refs;
	unsigned int index;
	unsigned int hw_index;
	struct npu_device_info info;
	_Alignas(max_align_t) unsigned char priv[];
};

/**
 * struct npu_buffer - a buffer allocated on or imported into @dev
 * @dev: the device handle
 * @size: size in bytes, page-rounded (set by buffer_alloc/buffer_import)
 * @flags: NPU_BUFFER_* creation flags (0 for imports)
 * @imported: true when made by buffer_import()
 * @priv: backend part, npu_backend_ops.buffer_priv_size bytes
 */
struct npu_buffer {
	npu_device *dev;
	uint64_t size;
	uint32_t flags;
	bool imported;
	_Alignas(max_align_t) unsigned char priv[];
};

/**
 * struct npu_queue - a command queue of @dev
 * @dev: the device handle
 * @prio: its priority
 * @priv: backend part, npu_backend_ops.queue_priv_size bytes
 */
struct npu_queue {
	npu_device *dev;
	enum npu_priority prio;
	_Alignas(max_align_t) unsigned char priv[];
};

/**
 * struct npu_fence - completion of one job
 * @dev: the device that runs the job (referenced)
 * @refs: references held by the application and the backend
 * @priv: backend part, npu_backend_ops.fence_priv_size bytes
 */
struct npu_fence {
	npu_device *dev;
	atomic_uint refs;
	_Alignas(max_align_t) unsigned char priv[];
};

/** npu_priv() - the backend part of a device, buffer, queue or fence. */
#define npu_priv(obj) ((void *)(obj)->priv)

/* ------------------------------------------------------------- backend */

/**
 * struct npu_backend_ops - what a backend implements
 *
 * All hooks are required. Deadlines are absolute CLOCK_MONOTONIC
 * nanoseconds (see npu_deadline()). Hooks may be called concurrently from
 * any thread, also for the same object.
 */
struct npu_backend_ops {
	/** @name: "kernel" or "emul". */
	const char *name;
	/** @kind: its enum value. */
	enum npu_backend kind;
	/** @device_priv_size etc.: sizes of the backend parts. */
	size_t device_priv_size;
	size_t buffer_priv_size;
	size_t queue_priv_size;
	size_t fence_priv_size;

	/**
	 * @context_init: set ctx->hw_count and ctx->backend. @opts is never
	 * NULL (defaults filled with zeros); the emulated backend reads its
	 * emul_* fields and RBLN_EMUL_* variables.
	 */
	int (*context_init)(npu_context *ctx,
			    const struct npu_context_options *opts);
	/** @context_fini: free ctx->backend; every device is gone. */
	void (*context_fini)(npu_context *ctx);

	/**
	 * @device_info: facts about hardware device @hw_index without an
	 * open handle. Fill every field but @index (the common layer sets it).
	 */
	int (*device_info)(npu_context *ctx, unsigned int hw_index,
			   struct npu_device_info *info);
	/** @device_open: open dev->hw_index; dev->ctx and indices are set. */
	int (*device_open)(npu_device *dev);
	/**
	 * @device_close: the application closed the handle: wait for the
	 * jobs submitted through it to finish, then release what fences do
	 * not need. Fences of the device may still be alive.
	 */
	void (*device_close)(npu_device *dev);
	/**
	 * @device_release: optional (may be NULL); the last reference (the
	 * handle's or a fence's) is gone: release the rest (kernel: the fd).
	 */
	void (*device_release)(npu_device *dev);
	/** @device_query: like @device_info, through the open handle. */
	int (*device_query)(npu_device *dev, struct npu_device_info *info);

	/**
	 * @buffer_alloc: allocate a zeroed buffer of @size bytes (> 0) with
	 * @flags (only known NPU_BUFFER_* bits); set buf->size to the
	 * page-rounded size. Charge device buffers to the capacity and fail
	 * with -ENOMEM past it.
	 */
	int (*buffer_alloc)(npu_buffer *buf, uint64_t size, uint32_t flags);
	/** @buffer_free: wait until no job uses @buf, then release it. */
	void (*buffer_free)(npu_buffer *buf);
	/**
	 * @buffer_map: the CPU mapping of the whole buffer; the same pointer
	 * on every call, valid until @buffer_free.
	 */
	int (*buffer_map)(npu_buffer *buf, void **ptr);
	/** @buffer_export: a new file descriptor for @buf, owned by caller. */
	int (*buffer_export)(npu_buffer *buf, int *fd);
	/**
	 * @buffer_import: make @buf refer to the buffer behind @fd (not
	 * consumed) and set buf->size. Imports are not charged.
	 */
	int (*buffer_import)(npu_buffer *buf, int fd);
	/** @buffer_wait_idle: 0 once no job uses @buf, -ETIME at @deadline. */
	int (*buffer_wait_idle)(npu_buffer *buf, int64_t deadline);

	/** @queue_create: create a queue of q->dev with priority q->prio. */
	int (*queue_create)(npu_queue *q);
	/**
	 * @queue_destroy: forget the queue; jobs already submitted still run
	 * and signal their fences.
	 */
	void (*queue_destroy)(npu_queue *q);

	/**
	 * @submit: validate and queue one job. The common layer has checked:
	 * info->cmd and every buffer belong to q->dev; cmd_offset is 8-aligned
	 * and [cmd_offset, cmd_offset + cmd_size) lies in info->cmd;
	 * cmd_size is a non-zero multiple of 8 and at most max_cmd_size;
	 * num_buffers <= max_submit_buffers, no buffer listed twice, each
	 * access a non-zero subset of NPU_ACCESS_RW; wait fences are non-NULL
	 * and of the same context. The stream must be copied before
	 * returning (the application may rewrite info->cmd at once).
	 * A malformed stream fails with -EINVAL and a detail naming command
	 * index, opcode mnemonic, operand and reason (npu_fail_stream()).
	 * On success @fence (refcount 1, owned by the common layer) must
	 * signal when the job ends; the backend takes its own references.
	 * On failure the common layer frees @fence without fence_destroy(),
	 * so a backend sets up its fence part only once nothing can fail.
	 */
	int (*submit)(npu_queue *q, const struct npu_submit_info *info,
		      npu_fence *fence);

	/**
	 * @fence_wait: -ETIME if the job has not ended by @deadline, else its
	 * status (0 or negative errno).
	 */
	int (*fence_wait)(npu_fence *f, int64_t deadline);
	/** @fence_destroy: the last reference is gone; release the part. */
	void (*fence_destroy)(npu_fence *f);
};

/** The emulated backend (emul/). */
extern const struct npu_backend_ops npu_backend_emul_ops;
/**
 * The kernel backend: weak and hidden, so that the library links without
 * it and backend.c sees a null address until a source defining it is
 * added to libnpu/meson.build.
 */
extern const struct npu_backend_ops npu_backend_kernel_ops
	__attribute__((weak, visibility("hidden")));

/* ------------------------------------------------------------- helpers */

/**
 * npu_fail() - set the thread's detail message and return @err
 * @err: a negative errno
 * @fmt: printf format of the detail; NULL uses npu_strerror(@err)
 */
int npu_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * npu_fail_stream() - -EINVAL with the detail of a rejected stream:
 * "command 3 (COPY) operand 1: <reason>", from a &struct rbln_model_diag
 * or &struct drm_rbln_submit_diag (same layout). @reason_text comes from
 * rbln_model_error_str(); @opcode_name may be NULL (unknown opcode).
 */
int npu_fail_stream(unsigned int cmd_index, unsigned int cmd_offset,
		    unsigned int opcode, const char *opcode_name,
		    unsigned int operand, const char *reason_text);

/** CLOCK_MONOTONIC now, in nanoseconds. */
int64_t npu_now_ns(void);
/**
 * Absolute deadline for a relative timeout: INT64_MAX for a negative
 * (infinite) timeout, saturating on overflow.
 */
int64_t npu_deadline(int64_t timeout_ns);

/**
 * struct npu_rbln_node - a device node of rbln.ko
 * @path: "/dev/accel/accelN", or "/dev/rblnN" where only those exist
 *	(containers often get just the /dev/rbln* nodes)
 * @minor: accel minor N, or the N of rblnN for the latter
 */
struct npu_rbln_node {
	char path[64];
	unsigned int minor;
};

/**
 * npu_rbln_nodes() - the rbln device nodes of this machine, sorted by
 * @minor: /dev/accel/accel* whose sysfs driver is "rbln" (nodes of other
 * accel drivers are skipped), or, when there is none, the /dev/rbln*
 * character devices. Returns the count (0 when none; *@nodes NULL), or a
 * negative errno; free *@nodes with free().
 */
int npu_rbln_nodes(struct npu_rbln_node **nodes);

/** Page size of the machine. */
uint64_t npu_page_size(void);

/** Drop a device reference (from a fence); the last one closes it. */
void npu_device_put(npu_device *dev);

#endif /* NPU_BACKEND_H */
