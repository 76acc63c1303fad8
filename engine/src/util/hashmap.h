/* SPDX-License-Identifier: MIT */
/*
 * Open-addressing hash maps for the hot lookups: vocabulary (string -> id),
 * BPE merges ((left id, right id) -> rank and result) and tensor names.
 * Keys of the string map are borrowed: the caller keeps them alive.
 */
#ifndef RBLN_HASHMAP_H
#define RBLN_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rbln_strmap_slot {
	const char *key;	/* NULL marks an empty slot */
	uint32_t len;
	uint32_t hash;
	int32_t value;
};

struct rbln_strmap {
	struct rbln_strmap_slot *slots;
	size_t cap;	/* power of two */
	size_t count;
};

uint32_t rbln_hash_bytes(const void *p, size_t n);

/* Inserts or replaces; *old (if given) receives the replaced value or -1. */
int rbln_strmap_put(struct rbln_strmap *m, const char *key, size_t len, int32_t value,
		    int32_t *old);
/* Returns the value or -1 when absent. */
int32_t rbln_strmap_get(const struct rbln_strmap *m, const char *key, size_t len);
void rbln_strmap_free(struct rbln_strmap *m);

struct rbln_u64map {
	uint64_t *keys;		/* UINT64_MAX marks an empty slot */
	uint64_t *values;
	size_t cap;
	size_t count;
};

int rbln_u64map_put(struct rbln_u64map *m, uint64_t key, uint64_t value);
bool rbln_u64map_get(const struct rbln_u64map *m, uint64_t key, uint64_t *value);
void rbln_u64map_free(struct rbln_u64map *m);

#endif
