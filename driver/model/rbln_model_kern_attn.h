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
 * Within a tile, the scores of W tokens come out as one vector (lane t,
 * token t) from a transposing tree of sums (rbln_k_attn_dots()); the
 * maximum, the exponentials and the rescale follow per tile; then each
 * token's values are loaded once for all heads into outputs held in
 * registers (rbln_k_attn_values()). Each key and value is prefetched
 * RBLN_MODEL_ATTN_PREFETCH bytes ahead into L2: the hardware's prefetchers
 * stop at each 4 KiB page of a head-major run, and fall behind the reads
 * between the bursts of arithmetic.
 *
 * Both cache layouts are read by the same code through three strides
 * (&struct rbln_model_attn): a token's place in a tile is
 * block * block_bytes + offset * token_bytes, its KV head's vector is
 * head_bytes further. Head-major caches are read one KV head at a time,
 * so each block's keys and values of that head are two contiguous runs.
 */

#define RBLN_K_AH	4U	/* query heads per pass over a tile */
/*
 * Output vectors per query head held in registers over a tile's values:
 * RBLN_K_AH heads of them, plus as many value vectors, fit the 32 ZMM
 * registers of AVX-512 with four, the 16 of AVX2 and SSE with two.
 */
#define RBLN_K_AV	(RBLN_K_W == 16 ? 4U : 2U)
/* Levels of rbln_k_attn_scores()'s tree: log2(RBLN_K_W). */
#define RBLN_K_LEVELS	(RBLN_K_W == 16 ? 4 : RBLN_K_W == 8 ? 3 : 2)

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
	return (RBLN_K_VF)(RBLN_K(widen16)(h) << 16);
}

/**
 * rbln_k_attn_exp() - e^x for each lane of x <= 0 (a weight's exponent)
 * @x: the exponents: a score minus the running maximum, so at most 0;
 *	-inf for padding; NaN where a score is NaN
 *
 * rbln_k_vexp()'s reduction and polynomial in fused multiply-adds (the
 * variant's RBLN_K_MADD), with one scale by 2^n: below -87 the result is
 * e^-87 (about 1.6e-38, a normal float) instead of a subnormal or zero,
 * which changes no weight that matters beside the maximum's e^0 = 1. A
 * NaN stays NaN. Half of rbln_k_vexp()'s instructions: nine of these per
 * tile of 32 tokens and four heads.
 *
 * Return: the values.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR RBLN_K_VF RBLN_K(attn_exp)(RBLN_K_VF x)
{
	const RBLN_K_VF lo = RBLN_K_SPLAT(-87.0f);
	const RBLN_K_VF magic = RBLN_K_SPLAT(12582912.0f);
	RBLN_K_VF t, nf, r, p;
	RBLN_K_VI n;

	x = RBLN_K(sel)(x < lo, lo, x);
	/* Adding 1.5 * 2^23 rounds to an integer held in the low bits. */
	t = magic;
	RBLN_K_MADD(t, x, RBLN_K_SPLAT(1.44269504088896341f));
	nf = t - magic;
	n = (RBLN_K_VI)t - (RBLN_K_VI)magic;
	r = x;
	RBLN_K_MADD(r, nf, RBLN_K_SPLAT(-0.693359375f));
	RBLN_K_MADD(r, nf, RBLN_K_SPLAT(0.000212194440f));
	p = RBLN_K_SPLAT(0.0013981999507f);
	RBLN_K_MADD(p, r, RBLN_K_SPLAT(0.00019875691500f));
	t = RBLN_K_SPLAT(0.0083334519073f);
	RBLN_K_MADD(t, p, r);
	p = RBLN_K_SPLAT(0.041665795894f);
	RBLN_K_MADD(p, t, r);
	t = RBLN_K_SPLAT(0.16666665459f);
	RBLN_K_MADD(t, p, r);
	p = RBLN_K_SPLAT(0.50000001201f);
	RBLN_K_MADD(p, t, r);
	t = r;
	RBLN_K_MADD(t, p, r * r);
	p = t + 1.0f;
	return p * (RBLN_K_VF)((n + 127) << 23);
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
 * Asks for the line RBLN_MODEL_ATTN_PREFETCH bytes after @p, a line of a
 * key or value about to be loaded, into L2.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(run_prefetch)(const u8 *p)
{
	__builtin_prefetch(p + RBLN_MODEL_ATTN_PREFETCH, 0, 2);
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
 * rbln_k_attn_dots() - the dot products of up to RBLN_K_W tokens' keys
 *	with @nh query heads, over @nv vectors of head_dim
 * @k: the keys' first element (the KV head, plus the chunk's offset)
 * @off: the tokens' rows in the caches (rbln_k_tile_offsets())
 * @q: the heads' query vectors, at the chunk
 * @s: out: lane t of @s[j] is token t's product for head j
 * @nh: heads, 1 to RBLN_K_AH, a constant where inlined
 * @nt: tokens, 1 to RBLN_K_W
 * @nv: vectors, 1 to RBLN_K_AV, a constant where inlined
 * @dtype: the caches' type, a constant where inlined
 *
 * Each token's key is loaded once for all heads; a head's products are one
 * chain of FMAs per token, whose lanes are then summed for all W tokens at
 * once by a transposing tree (rbln_k_tsum()), built up as the tokens
 * come, like a binary counter: no token waits for a horizontal sum of its
 * own. Straight-line code: the tokens are unrolled, the vectors constant.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(attn_dots)(const u8 *k, const u64 *off, const float *const *q,
		  RBLN_K_VF *s, u32 nh, u32 nt, u32 nv, u32 dtype)
{
	u32 es = rbln_model_dtype_size(dtype) * RBLN_K_W;
	RBLN_K_VF pend[RBLN_K_AH][RBLN_K_LEVELS] RBLN_OS_UNINIT;
	RBLN_K_VF acc[RBLN_K_AH] RBLN_OS_UNINIT, kv, qv;
	u32 i, j, t, lv, n;

	/* Dead stores where @nh is a constant; else what GCC can't follow. */
#pragma GCC unroll 4
	for (j = 0; j < RBLN_K_AH; j++) {
		acc[j] = RBLN_K(zero)();
#pragma GCC unroll 4
		for (lv = 0; lv < RBLN_K_LEVELS; lv++)
			pend[j][lv] = acc[j];
	}
#pragma GCC unroll 16
	for (t = 0; t < RBLN_K_W; t++) {
#pragma GCC unroll 4
		for (j = 0; j < nh; j++)
			acc[j] = RBLN_K(zero)();
		if (t < nt) {
#pragma GCC unroll 4
			for (i = 0; i < nv * es; i += 64)
				RBLN_K(run_prefetch)(k + off[t] + i);
#pragma GCC unroll 4
			for (i = 0; i < nv; i++) {
				kv = RBLN_K(cache_load)(k + off[t] + i * es,
							dtype);
#pragma GCC unroll 4
				for (j = 0; j < nh; j++) {
					memcpy(&qv, q[j] + i * RBLN_K_W,
					       sizeof(qv));
					RBLN_K_MADD(acc[j], qv, kv);
				}
			}
		}
		/* Fold token t into each head's tree; t's bits say where. */
#pragma GCC unroll 4
		for (j = 0; j < nh; j++) {
			kv = acc[j];
#pragma GCC unroll 4
			for (lv = 0, n = RBLN_K_W / 2; n; lv++, n /= 2) {
				if (!(t >> lv & 1)) {
					pend[j][lv] = kv;
					break;
				}
				kv = RBLN_K(tsum)(pend[j][lv], kv, n);
			}
			if (!n)
				s[j] = kv;
		}
	}
}

/*
 * rbln_k_attn_dots() of one vector, for a head_dim that is not a multiple
 * of RBLN_K_AV vectors: out of line, with its own stack frame (the tile
 * functions' frames stay under the kernel's 2 KiB), the head count a
 * variable.
 */
#define RBLN_K_ATTN_D1_FN(name, dtype)					\
static RBLN_OS_NOINLINE RBLN_K_ATTR void				\
RBLN_K(name)(const u8 *k, const u64 *off, const float *const *q,	\
	     RBLN_K_VF *s, u32 nh, u32 nt)				\
{									\
	RBLN_K(attn_dots)(k, off, q, s, nh, nt, 1, dtype);		\
}

RBLN_K_ATTN_D1_FN(attn_dots1_bf16, RBLN_DTYPE_BF16)
RBLN_K_ATTN_D1_FN(attn_dots1_f16, RBLN_DTYPE_F16)
RBLN_K_ATTN_D1_FN(attn_dots1_f32, RBLN_DTYPE_F32)

/**
 * rbln_k_attn_scores() - the scores of up to RBLN_K_W tokens for @nh
 *	query heads
 * @at: the command
 * @off: the tokens' rows in the caches (rbln_k_tile_offsets())
 * @ho: the KV head's byte offset within a row
 * @q: the heads' query vectors
 * @s: out: lane t of @s[j] is token t's score for head j; lanes from @nt
 *	on are -inf
 * @nh: heads, 1 to RBLN_K_AH, a constant where inlined
 * @nt: tokens, 1 to RBLN_K_W
 * @dtype: the caches' type, a constant where inlined
 *
 * head_dim in chunks of RBLN_K_AV vectors (a 64-float head is one), then
 * single vectors; the chunks' dot products are added in order.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(attn_scores)(const struct rbln_model_attn *at, const u64 *off, u64 ho,
		    const float *const *q, RBLN_K_VF *s, u32 nh, u32 nt,
		    u32 dtype)
{
	const struct rbln_isa_attention *c = at->cmd;
	const u8 *k = at->k_cache + ho;
	u32 es = rbln_model_dtype_size(dtype);
	RBLN_K_VF part[RBLN_K_AH] RBLN_OS_UNINIT, ninf;
	const float *qd[RBLN_K_AH] = { NULL };
	RBLN_K_VI lane;
	float scale;
	u32 d, j, t, nv;

	memcpy(&scale, &c->scale, 4);
#pragma GCC unroll 4
	for (j = 0; j < nh; j++)
		s[j] = RBLN_K(zero)();
	for (d = 0; d < c->head_dim; d += nv * RBLN_K_W) {
#pragma GCC unroll 4
		for (j = 0; j < nh; j++)
			qd[j] = q[j] + d;
		nv = d + RBLN_K_AV * RBLN_K_W <= c->head_dim ? RBLN_K_AV : 1;
		if (nv == RBLN_K_AV)
			RBLN_K(attn_dots)(k + d * es, off, qd, part, nh, nt,
					  RBLN_K_AV, dtype);
		else if (dtype == RBLN_DTYPE_BF16)
			RBLN_K(attn_dots1_bf16)(k + d * es, off, qd, part, nh,
						nt);
		else if (dtype == RBLN_DTYPE_F16)
			RBLN_K(attn_dots1_f16)(k + d * es, off, qd, part, nh,
					       nt);
		else
			RBLN_K(attn_dots1_f32)(k + d * es, off, qd, part, nh,
					       nt);
#pragma GCC unroll 4
		for (j = 0; j < nh; j++)
			s[j] = d ? s[j] + part[j] : part[j];
	}
	for (t = 0; t < RBLN_K_W; t++)
		lane[t] = (s32)t;
	ninf = RBLN_K_SPLAT(-__builtin_inff());
#pragma GCC unroll 4
	for (j = 0; j < nh; j++)
		s[j] = RBLN_K(sel)(lane < (s32)nt, s[j] * scale, ninf);
}

/**
 * rbln_k_attn_values() - fold a tile's values into @nv output vectors
 *	of @nh heads' partials
 * @at: the command
 * @off: the tile's tokens' rows in the caches
 * @ho: the KV head's byte offset within a row
 * @p: the tokens' weights, RBLN_MODEL_ATTN_TILE per head
 * @alpha: the heads' rescale factors for the partials
 * @e: the heads' partials (m, l, o[head_dim])
 * @nh: heads, 1 to RBLN_K_AH, a constant where inlined
 * @nt: tokens
 * @d: the first output element
 * @nv: output vectors, 1 to RBLN_K_AV, a constant where inlined
 * @dtype: the caches' type, a constant where inlined
 *
 * The outputs stay in registers over the tile; each token's value vectors
 * are loaded once for all heads. A bf16 cache's values are widened two
 * vectors at a time without a shuffle: 2W elements, read as W 32-bit
 * words, are the even elements shifted up and the odd ones masked; the
 * outputs are held in that order over the tile (the same sums in every
 * lane: the same bits).
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(attn_values)(const struct rbln_model_attn *at, const u64 *off, u64 ho,
		    const float *p, const float *alpha, float *const *e,
		    u32 nh, u32 nt, u32 d, u32 nv, u32 dtype)
{
	const u8 *v = at->v_cache + ho + (u64)d * rbln_model_dtype_size(dtype);
	u32 es = rbln_model_dtype_size(dtype) * RBLN_K_W;
	RBLN_K_VF o[RBLN_K_AH][RBLN_K_AV] RBLN_OS_UNINIT;
	RBLN_K_VF kv[RBLN_K_AV] RBLN_OS_UNINIT, pv, a, b;
	/* Pairs of vectors of a bf16 cache are widened as even and odd. */
	bool eo = dtype == RBLN_DTYPE_BF16 && !(nv & 1);
	RBLN_K_VU x;
	u32 i, j, t;

#pragma GCC unroll 4
	for (j = 0; j < nh; j++) {
		pv = RBLN_K_SPLAT(alpha[j]);
#pragma GCC unroll 4
		for (i = 0; i < nv; i++) {
			memcpy(&o[j][i], e[j] + 2 + d + i * RBLN_K_W,
			       sizeof(o[j][i]));
			o[j][i] = o[j][i] * pv;
		}
#pragma GCC unroll 4
		for (i = 0; eo && i < nv; i += 2) {
			a = RBLN_K(evens)(o[j][i], o[j][i + 1]);
			o[j][i + 1] = RBLN_K(odds)(o[j][i], o[j][i + 1]);
			o[j][i] = a;
		}
	}
	for (t = 0; t < nt; t++) {
		for (i = 0; i < nv * es; i += 64)
			RBLN_K(run_prefetch)(v + off[t] + i);
#pragma GCC unroll 4
		for (i = 0; eo && i < nv; i += 2) {
			/* 2W bf16: the even ones << 16, the odd ones masked. */
			memcpy(&x, v + off[t] + i * es, sizeof(x));
			kv[i] = (RBLN_K_VF)(x << 16);
			kv[i + 1] = (RBLN_K_VF)(x & 0xffff0000U);
		}
#pragma GCC unroll 4
		for (i = 0; !eo && i < nv; i++)
			kv[i] = RBLN_K(cache_load)(v + off[t] + i * es, dtype);
#pragma GCC unroll 4
		for (j = 0; j < nh; j++) {
			pv = RBLN_K_SPLAT(p[j * RBLN_MODEL_ATTN_TILE + t]);
#pragma GCC unroll 4
			for (i = 0; i < nv; i++)
				RBLN_K_MADD(o[j][i], pv, kv[i]);
		}
	}
#pragma GCC unroll 4
	for (j = 0; j < nh; j++) {
#pragma GCC unroll 4
		for (i = 0; eo && i < nv; i += 2) {
			a = RBLN_K(interleave)(o[j][i], o[j][i + 1], 0);
			b = RBLN_K(interleave)(o[j][i], o[j][i + 1], 1);
			o[j][i] = a;
			o[j][i + 1] = b;
		}
#pragma GCC unroll 4
		for (i = 0; i < nv; i++)
			memcpy(e[j] + 2 + d + i * RBLN_K_W, &o[j][i],
			       sizeof(o[j][i]));
	}
}

/**
 * rbln_k_attn_weights() - a tile's weights for @nh query heads of one row
 * @at: the command
 * @off: the tile's tokens' rows in the caches (rbln_k_tile_offsets())
 * @ho: the KV head's byte offset within a row
 * @q: the heads' query vectors
 * @e: the heads' partials (m, l, o[head_dim]) in @work: m and l updated
 * @p: out: the tokens' weights, RBLN_MODEL_ATTN_TILE per head
 * @alpha: out: the heads' rescale factors for o
 * @nh: heads, 1 to RBLN_K_AH, a constant where inlined
 * @nt: tokens, 1 to RBLN_MODEL_ATTN_TILE
 * @dtype: the caches' type, a constant where inlined
 *
 * The scores of the whole tile first, then one maximum, one exp for the
 * rescale of the partials and the exponentials per head and tile.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(attn_weights)(const struct rbln_model_attn *at, const u64 *off,
		     u64 ho, const float *const *q, float *const *e, float *p,
		     float *alpha, u32 nh, u32 nt, u32 dtype)
{
	RBLN_K_VF s[RBLN_K_AH] RBLN_OS_UNINIT, mv, sv, pv;
	float am[RBLN_K_AH] RBLN_OS_UNINIT, sums[RBLN_K_AH] RBLN_OS_UNINIT;
	u32 nv = (nt + RBLN_K_W - 1) / RBLN_K_W;
	float mn, *pj;
	u32 j, i, w;

	for (i = 0; i < nv; i++) {
		w = nt - i * RBLN_K_W;
		RBLN_K(attn_scores)(at, off + i * RBLN_K_W, ho, q, s, nh,
				    w < RBLN_K_W ? w : RBLN_K_W, dtype);
#pragma GCC unroll 4
		for (j = 0; j < nh; j++)
			memcpy(p + j * RBLN_MODEL_ATTN_TILE + i * RBLN_K_W,
			       &s[j], sizeof(s[j]));
	}
#pragma GCC unroll 4
	for (j = 0; j < nh; j++) {
		/*
		 * Branch-free: the tile's maximum by vector max (a NaN
		 * score never wins, as with the scalar "x > m"), then its
		 * exponentials and their sum as vectors, padding lanes e^-inf.
		 */
		pj = p + j * RBLN_MODEL_ATTN_TILE;
		mv = RBLN_K_SPLAT(e[j][0]);
		for (i = 0; i < nv; i++) {
			memcpy(&pv, pj + i * RBLN_K_W, sizeof(pv));
			mv = RBLN_K(sel)(pv > mv, pv, mv);
		}
		mn = RBLN_K(hmax)(mv);
		am[j] = e[j][0] - mn;
		sv = RBLN_K(zero)();
		mv = RBLN_K_SPLAT(mn);
		for (i = 0; i < nv; i++) {
			memcpy(&pv, pj + i * RBLN_K_W, sizeof(pv));
			pv = RBLN_K(attn_exp)(pv - mv);
			memcpy(pj + i * RBLN_K_W, &pv, sizeof(pv));
			sv = sv + pv;
		}
		e[j][0] = mn;
		sums[j] = RBLN_K(hsum)(sv);
	}
	/* The rescale factors of all heads in one exp. */
	mv = RBLN_K(zero)();
	memcpy(&mv, am, sizeof(float) * nh);
	mv = RBLN_K(attn_exp)(mv);
	memcpy(alpha, &mv, sizeof(float) * nh);
#pragma GCC unroll 4
	for (j = 0; j < nh; j++)
		e[j][1] = e[j][1] * alpha[j] + sums[j];
}

/*
 * rbln_k_attn_values() over all of head_dim: RBLN_K_AV vectors at a time,
 * then single ones.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(attn_values_all)(const struct rbln_model_attn *at, const u64 *off,
			u64 ho, const float *p, const float *alpha,
			float *const *e, u32 nh, u32 nt, u32 dtype)
{
	/* float16's widening takes registers: half the outputs at a time. */
	u32 av = dtype == RBLN_DTYPE_F16 ? RBLN_K_AV / 2 : RBLN_K_AV;
	u32 hd = at->cmd->head_dim, d;

	for (d = 0; d + av * RBLN_K_W <= hd; d += av * RBLN_K_W)
		RBLN_K(attn_values)(at, off, ho, p, alpha, e, nh, nt, d, av,
				    dtype);
	for (; d < hd; d += RBLN_K_W)
		RBLN_K(attn_values)(at, off, ho, p, alpha, e, nh, nt, d, 1,
				    dtype);
}

/*
 * The two halves of a tile out of line, one function each per cache type
 * and head count: the head count and type are constants in them
 * (registers, unrolled loops), and each has its own stack frame, so no
 * frame adds up the others (the kernel warns above 2 KiB).
 */
#define RBLN_K_ATTN_W_FN(name, nh, dtype)				\
static RBLN_OS_NOINLINE RBLN_K_ATTR void				\
RBLN_K(name)(const struct rbln_model_attn *at, const u64 *off, u64 ho,	\
	     const float *const *q, float *const *e, float *p,		\
	     float *alpha, u32 nt)					\
{									\
	RBLN_K(attn_weights)(at, off, ho, q, e, p, alpha, nh, nt,	\
			     dtype);					\
}

#define RBLN_K_ATTN_V_FN(name, nh, dtype)				\
static RBLN_OS_NOINLINE RBLN_K_ATTR void				\
RBLN_K(name)(const struct rbln_model_attn *at, const u64 *off, u64 ho,	\
	     const float *p, const float *alpha, float *const *e,	\
	     u32 nt)							\
{									\
	RBLN_K(attn_values_all)(at, off, ho, p, alpha, e, nh, nt,	\
				dtype);					\
}

RBLN_K_ATTN_W_FN(attn_w_bf16_1, 1, RBLN_DTYPE_BF16)
RBLN_K_ATTN_W_FN(attn_w_bf16_2, 2, RBLN_DTYPE_BF16)
RBLN_K_ATTN_W_FN(attn_w_bf16_3, 3, RBLN_DTYPE_BF16)
RBLN_K_ATTN_W_FN(attn_w_bf16_4, 4, RBLN_DTYPE_BF16)
RBLN_K_ATTN_W_FN(attn_w_f16_1, 1, RBLN_DTYPE_F16)
RBLN_K_ATTN_W_FN(attn_w_f16_2, 2, RBLN_DTYPE_F16)
RBLN_K_ATTN_W_FN(attn_w_f16_3, 3, RBLN_DTYPE_F16)
RBLN_K_ATTN_W_FN(attn_w_f16_4, 4, RBLN_DTYPE_F16)
RBLN_K_ATTN_W_FN(attn_w_f32_1, 1, RBLN_DTYPE_F32)
RBLN_K_ATTN_W_FN(attn_w_f32_2, 2, RBLN_DTYPE_F32)
RBLN_K_ATTN_W_FN(attn_w_f32_3, 3, RBLN_DTYPE_F32)
RBLN_K_ATTN_W_FN(attn_w_f32_4, 4, RBLN_DTYPE_F32)
RBLN_K_ATTN_V_FN(attn_v_bf16_1, 1, RBLN_DTYPE_BF16)
RBLN_K_ATTN_V_FN(attn_v_bf16_2, 2, RBLN_DTYPE_BF16)
RBLN_K_ATTN_V_FN(attn_v_bf16_3, 3, RBLN_DTYPE_BF16)
RBLN_K_ATTN_V_FN(attn_v_bf16_4, 4, RBLN_DTYPE_BF16)
RBLN_K_ATTN_V_FN(attn_v_f16_1, 1, RBLN_DTYPE_F16)
RBLN_K_ATTN_V_FN(attn_v_f16_2, 2, RBLN_DTYPE_F16)
RBLN_K_ATTN_V_FN(attn_v_f16_3, 3, RBLN_DTYPE_F16)
RBLN_K_ATTN_V_FN(attn_v_f16_4, 4, RBLN_DTYPE_F16)
RBLN_K_ATTN_V_FN(attn_v_f32_1, 1, RBLN_DTYPE_F32)
RBLN_K_ATTN_V_FN(attn_v_f32_2, 2, RBLN_DTYPE_F32)
RBLN_K_ATTN_V_FN(attn_v_f32_3, 3, RBLN_DTYPE_F32)
RBLN_K_ATTN_V_FN(attn_v_f32_4, 4, RBLN_DTYPE_F32)

/**
 * struct rbln_k_attn_halves - the two halves of a tile for one cache type
 *	and head count
 * @w: the weights (rbln_k_attn_weights())
 * @v: the values (rbln_k_attn_values_all())
 */
struct rbln_k_attn_halves {
	void (*w)(const struct rbln_model_attn *at, const u64 *off, u64 ho,
		  const float *const *q, float *const *e, float *p,
		  float *alpha, u32 nt);
	void (*v)(const struct rbln_model_attn *at, const u64 *off, u64 ho,
		  const float *p, const float *alpha, float *const *e, u32 nt);
};

/* By cache type (bf16, f16, f32), then head count less one. */
static const struct rbln_k_attn_halves RBLN_K(attn_halves)[3][RBLN_K_AH] = {
	{
		{ RBLN_K(attn_w_bf16_1), RBLN_K(attn_v_bf16_1) },
		{ RBLN_K(attn_w_bf16_2), RBLN_K(attn_v_bf16_2) },
		{ RBLN_K(attn_w_bf16_3), RBLN_K(attn_v_bf16_3) },
		{ RBLN_K(attn_w_bf16_4), RBLN_K(attn_v_bf16_4) },
	}, {
		{ RBLN_K(attn_w_f16_1), RBLN_K(attn_v_f16_1) },
		{ RBLN_K(attn_w_f16_2), RBLN_K(attn_v_f16_2) },
		{ RBLN_K(attn_w_f16_3), RBLN_K(attn_v_f16_3) },
		{ RBLN_K(attn_w_f16_4), RBLN_K(attn_v_f16_4) },
	}, {
		{ RBLN_K(attn_w_f32_1), RBLN_K(attn_v_f32_1) },
		{ RBLN_K(attn_w_f32_2), RBLN_K(attn_v_f32_2) },
		{ RBLN_K(attn_w_f32_3), RBLN_K(attn_v_f32_3) },
		{ RBLN_K(attn_w_f32_4), RBLN_K(attn_v_f32_4) },
	},
};

/**
 * rbln_k_attn_heads() - fold one tile of tokens into the partials of
 *	@nh query heads of one row
 * @at: the command
 * @off: the tile's tokens' rows in the caches (rbln_k_tile_offsets())
 * @ho: the KV head's byte offset within a row
 * @q: the heads' query vectors
 * @e: the heads' partials (m, l, o[head_dim]) in @work
 * @nh: heads, 1 to RBLN_K_AH
 * @nt: tokens, 1 to RBLN_MODEL_ATTN_TILE
 * @dtype: the caches' type
 *
 * The weights of the whole tile (rbln_k_attn_weights()), then the values:
 * each token's value vectors are loaded once for all heads, into
 * RBLN_K_AV vectors of output per head held in registers.
 */
static inline RBLN_OS_INLINE RBLN_K_ATTR void
RBLN_K(attn_heads)(const struct rbln_model_attn *at, const u64 *off, u64 ho,
		   const float *const *q, float *const *e, u32 nh, u32 nt,
		   u32 dtype)
{
	const struct rbln_k_attn_halves *f;
	float p[RBLN_K_AH * RBLN_MODEL_ATTN_TILE] RBLN_OS_UNINIT;
	float alpha[RBLN_K_W] RBLN_OS_UNINIT;

	f = &RBLN_K(attn_halves)[dtype == RBLN_DTYPE_BF16 ? 0 :
				 dtype == RBLN_DTYPE_F16 ? 1 : 2][nh - 1];
	f->w(at, off, ho, q, e, p, alpha, nt);
	f->v(at, off, ho, p, alpha, e, nt);
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
			RBLN_K(attn_heads)(at, off, kvh * at->head_bytes, q, e,
					   nh, nt, dtype);
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
	u64 off[2][RBLN_MODEL_ATTN_TILE] RBLN_OS_UNINIT;
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
