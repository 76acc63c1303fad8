// SPDX-License-Identifier: GPL-2.0-only
/*
 * --query FIELD,... and --query-processes FIELD,...: chosen fields as CSV,
 * one line per device (or per context), for scripts, as nvidia-smi's
 * --query-gpu with --format=csv[,noheader][,nounits].
 */
#include <stdio.h>
#include <string.h>

#include "smi.h"

enum {
	F_INDEX, F_NAME, F_DEVICE, F_NODE, F_BUS_ID, F_STATUS, F_PSTATE, F_TEMP, F_POWER,
	F_MEM_USED, F_MEM_TOTAL, F_MEM_FREE, F_UTIL, F_NUMA, F_RESETS, F_BUSY, F_ISA,
	F_VARIANT, F_DEVICE_COUNT,
	P_NPU = 0, P_PID, P_PROCESS, P_CTX, P_QUEUES, P_DEVMEM, P_HOSTMEM, P_COUNT,
};

struct field {
	const char *name;
	const char *unit;	/* shown after the header name and the value, "" none */
	const char *what;
};

static const struct field device_fields[F_DEVICE_COUNT] = {
	[F_INDEX] = { "index", "", "NPU index N (/dev/rblnN)" },
	[F_NAME] = { "name", "", "product name" },
	[F_DEVICE] = { "device", "", "rblnN" },
	[F_NODE] = { "node", "", "device node (/dev/accel/accelM, emul:N)" },
	[F_BUS_ID] = { "bus_id", "", "bus id" },
	[F_STATUS] = { "status", "", "READY, BUSY, INIT or FAULT" },
	[F_PSTATE] = { "pstate", "", "performance state (P0 busy, P14 idle)" },
	[F_TEMP] = { "temperature", "C", "modeled temperature" },
	[F_POWER] = { "power.draw", "W", "modeled power draw" },
	[F_MEM_USED] = { "memory.used", "MiB", "device memory in use" },
	[F_MEM_TOTAL] = { "memory.total", "MiB", "device memory capacity" },
	[F_MEM_FREE] = { "memory.free", "MiB", "capacity not in use" },
	[F_UTIL] = { "utilization", "%", "busy share of the last second" },
	[F_NUMA] = { "numa_node", "", "NUMA node (-1 none)" },
	[F_RESETS] = { "resets", "", "device resets since load" },
	[F_BUSY] = { "busy_time", "ms", "time spent running jobs" },
	[F_ISA] = { "isa_version", "", "command-stream ISA version" },
	[F_VARIANT] = { "cpu_variant", "", "CPU variant of the compute kernels" },
};

static const struct field process_fields[P_COUNT] = {
	[P_NPU] = { "npu", "", "NPU index" },
	[P_PID] = { "pid", "", "process id" },
	[P_PROCESS] = { "process", "", "process name" },
	[P_CTX] = { "ctx", "", "DRM client id" },
	[P_QUEUES] = { "queues", "", "queues of the context" },
	[P_DEVMEM] = { "device_memory", "MiB", "device memory of the context" },
	[P_HOSTMEM] = { "host_memory", "MiB", "host-visible memory of the context" },
};

int smi_query_parse(struct smi_query *q, const char *fields, bool processes)
{
	const struct field *table = processes ? process_fields : device_fields;
	unsigned int count = processes ? P_COUNT : F_DEVICE_COUNT;
	const char *p = fields;

	q->processes = processes;
	q->nfields = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		unsigned int k;

		for (k = 0; k < count; k++)
			if (strlen(table[k].name) == len && !strncmp(p, table[k].name, len))
				break;
		if (k == count || q->nfields == 32) {
			fprintf(stderr, "rbln-smi: %s: unknown field '%.*s' (rbln-smi "
				"--help-query lists them)\n", processes ? "--query-processes" :
				"--query", (int)len, p);
			return -1;
		}
		q->fields[q->nfields++] = (int)k;
		p += len;
		if (*p == ',' && *++p == '\0')
			break;
	}
	if (!q->nfields) {
		fprintf(stderr, "rbln-smi: --query names no field\n");
		return -1;
	}
	return 0;
}

void smi_query_list_fields(FILE *out)
{
	fprintf(out, "Fields of --query (one line per device):\n");
	for (unsigned int k = 0; k < F_DEVICE_COUNT; k++)
		fprintf(out, "  %-14s %s%s%s%s\n", device_fields[k].name, device_fields[k].what,
			device_fields[k].unit[0] ? " (" : "", device_fields[k].unit,
			device_fields[k].unit[0] ? ")" : "");
	fprintf(out, "Fields of --query-processes (one line per context):\n");
	for (unsigned int k = 0; k < P_COUNT; k++)
		fprintf(out, "  %-14s %s%s%s%s\n", process_fields[k].name, process_fields[k].what,
			process_fields[k].unit[0] ? " (" : "", process_fields[k].unit,
			process_fields[k].unit[0] ? ")" : "");
}

static void value(char *out, size_t len, const struct npu *n, int f)
{
	switch (f) {
	case F_INDEX: snprintf(out, len, "%u", n->index); break;
	case F_NAME: snprintf(out, len, "%s", n->name); break;
	case F_DEVICE: snprintf(out, len, "%s", n->device); break;
	case F_NODE: snprintf(out, len, "%s", n->node); break;
	case F_BUS_ID: snprintf(out, len, "%s", n->bus_id); break;
	case F_STATUS: snprintf(out, len, "%s", n->status); break;
	case F_PSTATE: snprintf(out, len, "%s", smi_perf_state(n->status)); break;
	case F_TEMP: snprintf(out, len, "%.0f", n->temp_c); break;
	case F_POWER: snprintf(out, len, "%.2f", n->power_w); break;
	case F_MEM_USED: snprintf(out, len, "%llu", (unsigned long long)(n->mem_used >> 20)); break;
	case F_MEM_TOTAL: snprintf(out, len, "%llu", (unsigned long long)(n->mem_total >> 20)); break;
	case F_MEM_FREE:
		snprintf(out, len, "%llu", (unsigned long long)((n->mem_total - n->mem_used) >> 20));
		break;
	case F_UTIL: snprintf(out, len, "%u", n->util); break;
	case F_NUMA: snprintf(out, len, "%d", n->numa_node); break;
	case F_RESETS: snprintf(out, len, "%lu", n->resets); break;
	case F_BUSY: snprintf(out, len, "%llu", (unsigned long long)(n->busy_ns / 1000000)); break;
	case F_ISA: snprintf(out, len, "%s", n->isa); break;
	default: snprintf(out, len, "%s", n->cpu_variant); break;
	}
}

static void process_value(char *out, size_t len, const struct context *c, int f)
{
	switch (f) {
	case P_NPU: snprintf(out, len, "%u", c->npu); break;
	case P_PID: snprintf(out, len, "%ld", c->pid); break;
	case P_PROCESS: snprintf(out, len, "%s", c->comm); break;
	case P_CTX: snprintf(out, len, "%llu", c->ctx); break;
	case P_QUEUES: snprintf(out, len, "%u", c->queues); break;
	case P_DEVMEM: snprintf(out, len, "%llu", (unsigned long long)(c->device_mem >> 20)); break;
	default: snprintf(out, len, "%llu", (unsigned long long)(c->host_mem >> 20)); break;
	}
}

/* A CSV cell: quoted when it holds a comma or a quote. */
static void cell(const char *v, const char *unit, bool first)
{
	if (!first)
		fputs(", ", stdout);
	if (strpbrk(v, ",\"\n")) {
		putchar('"');
		for (; *v; v++)
			printf(*v == '"' ? "\"\"" : "%c", *v);
		putchar('"');
	} else {
		fputs(v, stdout);
	}
	if (unit && unit[0])
		printf(" %s", unit);
}

void smi_query_print(const struct smi *s, const struct smi_query *q, bool with_header)
{
	const struct field *table = q->processes ? process_fields : device_fields;
	unsigned int rows = q->processes ? s->nctxs : s->nnpus;
	char v[96], head[48];

	if (q->header && with_header) {
		for (unsigned int k = 0; k < q->nfields; k++) {
			const struct field *f = &table[q->fields[k]];

			snprintf(head, sizeof(head), q->units && f->unit[0] ? "%s [%s]" : "%s",
				 f->name, f->unit);
			cell(head, NULL, k == 0);
		}
		putchar('\n');
	}
	for (unsigned int r = 0; r < rows; r++) {
		for (unsigned int k = 0; k < q->nfields; k++) {
			int f = q->fields[k];

			if (q->processes)
				process_value(v, sizeof(v), &s->ctxs[r], f);
			else
				value(v, sizeof(v), &s->npus[r], f);
			cell(v, q->units ? table[f].unit : NULL, k == 0);
		}
		putchar('\n');
	}
}
