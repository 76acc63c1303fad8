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

#include "serve/api/request.h"
#include "serve/api/request_build.h"
#include "serve/api/responses.h"
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

/*
 * A consumer that is not an HTTP connection (gRPC): fn(arg) is called with
 * the job's lock held (so it must not call back into the job) when there is
 * something to take: after every engine event with every, else at the end.
 * Setting fn also calls it once, under the same lock, for what came before
 * (the job may even be over): the caller must not touch arg after this
 * returns, since the consumer may be done with it.  Set it after a
 * successful submit.  fn NULL: no more calls once this returns.
 */
typedef void (*serve_job_notify_fn)(void *arg);
void serve_job_set_notify(struct serve_job *j, serve_job_notify_fn fn, void *arg, bool every);

/* What serve_job_take hands over: one piece per sequence, or a failure. */
struct serve_job_batch {
	const struct serve_resp_ctx *ctx;
	const struct serve_piece *pieces;	/* NULL when status is set */
	size_t n;
	bool final;		/* every sequence is finished: nothing comes after */
	unsigned status;	/* a sequence failed: HTTP status (503, 400, 500), or 0 */
	const char *error;	/* and why */
};
typedef int (*serve_job_batch_fn)(void *arg, const struct serve_job_batch *b);

/*
 * Takes what is new: when the request streams, the pieces of output not
 * yet taken (text deltas); otherwise, once every sequence finished, the
 * whole output.  fn runs under the job's lock.  Returns 0 when there was
 * nothing to take (fn not called), 1 after fn returned 0, else fn's error.
 */
int serve_job_take(struct serve_job *j, serve_job_batch_fn fn, void *arg);

/* True once serve_job_take has handed over the last batch. */
bool serve_job_finished(struct serve_job *j);

/* SSE: libmicrohttpd's content reader (suspends the connection when there is nothing). */
ssize_t serve_job_read(void *cls, uint64_t pos, char *buf, size_t max);
/* SSE: the response's free callback (drops the response's reference). */
void serve_job_response_done(void *cls);

#endif
