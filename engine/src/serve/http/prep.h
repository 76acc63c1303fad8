/* SPDX-License-Identifier: MIT */
/*
 * Request preparation workers.  Parsing a body of up to
 * --http-max-input-size bytes, rendering a chat template and tokenizing a
 * prompt take CPU time in proportion to the request; done on
 * libmicrohttpd's threads they would stall every other connection of that
 * thread.  The handler suspends its connection and hands the work to this
 * pool; the task resumes the connection when it is done.
 */
#ifndef RBLN_SERVE_PREP_H
#define RBLN_SERVE_PREP_H

struct serve_prep;

struct serve_prep_task {
	void (*run)(struct serve_prep_task *t);	/* on a worker thread */
	struct serve_prep_task *next;
};

struct serve_prep *serve_prep_start(unsigned threads);
/* Queues t; -ESHUTDOWN once stopping began (t is not run). */
int serve_prep_submit(struct serve_prep *p, struct serve_prep_task *t);
/* Runs what is queued, then joins the workers. */
void serve_prep_stop(struct serve_prep *p);

#endif
