// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln-vm-limits: what one client may take from rbln.ko, and what its
 * fdinfo reports (Documentation/driver.md, "Limits and accounting"):
 *
 *  - the DRM client usage keys: drm-driver, distinct drm-client-id per
 *    open file, drm-total/resident-memory following the buffers and their
 *    pages, drm-engine-npu growing by the time a job executes,
 *    drm-engine-capacity-npu;
 *  - max_jobs: with that many jobs in flight a file's next submission
 *    fails with -EBUSY, other files are not affected, and the file submits
 *    again once its jobs end;
 *  - max_queues as the query reports it;
 *  - the host budget: host buffers (not charged to the device) stop with
 *    -ENOMEM at half of RAM, summed over all devices.
 *
 * Run with the module's default limits. TAP output.
 *
 * Usage: rbln-vm-limits [device index, default 0]
 */
#include "vmtest.h"

#define NS_PER_MS	1000000ULL

static int fd;
static struct drm_rbln_device_info info;

static uint64_t module_param(const char *name)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/rbln/parameters/%s", name);
	f = fopen(path, "re");
	if (!f || fscanf(f, "%llu", &v) != 1)
		vt_die(path);
	fclose(f);
	return v;
}

static uint64_t fdinfo(int file, const char *key)
{
	uint64_t v = UINT64_MAX;

	if (vt_fdinfo(file, key, &v, NULL, 0))
		printf("# %s missing in fdinfo of fd %d\n", key, file);
	return v;
}

static void test_fdinfo_keys(void)
{
	char driver[64] = "";
	uint64_t id1 = 0, id2 = 0, resident = 0;
	int other = vt_open(0);
	bool ok;

	ok = !vt_fdinfo(fd, "drm-driver", NULL, driver, sizeof(driver));
	vt_result(ok && !strcmp(driver, "rbln"), "fdinfo: drm-driver is rbln (%s)", driver);
	ok = !vt_fdinfo(fd, "drm-client-id", &id1, NULL, 0) &&
	     !vt_fdinfo(other, "drm-client-id", &id2, NULL, 0);
	vt_result(ok && id1 != id2,
		  "fdinfo: drm-client-id differs between two open files (%llu, %llu)",
		  (unsigned long long)id1, (unsigned long long)id2);
	/* drm-resident-memory is left out while a file has no buffer. */
	vt_fdinfo(other, "drm-resident-memory", &resident, NULL, 0);
	vt_result(fdinfo(other, "drm-total-memory") == 0 && resident == 0 &&
		  fdinfo(other, "drm-engine-npu") == 0,
		  "fdinfo: a fresh file has no memory and no engine time");
	vt_result(fdinfo(fd, "drm-engine-capacity-npu") == module_param("hw_queues"),
		  "fdinfo: drm-engine-capacity-npu is hw_queues");
	close(other);
}

/*
 * Runs a stream whose buffer list is @bo alone on @queue and waits for it.
 * Returns the job's status, or the error of its submission or wait.
 */
static int run_one(uint32_t queue, uint32_t cmd, uint8_t *cmd_map,
		   const struct vt_stream *st, uint32_t bo, uint32_t access)
{
	struct drm_rbln_bo_ref ref = { .handle = bo, .flags = access };
	struct drm_rbln_submit s = {
		.queue_id = queue, .cmd_handle = cmd, .cmd_size = st->size,
		.bo_count = 1, .bos = (uintptr_t)&ref,
	};
	int ret, status = -1;

	memcpy(cmd_map, st->buf, st->size);
	ret = vt_ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &s);
	if (!ret)
		ret = vt_wait_job(fd, queue, s.job_id, vt_now() + 10000000000LL, &status);
	return ret ? ret : status;
}

/* Buffers count in drm-total-memory at once, in drm-resident-memory once
 * their pages are there (mmap and touch, or a job using them).
 */
static void test_fdinfo_memory(uint32_t queue, uint32_t cmd, uint8_t *cmd_map)
{
	static struct vt_stream st;
	uint64_t total0 = fdinfo(fd, "drm-total-memory");
	uint64_t res0 = fdinfo(fd, "drm-resident-memory");
	uint32_t dev_bo, host_bo;
	uint8_t *map;
	int status;

	if (vt_bo_create(fd, 2 << 20, 0, &dev_bo) ||
	    vt_bo_create(fd, 256 << 10, DRM_RBLN_BO_HOST, &host_bo))
		vt_die("bo_create");
	vt_result(fdinfo(fd, "drm-total-memory") == total0 + (2 << 20) + (256 << 10) &&
		  fdinfo(fd, "drm-resident-memory") == res0,
		  "fdinfo: new buffers count in drm-total-memory, not yet resident");

	map = vt_bo_map(fd, host_bo, 256 << 10);
	if (map == MAP_FAILED)
		vt_die("mmap");
	memset(map, 1, 256 << 10);
	vt_result(fdinfo(fd, "drm-resident-memory") == res0 + (256 << 10),
		  "fdinfo: a mapped host buffer is resident (%llu -> %llu)",
		  (unsigned long long)res0,
		  (unsigned long long)fdinfo(fd, "drm-resident-memory"));
	/* Unmapped, its pages stay: they are the buffer's own until it is freed. */
	munmap(map, 256 << 10);
	vt_result(fdinfo(fd, "drm-resident-memory") == res0 + (256 << 10),
		  "fdinfo: an unmapped host buffer stays resident (%llu)",
		  (unsigned long long)fdinfo(fd, "drm-resident-memory"));

	vt_stream_init(&st);
	vt_fill(&st, 0, 0, 2 << 20, 7);
	status = run_one(queue, cmd, cmd_map, &st, dev_bo, DRM_RBLN_BO_WRITE);
	vt_result(status == 0 &&
		  fdinfo(fd, "drm-resident-memory") == res0 + (2 << 20) + (256 << 10),
		  "fdinfo: a device buffer a job used is resident (job %d, %llu)",
		  status, (unsigned long long)fdinfo(fd, "drm-resident-memory"));

	vt_gem_close(fd, dev_bo);
	vt_gem_close(fd, host_bo);
	vt_result(fdinfo(fd, "drm-total-memory") == total0 &&
		  fdinfo(fd, "drm-resident-memory") == res0,
		  "fdinfo: closed buffers leave drm-total and drm-resident-memory");
}

/* A job that waits 50 ms for a semaphore nobody sets adds at least that
 * much to drm-engine-npu.
 */
static void test_fdinfo_engine(uint32_t queue, uint32_t cmd, uint8_t *cmd_map,
			       uint32_t sem_bo)
{
	static struct vt_stream st;
	uint64_t before = fdinfo(fd, "drm-engine-npu"), after;
	int status;

	vt_stream_init(&st);
	vt_sem_wait(&st, 0, 0, RBLN_SEM_EQ, 12345, 50 * NS_PER_MS);
	status = run_one(queue, cmd, cmd_map, &st, sem_bo, DRM_RBLN_BO_READ);
	after = fdinfo(fd, "drm-engine-npu");
	vt_result(status == -ETIMEDOUT && after >= before + 50 * NS_PER_MS,
		  "fdinfo: drm-engine-npu grew by the job's time (job %d, %llu -> %llu ns)",
		  status, (unsigned long long)before, (unsigned long long)after);
}

/*
 * One blocking job, then max_jobs - 1 behind it on the same queue: the
 * next submission is -EBUSY, on this file only; when the jobs end the
 * file submits again.
 */
static void test_max_jobs(uint32_t cmd, uint8_t *cmd_map)
{
	uint64_t max_jobs = module_param("max_jobs");
	struct drm_rbln_bo_ref ref;
	struct drm_rbln_submit s = { 0 };
	static struct vt_stream blocker, nop, fill;
	uint32_t queue, sem_bo, q2, cmd2;
	uint64_t *sem, last = 0, n = 0;
	int other = vt_open(0), ret = 0, status = -1;
	uint8_t *cmd2_map;

	if (vt_queue_create(fd, DRM_RBLN_PRIORITY_NORMAL, &queue) ||
	    vt_bo_create(fd, 4096, DRM_RBLN_BO_HOST, &sem_bo))
		vt_die("setup");
	sem = vt_bo_map(fd, sem_bo, 4096);
	if (sem == MAP_FAILED)
		vt_die("mmap");
	sem[0] = 0;

	vt_stream_init(&blocker);
	vt_sem_wait(&blocker, 0, 0, RBLN_SEM_GEQ, 1, 60000 * NS_PER_MS);
	vt_stream_init(&nop);
	vt_sem_signal(&nop, 0, 8, RBLN_SEM_ADD, 1);
	memcpy(cmd_map, blocker.buf, blocker.size);
	memcpy(cmd_map + 65536, nop.buf, nop.size);

	ref = (struct drm_rbln_bo_ref){ .handle = sem_bo,
					.flags = DRM_RBLN_BO_READ | DRM_RBLN_BO_WRITE };
	s.queue_id = queue;
	s.cmd_handle = cmd;
	s.bo_count = 1;
	s.bos = (uintptr_t)&ref;
	for (n = 0; n < max_jobs + 1; n++) {
		s.cmd_offset = n ? 65536 : 0;
		s.cmd_size = n ? nop.size : blocker.size;
		ret = vt_ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &s);
		if (ret)
			break;
		last = s.job_id;
	}
	vt_result(n == max_jobs && ret == -EBUSY,
		  "max_jobs: submission %llu of a file with %llu jobs in flight is -EBUSY (got %d)",
		  (unsigned long long)n + 1, (unsigned long long)max_jobs, ret);

	/* Another file on the same device is not held back. */
	if (other < 0 || vt_queue_create(other, DRM_RBLN_PRIORITY_NORMAL, &q2) ||
	    vt_bo_create(other, 65536, DRM_RBLN_BO_HOST, &cmd2))
		vt_die("second file");
	cmd2_map = vt_bo_map(other, cmd2, 65536);
	if (cmd2_map == MAP_FAILED)
		vt_die("mmap");
	vt_stream_init(&fill);
	vt_fill(&fill, 0, 32768, 4096, 1);
	memcpy(cmd2_map, fill.buf, fill.size);
	{
		struct drm_rbln_bo_ref ref2 = { .handle = cmd2,
						.flags = DRM_RBLN_BO_WRITE };
		struct drm_rbln_submit s2 = {
			.queue_id = q2, .cmd_handle = cmd2, .cmd_size = fill.size,
			.bo_count = 1, .bos = (uintptr_t)&ref2,
		};

		vt_expect(vt_ioctl(other, DRM_IOCTL_RBLN_SUBMIT, &s2), 0,
			  "max_jobs: another file on the device still submits");
		vt_expect(vt_wait_job(other, q2, s2.job_id, vt_now() + 10000000000LL, &status), 0,
			  "max_jobs: and its job ends");
	}
	munmap(cmd2_map, 65536);
	close(other);

	__atomic_store_n(&sem[0], 1, __ATOMIC_RELEASE);
	vt_expect(vt_wait_job(fd, queue, last, vt_now() + 120000000000LL, &status), 0,
		  "max_jobs: the %llu jobs end once the semaphore is set",
		  (unsigned long long)max_jobs);
	vt_result(status == 0 && sem[1] == max_jobs - 1,
		  "max_jobs: every job behind the blocker ran (%llu)",
		  (unsigned long long)sem[1]);
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &s), 0,
		  "max_jobs: the file submits again after its jobs ended");
	vt_wait_job(fd, queue, s.job_id, vt_now() + 10000000000LL, &status);
	munmap(sem, 4096);
	vt_gem_close(fd, sem_bo);
}

/*
 * Host buffers are not charged to a device, but to the host budget: half
 * of RAM over all devices together. They are created without pages, so
 * this takes no memory.
 */
static void test_host_budget(void)
{
	uint64_t ram = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t size = info.max_bo_size, held = 0;
	uint32_t handles[4096];
	unsigned int n = 0, i;
	int ret = 0;

	while (n < 4096) {
		ret = vt_bo_create(fd, size, DRM_RBLN_BO_HOST, &handles[n]);
		if (ret)
			break;
		held += size;
		n++;
	}
	/* This file holds 1 MiB and 4 KiB of buffers besides. */
	vt_result(ret == -ENOMEM && held <= ram / 2 && held + size + (4 << 20) > ram / 2,
		  "host budget: host buffers stop with -ENOMEM after %llu MiB (RAM %llu MiB, got %d)",
		  (unsigned long long)(held >> 20), (unsigned long long)(ram >> 20), ret);
	for (i = 0; i < n; i++)
		vt_gem_close(fd, handles[i]);
	vt_expect(vt_bo_create(fd, size, DRM_RBLN_BO_HOST, &handles[0]), 0,
		  "host budget: closing the buffers gives it back");
	vt_gem_close(fd, handles[0]);
}

int main(int argc, char **argv)
{
	unsigned int index = argc > 1 ? (unsigned int)atoi(argv[1]) : 0;
	uint32_t queue, cmd, sem_bo;
	uint8_t *cmd_map;
	uint64_t *sem;

	fd = vt_open(index);
	if (fd < 0)
		vt_die("open device");
	if (vt_query(fd, &info))
		vt_die("query");
	vt_result(info.max_queues == module_param("max_queues"),
		  "query: max_queues is the max_queues parameter (%u)", info.max_queues);
	if (vt_queue_create(fd, DRM_RBLN_PRIORITY_NORMAL, &queue) ||
	    vt_bo_create(fd, 1 << 20, DRM_RBLN_BO_HOST, &cmd) ||
	    vt_bo_create(fd, 4096, DRM_RBLN_BO_HOST, &sem_bo))
		vt_die("setup");
	cmd_map = vt_bo_map(fd, cmd, 1 << 20);
	sem = vt_bo_map(fd, sem_bo, 4096);
	if (cmd_map == MAP_FAILED || sem == MAP_FAILED)
		vt_die("mmap");
	sem[0] = 0;

	test_fdinfo_keys();
	test_fdinfo_memory(queue, cmd, cmd_map);
	test_fdinfo_engine(queue, cmd, cmd_map, sem_bo);
	test_max_jobs(cmd, cmd_map);
	test_host_budget();

	munmap(sem, 4096);
	munmap(cmd_map, 1 << 20);
	close(fd);
	return vt_finish();
}
