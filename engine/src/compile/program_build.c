// SPDX-License-Identifier: MIT
/*
 * One rank's forward pass as a command stream (see program_build.h).
 *
 * Per layer, Llama's decoder block:
 *   xn = RMSNORM(h); qkv = xn Wqkv; ROPE(q, k); KV_WRITE(k, v);
 *   attn = ATTENTION(q, cache); h += attn Wo;
 *   xn = RMSNORM(h); gu = xn Wgate_up; act = SWIGLU(gu); h += act Wdown
 * With one rank the residual adds are MATMUL's accumulate; with several,
 * o and down are row-parallel: each rank publishes its partial product in
 * its comm buffer and sums everyone's (all-reduce, below).  The embedding
 * is vocabulary-parallel the same way (rows outside a rank's range are
 * zeros).  Only the rows whose logits are wanted (one per sequence) go
 * through the final norm and lm_head.  The commands are encoded by the ISA
 * encoder (libnpu/isa/isa_encode.h) that libnpu's stream builder uses too.
 */
#include "compile/program_build.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "program/isa_validate.h"

/* Everything the emitting functions share. */
struct build {
	struct isa_stream es;
	const struct rbln_compiled_config *cc;
	const struct rbln_layout_shape *s;
	uint32_t T, B;
	struct rbln_layout_weights w;
	struct rbln_layout_kv kv;
	struct rbln_layout_io io;
	struct rbln_layout_scratch sc;
	struct rbln_layout_comm comm;
	uint32_t collectives;	/* all-reduces emitted so far */
	enum rbln_isa_dtype wdt, kvdt;
	enum rbln_isa_dtype mdt;	/* MATMUL weights: wdt, or int8 (w8a16) */
	uint32_t mflags;	/* every MATMUL's: RBLN_MATMUL_A_BF16 or 0 */
	struct isa_rope_params rope;
};

/* The device's element type of a checkpoint's (their values differ). */
static enum rbln_isa_dtype isa_dtype_of(enum rbln_dtype dt)
{
	return dt == RBLN_TENSOR_BF16 ? RBLN_DTYPE_BF16 :
	       dt == RBLN_TENSOR_F16 ? RBLN_DTYPE_F16 : RBLN_DTYPE_F32;
}

/*
 * The device's ROPE knows the default and llama3 frequencies.  Linear
 * scaling (inv_freq / factor) is the llama3 formula with every wavelength
 * in its low-frequency band: with original_max_pos 1 and low_freq_factor 1
 * that band starts at wavelength 1, and the shortest wavelength of any
 * RoPE is 2 pi.  The device divides in double and rounds once, which
 * equals the float32 division transformers does.
 */
void rbln_program_rope_params(const struct rbln_rope_config *r, struct isa_rope_params *p)
{
	memset(p, 0, sizeof(*p));
	p->theta = (float)r->theta;
	if (r->type == RBLN_ROPE_LLAMA3) {
		p->llama3 = true;
		p->factor = (float)r->factor;
		p->low_freq_factor = (float)r->low_freq_factor;
		p->high_freq_factor = (float)r->high_freq_factor;
		p->original_max_pos = (uint32_t)r->original_max_position_embeddings;
	} else if (r->type == RBLN_ROPE_LINEAR && r->factor != 1.0) {
		p->llama3 = true;
		p->factor = (float)r->factor;
		p->low_freq_factor = 1.0f;
		p->high_freq_factor = 2.0f;
		p->original_max_pos = 1;
	}
}

static struct rbln_isa_operand op(uint32_t slot, uint64_t offset, uint64_t size)
{
	return isa_operand(slot, offset, size);
}

/*
 * MATMUL with the weights in 16-column panels, as the compiler stores
 * them (spaced or packed, --weight-layout): of the weights' type, or int8
 * with their scales (w8a16). With --matmul-precision bf16 every one may
 * round its activations to bfloat16 (RBLN_MATMUL_A_BF16).
 */
static void packed_matmul(struct build *b, struct rbln_isa_operand dst, struct rbln_isa_operand a,
			  struct rbln_isa_operand w, uint32_t k, uint32_t n, bool accumulate)
{
	isa_encode_matmul(&b->es, dst, a, w, b->mdt, (enum rbln_isa_layout)b->s->mlayout, k, n,
			  (accumulate ? RBLN_MATMUL_ACCUMULATE : 0) | b->mflags);
}

static uint64_t wbytes(const struct build *b, uint64_t elems)
{
	return elems * rbln_dtype_size(b->s->wdtype);
}

/* Float rows [T, width] at a scratch offset. */
static struct rbln_isa_operand rows(const struct build *b, uint64_t off, uint64_t width)
{
	return op(SLOT_SCRATCH, off, 4ull * b->T * width);
}

/*
 * Rows of `width` floats every `stride` floats, starting `col` floats into
 * a scratch region (a part of a fused row, as ROPE, KV_WRITE and SWIGLU
 * read them).
 */
static struct rbln_isa_operand strided(const struct build *b, uint64_t off, uint32_t col,
			      uint32_t width, uint32_t stride)
{
	return op(SLOT_SCRATCH, off + 4ull * col, 4ull * ((b->T - 1ull) * stride + width));
}

static struct rbln_isa_operand io_ints(const struct build *b, uint64_t off, uint64_t count)
{
	(void)b;
	return op(SLOT_IO, off, 4 * count);
}

static struct rbln_isa_operand comm_area(const struct build *b, uint32_t rank, uint32_t area)
{
	return op(SLOT_COMM + rank, b->comm.area[area], 4ull * b->T * b->s->hidden);
}

/* The area this rank publishes the next all-reduce's input in. */
static struct rbln_isa_operand publish_area(const struct build *b)
{
	return comm_area(b, b->s->rank, isa_allreduce_area(b->collectives));
}

/*
 * All-reduce of the partials every rank just wrote to publish_area(), by
 * the one all-reduce construction (isa_encode_allreduce()): one arrival
 * counter (rank 0's semaphore) and two areas per rank used alternately.
 * The counter counts within a step; the runtime zeroes it between steps,
 * when no device runs.
 */
static void all_reduce(struct build *b, struct rbln_isa_operand dst, bool add_to_dst)
{
	struct rbln_isa_operand areas[RBLN_MAX_TENSOR_PARALLEL];
	uint32_t p, area = isa_allreduce_area(b->collectives), tp = b->s->tp;
	struct isa_allreduce ar = {
		.ranks = tp,
		.phases_before = b->collectives,
		.arrivals = op(SLOT_COMM + 0, b->comm.sem, 8),
		.areas = areas,
		.dst = dst,
		.add_to_dst = add_to_dst,
		.sum = rows(b, b->sc.sum, b->s->hidden),
		.timeout_ns = RBLN_ISA_SEM_WAIT_MAX_NS,
	};

	for (p = 0; p < tp; p++)
		areas[p] = comm_area(b, p, area);
	isa_encode_allreduce(&b->es, &ar);
	b->collectives++;
}

static void embed(struct build *b)
{
	const struct rbln_layout_shape *s = b->s;
	struct rbln_isa_operand table = op(SLOT_WEIGHTS, b->w.embed, wbytes(b, (uint64_t)s->vocab * s->hidden));
	struct rbln_isa_operand ids = io_ints(b, b->io.ids, b->T);
	struct rbln_isa_operand h = rows(b, b->sc.h, s->hidden);

	if (s->tp == 1) {
		isa_encode_embed(&b->es, h, table, ids, b->wdt, s->hidden, 0, false);
		return;
	}
	isa_encode_embed(&b->es, publish_area(b), table, ids, b->wdt, s->hidden, s->vocab_first,
		   true);
	all_reduce(b, h, false);
}

static void attention_block(struct build *b, uint32_t l)
{
	const struct rbln_layout_shape *s = b->s;
	const struct layout_layer_weights *lw = &b->w.layer[l];
	uint32_t hd = s->head_dim, qw = s->q_heads * hd, kvw = s->kv_heads * hd;
	uint32_t stride = s->qkv_cols;
	struct isa_kv_shape kvs = {
		.dtype = b->kvdt, .block_size = b->cc->kvcache_block_size,
		.kv_heads = s->kv_heads, .head_dim = hd,
	};
	uint64_t kbase = l * b->kv.layer_stride;
	struct rbln_isa_operand kc = op(SLOT_KV, kbase, b->kv.cache_size);
	struct rbln_isa_operand vc = op(SLOT_KV, kbase + b->kv.cache_size, b->kv.cache_size);
	struct rbln_isa_operand h = rows(b, b->sc.h, s->hidden), xn = rows(b, b->sc.xn, s->hidden);
	struct rbln_isa_operand attn = rows(b, b->sc.attn, qw);
	struct rbln_isa_operand wo = op(SLOT_WEIGHTS, lw->o, rbln_layout_matrix_size(s, s->hidden, qw));
	struct isa_attention at = {
		.out = attn,
		.q = strided(b, b->sc.qkv, 0, qw, stride),
		.k_cache = kc, .v_cache = vc,
		.seqs = io_ints(b, b->io.seq_desc, 4ull * b->B),
		.block_tables = io_ints(b, b->io.tables, (uint64_t)b->B * b->io.max_blocks),
		.work = op(SLOT_SCRATCH, b->sc.work, b->sc.work_size),
		.kv = kvs, .q_heads = s->q_heads, .q_stride = stride,
		.max_blocks = b->io.max_blocks, .partition_len = b->cc->kvcache_partition_len,
		/* transformers scales by head_dim ** -0.5 as a float32 scalar */
		.scale = (float)(1.0 / sqrt((double)hd)),
	};

	isa_encode_rmsnorm(&b->es, xn, h, op(SLOT_WEIGHTS, lw->input_norm, wbytes(b, s->hidden)),
		     b->wdt, s->hidden, (float)b->cc->model.rms_norm_eps);
	packed_matmul(b, rows(b, b->sc.qkv, stride), xn,
		    op(SLOT_WEIGHTS, lw->qkv, rbln_layout_matrix_size(s, stride, s->hidden)),
		    s->hidden, stride, false);
	/* q and k heads are adjacent in a qkv row: one ROPE turns both. */
	isa_encode_rope(&b->es, strided(b, b->sc.qkv, 0, qw + kvw, stride),
		  io_ints(b, b->io.pos, b->T), s->q_heads + s->kv_heads, hd, stride,
		  &b->rope);
	isa_encode_kv_write(&b->es, kc, vc, strided(b, b->sc.qkv, qw, kvw, stride),
		      strided(b, b->sc.qkv, qw + kvw, kvw, stride),
		      io_ints(b, b->io.slots, b->T), &kvs, stride, stride);
	isa_encode_attention(&b->es, &at);
	if (s->tp == 1) {
		packed_matmul(b, h, attn, wo, qw, s->hidden, true);
	} else {
		packed_matmul(b, publish_area(b), attn, wo, qw, s->hidden, false);
		all_reduce(b, h, true);
	}
}

static void mlp_block(struct build *b, uint32_t l)
{
	const struct rbln_layout_shape *s = b->s;
	const struct layout_layer_weights *lw = &b->w.layer[l];
	uint32_t I = s->inter;
	struct rbln_isa_operand h = rows(b, b->sc.h, s->hidden), xn = rows(b, b->sc.xn, s->hidden);
	struct rbln_isa_operand act = rows(b, b->sc.act, I);
	struct rbln_isa_operand wd = op(SLOT_WEIGHTS, lw->down, rbln_layout_matrix_size(s, s->hidden, I));

	isa_encode_rmsnorm(&b->es, xn, h, op(SLOT_WEIGHTS, lw->post_norm, wbytes(b, s->hidden)),
		     b->wdt, s->hidden, (float)b->cc->model.rms_norm_eps);
	packed_matmul(b, rows(b, b->sc.gate_up, 2 * I), xn,
		    op(SLOT_WEIGHTS, lw->gate_up, rbln_layout_matrix_size(s, 2 * I, s->hidden)),
		    s->hidden, 2 * I, false);
	isa_encode_swiglu(&b->es, act, strided(b, b->sc.gate_up, 0, I, 2 * I),
		    strided(b, b->sc.gate_up, I, I, 2 * I), I, 2 * I, 2 * I);
	if (s->tp == 1) {
		packed_matmul(b, h, act, wd, I, s->hidden, true);
	} else {
		packed_matmul(b, publish_area(b), act, wd, I, s->hidden, false);
		all_reduce(b, h, true);
	}
}

/* Final norm, lm_head and ARGMAX of the one row per sequence that is sampled. */
static void head(struct build *b)
{
	const struct rbln_layout_shape *s = b->s;
	struct rbln_isa_operand sel = op(SLOT_SCRATCH, b->sc.sel, 4ull * b->B * s->hidden);
	struct rbln_isa_operand logits = op(SLOT_IO, b->io.logits, 4ull * b->B * s->vocab);

	/* EMBED over a float32 table is a row gather: the token rows of h. */
	isa_encode_embed(&b->es, sel, rows(b, b->sc.h, s->hidden), io_ints(b, b->io.logit_rows, b->B),
		   RBLN_DTYPE_F32, s->hidden, 0, false);
	isa_encode_rmsnorm(&b->es, sel, sel, op(SLOT_WEIGHTS, b->w.final_norm, wbytes(b, s->hidden)),
		     b->wdt, s->hidden, (float)b->cc->model.rms_norm_eps);
	packed_matmul(b, logits, sel,
		    op(SLOT_WEIGHTS, b->w.lm_head,
		       rbln_layout_matrix_size(s, s->vocab, s->hidden)),
		    s->hidden, s->vocab, false);
	isa_encode_argmax(&b->es, op(SLOT_IO, b->io.argmax_value, 4ull * b->B),
		    io_ints(b, b->io.argmax_index, b->B), logits, s->vocab, s->vocab_first);
}

/*
 * Encodes the program of shape (b->T, b->B) into b->es: 0, or -ENOMEM
 * before any command (the stream's own errors stay in b->es.error).  Free
 * with build_free().
 */
static int encode(struct build *b)
{
	const struct rbln_compiled_config *cc = b->cc;
	const struct rbln_layout_shape *s = b->s;
	uint32_t l, max_t, max_b;

	if (rbln_layout_weights(s, &b->w))
		return -ENOMEM;
	rbln_layout_max_shape(cc, &max_t, &max_b);
	rbln_layout_kv(cc, s, &b->kv);
	rbln_layout_io(cc, s, b->T, b->B, &b->io);
	rbln_layout_scratch(cc, s, b->T, b->B, &b->sc);
	/* Peers read our areas at the offsets they compute: always the largest shape's. */
	rbln_layout_comm(s, max_t, &b->comm);
	b->wdt = isa_dtype_of(s->wdtype);
	b->kvdt = isa_dtype_of(s->kvdtype);
	b->mdt = s->quant == RBLN_QUANT_W8A16 ? RBLN_DTYPE_I8 : b->wdt;
	b->mflags = cc->matmul_precision == RBLN_MATMUL_BF16 ? RBLN_MATMUL_A_BF16 : 0;
	rbln_program_rope_params(&cc->model.rope, &b->rope);
	/* Out of memory here is the stream's sticky error. */
	isa_stream_init(&b->es, UINT64_MAX);

	embed(b);
	for (l = 0; l < s->layers; l++) {
		attention_block(b, l);
		mlp_block(b, l);
	}
	head(b);
	return 0;
}

static void build_free(struct build *b)
{
	isa_stream_free(&b->es);
	rbln_layout_weights_free(&b->w);
}

int rbln_program_build(const struct rbln_compiled_config *cc, const struct rbln_layout_shape *s,
		  const struct rbln_layout_buffers *bufs, uint32_t tokens, uint32_t seqs,
		  struct program_image *img, struct rbln_error *err)
{
	struct build b = { .cc = cc, .s = s, .T = tokens, .B = seqs };
	const void *data;
	size_t len;
	uint32_t i;
	int rc;

	memset(img, 0, sizeof(*img));
	if (encode(&b))
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rc = b.es.error;
	data = b.es.data;
	len = b.es.size;
	if (rc) {
		rbln_error_set(err, rc, "rank %u: building the program failed: %s", s->rank,
			       strerror(-rc));
		goto out;
	}
	rc = rbln_program_validate_stream(data, len, bufs->size, bufs->access, bufs->n_slots,
				     "compiled program", err);
	if (rc)
		goto out;
	memcpy(img->hdr.magic, PROGRAM_FILE_MAGIC, sizeof(img->hdr.magic));
	img->hdr.version = RBLN_FILES_VERSION;
	img->hdr.header_size = sizeof(img->hdr);
	img->hdr.compile_id = cc->compile_id;
	img->hdr.rank = s->rank;
	img->hdr.tp = s->tp;
	img->hdr.tokens = tokens;
	img->hdr.seqs = seqs;
	img->hdr.n_slots = bufs->n_slots;
	img->hdr.stream_size = len;
	img->slots = calloc(bufs->n_slots, sizeof(*img->slots));
	img->stream = malloc(len);
	if (!img->slots || !img->stream) {
		rbln_program_image_free(img);
		rc = rbln_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < bufs->n_slots; i++) {
		img->slots[i].size = bufs->size[i];
		img->slots[i].access = bufs->access[i];
	}
	memcpy(img->stream, data, len);
out:
	build_free(&b);
	return rc;
}

/*
 * Every program of a compile, of every rank and shape, has the same kinds
 * of commands with the same flags (only their sizes and offsets differ):
 * rank 0's decoder of the smallest batch, as encoded, stands for them.
 */
unsigned int rbln_compiled_isa_minor(const struct rbln_compiled_config *cc)
{
	struct layout_program progs[RBLN_MAX_DECODER_BATCHES + 1];
	struct rbln_layout_shape s;
	struct build b = { .cc = cc, .s = &s };
	unsigned int minor = RBLN_ISA_VERSION_MINOR;
	uint32_t n;

	if (rbln_layout_shape(cc, 0, &s, NULL))
		return minor;
	n = rbln_layout_programs(cc, progs);
	b.T = progs[n - 1].tokens;
	b.B = progs[n - 1].seqs;
	if (!encode(&b) && !b.es.error)
		minor = b.es.minor;
	build_free(&b);
	return minor;
}
