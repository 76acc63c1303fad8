// SPDX-License-Identifier: GPL-2.0-only
/* rbln-smi's whole-snapshot output: the tables, JSON and CSV. */
#include <stdio.h>
#include <string.h>

#include "smi.h"

const char *smi_perf_state(const char *status)
{
	if (!strcmp(status, "BUSY"))
		return "P0";
	if (!strcmp(status, "READY"))
		return "P14";
	if (!strcmp(status, "FAULT"))
		return "ERR";
	return status[0] ? status : "?";
}

const char *smi_kmd_version(void)
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

static void print_devices(const struct smi *s)
{
	const char *rule = "+-----+--------------+---------+------------------+-------+---------+------+--------------------+-------+";
	char title[160];

	if (s->emulated)
		snprintf(title, sizeof(title), "Device Information (rbln-smi %s, emulated devices "
			 "of libnpu, CPU variant: %s)", RBLN_SMI_VERSION,
			 s->nnpus ? s->npus[0].cpu_variant : "-");
	else	/* The variant is global to the driver: one for all devices. */
		snprintf(title, sizeof(title), "Device Information (rbln-smi %s, KMD ver: %s, "
			 "CPU variant: %s)", RBLN_SMI_VERSION, smi_kmd_version(),
			 s->nnpus ? s->npus[0].cpu_variant : "-");
	puts(rule);
	printf("| %-101s |\n", title);
	puts(rule);
	printf("| %-3s | %-12s | %-7s | %-16s | %5s | %7s | %-4s | %18s | %5s |\n", "NPU",
	       "Name", "Device", "Bus ID", "Temp", "Power", "Perf", "Memory(used/total)",
	       "Util");
	puts(rule);
	for (unsigned int i = 0; i < s->nnpus; i++) {
		const struct npu *n = &s->npus[i];
		char used[16], total[16], mem[40], temp[16], power[16];

		human(n->mem_used, used, sizeof(used));
		human(n->mem_total, total, sizeof(total));
		snprintf(mem, sizeof(mem), "%s / %s", used, total);
		snprintf(temp, sizeof(temp), "%.0fC", n->temp_c);
		snprintf(power, sizeof(power), "%.1fW", n->power_w);
		printf("| %-3u | %-12s | %-7s | %-16s | %5s | %7s | %-4s | %18s | %5.1f |\n",
		       n->index, n->name, n->device, n->bus_id, temp, power,
		       smi_perf_state(n->status), mem, (double)n->util);
	}
	puts(rule);
}

/* The processes of each device, grouped by device. */
static void print_contexts(const struct smi *s)
{
	const char *crule = "+-----+---------------------+---------+--------+--------+--------------+--------------+";

	puts(crule);
	printf("| %-83s |\n", s->emulated ? "Context Information (emulated devices live inside "
	       "their processes)" : s->ctx_from_fdinfo ?
	       "Context Information (from fdinfo: processes of this user)" : "Context Information");
	puts(crule);
	printf("| %-3s | %-19s | %7s | %6s | %6s | %12s | %12s |\n", "NPU", "Process", "PID",
	       "CTX", "Queues", "Device mem", "Host mem");
	puts(crule);
	if (!s->nctxs)
		printf("| %-83s |\n", "No running contexts");
	for (unsigned int d = 0; d < s->nnpus; d++)
		for (unsigned int i = 0; i < s->nctxs; i++) {
			const struct context *c = &s->ctxs[i];
			char dm[16], hm[16];

			if (c->npu != s->npus[d].index)
				continue;
			human(c->device_mem, dm, sizeof(dm));
			human(c->host_mem, hm, sizeof(hm));
			printf("| %-3u | %-19.19s | %7ld | %6llu | %6u | %12s | %12s |\n", c->npu,
			       c->comm, c->pid, c->ctx, c->queues, dm, hm);
		}
	puts(crule);
}

void smi_print_table(const struct smi *s)
{
	print_devices(s);
	printf("\n");
	print_contexts(s);
}

static void json_string(const char *str)
{
	putchar('"');
	for (; *str; str++) {
		unsigned char ch = (unsigned char)*str;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

void smi_print_json(const struct smi *s, bool compact)
{
	const char *nl = compact ? "" : "\n", *in1 = compact ? "" : "  ", *in2 = compact ? "" : "    ";

	printf("{%s%s\"KMD_version\": ", nl, in1);
	json_string(s->emulated ? "emulated" : smi_kmd_version());
	printf(",%s%s\"devices\": [", nl, in1);
	for (unsigned int i = 0; i < s->nnpus; i++) {
		const struct npu *n = &s->npus[i];

		printf("%s%s%s{\"npu\": %u, \"name\": ", i ? "," : "", nl, in2, n->index);
		json_string(n->name);
		printf(", \"device\": ");
		json_string(n->device);
		printf(", \"node\": ");
		json_string(n->node);
		printf(", \"bus_id\": ");
		json_string(n->bus_id);
		printf(", \"temperature_c\": %.1f, \"power_w\": %.2f, \"perf_state\": \"%s\", \"status\": ",
		       n->temp_c, n->power_w, smi_perf_state(n->status));
		json_string(n->status);
		printf(", \"memory\": {\"used\": %llu, \"total\": %llu}, \"utilization\": %u, \"numa_node\": %d, \"resets\": %lu, \"busy_time_ns\": %llu, \"isa_version\": ",
		       (unsigned long long)n->mem_used, (unsigned long long)n->mem_total,
		       n->util, n->numa_node, n->resets, (unsigned long long)n->busy_ns);
		json_string(n->isa);
		printf(", \"cpu_variant\": ");
		json_string(n->cpu_variant);
		printf("}");
	}
	printf("%s%s],%s%s\"contexts\": [", s->nnpus ? nl : "", s->nnpus ? in1 : "", nl, in1);
	for (unsigned int i = 0; i < s->nctxs; i++) {
		const struct context *c = &s->ctxs[i];

		printf("%s%s%s{\"npu\": %u, \"pid\": %ld, \"ctx\": %llu, \"process\": ",
		       i ? "," : "", nl, in2, c->npu, c->pid, c->ctx);
		json_string(c->comm);
		printf(", \"queues\": %u, \"device_memory\": %llu, \"host_memory\": %llu}",
		       c->queues, (unsigned long long)c->device_mem,
		       (unsigned long long)c->host_mem);
	}
	printf("%s%s]%s}\n", s->nctxs ? nl : "", s->nctxs ? in1 : "", nl);
}

static void csv_field(const char *str)
{
	if (strpbrk(str, ",\"\n")) {
		putchar('"');
		for (; *str; str++) {
			if (*str == '"')
				putchar('"');
			putchar(*str);
		}
		putchar('"');
	} else {
		fputs(str, stdout);
	}
}

void smi_print_csv(const struct smi *s)
{
	puts("npu,name,device,bus_id,temperature_c,power_w,perf_state,status,memory_used,memory_total,utilization");
	for (unsigned int i = 0; i < s->nnpus; i++) {
		const struct npu *n = &s->npus[i];

		printf("%u,", n->index);
		csv_field(n->name);
		printf(",%s,", n->device);
		csv_field(n->bus_id);
		printf(",%.1f,%.2f,%s,%s,%llu,%llu,%u\n", n->temp_c, n->power_w,
		       smi_perf_state(n->status), n->status, (unsigned long long)n->mem_used,
		       (unsigned long long)n->mem_total, n->util);
	}
	if (s->nctxs) {
		puts("");
		puts("npu,pid,ctx,process,queues,device_memory,host_memory");
		for (unsigned int i = 0; i < s->nctxs; i++) {
			const struct context *c = &s->ctxs[i];

			printf("%u,%ld,%llu,", c->npu, c->pid, c->ctx);
			csv_field(c->comm);
			printf(",%u,%llu,%llu\n", c->queues, (unsigned long long)c->device_mem,
			       (unsigned long long)c->host_mem);
		}
	}
}
