// SPDX-License-Identifier: MIT
/*
 * Bump allocation for the interpreter.  A template's AST lives in one
 * arena and each render's values in another, freed in one go when the
 * render ends; this also makes error unwinding (longjmp) leak-free.
 */
#include <stdlib.h>
#include <string.h>

#include "jinja/jinja_internal.h"

#define BLOCK_SIZE (64 * 1024)
#define ALIGN 16

struct jarena_block {
	struct jarena_block *next;
	size_t used, size;
	_Alignas(ALIGN) unsigned char data[];
};

void *rbln_jarena_alloc(struct jarena *a, size_t n)
{
	struct jarena_block *b = a->head;
	size_t need = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	void *p;

	if (need < n || (a->limit && a->used + need > a->limit))
		return NULL;
	a->used += need;
	if (!b || b->size - b->used < need) {
		size_t size = need > BLOCK_SIZE ? need : BLOCK_SIZE;

		if (size > SIZE_MAX - sizeof(*b))
			return NULL;
		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = size;
		b->next = a->head;
		a->head = b;
	}
	p = b->data + b->used;
	b->used += need;
	memset(p, 0, n);
	return p;
}

char *rbln_jarena_strndup(struct jarena *a, const char *s, size_t n)
{
	char *p = rbln_jarena_alloc(a, n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

void rbln_jarena_free(struct jarena *a)
{
	struct jarena_block *b = a->head;

	while (b) {
		struct jarena_block *next = b->next;

		free(b);
		b = next;
	}
	a->head = NULL;
}
