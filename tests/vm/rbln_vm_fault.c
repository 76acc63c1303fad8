// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln-vm-fault: fault injection through debugfs and recovery.
 *
 *  - "hang": the next job of device 0 stops responding. The watchdog must
 *    detect it within the job timeout (plus a check period), reset it, and
 *    the job's submitter must see -EIO; another context on the same device
 *    and a job on another device keep working meanwhile; the reset is
 *    counted in sysfs, and the device is READY again and runs jobs of the
 *    hung context's queue.
 *  - "fail": the next job fails with -EIO at once; a job that waits for
 *    its fence ends with -ECANCELED without running.
 *
 * Usage: rbln-vm-fault <job_timeout_ms>. TAP output.
 */
#include "libnpu.h"
#include "vmtest.h"

static unsigned int timeout_ms;

struct side {
	npu_context *ctx;
	npu_device *dev;
	npu_queue *q;
	npu_buffer *buf;
	uint32_t *map;
};

static char sysdir[128], dbgdir[128];

static int read_file(const char *dir, const char *name, char *out, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(out, (int)len, f))
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

static long read_long(const char *dir, const char *name)
{
	char buf[64];

	if (read_file(dir, name, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 0);
}

static int inject(const char *what)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/fault", dbgdir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(what, f);
	return fclose(f) ? -errno : 0;
}

static int open_side(struct side *s, const char *devices)
{
	struct npu_context_options o = {
		.struct_size = sizeof(o),
		.backend = NPU_BACKEND_KERNEL,
		.devices = devices,
	};
	void *map;
	int err;

	err = npu_context_create(&o, &s->ctx);
	if (!err)
		err = npu_device_open(s->ctx, 0, &s->dev);
	if (!err)
		err = npu_queue_create(s->dev, NPU_PRIORITY_NORMAL, &s->q);
	if (!err)
		err = npu_buffer_alloc(s->dev, 1 << 16, 0, &s->buf);
	if (!err)
		err = npu_buffer_map(s->buf, &map);
	if (!err)
		s->map = map;
	return err;
}

static void close_side(struct side *s)
{
	npu_buffer_free(s->buf);
	npu_queue_destroy(s->q);
	npu_device_close(s->dev);
	npu_context_destroy(s->ctx);
}

static int fill(struct side *s, uint32_t value, npu_fence *const *wait,
		unsigned int nwait, npu_fence **out)
{
	npu_stream *st;
	int err = npu_stream_create(s->dev, &st);

	if (err)
		return err;
	npu_stream_fill(st, s->buf, 0, 1 << 16, value);
	err = npu_stream_submit(st, s->q, wait, nwait, out);
	npu_stream_destroy(st);
	return err;
}

static int run_fill(struct side *s, uint32_t value)
{
	npu_fence *f = NULL;
	int err = fill(s, value, NULL, 0, &f);

	if (!err)
		err = npu_fence_wait(f, 30LL * 1000000000);
	npu_fence_release(f);
	if (!err && (s->map[0] != value || s->map[16383] != value))
		err = -EIO;
	return err;
}

static void wait_status(const char *want, int64_t deadline)
{
	char status[32] = "";

	while (vt_now() < deadline) {
		read_file(sysdir, "status", status, sizeof(status));
		if (!strcmp(status, want))
			return;
		usleep(10000);
	}
}

static void test_hang(void)
{
	struct side a, b, other;
	npu_fence *hung = NULL;
	long resets0 = read_long(sysdir, "resets");
	int64_t t0, elapsed_ms;
	unsigned int ok_jobs = 0;
	char status[32] = "", fault[32] = "";
	int err;

	vt_expect(open_side(&a, "0"), 0, "hang: context A on device 0");
	vt_expect(open_side(&b, "0"), 0, "hang: context B on device 0");
	vt_expect(open_side(&other, "1"), 0, "hang: context on device 1");
	vt_expect(run_fill(&a, 1), 0, "hang: A runs a job before the fault");

	vt_expect(inject("hang"), 0, "hang: inject through debugfs");
	t0 = vt_now();
	vt_expect(fill(&a, 2, NULL, 0, &hung), 0, "hang: A submits the job that will hang");
	/* Wait until the device took the fault (the next job is A's). */
	while (vt_now() - t0 < 5000000000LL) {
		read_file(dbgdir, "fault", fault, sizeof(fault));
		if (!strcmp(fault, "none"))
			break;
		usleep(5000);
	}
	vt_result(!strcmp(fault, "none"), "hang: the fault was taken by A's job");
	read_file(sysdir, "status", status, sizeof(status));
	vt_result(!strcmp(status, "BUSY"), "hang: device BUSY while the job hangs (%s)", status);

	/* Other contexts go on while A's job hangs. */
	while (npu_fence_poll(hung) == -EBUSY && vt_now() - t0 < 60000000000LL) {
		if (run_fill(&b, 0x100 + ok_jobs) == 0 && run_fill(&other, 0x200 + ok_jobs) == 0)
			ok_jobs++;
		else
			break;
	}
	err = npu_fence_wait(hung, 60LL * 1000000000);
	elapsed_ms = (vt_now() - t0) / 1000000;
	vt_result(err == -EIO, "hang: the hung job ends with -EIO (%d)", err);
	vt_result(elapsed_ms <= 2 * timeout_ms + 3000,
		  "hang: detected in %lld ms (job timeout %u ms)", (long long)elapsed_ms,
		  timeout_ms);
	vt_result(ok_jobs >= 1, "hang: %u jobs of context B and of device 1 succeeded meanwhile",
		  ok_jobs);
	vt_result(run_fill(&b, 0xbbbb) == 0, "hang: context B unaffected after the reset");
	vt_result(read_long(sysdir, "resets") == resets0 + 1, "hang: sysfs resets counted (%ld)",
		  read_long(sysdir, "resets"));
	wait_status("READY", vt_now() + 5000000000LL);
	read_file(sysdir, "status", status, sizeof(status));
	vt_result(!strcmp(status, "READY"), "hang: device READY again (%s)", status);
	vt_expect(run_fill(&a, 3), 0, "hang: the hung context's queue runs jobs again");

	npu_fence_release(hung);
	close_side(&a);
	close_side(&b);
	close_side(&other);
}

static void test_fail(void)
{
	struct side a;
	npu_fence *f1 = NULL, *f2 = NULL;

	vt_expect(open_side(&a, "0"), 0, "fail: context on device 0");
	vt_expect(run_fill(&a, 7), 0, "fail: a job before the fault");
	vt_expect(inject("fail"), 0, "fail: inject through debugfs");
	vt_expect(fill(&a, 8, NULL, 0, &f1), 0, "fail: submit the failing job");
	vt_expect(fill(&a, 9, &f1, 1, &f2), 0, "fail: submit a job that waits for it");
	vt_expect(npu_fence_wait(f1, 30LL * 1000000000), -EIO, "fail: the job fails with -EIO");
	vt_expect(npu_fence_wait(f2, 30LL * 1000000000), -ECANCELED,
		  "fail: the dependent job is cancelled");
	vt_result(a.map[0] == 7, "fail: neither job wrote the buffer");
	vt_expect(run_fill(&a, 10), 0, "fail: the queue works afterwards");
	npu_fence_release(f1);
	npu_fence_release(f2);
	close_side(&a);
}

int main(int argc, char **argv)
{
	npu_context *ctx;
	struct npu_device_info info;
	const char *node;

	timeout_ms = argc > 1 ? (unsigned int)atoi(argv[1]) : 10000;
	if (npu_context_create(NULL, &ctx) || npu_device_info_get(ctx, 0, &info)) {
		printf("Bail out! %s\n", npu_error_detail());
		return 2;
	}
	npu_context_destroy(ctx);
	node = strrchr(info.path, '/');
	node = node ? node + 1 : info.path;	/* accelN */
	snprintf(sysdir, sizeof(sysdir), "/sys/class/accel/%s/device", node);
	{
		/* debugfs names the device directory after the platform device */
		char target[256];
		ssize_t len = readlink(sysdir, target, sizeof(target) - 1);
		const char *pdev;

		if (len < 0) {
			printf("Bail out! %s: %s\n", sysdir, strerror(errno));
			return 2;
		}
		target[len] = '\0';
		pdev = strrchr(target, '/');
		snprintf(dbgdir, sizeof(dbgdir), "/sys/kernel/debug/accel/%.64s",
			 pdev ? pdev + 1 : target);
	}

	test_hang();
	test_fail();
	return vt_finish();
}
