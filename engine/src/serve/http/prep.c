// SPDX-License-Identifier: MIT
/* The request preparation workers (see prep.h): a FIFO and a fixed set of threads. */
#include "prep.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct serve_prep {
	pthread_mutex_t lock;
	pthread_cond_t work;
	struct serve_prep_task *head, *tail;
	bool stopping;
	unsigned n_threads;
	pthread_t threads[];
};

static void *worker(void *arg)
{
	struct serve_prep *p = arg;
	struct serve_prep_task *t;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->head && !p->stopping)
			pthread_cond_wait(&p->work, &p->lock);
		t = p->head;
		if (!t)
			break;	/* stopping, and the queue is empty */
		p->head = t->next;
		if (!p->head)
			p->tail = NULL;
		pthread_mutex_unlock(&p->lock);
		t->run(t);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct serve_prep *serve_prep_start(unsigned threads)
{
	struct serve_prep *p;
	unsigned i;

	if (!threads)
		threads = 1;
	p = calloc(1, sizeof(*p) + threads * sizeof(p->threads[0]));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	for (i = 0; i < threads; i++) {
		if (pthread_create(&p->threads[i], NULL, worker, p))
			break;
		p->n_threads++;
	}
	if (p->n_threads < threads) {
		serve_prep_stop(p);
		return NULL;
	}
	return p;
}

int serve_prep_submit(struct serve_prep *p, struct serve_prep_task *t)
{
	pthread_mutex_lock(&p->lock);
	if (p->stopping) {
		pthread_mutex_unlock(&p->lock);
		return -ESHUTDOWN;
	}
	t->next = NULL;
	if (p->tail)
		p->tail->next = t;
	else
		p->head = t;
	p->tail = t;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void serve_prep_stop(struct serve_prep *p)
{
	unsigned i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->n_threads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->work);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
