// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_exec_nn.c - the row-wise compute opcodes (EMBED, RMSNORM,
 * ROPE, SWIGLU, KV_WRITE, ARGMAX, TOPK): pieces for the engines, FPU
 * brackets of bounded work, and the checks of run-time index data that
 * the kernels report.
 *
 * A bracket covers at most RBLN_MODEL_NN_SPAN elements (64 KiB of float32
 * output, a few microseconds); a longer row is cut into segments whose
 * running state (RMSNORM's partial sums, ARGMAX's best, TOPK's heap) is
 * carried exactly from one segment to the next. Segments start at
 * multiples of 8 elements, so the fixed lane order of RMSNORM's sum of
 * squares is that of a single pass.
 */

#include "rbln_model_internal.h"

#define RBLN_MODEL_NN_SPAN	16384U
/*
 * Fewest elements (8 KiB of float32) worth another engine. These opcodes
 * read what the engines' MATMUL just wrote into their own caches, at a
 * cross-core transfer per cache line: on the 16-core Sapphire Rapids a
 * decode step of 8 sequences spent 146 us in each SWIGLU and 31 us in each
 * RMSNORM on one engine (16% of the step) when a piece had to be 1 MiB.
 */
#define RBLN_MODEL_NN_PART	2048U
#define RBLN_MODEL_ROPE_TOKENS	64U

/**
 * struct rbln_model_rows - a row-wise command cut into pieces
 * @cmd: the command
 * @bos: the buffer list
 * @rows: rows (tokens) of the command
 * @width: elements per row that bound a bracket
 * @per_piece: rows per piece (when a row fits a bracket)
 * @segs: segments per row (when it does not; then one row per piece)
 */
struct rbln_model_rows {
	const void *cmd;
	const struct rbln_model_bo *bos;
	u64 rows;
	u32 width;
	u64 per_piece;
	u32 segs;
};

static u64 rbln_model_nn_min(u64 a, u64 b)
{
	return a < b ? a : b;
}

/*
 * Rows per piece of @width elements: a bracket's worth, but no more than
 * gives each engine a piece (a decode step has a row per sequence).
 */
static u64 rbln_model_nn_rows_per_piece(u64 rows, u64 width,
					const struct rbln_model_env *env)
{
	u64 engines = env->engines ? env->engines : 1;
	u64 per = rbln_model_nn_min(RBLN_MODEL_NN_SPAN / width,
				    (rows + engines - 1) / engines);

	return per ? per : 1;
}

/**
 * rbln_model_rows_run() - run a row-wise command over the engines
 * @job: @cmd, @bos, @rows and @width set
 * @env: the home's services
 * @fn: runs one piece
 *
 * Rows that fit a bracket are grouped so that a piece is about one
 * bracket's worth; a longer row is one piece of several segments.
 *
 * Return: as rbln_model_par_run().
 */
static int rbln_model_rows_run(struct rbln_model_rows *job,
			       const struct rbln_model_env *env,
			       rbln_model_piece_fn fn)
{
	struct rbln_model_par par = { .env = env, .ctx = job, .fn = fn };
	u64 piece_elems;

	if (job->width <= RBLN_MODEL_NN_SPAN) {
		job->per_piece = rbln_model_nn_rows_per_piece(job->rows,
							      job->width, env);
		job->segs = 1;
	} else {
		job->per_piece = 1;
		job->segs = (job->width + RBLN_MODEL_NN_SPAN - 1) /
			    RBLN_MODEL_NN_SPAN;
	}
	par.pieces = (job->rows + job->per_piece - 1) / job->per_piece;
	piece_elems = job->per_piece * job->width;
	return rbln_model_par_run(&par, RBLN_MODEL_NN_PART / piece_elems);
}

/* Rows [*r0, *r1) of a piece. */
static void rbln_model_piece_rows(const struct rbln_model_rows *job,
				  u64 piece, u64 *r0, u64 *r1)
{
	*r0 = piece * job->per_piece;
	*r1 = rbln_model_nn_min(*r0 + job->per_piece, job->rows);
}

/* Columns [*c0, *c1) of segment @s of a row of @width elements. */
static void rbln_model_seg(u32 width, u32 s, u32 *c0, u32 *c1)
{
	*c0 = s * RBLN_MODEL_NN_SPAN;
	*c1 = (u32)rbln_model_nn_min((u64)*c0 + RBLN_MODEL_NN_SPAN, width);
}

/* ------------------------------------------------------------- EMBED */

static int rbln_model_embed_piece(struct rbln_model_par *par, u64 piece)
{
	const struct rbln_model_rows *job = par->ctx;
	const struct rbln_isa_embed *c = job->cmd;
	u8 *dst = rbln_model_bo_ptr(job->bos, &c->dst);
	const u8 *table = rbln_model_bo_ptr(job->bos, &c->table);
	const u8 *ids = rbln_model_bo_ptr(job->bos, &c->ids);
	u64 rows = c->table.size / ((u64)c->dim *
				    rbln_model_dtype_size(c->dtype));
	u64 r0, r1;
	u32 s, c0, c1;
	int ret = 0;

	rbln_model_piece_rows(job, piece, &r0, &r1);
	for (s = 0; s < job->segs && !ret; s++) {
		if (s && rbln_model_par_stopped(par))
			return 0;
		rbln_model_seg(c->dim, s, &c0, &c1);
		rbln_os_fpu_begin();
		ret = par->kern->embed(c, dst, table, ids, rows, r0, r1, c0, c1);
		rbln_os_fpu_end();
	}
	return ret;
}

/**
 * rbln_model_exec_embed() - RBLN_OP_EMBED
 * @c: the command, validated
 * @bos: the buffer list with mappings
 * @env: the home's services
 *
 * Return: 0, -RBLN_EIO (unmapped buffer, id out of range), -RBLN_ECANCELED.
 */
int rbln_model_exec_embed(const struct rbln_isa_embed *c,
			  const struct rbln_model_bo *bos,
			  const struct rbln_model_env *env)
{
	struct rbln_model_rows job = {
		.cmd = c, .bos = bos, .rows = c->ids.size / 4, .width = c->dim,
	};

	if (!rbln_model_bo_ptr(bos, &c->dst) ||
	    !rbln_model_bo_ptr(bos, &c->table) ||
	    !rbln_model_bo_ptr(bos, &c->ids))
		return -RBLN_EIO;
	return rbln_model_rows_run(&job, env, rbln_model_embed_piece);
}

/* ----------------------------------------------------------- RMSNORM */

static int rbln_model_rmsnorm_piece(struct rbln_model_par *par, u64 piece)
{
	const struct rbln_model_rows *job = par->ctx;
	const struct rbln_isa_rmsnorm *c = job->cmd;
	u8 *dst = rbln_model_bo_ptr(job->bos, &c->dst);
	const u8 *src = rbln_model_bo_ptr(job->bos, &c->src);
	const u8 *w = rbln_model_bo_ptr(job->bos, &c->weight);
	u32 es = rbln_model_dtype_size(c->dtype);
	u64 r0, r1, r, off;
	u32 acc[8], inv, s, c0, c1;

	rbln_model_piece_rows(job, piece, &r0, &r1);
	rbln_os_fpu_begin();
	for (r = r0; r < r1; r++) {
		off = r * c->dim * 4;
		memset(acc, 0, sizeof(acc));
		for (s = 0; s < job->segs; s++) {
			rbln_model_seg(c->dim, s, &c0, &c1);
			par->kern->rms_sumsq(src + off + (u64)c0 * 4, c1 - c0,
					     acc);
			if (job->segs > 1) {
				rbln_os_fpu_end();
				if (rbln_model_par_stopped(par))
					return 0;
				rbln_os_fpu_begin();
			}
		}
		inv = par->kern->rms_inv(acc, c->dim, c->eps);
		for (s = 0; s < job->segs; s++) {
			rbln_model_seg(c->dim, s, &c0, &c1);
			par->kern->rms_scale(dst + off + (u64)c0 * 4,
					     src + off + (u64)c0 * 4,
					     w + (u64)c0 * es, c->dtype,
					     c1 - c0, inv);
			if (job->segs > 1) {
				rbln_os_fpu_end();
				if (rbln_model_par_stopped(par))
					return 0;
				rbln_os_fpu_begin();
			}
		}
	}
	rbln_os_fpu_end();
	return 0;
}

/**
 * rbln_model_exec_rmsnorm() - RBLN_OP_RMSNORM
 * @c: the command, validated
 * @bos: the buffer list with mappings
 * @env: the home's services
 *
 * Return: 0, -RBLN_EIO for an unmapped buffer, -RBLN_ECANCELED.
 */
int rbln_model_exec_rmsnorm(const struct rbln_isa_rmsnorm *c,
			    const struct rbln_model_bo *bos,
			    const struct rbln_model_env *env)
{
	struct rbln_model_rows job = {
		.cmd = c, .bos = bos, .rows = c->dst.size / ((u64)c->dim * 4),
		.width = c->dim,
	};

	if (!rbln_model_bo_ptr(bos, &c->dst) ||
	    !rbln_model_bo_ptr(bos, &c->src) ||
	    !rbln_model_bo_ptr(bos, &c->weight))
		return -RBLN_EIO;
	return rbln_model_rows_run(&job, env, rbln_model_rmsnorm_piece);
}

/* -------------------------------------------------------------- ROPE */

static int rbln_model_rope_piece(struct rbln_model_par *par, u64 piece)
{
	const struct rbln_model_rows *job = par->ctx;
	const struct rbln_isa_rope *c = job->cmd;
	u8 *x = rbln_model_bo_ptr(job->bos, &c->x);
	const u8 *pos = rbln_model_bo_ptr(job->bos, &c->pos);
	u64 r0, r1;
	int ret;

	rbln_model_piece_rows(job, piece, &r0, &r1);
	rbln_os_fpu_begin();
	ret = par->kern->rope(c, x, pos, r0, r1);
	rbln_os_fpu_end();
	return ret;
}

/**
 * rbln_model_exec_rope() - RBLN_OP_ROPE
 * @c: the command, validated
 * @bos: the buffer list with mappings
 * @env: the home's services
 *
 * A piece is up to RBLN_MODEL_ROPE_TOKENS tokens: each token costs
 * head_dim / 2 sines and cosines besides its heads, and each piece
 * computes the frequencies once.
 *
 * Return: 0, -RBLN_EIO (unmapped buffer, negative position),
 * -RBLN_ECANCELED.
 */
int rbln_model_exec_rope(const struct rbln_isa_rope *c,
			 const struct rbln_model_bo *bos,
			 const struct rbln_model_env *env)
{
	struct rbln_model_rows job = {
		.cmd = c, .bos = bos, .rows = c->pos.size / 4, .segs = 1,
	};
	struct rbln_model_par par = {
		.env = env, .ctx = &job, .fn = rbln_model_rope_piece,
	};
	u64 width = (u64)c->heads * c->head_dim;

	if (!rbln_model_bo_ptr(bos, &c->x) || !rbln_model_bo_ptr(bos, &c->pos))
		return -RBLN_EIO;
	job.per_piece = rbln_model_nn_min(RBLN_MODEL_ROPE_TOKENS,
					  rbln_model_nn_rows_per_piece(job.rows,
								       width,
								       env));
	par.pieces = (job.rows + job.per_piece - 1) / job.per_piece;
	return rbln_model_par_run(&par, 1);
}

/* ------------------------------------------------------------ SWIGLU */

/*
 * SWIGLU is element-wise: a piece is RBLN_MODEL_NN_PART elements of the
 * output in row-major order, whatever the rows, so that one decode row
 * (8192 elements of the 1B shape) spreads over several engines.
 */
static int rbln_model_swiglu_piece(struct rbln_model_par *par, u64 piece)
{
	const struct rbln_model_rows *job = par->ctx;
	const struct rbln_isa_swiglu *c = job->cmd;
	u8 *dst = rbln_model_bo_ptr(job->bos, &c->dst);
	const u8 *gate = rbln_model_bo_ptr(job->bos, &c->gate);
	const u8 *up = rbln_model_bo_ptr(job->bos, &c->up);
	u64 e = piece * RBLN_MODEL_NN_PART;
	u64 end = rbln_model_nn_min(e + RBLN_MODEL_NN_PART, job->rows * c->n);
	u64 r, c0, c1;

	rbln_os_fpu_begin();
	for (; e < end; e += c1 - c0) {
		r = e / c->n;
		c0 = e - r * c->n;
		c1 = rbln_model_nn_min(c->n, c0 + (end - e));
		par->kern->swiglu(dst + (r * c->n + c0) * 4,
				  gate + (r * c->gate_stride + c0) * 4,
				  up + (r * c->up_stride + c0) * 4,
				  (u32)(c1 - c0));
	}
	rbln_os_fpu_end();
	return 0;
}

/**
 * rbln_model_exec_swiglu() - RBLN_OP_SWIGLU
 * @c: the command, validated
 * @bos: the buffer list with mappings
 * @env: the home's services
 *
 * Return: 0, -RBLN_EIO for an unmapped buffer, -RBLN_ECANCELED.
 */
int rbln_model_exec_swiglu(const struct rbln_isa_swiglu *c,
			   const struct rbln_model_bo *bos,
			   const struct rbln_model_env *env)
{
	struct rbln_model_rows job = {
		.cmd = c, .bos = bos, .rows = c->dst.size / ((u64)c->n * 4),
	};
	struct rbln_model_par par = {
		.env = env, .ctx = &job, .fn = rbln_model_swiglu_piece,
	};

	if (!rbln_model_bo_ptr(bos, &c->dst) ||
	    !rbln_model_bo_ptr(bos, &c->gate) ||
	    !rbln_model_bo_ptr(bos, &c->up))
		return -RBLN_EIO;
	par.pieces = (job.rows * c->n + RBLN_MODEL_NN_PART - 1) /
		     RBLN_MODEL_NN_PART;
	return rbln_model_par_run(&par, 1);
}

/* ---------------------------------------------------------- KV_WRITE */

static int rbln_model_kv_write_piece(struct rbln_model_par *par, u64 piece)
{
	const struct rbln_model_rows *job = par->ctx;
	const struct rbln_isa_kv_write *c = job->cmd;
	const struct rbln_model_bo *bos = job->bos;
	u64 blocks = c->k_cache.size /
		     ((u64)c->block_size * c->kv_heads * c->head_dim *
		      rbln_model_dtype_size(c->dtype));
	u64 r0, r1;
	int ret;

	rbln_model_piece_rows(job, piece, &r0, &r1);
	rbln_os_fpu_begin();
	ret = par->kern->kv_write(c, rbln_model_bo_ptr(bos, &c->k_cache),
				  rbln_model_bo_ptr(bos, &c->v_cache),
				  rbln_model_bo_ptr(bos, &c->k),
				  rbln_model_bo_ptr(bos, &c->v),
				  rbln_model_bo_ptr(bos, &c->slots), blocks,
				  r0, r1);
	rbln_os_fpu_end();
	return ret;
}

/**
 * rbln_model_exec_kv_write() - RBLN_OP_KV_WRITE
 * @c: the command, validated
 * @bos: the buffer list with mappings
 * @env: the home's services
 *
 * A token row is at most RBLN_ISA_MAX_DIM elements; validation bounds
 * kv_heads * head_dim by that, and a piece is at least one token.
 *
 * Return: 0, -RBLN_EIO (unmapped buffer, slot out of range),
 * -RBLN_ECANCELED.
 */
int rbln_model_exec_kv_write(const struct rbln_isa_kv_write *c,
			     const struct rbln_model_bo *bos,
			     const struct rbln_model_env *env)
{
	struct rbln_model_rows job = {
		.cmd = c, .bos = bos, .rows = c->slots.size / 4,
		.width = (u32)rbln_model_nn_min((u64)c->kv_heads * c->head_dim,
						RBLN_MODEL_NN_SPAN),
	};

	if (!rbln_model_bo_ptr(bos, &c->k_cache) ||
	    !rbln_model_bo_ptr(bos, &c->v_cache) ||
	    !rbln_model_bo_ptr(bos, &c->k) || !rbln_model_bo_ptr(bos, &c->v) ||
	    !rbln_model_bo_ptr(bos, &c->slots))
		return -RBLN_EIO;
	return rbln_model_rows_run(&job, env, rbln_model_kv_write_piece);
}

/* ------------------------------------------------------ ARGMAX, TOPK */

/**
 * struct rbln_model_select - the operands of ARGMAX or TOPK
 * @values: float32 [R, k]
 * @indices: int32 [R, k]
 * @src: float32 [R, n]
 * @n: row length
 * @k: kept per row (1 for ARGMAX)
 * @base: index base
 */
struct rbln_model_select {
	u8 *values;
	u8 *indices;
	const u8 *src;
	u32 n;
	u32 k;
	u32 base;
};

static int rbln_model_select_piece(struct rbln_model_par *par, u64 piece)
{
	const struct rbln_model_rows *job = par->ctx;
	const struct rbln_model_select *sel = job->cmd;
	u64 r0, r1, r;
	u8 *vals, *idx;
	u32 s, c0, c1, have, best[2];
	const u8 *x;

	rbln_model_piece_rows(job, piece, &r0, &r1);
	for (r = r0; r < r1; r++) {
		vals = sel->values + r * sel->k * 4;
		idx = sel->indices + r * sel->k * 4;
		x = sel->src + r * sel->n * 4;
		best[1] = ~0U;
		have = 0;
		for (s = 0; s < job->segs; s++) {
			if (s && rbln_model_par_stopped(par))
				return 0;
			rbln_model_seg(sel->n, s, &c0, &c1);
			rbln_os_fpu_begin();
			if (sel->k == 1)
				par->kern->argmax(x + (u64)c0 * 4, c1 - c0,
						  sel->base + c0, best);
			else
				par->kern->topk(x + (u64)c0 * 4, c1 - c0,
						sel->base + c0, vals, idx,
						sel->k, &have);
			rbln_os_fpu_end();
		}
		rbln_os_fpu_begin();
		if (sel->k == 1) {
			memcpy(vals, &best[0], 4);
			memcpy(idx, &best[1], 4);
		} else {
			par->kern->topk_sort(vals, idx, sel->k);
		}
		rbln_os_fpu_end();
	}
	return 0;
}

/* ARGMAX and TOPK over the @rows rows of @sel->src. */
static int rbln_model_select_run(struct rbln_model_select *sel, u64 rows,
				 const struct rbln_model_env *env)
{
	struct rbln_model_rows job = {
		.cmd = sel, .rows = rows, .width = sel->n,
	};

	if (!sel->values || !sel->indices || !sel->src)
		return -RBLN_EIO;
	return rbln_model_rows_run(&job, env, rbln_model_select_piece);
}

/**
 * rbln_model_exec_argmax() - RBLN_OP_ARGMAX
 * @c: the command, validated
 * @bos: the buffer list with mappings
 * @env: the home's services
 *
 * Return: 0, -RBLN_EIO for an unmapped buffer, -RBLN_ECANCELED.
 */
int rbln_model_exec_argmax(const struct rbln_isa_argmax *c,
			   const struct rbln_model_bo *bos,
			   const struct rbln_model_env *env)
{
	struct rbln_model_select sel = {
		.values = rbln_model_bo_ptr(bos, &c->values),
		.indices = rbln_model_bo_ptr(bos, &c->indices),
		.src = rbln_model_bo_ptr(bos, &c->src),
		.n = c->n, .k = 1, .base = c->index_base,
	};

	return rbln_model_select_run(&sel, c->src.size / ((u64)c->n * 4), env);
}

/**
 * rbln_model_exec_topk() - RBLN_OP_TOPK
 * @c: the command, validated
 * @bos: the buffer list with mappings
 * @env: the home's services
 *
 * Return: 0, -RBLN_EIO for an unmapped buffer, -RBLN_ECANCELED.
 */
int rbln_model_exec_topk(const struct rbln_isa_topk *c,
			 const struct rbln_model_bo *bos,
			 const struct rbln_model_env *env)
{
	struct rbln_model_select sel = {
		.values = rbln_model_bo_ptr(bos, &c->values),
		.indices = rbln_model_bo_ptr(bos, &c->indices),
		.src = rbln_model_bo_ptr(bos, &c->src),
		.n = c->n, .k = c->k, .base = c->index_base,
	};

	return rbln_model_select_run(&sel, c->src.size / ((u64)c->n * 4), env);
}
