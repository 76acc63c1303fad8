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
 *
 * Both cache layouts are read by the same code through three strides
 * (&struct rbln_model_attn): a token's place in a tile is
 * block * block_bytes + offset * token_bytes, its KV head's vector is
 * head_bytes further. Head-major caches are read one KV head at a time,
 * so each block's keys and values of that head are two contiguous runs.
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
 * rbln_k_tile_offsets() - byte offsets of @nt tokens in the caches
 * @at: the command
 * @seq: the sequence
 * @t0: first token, @t0 + @nt <= the sequence's ctx_len
 * @nt: tokens, 1 to RBLN_MODEL_ATTN_TILE
 * @off: the offsets of the tokens' KV head 0 vectors
 *
 * Walks the blocks with one division per tile; each block-table entry is
 * read once (it is run-time data) and checked before any use.
 *
 * Return: 0, or -RBLN_EIO for a block id outside the cache.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR int
RBLN_K(tile_offsets)(const struct rbln_model_attn *at,
		     const struct rbln_model_seq *seq, u64 t0, u32 nt, u64 *off)
{
	const struct rbln_isa_attention *c = at->cmd;
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
		off[t] = (u64)b * at->block_bytes + in * at->token_bytes;
	}
	return 0;
}

/*
 * Asks for the vectors of KV heads [@k0, @k1) of a tile's tokens before
 * they are needed: in the token-major layout one range per token, in the
 * head-major one (one head at a time) the tile's part of the head's run.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(tile_prefetch)(const struct rbln_model_attn *at, const u64 *off,
		      u32 nt, u32 k0, u32 k1)
{
	u64 hbytes = (u64)at->cmd->head_dim *
		     rbln_model_dtype_size(at->cmd->dtype);
	u64 from = k0 * at->head_bytes, to = (k1 - 1) * at->head_bytes + hbytes;
	u64 b;
	u32 t;

	for (t = 0; t < nt; t++)
		for (b = from; b < to; b += 64) {
			__builtin_prefetch(at->k_cache + off[t] + b);
			__builtin_prefetch(at->v_cache + off[t] + b);
		}
}

/**
 * rbln_k_attn_tile() - fold one tile of tokens into the partials of
 *	@nh query heads of one row
 * @at: the command
 * @off: the tile's tokens' rows in the caches (rbln_k_tile_offsets())
 * @ho: the KV head's byte offset within a row
 * @q: the heads' query vectors
 * @e: the heads' partials (m, l, o[head_dim]) in @work
 * @nh: heads, 1 to RBLN_K_AH, a constant where inlined
 * @nt: tokens, 1 to RBLN_MODEL_ATTN_TILE
 * @dtype: the caches' type, a constant where inlined
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(attn_tile)(const struct rbln_model_attn *at, const u64 *off, u64 ho,
		  const float *const *q, float *const *e, u32 nh, u32 nt,
		  u32 dtype)
{
	const struct rbln_isa_attention *c = at->cmd;
	float p[RBLN_K_AH][RBLN_MODEL_ATTN_TILE];
	float alpha[RBLN_K_W], am[RBLN_K_AH], sums[RBLN_K_AH], s4[RBLN_K_AH];
	RBLN_K_VF acc[RBLN_K_AH], acc2[RBLN_K_AH], o[RBLN_K_AH], o2[RBLN_K_AH];
	RBLN_K_VF kv, kv2, pv, mv, sv;
	float scale, mn;
	u32 es = rbln_model_dtype_size(dtype);
	u32 d, j, t;
	bool w2;

	memcpy(&scale, &c->scale, 4);
	/* Lanes past the tile's end: e^-inf = 0, never summed anyway. */
	for (j = 0; j < nh; j++)
		for (t = nt; t < RBLN_MODEL_ATTN_TILE; t++)
			p[j][t] = -__builtin_inff();
	for (t = 0; t < nt; t++) {
		/*
		 * Two accumulators per head, even and odd vectors of the
		 * head: twice the independent chains for the FMA latency.
		 */
#pragma GCC unroll 4
		for (j = 0; j < RBLN_K_AH; j++) {
			acc[j] = RBLN_K(zero)();
			acc2[j] = RBLN_K(zero)();
		}
		for (d = 0; d + RBLN_K_W < c->head_dim; d += 2 * RBLN_K_W) {
			kv = RBLN_K(cache_load)(at->k_cache + off[t] + ho +
						d * es, dtype);
			kv2 = RBLN_K(cache_load)(at->k_cache + off[t] + ho +
						 (d + RBLN_K_W) * es, dtype);
#pragma GCC unroll 4
			for (j = 0; j < nh; j++) {
				memcpy(&pv, q[j] + d, sizeof(pv));
				RBLN_K_MADD(acc[j], pv, kv);
				memcpy(&pv, q[j] + d + RBLN_K_W, sizeof(pv));
				RBLN_K_MADD(acc2[j], pv, kv2);
			}
		}
		if (d < c->head_dim) {
			kv = RBLN_K(cache_load)(at->k_cache + off[t] + ho +
						d * es, dtype);
#pragma GCC unroll 4
			for (j = 0; j < nh; j++) {
				memcpy(&pv, q[j] + d, sizeof(pv));
				RBLN_K_MADD(acc[j], pv, kv);
			}
		}
#pragma GCC unroll 4
		for (j = 0; j < RBLN_K_AH; j++)
			acc[j] = acc[j] + acc2[j];
		RBLN_K(hsum4)(acc, s4);
#pragma GCC unroll 4
		for (j = 0; j < nh; j++)
			p[j][t] = scale * s4[j];
	}
#pragma GCC unroll 4
	for (j = 0; j < nh; j++) {
		/*
		 * Branch-free: the tile's maximum by vector max (a NaN
		 * score never wins, as with the scalar "x > m"), then its
		 * exponentials and their sum as vectors, padding lanes e^-inf.
		 */
		mv = RBLN_K(splat)(e[j][0]);
		for (t = 0; t < RBLN_MODEL_ATTN_TILE; t += RBLN_K_W) {
			memcpy(&pv, &p[j][t], sizeof(pv));
			mv = RBLN_K(sel)(pv > mv, pv, mv);
		}
		mn = RBLN_K(hmax)(mv);
		am[j] = e[j][0] - mn;
		sv = RBLN_K(zero)();
		for (t = 0; t < RBLN_MODEL_ATTN_TILE; t += RBLN_K_W) {
			memcpy(&pv, &p[j][t], sizeof(pv));
			pv = RBLN_K(vexp)(pv - mn);
			memcpy(&p[j][t], &pv, sizeof(pv));
			sv = sv + pv;
		}
		e[j][0] = mn;
		sums[j] = RBLN_K(hsum)(sv);
	}
	/* The rescale factors of all heads in one exp. */
	mv = RBLN_K(zero)();
	memcpy(&mv, am, sizeof(float) * nh);
	mv = RBLN_K(vexp)(mv);
	memcpy(alpha, &mv, sizeof(float) * nh);
#pragma GCC unroll 4
	for (j = 0; j < nh; j++)
		e[j][1] = e[j][1] * alpha[j] + sums[j];
	/* Two vectors of every head at a time: eight independent chains. */
	for (d = 0; d < c->head_dim; d += 2 * RBLN_K_W) {
		w2 = d + RBLN_K_W < c->head_dim;
#pragma GCC unroll 4
		for (j = 0; j < nh; j++) {
			memcpy(&o[j], e[j] + 2 + d, sizeof(o[j]));
			o[j] = o[j] * alpha[j];
			o2[j] = RBLN_K(zero)();
			if (w2) {
				memcpy(&o2[j], e[j] + 2 + d + RBLN_K_W,
				       sizeof(o2[j]));
				o2[j] = o2[j] * alpha[j];
			}
		}
		for (t = 0; t < nt; t++) {
			kv = RBLN_K(cache_load)(at->v_cache + off[t] + ho +
						d * es, dtype);
			kv2 = w2 ? RBLN_K(cache_load)(at->v_cache + off[t] + ho +
						      (d + RBLN_K_W) * es,
						      dtype) : RBLN_K(zero)();
#pragma GCC unroll 4
			for (j = 0; j < nh; j++) {
				pv = RBLN_K_SPLAT(p[j][t]);
				RBLN_K_MADD(o[j], pv, kv);
				RBLN_K_MADD(o2[j], pv, kv2);
			}
		}
#pragma GCC unroll 4
		for (j = 0; j < nh; j++) {
			memcpy(e[j] + 2 + d, &o[j], sizeof(o[j]));
			if (w2)
				memcpy(e[j] + 2 + d + RBLN_K_W, &o2[j],
				       sizeof(o2[j]));
		}
	}
}

/* rbln_k_attn_tile() with the head count a constant, for registers. */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(attn_heads)(const struct rbln_model_attn *at, const u64 *off, u64 ho,
		   const float *const *q, float *const *e, u32 nh, u32 nt,
		   u32 dtype)
{
	switch (nh) {
	case 1:
		RBLN_K(attn_tile)(at, off, ho, q, e, 1, nt, dtype);
		break;
	case 2:
		RBLN_K(attn_tile)(at, off, ho, q, e, 2, nt, dtype);
		break;
	case 3:
		RBLN_K(attn_tile)(at, off, ho, q, e, 3, nt, dtype);
		break;
	default:
		RBLN_K(attn_tile)(at, off, ho, q, e, 4, nt, dtype);
		break;
	}
}

/*
 * One out-of-line tile function per cache type: each has its own stack
 * frame, so the frames of the three types and four head counts never add
 * up in one function (the kernel warns above 2 KiB).
 */
static RBLN_OS_NOINLINE RBLN_K_ATTR void
RBLN_K(attn_heads_f32)(const struct rbln_model_attn *at, const u64 *off,
		       u64 ho, const float *const *q, float *const *e, u32 nh,
		       u32 nt)
{
	RBLN_K(attn_heads)(at, off, ho, q, e, nh, nt, RBLN_DTYPE_F32);
}

static RBLN_OS_NOINLINE RBLN_K_ATTR void
RBLN_K(attn_heads_f16)(const struct rbln_model_attn *at, const u64 *off,
		       u64 ho, const float *const *q, float *const *e, u32 nh,
		       u32 nt)
{
	RBLN_K(attn_heads)(at, off, ho, q, e, nh, nt, RBLN_DTYPE_F16);
}

static RBLN_OS_NOINLINE RBLN_K_ATTR void
RBLN_K(attn_heads_bf16)(const struct rbln_model_attn *at, const u64 *off,
			u64 ho, const float *const *q, float *const *e, u32 nh,
			u32 nt)
{
	RBLN_K(attn_heads)(at, off, ho, q, e, nh, nt, RBLN_DTYPE_BF16);
}

/**
 * struct rbln_k_attn_row - one query row's part of a piece of work
 * @r: the row (of @q and @out)
 * @part: the partition
 * @k0: first KV head
 * @k1: one past the last
 */
struct rbln_k_attn_row {
	u64 r;
	u64 part;
	u32 k0;
	u32 k1;
};

/* One tile for every query head of KV heads [k0, k1) of one row. */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(attn_tile_heads)(const struct rbln_model_attn *at,
			const struct rbln_k_attn_row *row, const u64 *off,
			u32 nt, u32 dtype)
{
	const struct rbln_isa_attention *c = at->cmd;
	u64 ent = (u64)c->head_dim + 2;
	const float *q[RBLN_K_AH] = { NULL };
	float *e[RBLN_K_AH] = { NULL };
	u32 kvh, hb, nh, j, h;

	for (kvh = row->k0; kvh < row->k1; kvh++)
		for (hb = 0; hb < at->group; hb += nh) {
			nh = at->group - hb < RBLN_K_AH ? at->group - hb :
							  RBLN_K_AH;
#pragma GCC unroll 4
			for (j = 0; j < nh; j++) {
				h = kvh * at->group + hb + j;
				q[j] = (const float *)at->q +
				       row->r * c->q_stride +
				       (u64)h * c->head_dim;
				e[j] = (float *)at->work +
				       ((row->r * c->q_heads + h) * at->parts +
					row->part) * ent;
			}
			if (dtype == RBLN_DTYPE_BF16)
				RBLN_K(attn_heads_bf16)(at, off, kvh * at->head_bytes,
							q, e, nh, nt);
			else if (dtype == RBLN_DTYPE_F16)
				RBLN_K(attn_heads_f16)(at, off, kvh * at->head_bytes,
						       q, e, nh, nt);
			else
				RBLN_K(attn_heads_f32)(at, off, kvh * at->head_bytes,
						       q, e, nh, nt);
		}
}

/**
 * rbln_k_attn_tokens() - fold tokens [@t0, @t1) into one row's partials
 * @at: the command
 * @seq: the sequence
 * @row: the row, partition and KV heads
 * @t0: first token, on a tile boundary of its partition
 * @t1: one past the last
 * @dtype: the caches' type
 *
 * Tiles outer, heads inner: in the token-major layout a tile's token rows
 * are read front to back for all the piece's KV heads (a stream the
 * prefetchers follow); in the head-major one @row has one KV head, whose
 * keys and values are read as two runs. While one tile is computed the
 * next one's vectors are already on their way.
 *
 * Return: 0, or -RBLN_EIO for a bad block id.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR int
RBLN_K(attn_tokens)(const struct rbln_model_attn *at,
		    const struct rbln_model_seq *seq,
		    const struct rbln_k_attn_row *row, u64 t0, u64 t1,
		    u32 dtype)
{
	u64 off[2][RBLN_MODEL_ATTN_TILE];
	u32 nt, nn, cur = 0;
	u64 t;

	if (t0 >= t1)
		return 0;
	nt = t1 - t0 < RBLN_MODEL_ATTN_TILE ? t1 - t0 : RBLN_MODEL_ATTN_TILE;
	if (RBLN_K(tile_offsets)(at, seq, t0, nt, off[cur]))
		return -RBLN_EIO;
	RBLN_K(tile_prefetch)(at, off[cur], nt, row->k0, row->k1);
	for (t = t0; t < t1; t += nt, nt = nn, cur ^= 1) {
		nn = 0;
		if (t + nt < t1) {
			nn = t1 - t - nt < RBLN_MODEL_ATTN_TILE ?
			     t1 - t - nt : RBLN_MODEL_ATTN_TILE;
			if (RBLN_K(tile_offsets)(at, seq, t + nt, nn,
						 off[cur ^ 1]))
				return -RBLN_EIO;
			/*
			 * A head-major run continuing in the same block is
			 * followed by the hardware prefetcher (software
			 * prefetches there only took its fill buffers,
			 * measured); the next block's run starts cold.
			 */
			if (!at->head_major ||
			    off[cur ^ 1][0] != off[cur][nt - 1] + at->token_bytes)
				RBLN_K(tile_prefetch)(at, off[cur ^ 1], nn,
						      row->k0, row->k1);
		}
		RBLN_K(attn_tile_heads)(at, row, off[cur], nt, dtype);
	}
	return 0;
}

/*
 * rbln_k_attn_tokens() for all of @row's KV heads at once (token-major), or
 * one head after the other (head-major: each head's run read to its end).
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR int
RBLN_K(attn_heads_tokens)(const struct rbln_model_attn *at,
			  const struct rbln_model_seq *seq,
			  const struct rbln_k_attn_row *row, u64 t0, u64 t1,
			  u32 dtype)
{
	struct rbln_k_attn_row one = *row;

	if (!at->head_major)
		return RBLN_K(attn_tokens)(at, seq, row, t0, t1, dtype);
	for (one.k0 = row->k0; one.k0 < row->k1; one.k0++) {
		one.k1 = one.k0 + 1;
		if (RBLN_K(attn_tokens)(at, seq, &one, t0, t1, dtype))
			return -RBLN_EIO;
	}
	return 0;
}

/**
 * rbln_k_attn_rows() - rbln_model_kernels.attn_part for a constant dtype
 * @at: the command
 * @seq: the sequence
 * @k0: first KV head
 * @k1: one past the last
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
		  const struct rbln_model_seq *seq, u32 k0, u32 k1, u64 part,
		  u32 i0, u32 i1, u64 j0, u64 j1, u32 dtype)
{
	const struct rbln_isa_attention *c = at->cmd;
	u64 ent = (u64)c->head_dim + 2;
	u64 pstart = part * c->partition_len;
	u64 pend = pstart + c->partition_len;
	u64 base = seq->ctx_len - seq->q_len;
	struct rbln_k_attn_row row = { .part = part, .k0 = k0, .k1 = k1 };
	u64 pos, t0, t1;
	u32 i, h;
	float *e;

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
		row.r = seq->q_start + i;
		/* The partition's first tokens: start its partials. */
		for (h = k0 * at->group; !j0 && h < k1 * at->group; h++) {
			e = (float *)at->work +
			    ((row.r * c->q_heads + h) * at->parts + part) * ent;
			memset(e, 0, ent * 4);
			e[0] = -__builtin_inff();
		}
		if (RBLN_K(attn_heads_tokens)(at, seq, &row, t0, t1, dtype))
			return -RBLN_EIO;
	}
	return 0;
}

static RBLN_K_ATTR int
RBLN_K(attn_part)(const struct rbln_model_attn *at,
		  const struct rbln_model_seq *seq, u32 k0, u32 k1, u64 part,
		  u32 i0, u32 i1, u64 j0, u64 j1)
{
	switch (at->cmd->dtype) {
	case RBLN_DTYPE_BF16:
		return RBLN_K(attn_rows)(at, seq, k0, k1, part, i0, i1, j0, j1,
					 RBLN_DTYPE_BF16);
	case RBLN_DTYPE_F16:
		return RBLN_K(attn_rows)(at, seq, k0, k1, part, i0, i1, j0, j1,
					 RBLN_DTYPE_F16);
	}
	return RBLN_K(attn_rows)(at, seq, k0, k1, part, i0, i1, j0, j1,
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
