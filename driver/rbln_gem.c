// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_gem.c - buffer objects: GEM shmem objects of device memory (charged
 * to the device's capacity) or host memory (not charged), their ioctls, and
 * the kernel mappings the engines execute with.
 *
 * Both kinds are host RAM: each is charged to the host budget
 * (rbln_budget.c), and its pages to the memory cgroup of the process that
 * created it. shmem charges a page to the memory cgroup of whoever makes it
 * present; the driver populates pages in mmap(), vmap (submission) and
 * pin (PRIME), possibly on behalf of another process, so those run with
 * the creator's cgroup active (set_active_memcg()). The mapping's gfp mask
 * deliberately gets no __GFP_ACCOUNT: the page allocator would charge each
 * page as kernel memory on top of shmem's page-cache charge, and that
 * second charge is never given back.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/dma-resv.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_vma_manager.h>

#include "rbln_accel.h"
#include "rbln_budget.h"
#include "rbln_device.h"
#include "rbln_drv.h"
#include "rbln_gem.h"

/* Buffer objects alive, for the leak check at unload. */
static atomic_t rbln_gem_live_count = ATOMIC_INIT(0);

/**
 * rbln_gem_live() - buffer objects not yet freed
 *
 * Return: the count; zero once every device is gone, else objects leaked.
 */
int rbln_gem_live(void)
{
	return atomic_read(&rbln_gem_live_count);
}

static void rbln_gem_free(struct drm_gem_object *obj)
{
	struct rbln_bo *bo = to_rbln_bo(obj);
	struct rbln_device *rdev = to_rbln_device(obj->dev);

	if (!iosys_map_is_null(&bo->kmap)) {
		dma_resv_lock(obj->resv, NULL);
		drm_gem_shmem_vunmap(&bo->base, &bo->kmap);
		dma_resv_unlock(obj->resv);
		iosys_map_clear(&bo->kmap);
	}
	if (bo->charged)
		rbln_device_uncharge(rdev, bo->charged);
	rbln_budget_uncharge(bo->budgeted);
	mem_cgroup_put(bo->memcg);
	drm_gem_shmem_free(&bo->base);
	atomic_dec(&rbln_gem_live_count);
}

/*
 * Each of these may allocate the object's pages: they are charged to the
 * creator's memory cgroup, not to whoever happens to make them present.
 */
static int rbln_gem_pin(struct drm_gem_object *obj)
{
	struct mem_cgroup *old = set_active_memcg(to_rbln_bo(obj)->memcg);
	int ret = drm_gem_shmem_object_pin(obj);

	set_active_memcg(old);
	return ret;
}

static int rbln_gem_vmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	struct mem_cgroup *old = set_active_memcg(to_rbln_bo(obj)->memcg);
	int ret = drm_gem_shmem_object_vmap(obj, map);

	set_active_memcg(old);
	return ret;
}

static int rbln_gem_mmap(struct drm_gem_object *obj,
			 struct vm_area_struct *vma)
{
	struct mem_cgroup *old = set_active_memcg(to_rbln_bo(obj)->memcg);
	int ret = drm_gem_shmem_object_mmap(obj, vma);

	set_active_memcg(old);
	return ret;
}

/* For fdinfo's drm-resident-memory: pages are present once populated. */
static enum drm_gem_object_status rbln_gem_status(struct drm_gem_object *obj)
{
	if (obj->import_attach || READ_ONCE(to_rbln_bo(obj)->base.pages))
		return DRM_GEM_OBJECT_RESIDENT;
	return 0;
}

static const struct drm_gem_object_funcs rbln_gem_funcs = {
	.free = rbln_gem_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = rbln_gem_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = rbln_gem_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = rbln_gem_mmap,
	.status = rbln_gem_status,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

/**
 * rbln_gem_create_object() - &drm_driver.gem_create_object
 * @dev: the DRM device
 * @size: object size
 *
 * Used for buffers created here and for PRIME imports alike.
 *
 * Return: the embedded GEM object or an ERR_PTR.
 */
struct drm_gem_object *rbln_gem_create_object(struct drm_device *dev,
					      size_t size)
{
	struct rbln_bo *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);

	bo->base.base.funcs = &rbln_gem_funcs;
	/* The device may write any buffer at any time. */
	bo->base.pages_mark_dirty_on_put = true;
	atomic_inc(&rbln_gem_live_count);
	return &bo->base.base;
}

/**
 * rbln_gem_is_rbln() - whether a GEM object is one of this driver's
 * @obj: the object
 *
 * Return: true for rbln buffer objects (created or imported here).
 */
bool rbln_gem_is_rbln(struct drm_gem_object *obj)
{
	return obj->funcs == &rbln_gem_funcs;
}

/**
 * rbln_gem_flags() - flags as DRM_IOCTL_RBLN_BO_INFO reports them
 * @obj: an rbln buffer object
 *
 * Return: the creation flags, plus DRM_RBLN_BO_IMPORTED for imports.
 */
u32 rbln_gem_flags(struct drm_gem_object *obj)
{
	if (obj->import_attach)
		return DRM_RBLN_BO_IMPORTED;
	return to_rbln_bo(obj)->flags;
}

/**
 * rbln_gem_kmap() - kernel mapping of a whole buffer object
 * @obj: an rbln buffer object (own or imported)
 *
 * The mapping is made once and kept until the object is freed, so that
 * submissions do not map and unmap buffers over and over. For imports it
 * maps the exporter's pages through dma_buf_vmap().
 *
 * Return: the address, or an ERR_PTR (-EINTR, -ENOMEM, -EOPNOTSUPP when
 * the exporter cannot be mapped).
 */
void *rbln_gem_kmap(struct drm_gem_object *obj)
{
	struct rbln_bo *bo = to_rbln_bo(obj);
	void *vaddr;
	int ret;

	ret = dma_resv_lock_interruptible(obj->resv, NULL);
	if (ret)
		return ERR_PTR(ret);

	if (iosys_map_is_null(&bo->kmap)) {
		struct mem_cgroup *old = set_active_memcg(bo->memcg);
		struct iosys_map map;

		ret = drm_gem_shmem_vmap(&bo->base, &map);
		set_active_memcg(old);
		if (!ret && map.is_iomem) {
			drm_gem_shmem_vunmap(&bo->base, &map);
			ret = -EOPNOTSUPP;
		}
		if (!ret)
			bo->kmap = map;
	}
	vaddr = ret ? ERR_PTR(ret) : bo->kmap.vaddr;
	dma_resv_unlock(obj->resv);
	return vaddr;
}

/**
 * rbln_ioctl_bo_create() - DRM_IOCTL_RBLN_BO_CREATE
 * @dev: the DRM device
 * @data: &struct drm_rbln_bo_create
 * @file: the caller's file
 *
 * Return: 0 or a negative errno.
 */
int rbln_ioctl_bo_create(struct drm_device *dev, void *data,
			 struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(dev);
	struct drm_rbln_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	struct rbln_bo *bo;
	u64 size, charge;
	int ret;

	if (args->flags & ~DRM_RBLN_BO_FLAGS_MASK)
		return -EINVAL;
	if (!args->size || args->size > rdev->mem_total)
		return -EINVAL;

	size = PAGE_ALIGN(args->size);
	charge = (args->flags & DRM_RBLN_BO_HOST) ? 0 : size;
	ret = rbln_budget_charge(size);
	if (ret)
		return ret;
	if (charge) {
		ret = rbln_device_charge(rdev, charge);
		if (ret) {
			rbln_budget_uncharge(size);
			return ret;
		}
	}

	shmem = drm_gem_shmem_create(dev, size);
	if (IS_ERR(shmem)) {
		if (charge)
			rbln_device_uncharge(rdev, charge);
		rbln_budget_uncharge(size);
		return PTR_ERR(shmem);
	}
	bo = to_rbln_bo(&shmem->base);
	bo->flags = args->flags;
	bo->charged = charge;
	bo->budgeted = size;
	bo->memcg = get_mem_cgroup_from_mm(current->mm);

	ret = drm_gem_handle_create(file, &shmem->base, &args->handle);
	/* The handle holds the object now, or it is freed (and uncharged). */
	drm_gem_object_put(&shmem->base);
	return ret;
}

/**
 * rbln_ioctl_bo_mmap_offset() - DRM_IOCTL_RBLN_BO_MMAP_OFFSET
 * @dev: the DRM device
 * @data: &struct drm_rbln_bo_mmap_offset
 * @file: the caller's file
 *
 * Return: 0 or a negative errno.
 */
int rbln_ioctl_bo_mmap_offset(struct drm_device *dev, void *data,
			      struct drm_file *file)
{
	struct drm_rbln_bo_mmap_offset *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->pad)
		return -EINVAL;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;

	ret = drm_gem_create_mmap_offset(obj);
	if (!ret)
		args->offset = drm_vma_node_offset_addr(&obj->vma_node);
	drm_gem_object_put(obj);
	return ret;
}

/**
 * rbln_ioctl_bo_info() - DRM_IOCTL_RBLN_BO_INFO
 * @dev: the DRM device
 * @data: &struct drm_rbln_bo_info
 * @file: the caller's file
 *
 * Return: 0 or a negative errno.
 */
int rbln_ioctl_bo_info(struct drm_device *dev, void *data,
		       struct drm_file *file)
{
	struct drm_rbln_bo_info *args = data;
	struct drm_gem_object *obj;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;

	args->flags = rbln_gem_is_rbln(obj) ? rbln_gem_flags(obj) : 0;
	args->size = obj->size;
	drm_gem_object_put(obj);
	return 0;
}
