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
 * Compute rounds run one decoder layer and a head with the ISA 1.4 compute
 * commands (EMBED, RMSNORM, MATMUL in every dtype (int8 weights with
 * their scales too) and layout, ROPE with
 * and without llama3 scaling, SWIGLU, KV_WRITE, ATTENTION, ARGMAX, TOPK) on
 * random weights and activations, and compare every byte as well; one
 * round has a token id out of range, which must fault (-EIO) in both.
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

/* ------------------------------------------------------------- compute */

#define T	4	/* tokens */
#define D	64	/* model dim */
#define V	128	/* vocabulary rows */
#define QH	4	/* query heads */
#define KVH	2	/* KV heads */
#define HD	16	/* head dim */
#define QKVN	((QH + 2 * KVH) * HD)
#define F	96	/* ffn dim */
#define BS	16	/* KV block size */
#define NB	4	/* KV blocks */
#define CTX	20	/* tokens the sequence sees */
#define TOPK	5

static uint64_t arena_at;

static uint64_t take(uint64_t bytes)
{
	uint64_t at = arena_at;

	arena_at += (bytes + 255) & ~255ULL;
	return at;
}

static unsigned int esize(enum npu_dtype dt)
{
	if (dt == NPU_DTYPE_I8)
		return 1;
	return dt == NPU_DTYPE_F32 ? 4 : 2;
}

static float frand(void)
{
	return (float)((int64_t)(rnd() % 2000001) - 1000000) / 500000.0f;
}

/* Random values of @dt at @p, @n elements. */
static void fill_dtype(uint8_t *p, uint64_t n, enum npu_dtype dt, float scale)
{
	for (uint64_t i = 0; i < n; i++) {
		float f = frand() * scale;
		uint32_t bits;

		memcpy(&bits, &f, 4);
		if (dt == NPU_DTYPE_F32) {
			memcpy(p + 4 * i, &bits, 4);
		} else if (dt == NPU_DTYPE_BF16) {
			uint16_t h = (uint16_t)(bits >> 16);

			memcpy(p + 2 * i, &h, 2);
		} else {
			/*
			 * binary16 of f, truncated; |f| <= 2 * scale stays far
			 * from the f16 range limit, and magnitudes below the
			 * smallest normal become zero. (Raw random exponents
			 * made values up to 64, so a layer overflowed to inf.)
			 */
			int e = (int)((bits >> 23) & 0xff) - 127 + 15;
			uint16_t h = (uint16_t)((bits >> 16) & 0x8000);

			if (e > 0)
				h |= (uint16_t)((e << 10) | ((bits >> 13) & 0x3ff));
			memcpy(p + 2 * i, &h, 2);
		}
	}
}

static void put_i32(uint8_t *p, const int32_t *v, unsigned int n)
{
	memcpy(p, v, 4 * n);
}

struct layer {
	enum npu_dtype dt;	/* tables, norms, caches */
	enum npu_dtype mdt;	/* MATMUL weights: dt, or int8 */
	enum npu_layout layout;
	enum npu_kv_layout kv;
	int llama3;
	uint64_t table, ids, x, normw, xn, wqkv, qkv, pos, kc, vc, slots, seqs,
		 btab, work, attn, wo, xn2, wgu, gu, act, wd, wlm, logits, amv,
		 ami, topv, topi;
};

/* Bytes of the weights of an n x k MATMUL (int8: with their scales). */
static uint64_t wsize(const struct layer *l, uint32_t n, uint32_t k)
{
	return npu_weights_size(l->mdt, l->layout, n, k);
}

/*
 * Random weights of an n x k MATMUL of about @scale in magnitude: int8
 * ones are random bytes followed by scales of scale / 127 (+-50%).
 */
static void fill_weights(const struct layer *l, uint8_t *p, uint32_t n,
			 uint32_t k, float scale)
{
	uint64_t size = wsize(l, n, k), nscales = (n + 15) / 16 * 16;

	if (l->mdt != NPU_DTYPE_I8) {
		fill_dtype(p, size / esize(l->mdt), l->mdt, scale);
		return;
	}
	for (uint64_t i = 0; i < size - 4 * nscales; i++)
		p[i] = (uint8_t)rnd();
	for (uint64_t i = 0; i < nscales; i++) {
		float f = scale / 127.0f * (1.0f + frand() / 4.0f);

		memcpy(p + size - 4 * nscales + 4 * i, &f, 4);
	}
}

static void layout_layer(struct layer *l, uint64_t work_size)
{
	arena_at = 0;
	l->table = take((uint64_t)V * D * esize(l->dt));
	l->ids = take(4 * T);
	l->x = take(4 * T * D);
	l->normw = take(D * esize(l->dt));
	l->xn = take(4 * T * D);
	l->wqkv = take(wsize(l, QKVN, D));
	l->qkv = take(4 * T * QKVN);
	l->pos = take(4 * T);
	l->kc = take((uint64_t)NB * BS * KVH * HD * esize(l->dt));
	l->vc = take((uint64_t)NB * BS * KVH * HD * esize(l->dt));
	l->slots = take(4 * T);
	l->seqs = take(16);
	l->btab = take(4 * NB);
	l->work = take(work_size);
	l->attn = take(4 * T * QH * HD);
	l->wo = take(wsize(l, D, QH * HD));
	l->xn2 = take(4 * T * D);
	l->wgu = take(wsize(l, 2 * F, D));
	l->gu = take(4 * T * 2 * F);
	l->act = take(4 * T * F);
	l->wd = take(wsize(l, D, F));
	l->wlm = take(wsize(l, V, D));
	l->logits = take(4 * T * V);
	l->amv = take(4 * T);
	l->ami = take(4 * T);
	l->topv = take(4 * T * TOPK);
	l->topi = take(4 * T * TOPK);
}

static void init_layer(const struct layer *l, uint8_t *a, int bad_id)
{
	int32_t ids[T], pos[T], seqs[4] = { 0, T, CTX, 0 }, btab[NB];

	fill_dtype(a + l->table, (uint64_t)V * D, l->dt, 1.0f);
	fill_dtype(a + l->normw, D, l->dt, 1.0f);
	fill_weights(l, a + l->wqkv, QKVN, D, 0.2f);
	fill_dtype(a + l->kc, (uint64_t)NB * BS * KVH * HD, l->dt, 1.0f);
	fill_dtype(a + l->vc, (uint64_t)NB * BS * KVH * HD, l->dt, 1.0f);
	fill_weights(l, a + l->wo, D, QH * HD, 0.2f);
	fill_weights(l, a + l->wgu, 2 * F, D, 0.2f);
	fill_weights(l, a + l->wd, D, F, 0.2f);
	fill_weights(l, a + l->wlm, V, D, 0.2f);
	for (int t = 0; t < T; t++) {
		ids[t] = (int32_t)(rnd() % V);
		pos[t] = CTX - T + t;
	}
	if (bad_id)
		ids[T - 1] = V + 7;
	for (int b = 0; b < NB; b++)
		btab[b] = (b + 1) % NB;	/* logical block b lives in block b+1 */
	put_i32(a + l->ids, ids, T);
	put_i32(a + l->pos, pos, T);
	for (int t = 0; t < T; t++)	/* physical slots of the positions */
		pos[t] = btab[pos[t] / BS] * BS + pos[t] % BS;
	put_i32(a + l->slots, pos, T);
	put_i32(a + l->seqs, seqs, 4);
	put_i32(a + l->btab, btab, NB);
}

static int run_layer(struct home *h, const struct layer *l)
{
	npu_buffer *b = h->buf[0];
#define TN(off) ((struct npu_tensor){ b, (off) })
	struct npu_embed embed = {
		.dst = TN(l->x), .table = TN(l->table), .ids = TN(l->ids),
		.tokens = T, .rows = V, .dim = D, .dtype = l->dt,
	};
	struct npu_rmsnorm norm = {
		.dst = TN(l->xn), .src = TN(l->x), .weight = TN(l->normw),
		.rows = T, .dim = D, .dtype = l->dt, .eps = 1e-5f,
	};
	struct npu_matmul qkv = {
		.dst = TN(l->qkv), .a = TN(l->xn), .w = TN(l->wqkv), .m = T,
		.k = D, .n = QKVN, .dtype = l->mdt, .layout = l->layout,
	};
	struct npu_rope rq = {
		.x = TN(l->qkv), .pos = TN(l->pos), .tokens = T, .heads = QH,
		.head_dim = HD, .stride = QKVN, .theta = 500000.0f,
	};
	struct npu_rope rk = rq;
	struct npu_kv_write kvw = {
		.k_cache = TN(l->kc), .v_cache = TN(l->vc),
		.k = TN(l->qkv + 4 * QH * HD), .v = TN(l->qkv + 4 * (QH + KVH) * HD),
		.slots = TN(l->slots), .num_blocks = NB, .tokens = T,
		.block_size = BS, .kv_heads = KVH, .head_dim = HD,
		.k_stride = QKVN, .v_stride = QKVN, .dtype = l->dt,
		.layout = l->kv,
	};
	struct npu_attention att = {
		.out = TN(l->attn), .q = TN(l->qkv), .k_cache = TN(l->kc),
		.v_cache = TN(l->vc), .seqs = TN(l->seqs), .block_tables = TN(l->btab),
		.work = TN(l->work), .rows = T, .num_seqs = 1, .num_blocks = NB,
		.table_rows = 1, .q_heads = QH, .kv_heads = KVH, .head_dim = HD,
		.q_stride = QKVN, .block_size = BS, .max_blocks = NB,
		.partition_len = 8, .dtype = l->dt, .scale = 0.25f,
		.layout = l->kv,
	};
	struct npu_matmul o = {
		.dst = TN(l->x), .a = TN(l->attn), .w = TN(l->wo), .m = T,
		.k = QH * HD, .n = D, .dtype = l->mdt, .layout = l->layout,
		.accumulate = 1,
	};
	struct npu_rmsnorm norm2 = {
		.dst = TN(l->xn2), .src = TN(l->xn2), .weight = TN(l->normw),
		.rows = T, .dim = D, .dtype = l->dt, .eps = 1e-6f,
	};
	struct npu_matmul gu = {
		.dst = TN(l->gu), .a = TN(l->xn2), .w = TN(l->wgu), .m = T,
		.k = D, .n = 2 * F, .dtype = l->mdt, .layout = l->layout,
	};
	struct npu_swiglu sw = {
		.dst = TN(l->act), .gate = TN(l->gu), .up = TN(l->gu + 4 * F),
		.rows = T, .n = F, .gate_stride = 2 * F, .up_stride = 2 * F,
	};
	struct npu_matmul down = {
		.dst = TN(l->x), .a = TN(l->act), .w = TN(l->wd), .m = T,
		.k = F, .n = D, .dtype = l->mdt, .layout = l->layout,
		.accumulate = 1,
	};
	struct npu_matmul lm = {
		.dst = TN(l->logits), .a = TN(l->x), .w = TN(l->wlm), .m = T,
		.k = D, .n = V, .dtype = l->mdt, .layout = l->layout,
	};
	struct npu_topk am = {
		.values = TN(l->amv), .indices = TN(l->ami), .src = TN(l->logits),
		.rows = T, .n = V, .k = 1,
	};
	struct npu_topk tk = {
		.values = TN(l->topv), .indices = TN(l->topi), .src = TN(l->logits),
		.rows = T, .n = V, .k = TOPK, .index_base = 1000,
	};
#undef TN
	npu_stream *s;
	npu_fence *f = NULL;
	int err = npu_stream_create(h->dev, &s);

	if (err)
		return err;
	rk.x.offset = l->qkv + 4 * QH * HD;
	rk.heads = KVH;
	if (l->llama3) {
		rq.llama3 = rk.llama3 = 1;
		rq.factor = rk.factor = 8.0f;
		rq.low_freq_factor = rk.low_freq_factor = 1.0f;
		rq.high_freq_factor = rk.high_freq_factor = 4.0f;
		rq.original_max_pos = rk.original_max_pos = 8192;
	}
	npu_stream_embed(s, &embed);
	npu_stream_rmsnorm(s, &norm);
	npu_stream_matmul(s, &qkv);
	npu_stream_rope(s, &rq);
	npu_stream_rope(s, &rk);
	npu_stream_kv_write(s, &kvw);
	npu_stream_attention(s, &att);
	npu_stream_matmul(s, &o);
	npu_stream_copy(s, h->buf[0], l->xn2, h->buf[0], l->x, 4 * T * D);
	npu_stream_rmsnorm(s, &norm2);
	npu_stream_matmul(s, &gu);
	npu_stream_swiglu(s, &sw);
	npu_stream_matmul(s, &down);
	npu_stream_matmul(s, &lm);
	npu_stream_argmax(s, &am);
	npu_stream_topk(s, &tk);
	err = npu_stream_submit(s, h->q, NULL, 0, &f);
	if (!err)
		err = npu_fence_wait(f, 120LL * 1000000000);
	npu_fence_release(f);
	npu_stream_destroy(s);
	return err;
}

static void compute_round(struct home *k, struct home *e, unsigned int r,
			  int bad_id)
{
	static const char *const dtn[] = { "f32", "f16", "bf16", "int8" };
	/*
	 * Rounds 0-5: every float type in two of the three layouts; 6-8:
	 * int8 packed, spaced and (the bad id's round) row-major.
	 */
	static const enum npu_layout i8_layout[] = {
		NPU_LAYOUT_PACKED16, NPU_LAYOUT_PACKED16_SPACED,
		NPU_LAYOUT_ROWMAJOR,
	};
	struct layer l = {
		.dt = (enum npu_dtype)(r % 3),
		.mdt = r < 6 ? (enum npu_dtype)(r % 3) : NPU_DTYPE_I8,
		.layout = r < 6 ? (enum npu_layout)((r + r / 3) % 3) :
				  i8_layout[(r - 6) % 3],
		.llama3 = (int)(r % 2),
		/* The engine's head-major cache, and once that of ISA 1.1. */
		.kv = r == 3 ? NPU_KV_TOKEN_MAJOR : NPU_KV_HEAD_MAJOR,
	};
	struct npu_attention probe = {
		.rows = T, .q_heads = QH, .head_dim = HD, .block_size = BS,
		.max_blocks = NB, .partition_len = 8,
	};
	int ek, ee;

	layout_layer(&l, npu_attention_work_size(&probe));
	if (arena_at > BUF_SIZE) {
		vt_result(false, "compute round %u: arena of %llu bytes too small", r,
			  (unsigned long long)arena_at);
		return;
	}
	memset(k->map[0], 0, arena_at);
	init_layer(&l, k->map[0], bad_id);
	memcpy(e->map[0], k->map[0], arena_at);
	ek = run_layer(k, &l);
	ee = run_layer(e, &l);
	if (bad_id) {
		vt_result(ek == -EIO && ee == -EIO,
			  "compute: token id out of range faults in both (kernel %d, emulated %d)",
			  ek, ee);
		return;
	}
	if (ek || ee) {
		vt_result(false, "compute round %u: kernel %d, emulated %d (%s)", r, ek,
			  ee, npu_error_detail());
		return;
	}
	bool same = !memcmp(k->map[0], e->map[0], arena_at);
	const float *logits = (const float *)(k->map[0] + l.logits);
	const int32_t *topi = (const int32_t *)(k->map[0] + l.topi);
	const int32_t *ami = (const int32_t *)(k->map[0] + l.ami);
	unsigned int finite = 0;

	for (unsigned int i = 0; i < T * V; i++)
		finite += logits[i] == logits[i] && logits[i] != 0.0f &&
			  logits[i] - logits[i] == 0.0f;
	if (finite < T * V / 2 || topi[0] < 1000 || topi[0] >= 1000 + V ||
	    topi[0] - 1000 != ami[0]) {
		printf("# compute round %u: %u finite logits, top index %d, argmax %d\n",
		       r, finite, topi[0], ami[0]);
		same = false;
	}

	if (!same) {
		size_t at = 0;

		/* The sanity check above can fail on identical bytes: bound it. */
		while (at < arena_at && k->map[0][at] == e->map[0][at])
			at++;
		if (at < arena_at)
			printf("# compute round %u differs at byte %zu\n", r, at);
	}
	vt_result(same, "compute round %u (%s, weights %s %s, rope %s, %s KV): layer and head bit-identical",
		  r, dtn[l.dt], dtn[l.mdt], l.layout ? "packed16" : "row-major",
		  l.llama3 ? "llama3" : "default",
		  l.kv == NPU_KV_HEAD_MAJOR ? "head-major" : "token-major");
}

int main(int argc, char **argv)
{
	unsigned int rounds = argc > 1 ? (unsigned int)atoi(argv[1]) : 12;
	struct home k, e;
	struct cmd cmds[24];
	unsigned int identical = 0;

	rng = argc > 2 ? strtoull(argv[2], NULL, 0) : (uint64_t)vt_now() | 1;
	printf("# seed %llu\n", (unsigned long long)rng);
	/* RBLN_COMPARE_SELF=1: emulated against emulated (no rbln.ko here). */
	vt_expect(home_open(&k, getenv("RBLN_COMPARE_SELF") ? NPU_BACKEND_EMUL :
			    NPU_BACKEND_KERNEL), 0, "kernel backend, device 0");
	vt_expect(home_open(&e, NPU_BACKEND_EMUL), 0, "emulated backend");
	if (vt_failed) {
		printf("Bail out! %s\n", npu_error_detail());
		return vt_finish();
	}

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
	for (unsigned int r = 0; r < 8; r++)
		compute_round(&k, &e, r, 0);
	compute_round(&k, &e, 8, 1);
	home_close(&k);
	home_close(&e);
	return vt_finish();
}
