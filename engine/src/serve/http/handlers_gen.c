// SPDX-License-Identifier: MIT
/*
 * The generating endpoints: KServe infer, generate and generate_stream,
 * OpenAI completions and chat.  Order of checks: model (404), body (400),
 * request against the model (400: lengths, parameters), readiness and
 * shutdown (503), then the engine's queue (503 when full).  A whole answer
 * suspends the connection until the engine is done; a stream answers 200
 * at once and sends events as they come.
 */
#include "handlers.h"
#include "reply.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "serve/api/request.h"
#include "serve/api/request_build.h"

static bool openai_route(enum serve_route_kind k)
{
	return k == SERVE_R_V1_COMPLETIONS || k == SERVE_R_V1_CHAT;
}

static enum MHD_Result respond_job(struct serve_conn *cx, struct MHD_Connection *c)
{
	struct rbln_strbuf body = { 0 };
	const char *ctype;
	unsigned status;
	size_t json_len;
	char len_text[24];
	enum MHD_Result ret;

	if (serve_job_response(cx->job, &status, &body, &ctype, &json_len)) {
		rbln_strbuf_free(&body);
		return serve_http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory",
					openai_route(cx->route.kind));
	}
	snprintf(len_text, sizeof(len_text), "%zu", json_len);
	/*
	 * binary tensor data follows the JSON: say where the JSON ends.  Only
	 * a successful answer is compressed, as tritonserver does (reply.h).
	 */
	ret = (status == MHD_HTTP_OK ? serve_http_reply_encoded : serve_http_reply)(
		c, status, ctype, body.data ? body.data : "", body.len,
		json_len < body.len ? "Inference-Header-Content-Length" : NULL, len_text);
	rbln_strbuf_free(&body);
	return ret;
}

static enum MHD_Result start_stream(struct serve_conn *cx, struct MHD_Connection *c)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, serve_job_read, cx->job,
					      serve_job_response_done);
	if (!r)
		return MHD_NO;
	serve_job_get(cx->job);	/* the response's reference */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream; charset=utf-8");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* The model an OpenAI request names (or the only one served). */
static struct serve_model *openai_model(struct serve_server *s, const struct serve_request *r,
					char *msg, size_t len, unsigned *status)
{
	struct serve_model *m;

	if (!r->model) {
		if (s->n_models == 1)
			return &s->models[0];
		snprintf(msg, len, "field 'model' is required: %zu models are served", s->n_models);
		*status = MHD_HTTP_BAD_REQUEST;
		return NULL;
	}
	m = serve_server_model(s, r->model, NULL);
	if (!m) {
		snprintf(msg, len, "The model `%.200s` does not exist.", r->model);
		*status = MHD_HTTP_NOT_FOUND;
	}
	return m;
}

static size_t header_length(struct MHD_Connection *c, size_t body_len)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    "Inference-Header-Content-Length");
	char *end;
	unsigned long long v;

	if (!h)
		return body_len;
	v = strtoull(h, &end, 10);
	/* a bad value reads as larger than the body: the parser reports it */
	if (end == h || *end)
		return body_len + 1;
	return (size_t)v;
}

static int parse(struct serve_conn *cx, struct serve_model *m, struct serve_request *r,
		 struct rbln_error *err)
{
	const char *body = cx->body.data ? cx->body.data : "";
	size_t len = cx->body.len;

	switch (cx->route.kind) {
	case SERVE_R_GENERATE:
	case SERVE_R_GENERATE_STREAM:
		return serve_parse_generate(&m->entry->config, body, len,
					    cx->route.kind == SERVE_R_GENERATE_STREAM, r, err);
	case SERVE_R_INFER:
		return serve_parse_infer(&m->entry->config, body, len, cx->prep.infer_json_len, r,
					 err);
	case SERVE_R_V1_COMPLETIONS:
		return serve_parse_completions(body, len, r, err);
	default:
		return serve_parse_chat(body, len, r, err);
	}
}

void serve_prepared_free(struct serve_prepared *p)
{
	if (!p->ok)
		return;
	serve_built_free(&p->built);
	serve_request_free(&p->req);
	p->ok = false;
}

/*
 * On a preparation worker: the body parsed, the model of an OpenAI body
 * found, the prompt rendered and tokenized.  The result waits in cx->prep
 * for the handler, which the resumed connection calls again.
 */
static void prepare(struct serve_prep_task *t)
{
	struct serve_conn *cx = (struct serve_conn *)((char *)t - offsetof(struct serve_conn, task));
	struct serve_prepared *p = &cx->prep;
	bool openai = openai_route(cx->route.kind);
	struct rbln_error err = { 0 };
	int rc;

	/* OpenAI bodies name their model; KServe bodies are read against the model's config. */
	rc = parse(cx, p->model, &p->req, &err);
	if (rc) {
		p->status = serve_http_status(rc);
		snprintf(p->msg, sizeof(p->msg), "%s", err.msg);
		goto out;
	}
	if (openai) {
		p->model = openai_model(cx->srv, &p->req, p->msg, sizeof(p->msg), &p->status);
		if (!p->model) {
			serve_request_free(&p->req);
			goto out;
		}
	}
	rc = serve_request_build(&p->model->text, &p->req, &p->built, &err);
	if (rc) {
		serve_request_free(&p->req);
		p->status = serve_http_status(rc);
		snprintf(p->msg, sizeof(p->msg), "%s", err.msg);
		goto out;
	}
	p->ok = true;
out:
	serve_conn_offload_done(cx);
}

/* Hands the request to a preparation worker; the connection waits suspended. */
static enum MHD_Result start_prep(struct serve_conn *cx, struct MHD_Connection *c)
{
	cx->prep.infer_json_len = header_length(c, cx->body.len);
	struct serve_server *s = cx->srv;

	if (serve_conn_offload(cx, c, cx->body.len > SERVE_PREP_BULK_BYTES ? s->prep_bulk : s->prep,
			       prepare)) {
		return serve_http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE,
					"the server is shutting down", openai_route(cx->route.kind));
	}
	return MHD_YES;
}

enum MHD_Result serve_handle_generate(struct serve_conn *cx, struct MHD_Connection *c)
{
	struct serve_server *s = cx->srv;
	bool openai = openai_route(cx->route.kind);
	struct rbln_error err = { 0 };
	struct serve_prepared *p = &cx->prep;
	struct serve_model *m;
	const union MHD_ConnectionInfo *ci;
	char msg[RBLN_ERROR_MSG_MAX];
	int rc;

	if (cx->job) {
		/* resumed: the engine finished */
		if (!serve_job_wait(cx->job))
			return MHD_YES;
		return respond_job(cx, c);
	}
	switch (serve_conn_offload_state(cx)) {
	case SERVE_PREP_RUNNING:
		return MHD_YES;	/* called again while suspended: the worker resumes us */
	case SERVE_PREP_DONE:
		break;
	default:
		if (!openai) {
			p->model = serve_server_model(s, cx->route.model, cx->route.version);
			if (!p->model) {
				if (*cx->route.version)
					snprintf(msg, sizeof(msg), "Request for unknown model: '%s' "
						 "version %s is not found", cx->route.model,
						 cx->route.version);
				else
					snprintf(msg, sizeof(msg), "Request for unknown model: '%s' "
						 "is not found", cx->route.model);
				return serve_http_error(c, MHD_HTTP_NOT_FOUND, msg, false);
			}
		}
		return start_prep(cx, c);
	}
	if (!p->ok) {
		/* a bad request for a served model counts among its failures (Triton's OTHER) */
		if (p->model)
			atomic_fetch_add(&p->model->metrics.failure[SERVE_FAIL_OTHER], 1);
		return serve_http_error(c, p->status, p->msg, openai);
	}
	m = p->model;
	if (atomic_load(&s->draining) || serve_model_state(m) != SERVE_MODEL_READY) {
		if (atomic_load(&s->draining))
			snprintf(msg, sizeof(msg), "the server is shutting down");
		else
			snprintf(msg, sizeof(msg), "model '%s' is not ready: %s", m->name,
				 serve_model_state(m) == SERVE_MODEL_LOADING ? "still loading"
									    : m->reason);
		atomic_fetch_add(&m->metrics.failure[SERVE_FAIL_REJECTED], 1);
		serve_prepared_free(p);
		return serve_http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, msg, openai);
	}
	cx->job = serve_job_new(s, m, &p->req, &p->built, &err);
	p->ok = false;	/* the job took the request over, or freed it */
	if (!cx->job) {
		/* -EAGAIN: the model was unloaded since the check above */
		atomic_fetch_add(&m->metrics.failure[err.code == -EAGAIN ? SERVE_FAIL_REJECTED
									 : SERVE_FAIL_OTHER], 1);
		serve_built_free(&p->built);
		serve_request_free(&p->req);
		return serve_http_error(c, serve_http_status(err.code), err.msg, openai);
	}
	rc = serve_job_submit(cx->job, &err);
	if (rc) {
		if (rc == -EBUSY || rc == -EAGAIN)
			snprintf(msg, sizeof(msg), "the waiting queue of model '%s' is full (%u "
				 "requests): try again later", m->name, m->max_waiting);
		else
			snprintf(msg, sizeof(msg), "%s", err.msg);
		return serve_http_error(c, serve_http_status(rc), msg, openai);
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	serve_job_attach(cx->job, c, ci ? ci->connect_fd : -1);
	if (serve_job_sse(cx->job))
		return start_stream(cx, c);
	if (!serve_job_wait(cx->job))
		return MHD_YES;
	return respond_job(cx, c);
}
