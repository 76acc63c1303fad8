/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vmtest.h - helpers of the test programs the VM runs against rbln.ko:
 * TAP output, raw ioctls, device nodes and a small command-stream builder.
 */
#ifndef RBLN_VMTEST_H
#define RBLN_VMTEST_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rbln_accel.h"
#include "rbln_isa.h"

static unsigned int vt_count __attribute__((unused));
static unsigned int vt_failed __attribute__((unused));

static inline void vt_result(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void vt_result(bool ok, const char *fmt, ...)
{
	va_list ap;

	vt_count++;
	if (!ok)
		vt_failed++;
	printf("%s %u - ", ok ? "ok" : "not ok", vt_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* A check of an errno result: @got and @want are 0 or negative errnos. */
#define vt_expect(got, want, ...) do {					\
	int vt_got_ = (got), vt_want_ = (want);				\
	if (vt_got_ != vt_want_)					\
		printf("# got %d (%s), want %d (%s)\n", vt_got_,	\
		       strerror(-vt_got_), vt_want_, strerror(-vt_want_)); \
	vt_result(vt_got_ == vt_want_, __VA_ARGS__);			\
} while (0)

static inline int vt_finish(void)
{
	printf("1..%u\n", vt_count);
	printf("# %u passed, %u failed\n", vt_count - vt_failed, vt_failed);
	return vt_failed ? 1 : 0;
}

static inline void vt_die(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(2);
}

/* ioctl() as the kernel answered it: 0 or -errno. */
static inline int vt_ioctl(int fd, unsigned long req, void *arg)
{
	int r;

	do {
		r = ioctl(fd, req, arg);
	} while (r == -1 && (errno == EINTR || errno == EAGAIN));
	return r == -1 ? -errno : 0;
}

static inline int64_t vt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* /dev/rblnN, else the Nth rbln accel node. */
static inline int vt_open(unsigned int index)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/dev/rbln%u", index);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(path, sizeof(path), "/dev/accel/accel%u", index);
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
	return fd;
}

static inline int vt_query(int fd, struct drm_rbln_device_info *info)
{
	struct drm_rbln_query q = {
		.param = DRM_RBLN_QUERY_DEVICE_INFO,
		.size = sizeof(*info),
		.data = (uintptr_t)info,
	};

	memset(info, 0, sizeof(*info));
	return vt_ioctl(fd, DRM_IOCTL_RBLN_QUERY, &q);
}

static inline int vt_bo_create(int fd, uint64_t size, uint32_t flags,
			       uint32_t *handle)
{
	struct drm_rbln_bo_create args = { .size = size, .flags = flags };
	int ret = vt_ioctl(fd, DRM_IOCTL_RBLN_BO_CREATE, &args);

	*handle = args.handle;
	return ret;
}

static inline int vt_gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close args = { .handle = handle };

	return vt_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &args);
}

static inline int vt_queue_create(int fd, uint32_t priority, uint32_t *id)
{
	struct drm_rbln_queue_create args = { .priority = priority };
	int ret = vt_ioctl(fd, DRM_IOCTL_RBLN_QUEUE_CREATE, &args);

	*id = args.queue_id;
	return ret;
}

static inline int vt_syncobj_create(int fd, uint32_t *handle)
{
	struct drm_syncobj_create args = { 0 };
	int ret = vt_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &args);

	*handle = args.handle;
	return ret;
}

static inline int vt_wait_job(int fd, uint32_t queue, uint64_t job,
			      int64_t deadline, int *status)
{
	struct drm_rbln_wait w = {
		.type = DRM_RBLN_WAIT_JOB,
		.handle = queue,
		.job_id = job,
		.timeout_ns = deadline,
	};
	int ret = vt_ioctl(fd, DRM_IOCTL_RBLN_WAIT, &w);

	if (status)
		*status = w.status;
	return ret;
}

/* CPU mapping of a whole buffer object, or MAP_FAILED. */
static inline void *vt_bo_map(int fd, uint32_t handle, uint64_t size)
{
	struct drm_rbln_bo_mmap_offset mo = { .handle = handle };

	if (vt_ioctl(fd, DRM_IOCTL_RBLN_BO_MMAP_OFFSET, &mo))
		return MAP_FAILED;
	return mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    (off_t)mo.offset);
}

/*
 * A key of the DRM client usage stats in /proc/self/fdinfo/<fd>: 0 with
 * its value (sizes with a KiB or MiB unit converted to bytes, "ns" and
 * plain numbers as they are, drm-driver's string in @str if given), or
 * -ENOENT when the key is missing.
 */
static inline int vt_fdinfo(int fd, const char *key, uint64_t *value,
			    char *str, size_t str_size)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char unit[16] = "", *v;

		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		v = line + klen + 1;
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = 0;
		if (str)
			snprintf(str, str_size, "%s", v);
		if (value) {
			*value = 0;
			sscanf(v, "%" SCNu64 " %15s", value, unit);
			if (!strcmp(unit, "KiB"))
				*value <<= 10;
			else if (!strcmp(unit, "MiB"))
				*value <<= 20;
		}
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* ------------------------------------------------------------- streams */

struct vt_stream {
	uint8_t buf[65536];
	uint32_t size;
};

static inline void vt_stream_init(struct vt_stream *s)
{
	struct rbln_isa_stream_header h = {
		.magic = RBLN_ISA_MAGIC,
		.version_major = RBLN_ISA_VERSION_MAJOR,
		.version_minor = RBLN_ISA_VERSION_MINOR,
	};

	memset(s->buf, 0, sizeof(s->buf));
	memcpy(s->buf, &h, sizeof(h));
	s->size = sizeof(h);
}

/* Appends a command; returns a pointer to it for later corruption. */
static inline void *vt_stream_put(struct vt_stream *s, const void *cmd,
				  uint32_t size)
{
	void *at = s->buf + s->size;

	memcpy(at, cmd, size);
	s->size += size;
	((struct rbln_isa_stream_header *)s->buf)->size = s->size;
	return at;
}

static inline struct rbln_isa_operand vt_op(uint32_t bo, uint64_t offset,
					    uint64_t size)
{
	return (struct rbln_isa_operand){ .bo = bo, .offset = offset,
					  .size = size };
}

static inline void *vt_fill(struct vt_stream *s, uint32_t bo, uint64_t offset,
			    uint64_t size, uint32_t value)
{
	struct rbln_isa_fill c = {
		.hdr = { .opcode = RBLN_OP_FILL, .size = sizeof(c) },
		.dst = vt_op(bo, offset, size),
		.value = value,
	};

	return vt_stream_put(s, &c, sizeof(c));
}

static inline void *vt_copy(struct vt_stream *s, uint32_t dst, uint64_t doff,
			    uint32_t src, uint64_t soff, uint64_t size)
{
	struct rbln_isa_copy c = {
		.hdr = { .opcode = RBLN_OP_COPY, .size = sizeof(c) },
		.dst = vt_op(dst, doff, size),
		.src = vt_op(src, soff, size),
	};

	return vt_stream_put(s, &c, sizeof(c));
}

static inline void *vt_sem_wait(struct vt_stream *s, uint32_t bo,
				uint64_t offset, uint32_t cond, uint64_t value,
				uint64_t timeout_ns)
{
	struct rbln_isa_sem_wait c = {
		.hdr = { .opcode = RBLN_OP_SEM_WAIT, .size = sizeof(c) },
		.sem = vt_op(bo, offset, 8),
		.cond = cond,
		.value = value,
		.timeout_ns = timeout_ns,
	};

	return vt_stream_put(s, &c, sizeof(c));
}

static inline void *vt_sem_signal(struct vt_stream *s, uint32_t bo,
				  uint64_t offset, uint32_t op, uint64_t value)
{
	struct rbln_isa_sem_signal c = {
		.hdr = { .opcode = RBLN_OP_SEM_SIGNAL, .size = sizeof(c) },
		.sem = vt_op(bo, offset, 8),
		.op = op,
		.value = value,
	};

	return vt_stream_put(s, &c, sizeof(c));
}

static inline void *vt_add(struct vt_stream *s, uint32_t dst, uint64_t doff,
			   uint32_t a, uint64_t aoff, uint32_t b,
			   uint64_t boff, uint64_t bytes)
{
	struct rbln_isa_add c = {
		.hdr = { .opcode = RBLN_OP_ADD, .size = sizeof(c) },
		.dst = vt_op(dst, doff, bytes),
		.a = vt_op(a, aoff, bytes),
		.b = vt_op(b, boff, bytes),
	};

	return vt_stream_put(s, &c, sizeof(c));
}

#endif /* RBLN_VMTEST_H */
