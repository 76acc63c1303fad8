// SPDX-License-Identifier: MIT
/*
 * npu-conformance: the libnpu conformance suite, one cmocka group so that
 * the TAP output has a single plan. Run by meson with the emulated
 * backend; runs unchanged by hand or in the VM with RBLN_BACKEND=kernel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

int main(void)
{
	const struct {
		const struct CMUnitTest *tests;
		size_t count;
	} groups[] = {
		{ conf_enum_tests, conf_enum_count },
		{ conf_memory_tests, conf_memory_count },
		{ conf_exec_tests, conf_exec_count },
		{ conf_concurrency_tests, conf_concurrency_count },
		{ conf_sync_tests, conf_sync_count },
		{ conf_invalid_tests, conf_invalid_count },
		{ conf_compute_tests, conf_compute_count },
		{ conf_collective_tests, conf_collective_count },
		{ conf_leak_tests, conf_leak_count },
	};
	size_t total = 0;

	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		total += groups[g].count;

	struct CMUnitTest *all = calloc(total, sizeof(*all));

	if (!all)
		return 1;
	total = 0;
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		memcpy(all + total, groups[g].tests,
		       groups[g].count * sizeof(*all));
		total += groups[g].count;
	}

	conf_seed();
	int failed = _cmocka_run_group_tests("conformance", all, total, NULL, NULL);

	free(all);
	return failed ? 1 : 0;
}
