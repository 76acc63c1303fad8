// SPDX-License-Identifier: MIT
/*
 * Host staging memory placed on the device's NUMA node, so that the copies
 * between it and the device do not cross the interconnect.
 */
#include <errno.h>
#include <numa.h>
#include <sys/mman.h>
#include <unistd.h>

#include "npu_backend.h"

uint64_t npu_page_size(void)
{
	static uint64_t page_size;

	/* Benign race: every thread computes and stores the same value. */
	if (!__atomic_load_n(&page_size, __ATOMIC_RELAXED))
		__atomic_store_n(&page_size, (uint64_t)sysconf(_SC_PAGESIZE),
				 __ATOMIC_RELAXED);
	return __atomic_load_n(&page_size, __ATOMIC_RELAXED);
}

static size_t round_to_pages(size_t size)
{
	size_t page = npu_page_size();

	return (size + page - 1) & ~(page - 1);
}

void *npu_host_alloc(npu_device *dev, size_t size)
{
	if (!dev) {
		npu_fail(-EINVAL, "npu_host_alloc: device is NULL");
		return NULL;
	}
	if (size == 0 || size > SIZE_MAX - npu_page_size()) {
		npu_fail(-EINVAL, "npu_host_alloc: size %zu is zero or too large",
			 size);
		return NULL;
	}
	size = round_to_pages(size);

	void *ptr;
	int node = dev->info.numa_node;

	if (node >= 0 && numa_available() >= 0) {
		ptr = numa_alloc_onnode(size, node);
		if (!ptr) {
			npu_fail(-ENOMEM, "npu_host_alloc: %zu bytes on NUMA node %d",
				 size, node);
			return NULL;
		}
		return ptr;
	}
	ptr = mmap(NULL, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ptr == MAP_FAILED) {
		npu_fail(-ENOMEM, "npu_host_alloc: %zu bytes", size);
		return NULL;
	}
	return ptr;
}

void npu_host_free(void *ptr, size_t size)
{
	if (!ptr || size == 0)
		return;
	/*
	 * Both allocation paths hand out whole pages of an anonymous mapping
	 * (numa_alloc_onnode() is mmap() plus mbind(), and numa_free() is
	 * munmap()), so one munmap() frees either.
	 */
	munmap(ptr, round_to_pages(size));
}
