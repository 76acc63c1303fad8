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
 * through the final norm and lm_head.
 */
#include "compile/program_build.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "program/isa_emit.h"

/* Everything the emitting functions share. */
struct build {
	struct emit_stream es;
	const struct rbln_compiled_config *cc;
	const struct layout_shape *s;
	uint32_t T, B;
	struct layout_weights w;
	struct layout_kv kv;
	struct layout_io io;
	struct layout_scratch sc;
	struct layout_comm comm;
	uint32_t collectives;	/* all-reduces emitted so far */
	enum emit_dtype wdt, kvdt;
	struct emit_rope_params rope;
};

static enum emit_dtype emit_dtype_of(enum rbln_dtype dt)
{
	return dt == RBLN_DTYPE_BF16 ? EMIT_BF16 : dt == RBLN_DTYPE_F16 ? EMIT_F16 : EMIT_F32;
}

/*
 * The device's ROPE knows the default and llama3 frequencies.  Linear
 * scaling (inv_freq / factor) is the llama3 formula with every wavelength
 * in its low-frequency band: with original_max_pos 1 and low_freq_factor 1
 * that band starts at wavelength 1, and the shortest wavelength of any
 * RoPE is 2 pi.  The device divides in double and rounds once, which
 * equals the float32 division transformers does.
 */
void program_rope_params(const struct rbln_rope_config *r, struct emit_rope_params *p)
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

static struct emit_op op(uint32_t slot, uint64_t offset, uint64_t size)
{
	struct emit_op o = { .slot = slot, .offset = offset, .size = size };

	return o;
}

static uint64_t wbytes(const struct build *b, uint64_t elems)
{
	return elems * rbln_dtype_size(b->s->wdtype);
}

/* Float rows [T, width] at a scratch offset. */
static struct emit_op rows(const struct build *b, uint64_t off, uint64_t width)
{
	return op(SLOT_SCRATCH, off, 4ull * b->T * width);
}

/*
 * Rows of `width` floats every `stride` floats, starting `col` floats into
 * a scratch region (a part of a fused row, as ROPE, KV_WRITE and SWIGLU
 * read them).
 */
static struct emit_op strided(const struct build *b, uint64_t off, uint32_t col,
			      uint32_t width, uint32_t stride)
{
	return op(SLOT_SCRATCH, off + 4ull * col, 4ull * ((b->T - 1ull) * stride + width));
}

static struct emit_op io_ints(const struct build *b, uint64_t off, uint64_t count)
{
	(void)b;
	return op(SLOT_IO, off, 4 * count);
}

static struct emit_op comm_area(const struct build *b, uint32_t rank, uint32_t area)
{
	return op(SLOT_COMM + rank, b->comm.area[area], 4ull * b->T * b->s->hidden);
}

/* The area this rank publishes the next all-reduce's input in. */
static struct emit_op publish_area(const struct build *b)
{
	return comm_area(b, b->s->rank, b->collectives % 2);
}

/*
 * All-reduce of the partials every rank just wrote to publish_area(): each
 * rank adds 1 to one arrival counter (rank 0's semaphore) and waits until
 * all tp ranks have arrived for this collective, then sums all the areas
 * in rank order, so every rank computes the same bits.  One counter means
 * one SEM_WAIT per collective, not one per peer: on an oversubscribed host
 * every extra wait is a thread polling for a core.  Two areas used
 * alternately make it safe to publish the next partial before peers
 * finished reading this one: a rank that arrived at collective i has
 * finished reading i - 1.  The counter counts within a step; the runtime
 * zeroes it between steps, when no device runs.
 */
static void all_reduce(struct build *b, struct emit_op dst, bool add_to_dst)
{
	uint32_t p, area = b->collectives % 2, tp = b->s->tp;
	struct emit_op sum = add_to_dst ? rows(b, b->sc.sum, b->s->hidden) : dst;
	struct emit_op arrivals = op(SLOT_COMM + 0, b->comm.sem, 8);

	emit_sem_add(&b->es, arrivals, 1);
	emit_sem_wait_geq(&b->es, arrivals, (uint64_t)tp * (b->collectives + 1ull),
			  EMIT_SEM_WAIT_MAX_NS);
	emit_add(&b->es, sum, comm_area(b, 0, area), comm_area(b, 1, area));
	for (p = 2; p < tp; p++)
		emit_add(&b->es, sum, sum, comm_area(b, p, area));
	if (add_to_dst)
		emit_add(&b->es, dst, dst, sum);
	b->collectives++;
}

static void embed(struct build *b)
{
	const struct layout_shape *s = b->s;
	struct emit_op table = op(SLOT_WEIGHTS, b->w.embed, wbytes(b, (uint64_t)s->vocab * s->hidden));
	struct emit_op ids = io_ints(b, b->io.ids, b->T);
	struct emit_op h = rows(b, b->sc.h, s->hidden);

	if (s->tp == 1) {
		emit_embed(&b->es, h, table, ids, b->wdt, s->hidden, 0, false);
		return;
	}
	emit_embed(&b->es, publish_area(b), table, ids, b->wdt, s->hidden, s->vocab_first,
		   true);
	all_reduce(b, h, false);
}

static void attention_block(struct build *b, uint32_t l)
{
	const struct layout_shape *s = b->s;
	const struct layout_layer_weights *lw = &b->w.layer[l];
	uint32_t hd = s->head_dim, qw = s->q_heads * hd, kvw = s->kv_heads * hd;
	uint32_t stride = s->qkv_cols;
	struct emit_kv_shape kvs = {
		.dtype = b->kvdt, .block_size = b->cc->kvcache_block_size,
		.kv_heads = s->kv_heads, .head_dim = hd,
	};
	uint64_t kbase = l * b->kv.layer_stride;
	struct emit_op kc = op(SLOT_KV, kbase, b->kv.cache_size);
	struct emit_op vc = op(SLOT_KV, kbase + b->kv.cache_size, b->kv.cache_size);
	struct emit_op h = rows(b, b->sc.h, s->hidden), xn = rows(b, b->sc.xn, s->hidden);
	struct emit_op attn = rows(b, b->sc.attn, qw);
	struct emit_op wo = op(SLOT_WEIGHTS, lw->o, layout_packed_size(s->hidden, qw, s->wdtype));
	struct emit_attention at = {
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

	emit_rmsnorm(&b->es, xn, h, op(SLOT_WEIGHTS, lw->input_norm, wbytes(b, s->hidden)),
		     b->wdt, s->hidden, (float)b->cc->model.rms_norm_eps);
	emit_matmul(&b->es, rows(b, b->sc.qkv, stride), xn,
		    op(SLOT_WEIGHTS, lw->qkv, layout_packed_size(stride, s->hidden, s->wdtype)),
		    b->wdt, s->hidden, stride, false);
	/* q and k heads are adjacent in a qkv row: one ROPE turns both. */
	emit_rope(&b->es, strided(b, b->sc.qkv, 0, qw + kvw, stride),
		  io_ints(b, b->io.pos, b->T), s->q_heads + s->kv_heads, hd, stride,
		  &b->rope);
	emit_kv_write(&b->es, kc, vc, strided(b, b->sc.qkv, qw, kvw, stride),
		      strided(b, b->sc.qkv, qw + kvw, kvw, stride),
		      io_ints(b, b->io.slots, b->T), &kvs, stride, stride);
	emit_attention(&b->es, &at);
	if (s->tp == 1) {
		emit_matmul(&b->es, h, attn, wo, b->wdt, qw, s->hidden, true);
	} else {
		emit_matmul(&b->es, publish_area(b), attn, wo, b->wdt, qw, s->hidden, false);
		all_reduce(b, h, true);
	}
}

static void mlp_block(struct build *b, uint32_t l)
{
	const struct layout_shape *s = b->s;
	const struct layout_layer_weights *lw = &b->w.layer[l];
	uint32_t I = s->inter;
	struct emit_op h = rows(b, b->sc.h, s->hidden), xn = rows(b, b->sc.xn, s->hidden);
	struct emit_op act = rows(b, b->sc.act, I);
	struct emit_op wd = op(SLOT_WEIGHTS, lw->down, layout_packed_size(s->hidden, I, s->wdtype));

	emit_rmsnorm(&b->es, xn, h, op(SLOT_WEIGHTS, lw->post_norm, wbytes(b, s->hidden)),
		     b->wdt, s->hidden, (float)b->cc->model.rms_norm_eps);
	emit_matmul(&b->es, rows(b, b->sc.gate_up, 2 * I), xn,
		    op(SLOT_WEIGHTS, lw->gate_up, layout_packed_size(2 * I, s->hidden, s->wdtype)),
		    b->wdt, s->hidden, 2 * I, false);
	emit_swiglu(&b->es, act, strided(b, b->sc.gate_up, 0, I, 2 * I),
		    strided(b, b->sc.gate_up, I, I, 2 * I), I, 2 * I, 2 * I);
	if (s->tp == 1) {
		emit_matmul(&b->es, h, act, wd, b->wdt, I, s->hidden, true);
	} else {
		emit_matmul(&b->es, publish_area(b), act, wd, b->wdt, I, s->hidden, false);
		all_reduce(b, h, true);
	}
}

/* Final norm, lm_head and ARGMAX of the one row per sequence that is sampled. */
static void head(struct build *b)
{
	const struct layout_shape *s = b->s;
	struct emit_op sel = op(SLOT_SCRATCH, b->sc.sel, 4ull * b->B * s->hidden);
	struct emit_op logits = op(SLOT_IO, b->io.logits, 4ull * b->B * s->vocab);

	/* EMBED over a float32 table is a row gather: the token rows of h. */
	emit_embed(&b->es, sel, rows(b, b->sc.h, s->hidden), io_ints(b, b->io.logit_rows, b->B),
		   EMIT_F32, s->hidden, 0, false);
	emit_rmsnorm(&b->es, sel, sel, op(SLOT_WEIGHTS, b->w.final_norm, wbytes(b, s->hidden)),
		     b->wdt, s->hidden, (float)b->cc->model.rms_norm_eps);
	emit_matmul(&b->es, logits, sel,
		    op(SLOT_WEIGHTS, b->w.lm_head,
		       layout_packed_size(s->vocab, s->hidden, s->wdtype)),
		    b->wdt, s->hidden, s->vocab, false);
	emit_argmax(&b->es, op(SLOT_IO, b->io.argmax_value, 4ull * b->B),
		    io_ints(b, b->io.argmax_index, b->B), logits, s->vocab, s->vocab_first);
}

int program_build(const struct rbln_compiled_config *cc, const struct layout_shape *s,
		  const struct layout_buffers *bufs, uint32_t tokens, uint32_t seqs,
		  struct program_image *img, struct rbln_error *err)
{
	struct build b = { .cc = cc, .s = s, .T = tokens, .B = seqs };
	uint32_t l, max_t, max_b, i;
	const void *data;
	size_t len;
	int rc;

	memset(img, 0, sizeof(*img));
	if (layout_weights(s, &b.w))
		return rbln_error_set(err, -ENOMEM, "out of memory");
	layout_max_shape(cc, &max_t, &max_b);
	layout_kv(cc, s, &b.kv);
	layout_io(cc, s, tokens, seqs, &b.io);
	layout_scratch(cc, s, tokens, seqs, &b.sc);
	/* Peers read our areas at the offsets they compute: always the largest shape's. */
	layout_comm(s, max_t, &b.comm);
	b.wdt = emit_dtype_of(s->wdtype);
	b.kvdt = emit_dtype_of(s->kvdtype);
	program_rope_params(&cc->model.rope, &b.rope);
	emit_init(&b.es);

	embed(&b);
	for (l = 0; l < s->layers; l++) {
		attention_block(&b, l);
		mlp_block(&b, l);
	}
	head(&b);

	rc = emit_finish(&b.es, &data, &len);
	if (rc) {
		rbln_error_set(err, rc, "rank %u: building the program failed: %s", s->rank,
			       strerror(-rc));
		goto out;
	}
	rc = emit_validate(data, len, bufs->size, bufs->access, bufs->n_slots,
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
		program_image_free(img);
		rc = rbln_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < bufs->n_slots; i++) {
		img->slots[i].size = bufs->size[i];
		img->slots[i].access = bufs->access[i];
	}
	memcpy(img->stream, data, len);
out:
	emit_free(&b.es);
	layout_weights_free(&b.w);
	return rc;
}
