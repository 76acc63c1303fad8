// SPDX-License-Identifier: MIT
/*
 * The scheduler thread of one model: the only thread that uses its
 * engine.  Each iteration takes the new requests from the inbox, ends the
 * cancelled and the expired ones (freeing their KV blocks before anything
 * is planned), plans a step (planner.c), runs it, and delivers what the
 * step produced.  Cancellation and deadlines therefore act at the next
 * step boundary: a step is the unit of work and cannot be interrupted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "serving_engine/binding.h"

int64_t se_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Ends the requests of a list that were cancelled or ran past their deadline. */
static void reap_list(struct rbln_serving_engine *e, struct se_list *l, int64_t now)
{
	struct rbln_gen_handle *h, *next;

	for (h = l->head; h; h = next) {
		next = h->next;
		if (atomic_load(&h->cancelled))
			se_finish(e, l, h, RBLN_FINISH_ABORT, -ECANCELED, "the request was cancelled",
				  now);
		else if (h->deadline_ns && now >= h->deadline_ns)
			se_finish(e, l, h, RBLN_FINISH_ABORT, -ETIMEDOUT,
				  "the request's deadline passed", now);
	}
}

static void abort_all(struct rbln_serving_engine *e, struct se_list *l, int64_t now)
{
	while (l->head)
		se_finish(e, l, l->head, RBLN_FINISH_ABORT, -ESHUTDOWN,
			  "the model is shutting down", now);
}

static enum rbln_finish_reason reason_of(enum rbln_seq_end end)
{
	switch (end) {
	case RBLN_SEQ_END_STOP: return RBLN_FINISH_STOP;
	case RBLN_SEQ_END_LENGTH: return RBLN_FINISH_LENGTH;
	default: return RBLN_FINISH_ABORT;
	}
}

static void log_step(const struct rbln_serving_engine *e, size_t n,
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
static void run_step(struct rbln_serving_engine *e, size_t n)
{
	struct rbln_error err = { 0 };
	struct rbln_step_stats st;
	size_t i, prompt_tokens = 0;
	int64_t now;
	int rc;

	for (i = 0; i < n; i++)
		if (!(e->items[i].n_tokens == 1 && se_seq_computed(e->items[i].seq) > 0))
			prompt_tokens += e->items[i].n_tokens;
	rc = rbln_engine_run(e->engine, e->items, n, &st, &err);
	now = se_now_ns();
	if (rc) {
		/* A device failure: the step's requests fail, the others go on. */
		fprintf(stderr, "rbln-serve: %s: step failed: %s\n", e->name, err.msg);
		for (i = 0; i < n; i++) {
			struct rbln_gen_handle *h = e->item_h[i];

			rbln_seq_abort(h->seq);
			se_finish(e, &e->running, h, RBLN_FINISH_ERROR, rc, err.msg, now);
		}
		return;
	}
	e->acc.steps_total++;
	e->acc.prompt_tokens_total += prompt_tokens;
	e->acc.generation_tokens_total += st.sampled;
	e->acc.busy_ns_total += st.ns;
	if (st.prefill) {
		/* An average over about the last eight prefill steps. */
		e->prefill_ns_avg = e->prefill_ns_avg ? e->prefill_ns_avg +
				    ((int64_t)st.ns - e->prefill_ns_avg) / 8 : (int64_t)st.ns;
		e->defer_since_ns = 0;
	}
	if (e->log_steps)
		log_step(e, n, &st);
	for (i = 0; i < n; i++) {
		struct rbln_gen_handle *h = e->item_h[i];
		enum rbln_seq_end end = rbln_seq_end(h->seq);

		if (end != RBLN_SEQ_RUNNING) {
			se_finish(e, &e->running, h, reason_of(end), 0, NULL, now);
		} else if (se_deliver_tokens(e, h, now)) {
			/* A stop string completed: no more tokens, blocks freed now. */
			h->stop_asked = true;
			rbln_seq_abort(h->seq);
			se_finish(e, &e->running, h, RBLN_FINISH_STOP, 0, NULL, now);
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
static void gather_burst(struct rbln_serving_engine *e)
{
	struct timespec quiet = { 0, BURST_QUIET_NS };
	int64_t t0 = se_now_ns();
	size_t n;

	do {
		n = e->inbox.n;
		pthread_mutex_unlock(&e->mu);
		nanosleep(&quiet, NULL);
		pthread_mutex_lock(&e->mu);
	} while (e->inbox.n > n && se_now_ns() - t0 < BURST_MAX_NS && !e->stopping);
}

/* Waits for work; returns false when the model is closing. */
static bool wait_for_work(struct rbln_serving_engine *e)
{
	bool stopping, idled = false;

	pthread_mutex_lock(&e->mu);
	for (;;) {
		if (idled && e->inbox.n)
			gather_burst(e);
		se_list_splice(&e->waiting, &e->inbox);
		e->n_waiting_seen = e->waiting.n;
		e->free_slots_seen = e->batch - e->running.n;
		if (e->stopping || e->waiting.n || e->running.n)
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
				se_publish(e);
				pthread_mutex_lock(&e->mu);
			}
		}
	}
	stopping = e->stopping;
	pthread_mutex_unlock(&e->mu);
	return !stopping;
}

void *se_scheduler_main(void *arg)
{
	struct rbln_serving_engine *e = arg;
	int64_t now;
	size_t n;

	while (wait_for_work(e)) {
		now = se_now_ns();
		reap_list(e, &e->running, now);
		reap_list(e, &e->waiting, now);
		n = se_plan(e, now);
		if (n)
			run_step(e, n);
		se_publish(e);
	}
	/* close(): whatever is left ends now (rbln-serve drains before it closes). */
	now = se_now_ns();
	pthread_mutex_lock(&e->mu);
	se_list_splice(&e->waiting, &e->inbox);
	pthread_mutex_unlock(&e->mu);
	abort_all(e, &e->running, now);
	abort_all(e, &e->waiting, now);
	se_publish(e);
	return NULL;
}
