// SPDX-License-Identifier: MIT
/*
 * Buffers: capacity accounting, CPU mappings, host memory, export and
 * import, private buffers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "conformance.h"

static uint64_t mem_used(npu_device *dev)
{
	struct npu_device_info info;

	assert_ok(npu_device_query(dev, &info));
	return info.mem_used;
}

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

static void test_capacity(void **state)
{
	struct fixture *fx = *state;
	npu_device *dev = fx->dev[0];
	struct npu_device_info info;

	assert_ok(npu_device_query(dev, &info));
	uint64_t baseline = info.mem_used;
	/* A first buffer makes "free + 1" a size the device could hold. */
	npu_buffer *first = conf_alloc(dev, page_size(), 0);
	uint64_t used = mem_used(dev);

	assert_int_equal(used, baseline + page_size());
	uint64_t free_bytes = info.mem_total - used;
	npu_buffer *rest = NULL;

	assert_npu(npu_buffer_alloc(dev, free_bytes + 1, 0, &rest), -ENOMEM);
	assert_null(rest);
	assert_true(strlen(npu_error_detail()) > 0);
	assert_int_equal(mem_used(dev), used);

	assert_ok(npu_buffer_alloc(dev, free_bytes, 0, &rest));
	assert_int_equal(npu_buffer_size(rest), free_bytes);
	assert_int_equal(mem_used(dev), info.mem_total);

	npu_buffer *more = NULL;

	assert_npu(npu_buffer_alloc(dev, 1, 0, &more), -ENOMEM);
	/* Host buffers are not device memory: they fit in a full device. */
	npu_buffer *host = conf_alloc(dev, 1 << 20, NPU_BUFFER_HOST);

	assert_int_equal(mem_used(dev), info.mem_total);
	/* Another device's capacity is its own. */
	if (fx->count > 1) {
		npu_buffer *other = conf_alloc(fx->dev[1], page_size(), 0);

		npu_buffer_free(other);
	}

	npu_buffer_free(host);
	npu_buffer_free(rest);
	assert_int_equal(mem_used(dev), used);
	npu_buffer_free(first);
	assert_int_equal(mem_used(dev), baseline);
}

static void test_mem_used_tracking(void **state)
{
	struct fixture *fx = *state;
	npu_device *dev = fx->dev[fx->count - 1];
	uint64_t page = page_size();
	const uint64_t sizes[] = { 1, page - 1, page, page + 1, 3 * page + 7,
				   1 << 20 };
	npu_buffer *bufs[6];
	uint64_t baseline = mem_used(dev);
	uint64_t expected = baseline;

	for (size_t i = 0; i < 6; i++) {
		uint64_t rounded = (sizes[i] + page - 1) / page * page;

		bufs[i] = conf_alloc(dev, sizes[i], 0);
		assert_int_equal(npu_buffer_size(bufs[i]), rounded);
		assert_ptr_equal(npu_buffer_device(bufs[i]), dev);
		expected += rounded;
		assert_int_equal(mem_used(dev), expected);
	}
	for (size_t i = 0; i < 6; i++) {
		expected -= npu_buffer_size(bufs[i]);
		npu_buffer_free(bufs[i]);
		assert_int_equal(mem_used(dev), expected);
	}
	assert_int_equal(mem_used(dev), baseline);
}

static void test_map(void **state)
{
	struct fixture *fx = *state;
	const size_t size = 3 * page_size();

	static const uint32_t kinds[] = { 0, NPU_BUFFER_HOST,
					  NPU_BUFFER_PRIVATE };

	for (size_t kind = 0; kind < 3; kind++) {
		npu_buffer *buf = conf_alloc(fx->dev[0], size, kinds[kind]);
		unsigned char *p = conf_map(buf);
		unsigned char *pattern = malloc(size);

		assert_non_null(pattern);
		/* New buffers are zeroed. */
		for (size_t i = 0; i < size; i++)
			assert_int_equal(p[i], 0);
		conf_rand_fill(pattern, size);
		memcpy(p, pattern, size);
		void *again = conf_map(buf);

		assert_ptr_equal(again, p);
		assert_memory_equal(again, pattern, size);
		free(pattern);
		npu_buffer_free(buf);
	}
}

static void test_host_memory(void **state)
{
	struct fixture *fx = *state;
	const size_t size = 5 * page_size() + 3;
	unsigned char *p = npu_host_alloc(fx->dev[0], size);

	assert_non_null(p);
	assert_int_equal((uintptr_t)p % page_size(), 0);
	memset(p, 0xa5, size);
	assert_int_equal(p[size - 1], 0xa5);
	npu_host_free(p, size);

	assert_null(npu_host_alloc(fx->dev[0], 0));
	assert_null(npu_host_alloc(NULL, size));
	npu_host_free(NULL, size);
}

static void test_export_import(void **state)
{
	struct fixture *fx = *state;

	if (fx->count < 2)
		skip();
	npu_device *a = fx->dev[0], *b = fx->dev[1];
	npu_buffer *src = conf_alloc(a, 2 * page_size(), 0);
	int fd = -1;

	assert_ok(npu_buffer_export(src, &fd));
	assert_true(fd >= 0);
	uint64_t b_used = mem_used(b);
	npu_buffer *imported = NULL;

	assert_ok(npu_buffer_import(b, fd, &imported));
	close(fd);
	/* Imports are not charged to the importer. */
	assert_int_equal(mem_used(b), b_used);
	assert_int_equal(npu_buffer_size(imported), npu_buffer_size(src));
	assert_ptr_equal(npu_buffer_device(imported), b);

	/* Both mappings show the same memory. */
	uint32_t *pa = conf_map(src);
	uint32_t *pb = conf_map(imported);

	pa[10] = 0x12345678;
	assert_int_equal(pb[10], 0x12345678);

	/* Device b writes into the import; device a's owner sees it. */
	npu_stream_fill(fx->stream[1], imported, 0, 64, 0xcafef00d);
	conf_run(fx->stream[1], fx->queue[1]);
	assert_int_equal(pa[0], 0xcafef00d);
	assert_int_equal(pa[15], 0xcafef00d);
	assert_int_equal(pa[16], 0);

	/* The import keeps the memory alive after the exporter frees it. */
	npu_buffer_free(src);
	npu_stream_fill(fx->stream[1], imported, 64, 64, 0x0badcafe);
	conf_run(fx->stream[1], fx->queue[1]);
	assert_int_equal(pb[16], 0x0badcafe);
	assert_int_equal(pb[0], 0xcafef00d);
	npu_buffer_free(imported);

	/* npu_buffer_share() is export + import. */
	npu_buffer *orig = conf_alloc(b, page_size(), 0);
	npu_buffer *shared = NULL;

	assert_ok(npu_buffer_share(orig, a, &shared));
	assert_ptr_equal(npu_buffer_device(shared), a);
	((uint32_t *)conf_map(orig))[3] = 77;
	assert_int_equal(((uint32_t *)conf_map(shared))[3], 77);
	npu_buffer_free(shared);
	npu_buffer_free(orig);

	/* Things that are not buffers are refused. */
	npu_buffer *bad = NULL;
	int fds[2];

	assert_npu(npu_buffer_import(b, -1, &bad), -EBADF);
	assert_int_equal(pipe(fds), 0);
	assert_true(npu_buffer_import(b, fds[0], &bad) < 0);
	assert_null(bad);
	close(fds[0]);
	close(fds[1]);
	int memfd = memfd_create("not-an-npu-buffer", 0);

	assert_true(memfd >= 0);
	assert_int_equal(ftruncate(memfd, (off_t)page_size()), 0);
	assert_true(npu_buffer_import(b, memfd, &bad) < 0);
	close(memfd);
}

/*
 * NPU_BUFFER_PRIVATE: device memory like any other (charged, zeroed, seen
 * by the CPU and the device alike), past the 2 MiB of a huge page that the
 * emulated backend aligns it to, and never exported or shared.
 */
static void test_private(void **state)
{
	struct fixture *fx = *state;
	npu_device *dev = fx->dev[0];
	const uint64_t size = (5ULL << 20) + 7;
	uint64_t rounded = (size + page_size() - 1) / page_size() * page_size();
	uint64_t baseline = mem_used(dev);
	npu_buffer *buf = conf_alloc(dev, size, NPU_BUFFER_PRIVATE);
	npu_buffer *plain = conf_alloc(dev, page_size(), 0);
	npu_buffer *shared = NULL;
	uint32_t *p = conf_map(buf), *q = conf_map(plain);
	int fd = 1234;

	assert_int_equal(npu_buffer_size(buf), rounded);
	assert_int_equal(mem_used(dev), baseline + rounded + page_size());
	assert_int_equal(p[0], 0);
	assert_int_equal(p[rounded / 8], 0);
	assert_int_equal(p[rounded / 4 - 1], 0);

	/* The device writes it and reads it like any buffer. */
	npu_stream_fill(fx->stream[0], buf, rounded - 64, 64, 0x600dcafe);
	conf_run(fx->stream[0], fx->queue[0]);
	assert_int_equal(p[rounded / 4 - 1], 0x600dcafe);
	assert_int_equal(p[rounded / 4 - 17], 0);
	p[(3U << 20) / 4] = 0xfeedbeef;
	npu_stream_copy(fx->stream[0], plain, 0, buf, 3U << 20, 16);
	conf_run(fx->stream[0], fx->queue[0]);
	assert_int_equal(q[0], 0xfeedbeef);

	assert_npu(npu_buffer_export(buf, &fd), -EPERM);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(npu_error_detail(), "NPU_BUFFER_PRIVATE"));
	if (fx->count > 1) {
		assert_npu(npu_buffer_share(buf, fx->dev[1], &shared), -EPERM);
		assert_null(shared);
	}
	npu_buffer_free(plain);
	npu_buffer_free(buf);
	assert_int_equal(mem_used(dev), baseline);
}

const struct CMUnitTest conf_memory_tests[] = {
	cmocka_unit_test_setup_teardown(test_private, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_capacity, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_mem_used_tracking, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_map, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_host_memory, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_export_import, fixture_setup,
					fixture_teardown),
};
const size_t conf_memory_count = sizeof(conf_memory_tests) / sizeof(conf_memory_tests[0]);
