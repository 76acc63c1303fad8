// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_sysfs.c - per-device attributes, modeled on the real product's
 * fields, on the platform device (/sys/class/accel/accelN/device/):
 *
 *   index        N of /dev/rblnN
 *   status       READY, BUSY, INIT or FAULT
 *   mem_used     bytes of device memory in use (all clients)
 *   mem_total    device memory capacity in bytes
 *   utilization  percent of the last 1-2 s with a job executing
 *   busy_time    nanoseconds with a job executing, since the device appeared
 *   resets       hung-job recoveries so far
 *   numa_node    NUMA node of the device's engines, -1 if none
 *   temperature  modeled die temperature, millidegrees Celsius
 *   power_draw   modeled board power, microwatts
 *   isa_version  command-stream ISA version, "major.minor"
 *   name         product name
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/device.h>
#include <linux/sysfs.h>

#include "rbln_device.h"
#include "rbln_drv.h"
#include "rbln_isa.h"
#include "rbln_model.h"

static struct rbln_device *rbln_dev(struct device *dev)
{
	return dev_get_drvdata(dev);
}

static ssize_t index_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%u\n", rbln_dev(dev)->index);
}
static DEVICE_ATTR_RO(index);

static ssize_t status_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  rbln_status_name(rbln_device_status(rbln_dev(dev))));
}
static DEVICE_ATTR_RO(status);

static ssize_t mem_used_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  atomic64_read(&rbln_dev(dev)->mem_used));
}
static DEVICE_ATTR_RO(mem_used);

static ssize_t mem_total_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", rbln_dev(dev)->mem_total);
}
static DEVICE_ATTR_RO(mem_total);

static ssize_t utilization_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", rbln_device_utilization(rbln_dev(dev)));
}
static DEVICE_ATTR_RO(utilization);

static ssize_t busy_time_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", rbln_device_busy_ns(rbln_dev(dev)));
}
static DEVICE_ATTR_RO(busy_time);

static ssize_t resets_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&rbln_dev(dev)->resets));
}
static DEVICE_ATTR_RO(resets);

static ssize_t numa_node_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", rbln_dev(dev)->numa_node);
}
static DEVICE_ATTR_RO(numa_node);

static ssize_t temperature_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", rbln_device_temperature(rbln_dev(dev)));
}
static DEVICE_ATTR_RO(temperature);

static ssize_t power_draw_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", rbln_device_power(rbln_dev(dev)));
}
static DEVICE_ATTR_RO(power_draw);

static ssize_t isa_version_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u.%u\n", RBLN_ISA_VERSION_MAJOR,
			  RBLN_ISA_VERSION_MINOR);
}
static DEVICE_ATTR_RO(isa_version);

static ssize_t name_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", RBLN_PRODUCT_NAME);
}
static DEVICE_ATTR_RO(name);

/*
 * The CPU variant of the compute kernels that the device's next commands
 * run with: global to the model (module parameter cpu_variant), shown per
 * device for tools that read only the device's directory.
 */
static ssize_t cpu_variant_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", rbln_model_cpu_name(rbln_model_cpu()));
}
static DEVICE_ATTR_RO(cpu_variant);

static struct attribute *rbln_dev_attrs[] = {
	&dev_attr_index.attr,
	&dev_attr_status.attr,
	&dev_attr_mem_used.attr,
	&dev_attr_mem_total.attr,
	&dev_attr_utilization.attr,
	&dev_attr_busy_time.attr,
	&dev_attr_resets.attr,
	&dev_attr_numa_node.attr,
	&dev_attr_temperature.attr,
	&dev_attr_power_draw.attr,
	&dev_attr_isa_version.attr,
	&dev_attr_name.attr,
	&dev_attr_cpu_variant.attr,
	NULL
};

static const struct attribute_group rbln_dev_group = {
	.attrs = rbln_dev_attrs,
};

const struct attribute_group *rbln_dev_groups[] = {
	&rbln_dev_group,
	NULL
};
