/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rbln_gem.h - buffer objects: GEM objects backed by an array of pages
 * allocated on the device's NUMA node, with capacity accounting.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */
#ifndef RBLN_GEM_H
#define RBLN_GEM_H

#include <linux/iosys-map.h>
#include <linux/memcontrol.h>
#include <linux/mm_types.h>
#include <linux/scatterlist.h>
#include <drm/drm_gem.h>

/**
 * struct rbln_bo - a buffer object of an rbln device
 * @base: the GEM object
 * @flags: DRM_RBLN_BO_* creation flags (0 for imports)
 * @node: NUMA node its pages are allocated on (the device's)
 * @charged: bytes charged to the device capacity (0 for host buffers and
 *	imports)
 * @budgeted: bytes charged to the host budget (0 for imports)
 * @memcg: memory cgroup of the creator, which pays for the pages whoever
 *	makes them present (NULL for imports: the exporter's pages)
 * @pages: the object's pages, NULL until first use (mmap, a job, PRIME
 *	export); set once under the reservation lock and kept until the
 *	object is freed, so that readers holding a reference need no lock
 * @import_sgt: the exporter's scatter list of an import (NULL otherwise)
 * @vaddr: kernel mapping of @pages while @vmap_count is not zero
 * @vmap_count: users of @vaddr (the engines' @kmap and dma-buf importers);
 *	protected by the reservation lock
 * @kmap: kernel mapping used by the engines and by submission, made on
 *	first use and kept until the object is freed; protected by the
 *	object's reservation lock
 */
struct rbln_bo {
	struct drm_gem_object base;
	u32 flags;
	int node;
	u64 charged;
	u64 budgeted;
	struct mem_cgroup *memcg;
	struct page **pages;
	struct sg_table *import_sgt;
	void *vaddr;
	unsigned int vmap_count;
	struct iosys_map kmap;
};

static inline struct rbln_bo *to_rbln_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct rbln_bo, base);
}

/* rbln_gem_pages.c: the node-local page array of an object. */
int rbln_bo_get_pages(struct rbln_bo *bo);
void rbln_bo_put_pages(struct rbln_bo *bo);
struct page **rbln_bo_pages(struct rbln_bo *bo);
int rbln_bo_vmap_locked(struct rbln_bo *bo, struct iosys_map *map);
void rbln_bo_vunmap_locked(struct rbln_bo *bo);
void rbln_bo_pages_per_node(struct rbln_bo *bo, unsigned long *counts);

/* rbln_gem.c: the objects, their ioctls and the engines' mappings. */
struct drm_gem_object *
rbln_gem_prime_import_sg_table(struct drm_device *dev,
			       struct dma_buf_attachment *attach,
			       struct sg_table *sgt);
bool rbln_gem_is_rbln(struct drm_gem_object *obj);
void *rbln_gem_kmap(struct drm_gem_object *obj);
u32 rbln_gem_flags(struct drm_gem_object *obj);
int rbln_gem_live(void);

#endif /* RBLN_GEM_H */
