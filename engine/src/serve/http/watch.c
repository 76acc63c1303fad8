// SPDX-License-Identifier: MIT
/*
 * The hang-up watcher (see watch.h).  One-shot registrations: a socket
 * whose peer closed stays "readable" for good, and level-triggered
 * reporting would spin until its connection is cleaned up.  An eventfd
 * wakes the thread to stop.
 */
#include "watch.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct serve_watch {
	int ep;
	int stop_fd;
	pthread_t thread;
	serve_hangup_fn fn;
	void *ctx;
};

#define STOP_ID UINT64_MAX

static void *run(void *arg)
{
	struct serve_watch *w = arg;
	struct epoll_event evs[32];

	while (1) {
		int n = epoll_wait(w->ep, evs, 32, -1), i;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		for (i = 0; i < n; i++) {
			if (evs[i].data.u64 == STOP_ID)
				return NULL;
			w->fn(w->ctx, evs[i].data.u64);
		}
	}
	return NULL;
}

struct serve_watch *serve_watch_start(serve_hangup_fn fn, void *ctx)
{
	struct serve_watch *w = calloc(1, sizeof(*w));
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = STOP_ID };

	if (!w)
		return NULL;
	w->fn = fn;
	w->ctx = ctx;
	w->ep = epoll_create1(EPOLL_CLOEXEC);
	w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->ep < 0 || w->stop_fd < 0 || epoll_ctl(w->ep, EPOLL_CTL_ADD, w->stop_fd, &ev) ||
	    pthread_create(&w->thread, NULL, run, w)) {
		if (w->ep >= 0)
			close(w->ep);
		if (w->stop_fd >= 0)
			close(w->stop_fd);
		free(w);
		return NULL;
	}
	return w;
}

int serve_watch_add(struct serve_watch *w, int fd, uint64_t id)
{
	struct epoll_event ev = { .events = EPOLLRDHUP | EPOLLONESHOT, .data.u64 = id };

	if (!w || fd < 0)
		return -EINVAL;
	return epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

void serve_watch_remove(struct serve_watch *w, int fd)
{
	if (w && fd >= 0)
		epoll_ctl(w->ep, EPOLL_CTL_DEL, fd, NULL);
}

void serve_watch_stop(struct serve_watch *w)
{
	uint64_t one = 1;

	if (!w)
		return;
	if (write(w->stop_fd, &one, sizeof(one)) != sizeof(one))
		pthread_cancel(w->thread);
	pthread_join(w->thread, NULL);
	close(w->ep);
	close(w->stop_fd);
	free(w);
}
