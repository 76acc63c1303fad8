// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_nn.c - the row-wise compute opcodes (EMBED, RMSNORM, ROPE, SWIGLU,
 * KV_WRITE in both cache layouts, ARGMAX, TOPK) against float64 references
 * on fresh random data, outputs poisoned first; edge shapes (one element, widths around
 * the vector width, rows longer than one FPU bracket); both CPU variants,
 * which must give the same bits for these opcodes; any engine count the
 * same bits; and the run-time faults of index data.
 *
 * Tolerances, in units of u = 2^-24 of the reference's magnitude:
 * EMBED, KV_WRITE, ARGMAX, TOPK exact; RMSNORM dim/8 + 8 (a float32 sum
 * of dim/8 squares per lane); ROPE 4 (of |x1| + |x2|: products with cos
 * and sin rounded to float32); SWIGLU 16 (exp within 2 ulp, then three
 * roundings), plus 1e-40 absolute where e^g is subnormal.
 */
#include <math.h>

#include "model_test.h"

#define RW	(RBLN_MODEL_READ | RBLN_MODEL_WRITE)
#define RO	RBLN_MODEL_READ
#define U	(1.0 / 16777216.0)

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	assert_non_null(p);
	return p;
}

/* Runs a one-command stream on @env, expecting @want. */
static void run1(const void *cmd, size_t size, struct rbln_model_bo *bos,
		 uint32_t nbos, const struct rbln_model_env *env, int want)
{
	struct sb sb;

	sb_init(&sb);
	sb_raw(&sb, cmd, size);
	assert_int_equal(run_ret(&sb, bos, nbos, env), want);
	sb_free(&sb);
}

/*
 * Runs @fn on every variant and engine setting; all must give the bits of
 * the first run, which @check verifies against the reference.
 */
struct variant_run {
	void (*run)(void *ctx, const struct rbln_model_env *env, uint8_t *out);
	void (*check)(void *ctx, const uint8_t *out);
	void *ctx;
	size_t out_size;
	int engines;	/* also run with several engines */
};

static void run_everywhere(const struct variant_run *vr)
{
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i;
	uint8_t *first = NULL, *out;
	struct fake_env f;
	int e;

	for (i = 0; i < nv; i++) {
		test_set_variant(v[i]);
		for (e = 1; e <= (vr->engines ? 4 : 1); e++) {
			fake_env_init(&f, e == 4 ? 1 : (uint32_t)e);
			f.reverse = 1;
			out = poisoned(vr->out_size);
			vr->run(vr->ctx, e == 4 ? real_env(2) : &f.env, out);
			if (!first) {
				vr->check(vr->ctx, out);
				first = out;
				continue;
			}
			/* Both variants, all engine counts: the same bits. */
			if (memcmp(first, out, vr->out_size))
				fail_msg("%s, engines %d: bits differ",
					 rbln_model_kernels()->name, e);
			free(out);
		}
	}
	free(first);
	rbln_model_set_cpu(RBLN_MODEL_CPU_AUTO);
}

/* ---------------------------------------------------------------- EMBED */

struct embed_ctx {
	uint32_t t, dim, rows, dtype, id_base, flags;
	int32_t *ids;
	uint8_t *table;
};

static void embed_run(void *p, const struct rbln_model_env *env, uint8_t *out)
{
	struct embed_ctx *c = p;
	uint64_t tsize = (uint64_t)c->rows * c->dim * test_dtype_size(c->dtype);
	struct rbln_model_bo bos[3] = {
		{ out, (uint64_t)c->t * c->dim * 4, RW },
		{ c->table, tsize, RO },
		{ (uint8_t *)c->ids, (uint64_t)c->t * 4, RO },
	};
	struct rbln_isa_embed cmd = {
		.hdr = { .opcode = RBLN_OP_EMBED, .size = sizeof(cmd),
			 .flags = c->flags },
		.dst = OPND(0, 0, bos[0].size), .table = OPND(1, 0, tsize),
		.ids = OPND(2, 0, bos[2].size), .dtype = c->dtype,
		.dim = c->dim, .id_base = c->id_base,
	};

	run1(&cmd, sizeof(cmd), bos, 3, env, 0);
}

static void embed_check(void *p, const uint8_t *out)
{
	struct embed_ctx *c = p;
	int64_t row;
	uint32_t t, d;
	float want, got;

	for (t = 0; t < c->t; t++) {
		row = (int64_t)c->ids[t] - c->id_base;
		for (d = 0; d < c->dim; d++) {
			want = 0.0f;
			if (row >= 0 && row < c->rows)
				want = test_load(c->table, c->dtype,
						 (size_t)row * c->dim + d);
			memcpy(&got, out + ((size_t)t * c->dim + d) * 4, 4);
			if (f32_bits(got) != f32_bits(want))
				fail_msg("embed dtype %u dim %u [%u,%u]: %g, "
					 "want %g", c->dtype, c->dim, t, d,
					 got, want);
		}
	}
}

static void embed_case(uint32_t t, uint32_t dim, uint32_t rows,
		       uint32_t dtype, uint32_t flags)
{
	struct embed_ctx c = { .t = t, .dim = dim, .rows = rows,
			       .dtype = dtype, .flags = flags };
	struct variant_run vr = { embed_run, embed_check, &c,
				  (size_t)t * dim * 4, 1 };
	size_t n = (size_t)rows * dim, i;
	float *vals = xmalloc(n * 4);

	c.id_base = (uint32_t)rng_range(0, 1000);
	c.ids = xmalloc((size_t)t * 4);
	c.table = xmalloc(n * test_dtype_size(dtype));
	rng_fill(vals, n, -2.0f, 2.0f);
	test_store(c.table, dtype, vals, n);
	for (i = 0; i < t; i++) {
		c.ids[i] = (int32_t)(c.id_base + rng_range(0, rows - 1));
		/* Outside the shard: zeros, with the flag. */
		if (flags && i % 3 == 1)
			c.ids[i] = i % 2 ? (int32_t)(c.id_base + rows) :
					   (int32_t)c.id_base - 1;
	}
	run_everywhere(&vr);
	free(vals);
	free(c.ids);
	free(c.table);
}

static void test_embed(void **state)
{
	uint32_t dt;

	(void)state;
	for (dt = 0; dt < TEST_FLOAT_DTYPES; dt++) {
		embed_case(1, 1, 1, dt, 0);
		embed_case(5, 7, 11, dt, 0);
		embed_case(9, 33, 50, dt, RBLN_EMBED_ZERO_OUTSIDE);
		embed_case(3, 20000, 4, dt, RBLN_EMBED_ZERO_OUTSIDE);
		embed_case(64, 16384, 3, dt, 0);
	}
}

static void test_embed_faults(void **state)
{
	float table[4 * 8];
	int32_t ids[3] = { 1, 2, 3 };
	uint8_t *out = poisoned(3 * 8 * 4);
	struct rbln_model_bo bos[3] = {
		{ out, 3 * 8 * 4, RW },
		{ (uint8_t *)table, sizeof(table), RO },
		{ (uint8_t *)ids, sizeof(ids), RO },
	};
	struct rbln_isa_embed cmd = {
		.hdr = { .opcode = RBLN_OP_EMBED, .size = sizeof(cmd) },
		.dst = OPND(0, 0, 96), .table = OPND(1, 0, sizeof(table)),
		.ids = OPND(2, 0, 12), .dtype = RBLN_DTYPE_F32, .dim = 8,
	};
	struct fake_env f;

	(void)state;
	fake_env_init(&f, 1);
	rng_fill(table, 32, -1.0f, 1.0f);
	run1(&cmd, sizeof(cmd), bos, 3, &f.env, 0);
	ids[2] = 4;
	run1(&cmd, sizeof(cmd), bos, 3, &f.env, -RBLN_EIO);
	ids[2] = -1;
	run1(&cmd, sizeof(cmd), bos, 3, &f.env, -RBLN_EIO);
	cmd.id_base = 2;
	ids[2] = 1;
	run1(&cmd, sizeof(cmd), bos, 3, &f.env, -RBLN_EIO);
	cmd.hdr.flags = RBLN_EMBED_ZERO_OUTSIDE;
	run1(&cmd, sizeof(cmd), bos, 3, &f.env, 0);
	free(out);
}

/* -------------------------------------------------------------- RMSNORM */

struct rms_ctx {
	uint32_t rows, dim, dtype, in_place;
	float eps, *x, *w;
	uint8_t *wbuf;
};

static void rms_run(void *p, const struct rbln_model_env *env, uint8_t *out)
{
	struct rms_ctx *c = p;
	uint64_t size = (uint64_t)c->rows * c->dim * 4;
	uint64_t wsize = (uint64_t)c->dim * test_dtype_size(c->dtype);
	uint8_t *src = c->in_place ? out : (uint8_t *)c->x;
	struct rbln_model_bo bos[3] = {
		{ out, size, RW }, { src, size, RO }, { c->wbuf, wsize, RO },
	};
	struct rbln_isa_rmsnorm cmd = {
		.hdr = { .opcode = RBLN_OP_RMSNORM, .size = sizeof(cmd) },
		.dst = OPND(0, 0, size), .src = OPND(c->in_place ? 0 : 1, 0, size),
		.weight = OPND(2, 0, wsize), .dtype = c->dtype, .dim = c->dim,
		.eps = f32_bits(c->eps),
	};

	if (c->in_place)
		memcpy(out, c->x, size);
	run1(&cmd, sizeof(cmd), bos, 3, env, 0);
}

static void rms_check(void *p, const uint8_t *out)
{
	struct rms_ctx *c = p;
	double ss, inv, want, tol;
	uint32_t r, d;
	float got;

	for (r = 0; r < c->rows; r++) {
		const float *x = c->x + (size_t)r * c->dim;

		ss = 0;
		for (d = 0; d < c->dim; d++)
			ss += (double)x[d] * x[d];
		inv = 1.0 / sqrt(ss / c->dim + c->eps);
		for (d = 0; d < c->dim; d++) {
			want = x[d] * inv * c->w[d];
			tol = (c->dim / 8 + 8) * U * fabs(want) + 1e-38;
			memcpy(&got, out + ((size_t)r * c->dim + d) * 4, 4);
			if (!(fabs(got - want) <= tol))
				fail_msg("rmsnorm dim %u dtype %u [%u,%u]: %.9g,"
					 " want %.9g", c->dim, c->dtype, r, d,
					 got, want);
		}
	}
}

static void rms_case(uint32_t rows, uint32_t dim, uint32_t dtype)
{
	struct rms_ctx c = { .rows = rows, .dim = dim, .dtype = dtype,
			     .eps = 1e-5f };
	struct variant_run vr = { rms_run, rms_check, &c,
				  (size_t)rows * dim * 4, 1 };
	uint8_t *a, *b;

	c.x = xmalloc((size_t)rows * dim * 4);
	c.w = xmalloc((size_t)dim * 4);
	c.wbuf = xmalloc((size_t)dim * 4);
	rng_fill(c.x, (size_t)rows * dim, -3.0f, 3.0f);
	rng_fill(c.w, dim, 0.5f, 1.5f);
	test_store(c.wbuf, dtype, c.w, dim);
	run_everywhere(&vr);
	/* In place: the same bits as out of place. */
	a = poisoned(vr.out_size);
	b = poisoned(vr.out_size);
	rms_run(&c, real_env(1), a);
	c.in_place = 1;
	rms_run(&c, real_env(1), b);
	assert_memory_equal(a, b, vr.out_size);
	free(a);
	free(b);
	free(c.x);
	free(c.w);
	free(c.wbuf);
}

static void test_rmsnorm(void **state)
{
	uint32_t dt;

	(void)state;
	for (dt = 0; dt < TEST_FLOAT_DTYPES; dt++) {
		rms_case(1, 1, dt);
		rms_case(3, 7, dt);
		rms_case(2, 8, dt);
		rms_case(5, 9, dt);
		rms_case(4, 2048, dt);
		rms_case(2, 20003, dt);
	}
	/* Enough rows for the engines to split. */
	rms_case(300, 4096, RBLN_DTYPE_BF16);
}

/* ----------------------------------------------------------------- ROPE */

struct rope_ctx {
	struct rbln_isa_rope cmd;
	uint32_t t;
	float *x;
	int32_t *pos;
};

static uint64_t rope_bytes(const struct rope_ctx *c)
{
	return ((uint64_t)(c->t - 1) * c->cmd.stride +
		(uint64_t)c->cmd.heads * c->cmd.head_dim) * 4;
}

static void rope_run(void *p, const struct rbln_model_env *env, uint8_t *out)
{
	struct rope_ctx *c = p;
	struct rbln_model_bo bos[2] = {
		{ out, rope_bytes(c), RW },
		{ (uint8_t *)c->pos, (uint64_t)c->t * 4, RO },
	};

	memcpy(out, c->x, rope_bytes(c));
	c->cmd.x = OPND(0, 0, bos[0].size);
	c->cmd.pos = OPND(1, 0, bos[1].size);
	run1(&c->cmd, sizeof(c->cmd), bos, 2, env, 0);
}

/* inv_freq as rbln_isa.h defines it (Hugging Face's float32 steps). */
static float rope_inv_freq(const struct rbln_isa_rope *c, uint32_t i)
{
	float e = (float)(2 * i) / (float)c->head_dim;
	float p = (float)pow((double)bits_f32(c->theta), (double)e);
	float inv = 1.0f / p;
	double f, lo, hi, old, wl, sm, r;

	if (c->scaling != RBLN_ROPE_SCALING_LLAMA3)
		return inv;
	f = bits_f32(c->factor);
	lo = bits_f32(c->low_freq_factor);
	hi = bits_f32(c->high_freq_factor);
	old = c->original_max_pos;
	wl = 2 * M_PI / inv;
	r = inv;
	if (wl > old / lo) {
		r = r / f;
	} else if (!(wl < old / hi)) {
		sm = (old / wl - lo) / (hi - lo);
		r = (1.0 - sm) * r / f + sm * r;
	}
	return (float)r;
}

static void rope_check(void *p, const uint8_t *out)
{
	struct rope_ctx *c = p;
	uint32_t half = c->cmd.head_dim / 2, t, h, i;
	double ang, x1, x2, w1, w2, tol;
	float g1, g2;
	size_t o;

	for (t = 0; t < c->t; t++)
		for (i = 0; i < half; i++) {
			ang = (float)((float)c->pos[t] *
				      rope_inv_freq(&c->cmd, i));
			for (h = 0; h < c->cmd.heads; h++) {
				o = (size_t)t * c->cmd.stride +
				    (size_t)h * c->cmd.head_dim + i;
				x1 = c->x[o];
				x2 = c->x[o + half];
				w1 = x1 * cos(ang) - x2 * sin(ang);
				w2 = x2 * cos(ang) + x1 * sin(ang);
				memcpy(&g1, out + o * 4, 4);
				memcpy(&g2, out + (o + half) * 4, 4);
				tol = 4 * U * (fabs(x1) + fabs(x2)) + 1e-38;
				if (!(fabs(g1 - w1) <= tol && fabs(g2 - w2) <= tol))
					fail_msg("rope pos %d i %u: (%.9g, %.9g) "
						 "want (%.9g, %.9g)", c->pos[t],
						 i, g1, g2, w1, w2);
			}
		}
	/* Between rows (stride > heads * head_dim): untouched. */
	for (t = 0; t + 1 < c->t; t++)
		for (o = (size_t)t * c->cmd.stride +
			 (size_t)c->cmd.heads * c->cmd.head_dim;
		     o < (size_t)(t + 1) * c->cmd.stride; o++)
			assert_memory_equal(out + o * 4, &c->x[o], 4);
}

static void rope_case(uint32_t t, uint32_t heads, uint32_t hd, uint32_t gap,
		      int llama3)
{
	struct rope_ctx c = { .t = t };
	struct variant_run vr = { rope_run, rope_check, &c, 0, 1 };
	uint32_t i;

	c.cmd = (struct rbln_isa_rope){
		.hdr = { .opcode = RBLN_OP_ROPE, .size = sizeof(c.cmd) },
		.heads = heads, .head_dim = hd, .stride = heads * hd + gap,
		.theta = f32_bits(llama3 ? 500000.0f : 10000.0f),
	};
	if (llama3) {
		c.cmd.scaling = RBLN_ROPE_SCALING_LLAMA3;
		c.cmd.factor = f32_bits(32.0f);
		c.cmd.low_freq_factor = f32_bits(1.0f);
		c.cmd.high_freq_factor = f32_bits(4.0f);
		c.cmd.original_max_pos = 8192;
	}
	vr.out_size = rope_bytes(&c);
	c.x = xmalloc(vr.out_size);
	c.pos = xmalloc((size_t)t * 4);
	rng_fill(c.x, vr.out_size / 4, -2.0f, 2.0f);
	for (i = 0; i < t; i++)
		c.pos[i] = (int32_t)(i % 4 == 0 ? i : rng_range(0, 131072));
	c.pos[t - 1] = t > 2 ? 0x7fffffff : c.pos[t - 1];
	run_everywhere(&vr);
	free(c.x);
	free(c.pos);
}

static void test_rope(void **state)
{
	(void)state;
	rope_case(1, 1, 2, 0, 0);
	rope_case(5, 3, 64, 0, 0);
	rope_case(7, 4, 128, 64, 1);
	rope_case(4, 2, 256, 8, 1);
	rope_case(300, 8, 64, 0, 1);
}

static void test_rope_faults(void **state)
{
	float x[2 * 16];
	int32_t pos[2] = { 3, -1 };
	struct rbln_model_bo bos[2] = {
		{ (uint8_t *)x, sizeof(x), RW }, { (uint8_t *)pos, 8, RO },
	};
	struct rbln_isa_rope cmd = {
		.hdr = { .opcode = RBLN_OP_ROPE, .size = sizeof(cmd) },
		.x = OPND(0, 0, sizeof(x)), .pos = OPND(1, 0, 8), .heads = 1,
		.head_dim = 16, .stride = 16, .theta = f32_bits(10000.0f),
	};
	struct fake_env f;

	(void)state;
	rng_fill(x, 32, -1.0f, 1.0f);
	fake_env_init(&f, 1);
	run1(&cmd, sizeof(cmd), bos, 2, &f.env, -RBLN_EIO);
	pos[1] = 0;
	run1(&cmd, sizeof(cmd), bos, 2, &f.env, 0);
}

/* --------------------------------------------------------------- SWIGLU */

struct swiglu_ctx {
	uint32_t rows, n, gs, us;
	float *gate, *up;
};

static void swiglu_run(void *p, const struct rbln_model_env *env,
		       uint8_t *out)
{
	struct swiglu_ctx *c = p;
	uint64_t gsize = ((uint64_t)(c->rows - 1) * c->gs + c->n) * 4;
	uint64_t usize = ((uint64_t)(c->rows - 1) * c->us + c->n) * 4;
	struct rbln_model_bo bos[3] = {
		{ out, (uint64_t)c->rows * c->n * 4, RW },
		{ (uint8_t *)c->gate, gsize, RO },
		{ (uint8_t *)c->up, usize, RO },
	};
	struct rbln_isa_swiglu cmd = {
		.hdr = { .opcode = RBLN_OP_SWIGLU, .size = sizeof(cmd) },
		.dst = OPND(0, 0, bos[0].size), .gate = OPND(1, 0, gsize),
		.up = OPND(2, 0, usize), .n = c->n, .gate_stride = c->gs,
		.up_stride = c->us,
	};

	run1(&cmd, sizeof(cmd), bos, 3, env, 0);
}

static void swiglu_check(void *p, const uint8_t *out)
{
	struct swiglu_ctx *c = p;
	double g, u, want;
	uint32_t r, i;
	float got;

	for (r = 0; r < c->rows; r++)
		for (i = 0; i < c->n; i++) {
			g = c->gate[(size_t)r * c->gs + i];
			u = c->up[(size_t)r * c->us + i];
			want = g / (1.0 + exp(-g)) * u;
			memcpy(&got, out + ((size_t)r * c->n + i) * 4, 4);
			/* Plus the subnormal e^g of the far negative tail. */
			if (!(fabs(got - want) <= 16 * U * fabs(want) + 1e-40))
				fail_msg("swiglu g %.9g u %.9g: %.9g, want %.9g",
					 g, u, got, want);
		}
}

static void swiglu_case(uint32_t rows, uint32_t n, uint32_t gs, uint32_t us)
{
	struct swiglu_ctx c = { .rows = rows, .n = n, .gs = gs, .us = us };
	struct variant_run vr = { swiglu_run, swiglu_check, &c,
				  (size_t)rows * n * 4, 1 };
	size_t gn = (size_t)(rows - 1) * gs + n, un = (size_t)(rows - 1) * us + n;
	size_t i;

	c.gate = xmalloc(gn * 4);
	c.up = xmalloc(un * 4);
	rng_fill(c.gate, gn, -12.0f, 12.0f);
	rng_fill(c.up, un, -2.0f, 2.0f);
	/* exp(-g) overflowing and underflowing. */
	for (i = 0; i < gn; i += 7)
		c.gate[i] = (i % 2 ? 1.0f : -1.0f) * rng_uniform(80.0f, 120.0f);
	run_everywhere(&vr);
	free(c.gate);
	free(c.up);
}

static void test_swiglu(void **state)
{
	(void)state;
	swiglu_case(1, 1, 1, 1);
	swiglu_case(3, 7, 7, 9);
	swiglu_case(4, 33, 66, 66);
	swiglu_case(2, 20000, 40000, 20000);
	swiglu_case(100, 8192, 8192, 8192);
}

/* ------------------------------------------------------------- KV_WRITE */

struct kv_ctx {
	uint32_t t, blocks, bs, heads, hd, dtype, ks, vs, flags;
	float *k, *v;
	int32_t *slots;
};

static uint64_t kv_cache_bytes(const struct kv_ctx *c)
{
	return (uint64_t)c->blocks * c->bs * c->heads * c->hd *
	       test_dtype_size(c->dtype);
}

/* Element index of element @i of slot @s's row in @c's layout. */
static uint64_t kv_elem(const struct kv_ctx *c, uint32_t s, uint32_t i)
{
	if (c->flags & RBLN_KV_HEAD_MAJOR)
		return (((uint64_t)s / c->bs * c->heads + i / c->hd) * c->bs +
			s % c->bs) * c->hd + i % c->hd;
	return (uint64_t)s * c->heads * c->hd + i;
}

/* @out: the key cache, then the value cache. */
static void kv_run(void *p, const struct rbln_model_env *env, uint8_t *out)
{
	struct kv_ctx *c = p;
	uint64_t cb = kv_cache_bytes(c);
	uint64_t w = (uint64_t)c->heads * c->hd;
	struct rbln_model_bo bos[4] = {
		{ out, 2 * cb, RW },
		{ (uint8_t *)c->k, ((uint64_t)(c->t - 1) * c->ks + w) * 4, RO },
		{ (uint8_t *)c->v, ((uint64_t)(c->t - 1) * c->vs + w) * 4, RO },
		{ (uint8_t *)c->slots, (uint64_t)c->t * 4, RO },
	};
	struct rbln_isa_kv_write cmd = {
		.hdr = { .opcode = RBLN_OP_KV_WRITE, .size = sizeof(cmd),
			 .flags = c->flags },
		.k_cache = OPND(0, 0, cb), .v_cache = OPND(0, cb, cb),
		.k = OPND(1, 0, bos[1].size), .v = OPND(2, 0, bos[2].size),
		.slots = OPND(3, 0, bos[3].size), .dtype = c->dtype,
		.block_size = c->bs, .kv_heads = c->heads, .head_dim = c->hd,
		.k_stride = c->ks, .v_stride = c->vs,
	};

	run1(&cmd, sizeof(cmd), bos, 4, env, 0);
}

/* @got (of the cache's type) against float32 @x narrowed by the test. */
static void kv_expect(uint32_t dtype, const uint8_t *got, float x)
{
	uint32_t es = test_dtype_size(dtype);
	uint8_t want[4];
	uint16_t h;

	test_store(want, dtype, &x, 1);
	if (isnan(x) && dtype != RBLN_DTYPE_F32) {
		/* NaN stays NaN with its sign (payloads may differ). */
		memcpy(&h, got, 2);
		assert_true(isnan(test_load(got, dtype, 0)));
		assert_int_equal(h >> 15, f32_bits(x) >> 31);
		return;
	}
	if (memcmp(got, want, es))
		fail_msg("kv_write dtype %u: %08x stored as %04x, want %04x",
			 dtype, f32_bits(x), got[0] | got[1] << 8,
			 want[0] | want[1] << 8);
}

static void kv_check(void *p, const uint8_t *out)
{
	struct kv_ctx *c = p;
	uint64_t cb = kv_cache_bytes(c);
	uint32_t es = test_dtype_size(c->dtype), w = c->heads * c->hd;
	uint32_t nslots = c->blocks * c->bs, t, s, i;
	uint8_t *written = xmalloc(nslots);
	uint64_t at;
	uint32_t b;

	memset(written, 0, nslots);
	for (t = 0; t < c->t; t++) {
		if (c->slots[t] < 0)
			continue;
		s = (uint32_t)c->slots[t];
		written[s] = 1;
		for (i = 0; i < w; i++) {
			at = kv_elem(c, s, i) * es;
			kv_expect(c->dtype, out + at,
				  c->k[(size_t)t * c->ks + i]);
			kv_expect(c->dtype, out + cb + at,
				  c->v[(size_t)t * c->vs + i]);
		}
	}
	/* Slots nobody wrote keep their poison. */
	for (s = 0; s < nslots; s++)
		for (i = 0; !written[s] && i < w; i++)
			for (b = 0; b < es; b++) {
				at = kv_elem(c, s, i) * es + b;
				assert_int_equal(out[at], 0xff);
				assert_int_equal(out[cb + at], 0xff);
			}
	free(written);
}

static void kv_case(uint32_t t, uint32_t blocks, uint32_t bs, uint32_t heads,
		    uint32_t hd, uint32_t dtype, uint32_t gap)
{
	static const uint32_t special[] = {
		0x7f800000, 0xff800000, 0x7fc00001, 0xffa00000, 0x00000001,
		0x80000000, 0x477ff000, 0x477fefff, 0x33800000, 0x387fc000,
		0x3f808000, 0x3f818000, 0x7f7fffff, 0x00800000,
	};
	struct kv_ctx c = { .t = t, .blocks = blocks, .bs = bs, .heads = heads,
			    .hd = hd, .dtype = dtype, .ks = heads * hd + gap,
			    .vs = heads * hd };
	struct variant_run vr = { kv_run, kv_check, &c, 0, 1 };
	uint32_t nslots = blocks * bs, i, j, s, *perm;
	size_t kn = (size_t)(t - 1) * c.ks + heads * hd;
	size_t vn = (size_t)(t - 1) * c.vs + heads * hd;

	assert_true(t <= nslots);
	vr.out_size = 2 * kv_cache_bytes(&c);
	c.k = xmalloc(kn * 4);
	c.v = xmalloc(vn * 4);
	c.slots = xmalloc((size_t)t * 4);
	rng_fill(c.k, kn, -4.0f, 4.0f);
	rng_fill(c.v, vn, -4.0f, 4.0f);
	for (i = 0; i < kn; i += 5)
		memcpy(&c.k[i], &special[i % 14], 4);
	/* Distinct slots in random order; some tokens are padding (-1). */
	perm = xmalloc((size_t)nslots * 4);
	for (i = 0; i < nslots; i++)
		perm[i] = i;
	for (i = nslots - 1; i > 0; i--) {
		j = (uint32_t)rng_range(0, i);
		s = perm[i];
		perm[i] = perm[j];
		perm[j] = s;
	}
	for (i = 0; i < t; i++)
		c.slots[i] = i % 4 == 1 ? -1 : (int32_t)perm[i];
	free(perm);
	run_everywhere(&vr);
	c.flags = RBLN_KV_HEAD_MAJOR;
	run_everywhere(&vr);
	free(c.k);
	free(c.v);
	free(c.slots);
}

static void test_kv_write(void **state)
{
	uint32_t dt;

	(void)state;
	for (dt = 0; dt < TEST_FLOAT_DTYPES; dt++) {
		kv_case(1, 1, 1, 1, 8, dt, 0);
		kv_case(5, 3, 4, 2, 16, dt, 8);
		kv_case(30, 7, 16, 4, 64, dt, 0);
		kv_case(600, 40, 16, 8, 64, dt, 0);
	}
}

static void test_kv_write_faults(void **state)
{
	uint16_t cache[2 * 4 * 8];
	float k[2 * 8];
	int32_t slots[2] = { 0, 4 };
	struct rbln_model_bo bos[3] = {
		{ (uint8_t *)cache, sizeof(cache), RW },
		{ (uint8_t *)k, sizeof(k), RO },
		{ (uint8_t *)slots, 8, RO },
	};
	struct rbln_isa_kv_write cmd = {
		.hdr = { .opcode = RBLN_OP_KV_WRITE, .size = sizeof(cmd) },
		.k_cache = OPND(0, 0, 64), .v_cache = OPND(0, 64, 64),
		.k = OPND(1, 0, 64), .v = OPND(1, 0, 64), .slots = OPND(2, 0, 8),
		.dtype = RBLN_DTYPE_BF16, .block_size = 2, .kv_heads = 1,
		.head_dim = 8, .k_stride = 8, .v_stride = 8,
	};
	struct fake_env f;

	(void)state;
	rng_fill(k, 16, -1.0f, 1.0f);
	fake_env_init(&f, 1);
	/* 2 blocks of 2 slots: slot 4 is past the cache. */
	run1(&cmd, sizeof(cmd), bos, 3, &f.env, -RBLN_EIO);
	slots[1] = 3;
	run1(&cmd, sizeof(cmd), bos, 3, &f.env, 0);
	slots[1] = -7;
	run1(&cmd, sizeof(cmd), bos, 3, &f.env, 0);
}

/* -------------------------------------------------------- ARGMAX, TOPK */

/* The order of rbln_isa.h: NaN first, then by value, ties by index. */
static int ref_better(float a, uint32_t ia, float b, uint32_t ib)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && (!isnan(b) || ia < ib);
	return a > b || (a == b && ia < ib);
}

struct sel_ctx {
	uint32_t rows, n, k, base, topk;
	float *src;
};

/* @out: values [rows, k] then indices [rows, k]. */
static void sel_run(void *p, const struct rbln_model_env *env, uint8_t *out)
{
	struct sel_ctx *c = p;
	uint64_t osize = (uint64_t)c->rows * c->k * 4;
	struct rbln_model_bo bos[2] = {
		{ out, 2 * osize, RW },
		{ (uint8_t *)c->src, (uint64_t)c->rows * c->n * 4, RO },
	};
	struct rbln_isa_argmax am = {
		.hdr = { .opcode = RBLN_OP_ARGMAX, .size = sizeof(am) },
		.values = OPND(0, 0, osize), .indices = OPND(0, osize, osize),
		.src = OPND(1, 0, bos[1].size), .n = c->n,
		.index_base = c->base,
	};
	struct rbln_isa_topk tk = {
		.hdr = { .opcode = RBLN_OP_TOPK, .size = sizeof(tk) },
		.values = OPND(0, 0, osize), .indices = OPND(0, osize, osize),
		.src = OPND(1, 0, bos[1].size), .n = c->n, .k = c->k,
		.index_base = c->base,
	};

	if (c->topk)
		run1(&tk, sizeof(tk), bos, 2, env, 0);
	else
		run1(&am, sizeof(am), bos, 2, env, 0);
}

static void sel_check(void *p, const uint8_t *out)
{
	struct sel_ctx *c = p;
	uint64_t osize = (uint64_t)c->rows * c->k * 4;
	uint32_t r, j, i, best, *used = xmalloc((size_t)c->n * 4);
	const float *x;
	float gv;
	int32_t gi;

	for (r = 0; r < c->rows; r++) {
		x = c->src + (size_t)r * c->n;
		memset(used, 0, (size_t)c->n * 4);
		for (j = 0; j < c->k; j++) {
			best = c->n;
			for (i = 0; i < c->n; i++)
				if (!used[i] && (best == c->n ||
						 ref_better(x[i], i, x[best],
							    best)))
					best = i;
			used[best] = 1;
			memcpy(&gv, out + ((size_t)r * c->k + j) * 4, 4);
			memcpy(&gi, out + osize + ((size_t)r * c->k + j) * 4, 4);
			if (gi != (int32_t)(best + c->base) ||
			    f32_bits(gv) != f32_bits(x[best]))
				fail_msg("%s n %u k %u row %u #%u: %g at %d, "
					 "want %g at %u", c->topk ? "topk" :
					 "argmax", c->n, c->k, r, j, gv, gi,
					 x[best], best + c->base);
		}
	}
	free(used);
}

static void sel_case(uint32_t rows, uint32_t n, uint32_t k, int topk)
{
	static const float pool[] = { 1.0f, -1.0f, 0.0f, -0.0f, 2.5f,
				      INFINITY, -INFINITY, 1e-40f };
	struct sel_ctx c = { .rows = rows, .n = n, .k = k, .topk = topk,
			     .base = (uint32_t)rng_range(0, 100000) };
	struct variant_run vr = { sel_run, sel_check, &c,
				  2 * (size_t)rows * k * 4, 1 };
	size_t i;
	uint32_t r;

	c.src = xmalloc((size_t)rows * n * 4);
	rng_fill(c.src, (size_t)rows * n, -10.0f, 10.0f);
	for (r = 0; r < rows; r++) {
		float *x = c.src + (size_t)r * n;

		switch (r % 4) {
		case 1: /* ties everywhere */
			for (i = 0; i < n; i++)
				x[i] = pool[rng_range(0, 7)];
			break;
		case 2: /* NaNs, some early, some late */
			x[rng_range(0, n - 1)] = NAN;
			x[n - 1] = -NAN;
			break;
		case 3: /* all equal */
			for (i = 0; i < n; i++)
				x[i] = 3.0f;
			break;
		}
	}
	run_everywhere(&vr);
	free(c.src);
}

static void test_argmax(void **state)
{
	(void)state;
	sel_case(4, 1, 1, 0);
	sel_case(8, 7, 1, 0);
	sel_case(8, 8, 1, 0);
	sel_case(8, 9, 1, 0);
	sel_case(8, 1000, 1, 0);
	sel_case(4, 40000, 1, 0);
	sel_case(8, 5, 1, 1);
}

static void test_topk(void **state)
{
	(void)state;
	sel_case(4, 1, 1, 1);
	sel_case(8, 9, 9, 1);
	sel_case(8, 100, 5, 1);
	sel_case(8, 1000, 40, 1);
	sel_case(4, 40000, 50, 1);
	sel_case(4, 2000, 1024, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embed),
		cmocka_unit_test(test_embed_faults),
		cmocka_unit_test(test_rmsnorm),
		cmocka_unit_test(test_rope),
		cmocka_unit_test(test_rope_faults),
		cmocka_unit_test(test_swiglu),
		cmocka_unit_test(test_kv_write),
		cmocka_unit_test(test_kv_write_faults),
		cmocka_unit_test(test_argmax),
		cmocka_unit_test(test_topk),
	};

	rng_seed_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
