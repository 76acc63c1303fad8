/* SPDX-License-Identifier: MIT */
/*
 * Hang-up detection for connections libmicrohttpd is not polling.  While a
 * connection is suspended (waiting for the engine), libmicrohttpd does not
 * notice that its client went away; a client that disconnects must cancel
 * its request and free its KV blocks at once, so a thread of ours watches
 * those sockets for EPOLLRDHUP and reports the job id.
 */
#ifndef RBLN_SERVE_WATCH_H
#define RBLN_SERVE_WATCH_H

#include <stdint.h>

struct serve_watch;

typedef void (*serve_hangup_fn)(void *ctx, uint64_t id);

/* Starts the watching thread; NULL on failure. */
struct serve_watch *serve_watch_start(serve_hangup_fn fn, void *ctx);
/* Reports id once when fd's peer closes or fails. 0 or a negative errno. */
int serve_watch_add(struct serve_watch *w, int fd, uint64_t id);
/* Stops watching fd (before its owner closes it). */
void serve_watch_remove(struct serve_watch *w, int fd);
void serve_watch_stop(struct serve_watch *w);

#endif
