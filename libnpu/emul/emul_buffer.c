// SPDX-License-Identifier: MIT
/*
 * Buffers of the emulated backend: one memfd each, mapped shared. A memfd
 * is a real file descriptor, so export is a dup and import a second
 * mapping of the same pages: devices of one process and devices of
 * different processes see each other's writes, which is what semaphores
 * and peer copies need. The memfd is sealed against resizing, so no
 * holder of the fd can shrink it under a mapping (SIGBUS) and import can
 * trust its size.
 *
 * A buffer allocated with NPU_BUFFER_PRIVATE is never exported, so it needs
 * no fd: it is private anonymous memory, which transparent huge pages can
 * back (shmem gets them only where the administrator enabled them).
 */
#include <errno.h>
#include <fcntl.h>
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emul.h"

#define EMUL_REQUIRED_SEALS (F_SEAL_SHRINK | F_SEAL_GROW)

static struct emul_hw *hw_of(npu_buffer *buf)
{
	return emul_dev(buf->dev)->hw;
}

/* Reserve @bytes of device memory; -ENOMEM when they do not fit. */
static int charge(struct emul_hw *hw, uint64_t bytes, uint64_t requested)
{
	uint64_t capacity = hw->ctx->mem_size;
	uint_fast64_t used = atomic_load(&hw->mem_used);

	do {
		if (bytes > capacity - used)
			return npu_fail(-ENOMEM,
					"device %u: cannot allocate %llu bytes (%llu requested), %llu of %llu bytes free",
					hw->index, (unsigned long long)bytes,
					(unsigned long long)requested,
					(unsigned long long)(capacity - used),
					(unsigned long long)capacity);
	} while (!atomic_compare_exchange_weak(&hw->mem_used, &used,
					       used + bytes));
	return 0;
}

static void uncharge(struct emul_hw *hw, uint64_t bytes)
{
	atomic_fetch_sub(&hw->mem_used, bytes);
}

static void init_sync(struct emul_buf *b)
{
	pthread_mutex_init(&b->lock, NULL);
	emul_cond_init(&b->idle);
}

static int map_fd(struct emul_buf *b, uint64_t size)
{
	void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);

	if (map == MAP_FAILED)
		return npu_fail(-errno, "mapping a buffer of %llu bytes: %s",
				(unsigned long long)size, npu_strerror(errno));
	b->map = map;
	return 0;
}

static uint64_t huge_size;
static pthread_once_t huge_size_once = PTHREAD_ONCE_INIT;

static void read_huge_page_size(void)
{
	unsigned long long size = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size",
			"re");

	if (f) {
		if (fscanf(f, "%llu", &size) != 1)
			size = 0;
		fclose(f);
	}
	huge_size = size && !(size & (size - 1)) ? size : 2ULL << 20;
}

/* The PMD size of transparent huge pages (2 MiB on x86-64), read once. */
static uint64_t huge_page_size(void)
{
	pthread_once(&huge_size_once, read_huge_page_size);
	return huge_size;
}

/*
 * NPU_BUFFER_PRIVATE memory: anonymous, aligned to the huge page size so
 * that huge pages can back all of it, and asked for them: fewer TLB
 * misses for kernels that stream a device's weights and caches. Measured
 * in one run each, the previous build alternating with this one: on the
 * 16-core Sapphire Rapids guest (16 engines) prefill of the 1B shape went
 * from 812-832 to 865-897 tok/s and decode B=8 from 239-242 to 249-253;
 * on the 2-core Zen 5 from 74.3-75.7 to 75.8-77.2 and from 56.2-57.7 to
 * 60.2-60.7. Decode B=1 did not move beyond its noise on either. (Read
 * sweeps alone favoured huge pages on one boot of the Sapphire Rapids,
 * 176 GB/s against 131, and base pages on the next, 127 against 172.)
 * MADV_DONTFORK: a fork()ed child neither inherits the device's memory
 * nor makes the engines' writes copy pages after the fork.
 */
static int map_private(struct emul_buf *b, uint64_t size)
{
	uint64_t huge = huge_page_size();
	uint64_t span = size >= huge ? size + huge : size;
	uint64_t head = 0;
	uint8_t *p = mmap(NULL, span, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return npu_fail(errno == ENOMEM ? -ENOMEM : -errno,
				"mapping a private buffer of %llu bytes: %s",
				(unsigned long long)size, npu_strerror(errno));
	if (span != size) {
		head = -(uintptr_t)p & (huge - 1);
		if (head)
			munmap(p, head);
		if (span - head - size)
			munmap(p + head + size, span - head - size);
		/* Without THP (or with it off) this fails: base pages. */
		madvise(p + head, size, MADV_HUGEPAGE);
	}
	if (madvise(p + head, size, MADV_DONTFORK) != 0) {
		int err = npu_fail(-errno, "madvise(MADV_DONTFORK): %s",
				   npu_strerror(errno));

		munmap(p + head, size);
		return err;
	}
	b->fd = -1;
	b->map = p + head;
	return 0;
}

/* A sealed memfd of @size bytes, mapped shared: exportable memory. */
static int map_memfd(struct emul_buf *b, uint64_t size)
{
	int err;

	b->fd = memfd_create("rbln-emul-buffer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (b->fd < 0)
		return npu_fail(-errno, "memfd_create: %s", npu_strerror(errno));
	if (ftruncate(b->fd, (off_t)size) != 0) {
		err = npu_fail(errno == EFBIG || errno == ENOSPC ? -ENOMEM : -errno,
			       "sizing a buffer of %llu bytes: %s",
			       (unsigned long long)size, npu_strerror(errno));
		goto fail_close;
	}
	if (fcntl(b->fd, F_ADD_SEALS, EMUL_REQUIRED_SEALS | F_SEAL_SEAL) != 0) {
		err = npu_fail(-errno, "sealing a buffer: %s", npu_strerror(errno));
		goto fail_close;
	}
	err = map_fd(b, size);
	if (!err)
		return 0;
fail_close:
	close(b->fd);
	b->fd = -1;
	return err;
}

/* The device's memory lives on its node, like the driver's pages. */
static void place_on_node(struct emul_hw *hw, void *map, uint64_t size)
{
	if (hw->numa_node >= 0 && numa_available() >= 0)
		numa_tonode_memory(map, size, hw->numa_node);
}

int emul_buffer_alloc(npu_buffer *buf, uint64_t size, uint32_t flags)
{
	struct emul_buf *b = emul_buf(buf);
	struct emul_hw *hw = hw_of(buf);
	uint64_t page = npu_page_size();
	uint64_t max = hw->ctx->mem_size;
	int err;

	if (size > max)
		return npu_fail(-ENOMEM,
				"device %u: buffer of %llu bytes exceeds the largest possible, %llu bytes",
				hw->index, (unsigned long long)size,
				(unsigned long long)max);
	uint64_t rounded = (size + page - 1) / page * page;

	if (!(flags & NPU_BUFFER_HOST)) {
		err = charge(hw, rounded, size);
		if (err)
			return err;
		b->charged = rounded;
	}

	err = flags & NPU_BUFFER_PRIVATE ? map_private(b, rounded) :
					   map_memfd(b, rounded);
	if (err) {
		if (b->charged)
			uncharge(hw, b->charged);
		return err;
	}
	place_on_node(hw, b->map, rounded);
	init_sync(b);
	buf->size = rounded;
	return 0;
}

int emul_buffer_import(npu_buffer *buf, int fd)
{
	struct emul_buf *b = emul_buf(buf);
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0 || (seals & EMUL_REQUIRED_SEALS) != EMUL_REQUIRED_SEALS)
		return npu_fail(-EINVAL,
				"fd %d is not a buffer exported by the emulated backend (no size seals)",
				fd);
	if (fstat(fd, &st) != 0)
		return npu_fail(-errno, "fstat of fd %d: %s", fd, npu_strerror(errno));
	if (st.st_size <= 0 || (uint64_t)st.st_size % npu_page_size())
		return npu_fail(-EINVAL, "fd %d has size %lld, not whole pages",
				fd, (long long)st.st_size);

	/* Keep an fd of our own: the caller closes theirs. */
	b->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (b->fd < 0)
		return npu_fail(-errno, "dup of fd %d: %s", fd, npu_strerror(errno));
	int err = map_fd(b, (uint64_t)st.st_size);

	if (err) {
		close(b->fd);
		return err;
	}
	init_sync(b);
	b->charged = 0;
	buf->size = (uint64_t)st.st_size;
	return 0;
}

void emul_buffer_free(npu_buffer *buf)
{
	struct emul_buf *b = emul_buf(buf);

	emul_buffer_wait_idle(buf, INT64_MAX);
	munmap(b->map, buf->size);
	if (b->fd >= 0)
		close(b->fd);
	if (b->charged)
		uncharge(hw_of(buf), b->charged);
	pthread_cond_destroy(&b->idle);
	pthread_mutex_destroy(&b->lock);
}

int emul_buffer_map(npu_buffer *buf, void **ptr)
{
	*ptr = emul_buf(buf)->map;
	return 0;
}

int emul_buffer_export(npu_buffer *buf, int *fd)
{
	*fd = fcntl(emul_buf(buf)->fd, F_DUPFD_CLOEXEC, 0);
	if (*fd < 0)
		return npu_fail(-errno, "exporting a buffer: %s", npu_strerror(errno));
	return 0;
}

void emul_buf_busy(struct emul_buf *b)
{
	pthread_mutex_lock(&b->lock);
	b->busy++;
	pthread_mutex_unlock(&b->lock);
}

void emul_buf_unbusy(struct emul_buf *b)
{
	pthread_mutex_lock(&b->lock);
	if (--b->busy == 0)
		pthread_cond_broadcast(&b->idle);
	pthread_mutex_unlock(&b->lock);
}

int emul_buffer_wait_idle(npu_buffer *buf, int64_t deadline)
{
	struct emul_buf *b = emul_buf(buf);
	struct timespec ts = emul_timespec(deadline);
	int err = 0;

	pthread_mutex_lock(&b->lock);
	while (b->busy && !err) {
		if (deadline == INT64_MAX)
			pthread_cond_wait(&b->idle, &b->lock);
		else if (pthread_cond_timedwait(&b->idle, &b->lock, &ts) == ETIMEDOUT)
			err = b->busy ? -ETIME : 0;
	}
	pthread_mutex_unlock(&b->lock);
	return err;
}
