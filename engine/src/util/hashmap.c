// SPDX-License-Identifier: MIT
#include "hashmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint32_t rbln_hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint32_t h = 2166136261u;	/* FNV-1a: short keys, good spread */
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= 16777619u;
	}
	return h;
}

static int strmap_grow(struct rbln_strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	struct rbln_strmap_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		struct rbln_strmap_slot *s = &m->slots[i];
		size_t j;

		if (!s->key)
			continue;
		for (j = s->hash & (cap - 1); slots[j].key; j = (j + 1) & (cap - 1))
			;
		slots[j] = *s;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
	return 0;
}

int rbln_strmap_put(struct rbln_strmap *m, const char *key, size_t len, int32_t value,
		    int32_t *old)
{
	uint32_t h = rbln_hash_bytes(key, len);
	size_t j;

	if (old)
		*old = -1;
	if (len > UINT32_MAX)
		return -EINVAL;
	if ((m->count + 1) * 4 > m->cap * 3) {
		int rc = strmap_grow(m);

		if (rc)
			return rc;
	}
	for (j = h & (m->cap - 1); m->slots[j].key; j = (j + 1) & (m->cap - 1)) {
		struct rbln_strmap_slot *s = &m->slots[j];

		if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0) {
			if (old)
				*old = s->value;
			s->value = value;
			return 0;
		}
	}
	m->slots[j] = (struct rbln_strmap_slot){ key, (uint32_t)len, h, value };
	m->count++;
	return 0;
}

int32_t rbln_strmap_get(const struct rbln_strmap *m, const char *key, size_t len)
{
	uint32_t h;
	size_t j;

	if (!m->cap)
		return -1;
	h = rbln_hash_bytes(key, len);
	for (j = h & (m->cap - 1); m->slots[j].key; j = (j + 1) & (m->cap - 1)) {
		const struct rbln_strmap_slot *s = &m->slots[j];

		if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0)
			return s->value;
	}
	return -1;
}

void rbln_strmap_free(struct rbln_strmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static size_t u64_slot(uint64_t key, size_t cap)
{
	/* Fibonacci hashing spreads the (left << 32 | right) pairs well. */
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static int u64map_grow(struct rbln_u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	uint64_t *keys = malloc(cap * sizeof(*keys));
	uint64_t *values = malloc(cap * sizeof(*values));

	if (!keys || !values) {
		free(keys);
		free(values);
		return -ENOMEM;
	}
	memset(keys, 0xFF, cap * sizeof(*keys));
	for (i = 0; i < m->cap; i++) {
		size_t j;

		if (m->keys[i] == UINT64_MAX)
			continue;
		for (j = u64_slot(m->keys[i], cap); keys[j] != UINT64_MAX; j = (j + 1) & (cap - 1))
			;
		keys[j] = m->keys[i];
		values[j] = m->values[i];
	}
	free(m->keys);
	free(m->values);
	m->keys = keys;
	m->values = values;
	m->cap = cap;
	return 0;
}

int rbln_u64map_put(struct rbln_u64map *m, uint64_t key, uint64_t value)
{
	size_t j;

	if (key == UINT64_MAX)
		return -EINVAL;
	if ((m->count + 1) * 4 > m->cap * 3) {
		int rc = u64map_grow(m);

		if (rc)
			return rc;
	}
	for (j = u64_slot(key, m->cap); m->keys[j] != UINT64_MAX; j = (j + 1) & (m->cap - 1)) {
		if (m->keys[j] == key) {
			m->values[j] = value;
			return 0;
		}
	}
	m->keys[j] = key;
	m->values[j] = value;
	m->count++;
	return 0;
}

bool rbln_u64map_get(const struct rbln_u64map *m, uint64_t key, uint64_t *value)
{
	size_t j;

	if (!m->cap)
		return false;
	for (j = u64_slot(key, m->cap); m->keys[j] != UINT64_MAX; j = (j + 1) & (m->cap - 1)) {
		if (m->keys[j] == key) {
			*value = m->values[j];
			return true;
		}
	}
	return false;
}

void rbln_u64map_free(struct rbln_u64map *m)
{
	free(m->keys);
	free(m->values);
	memset(m, 0, sizeof(*m));
}
