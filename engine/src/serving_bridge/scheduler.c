// SPDX-License-Identifier: MIT
/*
 * The scheduler thread of one model: the only thread that uses its
 * engine.  Each iteration takes the new requests from the inbox (each
 * becomes an engine sequence), ends the cancelled and the expired ones
 * (freeing their KV blocks before anything is planned), has the runtime's
 * planner plan a step (rbln_runtime_plan(), with the policy ops.c set),
 * runs it, and delivers what the step produced.  Cancellation and deadlines therefore act at the next
 * step boundary: a step is the unit of work and cannot be interrupted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "serving_bridge/binding.h"

int64_t rbln_bridge_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The engine sequence of a request taken from the inbox (the planner's from now on). */
static void make_seq(struct rbln_serving_model *e, struct rbln_gen_handle *h, int64_t now)
{
	struct rbln_error err = { 0 };
	int rc = rbln_runtime_add(e->engine, h->prompt, h->n_prompt, &h->sp, 0, &h->seq, &err);

	if (!rc)
		rc = rbln_bridge_logits_attach(e, h);
	if (rc) {
		rbln_bridge_finish(e, h, RBLN_FINISH_ERROR, rc, err.msg[0] ? err.msg : "out of memory", now);
		return;
	}
	rbln_seq_set_user(h->seq, h);
}

/*
 * Gives the new requests their sequences, then ends the ones that were
 * cancelled or ran past their deadline.
 */
static void intake_and_reap(struct rbln_serving_model *e, int64_t now)
{
	struct rbln_gen_handle *h, *next;

	for (h = e->active.head; h; h = next) {
		next = h->next;
		if (!h->seq)
			make_seq(e, h, now);
	}
	for (h = e->active.head; h; h = next) {
		next = h->next;
		if (atomic_load(&h->cancelled))
			rbln_bridge_finish(e, h, RBLN_FINISH_ABORT, -ECANCELED, "the request was cancelled",
				  now);
		else if (h->deadline_ns && now >= h->deadline_ns)
			rbln_bridge_finish(e, h, RBLN_FINISH_ABORT, -ETIMEDOUT,
				  "the request's deadline passed", now);
	}
}

static void abort_all(struct rbln_serving_model *e, int64_t now)
{
	while (e->active.head)
		rbln_bridge_finish(e, e->active.head, RBLN_FINISH_ABORT, -ESHUTDOWN,
			  "the model is shutting down", now);
}

/* The planner's preemption callback (the policy ops.c sets). */
void rbln_bridge_preempted(void *user, struct rbln_seq *s)
{
	struct rbln_serving_model *e = user;
	const struct rbln_gen_handle *h = rbln_seq_user(s);

	e->acc.preemptions_total++;
	if (e->log_steps)
		fprintf(stderr, "rbln-serve: %s: preempted request %llu (recompute)\n", e->name,
			(unsigned long long)h->id);
}

static enum rbln_finish_reason reason_of(enum rbln_seq_end end)
{
	switch (end) {
	case RBLN_SEQ_END_STOP: return RBLN_FINISH_STOP;
	case RBLN_SEQ_END_LENGTH: return RBLN_FINISH_LENGTH;
	default: return RBLN_FINISH_ABORT;
	}
}

static void log_step(const struct rbln_serving_model *e, size_t n,
		     const struct rbln_step_stats *st)
{
	if (st->prefill)
		fprintf(stderr, "rbln-serve: %s: step %llu: prefill, %zu sequences, %u tokens, "
			"%.2f ms\n", e->name, (unsigned long long)e->acc.steps_total, n,
			st->tokens, (double)st->ns / 1e6);
	else
		fprintf(stderr, "rbln-serve: %s: step %llu: decoder_batch_%u, %zu sequences, "
			"%.2f ms\n", e->name, (unsigned long long)e->acc.steps_total,
			st->program_tokens, n, (double)st->ns / 1e6);
}

/* Runs the planned step and hands each request what it produced. */
static void run_step(struct rbln_serving_model *e, size_t n)
{
	struct rbln_error err = { 0 };
	struct rbln_step_stats st;
	int64_t now = rbln_bridge_now_ns();
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		e->item_h[i] = rbln_seq_user(e->items[i].seq);
		if (!e->item_h[i]->t_scheduled_ns)
			e->item_h[i]->t_scheduled_ns = now;
	}
	rc = rbln_runtime_run(e->engine, e->items, n, &st, &err);
	now = rbln_bridge_now_ns();
	if (rc) {
		/* A device failure: the step's requests fail, the others go on. */
		fprintf(stderr, "rbln-serve: %s: step failed: %s\n", e->name, err.msg);
		for (i = 0; i < n; i++) {
			struct rbln_gen_handle *h = e->item_h[i];

			rbln_seq_abort(h->seq);
			rbln_bridge_finish(e, h, RBLN_FINISH_ERROR, rc, err.msg, now);
		}
		return;
	}
	e->acc.steps_total++;
	e->acc.prompt_tokens_total += st.prompt_tokens;
	e->acc.generation_tokens_total += st.sampled;
	e->acc.busy_ns_total += st.ns;
	if (e->log_steps)
		log_step(e, n, &st);
	for (i = 0; i < n; i++) {
		struct rbln_gen_handle *h = e->item_h[i];
		enum rbln_seq_end end = rbln_seq_end(h->seq);

		if (end != RBLN_SEQ_RUNNING) {
			rbln_bridge_finish(e, h, reason_of(end), 0, NULL, now);
		} else if (rbln_bridge_deliver_tokens(e, h, now)) {
			/* A stop string completed: no more tokens, blocks freed now. */
			h->stop_asked = true;
			rbln_seq_abort(h->seq);
			rbln_bridge_finish(e, h, RBLN_FINISH_STOP, 0, NULL, now);
		}
	}
}

#define BURST_QUIET_NS 50000		/* the inbox is still for this long ... */
#define BURST_MAX_NS 1000000		/* ... or this much time passed */

/*
 * Called with the lock held after an idle wait ended with requests in the
 * inbox: lets the burst they belong to arrive before it is taken.  The
 * prompts of one HTTP request (an infer batch, a list of OpenAI prompts,
 * n > 1) are submitted one by one, and requests of many clients come
 * together; taken at the first one, the others would wait for the next
 * prefill step.  Costs at most a millisecond of an idle server's time to
 * first token, against a prefill step of ~14 ms for the smallest model.
 */
static void gather_burst(struct rbln_serving_model *e)
{
	struct timespec quiet = { 0, BURST_QUIET_NS };
	int64_t t0 = rbln_bridge_now_ns();
	size_t n;

	do {
		n = e->inbox.n;
		pthread_mutex_unlock(&e->mu);
		nanosleep(&quiet, NULL);
		pthread_mutex_lock(&e->mu);
	} while (e->inbox.n > n && rbln_bridge_now_ns() - t0 < BURST_MAX_NS && !e->stopping);
}

/* Waits for work; returns false when the model is closing. */
static bool wait_for_work(struct rbln_serving_model *e)
{
	uint32_t running = rbln_bridge_num_running(e);
	bool stopping, idled = false;

	pthread_mutex_lock(&e->mu);
	for (;;) {
		if (idled && e->inbox.n)
			gather_burst(e);
		rbln_bridge_list_splice(&e->active, &e->inbox);
		e->n_waiting_seen = e->active.n - running;
		e->free_slots_seen = e->batch - running;
		if (e->stopping || e->active.n)
			break;
		/* Idle: wake at least once a second so the utilization gauge decays. */
		{
			struct timespec until;

			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_sec += 1;
			idled = true;
			if (pthread_cond_timedwait(&e->wake, &e->mu, &until) == ETIMEDOUT &&
			    !e->inbox.n && !e->stopping) {
				pthread_mutex_unlock(&e->mu);
				rbln_bridge_publish(e);
				pthread_mutex_lock(&e->mu);
			}
		}
	}
	stopping = e->stopping;
	pthread_mutex_unlock(&e->mu);
	return !stopping;
}

void *rbln_bridge_scheduler_main(void *arg)
{
	struct rbln_serving_model *e = arg;
	int64_t now;
	size_t n;

	while (wait_for_work(e)) {
		intake_and_reap(e, rbln_bridge_now_ns());
		n = rbln_runtime_plan(e->engine, e->items);
		if (n)
			run_step(e, n);
		rbln_bridge_publish(e);
	}
	/* close(): whatever is left ends now (rbln-serve drains before it closes). */
	now = rbln_bridge_now_ns();
	pthread_mutex_lock(&e->mu);
	rbln_bridge_list_splice(&e->active, &e->inbox);
	pthread_mutex_unlock(&e->mu);
	abort_all(e, now);
	rbln_bridge_publish(e);
	return NULL;
}
