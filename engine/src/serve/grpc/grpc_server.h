/* SPDX-License-Identifier: MIT */
/*
 * rbln-serve's gRPC service (port 8001): inference.GRPCInferenceService of
 * KServe v2 with Triton's extensions, on the gRPC core C API, serving the
 * same models, jobs and metrics as the HTTP service (server.h).
 */
#ifndef RBLN_SERVE_GRPC_SERVER_H
#define RBLN_SERVE_GRPC_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "rbln_error.h"
#include "serve/http/server.h"

/* tritonserver's flags of the same names, and its defaults. */
struct serve_grpc_options {
	unsigned port;				/* 8001; 0 picks a free port */
	int keepalive_time_ms;			/* 7200000 */
	int keepalive_timeout_ms;		/* 20000 */
	bool keepalive_permit_without_calls;	/* false */
	int http2_max_pings_without_data;	/* 2 */
	int http2_min_recv_ping_interval_ms;	/* 300000 */
};

void serve_grpc_options_default(struct serve_grpc_options *o);

struct serve_grpc;

/*
 * Listens on s's host and o->port; messages larger than s's
 * max_input_size are refused (RESOURCE_EXHAUSTED).
 */
int serve_grpc_start(struct serve_server *s, const struct serve_grpc_options *o,
		     struct serve_grpc **out, struct rbln_error *err);

/* The port as bound. */
unsigned serve_grpc_port(const struct serve_grpc *g);

/*
 * Drain, first half: no new calls (the port is closed); calls in progress
 * go on, and new requests on open streams are answered "shutting down".
 */
void serve_grpc_shutdown(struct serve_grpc *g);

/*
 * Waits up to grace_ms for the calls in progress to end (their last
 * responses sent), cancels what remains, and frees everything.
 */
void serve_grpc_stop(struct serve_grpc *g, long grace_ms);

#endif
