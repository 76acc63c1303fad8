// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln-vm-numa: buffer pages live on their device's NUMA node, whoever
 * touches them first (tests/vm/guest.sh t_numa, in the two-node guest).
 *
 * For each of the first N devices (argv[1]) the program binds itself, CPU
 * and memory policy, to a node other than the device's, then makes three
 * buffers present from there: a device buffer and a host buffer through
 * mmap() and a CPU write, and a device buffer through a job that fills it
 * (the kernel maps it in the submitting thread). The device's debugfs
 * "buffers" file must then show every page of the program's buffers on the
 * device's node. A control proves that the binding works: an anonymous
 * mapping touched the same way lands on the other node.
 *
 * Needs at least two NUMA nodes and devices on at least two of them.
 * Output is TAP, as the other VM programs.
 */
#include <numa.h>
#include <numaif.h>
#include <sys/mman.h>

#include "vmtest.h"

#define BUF_SIZE	(1u << 20)
#define HOST_SIZE	(256u << 10)
#define CMD_SIZE	65536u

/* Pages of client @ctx's buffers in @path: on @node and elsewhere. */
static int count_pages(const char *path, uint64_t ctx, int node,
		       uint64_t *on_node, uint64_t *elsewhere)
{
	char line[512];
	FILE *f = fopen(path, "re");

	*on_node = 0;
	*elsewhere = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long c, size;
		char kind[16], *tok, *save;
		int handle, n;

		if (sscanf(line, "%llu %d %15s %llu %n", &c, &handle, kind,
			   &size, &n) != 4 || c != ctx)
			continue;
		for (tok = strtok_r(line + n, " \n", &save); tok;
		     tok = strtok_r(NULL, " \n", &save)) {
			int pnode;
			unsigned long long pages;

			if (sscanf(tok, "%d:%llu", &pnode, &pages) != 2)
				continue;
			if (pnode == node)
				*on_node += pages;
			else
				*elsewhere += pages;
		}
	}
	fclose(f);
	return 0;
}

/* Binds the calling thread's CPUs and memory policy to @node. */
static int bind_to(int node)
{
	struct bitmask *mask = numa_allocate_nodemask();

	if (numa_run_on_node(node))
		return -1;
	numa_bitmask_setbit(mask, node);
	numa_set_membind(mask);
	numa_free_nodemask(mask);
	return 0;
}

/* Whether an anonymous mapping touched now lands on @node. */
static bool anon_lands_on(int node)
{
	enum { PAGES = 64 };
	void *addr[PAGES];
	int status[PAGES], i;
	long psize = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, PAGES * psize, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool ok = true;

	if (p == MAP_FAILED)
		return false;
	memset(p, 1, PAGES * psize);
	for (i = 0; i < PAGES; i++)
		addr[i] = p + i * psize;
	if (numa_move_pages(0, PAGES, addr, NULL, status, 0))
		ok = false;
	for (i = 0; ok && i < PAGES; i++)
		ok = status[i] == node;
	munmap(p, PAGES * psize);
	return ok;
}

/* A job on @fd that fills @bo, from a host command buffer; its status. */
static int fill_by_job(int fd, uint32_t bo)
{
	static struct vt_stream st;
	struct drm_rbln_bo_ref ref = { .handle = bo, .flags = DRM_RBLN_BO_WRITE };
	struct drm_rbln_submit s = { .bo_count = 1, .bos = (uintptr_t)&ref };
	uint32_t queue, cmd;
	uint8_t *cmd_map;
	int ret, status = -1;

	if (vt_queue_create(fd, DRM_RBLN_PRIORITY_NORMAL, &queue) ||
	    vt_bo_create(fd, CMD_SIZE, DRM_RBLN_BO_HOST, &cmd))
		return -1;
	cmd_map = vt_bo_map(fd, cmd, CMD_SIZE);
	if (cmd_map == MAP_FAILED)
		return -1;
	vt_stream_init(&st);
	vt_fill(&st, 0, 0, BUF_SIZE, 5);
	memcpy(cmd_map, st.buf, st.size);
	munmap(cmd_map, CMD_SIZE);
	s.queue_id = queue;
	s.cmd_handle = cmd;
	s.cmd_size = st.size;
	ret = vt_ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &s);
	if (!ret)
		ret = vt_wait_job(fd, queue, s.job_id, vt_now() + 60000000000LL, &status);
	return ret ? ret : status;
}

/* Buffers of device @index, made present from @other; the check. */
static void check_device(unsigned int index, int node, int other)
{
	uint64_t ctx, on_node, elsewhere, want;
	uint32_t dev_bo, host_bo, job_bo;
	uint8_t *dev_map, *host_map;
	char path[96];
	int fd, job;

	fd = vt_open(index);
	if (fd < 0)
		vt_die("open");
	if (bind_to(other))
		vt_die("numa_run_on_node");
	vt_result(anon_lands_on(other),
		  "rbln%u: control: memory touched by this process lands on node %d",
		  index, other);

	if (vt_bo_create(fd, BUF_SIZE, 0, &dev_bo) ||
	    vt_bo_create(fd, HOST_SIZE, DRM_RBLN_BO_HOST, &host_bo) ||
	    vt_bo_create(fd, BUF_SIZE, 0, &job_bo))
		vt_die("bo_create");
	dev_map = vt_bo_map(fd, dev_bo, BUF_SIZE);
	host_map = vt_bo_map(fd, host_bo, HOST_SIZE);
	if (dev_map == MAP_FAILED || host_map == MAP_FAILED)
		vt_die("mmap");
	memset(dev_map, 3, BUF_SIZE);
	memset(host_map, 4, HOST_SIZE);
	job = fill_by_job(fd, job_bo);
	vt_result(job == 0, "rbln%u: a job from node %d filled a buffer (status %d)",
		  index, other, job);

	if (vt_fdinfo(fd, "drm-client-id", &ctx, NULL, 0))
		vt_die("drm-client-id");
	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/rbln.%u/buffers", index);
	if (count_pages(path, ctx, node, &on_node, &elsewhere))
		vt_die(path);
	/* The three buffers and the job's command buffer. */
	want = (2 * BUF_SIZE + HOST_SIZE + CMD_SIZE) / sysconf(_SC_PAGESIZE);
	printf("# rbln%u (node %d), touched from node %d: %llu pages on node %d, %llu elsewhere\n",
	       index, node, other, (unsigned long long)on_node, node,
	       (unsigned long long)elsewhere);
	vt_result(on_node == want && elsewhere == 0,
		  "rbln%u: all %llu pages of its buffers are on its node %d (%llu there, %llu elsewhere)",
		  index, (unsigned long long)want, node,
		  (unsigned long long)on_node, (unsigned long long)elsewhere);

	munmap(dev_map, BUF_SIZE);
	munmap(host_map, HOST_SIZE);
	close(fd);
}

int main(int argc, char **argv)
{
	unsigned int ndev = argc > 1 ? (unsigned int)atoi(argv[1]) : 0, i;
	int nodes, node_of[64], seen[2] = { 0, 0 };

	if (ndev < 2 || ndev > 64) {
		fprintf(stderr, "usage: rbln-vm-numa DEVICES (2-64)\n");
		return 2;
	}
	if (numa_available() < 0)
		vt_die("numa_available");
	nodes = numa_num_configured_nodes();
	vt_result(nodes >= 2, "the guest has %d NUMA nodes (2 or more wanted)", nodes);
	if (nodes < 2)
		return vt_finish();

	for (i = 0; i < ndev; i++) {
		struct drm_rbln_device_info info;
		int fd = vt_open(i);

		if (fd < 0 || vt_query(fd, &info))
			vt_die("query");
		node_of[i] = info.numa_node;
		seen[info.numa_node != node_of[0]]++;
		close(fd);
	}
	vt_result(seen[0] && seen[1], "devices are spread over the nodes");

	for (i = 0; i < ndev; i++)
		check_device(i, node_of[i], (node_of[i] + 1) % nodes);
	return vt_finish();
}
