// SPDX-License-Identifier: MIT
/*
 * Work of a request done off the HTTP threads (prep.h): the connection
 * waits suspended while a worker runs, and resumes when the worker is done.
 * The generating requests' preparation and the repository's load and
 * unload go this way.
 */
#include "handlers.h"
#include "reply.h"

#include <errno.h>

int serve_conn_offload(struct serve_conn *cx, struct MHD_Connection *c, struct serve_prep *pool,
		       void (*run)(struct serve_prep_task *t))
{
	struct serve_server *s = cx->srv;
	int rc;

	cx->task.run = run;
	atomic_store(&cx->prep_state, SERVE_PREP_RUNNING);
	pthread_mutex_lock(&s->prep_lock);
	rc = serve_prep_submit(pool, &cx->task);
	if (!rc)
		MHD_suspend_connection(c);
	pthread_mutex_unlock(&s->prep_lock);
	if (rc)
		atomic_store(&cx->prep_state, SERVE_PREP_NONE);
	return rc;
}

void serve_conn_offload_done(struct serve_conn *cx)
{
	struct serve_server *srv = cx->srv;
	struct MHD_Connection *conn = cx->conn;

	/*
	 * libmicrohttpd may call the handler again right after it suspended
	 * the connection; it proceeds only on DONE, read under this lock, so
	 * cx is not touched here once another thread can see DONE.  The lock
	 * also orders this resume after the handler's suspend.
	 */
	pthread_mutex_lock(&srv->prep_lock);
	atomic_store(&cx->prep_state, SERVE_PREP_DONE);
	MHD_resume_connection(conn);
	pthread_mutex_unlock(&srv->prep_lock);
}

enum serve_prep_state serve_conn_offload_state(struct serve_conn *cx)
{
	enum serve_prep_state st;

	pthread_mutex_lock(&cx->srv->prep_lock);
	st = (enum serve_prep_state)atomic_load(&cx->prep_state);
	pthread_mutex_unlock(&cx->srv->prep_lock);
	return st;
}
