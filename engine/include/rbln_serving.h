/* SPDX-License-Identifier: MIT */
/*
 * The interface between rbln-serve's HTTP layer and the engine's scheduler.
 *
 * The HTTP layer (engine/src/serve/) owns everything that is text: it
 * tokenizes prompts, renders chat templates, tokenizes bad words, turns
 * generated ids back into text and matches stop strings.  The engine owns
 * everything that is a token: scheduling, KV blocks, sampling, EOS and
 * stop_token_ids, max_tokens, deadlines.  The two meet here, in a request of
 * token ids and sampling parameters and a stream of events per request.
 *
 * The engine provides its implementation as one table of functions,
 * struct rbln_serving_ops, so the serving layer builds, links and is tested
 * before the runtime exists and binds to it by taking the table's address.
 *
 * Threads: every function may be called from any thread; the event callback
 * is called on an engine thread (see rbln_gen_event_fn).
 */
#ifndef RBLN_SERVING_H
#define RBLN_SERVING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_error.h"
#include "rbln_sampling.h"

/* ------------------------------------------------------------------ */
/* Requests and events                                                 */
/* ------------------------------------------------------------------ */

struct rbln_gen_request {
	const int32_t *prompt_ids;	/* with BOS when the tokenizer adds it */
	size_t n_prompt_ids;		/* 1 .. max_model_len */
	struct rbln_sampling_params params;
	int64_t deadline_ns;		/* CLOCK_MONOTONIC; 0 = none.  Past it the
					 * engine finishes the request with
					 * RBLN_FINISH_ABORT and -ETIMEDOUT. */
	uint64_t id;			/* serving layer's id, for the engine's logs */
};

enum rbln_finish_reason {
	RBLN_FINISH_NONE,		/* not finished (token events) */
	RBLN_FINISH_STOP,		/* EOS, a stop token, or the callback said stop */
	RBLN_FINISH_LENGTH,		/* max_tokens or max_model_len reached */
	RBLN_FINISH_ABORT,		/* cancelled, deadline, or engine shutting down */
	RBLN_FINISH_ERROR,		/* the engine failed this request */
};

/* One candidate of a top-k list. */
struct rbln_token_logprob {
	int32_t id;
	float logprob;
};

/*
 * An event of one request.  Token events carry the ids sampled since the
 * previous event (one step normally, more if the engine batches delivery);
 * exactly one final event ends every submitted request, after every token
 * event, even when it was cancelled.
 */
struct rbln_gen_event {
	const int32_t *ids;		/* new output ids, in order */
	size_t n_ids;
	const float *logprobs;		/* n_ids log-probabilities of the sampled
					 * ids; NULL unless params.logprobs >= 0 */
	const struct rbln_token_logprob *top_logprobs;	/* n_ids * n_top, best first */
	size_t n_top;			/* params.logprobs, or 0 */
	int64_t time_ns;		/* CLOCK_MONOTONIC when the ids were sampled */

	bool final;
	/* The rest is set on the final event only. */
	enum rbln_finish_reason reason;
	/*
	 * The EOS or stop_token_ids id that ended the sequence, or -1.  It is
	 * not among the ids of any event (its text is never output) but it is
	 * counted in n_output_tokens, as vLLM counts it.
	 */
	int32_t stop_token_id;
	int error_code;			/* negative errno for ABORT/ERROR, else 0 */
	const char *error_msg;		/* NULL or a message naming the cause */
	size_t n_prompt_tokens;		/* as submitted */
	size_t n_output_tokens;		/* sampled ids, stop token included */
	size_t n_preemptions;		/* times the request was preempted */
	int64_t t_scheduled_ns;		/* first scheduled (queue time ends); 0 if never */
	int64_t t_first_token_ns;	/* first id sampled; 0 if none */
};

/*
 * Return value of the callback for a token event: RBLN_GEN_CONTINUE, or
 * RBLN_GEN_STOP to end the request now (a stop string matched in the text):
 * the engine samples nothing more for it, frees its KV blocks and delivers
 * the final event with RBLN_FINISH_STOP.  Ignored for the final event.
 */
#define RBLN_GEN_CONTINUE 0
#define RBLN_GEN_STOP 1

/*
 * Called on an engine thread for each event of a request, one call at a
 * time per request, in order.  It must not block (it runs between steps)
 * and must not call back into the engine, except release() from the final
 * event.  Event memory is valid only during the call.
 */
typedef int (*rbln_gen_event_fn)(void *user, const struct rbln_gen_event *ev);

/* ------------------------------------------------------------------ */
/* Models and statistics                                               */
/* ------------------------------------------------------------------ */

#define RBLN_SERVING_MAX_BUCKETS 16
#define RBLN_SERVING_MAX_DEVICES 64

/* What rbln-serve asks the engine to load (model.json, validated). */
struct rbln_serving_model_spec {
	const char *name;		/* model name, for the engine's logs */
	const char *model_dir;		/* a compiled directory (rbln_config.json) */
	uint32_t max_num_seqs;		/* equals the compiled batch size */
	uint32_t max_num_batched_tokens;	/* tokens per step, prefill included */
	uint32_t max_model_len;		/* <= the compiled max_seq_len */
	uint32_t block_size;		/* KV block size in tokens */
	uint32_t tensor_parallel_size;	/* 0 = as compiled */
	uint32_t max_waiting;		/* waiting-queue bound: submit beyond it
					 * fails with -EBUSY (HTTP 503) */
	const char *devices;		/* "0,1,2,3", or NULL for RBLN_DEVICES/all */
	bool has_seed;			/* model.json "seed": base of unseeded requests */
	uint64_t seed;
};

/* What the loaded model is, as the engine sees it. */
struct rbln_serving_model_info {
	int64_t max_model_len;
	int64_t vocab_size;
	uint32_t max_num_seqs;
	uint32_t block_size;
	uint64_t kv_blocks_total;
	uint32_t n_decoder_batch_sizes;
	uint32_t decoder_batch_sizes[RBLN_SERVING_MAX_BUCKETS];	/* descending */
	uint32_t n_devices;
	int32_t devices[RBLN_SERVING_MAX_DEVICES];
};

/* A snapshot for /metrics; counters only grow. */
struct rbln_serving_stats {
	uint32_t num_running;		/* sequences in the running batch */
	uint32_t num_waiting;		/* queued, preempted ones included */
	uint64_t kv_blocks_used;
	uint64_t kv_blocks_total;
	uint64_t prompt_tokens_total;	/* prefill tokens computed (recompute included) */
	uint64_t generation_tokens_total;	/* tokens sampled */
	uint64_t preemptions_total;
	uint64_t steps_total;		/* model executions (prefill or decode steps) */
	uint32_t n_buckets;
	struct {
		uint32_t batch_size;	/* a compiled decoder batch size */
		uint64_t steps_total;	/* decode steps run in it */
	} buckets[RBLN_SERVING_MAX_BUCKETS];
	uint32_t n_devices;
	struct {
		int32_t index;		/* device index (/dev/rblnN) */
		double utilization;	/* busy fraction over the last interval, [0, 1] */
		uint64_t busy_ns_total;
	} devices[RBLN_SERVING_MAX_DEVICES];
};

/* Compiling a Hugging Face checkpoint the first time it is served. */
struct rbln_compile_spec {
	const char *hf_dir;
	const char *out_dir;		/* created; holds rbln_config.json after */
	uint32_t batch_size;		/* model.json max_num_seqs */
	uint32_t max_seq_len;		/* model.json max_model_len */
	uint32_t tensor_parallel_size;
	uint32_t kvcache_partition_len;	/* model.json block_size */
};

/* A model the implementation has open (opaque). */
struct rbln_serving_model;
struct rbln_gen_handle;

/*
 * The engine's implementation.  Errors are negative errno values with a
 * message in err; the serving layer maps them to HTTP: -EINVAL and -E2BIG
 * to 400, -EBUSY and -EAGAIN (queue full) and -ESHUTDOWN to 503, others 500.
 */
struct rbln_serving_ops {
	/*
	 * Compiles an HF checkpoint (NULL when the compiler is not linked:
	 * rbln-serve then tells the user to run rbln-compile).
	 */
	int (*compile)(const struct rbln_compile_spec *spec, struct rbln_error *err);

	/* Loads a compiled model onto its devices and starts its scheduler. */
	int (*open)(const struct rbln_serving_model_spec *spec,
		    struct rbln_serving_model **out, struct rbln_error *err);
	void (*info)(const struct rbln_serving_model *e, struct rbln_serving_model_info *info);

	/*
	 * Queues a request (FCFS).  On success *out is a handle owned by the
	 * caller until rbln_serving_ops.release(); every event goes to cb.
	 * *out is written before the first event is delivered (events may
	 * arrive on engine threads before submit returns).  On failure no
	 * event is ever delivered.
	 */
	int (*submit)(struct rbln_serving_model *e, const struct rbln_gen_request *req,
		      rbln_gen_event_fn cb, void *user, struct rbln_gen_handle **out,
		      struct rbln_error *err);

	/*
	 * Ends a request early (client disconnected): it leaves the waiting
	 * queue or the running batch at the next step boundary, its KV blocks
	 * are freed, and the final event says RBLN_FINISH_ABORT.  A no-op once
	 * the final event was delivered.
	 */
	void (*cancel)(struct rbln_gen_handle *h);

	/*
	 * Gives the handle back; allowed only after the final event, from any
	 * thread, including from inside the final event's callback (the
	 * exception to the callback's rule of not calling into the engine).
	 */
	void (*release)(struct rbln_gen_handle *h);

	void (*stats)(struct rbln_serving_model *e, struct rbln_serving_stats *st);

	/*
	 * Stops the scheduler: requests still queued or running end with
	 * RBLN_FINISH_ABORT and -ESHUTDOWN (their final events are delivered
	 * before close returns), then the devices are released.  rbln-serve
	 * drains first on SIGTERM, so close normally finds nothing in flight.
	 */
	void (*close)(struct rbln_serving_model *e);
};

/*
 * The engine runtime's table, defined by src/serving_bridge (the library
 * behind engine/meson.build's serving_bridge_dep, which rbln-serve links).
 */
extern const struct rbln_serving_ops rbln_serving_bridge_ops;

#endif
