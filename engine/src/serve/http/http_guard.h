/* SPDX-License-Identifier: MIT */
/*
 * Deadlines of a request's arrival, which libmicrohttpd does not have: its
 * connection timeout is an inactivity timeout, so a client that trickles one
 * header byte every few seconds (or a body at a byte a second) would hold
 * its connection for ever.  The guard gives each connection a deadline for
 * its request headers (from the connection's start, or from the end of the
 * previous request on a kept-alive connection) and then for its body; a
 * reaper thread ends the connections that miss theirs (408 on plain HTTP,
 * then shutdown(), which makes libmicrohttpd close it).  A request whose body
 * is complete has no deadline here (the engine's deadlines take over).
 */
#ifndef RBLN_SERVE_HTTP_GUARD_H
#define RBLN_SERVE_HTTP_GUARD_H

#include <stdbool.h>

#include <microhttpd.h>

struct serve_guard;

/* Seconds; 0 means no deadline for that phase.  tls: no 408 (it would not be encrypted). */
struct serve_guard *serve_guard_start(unsigned header_s, unsigned body_s, unsigned idle_s,
				      bool tls);
void serve_guard_stop(struct serve_guard *g);

/* MHD_OPTION_NOTIFY_CONNECTION callback; cls is the guard. */
void serve_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode code);

/* The request's headers are complete: its body deadline starts. */
void serve_guard_headers_done(struct MHD_Connection *c);
/* The request's body is complete: no arrival deadline until the request ends. */
void serve_guard_body_done(struct MHD_Connection *c);
/* The request ended: the next request on this connection has a header deadline. */
void serve_guard_request_done(struct MHD_Connection *c);

#endif
