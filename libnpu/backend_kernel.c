// SPDX-License-Identifier: MIT
/*
 * The kernel backend: libnpu on rbln.ko's DRM accel nodes, through libdrm
 * (ioctls, syncobjs, PRIME) and libudev (enumeration).
 *
 * Devices: the accel nodes whose parent device is bound to the rbln driver,
 * found with libudev; where there is no sysfs (a container given only
 * /dev/rblnN nodes) every rbln node npu_rbln_nodes() finds is asked for its
 * index with DRM_IOCTL_RBLN_QUERY. Hardware indices are the devices in
 * the order of their own index, so on a full machine hw_index N is
 * /dev/rblnN.
 *
 * Fences: each job gets its own binary syncobj as out-sync. A fence is
 * waited for with DRM_IOCTL_RBLN_WAIT (which also returns the job's status)
 * while its queue exists, else on the syncobj, reading the status from a
 * sync_file. A fence of another device becomes an in-sync by exporting its
 * syncobj as a sync_file and importing it into a syncobj of this device.
 * Every job's syncobj is also transferred to a point of the device's
 * timeline syncobj, so that closing a device can wait for all its jobs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libudev.h>
#include <linux/sync_file.h>
#include <xf86drm.h>

#include "npu_backend.h"
#include "rbln_accel.h"
#include "rbln_isa.h"
#include "rbln_model.h"

_Static_assert(NPU_ACCESS_READ == DRM_RBLN_BO_READ, "access bits");
_Static_assert(NPU_ACCESS_WRITE == DRM_RBLN_BO_WRITE, "access bits");
_Static_assert(NPU_BUFFER_HOST == DRM_RBLN_BO_HOST, "buffer flags");
_Static_assert((int)NPU_PRIORITY_LOW == DRM_RBLN_PRIORITY_LOW, "priority");
_Static_assert((int)NPU_PRIORITY_NORMAL == DRM_RBLN_PRIORITY_NORMAL, "priority");
_Static_assert((int)NPU_PRIORITY_HIGH == DRM_RBLN_PRIORITY_HIGH, "priority");

/* ------------------------------------------------------------- state */

struct knode {
	char path[64];
	unsigned int index;
};

struct kctx {
	unsigned int count;
	struct knode *nodes;
};

/* GEM handles of one fd and how many buffers use each (self-imports). */
struct khandle {
	uint32_t handle;
	unsigned int users;
};

struct kdev {
	int fd;
	pthread_mutex_t lock;		/* handles, maps, timeline */
	struct khandle *handles;
	unsigned int nhandles;
	unsigned int handles_cap;
	uint32_t timeline;		/* syncobj: point N = job N of the handle */
	uint64_t point;
};

struct kbuf {
	uint32_t handle;
	void *map;
};

struct kqueue {
	uint32_t queue_id;
};

struct kfence {
	uint32_t syncobj;
	uint32_t queue_id;
	uint64_t job_id;
};

static struct kctx *kctx(npu_context *ctx)
{
	return ctx->backend;
}

static struct kdev *kdev(npu_device *dev)
{
	return npu_priv(dev);
}

static int kioctl(int fd, unsigned long request, void *arg)
{
	/* drmIoctl() restarts on EINTR and EAGAIN. */
	return drmIoctl(fd, request, arg) ? -errno : 0;
}

static int kquery(int fd, struct drm_rbln_device_info *di)
{
	struct drm_rbln_query q = {
		.param = DRM_RBLN_QUERY_DEVICE_INFO,
		.size = sizeof(*di),
		.data = (uintptr_t)di,
	};

	memset(di, 0, sizeof(*di));
	return kioctl(fd, DRM_IOCTL_RBLN_QUERY, &q);
}

static int kopen(const char *path, int *fd)
{
	*fd = open(path, O_RDWR | O_CLOEXEC);
	if (*fd < 0)
		return npu_fail(-errno, "cannot open %s: %s", path,
				strerror(errno));
	return 0;
}

/* ------------------------------------------------------------- enumeration */

static int add_node(struct kctx *k, const char *path, unsigned int index)
{
	struct knode *grown;

	if (strlen(path) >= sizeof(k->nodes[0].path))
		return 0;
	for (unsigned int i = 0; i < k->count; i++)
		if (k->nodes[i].index == index)
			return 0;	/* /dev/rblnN and its accel node */
	grown = realloc(k->nodes, (k->count + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	k->nodes = grown;
	snprintf(k->nodes[k->count].path, sizeof(k->nodes[0].path), "%s", path);
	k->nodes[k->count].index = index;
	k->count++;
	return 0;
}

/* accel devices whose parent is bound to rbln, with the parent's index. */
static int enum_udev(struct kctx *k)
{
	struct udev *udev = udev_new();
	struct udev_enumerate *en;
	struct udev_list_entry *entry;
	int err = 0;

	if (!udev)
		return 0;
	en = udev_enumerate_new(udev);
	if (!en || udev_enumerate_add_match_subsystem(en, "accel") < 0 ||
	    udev_enumerate_scan_devices(en) < 0)
		goto out;

	udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(en)) {
		struct udev_device *d, *parent;
		const char *driver, *node, *index;
		char *end;
		unsigned long n;

		d = udev_device_new_from_syspath(udev,
						 udev_list_entry_get_name(entry));
		if (!d)
			continue;
		parent = udev_device_get_parent(d);
		driver = parent ? udev_device_get_driver(parent) : NULL;
		node = udev_device_get_devnode(d);
		index = parent ? udev_device_get_sysattr_value(parent, "index") :
				 NULL;
		if (driver && strcmp(driver, "rbln") == 0 && node && index) {
			n = strtoul(index, &end, 10);
			if (end != index && n <= UINT_MAX &&
			    access(node, F_OK) == 0)
				err = add_node(k, node, (unsigned int)n);
		}
		udev_device_unref(d);
		if (err)
			break;
	}
out:
	udev_enumerate_unref(en);
	udev_unref(udev);
	return err;
}

/* Without sysfs: ask each node found in /dev for its index. */
static int enum_nodes(struct kctx *k)
{
	struct npu_rbln_node *nodes;
	int count = npu_rbln_nodes(&nodes);
	int err = 0;

	if (count < 0)
		return count;
	for (int i = 0; i < count && !err; i++) {
		struct drm_rbln_device_info di;
		int fd = open(nodes[i].path, O_RDWR | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (kquery(fd, &di) == 0)
			err = add_node(k, nodes[i].path, di.index);
		close(fd);
	}
	free(nodes);
	return err;
}

static int by_index(const void *a, const void *b)
{
	const struct knode *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

static int k_context_init(npu_context *ctx,
			  const struct npu_context_options *opts)
{
	struct kctx *k = calloc(1, sizeof(*k));
	int err;

	(void)opts;
	if (!k)
		return npu_fail(-ENOMEM, NULL);
	err = enum_udev(k);
	if (!err && k->count == 0)
		err = enum_nodes(k);
	if (err) {
		free(k->nodes);
		free(k);
		return npu_fail(err, "enumerating rbln devices");
	}
	if (k->count > 1)	/* qsort() of no array (NULL) is undefined */
		qsort(k->nodes, k->count, sizeof(*k->nodes), by_index);
	ctx->backend = k;
	ctx->hw_count = k->count;
	return 0;
}

static void k_context_fini(npu_context *ctx)
{
	struct kctx *k = kctx(ctx);

	if (!k)
		return;
	free(k->nodes);
	free(k);
	ctx->backend = NULL;
}

/* ------------------------------------------------------------- devices */

static void fill_info(npu_context *ctx, unsigned int hw_index,
		      const struct drm_rbln_device_info *di,
		      struct npu_device_info *info)
{
	memset(info, 0, sizeof(*info));
	info->hw_index = hw_index;
	info->device_count = ctx->hw_count;
	snprintf(info->name, sizeof(info->name), "%.*s",
		 (int)sizeof(di->name), di->name);
	snprintf(info->path, sizeof(info->path), "%s",
		 kctx(ctx)->nodes[hw_index].path);
	info->mem_total = di->mem_total;
	info->mem_used = di->mem_used;
	info->num_engines = di->num_engines;
	info->numa_node = di->numa_node;
	info->isa_major = di->isa_version >> 16;
	info->isa_minor = di->isa_version & 0xffff;
	if (di->capabilities & DRM_RBLN_CAP_SEMAPHORES)
		info->capabilities |= NPU_CAP_SEMAPHORES;
	if (di->capabilities & DRM_RBLN_CAP_PEER_BUFFERS)
		info->capabilities |= NPU_CAP_PEER_BUFFERS;
	if (di->capabilities & DRM_RBLN_CAP_TIMELINE_SYNCOBJ)
		info->capabilities |= NPU_CAP_TIMELINE;
	if (di->capabilities & DRM_RBLN_CAP_COMPUTE_F32)
		info->capabilities |= NPU_CAP_COMPUTE_F32;
	info->max_buffer_size = di->max_bo_size;
	info->max_submit_buffers = di->max_submit_bos;
	info->max_cmd_size = di->max_cmd_size;
}

static int k_device_info(npu_context *ctx, unsigned int hw_index,
			 struct npu_device_info *info)
{
	struct drm_rbln_device_info di;
	int fd, err;

	err = kopen(kctx(ctx)->nodes[hw_index].path, &fd);
	if (err)
		return err;
	err = kquery(fd, &di);
	close(fd);
	if (err)
		return npu_fail(err, "DRM_IOCTL_RBLN_QUERY on %s: %s",
				kctx(ctx)->nodes[hw_index].path, strerror(-err));
	fill_info(ctx, hw_index, &di, info);
	return 0;
}

static int k_device_open(npu_device *dev)
{
	struct kdev *kd = kdev(dev);
	const char *path = kctx(dev->ctx)->nodes[dev->hw_index].path;
	struct drm_rbln_device_info di;
	int err;

	kd->fd = -1;
	err = kopen(path, &kd->fd);
	if (err)
		return err;
	err = kquery(kd->fd, &di);
	if (!err)
		err = drmSyncobjCreate(kd->fd, 0, &kd->timeline) ? -errno : 0;
	if (err) {
		close(kd->fd);
		kd->fd = -1;
		return npu_fail(err, "setting up %s: %s", path, strerror(-err));
	}
	pthread_mutex_init(&kd->lock, NULL);
	return 0;
}

static void k_device_close(npu_device *dev)
{
	struct kdev *kd = kdev(dev);
	uint64_t point;

	if (kd->fd < 0)
		return;
	pthread_mutex_lock(&kd->lock);
	point = kd->point;
	pthread_mutex_unlock(&kd->lock);
	/* Every job submitted through the handle has ended after this. */
	if (point)
		drmSyncobjTimelineWait(kd->fd, &kd->timeline, &point, 1,
				       INT64_MAX,
				       DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL |
				       DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
				       NULL);
}

static void k_device_release(npu_device *dev)
{
	struct kdev *kd = kdev(dev);

	if (kd->fd < 0)
		return;
	drmSyncobjDestroy(kd->fd, kd->timeline);
	close(kd->fd);
	kd->fd = -1;
	free(kd->handles);
	pthread_mutex_destroy(&kd->lock);
}

static int k_device_query(npu_device *dev, struct npu_device_info *info)
{
	struct drm_rbln_device_info di;
	int err = kquery(kdev(dev)->fd, &di);

	if (err)
		return npu_fail(err, "DRM_IOCTL_RBLN_QUERY: %s", strerror(-err));
	fill_info(dev->ctx, dev->hw_index, &di, info);
	return 0;
}

/* ------------------------------------------------------------- buffers */

/* Count one more user of @handle; called with kd->lock held. */
static int handle_get(struct kdev *kd, uint32_t handle)
{
	for (unsigned int i = 0; i < kd->nhandles; i++) {
		if (kd->handles[i].handle == handle) {
			kd->handles[i].users++;
			return 0;
		}
	}
	if (kd->nhandles == kd->handles_cap) {
		unsigned int cap = kd->handles_cap ? 2 * kd->handles_cap : 64;
		struct khandle *grown = realloc(kd->handles,
						cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		kd->handles = grown;
		kd->handles_cap = cap;
	}
	kd->handles[kd->nhandles++] = (struct khandle){ handle, 1 };
	return 0;
}

/* Drop a user of @handle and close it after the last; kd->lock held. */
static void handle_put(struct kdev *kd, uint32_t handle)
{
	for (unsigned int i = 0; i < kd->nhandles; i++) {
		if (kd->handles[i].handle != handle)
			continue;
		if (--kd->handles[i].users == 0) {
			struct drm_gem_close close_args = { .handle = handle };

			kd->handles[i] = kd->handles[--kd->nhandles];
			kioctl(kd->fd, DRM_IOCTL_GEM_CLOSE, &close_args);
		}
		return;
	}
}

static int k_buffer_alloc(npu_buffer *buf, uint64_t size, uint32_t flags)
{
	struct kdev *kd = kdev(buf->dev);
	struct kbuf *kb = npu_priv(buf);
	struct drm_rbln_bo_create args = {
		.size = size,
		.flags = (flags & NPU_BUFFER_HOST) ? DRM_RBLN_BO_HOST : 0,
	};
	struct drm_rbln_bo_info info = { 0 };
	int err;

	err = kioctl(kd->fd, DRM_IOCTL_RBLN_BO_CREATE, &args);
	if (err == -ENOMEM)
		return npu_fail(err, "buffer of %llu bytes: %s exhausted",
				(unsigned long long)size,
				(flags & NPU_BUFFER_HOST) ?
				"rbln.ko's host memory budget (half of RAM)" :
				"device memory or rbln.ko's host memory budget");
	if (err)
		return npu_fail(err, "DRM_IOCTL_RBLN_BO_CREATE of %llu bytes: %s",
				(unsigned long long)size, strerror(-err));
	info.handle = args.handle;
	err = kioctl(kd->fd, DRM_IOCTL_RBLN_BO_INFO, &info);
	pthread_mutex_lock(&kd->lock);
	if (!err)
		err = handle_get(kd, args.handle);
	if (err) {
		struct drm_gem_close close_args = { .handle = args.handle };

		kioctl(kd->fd, DRM_IOCTL_GEM_CLOSE, &close_args);
	}
	pthread_mutex_unlock(&kd->lock);
	if (err)
		return npu_fail(err, "new buffer: %s", strerror(-err));
	kb->handle = args.handle;
	buf->size = info.size;
	return 0;
}

static int wait_bo(struct kdev *kd, uint32_t handle, int64_t deadline)
{
	struct drm_rbln_wait w = {
		.type = DRM_RBLN_WAIT_BO,
		.handle = handle,
		.timeout_ns = deadline,
	};

	return kioctl(kd->fd, DRM_IOCTL_RBLN_WAIT, &w);
}

static void k_buffer_free(npu_buffer *buf)
{
	struct kdev *kd = kdev(buf->dev);
	struct kbuf *kb = npu_priv(buf);

	wait_bo(kd, kb->handle, INT64_MAX);
	if (kb->map)
		munmap(kb->map, buf->size);
	pthread_mutex_lock(&kd->lock);
	handle_put(kd, kb->handle);
	pthread_mutex_unlock(&kd->lock);
}

static int k_buffer_map(npu_buffer *buf, void **ptr)
{
	struct kdev *kd = kdev(buf->dev);
	struct kbuf *kb = npu_priv(buf);
	struct drm_rbln_bo_mmap_offset args = { .handle = kb->handle };
	int err = 0;

	pthread_mutex_lock(&kd->lock);
	if (!kb->map) {
		err = kioctl(kd->fd, DRM_IOCTL_RBLN_BO_MMAP_OFFSET, &args);
		if (!err) {
			void *map = mmap(NULL, buf->size, PROT_READ | PROT_WRITE,
					 MAP_SHARED, kd->fd, (off_t)args.offset);

			if (map == MAP_FAILED)
				err = -errno;
			else
				kb->map = map;
		}
	}
	*ptr = kb->map;
	pthread_mutex_unlock(&kd->lock);
	if (err)
		return npu_fail(err, "mapping a buffer of %llu bytes: %s",
				(unsigned long long)buf->size, strerror(-err));
	return 0;
}

static int k_buffer_export(npu_buffer *buf, int *fd)
{
	struct kbuf *kb = npu_priv(buf);
	int err = drmPrimeHandleToFD(kdev(buf->dev)->fd, kb->handle,
				     DRM_CLOEXEC | DRM_RDWR, fd);

	if (err)
		return npu_fail(-errno, "exporting a buffer: %s",
				strerror(errno));
	return 0;
}

static int k_buffer_import(npu_buffer *buf, int fd)
{
	struct kdev *kd = kdev(buf->dev);
	struct kbuf *kb = npu_priv(buf);
	struct drm_rbln_bo_info info = { 0 };
	uint32_t handle;
	int err;

	pthread_mutex_lock(&kd->lock);
	err = drmPrimeFDToHandle(kd->fd, fd, &handle) ? -errno : 0;
	if (!err)
		err = handle_get(kd, handle);
	pthread_mutex_unlock(&kd->lock);
	if (err)
		return npu_fail(err, "importing buffer fd %d: %s", fd,
				strerror(-err));
	info.handle = handle;
	err = kioctl(kd->fd, DRM_IOCTL_RBLN_BO_INFO, &info);
	if (err) {
		pthread_mutex_lock(&kd->lock);
		handle_put(kd, handle);
		pthread_mutex_unlock(&kd->lock);
		return npu_fail(err, "DRM_IOCTL_RBLN_BO_INFO: %s", strerror(-err));
	}
	kb->handle = handle;
	buf->size = info.size;
	return 0;
}

static int k_buffer_wait_idle(npu_buffer *buf, int64_t deadline)
{
	struct kbuf *kb = npu_priv(buf);
	int err = wait_bo(kdev(buf->dev), kb->handle, deadline);

	if (err && err != -ETIME)
		return npu_fail(err, "waiting for a buffer: %s", strerror(-err));
	return err;
}

/* ------------------------------------------------------------- queues */

static int k_queue_create(npu_queue *q)
{
	struct drm_rbln_queue_create args = { .priority = (uint32_t)q->prio };
	int err = kioctl(kdev(q->dev)->fd, DRM_IOCTL_RBLN_QUEUE_CREATE, &args);

	if (err == -ENOSPC)
		return npu_fail(err, "DRM_IOCTL_RBLN_QUEUE_CREATE: this process has "
				"the most queues rbln.ko allows on the device "
				"(module parameter max_queues)");
	if (err)
		return npu_fail(err, "DRM_IOCTL_RBLN_QUEUE_CREATE: %s",
				strerror(-err));
	((struct kqueue *)npu_priv(q))->queue_id = args.queue_id;
	return 0;
}

static void k_queue_destroy(npu_queue *q)
{
	struct drm_rbln_queue_destroy args = {
		.queue_id = ((struct kqueue *)npu_priv(q))->queue_id,
	};

	kioctl(kdev(q->dev)->fd, DRM_IOCTL_RBLN_QUEUE_DESTROY, &args);
}

/* ------------------------------------------------------------- submission */

/* A fence of another device as a syncobj of @kd (to destroy after use). */
static int import_fence(struct kdev *kd, npu_fence *f, uint32_t *handle)
{
	struct kfence *kf = npu_priv(f);
	int sync_fd, err;

	if (drmSyncobjExportSyncFile(kdev(f->dev)->fd, kf->syncobj, &sync_fd))
		return -errno;
	err = drmSyncobjCreate(kd->fd, 0, handle) ? -errno : 0;
	if (!err) {
		err = drmSyncobjImportSyncFile(kd->fd, *handle, sync_fd) ?
		      -errno : 0;
		if (err)
			drmSyncobjDestroy(kd->fd, *handle);
	}
	close(sync_fd);
	return err;
}

static int k_submit(npu_queue *q, const struct npu_submit_info *info,
		    npu_fence *fence)
{
	struct kdev *kd = kdev(q->dev);
	struct kfence *kf = npu_priv(fence);
	struct drm_rbln_bo_ref *refs = NULL;
	struct drm_rbln_sync *syncs = NULL;
	uint32_t *temps = NULL, ntemps = 0, syncobj = 0;
	struct drm_rbln_submit_diag diag = { 0 };
	struct drm_rbln_submit args = { 0 };
	uint64_t point;
	int err;

	refs = calloc(info->num_buffers + 1, sizeof(*refs));
	syncs = calloc(info->num_wait + 1, sizeof(*syncs));
	temps = calloc(info->num_wait + 1, sizeof(*temps));
	if (!refs || !syncs || !temps) {
		err = npu_fail(-ENOMEM, NULL);
		goto out;
	}
	for (uint32_t i = 0; i < info->num_buffers; i++) {
		refs[i].handle = ((struct kbuf *)npu_priv(info->buffers[i].buffer))->handle;
		refs[i].flags = info->buffers[i].access;
	}
	for (uint32_t i = 0; i < info->num_wait; i++) {
		npu_fence *w = info->wait[i];

		if (w->dev == q->dev) {
			syncs[i].handle = ((struct kfence *)npu_priv(w))->syncobj;
			continue;
		}
		err = import_fence(kd, w, &temps[ntemps]);
		if (err) {
			err = npu_fail(err, "waiting for a fence of device %u: %s",
				       w->dev->index, strerror(-err));
			goto out;
		}
		syncs[i].handle = temps[ntemps++];
	}

	err = drmSyncobjCreate(kd->fd, 0, &syncobj) ? -errno : 0;
	if (err) {
		err = npu_fail(err, "creating a syncobj: %s", strerror(-err));
		goto out;
	}

	args.queue_id = ((struct kqueue *)npu_priv(q))->queue_id;
	args.cmd_handle = ((struct kbuf *)npu_priv(info->cmd))->handle;
	args.cmd_offset = info->cmd_offset;
	args.cmd_size = info->cmd_size;
	args.bo_count = info->num_buffers;
	args.bos = (uintptr_t)refs;
	args.in_syncs = (uintptr_t)syncs;
	args.in_sync_count = info->num_wait;
	args.out_sync.handle = syncobj;
	args.diag = (uintptr_t)&diag;
	err = kioctl(kd->fd, DRM_IOCTL_RBLN_SUBMIT, &args);
	if (err == -EINVAL && diag.reason != RBLN_ISA_OK) {
		err = npu_fail_stream(diag.cmd_index, diag.cmd_offset,
				      diag.opcode,
				      rbln_model_opcode_name(diag.opcode),
				      diag.operand,
				      rbln_model_error_str(diag.reason));
		goto out;
	}
	if (err == -EBUSY) {
		err = npu_fail(err, "DRM_IOCTL_RBLN_SUBMIT: this process has the most "
			       "jobs in flight rbln.ko allows on the device (module "
			       "parameter max_jobs); wait for one to end and retry");
		goto out;
	}
	if (err == -ENOMEM) {
		err = npu_fail(err, "DRM_IOCTL_RBLN_SUBMIT: no memory for the job "
			       "(rbln.ko's host memory budget or this process's "
			       "memory cgroup)");
		goto out;
	}
	if (err) {
		err = npu_fail(err, "DRM_IOCTL_RBLN_SUBMIT: %s", strerror(-err));
		goto out;
	}

	/* Nothing fails from here on. */
	kf->syncobj = syncobj;
	kf->queue_id = args.queue_id;
	kf->job_id = args.job_id;
	syncobj = 0;
	pthread_mutex_lock(&kd->lock);
	point = kd->point + 1;
	if (drmSyncobjTransfer(kd->fd, kd->timeline, point, kf->syncobj, 0,
			       0) == 0)
		kd->point = point;
	pthread_mutex_unlock(&kd->lock);
	err = 0;
out:
	if (syncobj)
		drmSyncobjDestroy(kd->fd, syncobj);
	for (uint32_t i = 0; i < ntemps; i++)
		drmSyncobjDestroy(kd->fd, temps[i]);
	free(refs);
	free(syncs);
	free(temps);
	return err;
}

/* ------------------------------------------------------------- fences */

/* Status of a signalled syncobj's fence, from a sync_file. */
static int syncobj_status(int fd, uint32_t syncobj)
{
	struct sync_file_info info = { 0 };
	int sync_fd, err;

	if (drmSyncobjExportSyncFile(fd, syncobj, &sync_fd))
		return -errno;
	err = ioctl(sync_fd, SYNC_IOC_FILE_INFO, &info) ? -errno : 0;
	close(sync_fd);
	if (err)
		return err;
	return info.status < 0 ? info.status : 0;
}

static int k_fence_wait(npu_fence *f, int64_t deadline)
{
	struct kdev *kd = kdev(f->dev);
	struct kfence *kf = npu_priv(f);
	struct drm_rbln_wait w = {
		.type = DRM_RBLN_WAIT_JOB,
		.handle = kf->queue_id,
		.job_id = kf->job_id,
		.timeout_ns = deadline,
	};
	int err;

	err = kioctl(kd->fd, DRM_IOCTL_RBLN_WAIT, &w);
	if (!err)
		return w.status;
	if (err == -ETIME)
		return err;
	if (err != -ENOENT)
		return npu_fail(err, "DRM_IOCTL_RBLN_WAIT: %s", strerror(-err));

	/* The queue was destroyed: the job's own syncobj still knows. */
	err = drmSyncobjWait(kd->fd, &kf->syncobj, 1, deadline,
			     DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL) ? -errno : 0;
	if (err == -ETIME)
		return err;
	if (err)
		return npu_fail(err, "waiting on a syncobj: %s", strerror(-err));
	err = syncobj_status(kd->fd, kf->syncobj);
	switch (err) {
	case 0:
	case -ETIMEDOUT:
	case -EIO:
	case -ECANCELED:
		return err;
	default:
		return -ECANCELED;
	}
}

static void k_fence_destroy(npu_fence *f)
{
	struct kfence *kf = npu_priv(f);

	if (kf->syncobj)
		drmSyncobjDestroy(kdev(f->dev)->fd, kf->syncobj);
	kf->syncobj = 0;
}

const struct npu_backend_ops npu_backend_kernel_ops = {
	.name = "kernel",
	.kind = NPU_BACKEND_KERNEL,
	.device_priv_size = sizeof(struct kdev),
	.buffer_priv_size = sizeof(struct kbuf),
	.queue_priv_size = sizeof(struct kqueue),
	.fence_priv_size = sizeof(struct kfence),
	.context_init = k_context_init,
	.context_fini = k_context_fini,
	.device_info = k_device_info,
	.device_open = k_device_open,
	.device_close = k_device_close,
	.device_release = k_device_release,
	.device_query = k_device_query,
	.buffer_alloc = k_buffer_alloc,
	.buffer_free = k_buffer_free,
	.buffer_map = k_buffer_map,
	.buffer_export = k_buffer_export,
	.buffer_import = k_buffer_import,
	.buffer_wait_idle = k_buffer_wait_idle,
	.queue_create = k_queue_create,
	.queue_destroy = k_queue_destroy,
	.submit = k_submit,
	.fence_wait = k_fence_wait,
	.fence_destroy = k_fence_destroy,
};
