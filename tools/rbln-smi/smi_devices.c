// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding the devices: rbln.ko's through libudev (accel nodes whose parent
 * device is bound to the rbln driver; their attributes are the driver's
 * sysfs files), else libnpu's emulated devices as this process would get
 * them (RBLN_DEVICES, and the RBLN_DEVICE_N variables a CDI spec sets in a
 * container, select among them as they do for every libnpu program).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include <libnpu.h>
#include <libudev.h>

#include "smi.h"

void *smi_realloc(void *p, size_t size)
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

static int by_index(const void *a, const void *b)
{
	const struct npu *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

static struct npu *new_npu(struct smi *s)
{
	s->npus = smi_realloc(s->npus, (s->nnpus + 1) * sizeof(*s->npus));
	memset(&s->npus[s->nnpus], 0, sizeof(s->npus[0]));
	return &s->npus[s->nnpus++];
}

void smi_kernel_devices(struct smi *s)
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
		n = new_npu(s);
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
		snprintf(n->cpu_variant, sizeof(n->cpu_variant), "%s", attr(p, "cpu_variant"));
		udev_device_unref(d);
	}
	udev_enumerate_unref(en);
	udev_unref(udev);
	if (s->nnpus > 1)	/* qsort() of no array (NULL) is undefined */
		qsort(s->npus, s->nnpus, sizeof(*s->npus), by_index);
}

void smi_emulated_devices(struct smi *s)
{
	struct npu_context_options opt = { .struct_size = sizeof(opt), .backend = NPU_BACKEND_EMUL };
	const char *variant;
	npu_context *ctx;
	int err = npu_context_create(&opt, &ctx);

	if (err) {
		fprintf(stderr, "rbln-smi: emulated devices: %s (%s)\n", npu_strerror(err),
			npu_error_detail());
		return;
	}
	s->emulated = true;
	/* What the kernels run: RBLN_CPU_VARIANT's choice, or auto's. */
	variant = npu_context_cpu_variant(ctx);
	for (unsigned int i = 0; i < npu_device_count(ctx); i++) {
		struct npu_device_info info;
		struct npu *n;

		if (npu_device_info_get(ctx, i, &info))
			continue;
		n = new_npu(s);
		n->index = info.hw_index;
		snprintf(n->name, sizeof(n->name), "%s", info.name);
		snprintf(n->device, sizeof(n->device), "rbln%u", info.hw_index);
		snprintf(n->node, sizeof(n->node), "%s", info.path);
		snprintf(n->bus_id, sizeof(n->bus_id), "%s", info.path);
		snprintf(n->status, sizeof(n->status), "READY");
		n->mem_used = info.mem_used;
		n->mem_total = info.mem_total;
		n->numa_node = info.numa_node;
		snprintf(n->isa, sizeof(n->isa), "%u.%u", info.isa_major, info.isa_minor);
		snprintf(n->cpu_variant, sizeof(n->cpu_variant), "%s",
			 variant ? variant : "-");
	}
	npu_context_destroy(ctx);
}

void smi_free(struct smi *s)
{
	free(s->npus);
	free(s->ctxs);
	memset(s, 0, sizeof(*s));
}
