// SPDX-License-Identifier: MIT
/*
 * Generation jobs (see job.h).  Locking: the job's mutex guards every
 * sequence's state and the connection flags; the engine's callback takes
 * it, never the other way round, and no engine function is called while
 * holding it (cancel() could wait for a callback that waits for us).
 */
#include "job.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <microhttpd.h>

#include "reply.h"
#include "serve/api/responses.h"
#include "serve/api/textstream.h"
#include "sse.h"
#include "watch.h"

struct lp_raw {
	int32_t id;
	float logprob;
	size_t top;		/* index of its first alternative in choice->tops */
	size_t n_top;
};

struct serve_choice {
	struct serve_job *job;
	size_t index;		/* choice index (OpenAI) or row (infer) */
	size_t prompt;		/* in job->built.prompts */
	struct rbln_sampling_params sp;
	struct rbln_gen_handle *h;
	bool submitted;		/* given to submit(): the handle is released at free */
	bool live;		/* submit() returned: cancel() may use the handle */
	struct serve_textstream *ts;
	struct rbln_strbuf text;	/* released, not yet sent */
	size_t text_sent;		/* bytes of text already sent */
	size_t n_tokens;		/* output tokens so far */
	size_t n_unsent;		/* of which not yet reported */
	double cum_logprob;
	struct lp_raw *lps;		/* of the unsent tokens */
	size_t n_lps, cap_lps;
	struct rbln_token_logprob *tops;
	size_t n_tops, cap_tops;
	bool text_stopped;		/* a stop string matched */
	bool finished;
	bool first_sent, final_sent;
	enum rbln_finish_reason reason;
	char *stop_str;
	int32_t stop_token_id;
	int error_code;
	char *error_msg;
	int64_t t_first, t_last, t_scheduled;
};

struct serve_job {
	pthread_mutex_t lock;
	unsigned refs;
	uint64_t id;
	struct serve_server *srv;
	struct serve_model *model;
	struct serve_request req;
	struct serve_built built;
	struct serve_choice *choices;
	size_t n_choices;
	size_t n_submitted, n_finished;
	bool submitting;		/* submit() loop running: "all finished" not yet final */
	bool rejected;			/* submission failed: counted as rejected already */
	struct MHD_Connection *conn;
	int fd;
	bool watched;
	bool suspended;
	bool client_gone;
	bool stream_ended;
	serve_job_notify_fn notify;	/* a consumer other than MHD (gRPC) */
	void *notify_arg;
	bool notify_every;		/* every event, not only the end */
	struct rbln_strbuf out;		/* SSE bytes not yet handed over */
	char oai_id[48];
	int64_t created;
	int64_t t_arrival;
	struct serve_job *prev, *next;	/* in srv->jobs */
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint64_t serve_job_id(const struct serve_job *j)
{
	return j->id;
}

bool serve_job_sse(const struct serve_job *j)
{
	return j->req.sse;
}

static void choice_free(struct serve_choice *c)
{
	serve_textstream_free(c->ts);
	rbln_strbuf_free(&c->text);
	free(c->lps);
	free(c->tops);
	free(c->stop_str);
	free(c->error_msg);
}

static void job_free(struct serve_job *j)
{
	struct serve_server *s = j->srv;
	size_t i;

	for (i = 0; i < j->n_choices; i++) {
		if (j->choices[i].submitted)
			j->model->ops->release(j->choices[i].h);
		choice_free(&j->choices[i]);
	}
	free(j->choices);
	serve_built_free(&j->built);
	serve_request_free(&j->req);
	rbln_strbuf_free(&j->out);
	pthread_mutex_destroy(&j->lock);
	pthread_mutex_lock(&s->lock);
	if (j->prev)
		j->prev->next = j->next;
	else
		s->jobs = j->next;
	if (j->next)
		j->next->prev = j->prev;
	if (!--s->n_jobs)
		pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
	serve_model_unhold(j->model);
	free(j);
}

void serve_job_get(struct serve_job *j)
{
	pthread_mutex_lock(&j->lock);
	j->refs++;
	pthread_mutex_unlock(&j->lock);
}

void serve_job_put(struct serve_job *j)
{
	unsigned left;

	pthread_mutex_lock(&j->lock);
	left = --j->refs;
	pthread_mutex_unlock(&j->lock);
	if (!left)
		job_free(j);
}

struct serve_job *serve_job_new(struct serve_server *s, struct serve_model *m,
				struct serve_request *r, struct serve_built *b,
				struct rbln_error *err)
{
	struct serve_job *j = calloc(1, sizeof(*j));
	size_t per = r->n ? r->n : 1, i, k;
	struct timespec wall;

	if (!j) {
		rbln_error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	/* the engine stays open until the job ends, whatever unloads the model */
	if (!serve_model_hold(m)) {
		free(j);
		rbln_error_set(err, -EAGAIN, "model '%s' is not ready: %s", m->name, m->reason);
		return NULL;
	}
	pthread_mutex_init(&j->lock, NULL);
	j->refs = 1;
	j->fd = -1;
	j->srv = s;
	j->model = m;
	j->req = *r;
	memset(r, 0, sizeof(*r));
	j->built = *b;
	memset(b, 0, sizeof(*b));
	j->t_arrival = now_ns();
	clock_gettime(CLOCK_REALTIME, &wall);
	j->created = wall.tv_sec;
	j->id = atomic_fetch_add(&s->next_id, 1) + 1;
	snprintf(j->oai_id, sizeof(j->oai_id), "%s-%016" PRIx64 "%08x",
		 j->req.api == SERVE_API_CHAT ? "chatcmpl" : "cmpl", j->id,
		 (unsigned)(wall.tv_nsec ^ (long)(j->id * 2654435761u)));
	j->n_choices = j->built.n_prompts * per;
	j->choices = calloc(j->n_choices ? j->n_choices : 1, sizeof(*j->choices));
	pthread_mutex_lock(&s->lock);
	j->next = s->jobs;
	if (s->jobs)
		s->jobs->prev = j;
	s->jobs = j;
	s->n_jobs++;
	pthread_mutex_unlock(&s->lock);
	if (!j->choices)
		goto nomem;
	for (i = 0; i < j->built.n_prompts; i++) {
		for (k = 0; k < per; k++) {
			struct serve_choice *c = &j->choices[i * per + k];

			c->job = j;
			c->index = i * per + k;
			c->prompt = i;
			c->sp = j->built.sp;
			c->stop_token_id = -1;
			/* n sequences of one prompt must differ: each its own seed */
			if (c->sp.has_seed)
				c->sp.seed += k;
			c->ts = serve_textstream_new(m->tok, &c->sp);
			if (!c->ts)
				goto nomem;
		}
	}
	return j;
nomem:
	rbln_error_set(err, -ENOMEM, "out of memory");
	serve_job_put(j);
	return NULL;
}

/* ---- engine side ---- */

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	np = realloc(*p, n * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = n;
	return 0;
}

static void record_logprobs(struct serve_choice *c, const struct rbln_gen_event *ev, size_t used)
{
	size_t i, k;

	if (!ev->logprobs || c->sp.logprobs < 0)
		return;
	if (grow((void **)&c->lps, &c->cap_lps, c->n_lps + used, sizeof(*c->lps)) ||
	    grow((void **)&c->tops, &c->cap_tops, c->n_tops + used * ev->n_top, sizeof(*c->tops)))
		return;	/* out of memory: the response carries fewer log-probabilities */
	for (i = 0; i < used; i++) {
		struct lp_raw *e = &c->lps[c->n_lps++];

		e->id = ev->ids[i];
		e->logprob = ev->logprobs[i];
		e->top = c->n_tops;
		e->n_top = ev->top_logprobs ? ev->n_top : 0;
		for (k = 0; k < e->n_top; k++)
			c->tops[c->n_tops++] = ev->top_logprobs[i * ev->n_top + k];
		c->cum_logprob += ev->logprobs[i];
	}
}

static void set_error(struct serve_choice *c, int code, const char *msg)
{
	c->error_code = code;
	free(c->error_msg);
	c->error_msg = msg ? strdup(msg) : NULL;
}

/* The last sequence finished: the request's metrics. */
static void job_metrics(struct serve_job *j)
{
	struct serve_model_metrics *mm = &j->model->metrics;
	int64_t now = now_ns(), queue = -1;
	enum serve_fail_reason why = SERVE_FAIL_COUNT;
	struct timespec wall;
	size_t i;

	for (i = 0; i < j->n_submitted; i++) {
		const struct serve_choice *c = &j->choices[i];

		if (c->t_scheduled && (queue < 0 || c->t_scheduled - j->t_arrival < queue))
			queue = c->t_scheduled - j->t_arrival;
		if (c->reason == RBLN_FINISH_ERROR)
			why = SERVE_FAIL_BACKEND;
		else if (c->reason == RBLN_FINISH_ABORT && c->error_code == -ETIMEDOUT &&
			 why != SERVE_FAIL_BACKEND)
			/* Triton: a timeout that expires in the queue is REJECTED */
			why = c->t_scheduled ? SERVE_FAIL_BACKEND : SERVE_FAIL_REJECTED;
		else if (c->reason == RBLN_FINISH_ABORT && why == SERVE_FAIL_COUNT)
			why = j->client_gone ? SERVE_FAIL_CANCELED : SERVE_FAIL_OTHER;
	}
	if (j->client_gone)
		why = SERVE_FAIL_CANCELED;
	if (why == SERVE_FAIL_COUNT)
		atomic_fetch_add(&mm->success, 1);
	else
		atomic_fetch_add(&mm->failure[why], 1);
	atomic_fetch_add(&mm->request_duration_us, (uint64_t)((now - j->t_arrival) / 1000));
	clock_gettime(CLOCK_REALTIME, &wall);
	atomic_store(&mm->last_inference_ms, (uint64_t)wall.tv_sec * 1000 +
					     (uint64_t)wall.tv_nsec / 1000000);
	if (queue >= 0)
		atomic_fetch_add(&mm->queue_duration_us, (uint64_t)(queue / 1000));
}

static int on_event(void *user, const struct rbln_gen_event *ev)
{
	struct serve_choice *c = user;
	struct serve_job *j = c->job;
	struct serve_model_metrics *mm = &j->model->metrics;
	struct rbln_error err = { 0 };
	int ret = RBLN_GEN_CONTINUE;
	bool wake, all_done = false;

	pthread_mutex_lock(&j->lock);
	if (ev->n_ids && !c->text_stopped && !c->finished) {
		size_t used = 0;
		int rc;

		if (!c->t_first) {
			c->t_first = ev->time_ns;
			serve_prom_histogram_observe(&mm->ttft, (double)(ev->time_ns - j->t_arrival) / 1e9);
		} else {
			serve_prom_histogram_observe(&mm->itl, (double)(ev->time_ns - c->t_last) / 1e9 /
							 (double)ev->n_ids);
		}
		c->t_last = ev->time_ns;
		rc = serve_textstream_push(c->ts, ev->ids, ev->n_ids, &c->text, &used, &err);
		record_logprobs(c, ev, used);
		c->n_tokens += used;
		c->n_unsent += used;
		if (rc == 1) {
			c->text_stopped = true;
			free(c->stop_str);
			c->stop_str = strdup(serve_textstream_stop(c->ts));
			ret = RBLN_GEN_STOP;
		} else if (rc < 0) {
			/* undecodable output: end the sequence and say why */
			c->text_stopped = true;
			set_error(c, rc, err.msg);
			ret = RBLN_GEN_STOP;
		}
	}
	if (ev->final && !c->finished) {
		if (!c->text_stopped && serve_textstream_finish(c->ts, &c->text, &err))
			set_error(c, -EINVAL, err.msg);
		c->finished = true;
		c->reason = c->stop_str ? RBLN_FINISH_STOP : ev->reason;
		if (c->error_code && c->reason != RBLN_FINISH_ABORT)
			c->reason = RBLN_FINISH_ERROR;
		c->stop_token_id = c->stop_str ? -1 : ev->stop_token_id;
		if (!c->error_code && ev->error_code)
			set_error(c, ev->error_code, ev->error_msg);
		/* the engine counts the stop token; the text stream never saw it */
		if (ev->n_output_tokens > c->n_tokens) {
			c->n_unsent += ev->n_output_tokens - c->n_tokens;
			c->n_tokens = ev->n_output_tokens;
		}
		c->t_scheduled = ev->t_scheduled_ns;
		j->n_finished++;
		atomic_fetch_add(&mm->inference_count, 1);
		serve_prom_histogram_observe(&mm->e2e, (double)(now_ns() - j->t_arrival) / 1e9);
		serve_prom_histogram_observe(&mm->prompt_tokens, (double)ev->n_prompt_tokens);
		serve_prom_histogram_observe(&mm->generation_tokens, (double)c->n_tokens);
		if (c->reason == RBLN_FINISH_STOP)
			atomic_fetch_add(&mm->finished[0], 1);
		else if (c->reason == RBLN_FINISH_LENGTH)
			atomic_fetch_add(&mm->finished[1], 1);
		else
			atomic_fetch_add(&mm->finished[2], 1);
		all_done = !j->submitting && j->n_finished == j->n_submitted;
	}
	/*
	 * Counted before the client can have its answer: one that reads
	 * /metrics right after it sees its own request there.
	 */
	if (all_done && !j->rejected)
		job_metrics(j);
	/* A stream wants every piece; a whole response only the end. */
	wake = j->req.sse || all_done;
	if (wake && j->suspended && j->conn) {
		j->suspended = false;
		MHD_resume_connection(j->conn);
	}
	if ((wake || j->notify_every) && j->notify)
		j->notify(j->notify_arg);
	pthread_mutex_unlock(&j->lock);
	if (ev->final)
		serve_job_put(j);	/* the sequence's reference */
	return ret;
}

int serve_job_submit(struct serve_job *j, struct rbln_error *err)
{
	const struct serve_model *m = j->model;
	uint64_t timeout = j->req.timeout_us ? (uint64_t)j->req.timeout_us
			 : m->default_timeout_us ? m->default_timeout_us
			 : j->srv->opt.request_timeout_us;
	int64_t deadline = timeout ? j->t_arrival + (int64_t)timeout * 1000 : 0;
	bool all_done;
	size_t i;
	int rc = 0;

	pthread_mutex_lock(&j->lock);
	j->submitting = true;
	pthread_mutex_unlock(&j->lock);
	for (i = 0; i < j->n_choices; i++) {
		struct serve_choice *c = &j->choices[i];
		const struct serve_built_prompt *p = &j->built.prompts[c->prompt];
		struct rbln_gen_request gr = {
			.prompt_ids = p->ids,
			.n_prompt_ids = p->n_ids,
			.params = c->sp,
			.deadline_ns = deadline,
			.id = j->id,
		};

		pthread_mutex_lock(&j->lock);
		j->refs++;	/* the sequence's, until its final event */
		j->n_submitted++;
		c->submitted = true;
		pthread_mutex_unlock(&j->lock);
		/* events may arrive on engine threads before submit() returns */
		rc = m->ops->submit(m->engine, &gr, on_event, c, &c->h, err);
		pthread_mutex_lock(&j->lock);
		if (rc) {
			j->refs--;
			j->n_submitted--;
			c->submitted = false;
		} else {
			c->live = true;
		}
		pthread_mutex_unlock(&j->lock);
		if (rc)
			break;
	}
	/* sequences that finished while later ones were being submitted */
	pthread_mutex_lock(&j->lock);
	j->submitting = false;
	j->rejected = rc != 0;
	all_done = !rc && j->n_submitted && j->n_finished == j->n_submitted;
	pthread_mutex_unlock(&j->lock);
	if (all_done)
		job_metrics(j);
	if (rc) {
		atomic_fetch_add(&j->model->metrics.failure[rc == -EBUSY || rc == -EAGAIN ||
							    rc == -ESHUTDOWN ? SERVE_FAIL_REJECTED
									     : SERVE_FAIL_BACKEND], 1);
		serve_job_cancel(j);
	}
	return rc;
}

/* ---- HTTP side ---- */

void serve_job_set_notify(struct serve_job *j, serve_job_notify_fn fn, void *arg, bool every)
{
	pthread_mutex_lock(&j->lock);
	j->notify = fn;
	j->notify_arg = arg;
	j->notify_every = every;
	/* what came before: an event's own call could not see fn yet */
	if (fn)
		fn(arg);
	pthread_mutex_unlock(&j->lock);
}

void serve_job_attach(struct serve_job *j, struct MHD_Connection *conn, int fd)
{
	pthread_mutex_lock(&j->lock);
	j->conn = conn;
	j->fd = fd;
	pthread_mutex_unlock(&j->lock);
	if (fd >= 0 && !serve_watch_add(j->srv->watch, fd, j->id))
		j->watched = true;
}

void serve_job_cancel(struct serve_job *j)
{
	struct rbln_gen_handle **hs;
	size_t i, n = 0;

	hs = calloc(j->n_choices ? j->n_choices : 1, sizeof(*hs));
	if (!hs)
		return;	/* the deadline or the engine's close still ends them */
	pthread_mutex_lock(&j->lock);
	for (i = 0; i < j->n_choices; i++)
		if (j->choices[i].live && !j->choices[i].finished)
			hs[n++] = j->choices[i].h;
	pthread_mutex_unlock(&j->lock);
	/* handles stay valid until the job frees them, and the caller holds a reference */
	for (i = 0; i < n; i++)
		j->model->ops->cancel(hs[i]);
	free(hs);
}

void serve_jobs_cancel(struct serve_server *s, uint64_t id)
{
	struct serve_job **list = NULL, *j;
	size_t n = 0, cap = 0, i;

	pthread_mutex_lock(&s->lock);
	for (j = s->jobs; j; j = j->next) {
		if (id && j->id != id)
			continue;
		/* a job whose last reference is gone is being freed: leave it */
		pthread_mutex_lock(&j->lock);
		if (j->refs && !grow((void **)&list, &cap, n + 1, sizeof(*list))) {
			j->refs++;
			if (id)
				j->client_gone = true;
			list[n++] = j;
		}
		pthread_mutex_unlock(&j->lock);
	}
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++) {
		serve_job_cancel(list[i]);
		serve_job_put(list[i]);
	}
	free(list);
}

void serve_job_detach(struct serve_job *j, bool client_gone)
{
	bool running;

	if (j->watched)
		serve_watch_remove(j->srv->watch, j->fd);
	pthread_mutex_lock(&j->lock);
	j->conn = NULL;
	j->suspended = false;
	running = j->n_finished < j->n_submitted;
	if (client_gone && running)
		j->client_gone = true;
	pthread_mutex_unlock(&j->lock);
	if (running)
		serve_job_cancel(j);
	serve_job_put(j);
}

int serve_job_wait(struct serve_job *j)
{
	int done;

	pthread_mutex_lock(&j->lock);
	done = j->n_finished == j->n_submitted;
	if (!done && j->conn) {
		j->suspended = true;
		MHD_suspend_connection(j->conn);
	}
	pthread_mutex_unlock(&j->lock);
	return done;
}

/* ---- building responses ---- */

struct lp_view {
	struct serve_lp_entry *entries;
	struct serve_lp_top *tops;
	char **strings;
	size_t n_strings;
};

static void lp_view_free(struct lp_view *v)
{
	size_t i;

	for (i = 0; i < v->n_strings; i++)
		free(v->strings[i]);
	free(v->strings);
	free(v->entries);
	free(v->tops);
	memset(v, 0, sizeof(*v));
}

static const char *token_text(const struct serve_job *j, struct lp_view *v, int32_t id,
			      size_t *len)
{
	char *s = NULL;

	if (rbln_tokenizer_decode(j->model->tok, &id, 1, 0, &s, len, NULL)) {
		*len = 0;
		return "";
	}
	v->strings[v->n_strings++] = s;
	return s;
}

/* The unsent log-probabilities of c, with token texts, as the builders want them. */
static int lp_view_make(const struct serve_job *j, const struct serve_choice *c,
			struct lp_view *v)
{
	size_t i;

	memset(v, 0, sizeof(*v));
	if (!c->n_lps)
		return 0;
	v->entries = calloc(c->n_lps, sizeof(*v->entries));
	v->tops = calloc(c->n_tops ? c->n_tops : 1, sizeof(*v->tops));
	v->strings = calloc(c->n_lps + c->n_tops, sizeof(*v->strings));
	if (!v->entries || !v->tops || !v->strings) {
		lp_view_free(v);
		return -ENOMEM;
	}
	for (i = 0; i < c->n_tops; i++) {
		v->tops[i].id = c->tops[i].id;
		v->tops[i].logprob = c->tops[i].logprob;
		v->tops[i].token = token_text(j, v, c->tops[i].id, &v->tops[i].token_len);
	}
	for (i = 0; i < c->n_lps; i++) {
		struct serve_lp_entry *e = &v->entries[i];

		e->id = c->lps[i].id;
		e->logprob = c->lps[i].logprob;
		e->token = token_text(j, v, e->id, &e->token_len);
		e->top = v->tops + c->lps[i].top;
		e->n_top = c->lps[i].n_top;
	}
	return 0;
}

static bool wants_logprobs(const struct serve_job *j)
{
	const struct serve_request *r = &j->req;

	if (j->built.sp.logprobs < 0)
		return false;
	return r->api == SERVE_API_COMPLETIONS || r->api == SERVE_API_CHAT || r->ret_logprobs;
}

/* A piece of everything unsent of c; text prefixed with the prompt when asked. */
static void piece_of(const struct serve_job *j, struct serve_choice *c, struct lp_view *v,
		     struct rbln_strbuf *scratch, bool whole, struct serve_piece *p)
{
	const struct serve_built_prompt *bp = &j->built.prompts[c->prompt];
	bool prefix = !c->first_sent &&
		      ((j->req.api == SERVE_API_GENERATE || j->req.api == SERVE_API_INFER)
		       ? j->req.prepend_input : j->req.echo);

	memset(p, 0, sizeof(*p));
	/* v is freed by the caller whether or not log-probabilities were wanted */
	memset(v, 0, sizeof(*v));
	rbln_strbuf_truncate(scratch, 0);
	if (prefix && bp->text)
		rbln_strbuf_append_str(scratch, bp->text);
	if (c->text.len)
		rbln_strbuf_append(scratch, c->text.data, c->text.len);
	p->index = c->index;
	p->text = scratch->data ? scratch->data : "";
	p->text_len = scratch->len;
	p->n_tokens = whole ? c->n_tokens : c->n_unsent;
	p->text_offset = c->text_sent;
	p->first = !c->first_sent;
	p->final = c->finished;
	p->reason = c->reason;
	p->stop_str = c->stop_str;
	p->stop_token_id = c->stop_token_id;
	p->n_prompt_tokens = bp->n_ids;
	p->n_output_tokens = c->n_tokens;
	p->cumulative_logprob = c->cum_logprob;
	if (wants_logprobs(j) && !lp_view_make(j, c, v)) {
		p->lps = v->entries;
		p->n_lps = c->n_lps;
	}
}

static void mark_sent(struct serve_choice *c)
{
	c->text_sent += c->text.len;
	rbln_strbuf_truncate(&c->text, 0);
	c->n_unsent = 0;
	c->n_lps = 0;
	c->n_tops = 0;
	c->first_sent = true;
	if (c->finished)
		c->final_sent = true;
}

/* HTTP status and message of a failed sequence, or 0 if it did not fail. */
static unsigned failure(const struct serve_job *j, const struct serve_choice *c,
			const char **msg)
{
	static char buf[320];

	if (c->reason != RBLN_FINISH_ERROR && c->reason != RBLN_FINISH_ABORT)
		return 0;
	if (c->error_code == -ETIMEDOUT) {
		*msg = "Request timeout expired";
		return 503;
	}
	if (c->error_code == -ESHUTDOWN) {
		*msg = "the server is shutting down";
		return 503;
	}
	/*
	 * Only a client that half-closed its socket can still read this: it
	 * cannot be told from one that left (see watch.c), so say why.
	 */
	if (c->reason == RBLN_FINISH_ABORT && j->client_gone) {
		*msg = "the request was cancelled because the client closed its side of the "
		       "connection (a half-close counts as leaving: keep the connection open "
		       "until the answer arrives)";
		return 400;
	}
	if (c->reason == RBLN_FINISH_ABORT) {
		*msg = "the server is shutting down: the request was cancelled";
		return 503;
	}
	snprintf(buf, sizeof(buf), "generation failed: %s",
		 c->error_msg ? c->error_msg : "engine error");
	serve_redact_paths(buf);
	*msg = buf;
	return 500;
}

static int error_body(const struct serve_job *j, const char *msg, unsigned status,
		      struct rbln_strbuf *body)
{
	json_object *o = j->req.api == SERVE_API_COMPLETIONS || j->req.api == SERVE_API_CHAT
			 ? serve_openai_error_json(msg, (int)status) : serve_error_json(msg);
	int rc = o ? serve_json_append(body, o) : -ENOMEM;

	json_object_put(o);
	return rc;
}

static struct serve_resp_ctx resp_ctx(const struct serve_job *j)
{
	struct serve_resp_ctx c = {
		.model_name = j->model->name,
		.model_version = j->model->version,
		.id = j->req.api == SERVE_API_INFER ? j->req.id : j->oai_id,
		.created = j->created,
		.req = &j->req,
	};

	return c;
}

static void usage_of(const struct serve_job *j, struct serve_usage *u)
{
	size_t i;

	memset(u, 0, sizeof(*u));
	for (i = 0; i < j->built.n_prompts; i++)
		u->prompt_tokens += j->built.prompts[i].n_ids;
	for (i = 0; i < j->n_choices; i++)
		u->completion_tokens += j->choices[i].n_tokens;
}

/* True when some sequence has output not yet taken (job locked). */
static bool has_news(const struct serve_job *j)
{
	size_t i;

	for (i = 0; i < j->n_submitted; i++) {
		const struct serve_choice *c = &j->choices[i];

		if (!c->final_sent && (c->text.len || c->n_unsent || c->finished))
			return true;
	}
	return false;
}

int serve_job_take(struct serve_job *j, serve_job_batch_fn fn, void *arg)
{
	struct serve_resp_ctx ctx = resp_ctx(j);
	struct serve_job_batch b = { .ctx = &ctx };
	struct serve_piece *pieces = NULL;
	struct lp_view *views = NULL;
	struct rbln_strbuf *scratch = NULL;
	size_t i, n;
	int rc = 0;

	pthread_mutex_lock(&j->lock);
	n = j->n_choices;
	b.final = !j->submitting && j->n_submitted == n && j->n_finished == n;
	if (j->stream_ended || !(b.final || (j->req.stream && has_news(j)))) {
		pthread_mutex_unlock(&j->lock);
		return 0;
	}
	for (i = 0; b.final && i < n && !b.status; i++)
		b.status = failure(j, &j->choices[i], &b.error);
	if (b.status) {
		j->stream_ended = true;
		rc = fn(arg, &b);
		pthread_mutex_unlock(&j->lock);
		return rc ? rc : 1;
	}
	pieces = calloc(n, sizeof(*pieces));
	views = calloc(n, sizeof(*views));
	scratch = calloc(n, sizeof(*scratch));
	if (!pieces || !views || !scratch) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		piece_of(j, &j->choices[i], &views[i], &scratch[i], !j->req.stream, &pieces[i]);
	b.pieces = pieces;
	b.n = n;
	rc = fn(arg, &b);
	for (i = 0; i < n; i++)
		mark_sent(&j->choices[i]);
	j->stream_ended = b.final;
out:
	for (i = 0; views && i < n; i++)
		lp_view_free(&views[i]);
	for (i = 0; scratch && i < n; i++)
		rbln_strbuf_free(&scratch[i]);
	free(views);
	free(scratch);
	free(pieces);
	pthread_mutex_unlock(&j->lock);
	return rc ? rc : 1;
}

bool serve_job_finished(struct serve_job *j)
{
	bool done;

	pthread_mutex_lock(&j->lock);
	done = j->stream_ended;
	pthread_mutex_unlock(&j->lock);
	return done;
}

struct whole_response {
	struct serve_job *job;
	unsigned *status;
	struct rbln_strbuf *body;
	const char **content_type;
	size_t *json_len;
};

/* The HTTP body of a finished job (job locked, by serve_job_take). */
static int whole_body(void *arg, const struct serve_job_batch *b)
{
	struct whole_response *w = arg;
	struct serve_job *j = w->job;
	int rc;

	if (b->status) {
		*w->status = b->status;
		rc = error_body(j, b->error, b->status, w->body);
		*w->json_len = w->body->len;
		return rc;
	}
	*w->status = 200;
	switch (j->req.api) {
	case SERVE_API_GENERATE: {
		json_object *o = serve_generate_json(b->ctx, &b->pieces[0]);

		rc = o ? serve_json_append(w->body, o) : -ENOMEM;
		json_object_put(o);
		*w->json_len = w->body->len;
		return rc;
	}
	case SERVE_API_INFER:
		rc = serve_infer_body(b->ctx, &j->model->entry->config, b->pieces, b->n, w->body,
				      w->json_len);
		if (*w->json_len < w->body->len)
			*w->content_type = "application/octet-stream";
		return rc;
	case SERVE_API_COMPLETIONS:
	case SERVE_API_CHAT: {
		struct serve_usage u;
		json_object *o;

		usage_of(j, &u);
		o = serve_openai_json(b->ctx, b->pieces, b->n, &u);
		rc = o ? serve_json_append(w->body, o) : -ENOMEM;
		json_object_put(o);
		*w->json_len = w->body->len;
		return rc;
	}
	}
	return -EINVAL;
}

int serve_job_response(struct serve_job *j, unsigned *status, struct rbln_strbuf *body,
		       const char **content_type, size_t *json_len)
{
	struct whole_response w = { j, status, body, content_type, json_len };
	int rc;

	*content_type = "application/json";
	*json_len = 0;
	rc = serve_job_take(j, whole_body, &w);
	return rc < 0 ? rc : rc ? 0 : -EAGAIN;
}

/* ---- streaming ---- */

static int emit(struct serve_job *j, json_object *o)
{
	int rc = o ? serve_sse_json(&j->out, o) : -ENOMEM;

	json_object_put(o);
	return rc;
}

/* Turns what is new into SSE events in j->out (job locked). */
static void format_pending(struct serve_job *j)
{
	struct serve_resp_ctx ctx = resp_ctx(j);
	bool openai = j->req.api == SERVE_API_COMPLETIONS || j->req.api == SERVE_API_CHAT;
	bool all_final = true;
	struct rbln_strbuf scratch = { 0 };
	size_t i;

	for (i = 0; i < j->n_choices; i++) {
		struct serve_choice *c = &j->choices[i];
		struct serve_piece p;
		struct lp_view v;
		const char *msg;
		unsigned st;
		bool news;

		if (c->final_sent)
			continue;
		if (i >= j->n_submitted) {
			all_final = false;
			continue;
		}
		/* generate_stream without "stream": one event with the whole text */
		if (!j->req.stream && !c->finished) {
			all_final = false;
			continue;
		}
		st = c->finished ? failure(j, c, &msg) : 0;
		if (st) {
			json_object *e = openai ? serve_openai_error_json(msg, (int)st)
						: serve_error_json(msg);

			emit(j, e);
			c->final_sent = true;
			continue;
		}
		news = c->text.len || c->finished || (c->n_unsent && !openai) ||
		       (!c->first_sent && j->req.api == SERVE_API_CHAT);
		if (!news) {
			all_final = false;
			continue;
		}
		piece_of(j, c, &v, &scratch, !j->req.stream, &p);
		emit(j, openai ? serve_openai_chunk_json(&ctx, &p) : serve_generate_json(&ctx, &p));
		lp_view_free(&v);
		mark_sent(c);
		if (!c->final_sent)
			all_final = false;
	}
	rbln_strbuf_free(&scratch);
	if (all_final && j->n_submitted == j->n_choices && !j->stream_ended) {
		if (openai) {
			if (j->req.include_usage) {
				struct serve_usage u;

				usage_of(j, &u);
				emit(j, serve_openai_usage_chunk_json(&ctx, &u));
			}
			serve_sse_done(&j->out);
		}
		j->stream_ended = true;
	}
}

ssize_t serve_job_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct serve_job *j = cls;
	size_t n;

	(void)pos;
	pthread_mutex_lock(&j->lock);
	if (!j->out.len && !j->stream_ended)
		format_pending(j);
	if (j->out.len) {
		n = j->out.len < max ? j->out.len : max;
		memcpy(buf, j->out.data, n);
		rbln_strbuf_consume(&j->out, n);
		pthread_mutex_unlock(&j->lock);
		return (ssize_t)n;
	}
	if (j->stream_ended || !j->conn) {
		pthread_mutex_unlock(&j->lock);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	/* Nothing yet: sleep until the engine has something (on_event resumes). */
	j->suspended = true;
	MHD_suspend_connection(j->conn);
	pthread_mutex_unlock(&j->lock);
	return 0;
}

void serve_job_response_done(void *cls)
{
	serve_job_put(cls);
}
