// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln-smi - state of the rbln NPUs: a device table (NPU, name, device,
 * bus id, temperature, power, performance state, memory, utilization) and
 * a context table (process, PID, context, memory), as text, JSON or CSV.
 *
 * Devices are found with libudev: accel nodes whose parent device is bound
 * to the rbln driver; their attributes are the driver's sysfs files.
 * Contexts come from the driver's debugfs "contexts" files (root), else
 * from the DRM fdinfo of the processes this user can see.
 *
 * Exit status: 0 devices listed; 1 no rbln device found (the message says
 * so; JSON and CSV output is still well-formed, with no devices); 2 usage
 * error or out of memory.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <libudev.h>

#define RBLN_SMI_VERSION	"1.0.0"

struct npu {
	unsigned int index;
	char name[64];
	char device[32];	/* rblnN */
	char node[64];		/* /dev/accel/accelN */
	char bus_id[64];
	char pdev[32];		/* platform device, rbln.N */
	unsigned int minor;
	dev_t devnum;
	char status[16];
	double temp_c;
	double power_w;
	uint64_t mem_used;
	uint64_t mem_total;
	unsigned int util;
	int numa_node;
	unsigned long resets;
	uint64_t busy_ns;
	char isa[16];
	char cpu_variant[16];	/* the compute kernels' CPU variant */
};

struct context {
	unsigned int npu;
	long pid;
	unsigned long long ctx;
	uint64_t device_mem;
	uint64_t host_mem;
	unsigned int queues;
	char comm[64];
};

static struct npu *npus;
static unsigned int nnpus;
static struct context *ctxs;
static unsigned int nctxs;
static bool ctx_from_fdinfo;

static void *xrealloc(void *p, size_t size)
{
	void *q = realloc(p, size);

	if (!q) {
		fprintf(stderr, "rbln-smi: out of memory\n");
		exit(2);
	}
	return q;
}

static const char *attr(struct udev_device *d, const char *name)
{
	const char *v = udev_device_get_sysattr_value(d, name);

	return v ? v : "";
}

static uint64_t attr_u64(struct udev_device *d, const char *name)
{
	return strtoull(attr(d, name), NULL, 10);
}

static const char *perf_state(const char *status)
{
	if (!strcmp(status, "BUSY"))
		return "P0";
	if (!strcmp(status, "READY"))
		return "P14";
	if (!strcmp(status, "FAULT"))
		return "ERR";
	return status[0] ? status : "?";
}

static int by_index(const void *a, const void *b)
{
	const struct npu *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

static void enumerate(void)
{
	struct udev *udev = udev_new();
	struct udev_enumerate *en;
	struct udev_list_entry *entry;

	if (!udev)
		return;
	en = udev_enumerate_new(udev);
	udev_enumerate_add_match_subsystem(en, "accel");
	udev_enumerate_scan_devices(en);
	udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(en)) {
		struct udev_device *d, *p;
		const char *drv, *node;
		struct npu *n;

		d = udev_device_new_from_syspath(udev, udev_list_entry_get_name(entry));
		if (!d)
			continue;
		p = udev_device_get_parent(d);
		drv = p ? udev_device_get_driver(p) : NULL;
		if (!drv || strcmp(drv, "rbln")) {
			udev_device_unref(d);
			continue;
		}
		npus = xrealloc(npus, (nnpus + 1) * sizeof(*npus));
		n = &npus[nnpus++];
		memset(n, 0, sizeof(*n));
		n->index = (unsigned int)attr_u64(p, "index");
		snprintf(n->name, sizeof(n->name), "%s", attr(p, "name"));
		snprintf(n->device, sizeof(n->device), "rbln%u", n->index);
		node = udev_device_get_devnode(d);
		snprintf(n->node, sizeof(n->node), "%s", node ? node : "");
		n->devnum = udev_device_get_devnum(d);
		n->minor = minor(n->devnum);
		snprintf(n->pdev, sizeof(n->pdev), "%s", udev_device_get_sysname(p));
		snprintf(n->bus_id, sizeof(n->bus_id), "%s:%s",
			 udev_device_get_subsystem(p) ? udev_device_get_subsystem(p) : "",
			 udev_device_get_sysname(p));
		snprintf(n->status, sizeof(n->status), "%s", attr(p, "status"));
		n->temp_c = (double)attr_u64(p, "temperature") / 1000.0;
		n->power_w = (double)attr_u64(p, "power_draw") / 1e6;
		n->mem_used = attr_u64(p, "mem_used");
		n->mem_total = attr_u64(p, "mem_total");
		n->util = (unsigned int)attr_u64(p, "utilization");
		n->numa_node = atoi(attr(p, "numa_node"));
		n->resets = (unsigned long)attr_u64(p, "resets");
		n->busy_ns = attr_u64(p, "busy_time");
		snprintf(n->isa, sizeof(n->isa), "%s", attr(p, "isa_version"));
		snprintf(n->cpu_variant, sizeof(n->cpu_variant), "%s",
			 attr(p, "cpu_variant"));
		udev_device_unref(d);
	}
	udev_enumerate_unref(en);
	udev_unref(udev);
	qsort(npus, nnpus, sizeof(*npus), by_index);
}

static struct context *new_context(void)
{
	ctxs = xrealloc(ctxs, (nctxs + 1) * sizeof(*ctxs));
	memset(&ctxs[nctxs], 0, sizeof(ctxs[0]));
	return &ctxs[nctxs++];
}

/* debugfs: "pid ctx device_mem host_mem imported_mem queues comm" */
static bool contexts_from_debugfs(void)
{
	bool any = false;

	for (unsigned int i = 0; i < nnpus; i++) {
		char path[128], line[512];
		FILE *f;

		snprintf(path, sizeof(path), "/sys/kernel/debug/accel/%s/contexts",
			 npus[i].pdev);
		f = fopen(path, "r");
		if (!f)
			continue;
		any = true;
		if (!fgets(line, sizeof(line), f)) {	/* header */
			fclose(f);
			continue;
		}
		while (fgets(line, sizeof(line), f)) {
			struct context c = { .npu = npus[i].index };
			unsigned long long imported;
			int used = 0;

			if (sscanf(line, "%ld %llu %llu %llu %llu %u %n", &c.pid, &c.ctx,
				   (unsigned long long *)&c.device_mem,
				   (unsigned long long *)&c.host_mem, &imported,
				   &c.queues, &used) < 6)
				continue;
			snprintf(c.comm, sizeof(c.comm), "%s", line + used);
			c.comm[strcspn(c.comm, "\n")] = '\0';
			*new_context() = c;
		}
		fclose(f);
	}
	return any;
}

static struct npu *npu_by_devnum(dev_t devnum)
{
	for (unsigned int i = 0; i < nnpus; i++)
		if (npus[i].devnum == devnum)
			return &npus[i];
	return NULL;
}

/* fdinfo of open accel files this user may read. */
static void contexts_from_fdinfo(void)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;

	ctx_from_fdinfo = true;
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
		while ((e = readdir(fds))) {
			char path[600], line[256];
			struct context c = { 0 };
			struct stat st;
			struct npu *n;
			bool rbln = false;

			snprintf(path, sizeof(path), "/proc/%s/fd/%s", p->d_name, e->d_name);
			if (stat(path, &st) || !S_ISCHR(st.st_mode))
				continue;
			n = npu_by_devnum(st.st_rdev);
			if (!n)
				continue;
			snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", p->d_name, e->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			c.npu = n->index;
			c.pid = atol(p->d_name);
			snprintf(c.comm, sizeof(c.comm), "%s", comm);
			while (fgets(line, sizeof(line), f)) {
				unsigned long long v;
				char unit[8] = "";

				if (!strncmp(line, "drm-driver:", 11))
					rbln = strstr(line, "rbln") != NULL;
				else if (sscanf(line, "drm-client-id: %llu", &v) == 1)
					c.ctx = v;
				else if (sscanf(line, "drm-total-memory: %llu %7s", &v, unit) >= 1)
					c.device_mem = v << (!strcmp(unit, "KiB") ? 10 :
							     !strcmp(unit, "MiB") ? 20 : 0);
			}
			fclose(f);
			if (!rbln)
				continue;
			/* One entry per DRM client (dup'ed fds share one). */
			bool dup = false;

			for (unsigned int i = 0; i < nctxs; i++)
				if (ctxs[i].npu == c.npu && ctxs[i].ctx == c.ctx)
					dup = true;
			if (!dup)
				*new_context() = c;
		}
		closedir(fds);
	}
	closedir(proc);
}

static void human(uint64_t bytes, char *out, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	unsigned int u = 0;

	while (v >= 1024.0 && u < 4) {
		v /= 1024.0;
		u++;
	}
	snprintf(out, len, "%.1f%s", v, units[u]);
}

static const char *kmd_version(void)
{
	static char v[32];
	FILE *f = fopen("/sys/module/rbln/version", "r");

	snprintf(v, sizeof(v), "unknown");
	if (f) {
		if (fgets(v, sizeof(v), f))
			v[strcspn(v, "\n")] = '\0';
		fclose(f);
	}
	return v;
}

static void print_table(void)
{
	const char *rule = "+-----+--------------+---------+------------------+-------+---------+------+--------------------+-------+";

	char title[128];

	/* The variant is global to the driver: one for all devices. */
	snprintf(title, sizeof(title),
		 "Device Information (rbln-smi %s, KMD ver: %s, CPU variant: %s)",
		 RBLN_SMI_VERSION, kmd_version(),
		 nnpus ? npus[0].cpu_variant : "-");
	puts(rule);
	printf("| %-101s |\n", title);
	puts(rule);
	printf("| %-3s | %-12s | %-7s | %-16s | %5s | %7s | %-4s | %18s | %5s |\n", "NPU",
	       "Name", "Device", "Bus ID", "Temp", "Power", "Perf", "Memory(used/total)",
	       "Util");
	puts(rule);
	for (unsigned int i = 0; i < nnpus; i++) {
		const struct npu *n = &npus[i];
		char used[16], total[16], mem[40], temp[16], power[16];

		human(n->mem_used, used, sizeof(used));
		human(n->mem_total, total, sizeof(total));
		snprintf(mem, sizeof(mem), "%s / %s", used, total);
		snprintf(temp, sizeof(temp), "%.0fC", n->temp_c);
		snprintf(power, sizeof(power), "%.1fW", n->power_w);
		printf("| %-3u | %-12s | %-7s | %-16s | %5s | %7s | %-4s | %18s | %5.1f |\n",
		       n->index, n->name, n->device, n->bus_id, temp, power,
		       perf_state(n->status), mem, (double)n->util);
	}
	puts(rule);
	printf("\n");

	const char *crule = "+-----+---------------------+---------+--------+--------+--------------+--------------+";

	puts(crule);
	printf("| %-83s |\n", ctx_from_fdinfo ?
	       "Context Information (from fdinfo: processes of this user)" :
	       "Context Information");
	puts(crule);
	printf("| %-3s | %-19s | %7s | %6s | %6s | %12s | %12s |\n", "NPU", "Process", "PID",
	       "CTX", "Queues", "Device mem", "Host mem");
	puts(crule);
	if (!nctxs)
		printf("| %-83s |\n", "No running contexts");
	for (unsigned int i = 0; i < nctxs; i++) {
		const struct context *c = &ctxs[i];
		char dm[16], hm[16];

		human(c->device_mem, dm, sizeof(dm));
		human(c->host_mem, hm, sizeof(hm));
		printf("| %-3u | %-19.19s | %7ld | %6llu | %6u | %12s | %12s |\n", c->npu,
		       c->comm, c->pid, c->ctx, c->queues, dm, hm);
	}
	puts(crule);
}

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void print_json(void)
{
	printf("{\n  \"KMD_version\": ");
	json_string(kmd_version());
	printf(",\n  \"devices\": [");
	for (unsigned int i = 0; i < nnpus; i++) {
		const struct npu *n = &npus[i];

		printf("%s\n    {\"npu\": %u, \"name\": ", i ? "," : "", n->index);
		json_string(n->name);
		printf(", \"device\": ");
		json_string(n->device);
		printf(", \"node\": ");
		json_string(n->node);
		printf(", \"bus_id\": ");
		json_string(n->bus_id);
		printf(", \"temperature_c\": %.1f, \"power_w\": %.2f, \"perf_state\": \"%s\", \"status\": ",
		       n->temp_c, n->power_w, perf_state(n->status));
		json_string(n->status);
		printf(", \"memory\": {\"used\": %llu, \"total\": %llu}, \"utilization\": %u, \"numa_node\": %d, \"resets\": %lu, \"busy_time_ns\": %llu, \"isa_version\": ",
		       (unsigned long long)n->mem_used, (unsigned long long)n->mem_total,
		       n->util, n->numa_node, n->resets, (unsigned long long)n->busy_ns);
		json_string(n->isa);
		printf(", \"cpu_variant\": ");
		json_string(n->cpu_variant);
		printf("}");
	}
	printf("%s],\n  \"contexts\": [", nnpus ? "\n  " : "");
	for (unsigned int i = 0; i < nctxs; i++) {
		const struct context *c = &ctxs[i];

		printf("%s\n    {\"npu\": %u, \"pid\": %ld, \"ctx\": %llu, \"process\": ",
		       i ? "," : "", c->npu, c->pid, c->ctx);
		json_string(c->comm);
		printf(", \"queues\": %u, \"device_memory\": %llu, \"host_memory\": %llu}",
		       c->queues, (unsigned long long)c->device_mem,
		       (unsigned long long)c->host_mem);
	}
	printf("%s]\n}\n", nctxs ? "\n  " : "");
}

static void csv_field(const char *s)
{
	if (strpbrk(s, ",\"\n")) {
		putchar('"');
		for (; *s; s++) {
			if (*s == '"')
				putchar('"');
			putchar(*s);
		}
		putchar('"');
	} else {
		fputs(s, stdout);
	}
}

static void print_csv(void)
{
	puts("npu,name,device,bus_id,temperature_c,power_w,perf_state,status,memory_used,memory_total,utilization");
	for (unsigned int i = 0; i < nnpus; i++) {
		const struct npu *n = &npus[i];

		printf("%u,", n->index);
		csv_field(n->name);
		printf(",%s,", n->device);
		csv_field(n->bus_id);
		printf(",%.1f,%.2f,%s,%s,%llu,%llu,%u\n", n->temp_c, n->power_w,
		       perf_state(n->status), n->status, (unsigned long long)n->mem_used,
		       (unsigned long long)n->mem_total, n->util);
	}
	if (nctxs) {
		puts("");
		puts("npu,pid,ctx,process,queues,device_memory,host_memory");
		for (unsigned int i = 0; i < nctxs; i++) {
			const struct context *c = &ctxs[i];

			printf("%u,%ld,%llu,", c->npu, c->pid, c->ctx);
			csv_field(c->comm);
			printf(",%u,%llu,%llu\n", c->queues,
			       (unsigned long long)c->device_mem,
			       (unsigned long long)c->host_mem);
		}
	}
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: rbln-smi [-j | --json] [--csv] [-h] [-v]\n"
		"Show the state of the rbln NPUs and the contexts using them.\n"
		"  -j, --json   JSON output\n"
		"      --csv    CSV output (devices, then contexts)\n"
		"  -v, --version\n"
		"Exit status: 0 devices found, 1 no rbln device, 2 usage error.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	enum { TEXT, JSON, CSV } format = TEXT;
	int c;

	while ((c = getopt_long(argc, argv, "jhv", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			format = JSON;
			break;
		case 'c':
			format = CSV;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'v':
			printf("rbln-smi %s\n", RBLN_SMI_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}

	enumerate();
	if (nnpus && !contexts_from_debugfs())
		contexts_from_fdinfo();

	switch (format) {
	case JSON:
		print_json();
		break;
	case CSV:
		print_csv();
		break;
	default:
		if (!nnpus) {
			printf("No RBLN devices found: no accel device is bound to the rbln driver\n"
			       "(is rbln.ko loaded? see Documentation/ for installing it).\n");
			break;
		}
		print_table();
		break;
	}
	if (!nnpus && format != TEXT)
		fprintf(stderr, "rbln-smi: no RBLN devices found\n");
	free(npus);
	free(ctxs);
	return nnpus ? 0 : 1;
}
