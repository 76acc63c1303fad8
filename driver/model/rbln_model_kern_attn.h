/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * rbln_model_kern_attn.h - ATTENTION kernels, compiled once per CPU
 * variant.
 *
 * Flash decoding. For one query row and head, the tokens it sees are cut
 * into partitions of partition_len tokens; within a partition, tiles of
 * RBLN_MODEL_ATTN_TILE tokens are scored and folded into a running
 * (max m, sum l, unnormalised output o) in the command's @work buffer:
 *
 *   m' = max(m, max_t s_t), a = e^(m - m'), p_t = e^(s_t - m'),
 *   l' = l a + sum_t p_t, o' = o a + sum_t p_t v_t   (t in token order)
 *
 * Then the partitions are merged in order, pairwise:
 *
 *   M' = max(M, m), A = e^(M - M'), B = e^(m - M'),
 *   L' = L A + l B, O' = O A + o B, and out = O / L at the end.
 *
 * Every step has a fixed order, and a partition's partials depend only on
 * its own tokens, so results do not depend on which engine computed what.
 * The query heads of one KV head (GQA) are scored together, up to
 * RBLN_K_AH at a time, so each key and value is loaded once for all of
 * them.
 */

#define RBLN_K_AH	4U	/* query heads per pass over a tile */

/* float32 view of RBLN_K_W cache elements of a constant @dtype. */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF
RBLN_K(cache_load)(const u8 *p, u32 dtype)
{
	RBLN_K_VF v;
	RBLN_K_VH h;

	if (dtype == RBLN_DTYPE_F32) {
		memcpy(&v, p, sizeof(v));
		return v;
	}
	if (dtype == RBLN_DTYPE_F16)
		return RBLN_K(f16_load)(p);
	memcpy(&h, p, sizeof(h));
	return (RBLN_K_VF)(__builtin_convertvector(h, RBLN_K_VU) << 16);
}

/* e^x of one float, by the vector code (so it is the same function). */
static inline RBLN_OS_INLINE RBLN_K_ATTR float RBLN_K(exp1)(float x)
{
	return RBLN_K(vexp)(RBLN_K_SPLAT(x))[0];
}

/**
 * rbln_k_token_offset() - byte offset of a token's head in the caches
 * @at: the command
 * @seq: the sequence
 * @t: the token, below the sequence's ctx_len
 * @kvh: the KV head
 * @off: the offset
 *
 * Reads the block table entry once (it is run-time data) and checks it.
 *
 * Return: 0, or -RBLN_EIO for a block id outside the cache.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR int
RBLN_K(token_offset)(const struct rbln_model_attn *at,
		     const struct rbln_model_seq *seq, u64 t, u32 kvh, u64 *off)
{
	const struct rbln_isa_attention *c = at->cmd;
	s32 b = rbln_os_read_once_s32(seq->table + 4 * (t / c->block_size));

	if (b < 0 || (u64)b >= at->num_blocks)
		return -RBLN_EIO;
	*off = (((u64)b * c->block_size + t % c->block_size) * c->kv_heads +
		kvh) * c->head_dim * rbln_model_dtype_size(c->dtype);
	return 0;
}

/**
 * rbln_k_attn_tile() - fold one tile of tokens into the partials of
 *	@nh query heads of one row
 * @at: the command
 * @seq: the sequence
 * @kvh: the KV head
 * @q: the heads' query vectors
 * @e: the heads' partials (m, l, o[head_dim]) in @work
 * @nh: heads, 1 to RBLN_K_AH
 * @t0: first token
 * @nt: tokens, 1 to RBLN_MODEL_ATTN_TILE
 * @dtype: the caches' type, a constant where inlined
 *
 * Return: 0, or -RBLN_EIO for a bad block id.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR int
RBLN_K(attn_tile)(const struct rbln_model_attn *at,
		  const struct rbln_model_seq *seq, u32 kvh,
		  const float *const *q, float *const *e, u32 nh, u64 t0,
		  u32 nt, u32 dtype)
{
	const struct rbln_isa_attention *c = at->cmd;
	float p[RBLN_K_AH][RBLN_MODEL_ATTN_TILE];
	u64 off[RBLN_MODEL_ATTN_TILE];
	float alpha[RBLN_K_AH], scale, mt, mn, sum;
	RBLN_K_VF acc[RBLN_K_AH], o[RBLN_K_AH], kv, pv;
	u32 es = rbln_model_dtype_size(dtype);
	u32 d, j, t;

	memcpy(&scale, &c->scale, 4);
	/* Lanes past the tile's end: e^-inf = 0, never summed anyway. */
#pragma GCC unroll 4
	for (j = 0; j < nh; j++)
		for (t = nt; t < RBLN_MODEL_ATTN_TILE; t++)
			p[j][t] = -__builtin_inff();
	for (t = 0; t < nt; t++) {
		if (RBLN_K(token_offset)(at, seq, t0 + t, kvh, &off[t]))
			return -RBLN_EIO;
#pragma GCC unroll 4
		for (j = 0; j < nh; j++)
			acc[j] = RBLN_K(zero)();
		for (d = 0; d < c->head_dim; d += RBLN_K_W) {
			kv = RBLN_K(cache_load)(at->k_cache + off[t] + d * es,
						dtype);
#pragma GCC unroll 4
			for (j = 0; j < nh; j++) {
				memcpy(&pv, q[j] + d, sizeof(pv));
				RBLN_K_MADD(acc[j], pv, kv);
			}
		}
#pragma GCC unroll 4
		for (j = 0; j < nh; j++)
			p[j][t] = scale * RBLN_K(hsum)(acc[j]);
	}
#pragma GCC unroll 4
	for (j = 0; j < nh; j++) {
		mt = e[j][0];
		for (t = 0; t < nt; t++)
			if (p[j][t] > mt)
				mt = p[j][t];
		mn = mt;
		alpha[j] = RBLN_K(exp1)(e[j][0] - mn);
		sum = 0.0f;
		for (t = 0; t < nt; t += RBLN_K_W) {
			memcpy(&pv, &p[j][t], sizeof(pv));
			pv = RBLN_K(vexp)(pv - mn);
			memcpy(&p[j][t], &pv, sizeof(pv));
		}
		for (t = 0; t < nt; t++)
			sum = sum + p[j][t];
		e[j][0] = mn;
		e[j][1] = e[j][1] * alpha[j] + sum;
	}
	for (d = 0; d < c->head_dim; d += RBLN_K_W) {
#pragma GCC unroll 4
		for (j = 0; j < nh; j++) {
			memcpy(&o[j], e[j] + 2 + d, sizeof(o[j]));
			o[j] = o[j] * alpha[j];
		}
		for (t = 0; t < nt; t++) {
			kv = RBLN_K(cache_load)(at->v_cache + off[t] + d * es,
						dtype);
#pragma GCC unroll 4
			for (j = 0; j < nh; j++) {
				pv = RBLN_K_SPLAT(p[j][t]);
				RBLN_K_MADD(o[j], pv, kv);
			}
		}
#pragma GCC unroll 4
		for (j = 0; j < nh; j++)
			memcpy(e[j] + 2 + d, &o[j], sizeof(o[j]));
	}
	return 0;
}

/* rbln_k_attn_tile() with the head count a constant, for registers. */
static inline RBLN_OS_INLINE RBLN_K_ATTR int
RBLN_K(attn_heads)(const struct rbln_model_attn *at,
		   const struct rbln_model_seq *seq, u32 kvh,
		   const float *const *q, float *const *e, u32 nh, u64 t0,
		   u32 nt, u32 dtype)
{
	switch (nh) {
	case 1:
		return RBLN_K(attn_tile)(at, seq, kvh, q, e, 1, t0, nt, dtype);
	case 2:
		return RBLN_K(attn_tile)(at, seq, kvh, q, e, 2, t0, nt, dtype);
	case 3:
		return RBLN_K(attn_tile)(at, seq, kvh, q, e, 3, t0, nt, dtype);
	}
	return RBLN_K(attn_tile)(at, seq, kvh, q, e, 4, t0, nt, dtype);
}

/**
 * rbln_k_attn_rows() - rbln_model_kernels.attn_part for a constant dtype
 * @at: the command
 * @seq: the sequence
 * @kvh: the KV head
 * @part: the partition
 * @i0: first query row of the sequence
 * @i1: one past the last
 * @j0: first token, from the partition's start, a multiple of the tile
 * @j1: one past the last token, from the partition's start
 * @dtype: the caches' type
 *
 * Return: 0, or -RBLN_EIO for a bad block id.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR int
RBLN_K(attn_rows)(const struct rbln_model_attn *at,
		  const struct rbln_model_seq *seq, u32 kvh, u64 part, u32 i0,
		  u32 i1, u64 j0, u64 j1, u32 dtype)
{
	const struct rbln_isa_attention *c = at->cmd;
	u64 ent = (u64)c->head_dim + 2;
	u64 pstart = part * c->partition_len;
	u64 pend = pstart + c->partition_len;
	u64 base = seq->ctx_len - seq->q_len;
	const float *q[RBLN_K_AH] = { NULL };
	float *e[RBLN_K_AH] = { NULL };
	u64 pos, r, t0, t1, t;
	u32 i, hb, nh, j, h, nt;

	if (pend > seq->ctx_len)
		pend = seq->ctx_len;
	for (i = i0; i < i1; i++) {
		pos = base + i;
		if (pos < pstart)
			continue;
		t0 = pstart + j0;
		t1 = pstart + j1;
		if (t1 > pend)
			t1 = pend;
		if (t1 > pos + 1)
			t1 = pos + 1;
		r = seq->q_start + i;
		for (hb = 0; hb < at->group; hb += nh) {
			nh = at->group - hb < RBLN_K_AH ? at->group - hb :
							  RBLN_K_AH;
#pragma GCC unroll 4
			for (j = 0; j < nh; j++) {
				h = kvh * at->group + hb + j;
				q[j] = (const float *)at->q +
				       r * c->q_stride + (u64)h * c->head_dim;
				e[j] = (float *)at->work +
				       ((r * c->q_heads + h) * at->parts +
					part) * ent;
				if (j0)
					continue;
				memset(e[j], 0, ent * 4);
				e[j][0] = -__builtin_inff();
			}
			for (t = t0; t < t1; t += nt) {
				nt = t1 - t < RBLN_MODEL_ATTN_TILE ?
				     t1 - t : RBLN_MODEL_ATTN_TILE;
				if (RBLN_K(attn_heads)(at, seq, kvh, q, e, nh,
						       t, nt, dtype))
					return -RBLN_EIO;
			}
		}
	}
	return 0;
}

static RBLN_K_ATTR int
RBLN_K(attn_part)(const struct rbln_model_attn *at,
		  const struct rbln_model_seq *seq, u32 kvh, u64 part, u32 i0,
		  u32 i1, u64 j0, u64 j1)
{
	switch (at->cmd->dtype) {
	case RBLN_DTYPE_BF16:
		return RBLN_K(attn_rows)(at, seq, kvh, part, i0, i1, j0, j1,
					 RBLN_DTYPE_BF16);
	case RBLN_DTYPE_F16:
		return RBLN_K(attn_rows)(at, seq, kvh, part, i0, i1, j0, j1,
					 RBLN_DTYPE_F16);
	}
	return RBLN_K(attn_rows)(at, seq, kvh, part, i0, i1, j0, j1,
				 RBLN_DTYPE_F32);
}

static RBLN_K_ATTR void
RBLN_K(attn_merge)(const struct rbln_model_attn *at,
		   const struct rbln_model_seq *seq, u32 i0, u32 i1)
{
	const struct rbln_isa_attention *c = at->cmd;
	u64 ent = (u64)c->head_dim + 2;
	u64 base = seq->ctx_len - seq->q_len;
	RBLN_K_VF ov, pv, va, vb;
	float m, l, mn, a, b, *out;
	const float *e;
	u64 r, np, p;
	u32 i, h, d;

	for (i = i0; i < i1; i++) {
		r = seq->q_start + i;
		np = (base + i) / c->partition_len + 1;
		for (h = 0; h < c->q_heads; h++) {
			e = (const float *)at->work +
			    (r * c->q_heads + h) * at->parts * ent;
			out = (float *)at->out +
			      (r * c->q_heads + h) * c->head_dim;
			m = e[0];
			l = e[1];
			memcpy(out, e + 2, (u64)c->head_dim * 4);
			for (p = 1; p < np; p++) {
				e += ent;
				mn = e[0] > m ? e[0] : m;
				a = RBLN_K(exp1)(m - mn);
				b = RBLN_K(exp1)(e[0] - mn);
				l = l * a + e[1] * b;
				va = RBLN_K_SPLAT(a);
				vb = RBLN_K_SPLAT(b);
				for (d = 0; d < c->head_dim; d += RBLN_K_W) {
					memcpy(&ov, out + d, sizeof(ov));
					memcpy(&pv, e + 2 + d, sizeof(pv));
					ov = ov * va + pv * vb;
					memcpy(out + d, &ov, sizeof(ov));
				}
				m = mn;
			}
			va = RBLN_K_SPLAT(l);
			for (d = 0; d < c->head_dim; d += RBLN_K_W) {
				memcpy(&ov, out + d, sizeof(ov));
				ov = ov / va;
				memcpy(out + d, &ov, sizeof(ov));
			}
		}
	}
}
