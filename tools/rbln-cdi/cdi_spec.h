/* SPDX-License-Identifier: MIT */
/*
 * cdi_spec.h - the CDI (Container Device Interface) spec of the rbln NPUs,
 * built as a json-c object: one CDI device per NPU and "all".
 */
#ifndef RBLN_CDI_SPEC_H
#define RBLN_CDI_SPEC_H

#include <stdbool.h>

#include <json-c/json.h>

#define RBLN_CDI_DEFAULT_KIND	"rebellions.ai/npu"

/**
 * struct rbln_cdi_npu - one NPU as the spec describes it
 * @hw_index: N of /dev/rblnN (the device's own index)
 * @node: its accel node on the host ("/dev/accel/accelM"); empty for an
 *        emulated device, which has no node
 * @sysfs_dir: its device directory in sysfs (resolved), or empty
 */
struct rbln_cdi_npu {
	unsigned int hw_index;
	char node[64];
	char sysfs_dir[256];
};

/**
 * struct rbln_cdi_options - what the spec is for
 * @kind: "vendor/class" of the devices
 * @version: cdiVersion to write ("0.5.0" or newer)
 * @emulated: the devices are libnpu's emulated ones (selected by
 *            environment, no device nodes)
 * @generator: name and version recorded in the spec's annotations
 */
struct rbln_cdi_options {
	const char *kind;
	const char *version;
	bool emulated;
	const char *generator;
};

/* Checks a kind ("vendor.tld/class") and a version; NULL when valid, else why not. */
const char *rbln_cdi_check_kind(const char *kind);
const char *rbln_cdi_check_version(const char *version);

/* The spec for @n NPUs (exits with status 2 when memory runs out). */
struct json_object *rbln_cdi_spec_build(const struct rbln_cdi_options *opt,
					const struct rbln_cdi_npu *npus, unsigned int n);

#endif
