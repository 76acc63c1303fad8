// SPDX-License-Identifier: MIT
/*
 * Prints the CDI spec rbln-cdi builds for NPUs described on the command
 * line, so that the kernel-device form of the spec is tested on machines
 * without rbln.ko:
 *   cdi_spec_dump VERSION yaml|json HW:NODE:SYSFS_DIR...
 * (an empty NODE describes an emulated device).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdi_spec.h"
#include "cdi_yaml.h"

int main(int argc, char **argv)
{
	struct rbln_cdi_options opt = {
		.kind = RBLN_CDI_DEFAULT_KIND, .generator = "cdi_spec_dump",
	};
	struct rbln_cdi_npu npus[16] = { 0 };
	unsigned int n = 0;
	const char *err = "";

	if (argc < 4 || argc - 3 > 16) {
		fprintf(stderr, "usage: cdi_spec_dump VERSION yaml|json HW:NODE:SYSFS...\n");
		return 2;
	}
	opt.version = argv[1];
	for (int i = 3; i < argc; i++, n++) {
		char *hw = argv[i], *node = strchr(hw, ':'), *sysfs = node ? strchr(node + 1, ':') : NULL;

		if (!sysfs) {
			fprintf(stderr, "cdi_spec_dump: '%s' is not HW:NODE:SYSFS\n", argv[i]);
			return 2;
		}
		*node++ = '\0';
		*sysfs++ = '\0';
		npus[n].hw_index = (unsigned int)strtoul(hw, NULL, 10);
		snprintf(npus[n].node, sizeof(npus[n].node), "%s", node);
		snprintf(npus[n].sysfs_dir, sizeof(npus[n].sysfs_dir), "%s", sysfs);
		opt.emulated = !node[0];
	}
	struct json_object *spec = rbln_cdi_spec_build(&opt, npus, n);
	int rc = 0;

	if (strcmp(argv[2], "yaml") == 0)
		rc = rbln_cdi_write_yaml(stdout, spec, &err);
	else
		printf("%s\n", json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PRETTY));
	json_object_put(spec);
	if (rc)
		fprintf(stderr, "cdi_spec_dump: %s\n", err);
	return rc ? 1 : 0;
}
