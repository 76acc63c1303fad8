// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_exec_attn.c - ATTENTION: the sequence descriptors (run-time
 * data, checked here), the pieces of the two phases and their FPU
 * brackets.
 *
 * Phase one computes the partial results of every (sequence, partition,
 * group of KV heads, block of query rows), each piece independent of the
 * others: that is where decode gets its parallelism, since one long
 * sequence yields many partitions, and a prompt from its rows. A piece
 * covers all KV heads and rows when there are enough pieces with tokens
 * for the engines (its heads' runs of a head-major cache, or its tokens'
 * rows of a token-major one, are then read front to back), fewer
 * otherwise; how heads and rows are grouped does not change any result.
 * Phase two merges each query row's partitions in order, in the same
 * blocks of rows. A piece is cut into brackets of a few rows by
 * RBLN_MODEL_ATTN_TOKENS tokens (a multiple of the tile, so the tiles, and
 * with them the numerics, are those of one pass). The descriptors are
 * read again in phase two: they may have changed meanwhile (they live in a
 * buffer others can write), and every use must be checked, though a
 * changed one only yields wrong numbers, never an access outside the
 * operands.
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

/**
 * struct rbln_model_attn_load - what the descriptors say of the work, for
 *	the split only
 * @part_fma: phase one, all sequences: query rows times the tokens they
 *	see, per query head and head_dim, for keys and values
 * @merge_fma: phase two: query rows times the partitions their contexts
 *	use, per query head and head_dim
 * @parts_used: (sequence, partition) pairs that hold tokens
 * @max_rows: the most query rows of one sequence
 */
struct rbln_model_attn_load {
	u64 part_fma;
	u64 merge_fma;
	u64 parts_used;
	u64 max_rows;
};

/* Fewest query rows worth a piece of their own: 16 x 64 tokens or more. */
#define RBLN_MODEL_ATTN_MIN_ROWS	16U

/*
 * The split of phase one: all KV heads and rows per piece, unless the
 * pieces that hold tokens are fewer than eight per engine; then KV heads
 * halved until there are enough (or one head), then blocks of query rows
 * (a prompt's), down to RBLN_MODEL_ATTN_MIN_ROWS. Counted over the
 * partitions in use, not those the block tables could hold: a 512-token
 * prompt has one partition of 512 of the many a table allows, and its
 * attention ran on one engine of two on the 2-core Zen 5 (10.9% of a
 * prefill's time, where perf counted 5.6% of its CPU time).
 */
static void rbln_model_attn_groups(struct rbln_model_attn *at, u32 engines,
				   const struct rbln_model_attn_load *load)
{
	u32 kvh = at->cmd->kv_heads;
	/*
	 * Eight pieces per engine rather than four: decode ATTENTION at batch
	 * 8 (ctx 4096, 16 engines, Sapphire Rapids) read 73.1-74.0 GB/s
	 * against 62.0-73.3, alternating, as the last pieces' tail shrank.
	 */
	u64 want = 8ULL * engines, pieces, rows;

	at->kv_per_piece = kvh;
	while (at->kv_per_piece > 1 &&
	       load->parts_used * ((kvh + at->kv_per_piece - 1) /
				   at->kv_per_piece) < want)
		at->kv_per_piece = (at->kv_per_piece + 1) / 2;
	at->kv_groups = (kvh + at->kv_per_piece - 1) / at->kv_per_piece;
	at->row_blocks = 1;
	at->rows_per_block = ~0U;	/* one block: all rows */
	pieces = load->parts_used * at->kv_groups;
	if (!pieces || pieces >= want ||
	    load->max_rows < 2 * RBLN_MODEL_ATTN_MIN_ROWS)
		return;
	rows = (load->max_rows * pieces + want - 1) / want;
	if (rows < RBLN_MODEL_ATTN_MIN_ROWS)
		rows = RBLN_MODEL_ATTN_MIN_ROWS;
	at->rows_per_block = (u32)rows;
	at->row_blocks = (u32)((load->max_rows + rows - 1) / rows);
}

/*
 * Rows [*i0, *i1) of row block @rb of a sequence of @q_len rows: the last
 * block runs to the end, whatever the descriptors said at the split.
 */
static void rbln_model_attn_block_rows(const struct rbln_model_attn *at,
				       u32 rb, u32 q_len, u32 *i0, u32 *i1)
{
	u64 first = (u64)rb * at->rows_per_block;

	*i0 = first < q_len ? (u32)first : q_len;
	*i1 = rb + 1 == at->row_blocks || first + at->rows_per_block > q_len ?
	      q_len : (u32)(first + at->rows_per_block);
}

/*
 * Phase one: the partials of one (sequence, partition, KV head group,
 * block of rows).
 */
static int rbln_model_attn_piece(struct rbln_model_par *par, u64 piece)
{
	const struct rbln_model_attn *at = par->ctx;
	const struct rbln_isa_attention *c = at->cmd;
	u64 per_part = (u64)at->kv_groups * at->row_blocks;
	u64 per_seq = per_part * at->parts;
	u64 s = piece / per_seq;
	u64 part = piece % per_seq / per_part;
	u64 in_part = piece % per_part;
	u32 k0 = (u32)(in_part % at->kv_groups) * at->kv_per_piece;
	u32 k1 = k0 + at->kv_per_piece;
	/*
	 * A prompt's last rows see the most tokens: their blocks, of every KV
	 * head group, are claimed first.
	 */
	u32 blk = at->row_blocks - 1 - (u32)(in_part / at->kv_groups);
	u64 pstart = part * c->partition_len;
	u32 rb = rbln_model_attn_rows(at);
	struct rbln_model_seq seq;
	u64 base, plen, j, j1;
	u32 i, i1, iend;
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
	rbln_model_attn_block_rows(at, blk, seq.q_len, &i, &iend);
	/* Rows before the partition's first token do not see it. */
	base = seq.ctx_len - seq.q_len;
	if (pstart > base && i < pstart - base)
		i = (u32)(pstart - base);
	for (; i < iend; i = i1) {
		i1 = iend - i < rb ? iend : i + rb;
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
	u32 i, i1, i0, iend;
	int ret;

	ret = rbln_model_attn_seq(at, piece / at->row_blocks, &seq);
	if (ret)
		return ret < 0 ? ret : 0;
	rbln_model_attn_block_rows(at, (u32)(piece % at->row_blocks),
				   seq.q_len, &i0, &iend);
	for (i = i0; i < iend; i = i1) {
		i1 = iend - i < rb ? iend : i + rb;
		if (i > i0 && rbln_model_par_stopped(par))
			return 0;
		rbln_os_fpu_begin();
		par->kern->attn_merge(at, &seq, i, i1);
		rbln_os_fpu_end();
	}
	return 0;
}

/**
 * rbln_model_attn_work() - what the work is, for the split
 * @at: the command
 * @load: out: its multiply-adds, partitions in use and rows
 *
 * The number of pieces says little about the work: pieces exist for every
 * partition the block tables could hold, and in a short decode context
 * nearly all of them are empty. Splitting by their count woke every engine
 * for a few microseconds of work each. The descriptors are run-time data,
 * read once here for the estimate only: a wrong one only misjudges the
 * split (the pieces check what they use).
 */
static void rbln_model_attn_work(const struct rbln_model_attn *at,
				 struct rbln_model_attn_load *load)
{
	const struct rbln_isa_attention *c = at->cmd;
	u64 tokens = (u64)c->max_blocks * c->block_size;
	u64 per = 2ULL * c->q_heads * c->head_dim;
	u64 s, q, ctx, used;
	s32 v;

	*load = (struct rbln_model_attn_load){ 0 };
	for (s = 0; s < at->nseqs; s++) {
		v = rbln_os_read_once_s32(at->seqs + s * 16 + 4);
		q = v > 0 ? (u64)v : 0;
		v = rbln_os_read_once_s32(at->seqs + s * 16 + 8);
		ctx = v > 0 ? (u64)v : 0;
		if (q > at->rows)
			q = at->rows;
		if (ctx > tokens)
			ctx = tokens;
		used = q ? (ctx + c->partition_len - 1) / c->partition_len : 0;
		/* Unsigned: a wrap on absurd shapes only misjudges the split. */
		load->part_fma += q * ctx * per;
		load->merge_fma += q * used * per;
		load->parts_used += used;
		if (q > load->max_rows)
			load->max_rows = q;
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
	};
	struct rbln_model_par par = {
		.env = env, .ctx = &at, .fn = rbln_model_attn_piece,
	};
	struct rbln_model_attn_load load;
	u64 merge_pieces;
	int ret;

	if (!at.out || !at.q || !at.k_cache || !at.v_cache || !at.seqs ||
	    !at.tables || !at.work)
		return -RBLN_EIO;
	rbln_model_attn_work(&at, &load);
	rbln_model_attn_groups(&at, env->engines, &load);
	/*
	 * Validation bounds kv_heads * parts by the size of @work; row
	 * blocks are at most the rows, bounded by the size of @out.
	 */
	if (__builtin_mul_overflow(at.nseqs, (u64)at.kv_groups * at.parts,
				   &par.pieces) ||
	    __builtin_mul_overflow(par.pieces, (u64)at.row_blocks,
				   &par.pieces) ||
	    __builtin_mul_overflow(at.nseqs, (u64)at.row_blocks,
				   &merge_pieces))
		return -RBLN_EIO;
	ret = rbln_model_par_run(&par, rbln_model_attn_min_pieces(par.pieces,
								  load.part_fma));
	if (ret)
		return ret;
	par = (struct rbln_model_par){
		.env = env, .ctx = &at, .fn = rbln_model_attn_merge_piece,
		.pieces = merge_pieces,
	};
	return rbln_model_par_run(&par,
				  rbln_model_attn_min_pieces(merge_pieces,
							     load.merge_fma));
}
