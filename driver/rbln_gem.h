/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rbln_gem.h - buffer objects: GEM shmem objects with capacity accounting.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */
#ifndef RBLN_GEM_H
#define RBLN_GEM_H

#include <linux/iosys-map.h>
#include <linux/memcontrol.h>
#include <drm/drm_gem_shmem_helper.h>

/**
 * struct rbln_bo - a buffer object of an rbln device
 * @base: the GEM shmem object
 * @flags: DRM_RBLN_BO_* creation flags (0 for imports)
 * @charged: bytes charged to the device capacity (0 for host buffers and
 *	imports)
 * @budgeted: bytes charged to the host budget (0 for imports)
 * @memcg: memory cgroup of the creator, which pays for the pages whoever
 *	makes them present (NULL for imports: the exporter's pages)
 * @kmap: kernel mapping used by the engines and by submission, made on
 *	first use and kept until the object is freed; protected by the
 *	object's reservation lock
 */
struct rbln_bo {
	struct drm_gem_shmem_object base;
	u32 flags;
	u64 charged;
	u64 budgeted;
	struct mem_cgroup *memcg;
	struct iosys_map kmap;
};

static inline struct rbln_bo *to_rbln_bo(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct rbln_bo, base);
}

struct drm_gem_object *rbln_gem_create_object(struct drm_device *dev,
					      size_t size);
bool rbln_gem_is_rbln(struct drm_gem_object *obj);
void *rbln_gem_kmap(struct drm_gem_object *obj);
u32 rbln_gem_flags(struct drm_gem_object *obj);
int rbln_gem_live(void);

#endif /* RBLN_GEM_H */
