// SPDX-License-Identifier: MIT
/* rbln-diag's output: a table (with the device->device matrix) or JSON. */
#include <math.h>
#include <stdio.h>

#include <json-c/json.h>

#include "diag.h"

static void device_name(int device, char *out, size_t len)
{
	if (device < 0)
		snprintf(out, len, "all");
	else
		snprintf(out, len, "%d", device);
}

void diag_print_table(const struct diag *d, const char *backend)
{
	unsigned int failed = 0;

	printf("rbln-diag: level %s, %u device%s, %s backend\n\n", d->level->name, d->n,
	       d->n == 1 ? "" : "s", backend);
	printf("%-6s %-11s %-6s %12s  %s\n", "NPU", "check", "result", "figure", "detail");
	for (unsigned int i = 0; i < d->num_results; i++) {
		const struct diag_result *r = &d->results[i];
		char dev[16], fig[32] = "-";

		device_name(r->device, dev, sizeof(dev));
		if (!isnan(r->value))
			snprintf(fig, sizeof(fig), "%.1f %s", r->value, r->unit);
		printf("%-6s %-11s %-6s %12s  %s\n", dev, r->check, r->pass ? "PASS" : "FAIL", fig,
		       r->detail);
		failed += !r->pass;
	}
	if (d->n > 1 && d->p2p_gbps) {
		printf("\ndevice -> device copy bandwidth, GB/s (row: source, column: destination)\n");
		printf("%6s", "");
		for (unsigned int b = 0; b < d->n; b++)
			printf(" %6u", d->hw[b]);
		printf("\n");
		for (unsigned int a = 0; a < d->n; a++) {
			printf("%6u", d->hw[a]);
			for (unsigned int b = 0; b < d->n; b++)
				if (a == b || isnan(d->p2p_gbps[a][b]))
					printf(" %6s", "-");
				else
					printf(" %6.1f", d->p2p_gbps[a][b]);
			printf("\n");
		}
	}
	printf("\n%u of %u checks passed: %s\n", d->num_results - failed, d->num_results,
	       failed ? "FAIL" : "PASS");
}

static struct json_object *number(double v)
{
	return isnan(v) ? NULL : json_object_new_double(v);
}

void diag_print_json(const struct diag *d, const char *backend)
{
	struct json_object *root = json_object_new_object(), *arr = json_object_new_array();
	unsigned int failed = 0;

	json_object_object_add(root, "level", json_object_new_string(d->level->name));
	json_object_object_add(root, "backend", json_object_new_string(backend));
	for (unsigned int i = 0; i < d->num_results; i++) {
		const struct diag_result *r = &d->results[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "check", json_object_new_string(r->check));
		json_object_object_add(o, "npu", r->device < 0 ? NULL : json_object_new_int(r->device));
		json_object_object_add(o, "pass", json_object_new_boolean(r->pass));
		json_object_object_add(o, "value", number(r->value));
		json_object_object_add(o, "unit", json_object_new_string(r->unit));
		json_object_object_add(o, "detail", json_object_new_string(r->detail));
		json_object_array_add(arr, o);
		failed += !r->pass;
	}
	json_object_object_add(root, "checks", arr);
	if (d->n > 1 && d->p2p_gbps) {
		struct json_object *m = json_object_new_array();

		for (unsigned int a = 0; a < d->n; a++) {
			struct json_object *row = json_object_new_array();

			for (unsigned int b = 0; b < d->n; b++)
				json_object_array_add(row, a == b ? NULL : number(d->p2p_gbps[a][b]));
			json_object_array_add(m, row);
		}
		json_object_object_add(root, "p2p_gbps", m);
	}
	json_object_object_add(root, "passed", json_object_new_int((int)(d->num_results - failed)));
	json_object_object_add(root, "failed", json_object_new_int((int)failed));
	json_object_object_add(root, "result", json_object_new_string(failed ? "FAIL" : "PASS"));
	printf("%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_SPACED));
	json_object_put(root);
}
