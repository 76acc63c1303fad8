/* SPDX-License-Identifier: MIT */
/*
 * rbln-serve's HTTP service (port 8000) and metrics service (port 8002) on
 * libmicrohttpd: the daemons, the models they serve, the in-flight
 * generation jobs, and graceful shutdown (stop accepting, finish what is
 * running, then stop).
 */
#ifndef RBLN_SERVE_SERVER_H
#define RBLN_SERVE_SERVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model_control.h"
#include "rbln_error.h"
#include "serve/model/served_model.h"

struct serve_guard;
struct serve_job;
struct serve_prep;
struct serve_watch;
struct MHD_Daemon;

struct serve_options {
	const char *host;		/* listen address, "0.0.0.0" */
	unsigned http_port;		/* 8000; 0 picks a free port */
	unsigned metrics_port;		/* 8002; 0 picks a free port */
	bool allow_metrics;
	unsigned http_threads;		/* libmicrohttpd thread pool size */
	size_t max_input_size;		/* request body limit in bytes */
	uint32_t max_queue_size;	/* waiting-queue bound of a model without one */
	uint64_t request_timeout_us;	/* deadline of requests that set none; 0 = none */
	/* Bounds on clients, on each port (see Documentation/serving.md). */
	unsigned max_connections;	/* open connections */
	unsigned max_connections_per_client;	/* from one address; 0 = no limit */
	unsigned idle_timeout_s;	/* inactivity; 0 = none */
	unsigned header_timeout_s;	/* a request's headers must arrive within */
	unsigned body_timeout_s;	/* its body must then arrive within */
	unsigned prep_threads;		/* parse, template, tokenize off the HTTP threads */
	const char *api_key;		/* required on every route but health and metrics */
	const char *ssl_certfile;	/* PEM; with ssl_keyfile: HTTPS on the HTTP port */
	const char *ssl_keyfile;
	enum serve_control_mode control_mode;	/* --model-control-mode */
};

/* Triton's defaults: 64 MiB bodies; the queue bound is ours (Triton has none). */
#define SERVE_DEFAULT_MAX_INPUT (64u << 20)
#define SERVE_DEFAULT_MAX_QUEUE 1024u
#define SERVE_DEFAULT_MAX_CONNECTIONS 2048u
#define SERVE_DEFAULT_MAX_PER_CLIENT 128u
#define SERVE_DEFAULT_IDLE_TIMEOUT_S 60u
#define SERVE_DEFAULT_HEADER_TIMEOUT_S 30u
#define SERVE_DEFAULT_BODY_TIMEOUT_S 120u
#define SERVE_DEFAULT_PREP_THREADS 2u
/*
 * Bodies larger than this are prepared by a worker of their own, so that
 * a few huge requests cannot keep every worker from the ordinary ones.
 */
#define SERVE_PREP_BULK_BYTES (256u << 10)
#define SERVE_PREP_BULK_THREADS 1u

struct serve_server {
	struct serve_options opt;
	struct serve_model *models;
	size_t n_models;
	struct MHD_Daemon *http;
	struct MHD_Daemon *metrics;
	int quiesced_fd;		/* the listening socket after a drain began */
	unsigned http_port;		/* as bound */
	unsigned metrics_port;
	struct serve_watch *watch;
	struct serve_guard *http_guard;	/* arrival deadlines of each port */
	struct serve_guard *metrics_guard;
	struct serve_prep *prep;	/* request preparation workers */
	struct serve_prep *prep_bulk;	/* the same for large bodies (prep.h) */
	pthread_mutex_t prep_lock;	/* orders a handler's suspend before a worker's resume */
	char *tls_cert, *tls_key;	/* PEM text of --ssl-certfile/--ssl-keyfile */
	pthread_mutex_t lock;		/* jobs list */
	pthread_cond_t idle;		/* signalled when the list empties */
	struct serve_job *jobs;
	size_t n_jobs;
	atomic_bool draining;
	atomic_uint_least64_t next_id;
};

void serve_options_default(struct serve_options *o);

/* Binds both services; models must be prepared (and started, to be READY). */
int serve_server_start(struct serve_server *s, const struct serve_options *o,
		       struct serve_model *models, size_t n_models, struct rbln_error *err);

/*
 * Graceful shutdown, first half: no new connections, new generation
 * requests get 503, and this waits until in-flight jobs are done
 * (timeout_ms < 0: no limit).  Returns the number still running.
 */
size_t serve_server_drain(struct serve_server *s, long timeout_ms);

/* Cancels every in-flight job (their clients get what was generated so far or an error). */
void serve_server_cancel_all(struct serve_server *s);

/* Stops both services (after a drain, or a cancel and a drain). */
void serve_server_stop(struct serve_server *s);

/* The model of a name and version ("" for the one served); NULL if unknown. */
static inline struct serve_model *serve_server_model(struct serve_server *s, const char *name,
						     const char *version)
{
	return serve_model_find(s->models, s->n_models, name, version);
}

#endif
