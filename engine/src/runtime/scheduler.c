// SPDX-License-Identifier: MIT
/*
 * The built-in scheduler (rbln_engine_plan/step).  Continuous batching in
 * the manner of vLLM: at most batch_size sequences hold KV blocks (the
 * running set, admitted first come first served); every step gives each
 * running decode its token first, then fills the rest of the prefill
 * program's chunk with prefill tokens of running and newly admitted
 * sequences, several at once.  A step with only decodes runs in the
 * smallest decoder bucket that holds them.  When a decode needs a block
 * and none is free, the most recently admitted sequence is preempted (the
 * decode itself when it is the newest): its blocks are freed and it
 * recomputes prompt and output when it is scheduled again, as vLLM's
 * recompute preemption.
 */
#include <errno.h>
#include <stdlib.h>

#include "runtime/engine_internal.h"

static bool is_decode(const struct rbln_seq *s)
{
	return rbln_seq_pending(s) == 1 && s->n_computed > 0;
}

/* Blocks a sequence still needs to cache `extra` more tokens. */
static uint32_t blocks_needed(const struct rbln_engine *e, const struct rbln_seq *s,
			      size_t extra)
{
	uint32_t want = seq_blocks_for(e, s->n_computed + extra);

	return want > s->n_blocks ? want - s->n_blocks : 0;
}

/* The newest running sequence other than keep; NULL if none. */
static struct rbln_seq *newest_running(struct rbln_engine *e, const struct rbln_seq *keep)
{
	struct rbln_seq *s;

	for (s = e->tail; s; s = s->prev)
		if (s != keep && s->n_blocks && s->end == RBLN_SEQ_RUNNING)
			return s;
	return NULL;
}

/*
 * Frees blocks for decode s by preempting the newest running sequences
 * admitted after it (the items planned so far all come before it), or s
 * itself when it is the newest.  Returns whether s can decode now.
 */
static bool make_room(struct rbln_engine *e, struct rbln_seq *s, uint32_t need,
		      uint32_t *free_blocks, uint32_t *preempted)
{
	struct rbln_seq *v;

	while (need > *free_blocks) {
		for (v = e->tail; v != s; v = v->prev)
			if (v->n_blocks && v->end == RBLN_SEQ_RUNNING)
				break;
		*free_blocks += v->n_blocks;
		rbln_seq_preempt(v);
		(*preempted)++;
		if (v == s)
			return false;
	}
	return true;
}

static size_t plan_once(struct rbln_engine *e, struct rbln_step_item *items, bool *stuck)
{
	uint32_t B = e->cc.batch_size, chunk = e->progs[0].tokens;
	uint32_t bs = e->cc.kvcache_block_size, running = 0, free_blocks = e->kv.n_free;
	uint32_t tokens = 0, need, preempted = 0;
	bool prefill = false;
	struct rbln_seq *s;
	size_t n = 0;

	*stuck = false;
	for (s = e->head; s; s = s->next) {
		if (s->n_blocks)
			running++;
		if (rbln_seq_pending(s) && !is_decode(s))
			prefill = true;
	}
	/* Decodes first: they wait for nothing but their one token. */
	for (s = e->head; s && n < B; s = s->next) {
		if (!is_decode(s))
			continue;
		need = blocks_needed(e, s, 1);
		if (!make_room(e, s, need, &free_blocks, &preempted))
			continue;
		free_blocks -= need;
		items[n++] = (struct rbln_step_item){ .seq = s, .n_tokens = 1 };
		tokens++;
	}
	/*
	 * Under memory pressure, admit nobody new this step (the preempted would
	 * come right back), unless nothing else runs.
	 */
	if ((!prefill && !preempted) || (preempted && n))
		return n;
	for (s = e->head; s && n < B && tokens < chunk; s = s->next) {
		size_t pending = rbln_seq_pending(s), room, take;

		if (!pending || is_decode(s))
			continue;
		if (!s->n_blocks) {
			if (running >= B)
				continue;	/* the running set is full */
			running++;
		}
		/* Tokens the free blocks (and the sequence's last one) can hold. */
		room = ((size_t)s->n_blocks + free_blocks) * bs - s->n_computed;
		take = pending < chunk - tokens ? pending : chunk - tokens;
		if (take > room)
			take = room;
		if (!take)
			continue;
		free_blocks -= blocks_needed(e, s, take);
		items[n++] = (struct rbln_step_item){ .seq = s, .n_tokens = (uint32_t)take };
		tokens += (uint32_t)take;
	}
	*stuck = n == 0;
	return n;
}

size_t rbln_engine_plan(struct rbln_engine *e, struct rbln_step_item *items)
{
	struct rbln_seq *s, *victim;
	bool stuck;
	size_t n;

	for (;;) {
		n = plan_once(e, items, &stuck);
		if (n || !stuck)
			return n;
		/* Nothing fits: free the newest running sequence's blocks, keep the oldest. */
		for (s = e->head; s && !rbln_seq_pending(s); s = s->next)
			;
		victim = newest_running(e, s);
		if (!victim)
			return 0;
		rbln_seq_preempt(victim);
	}
}

int rbln_engine_step(struct rbln_engine *e, struct rbln_step_stats *st, struct rbln_error *err)
{
	struct rbln_step_item *items = calloc(e->cc.batch_size, sizeof(*items));
	size_t n;
	int rc;

	if (!items)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	n = rbln_engine_plan(e, items);
	rc = n ? rbln_engine_run(e, items, n, st, err) : 0;
	free(items);
	return rc < 0 ? rc : (int)n;
}
