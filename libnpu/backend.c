// SPDX-License-Identifier: MIT
/*
 * Choosing a backend: an explicit request, else RBLN_BACKEND, else the
 * kernel backend when rbln devices exist and the emulated one otherwise,
 * so that everything runs on any machine without root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npu_common.h"

const char *npu_backend_name(enum npu_backend backend)
{
	switch (backend) {
	case NPU_BACKEND_KERNEL:
		return "kernel";
	case NPU_BACKEND_EMUL:
		return "emul";
	case NPU_BACKEND_AUTO:
		return "auto";
	}
	return "unknown";
}

static int kernel_backend(const struct npu_backend_ops **ops, const char *why)
{
	/* Null until backend_kernel*.c is listed in libnpu/meson.build. */
	if (!&npu_backend_kernel_ops)
		return npu_fail(-ENODEV,
				"%s, but this libnpu was built without the kernel backend; set RBLN_BACKEND=emul to use the emulated devices",
				why);
	*ops = &npu_backend_kernel_ops;
	return 0;
}

int npu_backend_choose(enum npu_backend requested,
		       const struct npu_backend_ops **ops)
{
	if (requested == NPU_BACKEND_AUTO) {
		const char *env = getenv("RBLN_BACKEND");

		if (env && *env) {
			if (strcmp(env, "kernel") == 0)
				requested = NPU_BACKEND_KERNEL;
			else if (strcmp(env, "emul") == 0)
				requested = NPU_BACKEND_EMUL;
			else
				return npu_fail(-EINVAL,
						"RBLN_BACKEND=\"%s\": expected \"kernel\" or \"emul\"",
						env);
		}
	}

	switch (requested) {
	case NPU_BACKEND_KERNEL:
		return kernel_backend(ops, "the kernel backend was requested");
	case NPU_BACKEND_EMUL:
		*ops = &npu_backend_emul_ops;
		return 0;
	case NPU_BACKEND_AUTO:
		break;
	default:
		return npu_fail(-EINVAL, "unknown backend %d", (int)requested);
	}

	struct npu_rbln_node *nodes;
	int found = npu_rbln_nodes(&nodes);

	if (found < 0)
		return found;
	if (found == 0) {
		*ops = &npu_backend_emul_ops;
		return 0;
	}
	char why[128];

	snprintf(why, sizeof(why), "rbln devices exist (%s)", nodes[0].path);
	free(nodes);
	return kernel_backend(ops, why);
}
