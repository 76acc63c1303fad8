// SPDX-License-Identifier: MIT
/*
 * Planning one step (iteration-level continuous batching, as vLLM with
 * chunked prefill):
 *
 *  1. every running sequence that decodes gets its one token, oldest
 *     first; when a decode needs a KV block and none is free, the newest
 *     running sequence is preempted (its blocks freed, its prompt and
 *     output recomputed when it runs again), the decode itself when it is
 *     the newest;
 *  2. the rest of the step's token budget, min(prefill_chunk_size,
 *     max_num_batched_tokens), goes to prefill chunks: first sequences
 *     whose prefill is under way, then new ones admitted from the waiting
 *     list in arrival order while fewer than max_num_seqs run.  Several
 *     prompts share a step; a long one is cut into chunks over several
 *     steps while the others keep decoding.
 *
 * The runtime runs a step with only decodes in the smallest compiled
 * decoder bucket that holds them and a step with prefill tokens in the
 * prefill program; the planner only decides what is in the step.
 *
 * The prefill program has the cost of its whole chunk however few tokens
 * it carries (its rows are padded), many times a decode step's.  Running
 * it for every new prompt while others decode would make every decode wait
 * that long.  So while sequences decode, prefill work smaller than a full
 * chunk is held back, for at most as long as a prefill step takes
 * (measured), and prompts arriving meanwhile share the one step: decodes
 * keep their pace and the prefill cost is shared.  A full chunk of prefill
 * work, or no decode to protect, runs at once.
 *
 * Admission is strictly first come first served: when the oldest waiting
 * request does not fit (its known tokens need more KV blocks than are
 * free), nobody behind it is admitted.  A step that had to preempt admits
 * nobody, since the preempted would just come back.
 */
#include <errno.h>
#include <stdio.h>

#include "serving_engine/binding.h"

size_t se_seq_computed(const struct rbln_seq *s)
{
	size_t n_out;

	rbln_seq_output(s, &n_out);
	return rbln_seq_prompt_len(s) + n_out - rbln_seq_pending(s);
}

static uint64_t blocks_for(const struct rbln_serving_engine *e, size_t tokens)
{
	return (tokens + e->block_size - 1) / e->block_size;
}

/* Blocks a running sequence holds: the runtime takes exactly what its cached tokens need. */
static uint64_t held(const struct rbln_serving_engine *e, const struct rbln_seq *s)
{
	return blocks_for(e, se_seq_computed(s));
}

static bool is_decode(const struct rbln_seq *s)
{
	return rbln_seq_pending(s) == 1 && se_seq_computed(s) > 0;
}

/* Moves a running request back to the waiting list, freeing its blocks. */
static void preempt(struct rbln_serving_engine *e, struct rbln_gen_handle *h)
{
	rbln_seq_preempt(h->seq);
	se_list_remove(&e->running, h);
	se_list_insert_sorted(&e->waiting, h);
	e->acc.preemptions_total++;
	if (e->log_steps)
		fprintf(stderr, "rbln-serve: %s: preempted request %llu (recompute)\n", e->name,
			(unsigned long long)h->id);
}

/*
 * Frees `need` blocks for decode h by preempting the newest running
 * requests (all newer than h: what was planned so far is older).  Returns
 * false when h itself had to go.
 */
static bool make_room(struct rbln_serving_engine *e, struct rbln_gen_handle *h, uint64_t need,
		      uint64_t *free_blocks, unsigned *preempted)
{
	while (need > *free_blocks) {
		struct rbln_gen_handle *v = e->running.tail;

		*free_blocks += held(e, v->seq);
		preempt(e, v);
		(*preempted)++;
		if (v == h)
			return false;
	}
	return true;
}

static void add_item(struct rbln_serving_engine *e, size_t *n, struct rbln_gen_handle *h,
		     size_t tokens)
{
	e->items[*n] = (struct rbln_step_item){ .seq = h->seq, .n_tokens = (uint32_t)tokens };
	e->item_h[*n] = h;
	(*n)++;
}

/* Creates the engine sequence of a request admitted for the first time. */
static int make_seq(struct rbln_serving_engine *e, struct rbln_gen_handle *h, int64_t now)
{
	struct rbln_error err = { 0 };
	int rc = rbln_engine_add(e->engine, h->prompt, h->n_prompt, &h->sp, 0, &h->seq, &err);

	if (!rc)
		rc = se_logits_attach(e, h);
	if (rc) {
		se_finish(e, &e->waiting, h, RBLN_FINISH_ERROR, rc,
			  err.msg[0] ? err.msg : "out of memory", now);
		return rc;
	}
	return 0;
}

/* Prefill tokens the next step could take: prefills under way and admissions. */
static size_t prefill_work(const struct rbln_serving_engine *e)
{
	const struct rbln_gen_handle *h;
	size_t tokens = 0, slots = e->batch > e->running.n ? e->batch - e->running.n : 0;

	for (h = e->running.head; h; h = h->next)
		if (!is_decode(h->seq))
			tokens += rbln_seq_pending(h->seq);
	for (h = e->waiting.head; h && slots; h = h->next, slots--)
		tokens += h->seq ? rbln_seq_pending(h->seq) : h->n_prompt;
	return tokens;
}

/* Whether prefill work should wait for more to join it (see the top of the file). */
static bool defer_prefill(struct rbln_serving_engine *e, size_t budget_left, int64_t now)
{
	size_t work = prefill_work(e);

	if (!work)
		e->defer_since_ns = 0;	/* what was held back is gone (cancelled) */
	if (!work || work >= budget_left)
		return false;
	if (!e->defer_since_ns)
		e->defer_since_ns = now;
	return now - e->defer_since_ns < e->prefill_ns_avg;
}

static size_t plan_once(struct rbln_serving_engine *e, int64_t now, uint64_t free_blocks)
{
	struct rbln_gen_handle *h, *next;
	size_t n = 0, tokens = 0;
	unsigned preempted = 0;

	for (h = e->running.head; h; h = next) {
		uint64_t need;

		if (!is_decode(h->seq)) {
			next = h->next;
			continue;
		}
		need = blocks_for(e, se_seq_computed(h->seq) + 1) - held(e, h->seq);
		if (!make_room(e, h, need, &free_blocks, &preempted))
			break;	/* h was the newest: everyone after it went too */
		next = h->next;
		free_blocks -= need;
		add_item(e, &n, h, 1);
		tokens++;
	}
	if (preempted && n)
		return n;
	if (n && defer_prefill(e, e->step_tokens - tokens, now))
		return n;
	for (h = e->running.head; h && tokens < e->step_tokens; h = h->next) {
		size_t pending = rbln_seq_pending(h->seq), computed, room, take;
		uint64_t have;

		if (is_decode(h->seq))
			continue;
		computed = se_seq_computed(h->seq);
		have = held(e, h->seq);
		room = (size_t)((have + free_blocks) * e->block_size) - computed;
		take = pending < e->step_tokens - tokens ? pending : e->step_tokens - tokens;
		if (take > room)
			take = room;
		if (!take)
			continue;
		free_blocks -= blocks_for(e, computed + take) - have;
		add_item(e, &n, h, take);
		tokens += take;
	}
	while ((h = e->waiting.head) && e->running.n < e->batch && tokens < e->step_tokens) {
		size_t pending, take;

		if (atomic_load(&h->cancelled))
			break;	/* the reaper ends it before the next plan */
		if (!h->seq && make_seq(e, h, now))
			continue;
		pending = rbln_seq_pending(h->seq);
		if (blocks_for(e, pending) > free_blocks) {
			/* Nothing runs, so nothing will free blocks for it: it can never run. */
			if (!e->running.n && free_blocks == e->kv_blocks_total) {
				se_finish(e, &e->waiting, h, RBLN_FINISH_ERROR, -ENOSPC,
					  "the KV cache cannot hold the sequence", now);
				continue;
			}
			break;
		}
		take = pending < e->step_tokens - tokens ? pending : e->step_tokens - tokens;
		se_list_remove(&e->waiting, h);
		se_list_insert_sorted(&e->running, h);
		if (!h->t_scheduled_ns)
			h->t_scheduled_ns = now;
		free_blocks -= blocks_for(e, take);
		add_item(e, &n, h, take);
		tokens += take;
	}
	return n;
}

size_t se_plan(struct rbln_serving_engine *e, int64_t now)
{
	struct rbln_engine_info info;
	size_t n;

	for (;;) {
		rbln_engine_get_info(e->engine, &info);
		n = plan_once(e, now, info.kv_blocks_free);
		if (n || e->running.n < 2)
			return n;
		/*
		 * Running prefills that all wait for blocks held by each other: the
		 * newest gives its blocks back so the older ones can go on.
		 */
		preempt(e, e->running.tail);
	}
}
