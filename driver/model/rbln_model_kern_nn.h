/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * rbln_model_kern_nn.h - the row-wise compute kernels (EMBED, RMSNORM,
 * ROPE, SWIGLU, KV_WRITE, ARGMAX, TOPK), compiled once per CPU variant.
 *
 * None of them fuses a multiply and an add, and every reduction has a
 * fixed order, so both variants give the same bits; only the width of the
 * vectors differs. Tails shorter than a vector run the same operations on
 * scalars, which round the same way as vector lanes.
 */

/**
 * rbln_k_widen() - convert @n elements of @dtype to float32
 * @dst: float32 output
 * @src: the elements (alignment of their type)
 * @dtype: their type
 * @n: number of elements
 */
static RBLN_K_ATTR void RBLN_K(widen)(float *dst, const u8 *src, u32 dtype,
				      u32 n)
{
	RBLN_K_VH h;
	RBLN_K_VF v;
	u32 i = 0;
	u32 bits;
	u16 x;

	if (dtype == RBLN_DTYPE_F32) {
		memcpy(dst, src, (u64)n * 4);
		return;
	}
	for (; i + RBLN_K_W <= n; i += RBLN_K_W) {
		if (dtype == RBLN_DTYPE_BF16) {
			memcpy(&h, src + 2 * i, sizeof(h));
			v = (RBLN_K_VF)(__builtin_convertvector(h, RBLN_K_VU)
					<< 16);
		} else {
			v = RBLN_K(f16_load)(src + 2 * i);
		}
		memcpy(dst + i, &v, sizeof(v));
	}
	for (; i < n; i++) {
		memcpy(&x, src + 2 * i, 2);
		if (dtype == RBLN_DTYPE_BF16)
			bits = (u32)x << 16;
		else
			bits = RBLN_K(f16_to_f32)(x);
		memcpy(dst + i, &bits, 4);
	}
}

/**
 * rbln_k_narrow() - convert @n float32 values to @dtype, rounding to
 *	nearest even
 * @dst: output of @dtype
 * @src: float32 input
 * @dtype: the output type
 * @n: number of elements
 */
static RBLN_K_ATTR void RBLN_K(narrow)(u8 *dst, const float *src, u32 dtype,
				       u32 n)
{
	RBLN_K_VU x, r, q;
	RBLN_K_VI nan;
	RBLN_K_VH h;
	u32 i = 0;
	u32 bits;
	u16 y;

	if (dtype == RBLN_DTYPE_F32) {
		memcpy(dst, src, (u64)n * 4);
		return;
	}
	if (dtype == RBLN_DTYPE_BF16) {
		for (; i + RBLN_K_W <= n; i += RBLN_K_W) {
			memcpy(&x, src + i, sizeof(x));
			nan = (RBLN_K_VI)(x & RBLN_K_F32_ABS) >
			      (RBLN_K_VI){ 0 } + (int)RBLN_K_F32_EXP;
			r = (x + 0x7fffU + ((x >> 16) & 1U)) >> 16;
			q = (x >> 16) | 0x40U;
			r = ((RBLN_K_VU)nan & q) | (~(RBLN_K_VU)nan & r);
			h = __builtin_convertvector(r, RBLN_K_VH);
			memcpy(dst + 2 * i, &h, sizeof(h));
		}
	}
	for (; i < n; i++) {
		memcpy(&bits, src + i, 4);
		if (dtype == RBLN_DTYPE_BF16)
			y = RBLN_K(f32_to_bf16)(bits);
		else
			y = RBLN_K(f32_to_f16)(bits);
		memcpy(dst + 2 * i, &y, 2);
	}
}

static RBLN_K_ATTR int
RBLN_K(embed)(const struct rbln_isa_embed *c, u8 *dst, const u8 *table,
	      const u8 *ids, u64 rows, u64 t0, u64 t1, u32 c0, u32 c1)
{
	u32 es = rbln_model_dtype_size(c->dtype);
	float *out;
	s64 row;
	u64 t;

	for (t = t0; t < t1; t++) {
		row = (s64)rbln_os_read_once_s32(ids + 4 * t) -
		      (s64)c->id_base;
		out = (float *)dst + t * c->dim + c0;
		if (row < 0 || (u64)row >= rows) {
			if (!(c->hdr.flags & RBLN_EMBED_ZERO_OUTSIDE))
				return -RBLN_EIO;
			memset(out, 0, (u64)(c1 - c0) * 4);
			continue;
		}
		RBLN_K(widen)(out, table + ((u64)row * c->dim + c0) * es,
			      c->dtype, c1 - c0);
	}
	return 0;
}

/*
 * RMSNORM's sum of squares: eight running sums, element i feeding sum
 * i % 8, so the order does not depend on the vector width.
 */
#define RBLN_K_RMS_LANES	8U

static RBLN_K_ATTR void RBLN_K(rms_sumsq)(const u8 *x, u32 n, u32 *acc)
{
	RBLN_K_VF s[RBLN_K_RMS_LANES / RBLN_K_W], v;
	float lane[RBLN_K_RMS_LANES], y;
	u32 i = 0, j;

	memcpy(s, acc, sizeof(s));
	for (; i + RBLN_K_RMS_LANES <= n; i += RBLN_K_RMS_LANES)
		for (j = 0; j < RBLN_K_RMS_LANES / RBLN_K_W; j++) {
			memcpy(&v, x + 4 * (i + j * RBLN_K_W), sizeof(v));
			s[j] = s[j] + v * v;
		}
	memcpy(lane, s, sizeof(lane));
	for (j = 0; i < n; i++, j++) {
		memcpy(&y, x + 4 * i, 4);
		lane[j] = lane[j] + y * y;
	}
	memcpy(acc, lane, sizeof(lane));
}

/* sqrt as one instruction in both homes: no libm, no errno. */
static inline RBLN_K_ATTR float RBLN_K(sqrtf)(float x)
{
#if defined(__x86_64__)
	RBLN_K_F4 v = { x, 0, 0, 0 };

	return __builtin_ia32_sqrtps(v)[0];
#else
	return __builtin_sqrtf(x);
#endif
}

static RBLN_K_ATTR u32 RBLN_K(rms_inv)(const u32 *acc, u32 dim, u32 eps)
{
	float l[RBLN_K_RMS_LANES], e, inv;
	u32 n, i, bits;

	memcpy(l, acc, sizeof(l));
	for (n = RBLN_K_RMS_LANES / 2; n; n /= 2)
		for (i = 0; i < n; i++)
			l[i] = l[i] + l[i + n];
	memcpy(&e, &eps, 4);
	inv = 1.0f / RBLN_K(sqrtf)(l[0] / (float)dim + e);
	memcpy(&bits, &inv, 4);
	return bits;
}

static RBLN_K_ATTR void RBLN_K(rms_scale)(u8 *dst, const u8 *x, const u8 *w,
					  u32 dtype, u32 n, u32 inv)
{
	float wf[RBLN_K_W], xs, ws, s;
	RBLN_K_VF v, wv, sv;
	u32 es = rbln_model_dtype_size(dtype);
	u32 i = 0;

	memcpy(&s, &inv, 4);
	sv = RBLN_K_SPLAT(s);
	for (; i + RBLN_K_W <= n; i += RBLN_K_W) {
		RBLN_K(widen)(wf, w + (u64)i * es, dtype, RBLN_K_W);
		memcpy(&wv, wf, sizeof(wv));
		memcpy(&v, x + 4 * i, sizeof(v));
		v = (v * sv) * wv;
		memcpy(dst + 4 * i, &v, sizeof(v));
	}
	for (; i < n; i++) {
		RBLN_K(widen)(&ws, w + (u64)i * es, dtype, 1);
		memcpy(&xs, x + 4 * i, 4);
		xs = (xs * s) * ws;
		memcpy(dst + 4 * i, &xs, 4);
	}
}

/**
 * rbln_k_rope_freqs() - the inverse frequencies of a ROPE
 * @c: the command
 * @inv: head_dim / 2 float32 values
 *
 * As Hugging Face computes them in float32: e = 2i / d rounded, theta^e
 * rounded, its reciprocal rounded; the llama3 scaling is computed in
 * double from that and rounded once.
 */
static RBLN_K_ATTR void RBLN_K(rope_freqs)(const struct rbln_isa_rope *c,
					   float *inv)
{
	u32 half = c->head_dim / 2;
	double lt, f, lo, hi, old, wl, sm, r;
	float theta, e, p;
	u32 i;

	memcpy(&theta, &c->theta, 4);
	lt = RBLN_K(log)((double)theta);
	for (i = 0; i < half; i++) {
		e = (float)(2 * i) / (float)c->head_dim;
		p = (float)RBLN_K(exp)((double)e * lt);
		inv[i] = 1.0f / p;
	}
	if (c->scaling != RBLN_ROPE_SCALING_LLAMA3)
		return;
	memcpy(&theta, &c->factor, 4);
	f = theta;
	memcpy(&theta, &c->low_freq_factor, 4);
	lo = theta;
	memcpy(&theta, &c->high_freq_factor, 4);
	hi = theta;
	old = (double)c->original_max_pos;
	for (i = 0; i < half; i++) {
		wl = 6.283185307179586 / (double)inv[i];
		r = inv[i];
		if (wl > old / lo) {
			r = r / f;
		} else if (!(wl < old / hi)) {
			sm = (old / wl - lo) / (hi - lo);
			r = (1.0 - sm) * r / f + sm * r;
		}
		inv[i] = (float)r;
	}
}

static RBLN_K_ATTR int RBLN_K(rope)(const struct rbln_isa_rope *c, u8 *x,
				    const u8 *pos, u64 t0, u64 t1)
{
	float inv[RBLN_ISA_MAX_HEAD_DIM / 2];
	u32 half = c->head_dim / 2;
	double sd, cd;
	float *row, a, b, cs, sn;
	u32 i, h;
	s32 p;
	u64 t;

	RBLN_K(rope_freqs)(c, inv);
	for (t = t0; t < t1; t++) {
		p = rbln_os_read_once_s32(pos + 4 * t);
		if (p < 0)
			return -RBLN_EIO;
		row = (float *)x + t * c->stride;
		for (i = 0; i < half; i++) {
			/* The angle is a float32 product, as in Hugging Face. */
			RBLN_K(sincos)((double)((float)p * inv[i]), &sd, &cd);
			cs = (float)cd;
			sn = (float)sd;
			for (h = 0; h < c->heads; h++) {
				a = row[h * c->head_dim + i];
				b = row[h * c->head_dim + i + half];
				row[h * c->head_dim + i] = a * cs - b * sn;
				row[h * c->head_dim + i + half] = b * cs + a * sn;
			}
		}
	}
	return 0;
}

/*
 * silu(g) * u for one vector. silu(g) = g / (1 + e^-g) overflows e^-g for
 * g below -88 where the result is still a normal float; with e = e^-|g|,
 * silu(g) = g / (1 + e) for g >= 0 and g e / (1 + e) below, which never
 * overflows and keeps the tail.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(swiglu1)(RBLN_K_VF g, RBLN_K_VF u)
{
	RBLN_K_VF a = (RBLN_K_VF)((RBLN_K_VU)g & RBLN_K_F32_ABS);
	RBLN_K_VF e = RBLN_K(vexp)(-a);
	RBLN_K_VI pos = g >= RBLN_K(zero)();

	return RBLN_K(sel)(pos, g, g * e) / (1.0f + e) * u;
}

static RBLN_K_ATTR void RBLN_K(swiglu)(u8 *dst, const u8 *gate, const u8 *up,
				       u32 n)
{
	RBLN_K_VF g = { 0 }, u = { 0 }, d;
	u32 i = 0;

	for (; i + RBLN_K_W <= n; i += RBLN_K_W) {
		memcpy(&g, gate + 4 * i, sizeof(g));
		memcpy(&u, up + 4 * i, sizeof(u));
		d = RBLN_K(swiglu1)(g, u);
		memcpy(dst + 4 * i, &d, sizeof(d));
	}
	if (i == n)
		return;
	/* The tail through the same lanes, zero-padded. */
	g = RBLN_K(zero)();
	u = RBLN_K(zero)();
	memcpy(&g, gate + 4 * i, 4 * (n - i));
	memcpy(&u, up + 4 * i, 4 * (n - i));
	d = RBLN_K(swiglu1)(g, u);
	memcpy(dst + 4 * i, &d, 4 * (n - i));
}

static RBLN_K_ATTR int
RBLN_K(kv_write)(const struct rbln_isa_kv_write *c, u8 *kc, u8 *vc,
		 const u8 *k, const u8 *v, const u8 *slots, u64 num_blocks,
		 u64 t0, u64 t1)
{
	u64 width = (u64)c->kv_heads * c->head_dim;
	u64 hbytes = (u64)c->head_dim * rbln_model_dtype_size(c->dtype);
	u64 nslots = num_blocks * c->block_size;
	u64 t, at, hstep;
	u32 h;
	s32 s;

	for (t = t0; t < t1; t++) {
		s = rbln_os_read_once_s32(slots + 4 * t);
		if (s < 0)
			continue;
		if ((u64)s >= nslots)
			return -RBLN_EIO;
		if (!(c->hdr.flags & RBLN_KV_HEAD_MAJOR)) {
			/* [block][offset][head][dim]: slot s is row s. */
			RBLN_K(narrow)(kc + (u64)s * c->kv_heads * hbytes,
				       (const float *)k + t * c->k_stride,
				       c->dtype, width);
			RBLN_K(narrow)(vc + (u64)s * c->kv_heads * hbytes,
				       (const float *)v + t * c->v_stride,
				       c->dtype, width);
			continue;
		}
		/* [block][head][offset][dim]: a run of block_size per head. */
		at = ((u64)s / c->block_size * c->kv_heads * c->block_size +
		      (u64)s % c->block_size) * hbytes;
		hstep = (u64)c->block_size * hbytes;
		for (h = 0; h < c->kv_heads; h++, at += hstep) {
			RBLN_K(narrow)(kc + at, (const float *)k +
				       t * c->k_stride + (u64)h * c->head_dim,
				       c->dtype, c->head_dim);
			RBLN_K(narrow)(vc + at, (const float *)v +
				       t * c->v_stride + (u64)h * c->head_dim,
				       c->dtype, c->head_dim);
		}
	}
	return 0;
}

/*
 * The order of ARGMAX and TOPK: NaN above everything, then numbers by
 * value (-0 equals +0), equal values by lower index.
 */
static inline RBLN_K_ATTR bool RBLN_K(better)(float a, u32 ia, float b,
					      u32 ib)
{
	bool an = a != a, bn = b != b;

	if (an || bn)
		return an && (!bn || ia < ib);
	return a > b || (a == b && ia < ib);
}

/* Whether any lane of a comparison result is true. */
static inline RBLN_OS_INLINE RBLN_K_ATTR bool RBLN_K(any)(RBLN_K_VI m)
{
	u32 l[RBLN_K_W], a = 0, j;

	memcpy(l, &m, sizeof(l));
	for (j = 0; j < RBLN_K_W; j++)
		a |= l[j];
	return a;
}

/**
 * rbln_k_argmax() - fold @n elements into a running ARGMAX
 * @x: the elements
 * @n: how many
 * @col: column (plus index base) of the first
 * @best: value bits and index of the best so far; index ~0 for none
 *
 * Each lane keeps the best of its columns (earlier ones win ties, since
 * only a strictly greater value replaces), then the lanes are combined in
 * the order above. Vectors stop at the first one holding a NaN; the
 * scalar loop takes over from there, and stops at the first NaN: it is
 * the answer unless an earlier NaN is.
 */
static RBLN_K_ATTR void RBLN_K(argmax)(const u8 *x, u32 n, u32 col, u32 *best)
{
	float bv[RBLN_K_W], v, cur;
	u32 bi[RBLN_K_W];
	RBLN_K_VF vv, mv;
	RBLN_K_VI iv, ii, gt, nan;
	u32 i = 0, j;

	memcpy(&cur, &best[0], 4);
	if (best[1] != ~0U && cur != cur)
		return;
	if (n >= RBLN_K_W) {
		memcpy(&mv, x, sizeof(mv));
		nan = mv != mv;
		if (!RBLN_K(any)(nan)) {
			for (j = 0; j < RBLN_K_W; j++)
				bi[j] = col + j;
			memcpy(&iv, bi, sizeof(iv));
			ii = iv;
			for (i = RBLN_K_W; i + RBLN_K_W <= n; i += RBLN_K_W) {
				ii += RBLN_K_W;
				memcpy(&vv, x + 4 * i, sizeof(vv));
				nan = vv != vv;
				if (RBLN_K(any)(nan))
					break;
				gt = vv > mv;
				mv = RBLN_K(sel)(gt, vv, mv);
				iv = (RBLN_K_VI)(((RBLN_K_VU)gt &
						  (RBLN_K_VU)ii) |
						 (~(RBLN_K_VU)gt &
						  (RBLN_K_VU)iv));
			}
			memcpy(bv, &mv, sizeof(bv));
			memcpy(bi, &iv, sizeof(bi));
			for (j = 0; j < RBLN_K_W; j++) {
				if (best[1] != ~0U &&
				    !RBLN_K(better)(bv[j], bi[j], cur, best[1]))
					continue;
				cur = bv[j];
				best[1] = bi[j];
			}
		}
	}
	for (; i < n; i++) {
		memcpy(&v, x + 4 * i, 4);
		if (best[1] == ~0U || RBLN_K(better)(v, col + i, cur, best[1])) {
			cur = v;
			best[1] = col + i;
			if (v != v)
				break;
		}
	}
	memcpy(&best[0], &cur, 4);
}

/* Heap of the k best so far in the output rows: the worst at the root. */
static inline RBLN_K_ATTR bool RBLN_K(heap_worse)(const float *hv,
						  const s32 *hi, u32 a, u32 b)
{
	return RBLN_K(better)(hv[b], (u32)hi[b], hv[a], (u32)hi[a]);
}

static RBLN_K_ATTR void RBLN_K(heap_swap)(float *hv, s32 *hi, u32 a, u32 b)
{
	float v = hv[a];
	s32 i = hi[a];

	hv[a] = hv[b];
	hi[a] = hi[b];
	hv[b] = v;
	hi[b] = i;
}

static RBLN_K_ATTR void RBLN_K(heap_down)(float *hv, s32 *hi, u32 at, u32 size)
{
	u32 l, w;

	for (;;) {
		l = 2 * at + 1;
		if (l >= size)
			return;
		w = l;
		if (l + 1 < size && RBLN_K(heap_worse)(hv, hi, l + 1, l))
			w = l + 1;
		if (!RBLN_K(heap_worse)(hv, hi, w, at))
			return;
		RBLN_K(heap_swap)(hv, hi, w, at);
		at = w;
	}
}

static RBLN_K_ATTR void RBLN_K(heap_push)(float *hv, s32 *hi, u32 size,
					  float v, u32 idx)
{
	u32 at = size, up;

	hv[at] = v;
	hi[at] = (s32)idx;
	while (at) {
		up = (at - 1) / 2;
		if (!RBLN_K(heap_worse)(hv, hi, at, up))
			return;
		RBLN_K(heap_swap)(hv, hi, at, up);
		at = up;
	}
}

static RBLN_K_ATTR void RBLN_K(topk)(const u8 *x, u32 n, u32 col, u8 *vals,
				     u8 *idx, u32 k, u32 *have)
{
	float *hv = (float *)vals;
	s32 *hi = (s32 *)idx;
	RBLN_K_VF vv, thr;
	RBLN_K_VI in;
	float v;
	u32 i = 0, j;

	while (i < n) {
		if (*have == k) {
			/* A NaN root: every later element is worse. */
			if (hv[0] != hv[0])
				return;
			/* Skip whole vectors that cannot enter the heap. */
			thr = RBLN_K_SPLAT(hv[0]);
			for (; i + RBLN_K_W <= n; i += RBLN_K_W) {
				memcpy(&vv, x + 4 * i, sizeof(vv));
				in = vv >= thr;
				in |= vv != vv;
				if (RBLN_K(any)(in))
					break;
			}
		}
		for (j = 0; j < RBLN_K_W && i < n; j++, i++) {
			memcpy(&v, x + 4 * i, 4);
			if (*have < k) {
				RBLN_K(heap_push)(hv, hi, *have, v, col + i);
				(*have)++;
			} else if (RBLN_K(better)(v, col + i, hv[0],
						  (u32)hi[0])) {
				hv[0] = v;
				hi[0] = (s32)(col + i);
				RBLN_K(heap_down)(hv, hi, 0, k);
			}
		}
	}
}

/* Heap sort: the worst goes last, so the rows end best first. */
static RBLN_K_ATTR void RBLN_K(topk_sort)(u8 *vals, u8 *idx, u32 k)
{
	float *hv = (float *)vals;
	s32 *hi = (s32 *)idx;
	u32 size;

	for (size = k; size > 1; size--) {
		RBLN_K(heap_swap)(hv, hi, 0, size - 1);
		RBLN_K(heap_down)(hv, hi, 0, size - 1);
	}
}
