/* SPDX-License-Identifier: MIT */
/*
 * libnpu.h - userspace runtime for RBLN NPUs (libnpu.so.1).
 *
 * Conventions:
 *  - Every object is an opaque handle; there is no global state beyond an
 *    explicit npu_context (plus a per-thread error message).
 *  - Functions that can fail return 0 or a negative errno value (-EINVAL,
 *    -ENOMEM, ...). npu_strerror() names the code; npu_error_detail() gives
 *    the calling thread's message for its last failure, naming what was
 *    wrong ("command 3 (COPY) operand 1: range 4096+64 past buffer of 4096
 *    bytes").
 *  - All functions are thread-safe. A handle may be used from any thread;
 *    destroying a handle while another thread uses it is the caller's bug.
 *  - Two backends sit behind this API: "kernel" (rbln.ko through
 *    /dev/accel/accelN or /dev/rblnN) and "emul" (the same device model
 *    in-process). RBLN_BACKEND=kernel|emul forces one; by default the kernel
 *    backend is used when rbln devices exist, the emulated one otherwise.
 *    RBLN_DEVICES ("0-3", "0,2,5") selects the visible devices, which are
 *    then numbered from 0 in the order given; blanks are allowed, "" (or
 *    only blanks) selects none, and a malformed list, an index out of
 *    range or one listed twice makes npu_context_create() fail with
 *    -EINVAL.
 *  - The emulated backend models its devices inside the process, one set
 *    per context; its buffers are memfds, so export/import also works
 *    between processes. RBLN_EMUL_DEVICES, RBLN_EMUL_MEM_SIZE ("16G") and
 *    RBLN_EMUL_ENGINES set what npu_context_options leaves at zero.
 */
#ifndef LIBNPU_H
#define LIBNPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NPU_VERSION_MAJOR 1
#define NPU_VERSION_MINOR 0

typedef struct npu_context npu_context;
typedef struct npu_device npu_device;
typedef struct npu_buffer npu_buffer;
typedef struct npu_queue npu_queue;
typedef struct npu_fence npu_fence;
typedef struct npu_stream npu_stream;

/* ------------------------------------------------------------- errors */

/** Text for a (negative or positive) errno value returned by libnpu. */
const char *npu_strerror(int err);

/**
 * The calling thread's message for its last failing libnpu call, or "" if
 * none. Valid until the thread's next libnpu call.
 */
const char *npu_error_detail(void);

/* ------------------------------------------------------------- context */

enum npu_backend {
	NPU_BACKEND_AUTO = 0,	/* RBLN_BACKEND, else kernel if devices exist */
	NPU_BACKEND_KERNEL = 1,
	NPU_BACKEND_EMUL = 2,
};

/**
 * struct npu_context_options - optional settings of npu_context_create()
 * @struct_size: sizeof(struct npu_context_options), for growth: a smaller
 *	value leaves the later fields zero; a larger one (a newer header) is
 *	accepted when the bytes this library does not know are zero, else
 *	npu_context_create() fails with -E2BIG
 * @backend: overrides RBLN_BACKEND unless NPU_BACKEND_AUTO
 * @devices: overrides RBLN_DEVICES when not NULL
 * @emul_devices: device count of the emulated backend (0: 8)
 * @emul_mem_size: memory capacity per emulated device (0: 16 GiB)
 * @emul_engines: engine threads per emulated device (0: online cores
 *	divided among the devices, at least 1)
 */
struct npu_context_options {
	size_t struct_size;
	enum npu_backend backend;
	const char *devices;
	unsigned int emul_devices;
	uint64_t emul_mem_size;
	unsigned int emul_engines;
};

/** Create a context; @opts may be NULL. */
int npu_context_create(const struct npu_context_options *opts,
		       npu_context **out);
/** Destroy a context; every device must be closed first. */
void npu_context_destroy(npu_context *ctx);
/** Backend in use (never NPU_BACKEND_AUTO). */
enum npu_backend npu_context_backend(const npu_context *ctx);
/** "kernel" or "emul". */
const char *npu_backend_name(enum npu_backend backend);
/** Number of visible devices. */
unsigned int npu_device_count(const npu_context *ctx);

/* ------------------------------------------------------------- devices */

#define NPU_CAP_SEMAPHORES	(1ULL << 0)
#define NPU_CAP_PEER_BUFFERS	(1ULL << 1)
#define NPU_CAP_TIMELINE	(1ULL << 2)
#define NPU_CAP_COMPUTE_F32	(1ULL << 3)

/**
 * struct npu_device_info - what npu_device_query() reports
 * @index: visible index (0 .. npu_device_count() - 1)
 * @hw_index: the device's own index (N of /dev/rblnN)
 * @device_count: devices the backend has, visible or not
 * @name: product name
 * @path: device node ("/dev/accel/accel0") or "emul:N"
 * @mem_total: memory capacity in bytes
 * @mem_used: memory in use now in bytes (all clients)
 * @num_engines: neural engines of the device
 * @numa_node: NUMA node of the device, -1 if none
 * @isa_major: command-stream ISA major version
 * @isa_minor: command-stream ISA minor version
 * @capabilities: NPU_CAP_* bits
 * @max_buffer_size: largest single buffer
 * @max_submit_buffers: largest buffer list of one submission
 * @max_cmd_size: largest command stream in bytes
 */
struct npu_device_info {
	unsigned int index;
	unsigned int hw_index;
	unsigned int device_count;
	char name[32];
	char path[64];
	uint64_t mem_total;
	uint64_t mem_used;
	unsigned int num_engines;
	int numa_node;
	unsigned int isa_major;
	unsigned int isa_minor;
	uint64_t capabilities;
	uint64_t max_buffer_size;
	unsigned int max_submit_buffers;
	uint64_t max_cmd_size;
};

/** Open visible device @index. */
int npu_device_open(npu_context *ctx, unsigned int index, npu_device **out);
/**
 * Close a device; its buffers, queues and streams must be freed first.
 * Waits for the jobs submitted through this handle. Fences of the device
 * stay valid until released.
 */
void npu_device_close(npu_device *dev);
/** Current facts about an open device (mem_used is live). */
int npu_device_query(npu_device *dev, struct npu_device_info *info);
/** Facts about visible device @index without keeping it open. */
int npu_device_info_get(npu_context *ctx, unsigned int index,
			struct npu_device_info *info);
/** The context a device belongs to. */
npu_context *npu_device_context(const npu_device *dev);

/* ------------------------------------------------------------- buffers */

/** Buffer in host memory: not charged to the device's capacity. */
#define NPU_BUFFER_HOST		(1U << 0)

/**
 * Allocate a zeroed buffer of @size bytes (rounded up to pages). Device
 * buffers past the device's capacity fail with -ENOMEM.
 */
int npu_buffer_alloc(npu_device *dev, uint64_t size, uint32_t flags,
		     npu_buffer **out);
/** Free a buffer (waits for jobs that use it to finish). */
void npu_buffer_free(npu_buffer *buf);
/** Size in bytes (page-rounded). */
uint64_t npu_buffer_size(const npu_buffer *buf);
/** Device that owns (or imported) the buffer. */
npu_device *npu_buffer_device(const npu_buffer *buf);
/**
 * CPU mapping of the whole buffer, read/write, stable until
 * npu_buffer_free(). The CPU and the device see each other's writes once
 * the fence of a job has signalled.
 */
int npu_buffer_map(npu_buffer *buf, void **ptr);
/** Export as a dma-buf file descriptor (the caller closes it). */
int npu_buffer_export(npu_buffer *buf, int *fd);
/** Import a dma-buf exported by npu_buffer_export() into @dev. */
int npu_buffer_import(npu_device *dev, int fd, npu_buffer **out);
/** Make @buf usable on @dev (export + import). */
int npu_buffer_share(npu_buffer *buf, npu_device *dev, npu_buffer **out);
/**
 * Wait until no job uses @buf; @timeout_ns relative, <0 forever. Returns
 * 0, or -ETIME when the timeout passed first. Once no job uses a buffer,
 * the fences of those jobs have their final status.
 */
int npu_buffer_wait_idle(npu_buffer *buf, int64_t timeout_ns);

/* ------------------------------------------------------------- host memory */

/**
 * Page-aligned host memory on @dev's NUMA node (anywhere when it has none),
 * for staging data on its way to the device. Free with npu_host_free().
 */
void *npu_host_alloc(npu_device *dev, size_t size);
void npu_host_free(void *ptr, size_t size);

/* ------------------------------------------------------------- queues */

enum npu_priority {
	NPU_PRIORITY_LOW = 0,
	NPU_PRIORITY_NORMAL = 1,
	NPU_PRIORITY_HIGH = 2,
};

/** Create a queue; its jobs run in submission order. */
int npu_queue_create(npu_device *dev, enum npu_priority prio,
		     npu_queue **out);
/** Destroy a queue; submitted jobs still run and signal their fences. */
void npu_queue_destroy(npu_queue *q);
npu_device *npu_queue_device(const npu_queue *q);

/* ------------------------------------------------------------- submission */

#define NPU_ACCESS_READ		(1U << 0)
#define NPU_ACCESS_WRITE	(1U << 1)
#define NPU_ACCESS_RW		(NPU_ACCESS_READ | NPU_ACCESS_WRITE)

/** One entry of a buffer list; commands name buffers by their index. */
struct npu_buffer_use {
	npu_buffer *buffer;
	uint32_t access;
};

/**
 * struct npu_submit_info - one job
 * @cmd: buffer holding the command stream (uapi/rbln_isa.h)
 * @cmd_offset: byte offset of the stream in @cmd, 8-aligned
 * @cmd_size: stream size in bytes
 * @buffers: buffer list
 * @num_buffers: entries in @buffers
 * @wait: fences (of any device of the context) that must signal first
 * @num_wait: entries in @wait
 */
struct npu_submit_info {
	npu_buffer *cmd;
	uint64_t cmd_offset;
	uint64_t cmd_size;
	const struct npu_buffer_use *buffers;
	uint32_t num_buffers;
	npu_fence *const *wait;
	uint32_t num_wait;
};

/**
 * Validate and queue a job. A malformed stream fails with -EINVAL and
 * npu_error_detail() names the command, operand and reason. On success
 * *@fence (if @fence is not NULL) receives a new fence reference.
 */
int npu_submit(npu_queue *q, const struct npu_submit_info *info,
	       npu_fence **fence);

/* ------------------------------------------------------------- fences */

#define NPU_TIMEOUT_INFINITE	(-1LL)

/**
 * Wait up to @timeout_ns (relative; NPU_TIMEOUT_INFINITE) for the job.
 * Return: 0 job succeeded; -ETIME the wait timed out (the job goes on);
 * otherwise the job's own error: -ETIMEDOUT a SEM_WAIT expired (later
 * commands of the stream did not run), -EIO device fault or reset,
 * -ECANCELED the job never ran (a fence it waited for failed: a job does
 * not run on what a failed job may have left half-written).
 */
int npu_fence_wait(npu_fence *f, int64_t timeout_ns);
/** Like npu_fence_wait() with no waiting: -EBUSY while the job runs. */
int npu_fence_poll(npu_fence *f);
/** Wait for all @n fences; returns the first failure. */
int npu_fence_wait_all(npu_fence *const *f, unsigned int n,
		       int64_t timeout_ns);
/** Take another reference. */
npu_fence *npu_fence_ref(npu_fence *f);
/** Drop a reference. NULL is allowed. */
void npu_fence_release(npu_fence *f);

/* ------------------------------------------------------------- streams */

/*
 * npu_stream builds a command stream and its buffer list, then submits it.
 * Builder errors (bad arguments, out of memory) are sticky: later calls do
 * nothing and npu_stream_submit() returns the first error. The stream owns
 * a host command buffer on its device that it grows as needed. Commands
 * are not range-checked here: the device validates the whole stream at
 * submission, and npu_error_detail() then names the offending command.
 * A stream longer than the device's max_cmd_size, or naming more than
 * max_submit_buffers buffers, fails with -E2BIG.
 */

enum npu_sem_op { NPU_SEM_SET = 0, NPU_SEM_ADD = 1 };
enum npu_sem_cond { NPU_SEM_GEQ = 0, NPU_SEM_EQ = 1 };

int npu_stream_create(npu_device *dev, npu_stream **out);
void npu_stream_destroy(npu_stream *s);
/** Forget all commands and buffers (keeps the allocations). */
void npu_stream_reset(npu_stream *s);
/** First builder error, 0 if none. */
int npu_stream_error(const npu_stream *s);
/** Bytes of the stream so far, header included. */
uint64_t npu_stream_size(const npu_stream *s);
/** The stream bytes so far (valid until the next call on @s). */
const void *npu_stream_data(const npu_stream *s);

void npu_stream_nop(npu_stream *s);
void npu_stream_barrier(npu_stream *s);
void npu_stream_fill(npu_stream *s, npu_buffer *dst, uint64_t offset,
		     uint64_t size, uint32_t value);
void npu_stream_copy(npu_stream *s, npu_buffer *dst, uint64_t dst_offset,
		     npu_buffer *src, uint64_t src_offset, uint64_t size);
void npu_stream_sem_signal(npu_stream *s, npu_buffer *sem, uint64_t offset,
			   enum npu_sem_op op, uint64_t value);
void npu_stream_sem_wait(npu_stream *s, npu_buffer *sem, uint64_t offset,
			 enum npu_sem_cond cond, uint64_t value,
			 uint64_t timeout_ns);
/** dst = a + b over @count float32 elements. */
void npu_stream_add_f32(npu_stream *s, npu_buffer *dst, uint64_t dst_offset,
			npu_buffer *a, uint64_t a_offset, npu_buffer *b,
			uint64_t b_offset, uint64_t count);
/**
 * Append a raw command (@size bytes, a multiple of 8). Operand bo fields
 * are taken as-is: get indices from npu_stream_buffer_index().
 */
void npu_stream_raw(npu_stream *s, const void *cmd, size_t size);
/**
 * Index of @buf in the stream's buffer list, adding it or widening its
 * access; UINT32_MAX (and the stream's error set) when @buf is NULL,
 * belongs to another device handle, @access is not a non-zero subset of
 * NPU_ACCESS_RW, or the list is full.
 */
uint32_t npu_stream_buffer_index(npu_stream *s, npu_buffer *buf,
				 uint32_t access);
/** Submit the stream as one job on @q, after @wait fences. */
int npu_stream_submit(npu_stream *s, npu_queue *q, npu_fence *const *wait,
		      unsigned int num_wait, npu_fence **fence);

#ifdef __cplusplus
}
#endif

#endif /* LIBNPU_H */
