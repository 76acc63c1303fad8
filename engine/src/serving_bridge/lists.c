// SPDX-License-Identifier: MIT
/* The request lists of the scheduler (inbox, active). */
#include "serving_bridge/binding.h"

void rbln_bridge_list_push_back(struct rbln_bridge_list *l, struct rbln_gen_handle *h)
{
	h->next = NULL;
	h->prev = l->tail;
	if (l->tail)
		l->tail->next = h;
	else
		l->head = h;
	l->tail = h;
	l->n++;
}

void rbln_bridge_list_remove(struct rbln_bridge_list *l, struct rbln_gen_handle *h)
{
	if (h->prev)
		h->prev->next = h->next;
	else
		l->head = h->next;
	if (h->next)
		h->next->prev = h->prev;
	else
		l->tail = h->prev;
	h->prev = h->next = NULL;
	l->n--;
}

void rbln_bridge_list_splice(struct rbln_bridge_list *to, struct rbln_bridge_list *from)
{
	if (!from->head)
		return;
	if (to->tail) {
		to->tail->next = from->head;
		from->head->prev = to->tail;
	} else {
		to->head = from->head;
	}
	to->tail = from->tail;
	to->n += from->n;
	from->head = from->tail = NULL;
	from->n = 0;
}
