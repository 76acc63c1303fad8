/* SPDX-License-Identifier: MIT */
/* What the HTTP service's files share: the per-request context and reply helpers. */
#ifndef RBLN_SERVE_HTTP_H
#define RBLN_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>
#include <microhttpd.h>

#include "prep.h"
#include "request.h"
#include "request_build.h"
#include "responses.h"
#include "router.h"
#include "server.h"
#include "util/strbuf.h"

#ifndef RBLN_SERVE_VERSION
#define RBLN_SERVE_VERSION "0.0.0"
#endif

/* Where a generating request is with its preparation (prep.h). */
enum serve_prep_state { SERVE_PREP_NONE, SERVE_PREP_RUNNING, SERVE_PREP_DONE };

/* What the preparation of a generating request leaves for the handler. */
struct serve_prepared {
	struct serve_model *model;
	size_t infer_json_len;		/* the Inference-Header-Content-Length */
	struct serve_request req;	/* valid when ok */
	struct serve_built built;
	bool ok;
	unsigned status;		/* else the error's */
	char msg[RBLN_ERROR_MSG_MAX];
};

/* One HTTP request (libmicrohttpd's per-request closure). */
struct serve_conn {
	struct serve_server *srv;
	struct MHD_Connection *conn;
	struct serve_route route;
	bool method_ok;
	bool arrived;			/* the body is complete */
	bool decoded;			/* and inflated by its Content-Encoding */
	struct rbln_strbuf body;
	size_t body_total;		/* bytes received, kept or not */
	struct serve_job *job;		/* a generation in flight, or NULL */
	struct serve_prep_task task;
	_Atomic int prep_state;		/* enum serve_prep_state */
	struct serve_prepared prep;
};

/* Queues a reply with a body (copied); extra_header may be NULL. */
enum MHD_Result serve_http_reply(struct MHD_Connection *c, unsigned status,
				 const char *content_type, const void *data, size_t len,
				 const char *extra_header, const char *extra_value);
/* Queues o (and drops it) as application/json. */
enum MHD_Result serve_http_json(struct MHD_Connection *c, unsigned status, json_object *o);
/*
 * Errors never show where the server keeps its files: an absolute path in
 * msg is cut to its last component (the routes /v1/... and /v2/... stay).
 */
void serve_redact_paths(char *msg);
/* {"error": msg} (paths redacted), or OpenAI's error object for the /v1 routes. */
enum MHD_Result serve_http_error(struct MHD_Connection *c, unsigned status, const char *msg,
				 bool openai);
/* The HTTP status of a negative errno (Triton's mapping). */
unsigned serve_http_status(int err);

/* GET endpoints of KServe and /v1/models. */
enum MHD_Result serve_handle_info(struct serve_conn *cx, struct MHD_Connection *c);
/* The generating endpoints; called again when a suspended request resumes. */
enum MHD_Result serve_handle_generate(struct serve_conn *cx, struct MHD_Connection *c);
/*
 * Work off the HTTP threads (http_offload.c): run goes to a worker of pool
 * while the connection waits suspended (0; -ESHUTDOWN when the pool is
 * stopping); the worker ends with serve_conn_offload_done, which resumes
 * it, and the handler, called again, reads where the work is.
 */
int serve_conn_offload(struct serve_conn *cx, struct MHD_Connection *c, struct serve_prep *pool,
		       void (*run)(struct serve_prep_task *t));
void serve_conn_offload_done(struct serve_conn *cx);
enum serve_prep_state serve_conn_offload_state(struct serve_conn *cx);

/* The index request's body ({"ready": true} lists READY models only); -EINVAL, msg. */
int serve_index_request(const struct serve_conn *cx, bool *ready_only, char *msg, size_t len);
/* The repository's load and unload (handlers_repo.c); called again when resumed. */
enum MHD_Result serve_handle_repo(struct serve_conn *cx, struct MHD_Connection *c);
/* Frees what a preparation left that no job took over. */
void serve_prepared_free(struct serve_prepared *p);

/* The metrics service's request handler. */
enum MHD_Result serve_metrics_handler(void *cls, struct MHD_Connection *c, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_data_size,
				      void **con_cls);

#endif
