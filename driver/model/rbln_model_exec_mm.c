// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_exec_mm.c - MATMUL: cuts the product into pieces for the
 * engines and each piece into FPU brackets of bounded work.
 *
 * A piece is a block of rows times a group of 16-column panels: splits
 * are along the outputs only, never along k, so no sum is ever split and
 * the result does not depend on the engine count. Inside a piece, k runs
 * in blocks (the kernels continue the sums stored in the output exactly),
 * and each bracket covers one k block of a few rows: at most about 4 MFLOP
 * or 256 KiB of weights, tens of microseconds, since the kernel's bracket
 * disables preemption.
 *
 * A variant with a tile kernel (amx, emulated home only, where brackets
 * cost nothing) runs the commands it takes in larger pieces, one call per
 * k block: each call splits its rows of A into bf16 parts once for all
 * its panels (that split costs as much as the tiles' work on 128
 * columns) and repacks its panels' weights once for all its rows.
 */

#include "rbln_model_internal.h"

#define RBLN_MODEL_MM_MB	192U	/* rows per piece: A block fits L2 */
#define RBLN_MODEL_MM_PG	8U	/* panels per piece (128 columns) */
#define RBLN_MODEL_MM_MSUB	24U	/* rows per bracket */
#define RBLN_MODEL_MM_KC	256U	/* k per bracket */
/*
 * k per bracket for up to 16 rows (a decode batch): their weights stream
 * from memory, and longer runs of one panel keep the stream going.
 */
#define RBLN_MODEL_MM_KC_STREAM	1024U
#define RBLN_MODEL_MM_STREAM_ROWS	16U
/*
 * The tile kernel's pieces: up to 512 rows (a prompt's chunk: the more
 * rows a piece has, the fewer times its weights are read and repacked)
 * times up to 32 panels (512 columns: the more, the fewer times its rows
 * of A are split); while that leaves an engine without a piece, fewer
 * rows down to 128, then fewer panels down to 8. One call per k block
 * covers the whole piece. Measured on the 16-core Sapphire Rapids: with 8
 * panels a 128-row MATMUL of N = 2048 ran at 1180 GFLOP/s, with 32 and
 * N = 8192 at 1727 (the split of A is worth amortizing); pieces of 128
 * rows rather than 64 took prefill from 468 to 490 tok/s.
 */
#define RBLN_MODEL_MM_TILE_MB_MAX	512U
#define RBLN_MODEL_MM_TILE_MB	128U
#define RBLN_MODEL_MM_TILE_PG	32U
/*
 * The bf16 dot products (rbln_model_mm_dpbf16()) on a prompt's rows:
 * pieces of up to 32 panels (down to 8 while an engine has fewer than two
 * pieces), so that each row tile's activations, converted to bf16 once
 * per call, serve 512 columns; brackets of 16 rows keep a call's work
 * near the others' (16 x 256 x 512 multiply-adds). Measured with perf on
 * the 2-core Zen 5 (1B-shape prefill): with pieces of 8 panels the
 * conversion, stalled on reading the activations, took 12% as long as the
 * tiles' dot products; with 32, 3%.
 */
#define RBLN_MODEL_MM_DP_MSUB	16U
/* Fewest multiply-adds worth waking another engine for (~20 us). */
#define RBLN_MODEL_MM_PART_FMA	0x100000ULL
/*
 * A decode batch's product is bound by reading its weights, not by its
 * multiply-adds: an engine is worth waking for every 256 KiB of them
 * (~16 us for one core streaming from memory). Counted in multiply-adds,
 * a 2048 x 2048 product of one row ran on 4 of 16 engines, at 36% of the
 * read bandwidth on the 16-core Sapphire Rapids against 77-93% for the
 * products that took all 16.
 */
#define RBLN_MODEL_MM_PART_BYTES	0x40000ULL
/*
 * The same products' pieces narrow from 8 panels to as few as 4 (the
 * GEMV's width) until each engine has two or more: one piece each leaves
 * the whole product waiting for the slowest engine's stream.
 */
#define RBLN_MODEL_MM_STREAM_PG	4U
/*
 * ...and their last panels go in narrow pieces of about 128 KiB of weights
 * (two panels at K = 2048, one from K = 4096), two per engine, claimed
 * last: engines that finish their wide pieces early take them, so all
 * finish within a narrow piece of each other instead of a wide one (at
 * K = 8192 a wide piece is 1 MiB, half of an engine's share of a
 * 2048-column output on 16 engines). Measured on the 16-core Sapphire Rapids
 * (rbln-kbench, M = 1, 16 engines, GB/s, alternating in one call):
 * K = 8192, N = 2048 70.9-79.8 without narrow pieces, 99.2-100.2 with
 * two-panel ones; K = 2048, N = 8192 108.2-118.2 against 109.8-117.9. In
 * a later call, pieces of 128 KiB against one panel at every K:
 * 94.4-108.4 against 86.7-98.7 (K = 8192), 102.9-106.5 against 91.7-99.6.
 */
#define RBLN_MODEL_MM_TAIL_BYTES	0x20000ULL
#define RBLN_MODEL_MM_TAIL_PER_ENGINE	2U

/**
 * struct rbln_model_mm_job - one MATMUL being run
 * @mm: the product as the kernels see it
 * @fn: the kernel: the variant's &rbln_model_kernels.mm or .mm_tiles
 * @mb: rows per piece
 * @pg: panels per piece
 * @msub: rows per kernel call
 * @panels: 16-column panels of the output
 * @pgroups: groups of panels: @wide of @pg panels, then groups of
 *	@tail_pg panels up to @panels
 * @wide: groups of @pg panels
 * @tail_pg: panels per group after the first @wide
 * @pieces: blocks of @mb rows times @pgroups
 */
struct rbln_model_mm_job {
	struct rbln_model_mm mm;
	void (*fn)(const struct rbln_model_mm *mm, u64 m0, u64 m1, u32 p0,
		   u32 p1, u32 k0, u32 k1);
	u32 mb;
	u32 pg;
	u32 msub;
	u32 panels;
	u32 pgroups;
	u32 wide;
	u32 tail_pg;
	u64 pieces;
};

static u64 rbln_model_min64(u64 a, u64 b)
{
	return a < b ? a : b;
}

/* One block of rows times one group of panels, over all of k. */
static int rbln_model_mm_piece(struct rbln_model_par *par, u64 piece)
{
	const struct rbln_model_mm_job *job = par->ctx;
	const struct rbln_model_mm *mm = &job->mm;
	u64 m0 = piece / job->pgroups * job->mb;
	u64 m1 = rbln_model_min64(m0 + job->mb, mm->m);
	u32 g = (u32)(piece % job->pgroups);
	bool wide = g < job->wide;
	u32 p0 = wide ? g * job->pg :
		 job->wide * job->pg + (g - job->wide) * job->tail_pg;
	u32 p1 = (u32)rbln_model_min64(p0 + (wide ? job->pg : job->tail_pg),
				       job->panels);
	u32 kc = m1 - m0 <= RBLN_MODEL_MM_STREAM_ROWS ?
		 RBLN_MODEL_MM_KC_STREAM : RBLN_MODEL_MM_KC;
	/*
	 * One row on the vector kernel (the GEMV): RBLN_MODEL_MM_STREAM_PG
	 * panels over all of k, then the next ones, so that each panel is
	 * read front to back as one stream instead of restarting at every
	 * k block. Each output element still sums its k blocks in the same
	 * order: the bits do not change.
	 */
	u32 gw = m1 - m0 == 1 && job->fn == par->kern->mm ?
		 RBLN_MODEL_MM_STREAM_PG : p1 - p0;
	u64 msub = job->msub;
	u32 k0, k1, g0, g1;
	u64 ms;

	for (g0 = p0; g0 < p1; g0 = g1) {
		g1 = (u32)rbln_model_min64((u64)g0 + gw, p1);
		for (k0 = 0; k0 < mm->k; k0 = k1) {
			k1 = (u32)rbln_model_min64((u64)k0 + kc, mm->k);
			for (ms = m0; ms < m1; ms += msub) {
				if (rbln_model_par_stopped(par))
					return 0;
				rbln_os_fpu_begin();
				job->fn(mm, ms,
					rbln_model_min64(ms + msub, m1),
					g0, g1, k0, k1);
				rbln_os_fpu_end();
			}
		}
	}
	return 0;
}

/*
 * The kernel for @mm, in order of preference: the variant's decode kernel
 * for a decode batch of packed bf16 weights that allows bf16 activations,
 * with enough rows; its tile kernel for bf16 weights and enough rows; its
 * bf16 dot products where the command allows bf16 activations, on packed
 * bf16 weights with enough rows, on CPUs where they pay
 * (rbln_model_mm_a_bf16_ok()); else its vector kernel.
 */
static void (*rbln_model_mm_kernel(const struct rbln_model_mm *mm,
				   const struct rbln_model_kernels *kern))
	(const struct rbln_model_mm *, u64, u64, u32, u32, u32, u32)
{
	bool packed_bf16 = mm->dtype == RBLN_DTYPE_BF16 && mm->packed;

	if (mm->a_bf16 && kern->mm_decode && packed_bf16 &&
	    mm->m >= kern->mm_decode_min_rows &&
	    mm->m <= RBLN_MODEL_MM_STREAM_ROWS)
		return kern->mm_decode;
	if (kern->mm_tiles && mm->dtype == RBLN_DTYPE_BF16 &&
	    mm->m >= kern->mm_tiles_min_rows)
		return kern->mm_tiles;
	if (mm->a_bf16 && kern->mm_a_bf16 && packed_bf16 &&
	    mm->m >= kern->mm_a_bf16_min_rows && rbln_model_mm_a_bf16_ok())
		return kern->mm_a_bf16;
	return kern->mm;
}

/*
 * Halves @job's panels per piece, down to @least, while its pieces leave
 * an engine of @engines with fewer than two.
 */
static void rbln_model_mm_narrow(struct rbln_model_mm_job *job, u32 least,
				 u32 engines)
{
	u64 mblocks = (job->mm.m + job->mb - 1) / job->mb;

	while (job->pg > least &&
	       mblocks * ((job->panels + job->pg - 1) / job->pg) < 2 * engines)
		job->pg /= 2;
}

/*
 * Cuts @job's last panels into narrow pieces of RBLN_MODEL_MM_TAIL_BYTES of
 * weights (one panel at least), two per engine, when @job has more panels
 * than those take.
 */
static void rbln_model_mm_tail(struct rbln_model_mm_job *job, u32 engines)
{
	u64 panel = (u64)job->mm.k * RBLN_ISA_PACK_COLS *
		    rbln_model_dtype_size(job->mm.dtype);
	u64 tail_pg = RBLN_MODEL_MM_TAIL_BYTES / panel;
	u64 tail;

	if (!tail_pg)
		tail_pg = 1;
	tail = engines * RBLN_MODEL_MM_TAIL_PER_ENGINE * tail_pg;
	if (engines < 2 || tail_pg >= job->pg || tail >= job->panels)
		return;
	job->wide = (u32)(job->panels - tail) / job->pg;
	job->tail_pg = (u32)tail_pg;
	tail = job->panels - job->wide * job->pg;
	job->pgroups = job->wide + (u32)((tail + tail_pg - 1) / tail_pg);
}

/*
 * The kernel and piece shape of @job: tiles take large pieces of rows
 * (halved until every engine has one); the bf16 dot products take wide
 * pieces of a prompt's rows; the other kernels take pieces of
 * RBLN_MODEL_MM_PG panels, narrower for a decode batch.
 */
static void rbln_model_mm_geometry(struct rbln_model_mm_job *job,
				   const struct rbln_model_kernels *kern,
				   u32 engines)
{
	u64 mblocks;

	job->fn = rbln_model_mm_kernel(&job->mm, kern);
	job->mb = RBLN_MODEL_MM_MB;
	job->pg = RBLN_MODEL_MM_PG;
	job->msub = RBLN_MODEL_MM_MSUB;
	if (job->fn == kern->mm_tiles) {
		job->mb = RBLN_MODEL_MM_TILE_MB_MAX;
		job->pg = RBLN_MODEL_MM_TILE_PG;
		for (;;) {
			mblocks = (job->mm.m + job->mb - 1) / job->mb;
			if (mblocks * ((job->panels + job->pg - 1) / job->pg) >=
			    engines)
				break;
			if (job->mb > RBLN_MODEL_MM_TILE_MB &&
			    job->mb / 2 < job->mm.m)
				job->mb /= 2;
			else if (job->pg > RBLN_MODEL_MM_PG)
				job->pg /= 2;
			else
				break;
		}
		job->msub = job->mb;
	} else if (job->fn == kern->mm_a_bf16 &&
		   job->mm.m > RBLN_MODEL_MM_STREAM_ROWS) {
		job->pg = RBLN_MODEL_MM_TILE_PG;
		job->msub = RBLN_MODEL_MM_DP_MSUB;
		rbln_model_mm_narrow(job, RBLN_MODEL_MM_PG, engines);
	} else if (job->mm.m <= RBLN_MODEL_MM_STREAM_ROWS) {
		/* One block of rows: the panels alone make the pieces. */
		rbln_model_mm_narrow(job, RBLN_MODEL_MM_STREAM_PG, engines);
	}
	job->pgroups = (job->panels + job->pg - 1) / job->pg;
	job->wide = job->pgroups;
	job->tail_pg = job->pg;
	if (job->mm.m <= RBLN_MODEL_MM_STREAM_ROWS &&
	    job->fn != kern->mm_tiles)
		rbln_model_mm_tail(job, engines);
	job->pieces = (job->mm.m + job->mb - 1) / job->mb * job->pgroups;
}

/*
 * Fewest pieces worth one more engine: by the bytes of weights a piece
 * reads for a decode batch, by its multiply-adds otherwise.
 */
static u64 rbln_model_mm_min_pieces(const struct rbln_model_mm_job *job)
{
	u64 cols = rbln_model_min64(job->mm.n,
				    (u64)job->pg * RBLN_ISA_PACK_COLS);
	u64 rows = rbln_model_min64(job->mm.m, job->mb);

	if (job->mm.m <= RBLN_MODEL_MM_STREAM_ROWS)
		return RBLN_MODEL_MM_PART_BYTES /
		       (cols * job->mm.k * rbln_model_dtype_size(job->mm.dtype));
	return RBLN_MODEL_MM_PART_FMA / (rows * cols * job->mm.k);
}

/**
 * rbln_model_exec_matmul() - RBLN_OP_MATMUL
 * @c: the command, validated
 * @bos: the buffer list with mappings
 * @env: the home's services
 *
 * Return: 0, -RBLN_EIO for an unmapped buffer, -RBLN_ECANCELED.
 */
int rbln_model_exec_matmul(const struct rbln_isa_matmul *c,
			   const struct rbln_model_bo *bos,
			   const struct rbln_model_env *env)
{
	struct rbln_model_mm_job job = {
		.mm = {
			.c = rbln_model_bo_ptr(bos, &c->dst),
			.a = rbln_model_bo_ptr(bos, &c->a),
			.w = rbln_model_bo_ptr(bos, &c->w),
			.m = c->a.size / ((u64)c->k * 4),
			.n = c->n,
			.k = c->k,
			.dtype = c->dtype,
			.packed = c->layout != RBLN_LAYOUT_ROWMAJOR,
			.accumulate = c->hdr.flags & RBLN_MATMUL_ACCUMULATE,
			.a_bf16 = c->hdr.flags & RBLN_MATMUL_A_BF16,
		},
	};
	struct rbln_model_par par = {
		.env = env, .ctx = &job, .kern = rbln_model_kernels(),
	};

	if (!job.mm.c || !job.mm.a || !job.mm.w)
		return -RBLN_EIO;
	/* Validation fixed the size: the scales are its last 16 * 4 * P. */
	if (c->dtype == RBLN_DTYPE_I8)
		job.mm.scales = job.mm.w + c->w.size -
				((u64)c->n + RBLN_ISA_PACK_COLS - 1) /
				RBLN_ISA_PACK_COLS * RBLN_ISA_PACK_COLS * 4;
	job.mm.pstride = rbln_model_panel_stride(c);
	if (job.mm.m <= RBLN_MODEL_MM_STREAM_ROWS)
		job.mm.prefetch = rbln_model_prefetch_bytes(1, (u32)job.mm.m);
	job.panels = (c->n + RBLN_ISA_PACK_COLS - 1) / RBLN_ISA_PACK_COLS;
	rbln_model_mm_geometry(&job, par.kern, env->engines);
	par.fn = rbln_model_mm_piece;
	par.pieces = job.pieces;
	return rbln_model_par_run(&par, rbln_model_mm_min_pieces(&job));
}
