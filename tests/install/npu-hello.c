// SPDX-License-Identifier: MIT
/*
 * npu-hello: the small program tests/install/install-test.sh builds out of
 * tree against an installed libnpu (pkg-config --cflags --libs libnpu).
 *
 * It uses all three installed headers: libnpu.h for the API, and
 * rbln/rbln_isa.h and rbln/rbln_accel.h (which needs libdrm's "drm.h", so
 * libnpu.pc must bring libdrm's include directory). On every visible device
 * it fills a buffer, copies it to a second buffer in the same job, and
 * checks the copy; then it prints "npu-hello: N devices ok".
 */
#include <stdio.h>
#include <string.h>

#include <libnpu.h>
#include <rbln/rbln_accel.h>
#include <rbln/rbln_isa.h>

#define SIZE 65536u
#define PATTERN 0x5a5a5a5au

static int fail(const char *what, int err)
{
	fprintf(stderr, "npu-hello: %s: %s (%s)\n", what, npu_strerror(err),
		npu_error_detail());
	return 1;
}

/* Fill src, copy it to dst in one job, check dst word by word. */
static int check_device(npu_context *ctx, unsigned int index)
{
	npu_device *dev = NULL;
	npu_buffer *src = NULL, *dst = NULL;
	npu_queue *q = NULL;
	npu_stream *s = NULL;
	npu_fence *f = NULL;
	uint32_t *words;
	int err, bad = 0;

	err = npu_device_open(ctx, index, &dev);
	if (err)
		return fail("npu_device_open", err);
	err = npu_buffer_alloc(dev, SIZE, 0, &src);
	if (!err)
		err = npu_buffer_alloc(dev, SIZE, 0, &dst);
	if (!err)
		err = npu_queue_create(dev, NPU_PRIORITY_NORMAL, &q);
	if (!err)
		err = npu_stream_create(dev, &s);
	if (!err) {
		npu_stream_fill(s, src, 0, SIZE, PATTERN);
		npu_stream_barrier(s);
		npu_stream_copy(s, dst, 0, src, 0, SIZE);
		err = npu_stream_submit(s, q, NULL, 0, &f);
	}
	if (!err)
		err = npu_fence_wait(f, NPU_TIMEOUT_INFINITE);
	if (!err)
		err = npu_buffer_map(dst, (void **)&words);
	if (err) {
		bad = fail("fill and copy", err);
	} else {
		for (size_t i = 0; i < SIZE / sizeof(*words); i++)
			bad |= words[i] != PATTERN;
		if (bad)
			fprintf(stderr, "npu-hello: device %u: wrong copy\n", index);
	}
	npu_fence_release(f);
	if (s)
		npu_stream_destroy(s);
	if (q)
		npu_queue_destroy(q);
	if (dst)
		npu_buffer_free(dst);
	if (src)
		npu_buffer_free(src);
	npu_device_close(dev);
	return bad;
}

int main(void)
{
	npu_context *ctx;
	unsigned int n, i;
	int bad = 0, err;

	/* The installed headers agree with the library's ISA version. */
	_Static_assert(RBLN_ISA_VERSION_MAJOR == 1, "ISA major version");
	_Static_assert(DRM_RBLN_QUERY == 0x00, "uapi header");

	err = npu_context_create(NULL, &ctx);
	if (err)
		return fail("npu_context_create", err);
	n = npu_device_count(ctx);
	for (i = 0; i < n; i++)
		bad |= check_device(ctx, i);
	printf("npu-hello: %u devices (%s backend) %s\n", n,
	       npu_backend_name(npu_context_backend(ctx)), bad ? "FAILED" : "ok");
	npu_context_destroy(ctx);
	return bad || n == 0;
}
