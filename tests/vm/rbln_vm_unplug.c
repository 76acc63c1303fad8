// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln-vm-unplug: hot unplug of a device with open files, mappings, an
 * exported buffer and a job in flight (sysfs unbind of its platform
 * device), then bind again.
 *
 * After the unbind every ioctl of the old file fails with -ENODEV, the job
 * in flight ends (its sync_file signals, with -ECANCELED), mappings stay
 * usable, an importer on another device keeps the shared memory, and
 * closing everything is fine. Binding again brings a READY device back.
 *
 * Usage: rbln-vm-unplug <device index>. TAP output.
 */
#include <dirent.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <sys/mman.h>

#include "vmtest.h"

static int write_sysfs(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs(value, f);
	return fclose(f) ? -errno : 0;
}

/* /sys/class/accel/accelN of the rbln device with this index, or "". */
static void find_node(unsigned int index, char *out, size_t len)
{
	DIR *d = opendir("/sys/class/accel");
	struct dirent *e;

	out[0] = '\0';
	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[512], buf[32] = "";
		FILE *f;

		if (strncmp(e->d_name, "accel", 5))
			continue;
		snprintf(path, sizeof(path), "/sys/class/accel/%s/device/index", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && (unsigned int)atoi(buf) == index)
			snprintf(out, len, "/sys/class/accel/%.32s", e->d_name);
		fclose(f);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	unsigned int index = argc > 1 ? (unsigned int)atoi(argv[1]) : 3;
	char pdev[32], node[300], path[600], status[32] = "";
	struct drm_rbln_bo_mmap_offset mo = { 0 };
	struct drm_rbln_device_info info;
	struct drm_syncobj_handle sh = { 0 };
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle imp = { 0 };
	struct sync_file_info sfi = { 0 };
	struct drm_rbln_bo_ref refs[1];
	struct drm_rbln_submit s = { 0 };
	static struct vt_stream st;
	uint32_t queue, bo, cmd, syncobj;
	uint8_t *map, *cmap;
	struct pollfd pfd;
	int fd, peer, ret;
	FILE *f;

	snprintf(pdev, sizeof(pdev), "rbln.%u", index);
	fd = vt_open(index);
	peer = vt_open(index == 0 ? 1 : 0);
	if (fd < 0 || peer < 0)
		vt_die("open");
	if (vt_queue_create(fd, DRM_RBLN_PRIORITY_NORMAL, &queue) ||
	    vt_bo_create(fd, 1 << 20, 0, &bo) ||
	    vt_bo_create(fd, 1 << 16, DRM_RBLN_BO_HOST, &cmd) ||
	    vt_syncobj_create(fd, &syncobj))
		vt_die("setup");
	mo.handle = bo;
	vt_ioctl(fd, DRM_IOCTL_RBLN_BO_MMAP_OFFSET, &mo);
	map = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, mo.offset);
	mo.handle = cmd;
	vt_ioctl(fd, DRM_IOCTL_RBLN_BO_MMAP_OFFSET, &mo);
	cmap = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, mo.offset);
	if (map == MAP_FAILED || cmap == MAP_FAILED)
		vt_die("mmap");

	/* The buffer shared with another device. */
	exp.handle = bo;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp), 0, "export a buffer");
	imp.fd = exp.fd;
	vt_expect(vt_ioctl(peer, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp), 0,
		  "import it into another device");

	/* A job that waits 30 s for a semaphore nobody sets. */
	vt_stream_init(&st);
	vt_sem_wait(&st, 0, 0, RBLN_SEM_EQ, 42, 30000000000ULL);
	vt_fill(&st, 0, 4096, 4096, 0xdeadbeef);
	memcpy(cmap, st.buf, st.size);
	refs[0] = (struct drm_rbln_bo_ref){ .handle = bo, .flags = DRM_RBLN_BO_READ | DRM_RBLN_BO_WRITE };
	s.queue_id = queue;
	s.cmd_handle = cmd;
	s.cmd_size = st.size;
	s.bo_count = 1;
	s.bos = (uintptr_t)refs;
	s.out_sync.handle = syncobj;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &s), 0, "submit a long job");
	sh.handle = syncobj;
	sh.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
	sh.fd = -1;
	vt_expect(vt_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &sh), 0,
		  "export its fence as a sync_file");
	usleep(200000);

	snprintf(path, sizeof(path), "/sys/bus/platform/drivers/rbln/unbind");
	vt_expect(write_sysfs(path, pdev), 0, "unbind %s with the file open and a job running", pdev);

	ret = vt_query(fd, &info);
	vt_expect(ret, -ENODEV, "ioctls of the old file fail with -ENODEV");
	vt_expect(vt_bo_create(fd, 4096, 0, &bo), -ENODEV, "no new buffers");
	pfd.fd = sh.fd;
	pfd.events = POLLIN;
	ret = poll(&pfd, 1, 10000);
	vt_result(ret == 1, "the job in flight ended");
	ioctl(sh.fd, SYNC_IOC_FILE_INFO, &sfi);
	vt_result(sfi.status == -ECANCELED, "its fence says -ECANCELED (%d)", sfi.status);
	map[0] = 0x5a;
	vt_result(map[0] == 0x5a && map[4096] == 0, "the mapping still works");
	{
		struct drm_rbln_bo_info bi = { .handle = imp.handle };

		vt_expect(vt_ioctl(peer, DRM_IOCTL_RBLN_BO_INFO, &bi), 0,
			  "the importer still has the buffer");
	}
	munmap(map, 1 << 20);
	munmap(cmap, 1 << 16);
	close(sh.fd);
	close(exp.fd);
	vt_gem_close(peer, imp.handle);
	vt_result(close(fd) == 0, "closing the old file");

	vt_expect(write_sysfs("/sys/bus/platform/drivers/rbln/bind", pdev), 0,
		  "bind %s again", pdev);
	usleep(100000);
	find_node(index, node, sizeof(node));
	vt_result(node[0] != '\0', "the device has an accel node again (%s)", node);
	snprintf(path, sizeof(path), "%s/device/status", node);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(status, sizeof(status), f))
			status[0] = '\0';
		fclose(f);
	}
	vt_result(!strncmp(status, "READY", 5), "status READY after bind (%.5s)", status);
	close(peer);
	return vt_finish();
}
