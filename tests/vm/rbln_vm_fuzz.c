// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln-vm-fuzz: hostile clients against rbln.ko with its default limits.
 * Several processes open every rbln device and, for a while, issue random
 * ioctls: buffers of random sizes and kinds (many small, some as large as a
 * device allows), their pages touched through mmap, queues, submissions of
 * random but mostly valid streams with in- and out-syncs, waits, PRIME
 * sharing between devices, closes, reopens, and ioctls with random numbers
 * and random argument bytes.
 *
 * What must hold (the kernel log and the devices' state are checked by
 * guest.sh): no process is killed (each child's exit is checked here),
 * the OOM killer never runs (/proc/vmstat oom_kill does not move), and
 * every client finds its fdinfo back at zero memory once it has closed
 * its handles. The driver answers pressure with errors: the counts of
 * -ENOMEM, -EBUSY and -ENOSPC are printed.
 *
 * Usage: rbln-vm-fuzz [-s seconds (default 120)] [-p processes (default 4)]
 * TAP output.
 */
#include <getopt.h>
#include <signal.h>
#include <sys/wait.h>

#include "vmtest.h"

#define MAX_DEVS	64
#define MAX_BOS		64
#define MAX_QUEUES	8
#define MAX_SYNCS	8
#define CMD_SIZE	(64 << 10)
/* SEM_WAITs time out quickly: the run must end with idle devices. */
#define SEM_TIMEOUT_NS	(5 * 1000000ULL)
/* Handles the random ioctls may have created are closed blindly. */
#define MAX_HANDLE	4096

struct fbo {
	uint32_t handle;
	uint64_t size;
};

struct fdev {
	int fd;
	unsigned int index;
	uint64_t max_bo;
	uint32_t cmd;
	uint8_t *cmd_map;
	struct fbo bos[MAX_BOS];
	unsigned int nbos;
	uint32_t queues[MAX_QUEUES];
	uint64_t last_job[MAX_QUEUES];
	unsigned int nqueues;
	uint32_t syncs[MAX_SYNCS];
	unsigned int nsyncs;
};

/* Errors a client sees when it hits a limit, counted per process. */
struct tally {
	unsigned long ops, enomem, ebusy, enospc, ok;
};

static struct fdev devs[MAX_DEVS];
static unsigned int ndevs;
static uint64_t rng_state;
static struct tally tally;
/* Each child's tally, shared with the parent for the summary. */
static struct tally *tallies;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static int count(int ret)
{
	tally.ops++;
	if (!ret)
		tally.ok++;
	else if (ret == -ENOMEM)
		tally.enomem++;
	else if (ret == -EBUSY)
		tally.ebusy++;
	else if (ret == -ENOSPC)
		tally.enospc++;
	return ret;
}

/*
 * Opens device d->index with its command buffer. Returns 0, or -errno of
 * the step that failed (said on standard output), the file closed.
 */
static int dev_open(struct fdev *d)
{
	struct drm_rbln_device_info info;
	unsigned int index = d->index;
	const char *step = "open";
	int err;

	memset(d, 0, sizeof(*d));
	d->index = index;
	d->fd = vt_open(index);
	if (d->fd < 0)
		err = -errno;
	else if ((err = vt_query(d->fd, &info)))
		step = "query";
	else if ((err = vt_bo_create(d->fd, CMD_SIZE, DRM_RBLN_BO_HOST, &d->cmd)))
		step = "command buffer";
	else {
		d->max_bo = info.max_bo_size;
		d->cmd_map = vt_bo_map(d->fd, d->cmd, CMD_SIZE);
		if (d->cmd_map != MAP_FAILED)
			return 0;
		err = -errno;
		step = "mmap";
	}
	if (err != -ENOMEM)
		printf("# rbln%u: %s: %s\n", index, step, strerror(-err));
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	return err;
}

/* Closing the file drops everything of it at once, jobs included. */
static void dev_close(struct fdev *d)
{
	munmap(d->cmd_map, CMD_SIZE);
	close(d->fd);
}

/* Mostly small buffers, now and then one as large as the device allows. */
static void op_bo_create(struct fdev *d)
{
	uint64_t size = rnd_below(16) ? 1 + rnd_below(64 << 10) :
		1 + rnd_below(d->max_bo);
	uint32_t flags = rnd_below(3) ? 0 : DRM_RBLN_BO_HOST;
	uint32_t handle;

	if (!rnd_below(50))
		flags = (uint32_t)rnd();
	if (d->nbos == MAX_BOS)
		return;
	if (!count(vt_bo_create(d->fd, size, flags, &handle))) {
		d->bos[d->nbos].handle = handle;
		d->bos[d->nbos].size = (size + 4095) & ~4095ULL;
		d->nbos++;
	}
}

static void op_bo_close(struct fdev *d)
{
	unsigned int i;

	if (!d->nbos || !rnd_below(20)) {
		count(vt_gem_close(d->fd, (uint32_t)rnd()));
		return;
	}
	i = (unsigned int)rnd_below(d->nbos);
	count(vt_gem_close(d->fd, d->bos[i].handle));
	d->bos[i] = d->bos[--d->nbos];
}

/* Makes pages present: up to 16 MiB of a buffer written through mmap. */
static void op_touch(struct fdev *d)
{
	struct fbo *b;
	uint64_t off, len;
	uint8_t *map;

	if (!d->nbos)
		return;
	b = &d->bos[rnd_below(d->nbos)];
	map = vt_bo_map(d->fd, b->handle, b->size);
	count(map == MAP_FAILED ? -errno : 0);
	if (map == MAP_FAILED)
		return;
	off = rnd_below(b->size) & ~4095ULL;
	len = 1 + rnd_below(b->size - off < (16 << 20) ? b->size - off : 16 << 20);
	memset(map + off, (int)rnd(), len);
	munmap(map, b->size);
}

static void op_queue(struct fdev *d)
{
	struct drm_rbln_queue_destroy qd = { 0 };
	uint32_t id;

	if (d->nqueues < MAX_QUEUES && rnd_below(3)) {
		if (!count(vt_queue_create(d->fd, (uint32_t)rnd_below(4), &id))) {
			d->last_job[d->nqueues] = 0;
			d->queues[d->nqueues++] = id;
		}
		return;
	}
	if (!d->nqueues)
		return;
	qd.queue_id = d->queues[--d->nqueues];
	count(vt_ioctl(d->fd, DRM_IOCTL_RBLN_QUEUE_DESTROY, &qd));
}

static void op_syncobj(struct fdev *d)
{
	struct drm_syncobj_destroy sd = { 0 };

	if (d->nsyncs < MAX_SYNCS && rnd_below(2)) {
		if (!count(vt_syncobj_create(d->fd, &d->syncs[d->nsyncs])))
			d->nsyncs++;
		return;
	}
	if (!d->nsyncs)
		return;
	sd.handle = d->syncs[--d->nsyncs];
	count(vt_ioctl(d->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &sd));
}

/* An offset and size inside a buffer (now and then not). */
static void pick_range(const struct fbo *b, uint64_t *off, uint64_t *size)
{
	uint64_t room, max = 256 << 10;

	*off = rnd_below(b->size / 4) * 4;
	room = b->size - *off;
	*size = 4 * (1 + rnd_below((room < max ? room : max) / 4));
	if (*size > room)
		*size = room & ~3ULL;
	if (!rnd_below(30))
		*size += 4 * (1 + rnd_below(64));
}

static void op_submit(struct fdev *d)
{
	struct drm_rbln_bo_ref refs[8];
	struct drm_rbln_sync in[2];
	struct drm_rbln_submit_diag diag;
	struct drm_rbln_submit s = { 0 };
	static struct vt_stream st;
	unsigned int nrefs, nin = 0, i, q, ncmd;

	if (!d->nqueues || !d->nbos)
		return;
	nrefs = 1 + (unsigned int)rnd_below(d->nbos < 8 ? d->nbos : 8);
	for (i = 0; i < nrefs; i++) {
		refs[i].handle = d->bos[(i + rnd_below(d->nbos)) % d->nbos].handle;
		refs[i].flags = DRM_RBLN_BO_READ | DRM_RBLN_BO_WRITE;
	}
	vt_stream_init(&st);
	ncmd = 1 + (unsigned int)rnd_below(6);
	for (i = 0; i < ncmd; i++) {
		const struct fbo *b = &d->bos[rnd_below(d->nbos)];
		uint64_t off, size;
		uint32_t bo = (uint32_t)rnd_below(nrefs);
		uint32_t src = (uint32_t)rnd_below(nrefs);

		pick_range(b, &off, &size);
		switch (rnd_below(10)) {
		case 0:
			vt_fill(&st, bo, off, size, (uint32_t)rnd());
			break;
		case 1:
			vt_copy(&st, bo, off, src, 0, size);
			break;
		case 2:
			vt_add(&st, bo, off, src, 0, bo, off, size);
			break;
		case 3:
		case 4:
			vt_sem_signal(&st, bo, off & ~7ULL, RBLN_SEM_ADD, 1);
			break;
		case 5:
			vt_sem_wait(&st, bo, off & ~7ULL, (uint32_t)rnd_below(3),
				    rnd_below(4), 1 + rnd_below(SEM_TIMEOUT_NS));
			break;
		default:
			vt_fill(&st, bo, off, 4, (uint32_t)rnd());
			break;
		}
	}
	if (!rnd_below(20))
		st.buf[rnd_below(st.size)] ^= (uint8_t)(1u << rnd_below(8));
	memcpy(d->cmd_map, st.buf, st.size);

	for (i = 0; i < d->nsyncs && nin < 2; i++) {
		if (rnd_below(4))
			continue;
		in[nin].handle = d->syncs[i];
		in[nin].point = 0;
		in[nin].flags = 0;
		nin++;
	}
	q = (unsigned int)rnd_below(d->nqueues);
	s.queue_id = d->queues[q];
	s.cmd_handle = d->cmd;
	s.cmd_size = st.size;
	s.bo_count = nrefs;
	s.bos = (uintptr_t)refs;
	s.in_sync_count = nin;
	s.in_syncs = (uintptr_t)in;
	s.diag = (uintptr_t)&diag;
	if (d->nsyncs && rnd_below(2))
		s.out_sync.handle = d->syncs[rnd_below(d->nsyncs)];
	if (!count(vt_ioctl(d->fd, DRM_IOCTL_RBLN_SUBMIT, &s)))
		d->last_job[q] = s.job_id;
}

static void op_wait(struct fdev *d)
{
	unsigned int q;

	if (!d->nqueues)
		return;
	q = (unsigned int)rnd_below(d->nqueues);
	if (d->last_job[q])
		count(vt_wait_job(d->fd, d->queues[q], d->last_job[q],
				  vt_now() + (int64_t)rnd_below(50000000), NULL));
}

/* A buffer of one device shared with another through PRIME. */
static void op_prime(struct fdev *d)
{
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_prime_handle imp = { 0 };
	struct fdev *to = &devs[rnd_below(ndevs)];

	if (!d->nbos || to->nbos == MAX_BOS)
		return;
	exp.handle = d->bos[rnd_below(d->nbos)].handle;
	if (count(vt_ioctl(d->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp)))
		return;
	imp.fd = exp.fd;
	if (!count(vt_ioctl(to->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp))) {
		struct drm_rbln_bo_info bi = { .handle = imp.handle };

		if (!vt_ioctl(to->fd, DRM_IOCTL_RBLN_BO_INFO, &bi)) {
			to->bos[to->nbos].handle = imp.handle;
			to->bos[to->nbos].size = bi.size;
			to->nbos++;
		}
	}
	close(exp.fd);
}

/* Any driver ioctl number, any direction and size, random bytes. */
static void op_random_ioctl(struct fdev *d)
{
	uint64_t arg[16];
	unsigned int nr = DRM_COMMAND_BASE + (unsigned int)rnd_below(12);
	unsigned int size = (unsigned int)rnd_below(sizeof(arg) + 1);
	unsigned long req;

	for (unsigned int i = 0; i < 16; i++)
		arg[i] = rnd_below(4) ? rnd() : rnd_below(16);
	switch (rnd_below(3)) {
	case 0:
		req = DRM_IOWR(nr, uint8_t[8]);
		req = (req & ~((unsigned long)_IOC_SIZEMASK << _IOC_SIZESHIFT)) |
		      ((unsigned long)size << _IOC_SIZESHIFT);
		break;
	case 1:
		req = DRM_IOW(nr, uint8_t[8]);
		req = (req & ~((unsigned long)_IOC_SIZEMASK << _IOC_SIZESHIFT)) |
		      ((unsigned long)size << _IOC_SIZESHIFT);
		break;
	default:
		req = DRM_IO(nr);
		break;
	}
	count(vt_ioctl(d->fd, req, arg));
}

static void op_query(struct fdev *d)
{
	struct drm_rbln_device_info info;
	struct drm_rbln_bo_info bi = { 0 };

	count(vt_query(d->fd, &info));
	if (d->nbos) {
		bi.handle = d->bos[rnd_below(d->nbos)].handle;
		count(vt_ioctl(d->fd, DRM_IOCTL_RBLN_BO_INFO, &bi));
	}
}

/*
 * Closes and opens @d again. While the other processes hold the host
 * budget (rbln.ko's limit on host buffers, shared by every client), the
 * new file's command buffer is refused with -ENOMEM, as it should be:
 * wait up to 2 s for them to free some, as a real client would retry.
 */
static int reopen(struct fdev *d)
{
	unsigned int index = d->index, tries;
	int err = -ENOMEM;

	dev_close(d);
	for (tries = 0; tries < 400 && err == -ENOMEM; tries++) {
		if (tries)
			usleep(5000);
		d->index = index;
		err = dev_open(d);
	}
	if (err == -ENOMEM)
		printf("# rbln%u: command buffer: host budget still full after 2 s\n",
		       index);
	return err;
}

/*
 * Every handle closed, the file's fdinfo must show no memory: what the
 * client held is accounted to it, and nothing else is.
 */
static int drain_and_check(struct fdev *d)
{
	/* drm-resident-memory is left out while a file has no buffer. */
	uint64_t total = 1, resident = 0;
	struct drm_syncobj_destroy sd = { 0 };
	uint32_t h;

	munmap(d->cmd_map, CMD_SIZE);
	for (h = 1; h <= MAX_HANDLE; h++)
		vt_gem_close(d->fd, h);
	d->nbos = 0;
	while (d->nsyncs) {
		sd.handle = d->syncs[--d->nsyncs];
		vt_ioctl(d->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &sd);
	}
	vt_fdinfo(d->fd, "drm-resident-memory", &resident, NULL, 0);
	if (vt_fdinfo(d->fd, "drm-total-memory", &total, NULL, 0) || total || resident) {
		printf("# rbln%u: fdinfo after closing every handle: total %llu, resident %llu\n",
		       d->index, (unsigned long long)total,
		       (unsigned long long)resident);
		return -1;
	}
	close(d->fd);
	return 0;
}

static int child(unsigned int id, int seconds)
{
	int64_t end = vt_now() + (int64_t)seconds * 1000000000;
	unsigned int i;
	int bad = 0;

	rng_state = 0x9e3779b97f4a7c15ULL * (id + 1) ^ (uint64_t)vt_now();
	for (i = 0; i < ndevs; i++) {
		devs[i].index = i;
		if (dev_open(&devs[i])) {
			printf("# process %u: cannot open rbln%u\n", id, i);
			return 1;
		}
	}
	while (vt_now() < end) {
		struct fdev *d = &devs[rnd_below(ndevs)];

		switch (rnd_below(14)) {
		case 0:
		case 1:
			op_bo_create(d);
			break;
		case 2:
			op_bo_close(d);
			break;
		case 3:
			op_touch(d);
			break;
		case 4:
			op_queue(d);
			break;
		case 5:
			op_syncobj(d);
			break;
		case 6:
		case 7:
		case 8:
			op_submit(d);
			break;
		case 9:
			op_wait(d);
			break;
		case 10:
			op_prime(d);
			break;
		case 11:
			op_random_ioctl(d);
			break;
		case 12:
			op_query(d);
			break;
		default:
			if (!rnd_below(50) && reopen(d)) {
				printf("# process %u: cannot reopen rbln%u\n", id, d->index);
				return 1;
			}
			break;
		}
	}
	for (i = 0; i < ndevs; i++)
		bad |= drain_and_check(&devs[i]);
	tallies[id] = tally;
	printf("# process %u: %lu ioctls, %lu ok, %lu ENOMEM, %lu EBUSY, %lu ENOSPC\n",
	       id, tally.ops, tally.ok, tally.enomem, tally.ebusy, tally.enospc);
	return bad ? 3 : 0;
}

static unsigned long oom_kills(void)
{
	char key[64];
	unsigned long v, kills = 0;
	FILE *f = fopen("/proc/vmstat", "re");

	if (!f)
		vt_die("/proc/vmstat");
	while (fscanf(f, "%63s %lu", key, &v) == 2) {
		if (!strcmp(key, "oom_kill"))
			kills = v;
	}
	fclose(f);
	return kills;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { { NULL, 0, NULL, 0 } };
	int seconds = 120, procs = 4, opt, i, failed = 0;
	unsigned long kills_before;
	pid_t pids[64];

	while ((opt = getopt_long(argc, argv, "s:p:", longopts, NULL)) != -1) {
		if (opt == 's')
			seconds = atoi(optarg);
		else if (opt == 'p')
			procs = atoi(optarg);
		else
			return 2;
	}
	if (seconds < 1 || procs < 1 || procs > 64) {
		fprintf(stderr, "rbln-vm-fuzz: -s must be >= 1, -p 1-64\n");
		return 2;
	}
	for (ndevs = 0; ndevs < MAX_DEVS; ndevs++) {
		int fd = vt_open(ndevs);

		if (fd < 0)
			break;
		close(fd);
	}
	vt_result(ndevs > 0, "fuzz: %u rbln devices", ndevs);
	if (!ndevs)
		return vt_finish();

	tallies = mmap(NULL, sizeof(*tallies) * (size_t)procs, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tallies == MAP_FAILED)
		vt_die("mmap");
	memset(tallies, 0, sizeof(*tallies) * (size_t)procs);
	kills_before = oom_kills();
	fflush(stdout);
	for (i = 0; i < procs; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			vt_die("fork");
		if (!pids[i]) {
			int rc = child((unsigned int)i, seconds);

			fflush(stdout);
			_exit(rc);
		}
	}
	for (i = 0; i < procs; i++) {
		int status;

		if (waitpid(pids[i], &status, 0) < 0)
			vt_die("waitpid");
		if (WIFSIGNALED(status)) {
			printf("# process %d killed by signal %d\n", i, WTERMSIG(status));
			failed++;
		} else if (WEXITSTATUS(status)) {
			printf("# process %d exited with %d\n", i, WEXITSTATUS(status));
			failed++;
		}
	}
	for (i = 1; i < procs; i++) {
		tallies[0].ops += tallies[i].ops;
		tallies[0].ok += tallies[i].ok;
		tallies[0].enomem += tallies[i].enomem;
		tallies[0].ebusy += tallies[i].ebusy;
		tallies[0].enospc += tallies[i].enospc;
	}
	vt_result(failed == 0,
		  "fuzz: %d processes x %u devices for %d s: none killed, each back to zero memory in fdinfo",
		  procs, ndevs, seconds);
	vt_result(tallies[0].ops > 0,
		  "fuzz: %lu ioctls: %lu succeeded, %lu -ENOMEM, %lu -EBUSY, %lu -ENOSPC",
		  tallies[0].ops, tallies[0].ok, tallies[0].enomem, tallies[0].ebusy,
		  tallies[0].enospc);
	vt_result(oom_kills() == kills_before, "fuzz: the OOM killer never ran (oom_kill %lu -> %lu)",
		  kills_before, oom_kills());
	return vt_finish();
}
