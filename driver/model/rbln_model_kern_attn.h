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
 * rbln_k_tile_offsets() - byte offsets of @nt tokens' KV head in the caches
 * @at: the command
 * @seq: the sequence
 * @t0: first token, @t0 + @nt <= the sequence's ctx_len
 * @nt: tokens, 1 to RBLN_MODEL_ATTN_TILE
 * @kvh: the KV head
 * @off: the offsets
 *
 * Walks the blocks with one division per tile; each block-table entry is
 * read once (it is run-time data) and checked before any use.
 *
 * Return: 0, or -RBLN_EIO for a block id outside the cache.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR int
RBLN_K(tile_offsets)(const struct rbln_model_attn *at,
		     const struct rbln_model_seq *seq, u64 t0, u32 nt, u32 kvh,
		     u64 *off)
{
	const struct rbln_isa_attention *c = at->cmd;
	u64 row = (u64)c->kv_heads * c->head_dim *
		  rbln_model_dtype_size(c->dtype);
	u64 head = (u64)kvh * c->head_dim * rbln_model_dtype_size(c->dtype);
	u64 blk = t0 / c->block_size;
	u32 in = (u32)(t0 % c->block_size);
	u32 t;
	s32 b;

	b = rbln_os_read_once_s32(seq->table + 4 * blk);
	if (b < 0 || (u64)b >= at->num_blocks)
		return -RBLN_EIO;
	for (t = 0; t < nt; t++, in++) {
		if (in == c->block_size) {
			in = 0;
			blk++;
			b = rbln_os_read_once_s32(seq->table + 4 * blk);
			if (b < 0 || (u64)b >= at->num_blocks)
				return -RBLN_EIO;
		}
		off[t] = ((u64)b * c->block_size + in) * row + head;
	}
	return 0;
}

/* Asks for the keys and values of a tile before they are needed. */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(tile_prefetch)(const struct rbln_model_attn *at, const u64 *off,
		      u32 nt, u32 bytes)
{
	u32 t, b;

	for (t = 0; t < nt; t++)
		for (b = 0; b < bytes; b += 64) {
			__builtin_prefetch(at->k_cache + off[t] + b);
			__builtin_prefetch(at->v_cache + off[t] + b);
		}
}

/**
 * rbln_k_attn_tile() - fold one tile of tokens into the partials of
 *	@nh query heads of one row
 * @at: the command
 * @off: the tile's tokens' offsets in the caches (rbln_k_tile_offsets())
 * @q: the heads' query vectors
 * @e: the heads' partials (m, l, o[head_dim]) in @work
 * @nh: heads, 1 to RBLN_K_AH, a constant where inlined
 * @nt: tokens, 1 to RBLN_MODEL_ATTN_TILE
 * @dtype: the caches' type, a constant where inlined
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(attn_tile)(const struct rbln_model_attn *at, const u64 *off,
		  const float *const *q, float *const *e, u32 nh, u32 nt,
		  u32 dtype)
{
	const struct rbln_isa_attention *c = at->cmd;
	float p[RBLN_K_AH][RBLN_MODEL_ATTN_TILE];
	float alpha[RBLN_K_AH], s4[RBLN_K_AH], scale, mt, mn, sum;
	RBLN_K_VF acc[RBLN_K_AH], o[RBLN_K_AH], kv, pv;
	u32 es = rbln_model_dtype_size(dtype);
	u32 d, j, t;

	memcpy(&scale, &c->scale, 4);
	/* Lanes past the tile's end: e^-inf = 0, never summed anyway. */
	for (j = 0; j < nh; j++)
		for (t = nt; t < RBLN_MODEL_ATTN_TILE; t++)
			p[j][t] = -__builtin_inff();
	for (t = 0; t < nt; t++) {
#pragma GCC unroll 4
		for (j = 0; j < RBLN_K_AH; j++)
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
		RBLN_K(hsum4)(acc, s4);
#pragma GCC unroll 4
		for (j = 0; j < nh; j++)
			p[j][t] = scale * s4[j];
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
}

/* rbln_k_attn_tile() with the head count a constant, for registers. */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(attn_heads)(const struct rbln_model_attn *at, const u64 *off,
		   const float *const *q, float *const *e, u32 nh, u32 nt,
		   u32 dtype)
{
	switch (nh) {
	case 1:
		RBLN_K(attn_tile)(at, off, q, e, 1, nt, dtype);
		break;
	case 2:
		RBLN_K(attn_tile)(at, off, q, e, 2, nt, dtype);
		break;
	case 3:
		RBLN_K(attn_tile)(at, off, q, e, 3, nt, dtype);
		break;
	default:
		RBLN_K(attn_tile)(at, off, q, e, 4, nt, dtype);
		break;
	}
}

/**
 * rbln_k_attn_tokens() - fold tokens [@t0, @t1) into @nh heads' partials
 * @at: the command
 * @seq: the sequence
 * @kvh: the KV head
 * @q: the heads' query vectors
 * @e: the heads' partials
 * @nh: heads, 1 to RBLN_K_AH
 * @t0: first token, on a tile boundary of its partition
 * @t1: one past the last
 * @dtype: the caches' type
 *
 * While one tile is computed, the next one's keys and values are already
 * on their way: a KV head's slice of a token is a short run in a long
 * row, a stride the hardware prefetchers do not follow far enough ahead.
 *
 * Return: 0, or -RBLN_EIO for a bad block id.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR int
RBLN_K(attn_tokens)(const struct rbln_model_attn *at,
		    const struct rbln_model_seq *seq, u32 kvh,
		    const float *const *q, float *const *e, u32 nh, u64 t0,
		    u64 t1, u32 dtype)
{
	u64 off[2][RBLN_MODEL_ATTN_TILE];
	u32 bytes = at->cmd->head_dim * rbln_model_dtype_size(dtype);
	u32 nt, nn, cur = 0;
	u64 t;

	if (t0 >= t1)
		return 0;
	nt = t1 - t0 < RBLN_MODEL_ATTN_TILE ? t1 - t0 : RBLN_MODEL_ATTN_TILE;
	if (RBLN_K(tile_offsets)(at, seq, t0, nt, kvh, off[cur]))
		return -RBLN_EIO;
	RBLN_K(tile_prefetch)(at, off[cur], nt, bytes);
	for (t = t0; t < t1; t += nt, nt = nn, cur ^= 1) {
		nn = 0;
		if (t + nt < t1) {
			nn = t1 - t - nt < RBLN_MODEL_ATTN_TILE ?
			     t1 - t - nt : RBLN_MODEL_ATTN_TILE;
			if (RBLN_K(tile_offsets)(at, seq, t + nt, nn, kvh,
						 off[cur ^ 1]))
				return -RBLN_EIO;
			RBLN_K(tile_prefetch)(at, off[cur ^ 1], nn, bytes);
		}
		RBLN_K(attn_heads)(at, off[cur], q, e, nh, nt, dtype);
	}
	return 0;
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
	u64 pos, r, t0, t1;
	u32 i, hb, nh, j, h;

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
			if (RBLN_K(attn_tokens)(at, seq, kvh, q, e, nh, t0,
						t1, dtype))
				return -RBLN_EIO;
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
