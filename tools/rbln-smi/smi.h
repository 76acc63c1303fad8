/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * smi.h - what rbln-smi knows of the devices and the contexts using them,
 * and the parts that find and print it.
 */
#ifndef RBLN_SMI_H
#define RBLN_SMI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define RBLN_SMI_VERSION	RBLN_VERSION

struct npu {
	unsigned int index;
	char name[64];
	char device[32];	/* rblnN */
	char node[64];		/* /dev/accel/accelM, or emul:N */
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

/**
 * struct smi - one snapshot
 * @npus: devices, by index
 * @nnpus: entries in @npus
 * @ctxs: contexts
 * @nctxs: entries in @ctxs
 * @ctx_from_fdinfo: contexts came from fdinfo (this user's processes)
 * @emulated: the devices are libnpu's emulated ones (no rbln.ko)
 */
struct smi {
	struct npu *npus;
	unsigned int nnpus;
	struct context *ctxs;
	unsigned int nctxs;
	bool ctx_from_fdinfo;
	bool emulated;
};

void *smi_realloc(void *p, size_t size);

/* rbln.ko's devices through libudev and sysfs. */
void smi_kernel_devices(struct smi *s);
/* libnpu's emulated devices, as this process would get them. */
void smi_emulated_devices(struct smi *s);
/* Contexts: debugfs (root), else the fdinfo of the processes this user can see. */
void smi_contexts(struct smi *s);
void smi_free(struct smi *s);

const char *smi_kmd_version(void);
const char *smi_perf_state(const char *status);

void smi_print_table(const struct smi *s);
void smi_print_json(const struct smi *s, bool compact);
void smi_print_csv(const struct smi *s);

/*
 * --query / --query-processes: @fields is the comma list the user gave;
 * returns -1 (message printed) for an unknown field.
 */
struct smi_query {
	bool processes;		/* contexts instead of devices */
	bool header;
	bool units;
	unsigned int nfields;
	int fields[32];
};

int smi_query_parse(struct smi_query *q, const char *fields, bool processes);
void smi_query_print(const struct smi *s, const struct smi_query *q, bool with_header);
void smi_query_list_fields(FILE *out);

#endif
