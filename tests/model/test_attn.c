// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_attn.c - ATTENTION against a float64 softmax reference: decode for
 * a batch of sequences of different lengths, causal prefill over a cached
 * prefix plus a new chunk, one-token sequences, sequences ending exactly
 * on a partition boundary, GQA and MQA head mappings, every cache type and
 * both CPU variants. Then the promises: partitioned equals unpartitioned
 * (to rounding), paged equals contiguous and any block size (bit for
 * bit), either cache layout (token- or head-major, bit for bit), any engine
 * count (bit for bit); rows of no sequence untouched; KV_WRITE then
 * ATTENTION in one stream, in both layouts; and every run-time fault of the
 * descriptors and block tables.
 *
 * Tolerance: the output is a convex combination of values; the float32
 * scores carry errors of about head_dim u |q||k| scale, which move the
 * weights relatively by as much, so |got - ref| <= 2^-14 max|v| leaves
 * room for that and still catches a wrong token, head or weight (errors
 * of order |v|).
 */
#include <math.h>

#include "model_test.h"

#define RW	(RBLN_MODEL_READ | RBLN_MODEL_WRITE)
#define RO	RBLN_MODEL_READ

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	assert_non_null(p);
	return p;
}

/**
 * struct attn - one ATTENTION problem
 * @nseq: sequences
 * @q_len: query rows per sequence
 * @ctx: context length per sequence (new tokens included)
 * @q_start: first query row per sequence
 * @rows: query rows in all (T)
 * @extra_rows: rows no sequence uses (must stay untouched)
 * @hq: query heads
 * @hkv: KV heads
 * @hd: head_dim
 * @bs: block size
 * @plen: partition length
 * @dtype: cache type
 * @max_blocks: block-table row length
 * @nblocks: cache blocks
 * @q_stride: floats between query rows
 * @flags: the commands' header flags: 0 or RBLN_KV_HEAD_MAJOR
 * @scale: score scale
 * @q: queries
 * @k: keys per sequence [ctx][hkv][hd], rounded to @dtype
 * @v: values, likewise
 * @table: block tables [nseq][max_blocks]
 * @kc: key cache
 * @vc: value cache
 */
struct attn {
	uint32_t nseq;
	uint32_t q_len[8], ctx[8], q_start[8];
	uint32_t rows, extra_rows;
	uint32_t hq, hkv, hd, bs, plen, dtype, max_blocks, nblocks, q_stride;
	uint32_t flags;
	float scale;
	float *q;
	float *k[8], *v[8];
	int32_t *table;
	uint8_t *kc, *vc;
};

static uint64_t cache_bytes(const struct attn *a)
{
	return (uint64_t)a->nblocks * a->bs * a->hkv * a->hd *
	       test_dtype_size(a->dtype);
}

/* Element index of KV head @h of cache slot @slot, in @a's layout. */
static uint64_t attn_elem(const struct attn *a, uint64_t slot, uint32_t h)
{
	if (a->flags & RBLN_KV_HEAD_MAJOR)
		return ((slot / a->bs * a->hkv + h) * a->bs + slot % a->bs) *
		       a->hd;
	return (slot * a->hkv + h) * a->hd;
}

/* Writes every sequence's keys and values into the blocks of its table. */
static void attn_place(struct attn *a)
{
	uint32_t es = test_dtype_size(a->dtype), s, t, i, w = a->hkv * a->hd;
	uint64_t slot, at;

	memset(a->kc, 0xff, cache_bytes(a));
	memset(a->vc, 0xff, cache_bytes(a));
	for (s = 0; s < a->nseq; s++)
		for (t = 0; t < a->ctx[s]; t++) {
			slot = (uint64_t)a->table[s * a->max_blocks + t / a->bs] *
			       a->bs + t % a->bs;
			for (i = 0; i < w; i++) {
				at = (attn_elem(a, slot, i / a->hd) +
				      i % a->hd) * es;
				test_store(a->kc + at, a->dtype,
					   &a->k[s][(size_t)t * w + i], 1);
				test_store(a->vc + at, a->dtype,
					   &a->v[s][(size_t)t * w + i], 1);
			}
		}
}

/* Gives each sequence distinct blocks in random order. */
static void attn_tables(struct attn *a, int shuffle)
{
	uint32_t i, j, tmp, n = a->nseq * a->max_blocks;
	uint32_t *perm = xmalloc((size_t)n * 4);

	for (i = 0; i < n; i++)
		perm[i] = i;
	for (i = n - 1; shuffle && i > 0; i--) {
		j = (uint32_t)rng_range(0, i);
		tmp = perm[i];
		perm[i] = perm[j];
		perm[j] = tmp;
	}
	for (i = 0; i < n; i++)
		a->table[i] = (int32_t)perm[i];
	free(perm);
}

/* A problem with random data; @q_len and @ctx per sequence given. */
static void attn_init(struct attn *a, uint32_t nseq, const uint32_t *q_len,
		      const uint32_t *ctx, uint32_t hq, uint32_t hkv,
		      uint32_t hd, uint32_t bs, uint32_t plen, uint32_t dtype)
{
	uint32_t s, maxctx = 1, i, w = hkv * hd;
	size_t n;

	memset(a, 0, sizeof(*a));
	a->nseq = nseq;
	a->hq = hq;
	a->hkv = hkv;
	a->hd = hd;
	a->bs = bs;
	a->plen = plen;
	a->dtype = dtype;
	a->extra_rows = 2;
	a->q_stride = hq * hd + 8;
	a->scale = (float)(1.0 / sqrt(hd));
	for (s = 0; s < nseq; s++) {
		a->q_len[s] = q_len[s];
		a->ctx[s] = ctx[s];
		/* Sequences' rows interleaved with unused ones. */
		a->q_start[s] = a->rows + (s == 1);
		a->rows = a->q_start[s] + q_len[s];
		if (ctx[s] > maxctx)
			maxctx = ctx[s];
	}
	a->rows += 1;
	a->max_blocks = (maxctx + bs - 1) / bs + 1;
	a->nblocks = nseq * a->max_blocks;
	n = (size_t)(a->rows - 1) * a->q_stride + hq * hd;
	a->q = xmalloc(n * 4);
	rng_fill(a->q, n, -1.0f, 1.0f);
	for (s = 0; s < nseq; s++) {
		n = (size_t)ctx[s] * w;
		a->k[s] = xmalloc(n * 4);
		a->v[s] = xmalloc(n * 4);
		rng_fill(a->k[s], n, -1.0f, 1.0f);
		rng_fill(a->v[s], n, -1.0f, 1.0f);
		/* As the cache will hold them. */
		for (i = 0; i < n; i++) {
			uint8_t tmp[4];

			test_store(tmp, dtype, &a->k[s][i], 1);
			test_store(tmp, dtype, &a->v[s][i], 1);
		}
	}
	a->table = xmalloc((size_t)nseq * a->max_blocks * 4);
	a->kc = xmalloc(cache_bytes(a));
	a->vc = xmalloc(cache_bytes(a));
	attn_tables(a, 1);
	attn_place(a);
}

static void attn_free(struct attn *a)
{
	uint32_t s;

	for (s = 0; s < a->nseq; s++) {
		free(a->k[s]);
		free(a->v[s]);
	}
	free(a->q);
	free(a->table);
	free(a->kc);
	free(a->vc);
}

static uint64_t attn_parts(const struct attn *a)
{
	return ((uint64_t)a->max_blocks * a->bs + a->plen - 1) / a->plen;
}

/* The buffers and the command; out poisoned; returns what ran. */
static int attn_exec(const struct attn *a, const struct rbln_model_env *env,
		     float **out_ret)
{
	uint64_t osize = (uint64_t)a->rows * a->hq * a->hd * 4;
	uint64_t qsize = ((uint64_t)(a->rows - 1) * a->q_stride +
			  a->hq * a->hd) * 4;
	uint64_t wsize = (uint64_t)a->rows * a->hq * attn_parts(a) *
			 (a->hd + 2) * 4;
	int32_t *seqs = xmalloc((size_t)a->nseq * 16);
	uint8_t *out = poisoned(osize), *work = poisoned(wsize);
	struct rbln_model_bo bos[7] = {
		{ out, osize, RW },
		{ (uint8_t *)a->q, qsize, RO },
		{ a->kc, cache_bytes(a), RO },
		{ a->vc, cache_bytes(a), RO },
		{ (uint8_t *)seqs, (uint64_t)a->nseq * 16, RO },
		{ (uint8_t *)a->table, (uint64_t)a->nseq * a->max_blocks * 4,
		  RO },
		{ work, wsize, RW },
	};
	struct rbln_isa_attention cmd = {
		.hdr = { .opcode = RBLN_OP_ATTENTION, .size = sizeof(cmd),
			 .flags = a->flags },
		.out = OPND(0, 0, osize), .q = OPND(1, 0, qsize),
		.k_cache = OPND(2, 0, bos[2].size),
		.v_cache = OPND(3, 0, bos[3].size),
		.seqs = OPND(4, 0, bos[4].size),
		.block_tables = OPND(5, 0, bos[5].size),
		.work = OPND(6, 0, wsize), .dtype = a->dtype,
		.block_size = a->bs, .q_heads = a->hq, .kv_heads = a->hkv,
		.head_dim = a->hd, .q_stride = a->q_stride,
		.max_blocks = a->max_blocks, .partition_len = a->plen,
		.scale = f32_bits(a->scale),
	};
	struct sb sb;
	uint32_t s;
	int ret;

	for (s = 0; s < a->nseq; s++) {
		seqs[4 * s] = (int32_t)a->q_start[s];
		seqs[4 * s + 1] = (int32_t)a->q_len[s];
		seqs[4 * s + 2] = (int32_t)a->ctx[s];
		seqs[4 * s + 3] = (int32_t)s;
	}
	sb_init(&sb);
	sb_cmd_struct(&sb, cmd);
	ret = run_ret(&sb, bos, 7, env);
	sb_free(&sb);
	free(seqs);
	free(work);
	*out_ret = (float *)out;
	return ret;
}

static float *attn_run(const struct attn *a, const struct rbln_model_env *env)
{
	float *out;

	assert_int_equal(attn_exec(a, env, &out), 0);
	return out;
}

/* float64 softmax attention, row by row. */
static void attn_check(const struct attn *a, const float *out,
		       const char *what)
{
	uint32_t g = a->hq / a->hkv, w = a->hkv * a->hd;
	uint32_t s, i, h, t, d, kvh, pos, r;
	double *sc, m, sum, o, tol;
	const float *q;
	float got;

	sc = xmalloc(4096 * sizeof(*sc));
	for (s = 0; s < a->nseq; s++)
		for (i = 0; i < a->q_len[s]; i++) {
			r = a->q_start[s] + i;
			pos = a->ctx[s] - a->q_len[s] + i;
			assert_true(pos < 4096);
			for (h = 0; h < a->hq; h++) {
				kvh = h / g;
				q = a->q + (size_t)r * a->q_stride +
				    (size_t)h * a->hd;
				m = -INFINITY;
				for (t = 0; t <= pos; t++) {
					sc[t] = 0;
					for (d = 0; d < a->hd; d++)
						sc[t] += (double)q[d] *
							 a->k[s][(size_t)t * w +
							 kvh * a->hd + d];
					sc[t] *= a->scale;
					if (sc[t] > m)
						m = sc[t];
				}
				sum = 0;
				for (t = 0; t <= pos; t++) {
					sc[t] = exp(sc[t] - m);
					sum += sc[t];
				}
				tol = ldexp(1.0, -14);
				for (d = 0; d < a->hd; d++) {
					o = 0;
					for (t = 0; t <= pos; t++)
						o += sc[t] * a->v[s][(size_t)t * w +
								     kvh * a->hd + d];
					o /= sum;
					got = out[((size_t)r * a->hq + h) *
						  a->hd + d];
					if (!(fabs(got - o) <= tol))
						fail_msg("%s %s: seq %u row %u "
							 "head %u [%u]: %.9g, "
							 "want %.9g", what,
							 rbln_model_kernels()->name,
							 s, i, h, d, got, o);
				}
			}
		}
	free(sc);
}

/* Rows of no sequence (and their poison) are untouched. */
static void attn_check_unused(const struct attn *a, const float *out)
{
	uint32_t r, s, used, j;
	uint32_t bits;

	for (r = 0; r < a->rows; r++) {
		used = 0;
		for (s = 0; s < a->nseq; s++)
			used |= r >= a->q_start[s] &&
				r < a->q_start[s] + a->q_len[s];
		for (j = 0; !used && j < a->hq * a->hd; j++) {
			memcpy(&bits, &out[(size_t)r * a->hq * a->hd + j], 4);
			assert_int_equal(bits, 0xffffffff);
		}
	}
}

/*
 * Every variant and dtype: reference, untouched rows; the head-major
 * layout gives the token-major one's bits.
 */
static void attn_case(uint32_t nseq, const uint32_t *q_len,
		      const uint32_t *ctx, uint32_t hq, uint32_t hkv,
		      uint32_t hd, uint32_t bs, uint32_t plen, const char *what)
{
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i, dt;
	struct fake_env f;
	float *out, *hm;
	struct attn a;

	fake_env_init(&f, 1);
	for (dt = 0; dt < TEST_FLOAT_DTYPES; dt++) {
		attn_init(&a, nseq, q_len, ctx, hq, hkv, hd, bs, plen, dt);
		for (i = 0; i < nv; i++) {
			test_set_variant(v[i]);
			a.flags = 0;
			attn_place(&a);
			out = attn_run(&a, &f.env);
			attn_check(&a, out, what);
			attn_check_unused(&a, out);
			a.flags = RBLN_KV_HEAD_MAJOR;
			attn_place(&a);
			hm = attn_run(&a, &f.env);
			attn_check_unused(&a, hm);
			assert_memory_equal(out, hm, (size_t)a.rows * a.hq *
					    a.hd * 4);
			free(hm);
			free(out);
		}
		attn_free(&a);
	}
	rbln_model_set_cpu(RBLN_MODEL_CPU_AUTO);
}

static void test_attn_decode(void **state)
{
	/* Lengths around the partition (32) and the tile (16). */
	static const uint32_t q_len[] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	static const uint32_t ctx[] = { 1, 15, 16, 17, 32, 64, 65, 200 };

	(void)state;
	attn_case(8, q_len, ctx, 8, 2, 64, 16, 32, "decode GQA");
	attn_case(3, q_len, ctx + 4, 4, 4, 16, 4, 32, "decode MHA");
	attn_case(3, q_len, ctx + 5, 6, 1, 8, 7, 9, "decode MQA");
}

static void test_attn_prefill(void **state)
{
	/*
	 * A chunk alone, a chunk after a prefix, a one-token sequence, a
	 * chunk ending exactly on a partition boundary, one spanning
	 * several partitions.
	 */
	static const uint32_t q_len[] = { 7, 5, 1, 33, 40 };
	static const uint32_t ctx[] = { 7, 40, 1, 64, 100 };

	(void)state;
	attn_case(5, q_len, ctx, 4, 2, 16, 16, 32, "prefill GQA");
	attn_case(5, q_len, ctx, 12, 2, 8, 5, 16, "prefill 6 per KV head");
	attn_case(5, q_len, ctx, 3, 1, 24, 64, 1000, "prefill MQA");
}

/* Partition lengths change only rounding. */
static void test_attn_partitions(void **state)
{
	static const uint32_t q_len[] = { 1, 9, 1, 20 };
	static const uint32_t ctx[] = { 300, 60, 17, 97 };
	static const uint32_t plens[] = { 1, 5, 16, 17, 64, 512 };
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i, p, j;
	struct fake_env f;
	float *base, *got;
	struct attn a;
	size_t n;

	(void)state;
	fake_env_init(&f, 1);
	for (i = 0; i < nv; i++) {
		test_set_variant(v[i]);
		attn_init(&a, 4, q_len, ctx, 8, 2, 32, 16, 1024,
			  RBLN_DTYPE_BF16);
		n = (size_t)a.rows * a.hq * a.hd;
		base = attn_run(&a, &f.env);
		attn_check(&a, base, "unpartitioned");
		for (p = 0; p < sizeof(plens) / sizeof(plens[0]); p++) {
			a.plen = plens[p];
			got = attn_run(&a, &f.env);
			attn_check(&a, got, "partitioned");
			for (j = 0; j < n; j++)
				if (!(fabsf(got[j] - base[j]) <= 1e-5f) &&
				    !(isnan(got[j]) && isnan(base[j])))
					fail_msg("partition %u [%u]: %.9g vs "
						 "%.9g", a.plen, j, got[j],
						 base[j]);
			free(got);
		}
		free(base);
		attn_free(&a);
	}
	rbln_model_set_cpu(RBLN_MODEL_CPU_AUTO);
}

/*
 * Where the blocks are, how big, and how laid out (token- or head-major)
 * changes nothing at all.
 */
static void test_attn_paged(void **state)
{
	static const uint32_t q_len[] = { 3, 1, 12 };
	static const uint32_t ctx[] = { 70, 129, 40 };
	static const uint32_t sizes[] = { 1, 3, 16, 64, 256 };
	static const uint32_t layouts[] = { 0, RBLN_KV_HEAD_MAJOR };
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i, b, dt, l;
	struct fake_env f;
	float *base, *got;
	struct attn a;
	size_t n;

	(void)state;
	fake_env_init(&f, 1);
	for (i = 0; i < nv; i++) {
		test_set_variant(v[i]);
		for (dt = 0; dt < TEST_FLOAT_DTYPES; dt++) {
			attn_init(&a, 3, q_len, ctx, 4, 2, 16, 16, 32, dt);
			n = (size_t)a.rows * a.hq * a.hd * 4;
			/* Contiguous: sequence s in blocks s*mb, s*mb+1, ... */
			attn_tables(&a, 0);
			attn_place(&a);
			base = attn_run(&a, &f.env);
			attn_check(&a, base, "contiguous");
			attn_tables(&a, 1);
			attn_place(&a);
			got = attn_run(&a, &f.env);
			assert_memory_equal(base, got, n);
			free(got);
			for (b = 0; b < 2 * sizeof(sizes) / sizeof(sizes[0]);
			     b++) {
				l = b % 2;
				a.flags = layouts[l];
				free(a.table);
				free(a.kc);
				free(a.vc);
				a.bs = sizes[b / 2];
				a.max_blocks = (129 + a.bs - 1) / a.bs + 1;
				a.nblocks = a.nseq * a.max_blocks;
				a.table = xmalloc((size_t)a.nblocks * 4);
				a.kc = xmalloc(cache_bytes(&a));
				a.vc = xmalloc(cache_bytes(&a));
				attn_tables(&a, 1);
				attn_place(&a);
				got = attn_run(&a, &f.env);
				assert_memory_equal(base, got, n);
				free(got);
			}
			free(base);
			attn_free(&a);
		}
	}
	rbln_model_set_cpu(RBLN_MODEL_CPU_AUTO);
}

/*
 * The engine count changes nothing. A prompt of 100 rows among decode rows:
 * with 5 engines and more its rows are split into blocks as well (fewer
 * pieces with tokens than eight per engine), claimed last rows first.
 */
static void test_attn_engines(void **state)
{
	static const uint32_t q_len[] = { 1, 1, 100, 1 };
	static const uint32_t ctx[] = { 300, 33, 130, 1 };
	static const uint32_t engines[] = { 2, 3, 4, 5, 6, 16, 33, 64 };
	uint32_t v[RBLN_MODEL_CPU_COUNT], nv = test_variants(v), i, e, n;
	struct fake_env f;
	float *base, *got;
	struct attn a;

	(void)state;
	for (i = 0; i < nv; i++) {
		test_set_variant(v[i]);
		attn_init(&a, 4, q_len, ctx, 8, 2, 32, 16, 32, RBLN_DTYPE_F16);
		/* The layout the engine uses. */
		a.flags = RBLN_KV_HEAD_MAJOR;
		attn_place(&a);
		fake_env_init(&f, 1);
		base = attn_run(&a, &f.env);
		attn_check(&a, base, "engines");
		for (n = 0; n < sizeof(engines) / sizeof(engines[0]); n++) {
			e = engines[n];
			fake_env_init(&f, e);
			f.reverse = e % 2;
			got = attn_run(&a, e == 6 ? real_env(3) :
					   e == 64 ? real_env(16) : &f.env);
			assert_memory_equal(base, got, (size_t)a.rows * a.hq *
					    a.hd * 4);
			free(got);
		}
		free(base);
		attn_free(&a);
	}
	rbln_model_set_cpu(RBLN_MODEL_CPU_AUTO);
}

/*
 * Decode as the engine runs it: KV_WRITE of the new token, then ATTENTION
 * over the cache, in one stream.
 */
static void test_attn_after_kv_write(void **state)
{
	static const uint32_t q_len[] = { 1, 1, 1 };
	static const uint32_t ctx[] = { 50, 17, 1 };
	uint32_t w, s, dt, l, h, slot[3];
	float *newk, *newv, *out;
	struct fake_env f;
	struct attn a;

	(void)state;
	fake_env_init(&f, 2);
	for (dt = 0; dt < 2 * TEST_FLOAT_DTYPES; dt++) {
		l = dt % 2;
		attn_init(&a, 3, q_len, ctx, 4, 2, 16, 8, 16, dt / 2);
		a.flags = l ? RBLN_KV_HEAD_MAJOR : 0;
		attn_place(&a);
		w = a.hkv * a.hd;
		/* The last token of each sequence comes from KV_WRITE. */
		newk = xmalloc((size_t)a.nseq * w * 4);
		newv = xmalloc((size_t)a.nseq * w * 4);
		for (s = 0; s < a.nseq; s++) {
			uint32_t t = a.ctx[s] - 1;

			memcpy(newk + (size_t)s * w,
			       a.k[s] + (size_t)t * w, (size_t)w * 4);
			memcpy(newv + (size_t)s * w,
			       a.v[s] + (size_t)t * w, (size_t)w * 4);
			slot[s] = (uint32_t)a.table[s * a.max_blocks + t / a.bs] *
				  a.bs + t % a.bs;
			for (h = 0; h < a.hkv; h++)
				memset(a.kc + attn_elem(&a, slot[s], h) *
				       test_dtype_size(a.dtype), 0xff,
				       (size_t)a.hd * test_dtype_size(a.dtype));
		}
		{
			struct rbln_model_bo bos[4] = {
				{ a.kc, cache_bytes(&a), RW },
				{ a.vc, cache_bytes(&a), RW },
				{ (uint8_t *)newk, (uint64_t)a.nseq * w * 4,
				  RO },
				{ (uint8_t *)slot, sizeof(slot), RO },
			};
			struct rbln_isa_kv_write kw = {
				.hdr = { .opcode = RBLN_OP_KV_WRITE,
					 .size = sizeof(kw), .flags = a.flags },
				.k_cache = OPND(0, 0, cache_bytes(&a)),
				.v_cache = OPND(1, 0, cache_bytes(&a)),
				.k = OPND(2, 0, bos[2].size),
				.v = OPND(2, 0, bos[2].size),
				.slots = OPND(3, 0, sizeof(slot)),
				.dtype = a.dtype, .block_size = a.bs,
				.kv_heads = a.hkv, .head_dim = a.hd,
				.k_stride = w, .v_stride = w,
			};
			struct sb sb;

			/* Keys and values from one buffer: v = k here. */
			for (s = 0; s < a.nseq; s++)
				memcpy(a.v[s] + (size_t)(a.ctx[s] - 1) * w,
				       newk + (size_t)s * w, (size_t)w * 4);
			sb_init(&sb);
			sb_cmd_struct(&sb, kw);
			run_ok(&sb, bos, 4, &f.env);
			sb_free(&sb);
		}
		out = attn_run(&a, &f.env);
		attn_check(&a, out, "after KV_WRITE");
		free(out);
		free(newk);
		free(newv);
		attn_free(&a);
	}
}

/* Bad descriptors and block ids fault the job, never read outside. */
static void test_attn_faults(void **state)
{
	static const uint32_t q_len[] = { 2, 1 };
	static const uint32_t ctx[] = { 20, 9 };
	struct fake_env f;
	struct attn a;
	float *out;

	(void)state;
	fake_env_init(&f, 1);
	attn_init(&a, 2, q_len, ctx, 4, 2, 8, 4, 8, RBLN_DTYPE_F32);
	out = attn_run(&a, &f.env);
	free(out);
#define FAULT(stmt, undo)						\
	do {								\
		stmt;							\
		assert_int_equal(attn_exec(&a, &f.env, &out), -RBLN_EIO); \
		free(out);						\
		undo;							\
	} while (0)
	FAULT(a.q_start[1] = a.rows, a.q_start[1] = 3);
	FAULT(a.q_len[0] = a.rows + 1, a.q_len[0] = 2);
	FAULT(a.ctx[1] = 0, a.ctx[1] = 9);
	FAULT(a.ctx[0] = a.max_blocks * a.bs + 1, a.ctx[0] = 20);
	FAULT(a.q_start[0] = (uint32_t)-1, a.q_start[0] = 0);
	FAULT(a.table[0] = (int32_t)a.nblocks, a.table[0] = 0);
	FAULT(a.table[a.max_blocks] = -5, a.table[a.max_blocks] = 1);
#undef FAULT
	/* No query rows: nothing to do, nothing read. */
	a.q_len[0] = 0;
	a.ctx[0] = 0;
	a.table[0] = -1;
	assert_int_equal(attn_exec(&a, &f.env, &out), 0);
	free(out);
	attn_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attn_decode),
		cmocka_unit_test(test_attn_prefill),
		cmocka_unit_test(test_attn_partitions),
		cmocka_unit_test(test_attn_paged),
		cmocka_unit_test(test_attn_engines),
		cmocka_unit_test(test_attn_after_kv_write),
		cmocka_unit_test(test_attn_faults),
	};

	rng_seed_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
