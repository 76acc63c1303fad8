// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_exec_attn.c - ATTENTION: the sequence descriptors (run-time
 * data, checked here), the pieces of the two phases and their FPU
 * brackets.
 *
 * Phase one computes the partial results of every (sequence, partition,
 * group of KV heads), each piece independent of the others: that is where
 * decode gets its parallelism, since one long sequence yields many
 * partitions. A piece covers all KV heads when there are enough pieces
 * for the engines (its heads' runs of a head-major cache, or its tokens'
 * rows of a token-major one, are then read front to back), fewer
 * otherwise; how heads are grouped does not change any result.
 * Phase two merges each query row's partitions in order. A piece is cut
 * into brackets of a few rows by RBLN_MODEL_ATTN_TOKENS tokens (a
 * multiple of the tile, so the tiles, and with them the numerics, are
 * those of one pass). The descriptors are read again in phase two: they
 * may have changed meanwhile (they live in a buffer others can write),
 * and every use must be checked, though a changed one only yields wrong
 * numbers, never an access outside the operands.
 */

#include "rbln_model_internal.h"

#define RBLN_MODEL_ATTN_TOKENS	256U
/* Query rows x heads x head_dim per bracket: about 2 MFLOP at 256 tokens. */
#define RBLN_MODEL_ATTN_BUDGET	2048U
/*
 * Fewest multiply-adds worth waking another engine for: a short decode
 * context is a few microseconds of work, less than a wake-up, so small
 * commands run on few engines and long ones on all. 64K of them read
 * about 64 KiB of a float32 cache from memory (~4 us for one core): with
 * 256K, a 1B-shape decode step's attention over 130 tokens ran on 2 of 16
 * engines, at 110 us a layer.
 */
#define RBLN_MODEL_ATTN_PART_FMA	0x10000ULL

/**
 * rbln_model_attn_seq() - read and check sequence descriptor @s
 * @at: the command
 * @s: the sequence, below @at->nseqs
 * @seq: the descriptor, checked
 *
 * Return: 0; 1 for a sequence without query rows (nothing to do);
 * -RBLN_EIO for a value out of range.
 */
static int rbln_model_attn_seq(const struct rbln_model_attn *at, u64 s,
			       struct rbln_model_seq *seq)
{
	const struct rbln_isa_attention *c = at->cmd;
	const u8 *d = at->seqs + s * 16;
	s32 q_start = rbln_os_read_once_s32(d);
	s32 q_len = rbln_os_read_once_s32(d + 4);
	s32 ctx_len = rbln_os_read_once_s32(d + 8);
	s32 row = rbln_os_read_once_s32(d + 12);

	if (q_start < 0 || q_len < 0 || ctx_len < 0 || row < 0)
		return -RBLN_EIO;
	if (!q_len)
		return 1;
	if ((u64)q_start + (u64)q_len > at->rows || ctx_len < q_len ||
	    (u64)ctx_len > (u64)c->max_blocks * c->block_size ||
	    (u64)row >= at->table_rows)
		return -RBLN_EIO;
	seq->q_start = (u64)q_start;
	seq->q_len = (u32)q_len;
	seq->ctx_len = (u32)ctx_len;
	seq->table = at->tables + (u64)row * c->max_blocks * 4;
	return 0;
}

/* Query rows per bracket. */
static u32 rbln_model_attn_rows(const struct rbln_model_attn *at)
{
	u32 per = RBLN_MODEL_ATTN_BUDGET /
		  (at->group * at->kv_per_piece * at->cmd->head_dim);

	return per ? per : 1;
}

/*
 * KV heads per piece: all of them, unless that leaves fewer than four
 * pieces per engine; then halved until there are enough (or one head).
 */
static void rbln_model_attn_groups(struct rbln_model_attn *at, u32 engines)
{
	u32 kvh = at->cmd->kv_heads;
	u64 base = at->nseqs * at->parts;

	at->kv_per_piece = kvh;
	while (at->kv_per_piece > 1 &&
	       base * ((kvh + at->kv_per_piece - 1) / at->kv_per_piece) <
	       4ULL * engines)
		at->kv_per_piece = (at->kv_per_piece + 1) / 2;
	at->kv_groups = (kvh + at->kv_per_piece - 1) / at->kv_per_piece;
}

/* Phase one: the partials of one (sequence, partition, KV head group). */
static int rbln_model_attn_piece(struct rbln_model_par *par, u64 piece)
{
	const struct rbln_model_attn *at = par->ctx;
	const struct rbln_isa_attention *c = at->cmd;
	u64 per_seq = (u64)at->kv_groups * at->parts;
	u64 s = piece / per_seq;
	u64 part = piece % per_seq / at->kv_groups;
	u32 k0 = (u32)(piece % at->kv_groups) * at->kv_per_piece;
	u32 k1 = k0 + at->kv_per_piece;
	u64 pstart = part * c->partition_len;
	u32 rb = rbln_model_attn_rows(at);
	struct rbln_model_seq seq;
	u64 base, plen, j, j1;
	u32 i, i1;
	int ret;

	if (k1 > c->kv_heads)
		k1 = c->kv_heads;
	ret = rbln_model_attn_seq(at, s, &seq);
	if (ret)
		return ret < 0 ? ret : 0;
	if (pstart >= seq.ctx_len)
		return 0;
	plen = seq.ctx_len - pstart;
	if (plen > c->partition_len)
		plen = c->partition_len;
	/* Rows before the partition's first token do not see it. */
	base = seq.ctx_len - seq.q_len;
	i = pstart > base ? (u32)(pstart - base) : 0;
	for (; i < seq.q_len; i = i1) {
		i1 = seq.q_len - i < rb ? seq.q_len : i + rb;
		for (j = 0; j < plen; j = j1) {
			j1 = plen - j < RBLN_MODEL_ATTN_TOKENS ? plen :
				j + RBLN_MODEL_ATTN_TOKENS;
			if (rbln_model_par_stopped(par))
				return 0;
			rbln_os_fpu_begin();
			ret = par->kern->attn_part(at, &seq, k0, k1, part, i, i1,
						   j, j1);
			rbln_os_fpu_end();
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Phase two: merge the partitions of one sequence's rows. */
static int rbln_model_attn_merge_piece(struct rbln_model_par *par, u64 piece)
{
	const struct rbln_model_attn *at = par->ctx;
	u32 rb = rbln_model_attn_rows(at);
	struct rbln_model_seq seq;
	u32 i, i1;
	int ret;

	ret = rbln_model_attn_seq(at, piece, &seq);
	if (ret)
		return ret < 0 ? ret : 0;
	for (i = 0; i < seq.q_len; i = i1) {
		i1 = seq.q_len - i < rb ? seq.q_len : i + rb;
		if (i && rbln_model_par_stopped(par))
			return 0;
		rbln_os_fpu_begin();
		par->kern->attn_merge(at, &seq, i, i1);
		rbln_os_fpu_end();
	}
	return 0;
}

/**
 * rbln_model_attn_work() - the multiply-adds of both phases, for the split
 * @at: the command
 * @part_fma: phase one, all sequences: query rows times the tokens they
 *	see, per query head and head_dim, for keys and values
 * @merge_fma: phase two: query rows times the partitions their contexts
 *	use, per query head and head_dim
 *
 * The number of pieces says little about the work: pieces exist for every
 * partition the block tables could hold, and in a short decode context
 * nearly all of them are empty. Splitting by their count woke every engine
 * for a few microseconds of work each. The descriptors are run-time data,
 * read once here for the estimate only: a wrong one only misjudges the
 * split (the pieces check what they use).
 */
static void rbln_model_attn_work(const struct rbln_model_attn *at,
				 u64 *part_fma, u64 *merge_fma)
{
	const struct rbln_isa_attention *c = at->cmd;
	u64 tokens = (u64)c->max_blocks * c->block_size;
	u64 per = 2ULL * c->q_heads * c->head_dim;
	u64 s, q, ctx, used;
	s32 v;

	*part_fma = 0;
	*merge_fma = 0;
	for (s = 0; s < at->nseqs; s++) {
		v = rbln_os_read_once_s32(at->seqs + s * 16 + 4);
		q = v > 0 ? (u64)v : 0;
		v = rbln_os_read_once_s32(at->seqs + s * 16 + 8);
		ctx = v > 0 ? (u64)v : 0;
		if (q > at->rows)
			q = at->rows;
		if (ctx > tokens)
			ctx = tokens;
		used = (ctx + c->partition_len - 1) / c->partition_len;
		/* Unsigned: a wrap on absurd shapes only misjudges the split. */
		*part_fma += q * ctx * per;
		*merge_fma += q * used * per;
	}
}

/*
 * Fewest pieces per engine for @pieces pieces of @fma multiply-adds in
 * all: the engines the work is worth, as rbln_model_par_run() wants it.
 */
static u64 rbln_model_attn_min_pieces(u64 pieces, u64 fma)
{
	u64 engines = fma / RBLN_MODEL_ATTN_PART_FMA;

	return engines > 1 ? pieces / engines : pieces;
}

/**
 * rbln_model_exec_attention() - RBLN_OP_ATTENTION
 * @c: the command, validated
 * @bos: the buffer list with mappings
 * @env: the home's services
 *
 * Return: 0, -RBLN_EIO (unmapped buffer, descriptor or block id out of
 * range), -RBLN_ECANCELED.
 */
int rbln_model_exec_attention(const struct rbln_isa_attention *c,
			      const struct rbln_model_bo *bos,
			      const struct rbln_model_env *env)
{
	u64 hbytes = (u64)c->head_dim * rbln_model_dtype_size(c->dtype);
	u64 block = hbytes * c->block_size * c->kv_heads;
	bool head_major = c->hdr.flags & RBLN_KV_HEAD_MAJOR;
	u64 tokens = (u64)c->max_blocks * c->block_size;
	struct rbln_model_attn at = {
		.cmd = c,
		.out = rbln_model_bo_ptr(bos, &c->out),
		.q = rbln_model_bo_ptr(bos, &c->q),
		.k_cache = rbln_model_bo_ptr(bos, &c->k_cache),
		.v_cache = rbln_model_bo_ptr(bos, &c->v_cache),
		.seqs = rbln_model_bo_ptr(bos, &c->seqs),
		.tables = rbln_model_bo_ptr(bos, &c->block_tables),
		.work = rbln_model_bo_ptr(bos, &c->work),
		.nseqs = c->seqs.size / 16,
		.rows = c->out.size / ((u64)c->q_heads * c->head_dim * 4),
		.num_blocks = c->k_cache.size / block,
		.table_rows = c->block_tables.size / ((u64)c->max_blocks * 4),
		.parts = (tokens + c->partition_len - 1) / c->partition_len,
		.group = c->q_heads / c->kv_heads,
		.head_major = head_major,
		.block_bytes = block,
		.token_bytes = head_major ? hbytes : hbytes * c->kv_heads,
		.head_bytes = head_major ? hbytes * c->block_size : hbytes,
		.prefetch = head_major ? rbln_model_prefetch_bytes(2) : 0,
	};
	struct rbln_model_par par = {
		.env = env, .ctx = &at, .fn = rbln_model_attn_piece,
	};
	u64 part_fma, merge_fma;
	int ret;

	if (!at.out || !at.q || !at.k_cache || !at.v_cache || !at.seqs ||
	    !at.tables || !at.work)
		return -RBLN_EIO;
	rbln_model_attn_groups(&at, env->engines);
	/* Validation bounds kv_heads * parts by the size of @work. */
	if (__builtin_mul_overflow(at.nseqs, (u64)at.kv_groups * at.parts,
				   &par.pieces))
		return -RBLN_EIO;
	rbln_model_attn_work(&at, &part_fma, &merge_fma);
	ret = rbln_model_par_run(&par, rbln_model_attn_min_pieces(par.pieces,
								  part_fma));
	if (ret)
		return ret;
	par = (struct rbln_model_par){
		.env = env, .ctx = &at, .fn = rbln_model_attn_merge_piece,
		.pieces = at.nseqs,
	};
	return rbln_model_par_run(&par, rbln_model_attn_min_pieces(at.nseqs,
								  merge_fma));
}
