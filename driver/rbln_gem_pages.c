// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_gem_pages.c - the pages of a buffer object: allocated on the
 * device's NUMA node, all at once on first use, and kept until the object
 * is freed.
 *
 * Device memory of a real NPU sits next to the device; the modeled device's
 * memory is host RAM, and the nearest RAM is that of the device's NUMA node,
 * where its engine threads run. shmem pages would follow the memory policy
 * of whichever task first makes them present, and a module cannot set a
 * shmem file's shared policy, so objects have their own page array from
 * alloc_pages_node(). The node is preferred, not forced: when it has no
 * free memory, the allocator falls back to the nearest node, as for any
 * node-local kernel allocation (debugfs "buffers" shows where pages are).
 *
 * The pages are charged to the memory cgroup of the buffer's creator
 * (__GFP_ACCOUNT with that cgroup active), whoever makes them present:
 * mmap() in another process, a job's submission, or a PRIME importer.
 * __GFP_RETRY_MAYFAIL makes an allocation past the cgroup's limit, or past
 * what the host has, fail with -ENOMEM instead of calling the OOM killer.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/dma-resv.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <drm/drm_device.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>

#include "rbln_gem.h"

#define RBLN_BO_GFP	(GFP_HIGHUSER | __GFP_ZERO | __GFP_ACCOUNT | \
			 __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

static void rbln_free_page_array(struct page **pages, pgoff_t count)
{
	pgoff_t i;

	for (i = 0; i < count; i++)
		__free_page(pages[i]);
	kvfree(pages);
}

static int rbln_alloc_page_array(struct rbln_bo *bo, struct page ***out)
{
	pgoff_t i, count = bo->base.size >> PAGE_SHIFT;
	struct page **pages;

	pages = kvmalloc_array(count, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return -ENOMEM;

	for (i = 0; i < count; i++) {
		pages[i] = alloc_pages_node(bo->node, RBLN_BO_GFP, 0);
		if (!pages[i]) {
			rbln_free_page_array(pages, i);
			return -ENOMEM;
		}
		/* A buffer of gigabytes takes a while; let a kill end it. */
		if (fatal_signal_pending(current)) {
			rbln_free_page_array(pages, i + 1);
			return -EINTR;
		}
		cond_resched();
	}
	*out = pages;
	return 0;
}

/**
 * rbln_bo_get_pages() - make an object's pages present
 * @bo: an object created here (not an import)
 *
 * Allocates every page of @bo on its node the first time; later calls find
 * them there. The caller holds the object's reservation lock.
 *
 * Return: 0, -ENOMEM (host or memory cgroup out of memory) or -EINTR.
 */
int rbln_bo_get_pages(struct rbln_bo *bo)
{
	struct mem_cgroup *old;
	struct page **pages;
	int ret;

	dma_resv_assert_held(bo->base.resv);
	if (drm_WARN_ON(bo->base.dev, bo->base.import_attach))
		return -EINVAL;
	if (bo->pages)
		return 0;

	old = set_active_memcg(bo->memcg);
	ret = rbln_alloc_page_array(bo, &pages);
	set_active_memcg(old);
	if (ret)
		return ret;
	/* Pairs with rbln_bo_pages(): lockless readers see whole pages. */
	smp_store_release(&bo->pages, pages);
	return 0;
}

/**
 * rbln_bo_pages() - the page array of an object, if present
 * @bo: the object; the caller holds a reference
 *
 * Return: the pages, or NULL before first use.
 */
struct page **rbln_bo_pages(struct rbln_bo *bo)
{
	/* Pairs with the release in rbln_bo_get_pages(). */
	return smp_load_acquire(&bo->pages);
}

/**
 * rbln_bo_put_pages() - free an object's pages
 * @bo: the object, unreferenced and unmapped (from its free function)
 */
void rbln_bo_put_pages(struct rbln_bo *bo)
{
	drm_WARN_ON(bo->base.dev, bo->vmap_count);
	if (bo->pages)
		rbln_free_page_array(bo->pages, bo->base.size >> PAGE_SHIFT);
	bo->pages = NULL;
}

/**
 * rbln_bo_vmap_locked() - map an object's pages into the kernel
 * @bo: an object created here
 * @map: set to the mapping
 *
 * One mapping is shared by every user and counted; the caller holds the
 * reservation lock. The pages are made present first.
 *
 * Return: 0 or a negative errno.
 */
int rbln_bo_vmap_locked(struct rbln_bo *bo, struct iosys_map *map)
{
	dma_resv_assert_held(bo->base.resv);
	if (!bo->vmap_count) {
		struct mem_cgroup *old;
		void *vaddr;
		int ret;

		ret = rbln_bo_get_pages(bo);
		if (ret)
			return ret;
		old = set_active_memcg(bo->memcg);
		vaddr = vmap(bo->pages, bo->base.size >> PAGE_SHIFT, VM_MAP,
			     PAGE_KERNEL);
		set_active_memcg(old);
		if (!vaddr)
			return -ENOMEM;
		bo->vaddr = vaddr;
	}
	bo->vmap_count++;
	iosys_map_set_vaddr(map, bo->vaddr);
	return 0;
}

/**
 * rbln_bo_vunmap_locked() - drop one use of the kernel mapping
 * @bo: the object; the caller holds the reservation lock
 */
void rbln_bo_vunmap_locked(struct rbln_bo *bo)
{
	dma_resv_assert_held(bo->base.resv);
	if (drm_WARN_ON_ONCE(bo->base.dev, !bo->vmap_count))
		return;
	if (--bo->vmap_count)
		return;
	vunmap(bo->vaddr);
	bo->vaddr = NULL;
}

/**
 * rbln_bo_pages_per_node() - where an object's pages are
 * @bo: the object; the caller holds a reference
 * @counts: nr_node_ids counters, each increased by the object's pages on
 *	that node (none before first use)
 */
void rbln_bo_pages_per_node(struct rbln_bo *bo, unsigned long *counts)
{
	struct page **pages = rbln_bo_pages(bo);
	pgoff_t i, count = bo->base.size >> PAGE_SHIFT;

	if (!pages)
		return;
	for (i = 0; i < count; i++) {
		counts[page_to_nid(pages[i])]++;
		if (!(i % 4096))
			cond_resched();
	}
}
