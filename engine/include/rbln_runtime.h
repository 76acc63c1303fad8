/* SPDX-License-Identifier: MIT */
/*
 * The runtime: a compiled model on its devices, and sequences that
 * advance by steps.
 *
 * rbln_runtime_open() loads a compiled directory (or compiles a Hugging
 * Face directory first): one device per tensor-parallel rank, each with
 * its weights, KV cache and programs uploaded once.  A step runs one
 * program on every device, one submission per device: the items of a
 * step are (sequence, n_tokens) pairs, each computing the sequence's next
 * n_tokens known tokens (a prefill chunk, or the one token of a decode).
 * Several prefill chunks and decodes share a step.  A sequence whose known
 * tokens are all computed after the step samples its next token.
 *
 * The planner (rbln_runtime_plan) decides what goes into each step:
 * continuous batching with chunked prefill, decodes first, preemption by
 * recompute when the KV cache is full.  rbln-generate, rbln-bench and
 * rbln-serve all run it; a policy (struct rbln_plan_policy) says how many
 * sequences run at once, how many tokens a step takes, whether prefill
 * waits for company and in which order sequences are admitted.
 * rbln_runtime_step() plans and runs one step.
 *
 * Threads: a runtime and its sequences are used by one thread at a time.
 */
#ifndef RBLN_RUNTIME_H
#define RBLN_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_compile.h"
#include "rbln_error.h"
#include "rbln_sample.h"

struct rbln_runtime;
struct rbln_seq;

struct rbln_runtime_options {
	/* Devices by visible index, "0,1,2,3"; NULL: $RBLN_DEVICES, else all. */
	const char *devices;
	/* For a Hugging Face directory: how to compile it (NULL: defaults). */
	const struct rbln_compile_options *compile;
	/* Where to compile it; NULL: a temporary directory removed at close. */
	const char *compile_dir;
};

int rbln_runtime_open(const char *model_dir, const struct rbln_runtime_options *opt,
		     struct rbln_runtime **out, struct rbln_error *err);
/* Releases every sequence still held, then the devices. */
void rbln_runtime_close(struct rbln_runtime *e);

struct rbln_runtime_info {
	const struct rbln_compiled_config *config;
	const char *dir;		/* the compiled directory */
	const char *backend;		/* "emul" or "kernel" */
	uint32_t n_devices;
	int64_t eos_ids[RBLN_MAX_EOS_IDS];	/* generation_config.json, else config.json */
	size_t n_eos_ids;
	uint32_t kv_blocks_total;
	uint32_t kv_blocks_free;
	uint32_t n_waiting;		/* sequences with tokens to compute */
	uint32_t n_running;		/* sequences holding KV blocks (admitted) */
	uint64_t steps;			/* programs run */
	uint64_t decode_steps[RBLN_MAX_DECODER_BATCHES];	/* per decoder bucket */
};

void rbln_runtime_get_info(const struct rbln_runtime *e, struct rbln_runtime_info *info);

/* ------------------------------------------------------------------ */
/* Sequences                                                           */

#define RBLN_SEQ_KEEP_PROMPT_LOGITS 1u	/* keep the logits after the last prompt token */

enum rbln_seq_end {
	RBLN_SEQ_RUNNING = 0,		/* not finished */
	RBLN_SEQ_END_STOP,		/* EOS or a stop_token_ids id (see stop_token) */
	RBLN_SEQ_END_LENGTH,		/* max_tokens, or max_seq_len reached */
	RBLN_SEQ_END_ABORT,		/* rbln_seq_abort() */
};

/*
 * Adds a sequence (prompt of 1 .. max_seq_len - 1 ids, each below the
 * vocabulary size).  It starts computing at the next step.  params (NULL:
 * rbln_sampling_params_init()'s) are validated and copied; the runtime
 * applies the sampling numbers, max_tokens, min_tokens, ignore_eos and
 * stop_token_ids.  Bad words, logprobs and stop strings are the caller's
 * (a logits hook, its text stream), so params with them are refused.
 */
int rbln_runtime_add(struct rbln_runtime *e, const int32_t *prompt, size_t n_prompt,
		    const struct rbln_sampling_params *params, unsigned flags,
		    struct rbln_seq **out, struct rbln_error *err);
/* Ends a sequence now (a stop string matched, a client left); frees its KV blocks. */
void rbln_seq_abort(struct rbln_seq *s);
/* Frees a sequence (finished or not). */
void rbln_seq_release(struct rbln_seq *s);
/* Drops a sequence's KV blocks; it recomputes prompt and output when next scheduled. */
void rbln_seq_preempt(struct rbln_seq *s);

enum rbln_seq_end rbln_seq_end(const struct rbln_seq *s);
/* The EOS or stop id that ended it (not in the output), or -1. */
int32_t rbln_seq_stop_token(const struct rbln_seq *s);
/* Generated ids so far (the stop token excluded). */
const int32_t *rbln_seq_output(const struct rbln_seq *s, size_t *n);
size_t rbln_seq_prompt_len(const struct rbln_seq *s);
/* Known tokens not yet computed (0 when waiting for nothing). */
size_t rbln_seq_pending(const struct rbln_seq *s);
/* Logits after the last prompt token (RBLN_SEQ_KEEP_PROMPT_LOGITS), or NULL. */
const float *rbln_seq_prompt_logits(const struct rbln_seq *s, size_t *vocab);
uint32_t rbln_seq_preemptions(const struct rbln_seq *s);

/*
 * A sequence's logits hook (a logits processor, as vLLM's): called inside
 * rbln_runtime_run(), on its thread, with the full row of logits the
 * sequence's next token is about to be sampled from, before penalties,
 * min_tokens masks and sampling.  It may change the row (set a logit to
 * -INFINITY to forbid a token) and may read the sequence.  A sequence with
 * a hook is sampled from the gathered logits, never from the device's
 * ARGMAX alone.  fn NULL removes the hook.
 */
typedef void (*rbln_seq_logits_fn)(void *user, const struct rbln_seq *s, float *logits,
				   size_t vocab);
void rbln_seq_set_logits_fn(struct rbln_seq *s, rbln_seq_logits_fn fn, void *user);

/* The caller's pointer of a sequence (e.g. its request); NULL until set. */
void rbln_seq_set_user(struct rbln_seq *s, void *user);
void *rbln_seq_user(const struct rbln_seq *s);

/* ------------------------------------------------------------------ */
/* Steps                                                               */

struct rbln_step_item {
	struct rbln_seq *seq;
	uint32_t n_tokens;		/* 1 .. rbln_seq_pending() */
};

struct rbln_step_stats {
	uint32_t tokens;		/* tokens computed */
	uint32_t prompt_tokens;		/* of them, not decodes: prompt chunks, recomputes */
	uint32_t items;
	uint32_t program_tokens;	/* T of the program run */
	bool prefill;			/* the prefill program (else a decoder bucket) */
	uint32_t sampled;		/* sequences that got a token */
	uint64_t ns;			/* wall time of the step */
};

/*
 * Runs one step of the given items (distinct, unfinished sequences): the
 * smallest decoder bucket when every item is one token and they fit,
 * else the prefill program (the items' tokens must fit its chunk).  KV
 * blocks are taken as needed: -ENOSPC (and nothing run) when the cache is
 * full.
 */
int rbln_runtime_run(struct rbln_runtime *e, const struct rbln_step_item *items, size_t n,
		    struct rbln_step_stats *st, struct rbln_error *err);

/* ------------------------------------------------------------------ */
/* The planner                                                         */

enum rbln_admission {
	/* Arrival order; nobody passes a waiting sequence that does not fit yet. */
	RBLN_ADMIT_FCFS = 0,
	/* Arrival order; one that does not fit yet is passed over for later ones. */
	RBLN_ADMIT_FIRST_FIT,
};

/*
 * How the planner fills a step.  Zero fields take the defaults, which are
 * what rbln_runtime_open() sets: every compiled batch slot, a full prefill
 * chunk, no deferral, FCFS.
 */
struct rbln_plan_policy {
	/* Sequences holding KV blocks at once: 1 .. batch_size (0: batch_size). */
	uint32_t max_seqs;
	/*
	 * Tokens of a step: decodes take one each, prefill chunks the rest;
	 * 1 .. prefill_chunk_size (0: prefill_chunk_size).
	 */
	uint32_t step_tokens;
	/*
	 * While sequences decode, hold back prefill work smaller than the
	 * step's budget for at most one prefill step's measured time, so the
	 * prompts that arrive meanwhile share one prefill program (it costs its
	 * whole chunk however few tokens it carries).  For servers.
	 */
	bool defer_prefill;
	enum rbln_admission admission;
	/* Called for each sequence the planner preempts (may be NULL). */
	void (*preempted)(void *user, struct rbln_seq *s);
	void *user;
};

/* Checks and sets the policy; errors name the field and its bound. */
int rbln_runtime_set_policy(struct rbln_runtime *e, const struct rbln_plan_policy *policy,
			   struct rbln_error *err);

/*
 * Plans the next step over the engine's sequences (in the order they were
 * added): fills items (room for the policy's max_seqs) and returns how many;
 * 0 when no sequence has work.  Takes the KV blocks the items need and
 * preempts sequences when the cache is full.  Run the items with
 * rbln_runtime_run() before planning again.
 */
size_t rbln_runtime_plan(struct rbln_runtime *e, struct rbln_step_item *items);

/*
 * Plans and runs one step.  Returns the number of items run, 0 when no
 * sequence has work, or a negative error.
 */
int rbln_runtime_step(struct rbln_runtime *e, struct rbln_step_stats *st, struct rbln_error *err);

#endif
