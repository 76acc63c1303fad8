/* SPDX-License-Identifier: MIT */
/*
 * A generation job: one HTTP request's sequences in the engine.  It joins
 * the engine's event callbacks (engine threads) to the HTTP connection
 * (libmicrohttpd threads): events feed each sequence's text stream under
 * the job's lock, and the connection is woken to send what is new (SSE)
 * or the whole answer when everything is finished.  A job lives until the
 * connection is done with it and every submitted sequence has had its
 * final event, whichever comes last (reference counted).
 */
#ifndef RBLN_SERVE_JOB_H
#define RBLN_SERVE_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "request.h"
#include "request_build.h"
#include "server.h"
#include "util/strbuf.h"

struct MHD_Connection;

/*
 * Takes over r and b (left zeroed).  The job starts with one reference,
 * the connection's.
 */
struct serve_job *serve_job_new(struct serve_server *s, struct serve_model *m,
				struct serve_request *r, struct serve_built *b,
				struct rbln_error *err);

/*
 * Submits every sequence to the engine.  On failure the sequences already
 * submitted are cancelled and the error (e.g. -EBUSY: queue full) returned.
 */
int serve_job_submit(struct serve_job *j, struct rbln_error *err);

/* Binds the job to its connection (to wake it) and watches the socket for hang-ups. */
void serve_job_attach(struct serve_job *j, struct MHD_Connection *conn, int fd);

/* The client is gone: cancel what runs, drop the connection's reference. */
void serve_job_detach(struct serve_job *j, bool client_gone);

void serve_job_cancel(struct serve_job *j);

/*
 * Cancels the in-flight job with this id (its client hung up), or every
 * job when id is 0 (forced shutdown).
 */
void serve_jobs_cancel(struct serve_server *s, uint64_t id);
void serve_job_get(struct serve_job *j);
void serve_job_put(struct serve_job *j);
uint64_t serve_job_id(const struct serve_job *j);
bool serve_job_sse(const struct serve_job *j);

/*
 * Non-SSE: 1 when every sequence is finished (build the response now),
 * 0 when the connection was suspended until then.
 */
int serve_job_wait(struct serve_job *j);

/* Non-SSE: the whole response (status, body, content type, JSON length for infer). */
int serve_job_response(struct serve_job *j, unsigned *status, struct rbln_strbuf *body,
		       const char **content_type, size_t *json_len);

/* SSE: libmicrohttpd's content reader (suspends the connection when there is nothing). */
ssize_t serve_job_read(void *cls, uint64_t pos, char *buf, size_t max);
/* SSE: the response's free callback (drops the response's reference). */
void serve_job_response_done(void *cls);

#endif
