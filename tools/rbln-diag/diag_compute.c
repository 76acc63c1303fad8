// SPDX-License-Identifier: MIT
/*
 * Compute: every opcode of the ISA on small shapes with random inputs,
 * each result against a golden one computed here in double precision
 * (from the same bf16-rounded inputs the device reads). The data-movement
 * and synchronisation opcodes (NOP, BARRIER, FILL, COPY, SEM_SIGNAL,
 * SEM_WAIT) are checked for their exact effect, ARGMAX and TOPK and the
 * gathers (EMBED, KV_WRITE) for exact results, the arithmetic ones within
 * 1e-4 relative to the result's magnitude (float32 rounding of short sums).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diag.h"

#define ARENA	(1u << 20)

/* One device's test arena: a mapped buffer carved into tensors. */
struct arena {
	npu_buffer *buf;
	unsigned char *map;
	uint64_t used;
	npu_stream *s;
	npu_queue *q;
	uint32_t rng;
	char why[200];
};

static void *take(struct arena *a, uint64_t bytes, struct npu_tensor *t)
{
	void *p = a->map + a->used;

	t->buf = a->buf;
	t->offset = a->used;
	a->used += (bytes + 63) & ~63ull;
	return p;
}

static float rnd(struct arena *a)
{
	a->rng = a->rng * 1664525u + 1013904223u;
	return (float)((a->rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static uint16_t to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

static double from_bf16(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static void rand_f32(struct arena *a, float *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = rnd(a);
}

static void rand_bf16(struct arena *a, uint16_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = to_bf16(rnd(a));
}

/* Runs the stream; false with a.why set when the job failed. */
static bool run(struct arena *a)
{
	return diag_run(a->s, a->q, a->why, sizeof(a->why)) == 0;
}

static bool close_to(struct arena *a, const char *op, const float *got, const double *want,
		     size_t n)
{
	double mag = 0;

	for (size_t i = 0; i < n; i++)
		mag = fmax(mag, fabs(want[i]));
	for (size_t i = 0; i < n; i++)
		if (!(fabs(got[i] - want[i]) <= 1e-4 * (1.0 + mag))) {
			snprintf(a->why, sizeof(a->why), "%s: element %zu is %.7g, golden %.7g",
				 op, i, got[i], want[i]);
			return false;
		}
	return true;
}

static bool t_sync(struct arena *a)
{
	struct npu_tensor tf, tc, ts;
	uint32_t *fill = take(a, 256, &tf), *copy = take(a, 256, &tc);
	uint64_t *sem = take(a, 8, &ts);

	*sem = 0;
	npu_stream_nop(a->s);
	npu_stream_fill(a->s, a->buf, tf.offset, 256, 0xc0ffee11u);
	npu_stream_barrier(a->s);
	npu_stream_copy(a->s, a->buf, tc.offset, a->buf, tf.offset, 256);
	npu_stream_sem_signal(a->s, a->buf, ts.offset, NPU_SEM_SET, 5);
	npu_stream_sem_signal(a->s, a->buf, ts.offset, NPU_SEM_ADD, 2);
	npu_stream_sem_wait(a->s, a->buf, ts.offset, NPU_SEM_GEQ, 7, 1000000000ull);
	if (!run(a))
		return false;
	for (int i = 0; i < 64; i++)
		if (fill[i] != 0xc0ffee11u || copy[i] != 0xc0ffee11u) {
			snprintf(a->why, sizeof(a->why), "FILL/COPY: word %d is 0x%08x/0x%08x", i,
				 fill[i], copy[i]);
			return false;
		}
	if (*sem != 7) {
		snprintf(a->why, sizeof(a->why), "SEM_SIGNAL: SET 5, ADD 2 left %llu",
			 (unsigned long long)*sem);
		return false;
	}
	return true;
}

static bool t_add(struct arena *a)
{
	enum { N = 1000 };
	struct npu_tensor td, ta, tb;
	float *dst = take(a, N * 4, &td), *x = take(a, N * 4, &ta), *y = take(a, N * 4, &tb);
	double want[N];

	rand_f32(a, x, N);
	rand_f32(a, y, N);
	for (int i = 0; i < N; i++)
		want[i] = (double)(x[i] + y[i]);	/* one float32 rounding */
	npu_stream_add_f32(a->s, a->buf, td.offset, a->buf, ta.offset, a->buf, tb.offset, N);
	return run(a) && close_to(a, "ADD", dst, want, N);
}

static bool t_matmul(struct arena *a, enum npu_layout layout)
{
	enum { M = 3, K = 64, N = 48 };
	struct npu_matmul op = { .m = M, .k = K, .n = N, .dtype = NPU_DTYPE_BF16, .layout = layout };
	float *dst = take(a, M * N * 4, &op.dst), *x = take(a, M * K * 4, &op.a);
	uint16_t w[N * K];
	void *wdev = take(a, npu_weights_size(NPU_DTYPE_BF16, layout, N, K), &op.w);
	double want[M * N];

	rand_f32(a, x, M * K);
	rand_bf16(a, w, N * K);
	if (layout == NPU_LAYOUT_ROWMAJOR)
		memcpy(wdev, w, sizeof(w));
	else
		npu_pack_weights_layout(wdev, w, NPU_DTYPE_BF16, layout, N, K);
	for (int m = 0; m < M; m++)
		for (int n = 0; n < N; n++) {
			double s = 0;

			for (int k = 0; k < K; k++)
				s += (double)x[m * K + k] * from_bf16(w[n * K + k]);
			want[m * N + n] = s;
		}
	npu_stream_matmul(a->s, &op);
	return run(a) && close_to(a, layout == NPU_LAYOUT_PACKED16 ? "MATMUL packed16" :
				  layout == NPU_LAYOUT_PACKED16_SPACED ? "MATMUL spaced" :
				  "MATMUL row-major", dst, want, M * N);
}

static bool t_rmsnorm(struct arena *a)
{
	enum { R = 3, D = 64 };
	struct npu_rmsnorm op = { .rows = R, .dim = D, .dtype = NPU_DTYPE_BF16, .eps = 1e-5f };
	float *dst = take(a, R * D * 4, &op.dst), *x = take(a, R * D * 4, &op.src);
	uint16_t *w = take(a, D * 2, &op.weight);
	double want[R * D];

	rand_f32(a, x, R * D);
	rand_bf16(a, w, D);
	for (int r = 0; r < R; r++) {
		double ss = 0;

		for (int i = 0; i < D; i++)
			ss += (double)x[r * D + i] * x[r * D + i];
		for (int i = 0; i < D; i++)
			want[r * D + i] = x[r * D + i] / sqrt(ss / D + 1e-5) * from_bf16(w[i]);
	}
	npu_stream_rmsnorm(a->s, &op);
	return run(a) && close_to(a, "RMSNORM", dst, want, R * D);
}

static bool t_embed(struct arena *a)
{
	enum { ROWS = 16, D = 32, T = 4 };
	struct npu_embed op = { .tokens = T, .rows = ROWS, .dim = D, .dtype = NPU_DTYPE_BF16,
				.id_base = 100, .zero_outside = 1 };
	float *dst = take(a, T * D * 4, &op.dst);
	uint16_t *table = take(a, ROWS * D * 2, &op.table);
	int32_t *ids = take(a, T * 4, &op.ids);
	static const int32_t id[T] = { 100, 115, 107, 3 };	/* the last is outside */
	double want[T * D];

	rand_bf16(a, table, ROWS * D);
	memcpy(ids, id, sizeof(id));
	for (int t = 0; t < T; t++)
		for (int i = 0; i < D; i++)
			want[t * D + i] = t == 3 ? 0.0 : from_bf16(table[(id[t] - 100) * D + i]);
	npu_stream_embed(a->s, &op);
	return run(a) && close_to(a, "EMBED", dst, want, T * D);
}

static bool t_rope(struct arena *a)
{
	enum { T = 3, H = 2, HD = 16 };
	struct npu_rope op = { .tokens = T, .heads = H, .head_dim = HD, .theta = 10000.0f };
	float *x = take(a, T * H * HD * 4, &op.x);
	int32_t *pos = take(a, T * 4, &op.pos);
	static const int32_t p[T] = { 0, 5, 17 };
	double want[T * H * HD];

	rand_f32(a, x, T * H * HD);
	memcpy(pos, p, sizeof(p));
	for (int t = 0; t < T; t++)
		for (int h = 0; h < H; h++)
			for (int i = 0; i < HD / 2; i++) {
				const float *v = x + (t * H + h) * HD;
				double f = p[t] * pow(10000.0, -2.0 * i / HD);
				double *o = want + (t * H + h) * HD;

				o[i] = v[i] * cos(f) - v[i + HD / 2] * sin(f);
				o[i + HD / 2] = v[i + HD / 2] * cos(f) + v[i] * sin(f);
			}
	npu_stream_rope(a->s, &op);
	return run(a) && close_to(a, "ROPE", x, want, T * H * HD);
}

static bool t_swiglu(struct arena *a)
{
	enum { R = 3, N = 40 };
	struct npu_swiglu op = { .rows = R, .n = N };
	float *dst = take(a, R * N * 4, &op.dst), *g = take(a, R * N * 4, &op.gate);
	float *u = take(a, R * N * 4, &op.up);
	double want[R * N];

	rand_f32(a, g, R * N);
	rand_f32(a, u, R * N);
	for (int i = 0; i < R * N; i++)
		want[i] = g[i] / (1.0 + exp(-(double)g[i])) * u[i];
	npu_stream_swiglu(a->s, &op);
	return run(a) && close_to(a, "SWIGLU", dst, want, R * N);
}

/* KV_WRITE of 6 tokens into two blocks of 4, then ATTENTION of one query over them. */
static bool t_kv_attention(struct arena *a)
{
	enum { BLOCKS = 2, BS = 4, KVH = 1, QH = 2, HD = 8, CTX = 6 };
	struct npu_kv_write kw = { .num_blocks = BLOCKS, .tokens = CTX, .block_size = BS,
				   .kv_heads = KVH, .head_dim = HD, .dtype = NPU_DTYPE_F32 };
	struct npu_attention at = { .rows = 1, .num_seqs = 1, .num_blocks = BLOCKS,
				    .table_rows = 1, .q_heads = QH, .kv_heads = KVH, .head_dim = HD,
				    .block_size = BS, .max_blocks = 2, .partition_len = BS,
				    .dtype = NPU_DTYPE_F32, .scale = 0.35355339f };
	float *kc = take(a, BLOCKS * BS * KVH * HD * 4, &kw.k_cache);
	float *vc = take(a, BLOCKS * BS * KVH * HD * 4, &kw.v_cache);
	float *k = take(a, CTX * HD * 4, &kw.k), *v = take(a, CTX * HD * 4, &kw.v);
	int32_t *slots = take(a, CTX * 4, &kw.slots);
	float *out = take(a, QH * HD * 4, &at.out), *q = take(a, QH * HD * 4, &at.q);
	int32_t *seqs = take(a, 16, &at.seqs), *table = take(a, 8, &at.block_tables);
	double want[QH * HD];

	/* Tokens 0-3 in block 1, tokens 4-5 in block 0: the table is {1, 0}. */
	for (int t = 0; t < CTX; t++)
		slots[t] = t < BS ? BS + t : t - BS;
	table[0] = 1;
	table[1] = 0;
	memcpy(seqs, (int32_t[]){ 0, 1, CTX, 0 }, 16);
	rand_f32(a, k, CTX * HD);
	rand_f32(a, v, CTX * HD);
	rand_f32(a, q, QH * HD);
	memset(kc, 0, BLOCKS * BS * KVH * HD * 4);
	memset(vc, 0, BLOCKS * BS * KVH * HD * 4);
	at.k_cache = kw.k_cache;
	at.v_cache = kw.v_cache;
	take(a, npu_attention_work_size(&at), &at.work);
	for (int h = 0; h < QH; h++) {
		double s[CTX], m = -INFINITY, l = 0;

		for (int j = 0; j < CTX; j++) {
			s[j] = 0;
			for (int i = 0; i < HD; i++)
				s[j] += (double)q[h * HD + i] * k[j * HD + i];
			s[j] *= at.scale;
			m = fmax(m, s[j]);
		}
		for (int j = 0; j < CTX; j++)
			l += exp(s[j] - m);
		for (int i = 0; i < HD; i++) {
			double o = 0;

			for (int j = 0; j < CTX; j++)
				o += exp(s[j] - m) / l * v[j * HD + i];
			want[h * HD + i] = o;
		}
	}
	npu_stream_kv_write(a->s, &kw);
	npu_stream_attention(a->s, &at);
	if (!run(a))
		return false;
	for (int t = 0; t < CTX; t++)
		if (memcmp(kc + slots[t] * HD, k + t * HD, HD * 4) ||
		    memcmp(vc + slots[t] * HD, v + t * HD, HD * 4)) {
			snprintf(a->why, sizeof(a->why), "KV_WRITE: token %d is not at slot %d", t,
				 slots[t]);
			return false;
		}
	return close_to(a, "ATTENTION", out, want, QH * HD);
}

static bool t_topk(struct arena *a)
{
	enum { R = 2, N = 50, K = 5 };
	struct npu_topk op = { .rows = R, .n = N, .k = K, .index_base = 1000 };
	struct npu_topk am = { .rows = R, .n = N, .k = 1 };
	float *val = take(a, R * K * 4, &op.values), *src = take(a, R * N * 4, &op.src);
	int32_t *idx = take(a, R * K * 4, &op.indices);
	float *aval = take(a, R * 4, &am.values);
	int32_t *aidx = take(a, R * 4, &am.indices);

	am.src = op.src;
	for (int i = 0; i < R * N; i++)	/* distinct values: one right answer */
		src[i] = (float)((i * 37) % (R * N)) - 40.0f;
	npu_stream_topk(a->s, &op);
	npu_stream_argmax(a->s, &am);
	if (!run(a))
		return false;
	for (int r = 0; r < R; r++) {
		bool used[N] = { false };

		for (int j = 0; j < K; j++) {
			int best = -1;

			for (int i = 0; i < N; i++)
				if (!used[i] && (best < 0 || src[r * N + i] > src[r * N + best]))
					best = i;
			used[best] = true;
			if (idx[r * K + j] != best + 1000 || val[r * K + j] != src[r * N + best]) {
				snprintf(a->why, sizeof(a->why), "TOPK: row %d rank %d is index %d, "
					 "golden %d", r, j, idx[r * K + j], best + 1000);
				return false;
			}
			if (j == 0 && (aidx[r] != best || aval[r] != src[r * N + best])) {
				snprintf(a->why, sizeof(a->why), "ARGMAX: row %d is %d, golden %d", r,
					 aidx[r], best);
				return false;
			}
		}
	}
	return true;
}

void diag_compute(struct diag *d, unsigned int i)
{
	struct arena a = { .q = d->queue[i], .rng = 12345u + d->hw[i] };
	unsigned int rounds = d->level->compute_rounds, r;
	struct npu_device_info info;
	bool pass = true, spaced;

	a.buf = diag_alloc(d->dev[i], ARENA, 0, (void **)&a.map, a.why, sizeof(a.why));
	if (!a.buf) {
		diag_report(d, "compute", (int)d->hw[i], false, NAN, "", "%s", a.why);
		return;
	}
	if (npu_stream_create(d->dev[i], &a.s)) {
		diag_report(d, "compute", (int)d->hw[i], false, NAN, "", "stream: %s",
			    npu_error_detail());
		npu_buffer_free(a.buf);
		return;
	}
	/* The spaced panels are ISA 1.4's: an older driver has no such layout. */
	spaced = !npu_device_query(d->dev[i], &info) && info.isa_minor >= 4;
	for (r = 0; r < rounds && pass; r++) {
		a.used = 0;
		pass = t_sync(&a) && t_add(&a) && t_embed(&a) && t_rmsnorm(&a) &&
		       t_matmul(&a, NPU_LAYOUT_ROWMAJOR) && t_matmul(&a, NPU_LAYOUT_PACKED16) &&
		       (!spaced || t_matmul(&a, NPU_LAYOUT_PACKED16_SPACED)) &&
		       t_rope(&a) && t_swiglu(&a) && t_kv_attention(&a) && t_topk(&a);
	}
	if (pass)
		diag_report(d, "compute", (int)d->hw[i], true, NAN, "",
			    "all 16 opcodes against golden results, %u round%s", rounds,
			    rounds == 1 ? "" : "s");
	else
		diag_report(d, "compute", (int)d->hw[i], false, NAN, "", "round %u: %s", r, a.why);
	npu_stream_destroy(a.s);
	npu_buffer_free(a.buf);
}
