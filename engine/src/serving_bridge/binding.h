/* SPDX-License-Identifier: MIT */
/*
 * rbln_serving_bridge_ops: the engine runtime (rbln_runtime.h) behind
 * rbln-serve's interface (rbln_serving.h).
 *
 * One scheduler thread per model owns the engine: it is the only thread
 * that calls rbln_runtime_* and rbln_seq_*, because the runtime is used by
 * one thread at a time.  HTTP threads reach it through three doors, all
 * and none of which touches the engine: submit() appends to an inbox under
 * the model's mutex, cancel() raises a flag, stats() copies a snapshot
 * the scheduler publishes after every step.  Event callbacks run on the
 * scheduler thread with no lock held, so a callback may call release() and
 * an HTTP thread holding the serving layer's job lock may call cancel().
 *
 * A request lives in exactly one place at a time: the inbox (submitted,
 * not yet seen by the scheduler), the active list (in arrival order, with
 * an engine sequence the runtime's planner schedules: waiting or running),
 * or nowhere once its final event is delivered.  What runs when is the
 * planner's (rbln_runtime_plan()); this binding only sets its policy.
 */
#ifndef RBLN_SERVING_ENGINE_BINDING_H
#define RBLN_SERVING_ENGINE_BINDING_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_runtime.h"
#include "rbln_serving.h"

struct rbln_bridge_list {
	struct rbln_gen_handle *head, *tail;
	size_t n;
};

/* What a bad word is in the engine's terms (a copy of the client's). */
struct rbln_bridge_bad_word {
	int32_t *ids;
	size_t len;
};

struct rbln_gen_handle {
	struct rbln_serving_model *e;
	/* Set by submit(), read-only afterwards. */
	uint64_t arrival;		/* submission order (the seed of unseeded requests) */
	uint64_t id;
	int32_t *prompt;
	size_t n_prompt;
	struct rbln_sampling_params sp;	/* the runtime's part of the request's params */
	int32_t stop_ids[RBLN_SAMPLING_MAX_STOP_IDS];	/* sp.stop_token_ids */
	struct rbln_bridge_bad_word *bad;
	size_t n_bad;
	int32_t logprobs;		/* -1 none, else top-k alternatives wanted */
	int64_t deadline_ns;
	rbln_gen_event_fn cb;
	void *user;
	/* Raised by cancel(); read by the scheduler between steps. */
	atomic_bool cancelled;
	/* Set once the final event was delivered: cancel() is then a no-op. */
	atomic_bool done;

	/* Owned by the scheduler thread. */
	struct rbln_gen_handle *prev, *next;
	struct rbln_seq *seq;		/* created when taken from the inbox */
	size_t n_sent;			/* output ids delivered */
	int64_t t_scheduled_ns, t_first_ns;
	bool stop_asked;		/* the callback returned RBLN_GEN_STOP */
	/* Log-probabilities: the raw logits row the last token was sampled from. */
	float *lp_row;
	bool lp_valid;
	struct rbln_bridge_logprob_out *lp_out;	/* filled for the next event */
};

/* Log-probabilities of one event's ids (logits.c). */
struct rbln_bridge_logprob_out {
	float *logprobs;
	struct rbln_token_logprob *top;
	size_t n, cap;
};

/* The counters and gauges stats() reports, as of the last step. */
struct rbln_bridge_published {
	uint32_t num_running;
	uint32_t num_waiting;
	uint64_t kv_blocks_used;
	uint64_t prompt_tokens_total;
	uint64_t generation_tokens_total;
	uint64_t preemptions_total;
	uint64_t steps_total;
	uint64_t bucket_steps[RBLN_MAX_DECODER_BATCHES];
	uint64_t busy_ns_total;		/* wall time of steps: every device runs in each */
};

struct rbln_serving_model {
	char *name;
	struct rbln_runtime *engine;
	const struct rbln_compiled_config *cc;
	uint32_t batch;			/* max_num_seqs */
	uint32_t max_model_len;
	uint32_t max_waiting;
	uint32_t block_size;
	uint64_t kv_blocks_total;
	uint32_t vocab;
	bool has_seed;
	uint64_t seed;
	uint32_t n_devices;
	int32_t devices[RBLN_SERVING_MAX_DEVICES];
	bool log_steps;			/* RBLN_SERVE_LOG_STEPS: one line per step on stderr */

	pthread_t thread;
	pthread_mutex_t mu;		/* guards everything below */
	pthread_cond_t wake;
	struct rbln_bridge_list inbox;
	size_t n_waiting_seen;		/* active requests not running, at the last look */
	size_t free_slots_seen;		/* max_num_seqs - running.n, likewise */
	bool stopping;
	uint64_t next_arrival;
	struct rbln_bridge_published pub;
	/* Device utilization: busy fraction over the last completed window. */
	int64_t util_win_start_ns;
	uint64_t util_win_busy_ns;
	double utilization;

	/* Scheduler thread only. */
	struct rbln_bridge_list active;		/* waiting or running, in arrival order */
	struct rbln_bridge_published acc;	/* accumulating; copied to pub after each step */
	struct rbln_step_item *items;	/* [batch] the step being planned */
	struct rbln_gen_handle **item_h;	/* [batch] the request of each item */
};

/* lists.c */
void rbln_bridge_list_push_back(struct rbln_bridge_list *l, struct rbln_gen_handle *h);
void rbln_bridge_list_remove(struct rbln_bridge_list *l, struct rbln_gen_handle *h);
/* Moves every entry of from to the back of to. */
void rbln_bridge_list_splice(struct rbln_bridge_list *to, struct rbln_bridge_list *from);

/* request.c: the table's submit(), cancel() and release(), and the request's memory. */
int rbln_bridge_submit(struct rbln_serving_model *e, const struct rbln_gen_request *req,
	      rbln_gen_event_fn cb, void *user, struct rbln_gen_handle **out,
	      struct rbln_error *err);
void rbln_bridge_cancel(struct rbln_gen_handle *h);
void rbln_bridge_release(struct rbln_gen_handle *h);
void rbln_bridge_request_free(struct rbln_gen_handle *h);

/* events.c: deliveries, on the scheduler thread, with no lock held. */
/* New ids of a running request; returns true if the callback asked to stop. */
bool rbln_bridge_deliver_tokens(struct rbln_serving_model *e, struct rbln_gen_handle *h,
		       int64_t now_ns);
/*
 * Ends a request: takes it off the active list, gives its sequence back to
 * the engine and delivers the final event.  After this the request belongs
 * to the serving layer (it may already be released).
 */
void rbln_bridge_finish(struct rbln_serving_model *e, struct rbln_gen_handle *h,
	       enum rbln_finish_reason reason, int error_code, const char *msg,
	       int64_t now_ns);

/* logits.c: bad words and log-probabilities through the runtime's logits hook. */
int rbln_bridge_logits_attach(struct rbln_serving_model *e, struct rbln_gen_handle *h);
/* Log-probabilities of the ids h got in this step (called before delivery). */
void rbln_bridge_logprobs_take(struct rbln_serving_model *e, struct rbln_gen_handle *h,
		      const int32_t *ids, size_t n);

/* stats.c */
void rbln_bridge_publish(struct rbln_serving_model *e);
/* Active requests the planner admitted (their sequences hold KV blocks). */
uint32_t rbln_bridge_num_running(const struct rbln_serving_model *e);
void rbln_bridge_stats(struct rbln_serving_model *e, struct rbln_serving_stats *st);
/* Maps tensor-parallel ranks to device indices (the devices option or RBLN_DEVICES). */
void rbln_bridge_devices_map(struct rbln_serving_model *e, const char *devices, uint32_t n_ranks);

/* scheduler.c */
void *rbln_bridge_scheduler_main(void *arg);
/* The planner's preemption callback: counts and logs (user is the model). */
void rbln_bridge_preempted(void *user, struct rbln_seq *s);

int64_t rbln_bridge_now_ns(void);

#endif
