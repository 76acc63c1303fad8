// SPDX-License-Identifier: MIT
/*
 * The planner: what goes into the next step.  Iteration-level continuous
 * batching with chunked prefill, as vLLM's scheduler; one planner for
 * rbln-generate, rbln-bench and rbln-serve, which differ only in their
 * policy (struct rbln_plan_policy).
 *
 * The engine's sequences are in the order they were added (arrival
 * order).  A sequence is running while it holds KV blocks, at most
 * max_seqs of them; one with tokens to compute and no blocks is waiting
 * (new, or preempted).  Each step:
 *
 *  1. every running sequence that decodes gets its one token, oldest
 *     first.  When its KV block cannot be had, the newest running
 *     sequence is preempted (its blocks freed; it recomputes prompt and
 *     output when it runs again, as vLLM's recompute preemption), the
 *     decode itself when it is the newest;
 *  2. a step that had to preempt admits nobody (the preempted would come
 *     right back), and with defer_prefill a small amount of prefill work
 *     may wait for more to share its program (below);
 *  3. the rest of step_tokens goes to prefill chunks: first running
 *     sequences whose prefill is under way, as far as the KV cache holds
 *     them, then waiting ones in arrival order while fewer than max_seqs
 *     run.  A waiting sequence is admitted when all its known tokens fit
 *     the free blocks; under RBLN_ADMIT_FCFS nobody passes one that does
 *     not, under RBLN_ADMIT_FIRST_FIT later ones may.  Several prompts
 *     share a step; a long one is cut into chunks over several steps.
 *
 * The KV pool decides what fits (rbln_kv_can_grow, rbln_kv_room) and the planner
 * takes the blocks of what it plans (rbln_kv_grow, like vLLM's
 * allocate_slots), so nothing here turns tokens into blocks.
 *
 * When nothing can run although sequences have work (running prefills
 * waiting for blocks held by each other), the newest running sequence
 * other than the oldest with work gives its blocks back, until one runs.
 * The compile rules make the cache hold one sequence of max_seq_len, so
 * the oldest always can once it runs alone.
 *
 * Deferral: the prefill program has the cost of its whole chunk however
 * few tokens it carries (its rows are padded), many times a decode step's.
 * Running it for every new prompt while others decode would make every
 * decode wait that long.  So while sequences decode, prefill work smaller
 * than the step's budget is held back for at most as long as a prefill
 * step takes (measured), and prompts arriving meanwhile share the one
 * step.  A full step of prefill work, or no decode to protect, runs at
 * once.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "runtime/runtime_internal.h"

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool is_running(const struct rbln_seq *s)
{
	return s->n_blocks > 0;
}

static bool is_decode(const struct rbln_seq *s)
{
	return rbln_seq_pending(s) == 1 && s->n_computed > 0;
}

static void preempt(struct rbln_runtime *e, struct rbln_seq *s)
{
	const struct rbln_plan_policy *pol = &e->planner.policy;

	rbln_seq_preempt(s);
	if (pol->preempted)
		pol->preempted(pol->user, s);
}

/* The newest running sequence other than keep; NULL if none. */
static struct rbln_seq *newest_running(struct rbln_runtime *e, const struct rbln_seq *keep)
{
	struct rbln_seq *s;

	for (s = e->tail; s; s = s->prev)
		if (s != keep && is_running(s))
			return s;
	return NULL;
}

/*
 * Takes the block decode s needs, preempting the newest running sequences
 * (all newer than s: what was planned so far is older) until it can.
 * Returns false when s itself had to go.
 */
static bool make_room(struct rbln_runtime *e, struct rbln_seq *s, uint32_t *running,
		      uint32_t *preemptions)
{
	struct rbln_seq *v;

	while (!rbln_kv_grow(s, 1)) {
		v = newest_running(e, NULL);
		preempt(e, v);
		(*running)--;
		(*preemptions)++;
		if (v == s)
			return false;
	}
	return true;
}

/* Prefill tokens the next step could take: prefills under way and admissions. */
static size_t prefill_work(const struct rbln_runtime *e, uint32_t running)
{
	uint32_t max_seqs = e->planner.policy.max_seqs;
	uint32_t slots = max_seqs > running ? max_seqs - running : 0;
	const struct rbln_seq *s;
	size_t tokens = 0;

	for (s = e->head; s; s = s->next) {
		if (is_decode(s))
			continue;
		if (is_running(s)) {
			tokens += rbln_seq_pending(s);
		} else if (slots && rbln_seq_pending(s)) {
			tokens += rbln_seq_pending(s);
			slots--;
		}
	}
	return tokens;
}

/* Whether prefill work should wait for more to join it (see the top of the file). */
static bool defer_prefill(struct rbln_runtime *e, uint32_t budget_left, uint32_t running)
{
	struct planner *p = &e->planner;
	size_t work = prefill_work(e, running);
	int64_t now = mono_ns();

	if (!work)
		p->defer_since_ns = 0;	/* what was held back is gone (aborted) */
	if (!work || work >= budget_left)
		return false;
	if (!p->defer_since_ns)
		p->defer_since_ns = now;
	return now - p->defer_since_ns < p->prefill_ns_avg;
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

static size_t plan_once(struct rbln_runtime *e, struct rbln_step_item *items)
{
	const struct rbln_plan_policy *pol = &e->planner.policy;
	uint32_t running = 0, preemptions = 0, tokens = 0;
	struct rbln_seq *s;
	size_t n = 0, take;

	for (s = e->head; s; s = s->next)
		running += is_running(s);
	/* Decodes first: they wait for nothing but their one token. */
	for (s = e->head; s && n < pol->max_seqs; s = s->next) {
		if (!is_decode(s))
			continue;
		if (!make_room(e, s, &running, &preemptions))
			break;	/* s was the newest running: everyone after it went too */
		items[n++] = (struct rbln_step_item){ .seq = s, .n_tokens = 1 };
		tokens++;
	}
	if (preemptions && n)
		return n;
	if (n && pol->defer_prefill && defer_prefill(e, pol->step_tokens - tokens, running))
		return n;
	/* Prefills under way, as far as the cache holds them. */
	for (s = e->head; s && n < pol->max_seqs && tokens < pol->step_tokens; s = s->next) {
		if (!is_running(s) || is_decode(s) || !rbln_seq_pending(s))
			continue;
		take = min_size(min_size(rbln_seq_pending(s), pol->step_tokens - tokens), rbln_kv_room(s));
		if (!take || !rbln_kv_grow(s, take))
			continue;
		items[n++] = (struct rbln_step_item){ .seq = s, .n_tokens = (uint32_t)take };
		tokens += (uint32_t)take;
	}
	/* Admissions, in arrival order. */
	for (s = e->head; s && running < pol->max_seqs && n < pol->max_seqs &&
	     tokens < pol->step_tokens; s = s->next) {
		size_t pending = rbln_seq_pending(s);

		if (is_running(s) || !pending)
			continue;
		if (!rbln_kv_can_grow(s, pending)) {
			if (pol->admission == RBLN_ADMIT_FCFS)
				break;
			continue;
		}
		take = min_size(pending, pol->step_tokens - tokens);
		rbln_kv_grow(s, take);
		running++;
		items[n++] = (struct rbln_step_item){ .seq = s, .n_tokens = (uint32_t)take };
		tokens += (uint32_t)take;
	}
	return n;
}

size_t rbln_runtime_plan(struct rbln_runtime *e, struct rbln_step_item *items)
{
	struct rbln_seq *first, *victim;
	size_t n;

	for (;;) {
		n = plan_once(e, items);
		if (n)
			return n;
		for (first = e->head; first && !rbln_seq_pending(first); first = first->next)
			;
		victim = first ? newest_running(e, first) : NULL;
		if (!victim)
			return 0;
		/* Nothing fits: free the newest running sequence's blocks, keep the oldest. */
		preempt(e, victim);
	}
}

int rbln_runtime_step(struct rbln_runtime *e, struct rbln_step_stats *st, struct rbln_error *err)
{
	struct rbln_step_item *items = calloc(e->cc.batch_size, sizeof(*items));
	size_t n;
	int rc;

	if (!items)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	n = rbln_runtime_plan(e, items);
	rc = n ? rbln_runtime_run(e, items, n, st, err) : 0;
	free(items);
	return rc < 0 ? rc : (int)n;
}

void rbln_planner_init(struct rbln_runtime *e)
{
	struct planner *p = &e->planner;

	*p = (struct planner){ 0 };
	p->policy.max_seqs = e->cc.batch_size;
	p->policy.step_tokens = e->progs[0].tokens;
	p->policy.admission = RBLN_ADMIT_FCFS;
}

int rbln_runtime_set_policy(struct rbln_runtime *e, const struct rbln_plan_policy *policy,
			   struct rbln_error *err)
{
	struct rbln_plan_policy p = *policy;
	uint32_t chunk = e->progs[0].tokens;

	if (!p.max_seqs)
		p.max_seqs = e->cc.batch_size;
	if (!p.step_tokens)
		p.step_tokens = chunk;
	if (p.max_seqs > e->cc.batch_size)
		return rbln_error_set(err, -EINVAL, "planner policy: max_seqs %u is above the "
				      "compiled batch_size %u", p.max_seqs, e->cc.batch_size);
	if (p.step_tokens > chunk)
		return rbln_error_set(err, -EINVAL, "planner policy: step_tokens %u is above the "
				      "compiled prefill_chunk_size %u", p.step_tokens, chunk);
	if (p.admission != RBLN_ADMIT_FCFS && p.admission != RBLN_ADMIT_FIRST_FIT)
		return rbln_error_set(err, -EINVAL, "planner policy: admission %d is neither "
				      "RBLN_ADMIT_FCFS nor RBLN_ADMIT_FIRST_FIT", (int)p.admission);
	e->planner.policy = p;
	return 0;
}

void rbln_planner_step_done(struct rbln_runtime *e, bool prefill, uint64_t ns)
{
	struct planner *p = &e->planner;

	if (!prefill)
		return;
	/* An average over about the last eight prefill steps. */
	p->prefill_ns_avg = p->prefill_ns_avg ? p->prefill_ns_avg +
			    ((int64_t)ns - p->prefill_ns_avg) / 8 : (int64_t)ns;
	p->defer_since_ns = 0;
}
