// SPDX-License-Identifier: GPL-2.0-only
/*
 * The contexts using the devices: from the driver's debugfs "contexts"
 * files (root), else from the DRM fdinfo of the processes this user can
 * see. Emulated devices live inside their processes: they have none.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "smi.h"

static struct context *new_context(struct smi *s)
{
	s->ctxs = smi_realloc(s->ctxs, (s->nctxs + 1) * sizeof(*s->ctxs));
	memset(&s->ctxs[s->nctxs], 0, sizeof(s->ctxs[0]));
	return &s->ctxs[s->nctxs++];
}

/* debugfs: "pid ctx device_mem host_mem imported_mem queues comm" */
static bool contexts_from_debugfs(struct smi *s)
{
	bool any = false;

	for (unsigned int i = 0; i < s->nnpus; i++) {
		char path[128], line[512];
		FILE *f;

		snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/contexts",
			 s->npus[i].pdev);
		f = fopen(path, "r");
		if (!f)
			continue;
		any = true;
		if (!fgets(line, sizeof(line), f)) {	/* header */
			fclose(f);
			continue;
		}
		while (fgets(line, sizeof(line), f)) {
			struct context c = { .npu = s->npus[i].index };
			unsigned long long imported;
			int used = 0;

			if (sscanf(line, "%ld %llu %llu %llu %llu %u %n", &c.pid, &c.ctx,
				   (unsigned long long *)&c.device_mem,
				   (unsigned long long *)&c.host_mem, &imported,
				   &c.queues, &used) < 6)
				continue;
			snprintf(c.comm, sizeof(c.comm), "%s", line + used);
			c.comm[strcspn(c.comm, "\n")] = '\0';
			*new_context(s) = c;
		}
		fclose(f);
	}
	return any;
}

static struct npu *npu_by_devnum(struct smi *s, dev_t devnum)
{
	for (unsigned int i = 0; i < s->nnpus; i++)
		if (s->npus[i].devnum == devnum)
			return &s->npus[i];
	return NULL;
}

/* One open accel file of a process: its fdinfo as a context, if rbln's. */
static void fdinfo_context(struct smi *s, const char *pid, const char *fd, const char *comm)
{
	char path[600], line[256];
	struct context c = { 0 };
	struct stat st;
	struct npu *n;
	bool rbln = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/fd/%s", pid, fd);
	if (stat(path, &st) || !S_ISCHR(st.st_mode))
		return;
	n = npu_by_devnum(s, st.st_rdev);
	if (!n)
		return;
	snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", pid, fd);
	f = fopen(path, "r");
	if (!f)
		return;
	c.npu = n->index;
	c.pid = atol(pid);
	snprintf(c.comm, sizeof(c.comm), "%s", comm);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		char unit[8] = "";

		if (!strncmp(line, "drm-driver:", 11))
			rbln = strstr(line, "rbln") != NULL;
		else if (sscanf(line, "drm-client-id: %llu", &v) == 1)
			c.ctx = v;
		else if (sscanf(line, "drm-total-memory: %llu %7s", &v, unit) >= 1)
			c.device_mem = v << (!strcmp(unit, "KiB") ? 10 : !strcmp(unit, "MiB") ? 20 : 0);
	}
	fclose(f);
	if (!rbln)
		return;
	/* One entry per DRM client (dup'ed fds share one). */
	for (unsigned int i = 0; i < s->nctxs; i++)
		if (s->ctxs[i].npu == c.npu && s->ctxs[i].ctx == c.ctx)
			return;
	*new_context(s) = c;
}

static void contexts_from_fdinfo(struct smi *s)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;

	s->ctx_from_fdinfo = true;
	if (!proc)
		return;
	while ((p = readdir(proc))) {
		char dir[300], comm[64] = "";
		struct dirent *e;
		DIR *fds;
		FILE *f;

		if (!isdigit((unsigned char)p->d_name[0]))
			continue;
		snprintf(dir, sizeof(dir), "/proc/%s/comm", p->d_name);
		f = fopen(dir, "r");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		snprintf(dir, sizeof(dir), "/proc/%s/fd", p->d_name);
		fds = opendir(dir);
		if (!fds)
			continue;
		while ((e = readdir(fds)))
			fdinfo_context(s, p->d_name, e->d_name, comm);
		closedir(fds);
	}
	closedir(proc);
}

void smi_contexts(struct smi *s)
{
	if (s->nnpus && !s->emulated && !contexts_from_debugfs(s))
		contexts_from_fdinfo(s);
}
