// SPDX-License-Identifier: MIT
/*
 * Request arrival deadlines (see http_guard.h).  Entries live from
 * libmicrohttpd's STARTED to its CLOSED notification; CLOSED comes before
 * libmicrohttpd closes the socket, and both it and the reaper hold the
 * guard's lock, so the reaper never shuts down a descriptor that has since
 * been reused by another connection.
 */
#include "http_guard.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define REAP_INTERVAL_MS 200

struct guard_conn {
	struct serve_guard *g;
	struct guard_conn *prev, *next;
	int fd;
	uint64_t deadline_ms;	/* monotonic; 0: none */
	bool in_body;		/* which deadline it is, for the 408's text */
};

struct serve_guard {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t reaper;
	bool stop;
	bool tls;
	uint64_t header_ms, body_ms, idle_ms;
	struct guard_conn *head;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t deadline_after(uint64_t ms)
{
	return ms ? now_ms() + ms : 0;
}

/* Tells a plain-HTTP client why its connection ends; best effort, never blocks. */
static void send_408(int fd, bool in_body)
{
	char msg[256];
	const char *body = in_body
		? "{\"error\":\"the request body did not arrive in time (--http-body-timeout)\"}"
		: "{\"error\":\"the request headers did not arrive in time (--http-header-timeout)\"}";
	int n = snprintf(msg, sizeof(msg), "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n"
			 "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
			 strlen(body), body);

	if (n > 0 && (size_t)n < sizeof(msg) &&
	    send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		(void)errno;	/* the client is gone or not reading: the shutdown ends it */
}

static void *reap(void *arg)
{
	struct serve_guard *g = arg;
	struct guard_conn *e;
	struct timespec until;

	pthread_mutex_lock(&g->lock);
	while (!g->stop) {
		uint64_t now = now_ms();

		for (e = g->head; e; e = e->next) {
			if (!e->deadline_ms || now < e->deadline_ms)
				continue;
			if (!g->tls)
				send_408(e->fd, e->in_body);
			/* libmicrohttpd sees the end of the stream and closes the connection */
			shutdown(e->fd, SHUT_RDWR);
			e->deadline_ms = 0;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += REAP_INTERVAL_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&g->wake, &g->lock, &until);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

struct serve_guard *serve_guard_start(unsigned header_s, unsigned body_s, unsigned idle_s,
				      bool tls)
{
	struct serve_guard *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->header_ms = (uint64_t)header_s * 1000u;
	g->body_ms = (uint64_t)body_s * 1000u;
	g->idle_ms = (uint64_t)idle_s * 1000u;
	g->tls = tls;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->wake, NULL);
	if (pthread_create(&g->reaper, NULL, reap, g)) {
		pthread_cond_destroy(&g->wake);
		pthread_mutex_destroy(&g->lock);
		free(g);
		return NULL;
	}
	return g;
}

/* After the daemon stopped: every connection is closed and notified by then. */
void serve_guard_stop(struct serve_guard *g)
{
	struct guard_conn *e, *next;

	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	g->stop = true;
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->reaper, NULL);
	for (e = g->head; e; e = next) {
		next = e->next;
		free(e);
	}
	pthread_cond_destroy(&g->wake);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

void serve_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode code)
{
	struct serve_guard *g = cls;
	struct guard_conn *e = *socket_context;
	const union MHD_ConnectionInfo *ci;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		e = ci ? calloc(1, sizeof(*e)) : NULL;
		if (!e)
			return;	/* unguarded: the inactivity timeout still applies */
		e->g = g;
		e->fd = ci->connect_fd;
		pthread_mutex_lock(&g->lock);
		e->deadline_ms = deadline_after(g->header_ms);
		e->next = g->head;
		if (g->head)
			g->head->prev = e;
		g->head = e;
		pthread_mutex_unlock(&g->lock);
		*socket_context = e;
		return;
	}
	if (!e)
		return;
	pthread_mutex_lock(&g->lock);
	if (e->prev)
		e->prev->next = e->next;
	else
		g->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	pthread_mutex_unlock(&g->lock);
	free(e);
	*socket_context = NULL;
}

enum guard_phase { AWAIT_BODY, PROCESSING, AWAIT_NEXT_REQUEST };

static void set_deadline(struct MHD_Connection *c, enum guard_phase phase)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct guard_conn *e = ci ? ci->socket_context : NULL;
	struct serve_guard *g;

	if (!e)
		return;
	g = e->g;
	pthread_mutex_lock(&g->lock);
	switch (phase) {
	case AWAIT_BODY:
		e->deadline_ms = deadline_after(g->body_ms);
		e->in_body = true;
		break;
	case PROCESSING:
		e->deadline_ms = 0;
		break;
	case AWAIT_NEXT_REQUEST:	/* idle first, then the next request's headers */
		e->deadline_ms = g->header_ms ? deadline_after(g->idle_ms + g->header_ms) : 0;
		e->in_body = false;
		break;
	}
	pthread_mutex_unlock(&g->lock);
}

void serve_guard_headers_done(struct MHD_Connection *c)
{
	set_deadline(c, AWAIT_BODY);
}

void serve_guard_body_done(struct MHD_Connection *c)
{
	set_deadline(c, PROCESSING);
}

void serve_guard_request_done(struct MHD_Connection *c)
{
	set_deadline(c, AWAIT_NEXT_REQUEST);
}
