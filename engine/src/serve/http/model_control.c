// SPDX-License-Identifier: MIT
/* Loading and unloading models at run time (see model_control.h). */
#include "model_control.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "server.h"
#include "util/text.h"

#define UNLOADED_REASON "unloaded"

static const char *const control_mode_names[] = {
	[SERVE_CONTROL_NONE] = "none", [SERVE_CONTROL_EXPLICIT] = "explicit", NULL,
};

int serve_control_mode_parse(const char *s, enum serve_control_mode *out)
{
	int v = rbln_name_index(control_mode_names, s);

	if (v >= 0)
		*out = (enum serve_control_mode)v;
	return v < 0 ? v : 0;
}

bool serve_model_hold(struct serve_model *m)
{
	bool ok;

	pthread_mutex_lock(&m->ctl_lock);
	ok = serve_model_state(m) == SERVE_MODEL_READY;
	if (ok)
		m->holders++;
	pthread_mutex_unlock(&m->ctl_lock);
	return ok;
}

/* Closes the engine of a model whose last request ended. */
static void close_engine(struct serve_model *m)
{
	m->ops->close(m->engine);
	pthread_mutex_lock(&m->ctl_lock);
	m->engine = NULL;
	snprintf(m->reason, sizeof(m->reason), UNLOADED_REASON);
	atomic_store(&m->state, SERVE_MODEL_UNAVAILABLE);
	pthread_cond_broadcast(&m->ctl_cond);
	pthread_mutex_unlock(&m->ctl_lock);
}

static void *closer(void *arg)
{
	close_engine(arg);
	return NULL;
}

void serve_model_unhold(struct serve_model *m)
{
	pthread_attr_t attr;
	pthread_t t;
	bool last;

	pthread_mutex_lock(&m->ctl_lock);
	last = !--m->holders && serve_model_state(m) == SERVE_MODEL_UNLOADING;
	pthread_mutex_unlock(&m->ctl_lock);
	if (!last)
		return;
	/*
	 * The last hold may end on one of the engine's own threads (a request
	 * finishing in its callback), which cannot wait for the engine to
	 * stop: the engine closes on a thread of its own.
	 */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, closer, m))
		close_engine(m);	/* no thread to spare: here, as a last resort */
	pthread_attr_destroy(&attr);
}

bool serve_model_ready_or_unloaded(struct serve_model *m)
{
	bool ok;

	pthread_mutex_lock(&m->ctl_lock);
	ok = serve_model_state(m) == SERVE_MODEL_READY ||
	     (serve_model_state(m) == SERVE_MODEL_UNAVAILABLE &&
	      !strcmp(m->reason, UNLOADED_REASON));
	pthread_mutex_unlock(&m->ctl_lock);
	return ok;
}

void serve_model_set_unloaded(struct serve_model *m, const struct rbln_serving_ops *ops)
{
	m->ops = ops;
	snprintf(m->reason, sizeof(m->reason), UNLOADED_REASON);
	atomic_store(&m->state, SERVE_MODEL_UNAVAILABLE);
}

/* The model a repository request names, when the mode lets it be loaded or unloaded. */
static struct serve_model *controlled(struct serve_server *s, const char *name, const char *verb,
				      struct rbln_error *err)
{
	struct serve_model *m;

	if (s->opt.control_mode != SERVE_CONTROL_EXPLICIT) {
		/* tritonserver's answer outside explicit mode */
		rbln_error_set(err, -ENOSYS, "explicit model load / unload is not allowed if "
			       "polling is enabled (rbln-serve runs with --model-control-mode none; "
			       "start it with --model-control-mode explicit to %s models)", verb);
		return NULL;
	}
	m = serve_server_model(s, name, NULL);
	if (!m)
		rbln_error_set(err, -ENOENT, "failed to %s '%s': no model of that name in the "
			       "repository", verb, name);
	return m;
}

int serve_model_load(struct serve_server *s, const char *name, struct rbln_error *err)
{
	struct serve_model *m = controlled(s, name, "load", err);
	enum serve_model_state st;
	int rc;

	if (!m)
		return err->code;
	pthread_mutex_lock(&m->ctl_lock);
	while ((st = serve_model_state(m)) == SERVE_MODEL_LOADING)
		pthread_cond_wait(&m->ctl_cond, &m->ctl_lock);	/* another load: its result */
	if (st == SERVE_MODEL_UNAVAILABLE)
		atomic_store(&m->state, SERVE_MODEL_LOADING);
	pthread_mutex_unlock(&m->ctl_lock);
	if (st == SERVE_MODEL_READY)
		return 0;
	if (st == SERVE_MODEL_UNLOADING)
		return rbln_error_set(err, -EBUSY, "failed to load '%s': it is still unloading "
				      "(%u requests in flight); try again when they are done",
				      name, m->holders);
	/* the engine opens (compiling on first load) outside the lock: requests see LOADING */
	rc = serve_model_start(m, m->ops, s->opt.max_queue_size, err);
	pthread_mutex_lock(&m->ctl_lock);
	pthread_cond_broadcast(&m->ctl_cond);
	pthread_mutex_unlock(&m->ctl_lock);
	if (rc)
		rbln_error_prefix(err, "failed to load '%s': ", name);
	return rc;
}

int serve_model_unload(struct serve_server *s, const char *name, struct rbln_error *err)
{
	struct serve_model *m = controlled(s, name, "unload", err);
	bool close_now = false;

	if (!m)
		return err->code;
	pthread_mutex_lock(&m->ctl_lock);
	while (serve_model_state(m) == SERVE_MODEL_LOADING)
		pthread_cond_wait(&m->ctl_cond, &m->ctl_lock);
	if (serve_model_state(m) == SERVE_MODEL_READY) {
		snprintf(m->reason, sizeof(m->reason), "unloading");
		atomic_store(&m->state, SERVE_MODEL_UNLOADING);
		close_now = !m->holders;
	}
	pthread_mutex_unlock(&m->ctl_lock);
	if (close_now)
		close_engine(m);
	return 0;
}
