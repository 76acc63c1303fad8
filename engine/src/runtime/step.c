// SPDX-License-Identifier: MIT
/*
 * One step (see rbln_runtime_run() in rbln_runtime.h): pick the program,
 * take KV blocks, write the argument block, submit one program per
 * device, wait, and sample from the results.
 *
 * Greedy sequences read only each rank's ARGMAX (a value and an id per
 * sequence); the logits of a sequence are gathered from every rank's
 * vocabulary shard only when its sampler needs them.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/runtime_internal.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int check_items(struct rbln_runtime *e, const struct rbln_step_item *items, size_t n,
		       uint32_t *total, struct rbln_error *err)
{
	size_t i, j;

	if (!n || n > e->cc.batch_size)
		return rbln_error_set(err, -EINVAL, "a step holds 1 to %u sequences (batch_size), "
				      "got %zu", e->cc.batch_size, n);
	*total = 0;
	for (i = 0; i < n; i++) {
		const struct rbln_seq *s = items[i].seq;

		if (!s || s->e != e)
			return rbln_error_set(err, -EINVAL, "step item %zu: not a sequence of this "
					      "engine", i);
		if (!items[i].n_tokens || items[i].n_tokens > rbln_seq_pending(s))
			return rbln_error_set(err, -EINVAL, "step item %zu: %u tokens, the sequence "
					      "has %zu to compute", i, items[i].n_tokens,
					      rbln_seq_pending(s));
		for (j = 0; j < i; j++)
			if (items[j].seq == s)
				return rbln_error_set(err, -EINVAL, "step items %zu and %zu are the "
						      "same sequence", j, i);
		*total += items[i].n_tokens;
	}
	return 0;
}

/* The smallest decoder bucket holding n one-token items, else the prefill program. */
static uint32_t pick_program(const struct rbln_runtime *e, size_t n, uint32_t total)
{
	uint32_t p;

	if (total != n)
		return 0;
	for (p = e->n_progs - 1; p >= 1; p--)
		if (e->progs[p].seqs >= n)
			return p;
	return 0;
}

/*
 * The blocks the items need, all or none (the planner took them already;
 * a caller planning its own steps may not have).
 */
static int take_blocks(struct rbln_runtime *e, const struct rbln_step_item *items, size_t n,
		       struct rbln_error *err)
{
	uint64_t need = 0;
	size_t i;

	for (i = 0; i < n; i++)
		need += rbln_kv_blocks_to_grow(items[i].seq, items[i].n_tokens);
	if (need > e->kv.n_free)
		return rbln_error_set(err, -ENOSPC, "the step needs %llu KV blocks, %u are free",
				      (unsigned long long)need, e->kv.n_free);
	for (i = 0; i < n; i++)
		rbln_kv_grow(items[i].seq, items[i].n_tokens);
	return 0;
}

static void put_i32(unsigned char *base, uint64_t off, size_t i, int32_t v)
{
	memcpy(base + off + 4 * i, &v, 4);
}

/* The argument block of rank 0, then copied to the others (inputs are the same). */
static void write_args(struct rbln_runtime *e, uint32_t p, const struct rbln_step_item *items,
		       size_t n)
{
	const struct rbln_layout_io *io = &e->io[p];
	unsigned char *a = e->ranks[0].io;
	uint32_t bs = e->cc.kvcache_block_size, row = 0, t;
	size_t i, b;

	memset(a, 0, io->logits);
	for (t = 0; t < io->tokens; t++)
		put_i32(a, io->slots, t, -1);	/* padding rows write no KV */
	for (b = 0; b < n; b++) {
		const struct rbln_seq *s = items[b].seq;
		uint32_t q_start = row;

		for (t = 0; t < items[b].n_tokens; t++, row++) {
			size_t pos = s->n_computed + t;

			put_i32(a, io->ids, row, s->tokens[pos]);
			put_i32(a, io->pos, row, (int32_t)pos);
			put_i32(a, io->slots, row, (int32_t)(s->blocks[pos / bs] * bs + pos % bs));
		}
		put_i32(a, io->seq_desc, 4 * b, (int32_t)q_start);
		put_i32(a, io->seq_desc, 4 * b + 1, (int32_t)items[b].n_tokens);
		put_i32(a, io->seq_desc, 4 * b + 2, (int32_t)(s->n_computed + items[b].n_tokens));
		put_i32(a, io->seq_desc, 4 * b + 3, (int32_t)b);
		for (i = 0; i < s->n_blocks; i++)
			put_i32(a, io->tables, b * io->max_blocks + i, s->blocks[i]);
		put_i32(a, io->logit_rows, b, (int32_t)(row - 1));
	}
	for (i = 1; i < e->tp; i++)
		memcpy(e->ranks[i].io, a, io->logits);
}

static int submit_all(struct rbln_runtime *e, uint32_t p, struct rbln_error *err)
{
	struct rbln_layout_comm comm;
	npu_fence *fences[RBLN_MAX_TENSOR_PARALLEL];
	uint32_t r, max_t, max_b, submitted = 0;
	int rc = 0, wrc;

	rbln_layout_max_shape(&e->cc, &max_t, &max_b);
	rbln_layout_comm(&e->ranks[0].shape, max_t, &comm);
	/* The all-reduces count from zero in every step; no device runs now. */
	for (r = 0; r < e->tp && e->tp > 1; r++)
		memset(e->ranks[r].comm + comm.sem, 0, 8);
	for (r = 0; r < e->tp; r++) {
		struct rank *rk = &e->ranks[r];
		struct npu_submit_info info = {
			.cmd = rk->cmd, .cmd_offset = rk->prog_offset[p],
			.cmd_size = rk->prog_size[p], .buffers = rk->uses,
			.num_buffers = rk->bufs.n_slots,
		};

		rc = npu_submit(rk->queue, &info, &fences[r]);
		if (rc) {
			rbln_error_set(err, rc, "rank %u: submitting %s: %s: %s", r, e->progs[p].name,
				       npu_strerror(rc), npu_error_detail());
			break;
		}
		submitted++;
	}
	/* Wait for every submitted job, even after a failure: they use our buffers. */
	for (r = 0; r < submitted; r++) {
		wrc = npu_fence_wait(fences[r], NPU_TIMEOUT_INFINITE);
		if (wrc && !rc)
			rc = rbln_error_set(err, wrc, "rank %u: %s failed on the device: %s", r,
					    e->progs[p].name, npu_strerror(wrc));
		npu_fence_release(fences[r]);
	}
	return rc;
}

static bool is_in(int32_t id, const int32_t *ids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static bool is_eos(const struct rbln_runtime *e, int32_t id)
{
	size_t i;

	for (i = 0; i < e->n_eos_ids; i++)
		if (e->eos_ids[i] == id)
			return true;
	return false;
}

static void gather_logits(struct rbln_runtime *e, const struct rbln_layout_io *io, size_t b)
{
	uint32_t r, vr = e->ranks[0].shape.vocab;

	for (r = 0; r < e->tp; r++)
		memcpy(e->logits + (size_t)r * vr, e->ranks[r].io + io->logits + 4 * b * vr,
		       4ull * vr);
}

/* The ranks' ARGMAX results combined: the first rank wins ties, NaN beats all. */
static int32_t device_argmax(const struct rbln_runtime *e, const struct rbln_layout_io *io, size_t b)
{
	float best = 0, v;
	int32_t id = -1, i;
	uint32_t r;

	for (r = 0; r < e->tp; r++) {
		memcpy(&v, e->ranks[r].io + io->argmax_value + 4 * b, 4);
		memcpy(&i, e->ranks[r].io + io->argmax_index + 4 * b, 4);
		if (id < 0 || (v != v && best == best) || v > best) {
			best = v;
			id = i;
		}
		if (best != best)
			break;
	}
	return id;
}

static int32_t sample(struct rbln_runtime *e, struct rbln_seq *s, const struct rbln_layout_io *io,
		      size_t b)
{
	int32_t mask[RBLN_MAX_EOS_IDS + RBLN_SAMPLING_MAX_STOP_IDS];
	size_t n_mask = 0, i, n_out = s->n_tokens - s->n_prompt;
	bool first = s->n_computed == s->n_prompt && !s->has_prompt_logits;
	int32_t id;

	if (!(s->keep_prompt_logits && first) && !s->logits_fn &&
	    !rbln_sampling_params_need_logits(&s->params)) {
		id = device_argmax(e, io, b);
		rbln_sampler_accept(s->sampler, id);
		return id;
	}
	gather_logits(e, io, b);
	if (s->keep_prompt_logits && first) {
		memcpy(s->prompt_logits, e->logits, (size_t)e->vocab * sizeof(float));
		s->has_prompt_logits = true;
	}
	if (s->logits_fn)
		s->logits_fn(s->logits_user, s, e->logits, e->vocab);
	if (!s->params.ignore_eos)
		for (i = 0; i < e->n_eos_ids; i++)
			mask[n_mask++] = (int32_t)e->eos_ids[i];
	for (i = 0; i < s->params.n_stop_token_ids; i++)
		mask[n_mask++] = s->params.stop_token_ids[i];
	return rbln_sampler_next(s->sampler, e->logits, e->vocab, mask, n_mask, n_out);
}

/* Appends a sampled id or ends the sequence with it. */
static int take_token(struct rbln_runtime *e, struct rbln_seq *s, int32_t id)
{
	size_t n_out;
	int rc;

	if ((!s->params.ignore_eos && is_eos(e, id)) ||
	    is_in(id, s->params.stop_token_ids, s->params.n_stop_token_ids)) {
		s->end = RBLN_SEQ_END_STOP;
		s->stop_token = id;
		rbln_kv_release(s);
		return 0;
	}
	rc = rbln_seq_push_token(s, id);
	if (rc)
		return rc;
	n_out = s->n_tokens - s->n_prompt;
	if ((s->params.max_tokens >= 0 && n_out >= (size_t)s->params.max_tokens) ||
	    s->n_tokens >= e->cc.max_seq_len) {
		s->end = RBLN_SEQ_END_LENGTH;
		rbln_kv_release(s);
	}
	return 0;
}

int rbln_runtime_run(struct rbln_runtime *e, const struct rbln_step_item *items, size_t n,
		    struct rbln_step_stats *st, struct rbln_error *err)
{
	uint64_t t0 = now_ns();
	uint32_t total = 0, prompt_tokens = 0, p, sampled = 0;
	size_t b;
	int rc;

	rc = check_items(e, items, n, &total, err);
	if (rc)
		return rc;
	p = pick_program(e, n, total);
	if (p == 0 && total > e->progs[0].tokens)
		return rbln_error_set(err, -E2BIG, "the step has %u tokens; a prefill step holds "
				      "prefill_chunk_size (%u)", total, e->progs[0].tokens);
	rc = take_blocks(e, items, n, err);
	if (rc)
		return rc;
	write_args(e, p, items, n);
	rc = submit_all(e, p, err);
	if (rc)
		return rc;
	e->steps++;
	if (p)
		e->decode_steps[p - 1]++;
	for (b = 0; b < n && !rc; b++) {
		struct rbln_seq *s = items[b].seq;

		if (!(items[b].n_tokens == 1 && s->n_computed > 0 &&
		      s->n_computed + 1 == s->n_tokens))
			prompt_tokens += items[b].n_tokens;
		s->n_computed += items[b].n_tokens;
		if (s->n_computed < s->n_tokens)
			continue;
		rc = take_token(e, s, sample(e, s, &e->io[p], b));
		if (rc)
			rbln_error_set(err, rc, "out of memory");
		sampled++;
	}
	rbln_planner_step_done(e, p == 0, now_ns() - t0);
	if (st) {
		st->tokens = total;
		st->prompt_tokens = prompt_tokens;
		st->items = (uint32_t)n;
		st->program_tokens = e->progs[p].tokens;
		st->prefill = p == 0;
		st->sampled = sampled;
		st->ns = now_ns() - t0;
	}
	return rc;
}
