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
 *    RBLN_CPU_VARIANT=auto|baseline|avx2|avx512|amx|avx512+amx forces the
 *    CPU variant of the emulated devices' compute kernels (for the whole
 *    process; an unknown value, or a variant the CPU cannot run, makes
 *    npu_context_create() fail with -EINVAL). auto is avx512+amx where
 *    the CPU has AMX-BF16 tiles. rbln.ko has a module parameter for the
 *    same choice (without amx and avx512+amx).
 */
#ifndef LIBNPU_H
#define LIBNPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NPU_VERSION_MAJOR 1
#define NPU_VERSION_MINOR 1

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
/**
 * The CPU variant the emulated devices' compute kernels run ("baseline",
 * "avx2", "avx512", "amx" or "avx512+amx": RBLN_CPU_VARIANT's choice, or
 * what "auto" resolved to on this CPU); NULL for the kernel backend, whose
 * driver reports its own in sysfs (cpu_variant). Since libnpu 1.2.
 */
const char *npu_context_cpu_variant(const npu_context *ctx);
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
 * Buffer never exported or shared with another device handle:
 * npu_buffer_export() and npu_buffer_share() refuse it with -EPERM. The
 * emulated backend then keeps it in private memory of the process, which
 * can use transparent huge pages (shared memfds cannot unless the
 * administrator allows huge shmem pages), and which a fork()ed child does
 * not inherit. For weights, KV caches and scratch memory.
 */
#define NPU_BUFFER_PRIVATE	(1U << 1)

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

/* ------------------------------------------------------------- compute */

/*
 * Builders of the compute commands of ISA 1.1 (libnpu 1.1; devices report
 * isa_minor >= 1; a head-major KV cache, NPU_KV_HEAD_MAJOR, needs 1.2;
 * MATMUL's bfloat16 activations, npu_matmul.a_bf16, need 1.3). Shapes are
 * in elements, tensors are (buffer, byte offset) and dense unless a stride
 * says otherwise; the builder computes every operand's size from the shape
 * (an overflow is -EINVAL, sticky like every builder error) and the device
 * validates the rest at submission. Documentation/isa-compute.md has the
 * semantics and numerics of each.
 */

enum npu_dtype {
	NPU_DTYPE_F32 = 0,
	NPU_DTYPE_F16 = 1,
	NPU_DTYPE_BF16 = 2,
	/*
	 * int8 with one float32 scale per output column: MATMUL weights
	 * only. The weights (either layout) are followed by the scales of
	 * whole 16-column panels, ceil(n / 16) * 16 floats (see
	 * Documentation/isa-compute.md); each weight is f32(q) * scale.
	 */
	NPU_DTYPE_I8 = 3,
};

enum npu_layout {
	/* [n, k] row-major, as a checkpoint stores a linear layer. */
	NPU_LAYOUT_ROWMAJOR = 0,
	/* The device's panels of 16 output columns (npu_pack_weights()). */
	NPU_LAYOUT_PACKED16 = 1,
	/*
	 * libnpu 1.4, ISA 1.4: the same panels, each followed by
	 * RBLN_ISA_PANEL_GAP unread bytes (npu_pack_weights_layout()), so
	 * that the panels a device streams side by side do not start at the
	 * same offset modulo a large power of two; on a 16-core Sapphire
	 * Rapids a decode step's weights stream 3-9% faster.
	 */
	NPU_LAYOUT_PACKED16_SPACED = 2,
};

/*
 * The paged KV cache's layout; KV_WRITE and ATTENTION of one cache must
 * use the same. Head-major (ISA 1.2, libnpu 1.2) makes each KV head's
 * keys and values of a block one contiguous run: decode attention streams
 * them at several times the token-major rate.
 */
enum npu_kv_layout {
	/* [blocks, block_size, kv_heads, head_dim] (ISA 1.1). */
	NPU_KV_TOKEN_MAJOR = 0,
	/* [blocks, kv_heads, block_size, head_dim]. */
	NPU_KV_HEAD_MAJOR = 1,
};

/** A tensor: a buffer of the stream's device and a byte offset in it. */
struct npu_tensor {
	npu_buffer *buf;
	uint64_t offset;
};

/** dst[t] = table[ids[t] - id_base] widened to float32. */
struct npu_embed {
	struct npu_tensor dst;		/* float32 [tokens, dim] */
	struct npu_tensor table;	/* dtype [rows, dim] */
	struct npu_tensor ids;		/* int32 [tokens] */
	uint64_t tokens;
	uint64_t rows;
	uint32_t dim;
	enum npu_dtype dtype;
	uint32_t id_base;
	/* Ids outside the table give zero rows instead of a fault. */
	int zero_outside;
};

/** dst = x / sqrt(mean(x^2) + eps) * weight, per row. */
struct npu_rmsnorm {
	struct npu_tensor dst;		/* float32 [rows, dim], may be src */
	struct npu_tensor src;		/* float32 [rows, dim] */
	struct npu_tensor weight;	/* dtype [dim] */
	uint64_t rows;
	uint32_t dim;
	enum npu_dtype dtype;
	float eps;
};

/** dst[m, n] (+)= sum_k a[m, k] * w[n, k]. */
struct npu_matmul {
	struct npu_tensor dst;		/* float32 [m, n] */
	struct npu_tensor a;		/* float32 [m, k] */
	struct npu_tensor w;		/* dtype, layout */
	uint64_t m;
	uint32_t k;
	uint32_t n;
	enum npu_dtype dtype;
	enum npu_layout layout;
	/* Add to dst (residual add) instead of overwriting it. */
	int accumulate;
	/*
	 * libnpu 1.3, ISA 1.3 (RBLN_MATMUL_A_BF16): 1 lets the device round
	 * each activation to bfloat16 before it multiplies, for bfloat16
	 * dot-product units' speed; products and sums stay float32 and the
	 * result is within (k + 1) * 2^-24 * sum|a w| + 2^-8 * sum|a w| of
	 * the real product (the device may also not round). 0: float32
	 * activations, as before 1.3. Any other value is -EINVAL.
	 */
	int a_bf16;
};

/** Rotary embedding in place (Hugging Face Llama, rotate-half pairs). */
struct npu_rope {
	struct npu_tensor x;		/* float32 rows, stride floats apart */
	struct npu_tensor pos;		/* int32 [tokens] */
	uint64_t tokens;
	uint32_t heads;
	uint32_t head_dim;
	uint32_t stride;		/* 0: heads * head_dim */
	float theta;
	/* rope_type "llama3" with these; all zero for the default type. */
	int llama3;
	float factor;
	float low_freq_factor;
	float high_freq_factor;
	uint32_t original_max_pos;
};

/** dst = silu(gate) * up. */
struct npu_swiglu {
	struct npu_tensor dst;		/* float32 [rows, n] */
	struct npu_tensor gate;		/* float32 rows, gate_stride apart */
	struct npu_tensor up;		/* float32 rows, up_stride apart */
	uint64_t rows;
	uint32_t n;
	uint32_t gate_stride;		/* 0: n */
	uint32_t up_stride;		/* 0: n */
};

/** Store keys and values into the paged cache at slots[t]. */
struct npu_kv_write {
	struct npu_tensor k_cache;	/* dtype, in @layout */
	struct npu_tensor v_cache;
	struct npu_tensor k;		/* float32 rows, k_stride apart */
	struct npu_tensor v;
	struct npu_tensor slots;	/* int32 [tokens]; < 0 skips */
	uint64_t num_blocks;
	uint64_t tokens;
	uint32_t block_size;
	uint32_t kv_heads;
	uint32_t head_dim;
	uint32_t k_stride;		/* 0: kv_heads * head_dim */
	uint32_t v_stride;		/* 0: kv_heads * head_dim */
	enum npu_dtype dtype;
	enum npu_kv_layout layout;
};

/**
 * Causal attention over the paged cache, by KV partitions. @seqs holds
 * int32 {q_start, q_len, ctx_len, table_row} per sequence; @work is
 * scratch of npu_attention_work_size() bytes.
 */
struct npu_attention {
	struct npu_tensor out;		/* float32 [rows, q_heads, head_dim] */
	struct npu_tensor q;		/* float32 rows, q_stride apart */
	struct npu_tensor k_cache;
	struct npu_tensor v_cache;
	struct npu_tensor seqs;		/* int32 [num_seqs, 4] */
	struct npu_tensor block_tables;	/* int32 [table_rows, max_blocks] */
	struct npu_tensor work;
	uint64_t rows;
	uint64_t num_seqs;
	uint64_t num_blocks;
	uint64_t table_rows;
	uint32_t q_heads;
	uint32_t kv_heads;
	uint32_t head_dim;
	uint32_t q_stride;		/* 0: q_heads * head_dim */
	uint32_t block_size;
	uint32_t max_blocks;
	uint32_t partition_len;
	enum npu_dtype dtype;
	float scale;
	enum npu_kv_layout layout;	/* as the cache was written */
};

/** ARGMAX (k 1) or TOPK: values and indices, best first, per row. */
struct npu_topk {
	struct npu_tensor values;	/* float32 [rows, k] */
	struct npu_tensor indices;	/* int32 [rows, k] */
	struct npu_tensor src;		/* float32 [rows, n] */
	uint64_t rows;
	uint32_t n;
	uint32_t k;
	uint32_t index_base;		/* added to every index */
};

void npu_stream_embed(npu_stream *s, const struct npu_embed *op);
void npu_stream_rmsnorm(npu_stream *s, const struct npu_rmsnorm *op);
void npu_stream_matmul(npu_stream *s, const struct npu_matmul *op);
void npu_stream_rope(npu_stream *s, const struct npu_rope *op);
void npu_stream_swiglu(npu_stream *s, const struct npu_swiglu *op);
void npu_stream_kv_write(npu_stream *s, const struct npu_kv_write *op);
void npu_stream_attention(npu_stream *s, const struct npu_attention *op);
/** ARGMAX: @op->k must be 1. */
void npu_stream_argmax(npu_stream *s, const struct npu_topk *op);
void npu_stream_topk(npu_stream *s, const struct npu_topk *op);

/**
 * Bytes of the @work tensor @op needs (its shape fields set), 0 when that
 * overflows.
 */
uint64_t npu_attention_work_size(const struct npu_attention *op);

/**
 * Bytes of @n x @k weights of @dtype in NPU_LAYOUT_PACKED16 (for
 * NPU_DTYPE_I8 with the scales that follow them).
 */
uint64_t npu_packed_weights_size(enum npu_dtype dtype, uint32_t n,
				 uint32_t k);

/**
 * libnpu 1.4: bytes of @n x @k weights of @dtype in @layout, the MATMUL
 * operand's size (for NPU_DTYPE_I8 with the scales that follow them); 0
 * for a layout that is not an npu_layout.
 */
uint64_t npu_weights_size(enum npu_dtype dtype, enum npu_layout layout,
			  uint32_t n, uint32_t k);

/**
 * Repack row-major [n, k] weights of @dtype (as a checkpoint stores them)
 * into NPU_LAYOUT_PACKED16 at @dst (npu_packed_weights_size() bytes,
 * padding zeroed). NPU_DTYPE_I8: @src is the row-major operand, the n * k
 * int8 weights followed by ceil(n / 16) * 16 float32 scales, which are
 * copied after the packed weights. Host memory to host memory; -EINVAL on
 * bad arguments.
 */
int npu_pack_weights(void *dst, const void *src, enum npu_dtype dtype,
		     uint32_t n, uint32_t k);

/**
 * libnpu 1.4: npu_pack_weights() into @layout, NPU_LAYOUT_PACKED16 or
 * NPU_LAYOUT_PACKED16_SPACED (npu_weights_size() bytes at @dst, padding
 * and gaps zeroed); -EINVAL on bad arguments or another layout.
 */
int npu_pack_weights_layout(void *dst, const void *src, enum npu_dtype dtype,
			    enum npu_layout layout, uint32_t n, uint32_t k);

/* ------------------------------------------------------------- collectives */

/*
 * Collectives over a group of devices, built from peer DMA (COPY into
 * buffers shared between the devices), semaphores and ADD: one call
 * appends each participant's part to that participant's stream; the
 * application then submits every stream (each on a queue of its device),
 * and the devices synchronise among themselves, with no host involvement.
 *
 * Every participant must submit what each call appended, in call order:
 * the group counts its collectives (semaphore epochs that only grow, so
 * one group serves any number of collectives without a reset), and a
 * participant that skips one leaves the others waiting until their
 * SEM_WAIT times out (-ETIMEDOUT). Results are the same bits on every
 * participant: each part of an all-reduce is summed by one device, in a
 * fixed order, then copied to the others.
 */

typedef struct npu_collective_group npu_collective_group;

/**
 * struct npu_collective_options - optional settings of a group
 * @struct_size: sizeof(struct npu_collective_options), for growth
 * @scratch_bytes: staging space per device (0: 4 MiB); larger collectives
 *	run in several rounds
 * @timeout_ns: how long a device waits for its peers (0: 30 s; at most
 *	60 s, the ISA's limit)
 */
struct npu_collective_options {
	size_t struct_size;
	uint64_t scratch_bytes;
	uint64_t timeout_ns;
};

/**
 * Create a group of @n open devices (distinct handles of one context;
 * @devices[i] is rank i). Allocates each device's mailbox (semaphores and
 * staging space) and shares it with every other member. @opts may be NULL.
 */
int npu_collective_group_create(npu_device *const *devices, unsigned int n,
				const struct npu_collective_options *opts,
				npu_collective_group **out);
/** Destroy a group; the jobs using it must have completed. */
void npu_collective_group_destroy(npu_collective_group *g);
/** Number of devices in @g. */
unsigned int npu_collective_group_size(const npu_collective_group *g);

/**
 * Sum @count float32 elements at @offset of @buffers[i] over all ranks,
 * leaving the sum in every rank's buffer. @streams[i] and @buffers[i]
 * belong to @devices[i] of the group. Returns 0, or an error (nothing
 * appended for a bad argument; a stream that fails while appending marks
 * the group broken: later calls fail with -EPIPE).
 */
int npu_stream_allreduce_f32(npu_collective_group *g,
			     npu_stream *const *streams,
			     npu_buffer *const *buffers, uint64_t offset,
			     uint64_t count);

/**
 * Gather @bytes from @src[i] at @src_offset of every rank i into every
 * rank's @dst at @dst_offset + i * @bytes (rank order).
 */
int npu_stream_allgather(npu_collective_group *g, npu_stream *const *streams,
			 npu_buffer *const *src, uint64_t src_offset,
			 npu_buffer *const *dst, uint64_t dst_offset,
			 uint64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* LIBNPU_H */
