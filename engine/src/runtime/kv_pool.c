// SPDX-License-Identifier: MIT
/*
 * The KV block pool and what a sequence holds of it.  The pool answers
 * the planner's one question, "can sequence s grow by n tokens", and
 * takes the blocks when the answer is yes (as vLLM's allocate_slots), so
 * no other code turns token counts into block counts.
 */
#include <errno.h>
#include <stdlib.h>

#include "runtime/runtime_internal.h"

int rbln_kv_pool_init(struct kv_pool *p, uint32_t blocks, uint32_t block_size)
{
	uint32_t i;

	p->free_ids = malloc((size_t)blocks * sizeof(*p->free_ids));
	if (!p->free_ids)
		return -ENOMEM;
	/* Hand out low ids first: a small model touches little of the cache. */
	for (i = 0; i < blocks; i++)
		p->free_ids[i] = (int32_t)(blocks - 1 - i);
	p->n_free = p->total = blocks;
	p->block_size = block_size;
	return 0;
}

void rbln_kv_pool_free(struct kv_pool *p)
{
	free(p->free_ids);
	p->free_ids = NULL;
}

uint32_t rbln_kv_pool_blocks_for(const struct kv_pool *p, size_t tokens)
{
	return (uint32_t)((tokens + p->block_size - 1) / p->block_size);
}

uint32_t rbln_kv_blocks_to_grow(const struct rbln_seq *s, size_t n)
{
	uint32_t want = rbln_kv_pool_blocks_for(&s->e->kv, s->n_computed + n);

	return want > s->n_blocks ? want - s->n_blocks : 0;
}

bool rbln_kv_can_grow(const struct rbln_seq *s, size_t n)
{
	return rbln_kv_blocks_to_grow(s, n) <= s->e->kv.n_free;
}

bool rbln_kv_grow(struct rbln_seq *s, size_t n)
{
	struct kv_pool *p = &s->e->kv;
	uint32_t need = rbln_kv_blocks_to_grow(s, n);

	if (need > p->n_free)
		return false;
	while (need--)
		s->blocks[s->n_blocks++] = p->free_ids[--p->n_free];
	return true;
}

size_t rbln_kv_room(const struct rbln_seq *s)
{
	const struct kv_pool *p = &s->e->kv;

	return ((size_t)s->n_blocks + p->n_free) * p->block_size - s->n_computed;
}

void rbln_kv_release(struct rbln_seq *s)
{
	struct kv_pool *p = &s->e->kv;

	while (s->n_blocks)
		p->free_ids[p->n_free++] = s->blocks[--s->n_blocks];
	s->n_computed = 0;
}
