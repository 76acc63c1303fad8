/* SPDX-License-Identifier: MIT */
/*
 * emul.h - the emulated backend: N modelled devices inside the process.
 *
 * Objects and who owns what
 *  - struct emul_ctx (npu_context.backend) owns the struct emul_hw of every
 *    modelled device: memory accounting, scheduler and engine threads.
 *  - struct emul_dev (npu_device priv) is one open handle of a hw device;
 *    it counts the jobs submitted through it so that closing waits for
 *    them. Engine threads run while a hw device has open handles.
 *  - struct emul_buf (npu_buffer priv): a memfd mapped shared, so that
 *    export is a dup and import a second mapping of the same pages, in
 *    this process or another one.
 *  - struct emul_queue is allocated apart from its npu_queue because it
 *    outlives npu_queue_destroy() while it still holds jobs.
 *  - struct emul_fence (npu_fence priv): status, waiters, callbacks.
 *  - struct emul_job: a private copy of the stream, the buffer list, and
 *    references on its out fence and wait fences.
 *
 * Locking: emul_hw.lifecycle serialises opening and closing handles (and
 * so starting and stopping engines); emul_hw.lock protects the scheduler
 * (queue list and FIFOs) and the engines' state; emul_fence.lock,
 * emul_buf.lock and emul_dev.lock protect their own object. Only
 * lifecycle -> lock nests; fence callbacks run with no lock held.
 */
#ifndef NPU_EMUL_H
#define NPU_EMUL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "npu_backend.h"
#include "rbln_model.h"

#define EMUL_DEVICE_NAME	"RBLN-CA12"
#define EMUL_DEFAULT_DEVICES	8
#define EMUL_MAX_DEVICES	64
#define EMUL_DEFAULT_MEM_SIZE	(16ULL << 30)
#define EMUL_MAX_ENGINES	64
#define EMUL_MAX_SUBMIT_BUFFERS	256
/* The model bounds a stream (validation runs inside submit). */
#define EMUL_MAX_CMD_SIZE	RBLN_MODEL_MAX_STREAM_SIZE

struct emul_hw;
struct emul_job;

/**
 * struct emul_parallel - one operation split over the engines
 * @fn: the model's worker
 * @arg: its argument
 * @nparts: parts in all
 * @next: next part to claim
 */
struct emul_parallel {
	void (*fn)(void *arg, u32 part, u32 nparts);
	void *arg;
	u32 nparts;
	atomic_uint next;
};

/**
 * struct emul_queue - a queue's FIFO in the device scheduler
 * @prev, @next: the hw device's queue list; a queue that had a job picked
 *	moves to the tail, which makes picking round-robin within a priority
 * @prio: priority
 * @owner: the handle whose jobs these are
 * @head, @tail: the FIFO of jobs not yet started
 * @destroyed: npu_queue_destroy() was called; freed once empty
 */
struct emul_queue {
	struct emul_queue *prev;
	struct emul_queue *next;
	enum npu_priority prio;
	struct emul_dev *owner;
	struct emul_job *head;
	struct emul_job *tail;
	bool destroyed;
};

/**
 * struct emul_op_time - one opcode's line of a device's profile
 * @calls: commands run
 * @ns: their time
 */
struct emul_op_time {
	uint64_t calls;
	uint64_t ns;
};

/*
 * MATMUL shapes a profile tells apart: a Llama model has five or six per
 * batch size; the rest share one "other shapes" line.
 */
#define EMUL_PROFILE_SHAPES	48U

/**
 * struct emul_mm_time - one MATMUL shape's line of a device's profile
 * @m: activation rows
 * @k: reduction dimension
 * @n: output columns
 * @dtype: the weights' &enum rbln_isa_dtype
 * @a_bf16: the command let the device round activations to bfloat16
 * @calls: commands run
 * @ns: their time
 *
 * A line with @calls 0 is free; @m 0 marks the "other shapes" line.
 */
struct emul_mm_time {
	uint64_t m;
	uint32_t k;
	uint32_t n;
	uint32_t dtype;
	bool a_bf16;
	uint64_t calls;
	uint64_t ns;
};

/**
 * struct emul_job_time - a device's jobs in its profile
 * @jobs: jobs run
 * @busy_ns: their time on engine 0, from taking each to signalling its
 *	fence (commands, checking the stream, dispatching)
 * @idle_ns: engine 0's time between the end of one job and the start of
 *	the next: what the host spent between submissions
 * @last_end_ns: when the last job ended, 0 before the first
 */
struct emul_job_time {
	uint64_t jobs;
	uint64_t busy_ns;
	uint64_t idle_ns;
	int64_t last_end_ns;
};

/**
 * struct emul_hw - one modelled device
 * @ctx: the backend context
 * @index: device index
 * @numa_node: node of its memory and engine threads, -1 if none
 * @mem_used: bytes charged by device buffers
 * @lifecycle: serialises starting and stopping the engines
 * @open_handles: handles open, under @lifecycle; engines run while it is
 *	non-zero
 * @lock: protects everything below
 * @work: engine 0 waits here for runnable jobs
 * @split: helper engines sleep here for parallel work
 * @split_done: engine 0 sleeps here for the helpers to finish a split
 * @queues: head of the queue list
 * @kicks: counts emul_engines_kick() calls, so an idle engine 0 spinning
 *	before it sleeps notices new work without the lock
 * @stopping: engines must exit
 * @cancel: the device is being torn down (the model's env->cancelled)
 * @split_work: the split being executed, NULL when none
 * @split_gen: counts splits published (and the stop), so that helpers
 *	polling between commands see new work without the lock
 * @split_busy: helpers that may be inside @split_work
 * @split_sleepers: helpers asleep on @split
 * @split_waiting: engine 0 is asleep on @split_done
 * @engines: engine threads ([0] runs streams)
 * @num_engines: their count
 * @profile: time per opcode, written by engine 0 only (RBLN_EMUL_PROFILE)
 * @mm_time: MATMUL's time per shape, the last line for the shapes beyond
 *	the others, as @profile
 * @job_time: time in and between jobs, as @profile
 */
struct emul_hw {
	struct emul_ctx *ctx;
	unsigned int index;
	int numa_node;
	atomic_uint_fast64_t mem_used;
	pthread_mutex_t lifecycle;
	unsigned int open_handles;
	pthread_mutex_t lock;
	pthread_cond_t work;
	pthread_cond_t split;
	pthread_cond_t split_done;
	struct emul_queue *queues;
	atomic_uint kicks;
	bool stopping;
	atomic_bool cancel;
	_Atomic(struct emul_parallel *) split_work;
	atomic_uint split_gen;
	atomic_uint split_busy;
	atomic_uint split_sleepers;
	atomic_bool split_waiting;
	pthread_t *engines;
	unsigned int num_engines;
	struct emul_op_time profile[RBLN_OP_COUNT];
	struct emul_mm_time mm_time[EMUL_PROFILE_SHAPES + 1];
	struct emul_job_time job_time;
};

/**
 * struct emul_ctx - the backend part of a context
 * @num_devices: modelled devices
 * @mem_size: capacity of each
 * @engines_per_device: engine threads of each
 * @profile: RBLN_EMUL_PROFILE asked for each device's time per opcode
 * @spin_ns: how long a thread about to sleep for a fence or for work
 *	polls first (0 on a single core, where it would only delay the
 *	thread it waits for)
 * @split_spin_ns: how long a helper engine polls for the next split
 *	before it sleeps
 * @hw: the devices
 */
struct emul_ctx {
	unsigned int num_devices;
	uint64_t mem_size;
	unsigned int engines_per_device;
	bool profile;
	int64_t spin_ns;
	int64_t split_spin_ns;
	struct emul_hw *hw;
};

/**
 * struct emul_dev - the backend part of an npu_device
 * @hw: the device
 * @lock: protects @jobs
 * @idle: signalled when @jobs drops to zero
 * @jobs: jobs submitted through this handle and not yet finished
 */
struct emul_dev {
	struct emul_hw *hw;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	unsigned int jobs;
};

/**
 * struct emul_buf - the backend part of an npu_buffer
 * @fd: the memfd
 * @map: its shared mapping, the whole buffer
 * @charged: bytes charged to the device (0 for host and imported buffers)
 * @lock: protects @busy
 * @idle: signalled when @busy drops to zero
 * @busy: unfinished jobs that list the buffer
 */
struct emul_buf {
	int fd;
	uint8_t *map;
	uint64_t charged;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	unsigned int busy;
};

/** struct emul_fence_cb - a callback run once when a fence signals. */
struct emul_fence_cb {
	struct emul_fence_cb *next;
	void (*fn)(struct emul_fence_cb *cb);
};

/**
 * struct emul_fence - the backend part of an npu_fence
 * @lock: protects the rest
 * @cond: waiters sleep here
 * @signalled: the job ended; written under @lock, read also without it
 *	by waiters that spin before they sleep
 * @status: its result
 * @callbacks: to run at signal time
 */
struct emul_fence {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_bool signalled;
	int status;
	struct emul_fence_cb *callbacks;
};

/**
 * struct emul_job_wait - one wait fence of a job
 * @cb: callback on the fence
 * @job: the job
 * @fence: the fence (referenced)
 */
struct emul_job_wait {
	struct emul_fence_cb cb;
	struct emul_job *job;
	npu_fence *fence;
};

/**
 * struct emul_job - one submission
 * @next: FIFO link
 * @queue: its queue
 * @owner: handle it was submitted through
 * @fence: signalled at the end (referenced)
 * @pending: unsignalled wait fences, plus one while being set up
 * @stream: private copy of the stream
 * @stream_size: its size
 * @bos: the model's view of the buffer list
 * @bufs: the buffers (marked busy)
 * @num_bos: entries in @bos and @bufs
 * @waits: wait fences
 * @num_waits: entries in @waits
 */
struct emul_job {
	struct emul_job *next;
	struct emul_queue *queue;
	struct emul_dev *owner;
	npu_fence *fence;
	atomic_uint pending;
	uint8_t *stream;
	uint64_t stream_size;
	struct rbln_model_bo *bos;
	struct emul_buf **bufs;
	uint32_t num_bos;
	struct emul_job_wait *waits;
	uint32_t num_waits;
};

/** An absolute CLOCK_MONOTONIC deadline as pthread_cond_timedwait() wants. */
static inline struct timespec emul_timespec(int64_t ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000,
				  .tv_nsec = ns % 1000000000 };
}

/*
 * Waking a sleeping thread costs tens of microseconds, most jobs take
 * less: a thread about to sleep polls this long first.
 */
#define EMUL_SPIN_NS 20000
/*
 * A helper engine's poll for the next split, where the CPU has a core for
 * each engine: it bridges the commands that engine 0 runs alone between
 * two splits (a decode step's ROPE, KV_WRITE, RMSNORM: tens of us).
 */
#define EMUL_SPLIT_SPIN_NS 200000

/** Tell the CPU we are busy-waiting (lets the sibling hyperthread run). */
static inline void emul_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/*
 * One step of a bounded poll. Mostly a pause; every 16th step yields, so
 * that when the thread we wait for shares our core (another process keeps
 * the other cores busy) it gets to run instead of waiting out our spin.
 */
static inline void emul_poll_step(unsigned int step)
{
	if ((step & 15) == 15)
		sched_yield();
	else
		emul_cpu_relax();
}

/** Init a condition variable that times out by CLOCK_MONOTONIC. */
static inline void emul_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
}

static inline struct emul_ctx *emul_ctx(npu_context *ctx)
{
	return ctx->backend;
}

static inline struct emul_dev *emul_dev(npu_device *dev)
{
	return npu_priv(dev);
}

static inline struct emul_buf *emul_buf(npu_buffer *buf)
{
	return npu_priv(buf);
}

/** The backend part of an npu_queue: the scheduler's queue it stands for. */
struct emul_queue_handle {
	struct emul_queue *queue;
};

static inline struct emul_queue *emul_queue(npu_queue *q)
{
	return ((struct emul_queue_handle *)npu_priv(q))->queue;
}

static inline struct emul_fence *emul_fence(npu_fence *f)
{
	return npu_priv(f);
}

/* emul_context.c */
int emul_context_init(npu_context *ctx, const struct npu_context_options *opts);
void emul_context_fini(npu_context *ctx);
int emul_device_info(npu_context *ctx, unsigned int hw_index,
		     struct npu_device_info *info);

/* emul_device.c */
int emul_device_open(npu_device *dev);
void emul_device_close(npu_device *dev);
int emul_device_query(npu_device *dev, struct npu_device_info *info);
/** A job of @d finished. */
void emul_dev_job_done(struct emul_dev *d);

/* emul_buffer.c */
int emul_buffer_alloc(npu_buffer *buf, uint64_t size, uint32_t flags);
void emul_buffer_free(npu_buffer *buf);
int emul_buffer_map(npu_buffer *buf, void **ptr);
int emul_buffer_export(npu_buffer *buf, int *fd);
int emul_buffer_import(npu_buffer *buf, int fd);
int emul_buffer_wait_idle(npu_buffer *buf, int64_t deadline);
/** Mark @b used by one more job / one job fewer. */
void emul_buf_busy(struct emul_buf *b);
void emul_buf_unbusy(struct emul_buf *b);

/* emul_fence.c */
void emul_fence_init(npu_fence *f);
int emul_fence_wait(npu_fence *f, int64_t deadline);
void emul_fence_destroy(npu_fence *f);
/** End the job: set @status, wake waiters, run callbacks. */
void emul_fence_signal(npu_fence *f, int status);
/**
 * Run @cb->fn when @f signals; false (and nothing registered) when it has
 * signalled already.
 */
bool emul_fence_add_callback(npu_fence *f, struct emul_fence_cb *cb);
/** Status of a signalled fence. */
int emul_fence_status(npu_fence *f);

/* emul_sched.c: queues */
int emul_queue_create(npu_queue *q);
void emul_queue_destroy(npu_queue *q);

/* emul_submit.c */
int emul_submit(npu_queue *q, const struct npu_submit_info *info,
		npu_fence *fence);

/* emul_sched.c: the scheduler, called with hw->lock held */
/** Append @job to its queue's FIFO. */
void emul_sched_enqueue(struct emul_job *job);
/** The next job to run (removed from its FIFO), or NULL. */
struct emul_job *emul_sched_pick(struct emul_hw *hw);
/** Unlink and free @q if it is destroyed and empty. */
void emul_sched_reap_queue(struct emul_hw *hw, struct emul_queue *q);

/* emul_engine.c */
/** Start the engine threads of @hw (first handle opened). */
int emul_engines_start(struct emul_hw *hw);
/** Stop and join them (last handle closed, no jobs left). */
void emul_engines_stop(struct emul_hw *hw);
/** Wake engine 0 because a job may have become runnable. */
void emul_engines_kick(struct emul_hw *hw);
/** Run @fn for every part on all engines of @hw (engine 0 only). */
void emul_engines_parallel(struct emul_hw *hw,
			   void (*fn)(void *arg, u32 part, u32 nparts),
			   void *arg, u32 nparts);

/* emul_job.c */
/** Run @job on the calling engine thread, signal and free it. */
void emul_job_run(struct emul_hw *hw, struct emul_job *job);
/** Free a job that never ran (setup failure). */
void emul_job_free(struct emul_job *job);

/* emul_env.c */
/** The model's services for jobs of @hw. */
void emul_env_init(struct emul_hw *hw, struct rbln_model_env *env);

/* emul_profile.c: RBLN_EMUL_PROFILE. */
bool emul_profile_wanted(void);
void emul_profile_op(void *priv, const struct rbln_isa_cmd *cmd, u64 ns);
void emul_profile_job(struct emul_hw *hw, int64_t start_ns, int64_t end_ns);
void emul_profile_report(struct emul_hw *hw);

#endif /* NPU_EMUL_H */
