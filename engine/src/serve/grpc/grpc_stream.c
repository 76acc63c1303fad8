// SPDX-License-Identifier: MIT
/*
 * Inference over gRPC: each ModelInferRequest (the one of ModelInfer, or
 * each one on a ModelStreamInfer stream) becomes a job (job.h), exactly as
 * an HTTP infer request does, so the scheduler, the KV blocks, deadlines
 * and metrics are shared.  The job's notify callback (an engine thread,
 * under the job's lock) only queues the request; the sender thread then
 * takes the output and queues the messages on the call.  On a stream,
 * every request's failure is an error_message response and the stream
 * goes on; on ModelInfer it is the call's status.
 */
#include "grpc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grpc_infer.h"
#include "serve/api/request_build.h"

/* Engine thread, job locked: hand the request to the sender. */
static void notify(void *arg)
{
	struct grpc_req *q = arg;
	struct serve_grpc *g = q->c->g;

	pthread_mutex_lock(&g->lock);
	if (!q->queued) {
		q->queued = true;
		q->next_pending = NULL;
		if (g->pending_tail)
			g->pending_tail->next_pending = q;
		else
			g->pending_head = q;
		g->pending_tail = q;
		pthread_cond_broadcast(&g->cond);
	}
	pthread_mutex_unlock(&g->lock);
}

/* A stream's error response for one request. */
static void send_stream_error(struct grpc_callctx *c, const char *id, const char *msg)
{
	Inference__ModelStreamInferResponse sr = INFERENCE__MODEL_STREAM_INFER_RESPONSE__INIT;
	Inference__ModelInferResponse ir = INFERENCE__MODEL_INFER_RESPONSE__INIT;
	grpc_byte_buffer *b;

	ir.id = (char *)(id ? id : "");
	sr.error_message = (char *)msg;
	sr.infer_response = &ir;
	b = serve_grpc_pack(&sr.base);
	if (b)
		serve_grpc_call_send(c, b);
}

static void send_response(struct grpc_callctx *c, Inference__ModelInferResponse *ir)
{
	grpc_byte_buffer *b;

	if (c->kind == GRPC_CALL_STREAM) {
		Inference__ModelStreamInferResponse sr =
			INFERENCE__MODEL_STREAM_INFER_RESPONSE__INIT;

		sr.infer_response = ir;
		b = serve_grpc_pack(&sr.base);
	} else {
		b = serve_grpc_pack(&ir->base);
	}
	if (b)
		serve_grpc_call_send(c, b);
}

/* serve_job_take's callback (job locked): the batch as messages on the call. */
static int take(void *arg, const struct serve_job_batch *b)
{
	struct grpc_req *q = arg;
	struct grpc_callctx *c = q->c;
	const struct serve_model_config *cfg = &q->model->entry->config;
	Inference__ModelInferResponse *ir = NULL;
	struct rbln_error err = { 0 };
	int rc;

	if (b->status) {
		if (c->kind == GRPC_CALL_STREAM)
			send_stream_error(c, b->ctx->id, b->error);
		else
			serve_grpc_call_finish(c, b->status == 503 && strstr(b->error, "timeout")
					 ? GRPC_STATUS_DEADLINE_EXCEEDED
					 : b->status == 503 ? GRPC_STATUS_UNAVAILABLE
					 : b->status == 400 ? GRPC_STATUS_CANCELLED
					 : GRPC_STATUS_INTERNAL, b->error);
		return 0;
	}
	rc = serve_grpc_infer_response(b, cfg, b->final && !q->empty_final, true, &ir, &err);
	if (rc)
		return rc;
	send_response(c, ir);
	serve_grpc_infer_response_free(ir);
	if (b->final && q->empty_final && c->kind == GRPC_CALL_STREAM) {
		rc = serve_grpc_infer_response(b, cfg, true, false, &ir, &err);
		if (rc)
			return rc;
		send_response(c, ir);
		serve_grpc_infer_response_free(ir);
	}
	if (b->final && c->kind == GRPC_CALL_INFER)
		serve_grpc_call_finish(c, GRPC_STATUS_OK, NULL);
	return 0;
}

/*
 * The request is over: unlink it from its call and drop its references.
 * Unlinked before its job is put: serve_grpc_call_cancel_requests() reads
 * the jobs of the call's linked requests, and a deadline ends the job and
 * cancels the call at the same moment.
 */
static void req_done(struct grpc_req *q)
{
	struct grpc_callctx *c = q->c;
	struct serve_grpc *g = c->g;

	pthread_mutex_lock(&c->lock);
	if (q->prev)
		q->prev->next = q->next;
	else
		c->reqs = q->next;
	if (q->next)
		q->next->prev = q->prev;
	pthread_mutex_unlock(&c->lock);
	if (q->job) {
		serve_job_set_notify(q->job, NULL, NULL, false);
		pthread_mutex_lock(&g->lock);
		if (q->queued) {
			struct grpc_req **pp = &g->pending_head, *prev = NULL;

			while (*pp != q) {
				prev = *pp;
				pp = &(*pp)->next_pending;
			}
			*pp = q->next_pending;
			if (g->pending_tail == q)
				g->pending_tail = prev;
		}
		pthread_mutex_unlock(&g->lock);
		serve_job_put(q->job);
	}
	free(q);
	serve_grpc_call_maybe_end(c);
	serve_grpc_callctx_unref(c);
}

void *serve_grpc_sender_main(void *arg)
{
	struct serve_grpc *g = arg;

	for (;;) {
		struct grpc_req *q;
		int rc;

		pthread_mutex_lock(&g->lock);
		while (!g->pending_head && !g->stop_sender)
			pthread_cond_wait(&g->cond, &g->lock);
		q = g->pending_head;
		if (!q) {
			pthread_mutex_unlock(&g->lock);
			break;
		}
		g->pending_head = q->next_pending;
		if (!g->pending_head)
			g->pending_tail = NULL;
		q->queued = false;
		pthread_mutex_unlock(&g->lock);
		while ((rc = serve_job_take(q->job, take, q)) == 1)
			;
		if (rc < 0)
			fprintf(stderr, "rbln-serve: gRPC: a response could not be built (%s)\n",
				strerror(-rc));
		if (serve_job_finished(q->job))
			req_done(q);
	}
	return NULL;
}

/* The model a request names, or an error (NOT_FOUND-like wording of Triton). */
static struct serve_model *find_model(struct serve_server *s,
				      const Inference__ModelInferRequest *rq,
				      struct rbln_error *err)
{
	struct serve_model *m = serve_server_model(s, rq->model_name, rq->model_version);

	if (m)
		return m;
	if (*rq->model_version)
		rbln_error_set(err, -ENOENT, "Request for unknown model: '%s' version %s is not "
			       "found", rq->model_name, rq->model_version);
	else
		rbln_error_set(err, -ENOENT, "Request for unknown model: '%s' is not found",
			       rq->model_name);
	return NULL;
}

/* The call's deadline (grpc-timeout) as a job timeout in microseconds; 0: none. */
static int64_t deadline_us(const struct grpc_callctx *c)
{
	gpr_timespec d = gpr_convert_clock_type(c->details.deadline, GPR_CLOCK_MONOTONIC);
	gpr_timespec now = gpr_now(GPR_CLOCK_MONOTONIC);
	int64_t us;

	if (gpr_time_cmp(d, gpr_inf_future(GPR_CLOCK_MONOTONIC)) >= 0)
		return 0;
	us = (d.tv_sec - now.tv_sec) * 1000000 + (d.tv_nsec - now.tv_nsec) / 1000;
	return us > 0 ? us : 1;
}

static void fail(struct grpc_callctx *c, const char *id, int code, const char *msg)
{
	if (c->kind == GRPC_CALL_STREAM)
		send_stream_error(c, id, msg);
	else
		serve_grpc_call_finish(c, serve_grpc_status_of(code), msg);
}

/* Parsed and built: the job, submitted; or why not. */
static int start_job(struct grpc_callctx *c, struct grpc_req *q, struct serve_request *r,
		     struct serve_grpc_infer_opts *o, struct rbln_error *err)
{
	struct serve_server *s = c->g->srv;
	struct serve_model *m = q->model;
	struct serve_built b;
	struct serve_job *job;
	int64_t dl = deadline_us(c);
	int rc;

	if (dl && (!r->timeout_us || dl < r->timeout_us))
		r->timeout_us = dl;
	rc = serve_request_build(&m->text, r, &b, err);
	if (rc) {
		atomic_fetch_add(&m->metrics.failure[SERVE_FAIL_OTHER], 1);
		return rc;
	}
	if (atomic_load(&s->draining) || serve_model_state(m) != SERVE_MODEL_READY) {
		atomic_fetch_add(&m->metrics.failure[SERVE_FAIL_REJECTED], 1);
		serve_built_free(&b);
		if (atomic_load(&s->draining))
			return rbln_error_set(err, -ESHUTDOWN, "the server is shutting down");
		return rbln_error_set(err, -EAGAIN, "model '%s' is not ready: %s", m->name,
				      serve_model_state(m) == SERVE_MODEL_LOADING
				      ? "still loading" : m->reason);
	}
	job = serve_job_new(s, m, r, &b, err);
	pthread_mutex_lock(&c->lock);	/* serve_grpc_call_cancel_requests() reads it */
	q->job = job;
	pthread_mutex_unlock(&c->lock);
	if (!job) {
		/* -EAGAIN: the model was unloaded since the check above */
		if (err->code == -EAGAIN)
			atomic_fetch_add(&m->metrics.failure[SERVE_FAIL_REJECTED], 1);
		serve_built_free(&b);
		return err->code;
	}
	rc = serve_job_submit(job, err);
	if (rc == -EBUSY || rc == -EAGAIN)
		rbln_error_set(err, rc, "the waiting queue of model '%s' is full (%u requests): "
			       "try again later", m->name, m->max_waiting);
	/*
	 * Set once submitted: setting it queues the request for the output so
	 * far, and from then on the request is the sender thread's, which may
	 * free it before this returns (a job that a deadline of a few ms ends
	 * at once). A refused job never notifies, so its caller frees it.
	 */
	if (!rc)
		serve_job_set_notify(job, notify, q, o->stream);
	return rc;
}

void serve_grpc_infer_request(struct grpc_callctx *c, const grpc_byte_buffer *msg)
{
	struct serve_server *s = c->g->srv;
	Inference__ModelInferRequest *rq;
	struct serve_grpc_infer_opts o;
	struct rbln_error err = { 0 };
	struct serve_request r;
	struct grpc_req *q;
	size_t len;
	uint8_t *data = serve_grpc_read_all(msg, &len);
	int rc;

	rq = data ? inference__model_infer_request__unpack(NULL, len, data) : NULL;
	free(data);
	if (!rq) {
		fail(c, NULL, -EINVAL, "the request is not a valid inference.ModelInferRequest");
		return;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		fail(c, rq->id, -ENOMEM, "out of memory");
		inference__model_infer_request__free_unpacked(rq, NULL);
		return;
	}
	q->c = c;
	serve_grpc_callctx_ref(c);	/* the request's */
	pthread_mutex_lock(&c->lock);
	q->next = c->reqs;
	if (c->reqs)
		c->reqs->prev = q;
	c->reqs = q;
	pthread_mutex_unlock(&c->lock);
	q->model = find_model(s, rq, &err);
	rc = q->model ? serve_grpc_parse_infer(&q->model->entry->config, rq,
					       c->kind == GRPC_CALL_STREAM, &r, &o, &err)
		      : err.code;
	/* a bad request for a model counts among its failures (Triton's OTHER) */
	if (rc && q->model)
		atomic_fetch_add(&q->model->metrics.failure[SERVE_FAIL_OTHER], 1);
	q->empty_final = !rc && o.empty_final;
	if (!rc) {
		rc = start_job(c, q, &r, &o, &err);
		serve_request_free(&r);
	}
	if (rc) {
		fail(c, rq->id, rc, err.msg);
		inference__model_infer_request__free_unpacked(rq, NULL);
		req_done(q);
		return;
	}
	inference__model_infer_request__free_unpacked(rq, NULL);
}

void serve_grpc_call_cancel_requests(struct grpc_callctx *c)
{
	uint64_t *ids = NULL;
	size_t n = 0, cap = 0, i;
	struct grpc_req *q;

	pthread_mutex_lock(&c->lock);
	for (q = c->reqs; q; q = q->next)
		cap++;
	ids = calloc(cap ? cap : 1, sizeof(*ids));
	for (q = c->reqs; ids && q; q = q->next)
		if (q->job)
			ids[n++] = serve_job_id(q->job);
	pthread_mutex_unlock(&c->lock);
	/* out of memory: the deadline or the engine still ends them */
	for (i = 0; i < n; i++)
		serve_jobs_cancel(c->g->srv, ids[i]);
	free(ids);
}
