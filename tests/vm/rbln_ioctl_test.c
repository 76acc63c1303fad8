// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln-ioctl-test: the uapi v1 through raw ioctls, mostly the ways to get
 * it wrong. Every pad, reserved field and unknown flag set, bad handles,
 * bad user pointers, overflowing sizes and exceeded limits must fail with
 * the documented errno (Documentation/uapi.md) and leave the device
 * working. TAP output.
 *
 * Usage: rbln-ioctl-test [device index, default 0]
 */
#include <poll.h>
#include <sys/mman.h>

#include "vmtest.h"

static int fd, fd2;
static struct drm_rbln_device_info info;
static uint32_t queue, data_bo, cmd_bo, host_bo;
static uint8_t *cmd_map;

/* A pointer no process has mapped. */
#define BAD_PTR ((uint64_t)0x10)

static void put_stream(const struct vt_stream *s, uint64_t offset)
{
	memcpy(cmd_map + offset, s->buf, s->size);
}

static struct drm_rbln_submit base_submit(struct drm_rbln_bo_ref *refs,
					  uint32_t nrefs, uint64_t size)
{
	return (struct drm_rbln_submit){
		.queue_id = queue,
		.cmd_handle = cmd_bo,
		.cmd_size = size,
		.bo_count = nrefs,
		.bos = (uintptr_t)refs,
	};
}

static int submit(struct drm_rbln_submit *s)
{
	return vt_ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, s);
}

static void test_query(void)
{
	struct drm_rbln_device_info di;
	struct drm_rbln_query q = {
		.param = DRM_RBLN_QUERY_DEVICE_INFO,
		.size = sizeof(di),
		.data = (uintptr_t)&di,
	};
	struct drm_rbln_query b;

	b = q;
	b.flags = 1;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUERY, &b), -EINVAL, "query: flags");
	b = q;
	b.pad = 1;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUERY, &b), -EINVAL, "query: pad");
	b = q;
	b.param = 1;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUERY, &b), -EINVAL, "query: unknown param");
	b = q;
	b.data = BAD_PTR;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUERY, &b), -EFAULT, "query: bad pointer");
	b = q;
	b.size = 0;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUERY, &b), 0, "query: size 0");
	vt_result(b.size == sizeof(di), "query: size 0 returns the full size (%u)", b.size);
	b = q;
	b.size = 8;
	memset(&di, 0xa5, sizeof(di));
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUERY, &b), 0, "query: short buffer");
	vt_result(b.size == 8 && di.mem_total == 0xa5a5a5a5a5a5a5a5ULL,
		  "query: short buffer gets a prefix only");
	b = q;
	b.size = 4096;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUERY, &b), 0, "query: long buffer");
	vt_result(b.size == sizeof(di), "query: long buffer gets the full size");
	vt_result(info.max_submit_bos >= 8 && info.max_cmd_size >= 4096 &&
		  info.max_bo_size && info.max_bo_size <= info.mem_total &&
		  info.isa_version == RBLN_ISA_VERSION && info.max_queues >= 1 &&
		  info.device_count >= 1 && info.num_engines >= 1 &&
		  memchr(info.name, 0, sizeof(info.name)),
		  "query: limits are sane (%s, %u engines, %llu MiB)", info.name,
		  info.num_engines, (unsigned long long)(info.mem_total >> 20));
}

static void test_bo(void)
{
	struct drm_rbln_bo_create c = { .size = 4096 };
	struct drm_rbln_bo_info bi = { 0 };
	struct drm_rbln_bo_mmap_offset mo = { 0 };
	struct drm_rbln_device_info before, after;
	uint32_t h, big;

	c.flags = 1U << 1;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_BO_CREATE, &c), -EINVAL, "bo_create: unknown flag");
	c.flags = DRM_RBLN_BO_IMPORTED;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_BO_CREATE, &c), -EINVAL, "bo_create: IMPORTED flag");
	c.flags = 0;
	c.size = 0;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_BO_CREATE, &c), -EINVAL, "bo_create: size 0");
	c.size = info.max_bo_size + 1;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_BO_CREATE, &c), -EINVAL, "bo_create: size over max_bo_size");
	c.size = UINT64_MAX;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_BO_CREATE, &c), -EINVAL, "bo_create: size 2^64-1");
	c.size = UINT64_MAX - 4095;
	c.flags = DRM_RBLN_BO_HOST;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_BO_CREATE, &c), -EINVAL, "bo_create: host size that overflows page rounding");

	vt_expect(vt_bo_create(fd, 1, 0, &h), 0, "bo_create: 1 byte");
	bi.handle = h;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_BO_INFO, &bi), 0, "bo_info");
	vt_result(bi.size == (uint64_t)sysconf(_SC_PAGESIZE) && bi.flags == 0,
		  "bo_info: size rounded to a page, flags 0");
	vt_gem_close(fd, h);

	/* Capacity: all of it, then one byte more. */
	vt_query(fd, &before);
	vt_expect(vt_bo_create(fd, before.mem_total - before.mem_used, 0, &big), 0,
		  "bo_create: the whole free capacity");
	vt_expect(vt_bo_create(fd, 1, 0, &h), -ENOMEM, "bo_create: past the capacity");
	vt_expect(vt_bo_create(fd, 1 << 20, DRM_RBLN_BO_HOST, &h), 0,
		  "bo_create: host buffer when the device is full");
	vt_query(fd, &after);
	vt_result(after.mem_used == after.mem_total, "mem_used is mem_total when full");
	bi.handle = h;
	vt_ioctl(fd, DRM_IOCTL_RBLN_BO_INFO, &bi);
	vt_result(bi.flags == DRM_RBLN_BO_HOST, "bo_info: host flag");
	vt_gem_close(fd, h);
	vt_gem_close(fd, big);
	vt_query(fd, &after);
	vt_result(after.mem_used == before.mem_used, "closing gives the capacity back");

	mo.handle = data_bo;
	mo.pad = 1;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_BO_MMAP_OFFSET, &mo), -EINVAL, "mmap_offset: pad");
	mo.pad = 0;
	mo.handle = 0xdead;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_BO_MMAP_OFFSET, &mo), -ENOENT, "mmap_offset: bad handle");
	bi.handle = 0xdead;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_BO_INFO, &bi), -ENOENT, "bo_info: bad handle");
	vt_expect(vt_gem_close(fd, 0xdead), -EINVAL, "gem_close: bad handle");
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_BO_INFO, (void *)BAD_PTR), -EFAULT,
		  "bo_info: bad argument pointer");
}

static void test_prime(void)
{
	struct drm_prime_handle exp = { .handle = data_bo, .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle imp = { 0 };
	struct drm_rbln_bo_info bi = { 0 };

	if (fd2 < 0) {
		vt_result(true, "prime: # SKIP one device only");
		return;
	}
	vt_expect(vt_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp), 0, "prime: export");
	imp.fd = exp.fd;
	vt_expect(vt_ioctl(fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp), 0, "prime: import into another device");
	bi.handle = imp.handle;
	vt_expect(vt_ioctl(fd2, DRM_IOCTL_RBLN_BO_INFO, &bi), 0, "prime: bo_info of the import");
	vt_result(bi.flags == DRM_RBLN_BO_IMPORTED && bi.size == 1 << 20,
		  "prime: import reports DRM_RBLN_BO_IMPORTED and the size");
	vt_gem_close(fd2, imp.handle);
	close(exp.fd);
}

static void test_queues(void)
{
	struct drm_rbln_queue_create qc = { .priority = DRM_RBLN_PRIORITY_NORMAL };
	struct drm_rbln_queue_destroy qd = { 0 };
	uint32_t ids[256], id;
	unsigned int n = 0;
	int ret;

	qc.flags = 1;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUEUE_CREATE, &qc), -EINVAL, "queue_create: flags");
	qc.flags = 0;
	qc.pad = 1;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUEUE_CREATE, &qc), -EINVAL, "queue_create: pad");
	qc.pad = 0;
	qc.priority = 3;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUEUE_CREATE, &qc), -EINVAL, "queue_create: unknown priority");

	/* The file already has one queue; fill up to max_queues. */
	do {
		ret = vt_queue_create(fd, n % 3, &ids[n]);
	} while (!ret && ++n < 255);
	vt_result(ret == -ENOSPC && n + 1 == info.max_queues,
		  "queue_create: -ENOSPC after max_queues (%u created, ret %d)", n + 1, ret);
	while (n)
		vt_ioctl(fd, DRM_IOCTL_RBLN_QUEUE_DESTROY,
			 &(struct drm_rbln_queue_destroy){ .queue_id = ids[--n] });

	vt_expect(vt_queue_create(fd, DRM_RBLN_PRIORITY_HIGH, &id), 0, "queue_create: high priority");
	qd.queue_id = id;
	qd.pad = 1;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUEUE_DESTROY, &qd), -EINVAL, "queue_destroy: pad");
	qd.pad = 0;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUEUE_DESTROY, &qd), 0, "queue_destroy");
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUEUE_DESTROY, &qd), -ENOENT, "queue_destroy: twice");
	qd.queue_id = 0;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_QUEUE_DESTROY, &qd), -ENOENT, "queue_destroy: id 0");
	qd.queue_id = queue;
	vt_expect(vt_ioctl(fd2 >= 0 ? fd2 : fd, DRM_IOCTL_RBLN_QUEUE_DESTROY, &qd),
		  fd2 >= 0 ? -ENOENT : 0, "queue_destroy: queue of another file");
}

static void test_submit(void)
{
	uint32_t syncobj, empty, bo2;
	int status;
	struct drm_rbln_bo_ref refs[2] = {
		{ .handle = data_bo, .flags = DRM_RBLN_BO_READ | DRM_RBLN_BO_WRITE },
		{ .handle = host_bo, .flags = DRM_RBLN_BO_READ },
	};
	struct drm_rbln_bo_ref many[RBLN_ISA_CMD_MAX_SIZE / 8];
	struct drm_rbln_submit_diag diag;
	struct drm_rbln_sync sync = { 0 };
	struct drm_rbln_submit s;
	static struct vt_stream st;

	vt_stream_init(&st);
	vt_fill(&st, 0, 0, 4096, 0x3f800000);
	vt_copy(&st, 0, 4096, 1, 0, 4096);
	put_stream(&st, 0);

	s = base_submit(refs, 2, st.size);
	vt_expect(submit(&s), 0, "submit: valid stream");
	vt_result(s.job_id == 1, "submit: first job id is 1");
	vt_expect(vt_wait_job(fd, queue, s.job_id, vt_now() + 10000000000LL, &status), 0,
		  "wait: job");
	vt_result(status == 0, "wait: job status 0");
	vt_expect(submit(&s), 0, "submit: again");
	vt_result(s.job_id == 2, "submit: job ids count up");

#define BAD_SUBMIT(field, value, err, name) do {				\
		s = base_submit(refs, 2, st.size);				\
		s.field = value;						\
		vt_expect(submit(&s), err, "submit: " name);			\
	} while (0)

	BAD_SUBMIT(flags, 1, -EINVAL, "flags");
	BAD_SUBMIT(flags, 1U << 31, -EINVAL, "flags bit 31");
	BAD_SUBMIT(pad, 1, -EINVAL, "pad");
	BAD_SUBMIT(out_sync.flags, 1, -EINVAL, "out_sync.flags");
	BAD_SUBMIT(out_sync.point, 5, -EINVAL, "out_sync point without handle");
	BAD_SUBMIT(queue_id, 0xdead, -ENOENT, "unknown queue");
	BAD_SUBMIT(queue_id, 0, -ENOENT, "queue id 0");
	BAD_SUBMIT(cmd_handle, 0xdead, -ENOENT, "unknown command buffer");
	BAD_SUBMIT(cmd_offset, 4, -EINVAL, "unaligned cmd_offset");
	BAD_SUBMIT(cmd_offset, (1 << 20), -EINVAL, "stream past the command buffer");
	BAD_SUBMIT(cmd_offset, UINT64_MAX - 7, -EINVAL, "cmd_offset + cmd_size overflows");
	BAD_SUBMIT(cmd_size, UINT64_MAX - 7, -EINVAL, "cmd_size 2^64-8");
	BAD_SUBMIT(bo_count, info.max_submit_bos + 1, -EINVAL, "bo_count over the limit");
	BAD_SUBMIT(bo_count, UINT32_MAX, -EINVAL, "bo_count 2^32-1");
	BAD_SUBMIT(in_sync_count, info.max_submit_syncs + 1, -EINVAL, "in_sync_count over the limit");
	BAD_SUBMIT(bos, BAD_PTR, -EFAULT, "bad buffer list pointer");
	BAD_SUBMIT(in_sync_count, 1, -EFAULT, "in-syncs with a NULL pointer");
	BAD_SUBMIT(diag, BAD_PTR, -EFAULT, "bad diag pointer");

	/* Buffer list entries. */
	s = base_submit(refs, 2, st.size);
	refs[1].flags = 0;
	vt_expect(submit(&s), -EINVAL, "submit: buffer access 0");
	refs[1].flags = 4;
	vt_expect(submit(&s), -EINVAL, "submit: unknown buffer access bit");
	refs[1].flags = DRM_RBLN_BO_READ;
	refs[1].handle = 0xdead;
	vt_expect(submit(&s), -ENOENT, "submit: unknown buffer handle");
	refs[1].handle = data_bo;
	vt_expect(submit(&s), -EINVAL, "submit: buffer listed twice");
	refs[1].handle = host_bo;
	for (unsigned int i = 0; i < sizeof(many) / sizeof(many[0]); i++)
		many[i] = refs[0];
	s = base_submit(many, info.max_submit_bos, st.size);
	vt_expect(submit(&s), -EINVAL, "submit: max_submit_bos entries, all the same buffer");

	/* Syncs. */
	vt_syncobj_create(fd, &syncobj);
	vt_syncobj_create(fd, &empty);
	s = base_submit(refs, 2, st.size);
	s.in_syncs = (uintptr_t)&sync;
	s.in_sync_count = 1;
	sync.handle = 0xdead;
	vt_expect(submit(&s), -ENOENT, "submit: unknown in-sync handle");
	sync.handle = empty;
	sync.flags = 1;
	vt_expect(submit(&s), -EINVAL, "submit: in-sync flags");
	sync.flags = 0;
	vt_expect(submit(&s), -EINVAL, "submit: in-sync without a fence");
	s = base_submit(refs, 2, st.size);
	s.out_sync.handle = 0xdead;
	vt_expect(submit(&s), -ENOENT, "submit: unknown out-sync handle");
	s.out_sync.handle = syncobj;
	s.out_sync.point = 3;
	vt_expect(submit(&s), 0, "submit: out-sync with a timeline point");
	{
		struct drm_syncobj_timeline_wait tw = {
			.handles = (uintptr_t)&syncobj,
			.points = (uintptr_t)&(uint64_t){ 3 },
			.count_handles = 1,
			.timeout_nsec = vt_now() + 10000000000LL,
		};

		vt_expect(vt_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &tw), 0,
			  "syncobj: timeline point 3 signals");
	}
	s = base_submit(refs, 2, st.size);
	s.in_syncs = (uintptr_t)&sync;
	s.in_sync_count = 1;
	sync.handle = syncobj;
	sync.point = 3;
	vt_expect(submit(&s), 0, "submit: in-sync on a timeline point");
	sync.point = 4;
	vt_expect(submit(&s), -EINVAL, "submit: in-sync on a point never submitted");

	/* Streams that do not validate: -EINVAL with the diagnosis. */
	s = base_submit(refs, 2, st.size);
	s.diag = (uintptr_t)&diag;
	cmd_map[0] ^= 0xff;
	memset(&diag, 0xff, sizeof(diag));
	vt_expect(submit(&s), -EINVAL, "submit: bad magic");
	vt_result(diag.reason == RBLN_ISA_ERR_MAGIC, "diag: reason MAGIC (%u)", diag.reason);
	cmd_map[0] ^= 0xff;
	{
		struct rbln_isa_fill *f = (struct rbln_isa_fill *)(cmd_map + 16);

		f->dst.size = 2 << 20;
		vt_expect(submit(&s), -EINVAL, "submit: operand out of bounds");
		vt_result(diag.reason == RBLN_ISA_ERR_BOUNDS && diag.cmd_index == 0 &&
			  diag.cmd_offset == 16 && diag.opcode == RBLN_OP_FILL &&
			  diag.operand == 0, "diag: BOUNDS, command 0 at 16, FILL, operand 0");
		f->dst.size = 4096;
		f->pad = 1;
		vt_expect(submit(&s), -EINVAL, "submit: reserved field in a command");
		vt_result(diag.reason == RBLN_ISA_ERR_RESERVED, "diag: RESERVED");
		f->pad = 0;
		f->dst.bo = 7;
		vt_expect(submit(&s), -EINVAL, "submit: operand names no buffer of the list");
		vt_result(diag.reason == RBLN_ISA_ERR_BO_INDEX, "diag: BO_INDEX");
		f->dst.bo = 1;
		vt_expect(submit(&s), -EINVAL, "submit: write to a read-only buffer");
		vt_result(diag.reason == RBLN_ISA_ERR_ACCESS, "diag: ACCESS");
		f->dst.bo = 0;
	}
	s.cmd_size = st.size - 8;
	vt_expect(submit(&s), -EINVAL, "submit: header size differs from cmd_size");
	vt_result(diag.reason == RBLN_ISA_ERR_HEADER_SIZE || diag.reason == RBLN_ISA_ERR_TRUNCATED,
		  "diag: HEADER_SIZE");
	s.cmd_size = 12;
	vt_expect(submit(&s), -EINVAL, "submit: unaligned stream size");
	vt_result(diag.reason == RBLN_ISA_ERR_STREAM_SIZE, "diag: STREAM_SIZE");
	s.cmd_size = 0;
	vt_expect(submit(&s), -EINVAL, "submit: empty stream");
	vt_result(diag.reason == RBLN_ISA_ERR_STREAM_SIZE, "diag: STREAM_SIZE for 0 bytes");
	vt_bo_create(fd, info.max_cmd_size + 4096, DRM_RBLN_BO_HOST, &bo2);
	s.cmd_handle = bo2;
	s.cmd_size = info.max_cmd_size + 8;
	vt_expect(submit(&s), -EINVAL, "submit: stream over max_cmd_size");
	vt_result(diag.reason == RBLN_ISA_ERR_STREAM_SIZE, "diag: STREAM_SIZE over max_cmd_size");
	vt_gem_close(fd, bo2);
	s = base_submit(refs, 2, st.size);
	s.diag = (uintptr_t)&diag;
	vt_expect(submit(&s), 0, "submit: valid again after rejected streams");
	vt_result(diag.reason == 0 && diag.cmd_index == 0, "diag: zeroed on success");

	/*
	 * A job waits for a semaphore the CPU sets; meanwhile the command
	 * buffer is rewritten, which must not change what the job does.
	 */
	{
		struct drm_rbln_bo_mmap_offset mo = { .handle = host_bo };
		struct rbln_isa_fill *f;
		uint64_t *sem;
		uint32_t *data;

		vt_ioctl(fd, DRM_IOCTL_RBLN_BO_MMAP_OFFSET, &mo);
		sem = mmap(NULL, 16384, PROT_READ | PROT_WRITE, MAP_SHARED, fd, mo.offset);
		mo.handle = data_bo;
		vt_ioctl(fd, DRM_IOCTL_RBLN_BO_MMAP_OFFSET, &mo);
		data = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, mo.offset);
		vt_result(sem != MAP_FAILED && data != MAP_FAILED, "mmap of buffers");
		if (sem == MAP_FAILED || data == MAP_FAILED)
			return;
		sem[1024] = 0;

		vt_stream_init(&st);
		vt_sem_wait(&st, 1, 8192, RBLN_SEM_GEQ, 1, 30000000000ULL);
		f = (struct rbln_isa_fill *)(cmd_map + st.size);
		vt_fill(&st, 0, 0, 4096, 0x11111111);
		put_stream(&st, 0);
		s = base_submit(refs, 2, st.size);
		vt_expect(submit(&s), 0, "submit: job that waits for a semaphore");
		vt_expect(vt_wait_job(fd, queue, s.job_id, 0, &status), -ETIME,
			  "wait: poll of a running job is -ETIME");
		vt_expect(vt_wait_job(fd, queue, s.job_id, vt_now() + 20000000, &status), -ETIME,
			  "wait: 20 ms deadline passes");
		f->value = 0x22222222;
		__atomic_store_n(&sem[1024], 1, __ATOMIC_RELEASE);
		vt_expect(vt_wait_job(fd, queue, s.job_id, vt_now() + 10000000000LL, &status), 0,
			  "wait: the job ends once the CPU sets the semaphore");
		vt_result(status == 0 && data[0] == 0x11111111,
			  "the job ran the stream as submitted, not as rewritten (0x%08x)", data[0]);

		/* A SEM_WAIT that expires: -ETIMEDOUT, later commands do not run. */
		sem[1024] = 0;
		vt_stream_init(&st);
		vt_sem_wait(&st, 1, 8192, RBLN_SEM_EQ, 5, 20000000ULL);
		vt_fill(&st, 0, 0, 4096, 0x33333333);
		put_stream(&st, 0);
		s = base_submit(refs, 2, st.size);
		vt_expect(submit(&s), 0, "submit: SEM_WAIT with a 20 ms timeout");
		vt_expect(vt_wait_job(fd, queue, s.job_id, vt_now() + 10000000000LL, &status), 0,
			  "wait: that job");
		vt_result(status == -ETIMEDOUT, "expired SEM_WAIT: status -ETIMEDOUT (%d)", status);
		vt_result(data[0] == 0x11111111, "expired SEM_WAIT: later commands did not run");
		munmap(sem, 16384);
		munmap(data, 1 << 20);
	}
}

static void test_wait(void)
{
	struct drm_rbln_wait w = { .type = DRM_RBLN_WAIT_JOB, .handle = queue, .job_id = 1 };
	struct drm_rbln_wait b;

	b = w;
	b.flags = 1;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_WAIT, &b), -EINVAL, "wait: flags");
	b = w;
	b.type = 2;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_WAIT, &b), -EINVAL, "wait: unknown type");
	b = w;
	b.handle = 0xdead;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_WAIT, &b), -ENOENT, "wait: unknown queue");
	b = w;
	b.job_id = 0;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_WAIT, &b), -ENOENT, "wait: job id 0");
	b = w;
	b.job_id = 1000000;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_WAIT, &b), -ENOENT, "wait: job id never given out");
	b = w;
	b.timeout_ns = INT64_MIN;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_WAIT, &b), 0, "wait: finished job with a past deadline");
	b = w;
	b.type = DRM_RBLN_WAIT_BO;
	b.handle = data_bo;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_WAIT, &b), -EINVAL, "wait: BO with a job id");
	b.job_id = 0;
	b.timeout_ns = INT64_MAX;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_WAIT, &b), 0, "wait: BO idle");
	b.handle = 0xdead;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_WAIT, &b), -ENOENT, "wait: unknown BO");
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_WAIT, (void *)BAD_PTR), -EFAULT, "wait: bad argument pointer");
}

/*
 * Mutated streams: a valid stream with random bytes changed. Each must be
 * rejected with -EINVAL or run; the kernel must survive all of them.
 */
static void test_mutations(void)
{
	struct drm_rbln_bo_ref refs[2] = {
		{ .handle = data_bo, .flags = DRM_RBLN_BO_READ | DRM_RBLN_BO_WRITE },
		{ .handle = host_bo, .flags = DRM_RBLN_BO_READ | DRM_RBLN_BO_WRITE },
	};
	static struct vt_stream base;
	struct drm_rbln_submit_diag diag;
	struct drm_rbln_submit s;
	unsigned int rejected = 0, ran = 0, bad = 0, late = 0;
	uint64_t rng = 0x2545f4914f6cdd1dULL ^ (uint64_t)vt_now();
	struct rbln_isa_cmd nop = { .opcode = RBLN_OP_NOP, .size = 16 };
	struct rbln_isa_cmd barrier = { .opcode = RBLN_OP_BARRIER, .size = 8 };
	uint8_t zero16[16] = { 0 };

	vt_stream_init(&base);
	vt_fill(&base, 0, 0, 65536, 0x3f800000);
	vt_copy(&base, 1, 100, 0, 3, 999);
	memcpy(zero16, &nop, sizeof(nop));
	vt_stream_put(&base, zero16, 16);
	vt_add(&base, 0, 4096, 0, 4096, 0, 0, 4096);
	vt_stream_put(&base, &barrier, 8);
	vt_sem_signal(&base, 1, 8192, RBLN_SEM_ADD, 1);
	vt_copy(&base, 0, 65536, 1, 0, 16384);

	for (unsigned int i = 0; i < 2000; i++) {
		static struct vt_stream m;
		unsigned int flips = 1 + (unsigned int)(rng % 4);
		int ret, status = 0;

		m = base;
		for (unsigned int f = 0; f < flips; f++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			m.buf[rng % m.size] ^= (uint8_t)(1u << ((rng >> 32) % 8));
		}
		put_stream(&m, 0);
		s = base_submit(refs, 2, m.size);
		s.diag = (uintptr_t)&diag;
		ret = submit(&s);
		if (ret == -EINVAL && diag.reason) {
			rejected++;
			continue;
		}
		if (ret) {
			bad++;
			printf("# mutation %u: submit %d\n", i, ret);
			continue;
		}
		ret = vt_wait_job(fd, queue, s.job_id, vt_now() + 1000000000LL, &status);
		if (ret == -ETIME)
			late++;
		else if (ret || (status && status != -ETIMEDOUT))
			bad++;
		else
			ran++;
	}
	vt_result(bad == 0, "2000 mutated streams: %u rejected, %u ran, %u still running, %u wrong",
		  rejected, ran, late, bad);
}

static void test_misc(void)
{
	struct drm_rbln_query q = { 0 };

	vt_expect(vt_ioctl(fd, DRM_IOWR(DRM_COMMAND_BASE + 0x20, struct drm_rbln_query), &q),
		  -EINVAL, "unknown driver ioctl");
	{
		struct drm_mode_card_res res = { 0 };
		int r = vt_ioctl(fd, DRM_IOCTL_MODE_GETRESOURCES, &res);

		vt_result(r == -EOPNOTSUPP || r == -EINVAL || r == -EACCES,
			  "modesetting ioctls are refused (%d)", r);
	}
}

int main(int argc, char **argv)
{
	unsigned int index = argc > 1 ? (unsigned int)atoi(argv[1]) : 0;
	struct drm_rbln_bo_mmap_offset mo = { 0 };

	fd = vt_open(index);
	if (fd < 0)
		vt_die("open device");
	fd2 = vt_open(index + 1);
	if (vt_query(fd, &info))
		vt_die("query");
	if (vt_queue_create(fd, DRM_RBLN_PRIORITY_NORMAL, &queue) ||
	    vt_bo_create(fd, 1 << 20, 0, &data_bo) ||
	    vt_bo_create(fd, 1 << 20, DRM_RBLN_BO_HOST, &cmd_bo) ||
	    vt_bo_create(fd, 16384, DRM_RBLN_BO_HOST, &host_bo))
		vt_die("setup");
	mo.handle = cmd_bo;
	if (vt_ioctl(fd, DRM_IOCTL_RBLN_BO_MMAP_OFFSET, &mo))
		vt_die("mmap offset");
	cmd_map = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, mo.offset);
	if (cmd_map == MAP_FAILED)
		vt_die("mmap");

	test_query();
	test_bo();
	test_prime();
	test_submit();
	test_wait();
	test_mutations();
	test_queues();
	test_misc();

	munmap(cmd_map, 1 << 20);
	close(fd);
	if (fd2 >= 0)
		close(fd2);
	return vt_finish();
}
