// SPDX-License-Identifier: MIT
/*
 * Buffers of the emulated backend: one memfd each, mapped shared. A memfd
 * is a real file descriptor, so export is a dup and import a second
 * mapping of the same pages: devices of one process and devices of
 * different processes see each other's writes, which is what semaphores
 * and peer copies need. The memfd is sealed against resizing, so no
 * holder of the fd can shrink it under a mapping (SIGBUS) and import can
 * trust its size.
 */
#include <errno.h>
#include <fcntl.h>
#include <numa.h>
#include <numaif.h>
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

	b->fd = memfd_create("rbln-emul-buffer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (b->fd < 0) {
		err = npu_fail(-errno, "memfd_create: %s", npu_strerror(errno));
		goto fail_uncharge;
	}
	if (ftruncate(b->fd, (off_t)rounded) != 0) {
		err = npu_fail(errno == EFBIG || errno == ENOSPC ? -ENOMEM : -errno,
			       "sizing a buffer of %llu bytes: %s",
			       (unsigned long long)rounded, npu_strerror(errno));
		goto fail_close;
	}
	if (fcntl(b->fd, F_ADD_SEALS, EMUL_REQUIRED_SEALS | F_SEAL_SEAL) != 0) {
		err = npu_fail(-errno, "sealing a buffer: %s", npu_strerror(errno));
		goto fail_close;
	}
	err = map_fd(b, rounded);
	if (err)
		goto fail_close;
	place_on_node(hw, b->map, rounded);
	init_sync(b);
	buf->size = rounded;
	return 0;

fail_close:
	close(b->fd);
fail_uncharge:
	if (b->charged)
		uncharge(hw, b->charged);
	return err;
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
