// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_gem.c - buffer objects: GEM objects of device memory (charged to the
 * device's capacity) or host memory (not charged), their ioctls, mmap,
 * PRIME export and import, and the kernel mappings the engines execute
 * with.
 *
 * Both kinds are host RAM: each is charged to the host budget
 * (rbln_budget.c), and its pages, allocated on the device's NUMA node, to
 * the memory cgroup of the process that created it (rbln_gem_pages.c).
 * The pages are made present all at once on first use: mmap(), a job
 * (submission maps the buffer for the engines) or a PRIME export; they are
 * kept until the object is freed. User mappings are VM_PFNMAP, filled page
 * by page by the fault handler. Imported buffers keep the exporter's pages:
 * the engines map them through dma_buf_vmap(), mmap() is passed to the
 * exporter.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
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
		if (obj->import_attach)
			dma_buf_vunmap(obj->import_attach->dmabuf, &bo->kmap);
		else
			rbln_bo_vunmap_locked(bo);
		dma_resv_unlock(obj->resv);
		iosys_map_clear(&bo->kmap);
	}
	if (obj->import_attach)
		drm_prime_gem_destroy(obj, bo->import_sgt);
	else
		rbln_bo_put_pages(bo);
	if (bo->charged)
		rbln_device_uncharge(rdev, bo->charged);
	rbln_budget_uncharge(bo->budgeted);
	mem_cgroup_put(bo->memcg);
	drm_gem_object_release(obj);
	kfree(bo);
	atomic_dec(&rbln_gem_live_count);
}

/* PRIME export: the importer's attachment holds the pages present. */
static int rbln_gem_pin(struct drm_gem_object *obj)
{
	if (obj->import_attach)
		return 0;
	return rbln_bo_get_pages(to_rbln_bo(obj));
}

/* A new table each time: drm_gem_unmap_dma_buf() frees it. */
static struct sg_table *rbln_gem_get_sg_table(struct drm_gem_object *obj)
{
	struct page **pages = rbln_bo_pages(to_rbln_bo(obj));

	if (drm_WARN_ON_ONCE(obj->dev, obj->import_attach || !pages))
		return ERR_PTR(-EINVAL);
	return drm_prime_pages_to_sg(obj->dev, pages, obj->size >> PAGE_SHIFT);
}

static int rbln_gem_vmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	return rbln_bo_vmap_locked(to_rbln_bo(obj), map);
}

static void rbln_gem_vunmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	rbln_bo_vunmap_locked(to_rbln_bo(obj));
}

static int rbln_gem_mmap(struct drm_gem_object *obj,
			 struct vm_area_struct *vma)
{
	int ret;

	if (obj->import_attach) {
		/* The exporter maps its pages with its own vm_ops. */
		vma->vm_private_data = NULL;
		vma->vm_ops = NULL;
		ret = dma_buf_mmap(obj->import_attach->dmabuf, vma, 0);
		/* Drop the reference drm_gem_mmap_obj() took. */
		if (!ret)
			drm_gem_object_put(obj);
		return ret;
	}

	/* Private copies of device memory make no sense. */
	if (is_cow_mapping(vma->vm_flags))
		return -EINVAL;

	ret = dma_resv_lock_interruptible(obj->resv, NULL);
	if (ret)
		return ret;
	ret = rbln_bo_get_pages(to_rbln_bo(obj));
	dma_resv_unlock(obj->resv);
	if (ret)
		return ret;

	/*
	 * The fault handler inserts the pages by PFN: no struct page
	 * refcounting or rmap for them, no expansion by mremap(), and no core
	 * dumps of device memory.
	 */
	vm_flags_set(vma, VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_page_prot = vm_get_page_prot(vma->vm_flags);
	return 0;
}

static vm_fault_t rbln_gem_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct drm_gem_object *obj = vma->vm_private_data;
	struct page **pages = rbln_bo_pages(to_rbln_bo(obj));
	/* vmf->pgoff counts from the fake offset of the object's node. */
	pgoff_t index = vmf->pgoff - drm_vma_node_start(&obj->vma_node);

	if (!pages || index >= obj->size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	return vmf_insert_pfn(vma, vmf->address, page_to_pfn(pages[index]));
}

static const struct vm_operations_struct rbln_gem_vm_ops = {
	.fault = rbln_gem_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static void rbln_gem_print_info(struct drm_printer *p, unsigned int indent,
				const struct drm_gem_object *obj)
{
	const struct rbln_bo *bo = container_of(obj, struct rbln_bo, base);

	if (obj->import_attach)
		return;
	drm_printf_indent(p, indent, "node=%d\n", bo->node);
	drm_printf_indent(p, indent, "pages=%s\n", bo->pages ? "present" : "none");
	drm_printf_indent(p, indent, "vmap_count=%u\n", bo->vmap_count);
}

/* For fdinfo's drm-resident-memory: pages are present once populated. */
static enum drm_gem_object_status rbln_gem_status(struct drm_gem_object *obj)
{
	if (obj->import_attach || rbln_bo_pages(to_rbln_bo(obj)))
		return DRM_GEM_OBJECT_RESIDENT;
	return 0;
}

static const struct drm_gem_object_funcs rbln_gem_funcs = {
	.free = rbln_gem_free,
	.print_info = rbln_gem_print_info,
	.pin = rbln_gem_pin,
	.get_sg_table = rbln_gem_get_sg_table,
	.vmap = rbln_gem_vmap,
	.vunmap = rbln_gem_vunmap,
	.mmap = rbln_gem_mmap,
	.status = rbln_gem_status,
	.vm_ops = &rbln_gem_vm_ops,
};

static struct rbln_bo *rbln_bo_alloc(struct drm_device *dev, size_t size)
{
	struct rbln_bo *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return NULL;
	bo->base.funcs = &rbln_gem_funcs;
	bo->node = to_rbln_device(dev)->numa_node;
	/* No shmem file: the pages are the object's own (rbln_gem_pages.c). */
	drm_gem_private_object_init(dev, &bo->base, size);
	atomic_inc(&rbln_gem_live_count);
	return bo;
}

/**
 * rbln_gem_prime_import_sg_table() - &drm_driver.gem_prime_import_sg_table
 * @dev: the importing device
 * @attach: its attachment to the dma-buf
 * @sgt: the exporter's pages, mapped for @dev
 *
 * Return: the new GEM object or an ERR_PTR.
 */
struct drm_gem_object *
rbln_gem_prime_import_sg_table(struct drm_device *dev,
			       struct dma_buf_attachment *attach,
			       struct sg_table *sgt)
{
	struct rbln_bo *bo = rbln_bo_alloc(dev, PAGE_ALIGN(attach->dmabuf->size));

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->import_sgt = sgt;
	return &bo->base;
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
		struct iosys_map map;

		if (obj->import_attach) {
			ret = dma_buf_vmap(obj->import_attach->dmabuf, &map);
			if (!ret && map.is_iomem) {
				dma_buf_vunmap(obj->import_attach->dmabuf, &map);
				ret = -EOPNOTSUPP;
			}
		} else {
			ret = rbln_bo_vmap_locked(bo, &map);
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

	bo = rbln_bo_alloc(dev, size);
	if (!bo) {
		if (charge)
			rbln_device_uncharge(rdev, charge);
		rbln_budget_uncharge(size);
		return -ENOMEM;
	}
	bo->flags = args->flags;
	bo->charged = charge;
	bo->budgeted = size;
	bo->memcg = get_mem_cgroup_from_mm(current->mm);

	ret = drm_gem_handle_create(file, &bo->base, &args->handle);
	/* The handle holds the object now, or it is freed (and uncharged). */
	drm_gem_object_put(&bo->base);
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
