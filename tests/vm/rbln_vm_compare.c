// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln-vm-compare: the same command streams on the kernel backend (rbln.ko)
 * and on the emulated backend must leave bit-identical buffers.
 *
 * Each round draws random buffer contents (float32 values of every class:
 * normals, denormals, zeros of both signs, infinities, quiet and signalling
 * NaNs with payloads, and raw random bits) and a random stream of FILL,
 * COPY (also overlapping), ADD (also in place, and large enough to be
 * split over the engines) and semaphore commands, runs it on both
 * backends and compares every byte of every buffer.
 *
 * Usage: rbln-vm-compare [rounds] [seed]. TAP output.
 */
#include "libnpu.h"
#include "vmtest.h"

#define NBUF		4
#define BUF_SIZE	(3u << 20)	/* big enough to split an ADD */

struct home {
	npu_context *ctx;
	npu_device *dev;
	npu_queue *q;
	npu_buffer *buf[NBUF];
	uint8_t *map[NBUF];
};

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t special_float(void)
{
	static const uint32_t classes[] = {
		0x00000000, 0x80000000,		/* zeros */
		0x7f800000, 0xff800000,		/* infinities */
		0x7fc00000, 0xffc00000,		/* quiet NaNs */
		0x7fa00001, 0xff800123,		/* signalling NaNs */
		0x7fc12345,			/* NaN with payload */
		0x00000001, 0x807fffff,		/* denormals */
		0x00800000, 0x7f7fffff,		/* smallest normal, largest */
		0x3f800000, 0xbf800000, 0x33800000,
	};
	uint32_t r = (uint32_t)rnd();

	switch (rnd() % 4) {
	case 0:
		return classes[rnd() % (sizeof(classes) / sizeof(classes[0]))];
	case 1:		/* denormal */
		return (r & 0x807fffff) | 1;
	case 2:		/* normal of moderate exponent */
		return (r & 0x807fffff) | ((uint32_t)(100 + rnd() % 56) << 23);
	default:
		return r;
	}
}

static int home_open(struct home *h, enum npu_backend backend)
{
	struct npu_context_options o = {
		.struct_size = sizeof(o),
		.backend = backend,
		.devices = backend == NPU_BACKEND_KERNEL ? "0" : NULL,
		.emul_devices = 1,
		.emul_engines = 3,
	};
	int err;

	memset(h, 0, sizeof(*h));
	err = npu_context_create(&o, &h->ctx);
	if (!err)
		err = npu_device_open(h->ctx, 0, &h->dev);
	if (!err)
		err = npu_queue_create(h->dev, NPU_PRIORITY_NORMAL, &h->q);
	for (int i = 0; i < NBUF && !err; i++) {
		void *map;

		err = npu_buffer_alloc(h->dev, BUF_SIZE, i == 3 ? NPU_BUFFER_HOST : 0,
				       &h->buf[i]);
		if (!err)
			err = npu_buffer_map(h->buf[i], &map);
		if (!err)
			h->map[i] = map;
	}
	return err;
}

static void home_close(struct home *h)
{
	for (int i = 0; i < NBUF; i++)
		npu_buffer_free(h->buf[i]);
	npu_queue_destroy(h->q);
	npu_device_close(h->dev);
	npu_context_destroy(h->ctx);
}

/* The random program of a round, built identically in both homes. */
struct cmd {
	int op;
	unsigned int d, a, b;
	uint64_t doff, aoff, boff, len;
	uint32_t value;
};

static unsigned int make_program(struct cmd *cmds, unsigned int max)
{
	unsigned int n = 1 + rnd() % max;

	for (unsigned int i = 0; i < n; i++) {
		struct cmd *c = &cmds[i];
		uint64_t words;

		c->op = (int)(rnd() % 5);
		c->d = rnd() % NBUF;
		c->a = rnd() % NBUF;
		c->b = rnd() % NBUF;
		c->value = special_float();
		switch (c->op) {
		case 0:	/* FILL */
			words = 1 + rnd() % (BUF_SIZE / 4 / 8);
			c->len = words * 4;
			c->doff = 4 * (rnd() % (BUF_SIZE / 4 - words + 1));
			break;
		case 1:	/* COPY, any alignment, maybe overlapping */
			c->len = 1 + rnd() % 65536;
			c->doff = rnd() % (BUF_SIZE - c->len + 1);
			c->aoff = rnd() % (BUF_SIZE - c->len + 1);
			if (rnd() % 3 == 0) {
				c->a = c->d;
				c->aoff = c->doff + rnd() % 64;
				if (c->aoff + c->len > BUF_SIZE)
					c->aoff = c->doff - rnd() % (c->doff + 1) % 64;
			}
			break;
		case 2:	/* ADD, in place or in distinct buffers */
		case 3:
			words = c->op == 3 ? (BUF_SIZE / 4) : 1 + rnd() % 70000;
			c->len = words;
			c->doff = c->aoff = c->boff = 0;
			if (c->op == 2) {
				c->doff = 4 * (rnd() % (BUF_SIZE / 4 - words + 1));
				c->aoff = 4 * (rnd() % (BUF_SIZE / 4 - words + 1));
				c->boff = 4 * (rnd() % (BUF_SIZE / 4 - words + 1));
			}
			/* dst may alias a or b exactly; other overlaps are invalid */
			if (rnd() % 2) {
				c->a = c->d;
				c->aoff = c->doff;
			} else {
				c->a = (c->d + 1) % NBUF;
			}
			c->b = (c->d + 2) % NBUF;
			break;
		default: /* semaphore add then wait */
			c->doff = 8 * (rnd() % (BUF_SIZE / 8));
			c->len = 8;
			break;
		}
	}
	return n;
}

static int run_program(struct home *h, const struct cmd *cmds, unsigned int n)
{
	npu_stream *s;
	npu_fence *f = NULL;
	int err = npu_stream_create(h->dev, &s);

	if (err)
		return err;
	for (unsigned int i = 0; i < n; i++) {
		const struct cmd *c = &cmds[i];

		switch (c->op) {
		case 0:
			npu_stream_fill(s, h->buf[c->d], c->doff, c->len, c->value);
			break;
		case 1:
			npu_stream_copy(s, h->buf[c->d], c->doff, h->buf[c->a],
					c->aoff, c->len);
			break;
		case 2:
		case 3:
			npu_stream_add_f32(s, h->buf[c->d], c->doff, h->buf[c->a],
					   c->aoff, h->buf[c->b], c->boff, c->len);
			break;
		default:
			npu_stream_fill(s, h->buf[c->d], c->doff, 8, 0);
			npu_stream_sem_signal(s, h->buf[c->d], c->doff, NPU_SEM_ADD,
					      c->value);
			npu_stream_sem_wait(s, h->buf[c->d], c->doff, NPU_SEM_EQ,
					    c->value, 1000000000);
			npu_stream_sem_signal(s, h->buf[c->d], c->doff, NPU_SEM_SET,
					      ~(uint64_t)c->value);
			break;
		}
	}
	err = npu_stream_submit(s, h->q, NULL, 0, &f);
	if (!err)
		err = npu_fence_wait(f, 120LL * 1000000000);
	npu_fence_release(f);
	npu_stream_destroy(s);
	return err;
}

int main(int argc, char **argv)
{
	unsigned int rounds = argc > 1 ? (unsigned int)atoi(argv[1]) : 12;
	struct home k, e;
	struct cmd cmds[24];
	unsigned int identical = 0;

	rng = argc > 2 ? strtoull(argv[2], NULL, 0) : (uint64_t)vt_now() | 1;
	printf("# seed %llu\n", (unsigned long long)rng);
	vt_expect(home_open(&k, NPU_BACKEND_KERNEL), 0, "kernel backend, device 0");
	vt_expect(home_open(&e, NPU_BACKEND_EMUL), 0, "emulated backend");

	for (unsigned int r = 0; r < rounds; r++) {
		unsigned int n = make_program(cmds, 24);
		int ek, ee;

		for (int i = 0; i < NBUF; i++) {
			for (uint32_t w = 0; w < BUF_SIZE / 4; w += 1 + (uint32_t)(rnd() % 3)) {
				uint32_t v = special_float();

				memcpy(k.map[i] + 4 * w, &v, 4);
			}
			memcpy(e.map[i], k.map[i], BUF_SIZE);
		}
		ek = run_program(&k, cmds, n);
		ee = run_program(&e, cmds, n);
		if (ek || ee) {
			vt_result(false, "round %u: kernel %d, emulated %d (%s)", r, ek, ee,
				  npu_error_detail());
			continue;
		}
		bool same = true;

		for (int i = 0; i < NBUF && same; i++) {
			if (memcmp(k.map[i], e.map[i], BUF_SIZE)) {
				size_t at = 0;

				while (k.map[i][at] == e.map[i][at])
					at++;
				printf("# round %u buffer %d differs at byte %zu: %02x vs %02x\n",
				       r, i, at, k.map[i][at], e.map[i][at]);
				same = false;
			}
		}
		identical += same;
		vt_result(same, "round %u: %u commands, %u buffers bit-identical", r, n, NBUF);
	}
	vt_result(identical == rounds, "%u of %u rounds identical", identical, rounds);
	home_close(&k);
	home_close(&e);
	return vt_finish();
}
