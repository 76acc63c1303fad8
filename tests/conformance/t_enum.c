// SPDX-License-Identifier: MIT
/*
 * Enumeration, device information, backend choice and RBLN_DEVICES.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

static void check_info(const struct npu_device_info *info, unsigned int index,
		       unsigned int visible)
{
	assert_int_equal(info->index, index);
	assert_true(info->device_count >= visible);
	assert_true(info->hw_index < info->device_count);
	assert_non_null(memchr(info->name, '\0', sizeof(info->name)));
	assert_true(strlen(info->name) > 0);
	assert_non_null(memchr(info->path, '\0', sizeof(info->path)));
	assert_true(strncmp(info->path, "/dev/", 5) == 0 ||
		    strncmp(info->path, "emul:", 5) == 0);
	assert_true(info->mem_total > 0);
	assert_true(info->mem_used <= info->mem_total);
	assert_true(info->num_engines >= 1);
	assert_true(info->numa_node >= -1);
	assert_int_equal(info->isa_major, RBLN_ISA_VERSION_MAJOR);
	/* A device runs streams of its minor version and older. */
	assert_int_equal(info->isa_minor, RBLN_ISA_VERSION_MINOR);
	uint64_t needed = NPU_CAP_SEMAPHORES | NPU_CAP_PEER_BUFFERS |
			  NPU_CAP_COMPUTE_F32;

	assert_int_equal(info->capabilities & needed, needed);
	assert_true(info->max_buffer_size > 0);
	assert_true(info->max_buffer_size <= info->mem_total);
	assert_true(info->max_submit_buffers >= 8);
	assert_true(info->max_cmd_size >= RBLN_ISA_CMD_MAX_SIZE);
	assert_int_equal(info->max_cmd_size % RBLN_ISA_ALIGN, 0);
}

static void test_enumeration(void **state)
{
	struct fixture *fx = *state;
	unsigned int expected = conf_expected_devices();
	int seen[CONF_MAX_DEVICES * 4] = { 0 };

	assert_int_equal(npu_device_count(fx->ctx), expected);
	for (unsigned int i = 0; i < fx->count; i++) {
		struct npu_device_info info, unopened;

		assert_ok(npu_device_query(fx->dev[i], &info));
		check_info(&info, i, fx->count);
		assert_ok(npu_device_info_get(fx->ctx, i, &unopened));
		check_info(&unopened, i, fx->count);
		assert_int_equal(unopened.hw_index, info.hw_index);
		assert_string_equal(unopened.name, info.name);
		assert_string_equal(unopened.path, info.path);
		assert_int_equal(unopened.mem_total, info.mem_total);
		assert_int_equal(unopened.numa_node, info.numa_node);
		/* Every visible device is a different device. */
		assert_true(info.hw_index < CONF_MAX_DEVICES * 4);
		assert_int_equal(seen[info.hw_index]++, 0);
		assert_ptr_equal(npu_device_context(fx->dev[i]), fx->ctx);
		print_message("# device %u: %s %s hw %u/%u, %llu MiB, %u engines, node %d, ISA %u.%u\n",
			      i, info.name, info.path, info.hw_index,
			      info.device_count,
			      (unsigned long long)(info.mem_total >> 20),
			      info.num_engines, info.numa_node, info.isa_major,
			      info.isa_minor);
	}

	npu_device *dev = NULL;

	assert_npu(npu_device_open(fx->ctx, fx->count, &dev), -ENODEV);
	assert_null(dev);
	struct npu_device_info info;

	assert_npu(npu_device_info_get(fx->ctx, fx->count, &info), -ENODEV);
}

static void test_backend_choice(void **state)
{
	struct fixture *fx = *state;
	const char *env = getenv("RBLN_BACKEND");
	enum npu_backend kind = npu_context_backend(fx->ctx);

	assert_true(kind == NPU_BACKEND_KERNEL || kind == NPU_BACKEND_EMUL);
	if (env && *env)
		assert_string_equal(npu_backend_name(kind), env);
	assert_string_equal(npu_backend_name(NPU_BACKEND_KERNEL), "kernel");
	assert_string_equal(npu_backend_name(NPU_BACKEND_EMUL), "emul");

	/* An explicit request for the backend in use gives the same devices. */
	struct npu_context_options opts = {
		.struct_size = sizeof(opts), .backend = kind,
	};
	npu_context *ctx;

	assert_ok(npu_context_create(&opts, &ctx));
	assert_int_equal(npu_context_backend(ctx), kind);
	assert_int_equal(npu_device_count(ctx), fx->count);
	npu_context_destroy(ctx);

	setenv("RBLN_BACKEND", "quantum", 1);
	assert_npu(npu_context_create(NULL, &ctx), -EINVAL);
	assert_detail_contains("RBLN_BACKEND");
	if (env)
		setenv("RBLN_BACKEND", env, 1);
	else
		unsetenv("RBLN_BACKEND");
}

/* A context seeing @spec; its hardware indices go to @hw. */
static int context_with(const char *spec, unsigned int *hw, unsigned int max,
			unsigned int *count)
{
	struct npu_context_options opts = {
		.struct_size = sizeof(opts), .devices = spec,
	};
	npu_context *ctx;
	int err = npu_context_create(&opts, &ctx);

	if (err)
		return err;
	*count = npu_device_count(ctx);
	for (unsigned int i = 0; i < *count && i < max; i++) {
		struct npu_device_info info;

		assert_ok(npu_device_info_get(ctx, i, &info));
		hw[i] = info.hw_index;
	}
	npu_context_destroy(ctx);
	return 0;
}

static void test_device_selection(void **state)
{
	struct fixture *fx = *state;
	struct npu_device_info info;
	unsigned int hw[CONF_MAX_DEVICES];
	unsigned int count;
	char spec[64];

	assert_ok(npu_device_info_get(fx->ctx, 0, &info));
	unsigned int total = info.device_count;

	if (total < 3)
		skip();

	/* Order is the order given, blanks are fine. */
	snprintf(spec, sizeof(spec), " %u , 0 ", total - 1);
	assert_ok(context_with(spec, hw, CONF_MAX_DEVICES, &count));
	assert_int_equal(count, 2);
	assert_int_equal(hw[0], total - 1);
	assert_int_equal(hw[1], 0);

	assert_ok(context_with("0 - 2", hw, CONF_MAX_DEVICES, &count));
	assert_int_equal(count, 3);
	for (unsigned int i = 0; i < 3; i++)
		assert_int_equal(hw[i], i);

	assert_ok(context_with("2,0-1", hw, CONF_MAX_DEVICES, &count));
	assert_int_equal(count, 3);
	assert_int_equal(hw[0], 2);
	assert_int_equal(hw[1], 0);
	assert_int_equal(hw[2], 1);

	assert_ok(context_with("", hw, CONF_MAX_DEVICES, &count));
	assert_int_equal(count, 0);

	/* The environment variable works like the option. */
	const char *saved = getenv("RBLN_DEVICES");
	char *saved_copy = saved ? strdup(saved) : NULL;
	npu_context *ctx;

	setenv("RBLN_DEVICES", "1", 1);
	assert_ok(npu_context_create(NULL, &ctx));
	assert_int_equal(npu_device_count(ctx), 1);
	assert_ok(npu_device_info_get(ctx, 0, &info));
	assert_int_equal(info.hw_index, 1);
	npu_context_destroy(ctx);
	setenv("RBLN_DEVICES", "1,x", 1);
	assert_npu(npu_context_create(NULL, &ctx), -EINVAL);
	assert_detail_contains("RBLN_DEVICES");
	if (saved_copy)
		setenv("RBLN_DEVICES", saved_copy, 1);
	else
		unsetenv("RBLN_DEVICES");
	free(saved_copy);

	/* Mistakes are errors, each with a message saying what is wrong. */
	static const char *const malformed[] = {
		"0,", ",0", "a", "0-", "-1", "1-0", "0,,1", "0 1", "0,0",
		"0-2,1", "1.5", "0x1",
	};

	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		int err = context_with(malformed[i], hw, CONF_MAX_DEVICES, &count);

		if (err != -EINVAL)
			print_error("\"%s\" gave %d\n", malformed[i], err);
		assert_int_equal(err, -EINVAL);
		assert_true(strlen(npu_error_detail()) > 0);
	}
	snprintf(spec, sizeof(spec), "%u", total);
	assert_npu(context_with(spec, hw, CONF_MAX_DEVICES, &count), -EINVAL);
	assert_detail_contains("out of range");
	assert_npu(context_with("0,1,0", hw, CONF_MAX_DEVICES, &count), -EINVAL);
	assert_detail_contains("twice");
}

static void test_context_options(void **state)
{
	(void)state;
	npu_context *ctx = (npu_context *)1;
	struct npu_context_options opts = { .struct_size = 0 };

	assert_npu(npu_context_create(NULL, NULL), -EINVAL);
	assert_npu(npu_context_create(&opts, &ctx), -EINVAL);
	assert_null(ctx);
	opts.struct_size = sizeof(opts);
	opts.backend = (enum npu_backend)7;
	assert_npu(npu_context_create(&opts, &ctx), -EINVAL);

	/* A newer caller's larger struct is fine while the extra is zero. */
	struct {
		struct npu_context_options base;
		uint64_t future;
	} grown = { .base = { .struct_size = sizeof(grown) }, .future = 0 };

	assert_ok(npu_context_create(&grown.base, &ctx));
	npu_context_destroy(ctx);
	grown.future = 1;
	assert_true(npu_context_create(&grown.base, &ctx) < 0);

	assert_int_equal(npu_device_count(NULL), 0);
	npu_context_destroy(NULL);
}

const struct CMUnitTest conf_enum_tests[] = {
	cmocka_unit_test_setup_teardown(test_enumeration, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_backend_choice, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_device_selection, fixture_setup,
					fixture_teardown),
	cmocka_unit_test(test_context_options),
};
const size_t conf_enum_count = sizeof(conf_enum_tests) / sizeof(conf_enum_tests[0]);
