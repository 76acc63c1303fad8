/* SPDX-License-Identifier: MIT */
/*
 * The route handlers the dispatcher (http_server.c, metrics_server.c's
 * daemon) calls.  The handlers answer through reply.h and find models
 * through server.h's serve_server_model(); none of them calls back into
 * the dispatcher.
 */
#ifndef RBLN_SERVE_HANDLERS_H
#define RBLN_SERVE_HANDLERS_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

#include "http.h"

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
