// SPDX-License-Identifier: MIT
/*
 * The per-rank layout (see layout.h).  Sharding follows Megatron-style
 * tensor parallelism as vLLM does it: query heads, KV heads and the MLP are
 * split by rank (column-parallel QKV and gate/up, row-parallel o and
 * down), the vocabulary is split into contiguous ranges (embedding and
 * lm_head), and when there are fewer KV heads than ranks each KV head is
 * replicated on the ranks whose query heads use it.
 */
#include "program/layout.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbln_accel.h"
#include "rbln_isa.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

int rbln_layout_shape(const struct rbln_compiled_config *cc, uint32_t rank, struct rbln_layout_shape *s,
		 struct rbln_error *err)
{
	const struct rbln_llama_config *m = &cc->model;
	uint32_t tp = cc->tensor_parallel_size;
	uint32_t nkv = (uint32_t)m->num_key_value_heads;

	if (!tp || rank >= tp)
		return rbln_error_set(err, -EINVAL, "rank %u of tensor-parallel size %u", rank, tp);
	memset(s, 0, sizeof(*s));
	s->tp = tp;
	s->rank = rank;
	s->hidden = (uint32_t)m->hidden_size;
	s->layers = (uint32_t)m->num_hidden_layers;
	s->head_dim = (uint32_t)m->head_dim;
	s->q_heads = (uint32_t)m->num_attention_heads / tp;
	s->q_head_first = rank * s->q_heads;
	if (nkv >= tp) {
		s->kv_heads = nkv / tp;
		s->kv_head_first = rank * s->kv_heads;
	} else {
		s->kv_heads = 1;
		s->kv_head_first = rank / (tp / nkv);
	}
	s->qkv_cols = (s->q_heads + 2 * s->kv_heads) * s->head_dim;
	s->inter = (uint32_t)m->intermediate_size / tp;
	s->vocab = (uint32_t)m->vocab_size / tp;
	s->vocab_first = rank * s->vocab;
	s->wdtype = cc->dtype;
	s->kvdtype = cc->kv_cache_dtype;
	s->quant = cc->quantize;
	s->mlayout = cc->weight_layout == RBLN_WEIGHTS_SPACED ? RBLN_LAYOUT_PACKED16_SPACED :
		     RBLN_LAYOUT_PACKED16;
	return 0;
}

/* As rbln_isa.h defines MATMUL's operand (and libnpu's npu_weights_size()). */
uint64_t rbln_layout_matrix_size(const struct rbln_layout_shape *s, uint32_t n, uint32_t k)
{
	uint64_t panels = (n + RBLN_ISA_PACK_COLS - 1) / RBLN_ISA_PACK_COLS;
	bool w8 = s->quant == RBLN_QUANT_W8A16;
	uint64_t panel = (uint64_t)RBLN_ISA_PACK_COLS * k * (w8 ? 1 : rbln_dtype_size(s->wdtype));

	if (s->mlayout == RBLN_LAYOUT_PACKED16_SPACED)
		panel += RBLN_ISA_PANEL_GAP;
	/* int8: one float32 scale per column of whole panels after them. */
	return panels * (panel + (w8 ? RBLN_ISA_PACK_COLS * 4 : 0));
}

/* Reserves `size` bytes at the next page of *at and returns their offset. */
static uint64_t take(uint64_t *at, uint64_t size)
{
	uint64_t off = align_up(*at, LAYOUT_WEIGHT_ALIGN);

	*at = off + size;
	return off;
}

int rbln_layout_weights(const struct rbln_layout_shape *s, struct rbln_layout_weights *w)
{
	uint64_t es = rbln_dtype_size(s->wdtype), at = LAYOUT_WEIGHT_ALIGN, norm;
	uint32_t l;

	memset(w, 0, sizeof(*w));
	w->layer = calloc(s->layers ? s->layers : 1, sizeof(*w->layer));
	if (!w->layer)
		return -ENOMEM;
	w->n_layers = s->layers;
	norm = (uint64_t)s->hidden * es;
	w->embed = take(&at, (uint64_t)s->vocab * s->hidden * es);
	for (l = 0; l < s->layers; l++) {
		struct layout_layer_weights *lw = &w->layer[l];

		lw->input_norm = take(&at, norm);
		lw->qkv = take(&at, rbln_layout_matrix_size(s, s->qkv_cols, s->hidden));
		lw->o = take(&at, rbln_layout_matrix_size(s, s->hidden, s->q_heads * s->head_dim));
		lw->post_norm = take(&at, norm);
		lw->gate_up = take(&at, rbln_layout_matrix_size(s, 2 * s->inter, s->hidden));
		lw->down = take(&at, rbln_layout_matrix_size(s, s->hidden, s->inter));
	}
	w->final_norm = take(&at, norm);
	w->lm_head = take(&at, rbln_layout_matrix_size(s, s->vocab, s->hidden));
	w->size = align_up(at, LAYOUT_WEIGHT_ALIGN);
	return 0;
}

void rbln_layout_weights_free(struct rbln_layout_weights *w)
{
	free(w->layer);
	w->layer = NULL;
}

void rbln_layout_kv(const struct rbln_compiled_config *cc, const struct rbln_layout_shape *s,
	       struct rbln_layout_kv *kv)
{
	kv->cache_size = (uint64_t)cc->kvcache_num_blocks * cc->kvcache_block_size *
			 s->kv_heads * s->head_dim * rbln_dtype_size(s->kvdtype);
	kv->cache_size = align_up(kv->cache_size, LAYOUT_ALIGN);
	kv->layer_stride = 2 * kv->cache_size;
	kv->size = kv->layer_stride * s->layers;
}

uint32_t rbln_layout_partitions(const struct rbln_compiled_config *cc)
{
	return (cc->max_seq_len + cc->kvcache_partition_len - 1) / cc->kvcache_partition_len;
}

static uint64_t region(uint64_t *at, uint64_t size)
{
	uint64_t off = align_up(*at, LAYOUT_ALIGN);

	*at = off + size;
	return off;
}

void rbln_layout_io(const struct rbln_compiled_config *cc, const struct rbln_layout_shape *s,
	       uint32_t tokens, uint32_t seqs, struct rbln_layout_io *io)
{
	uint64_t at = 0;

	memset(io, 0, sizeof(*io));
	io->tokens = tokens;
	io->seqs = seqs;
	io->max_blocks = cc->max_seq_len / cc->kvcache_block_size;
	io->ids = region(&at, 4ull * tokens);
	io->pos = region(&at, 4ull * tokens);
	io->slots = region(&at, 4ull * tokens);
	io->seq_desc = region(&at, 16ull * seqs);
	io->tables = region(&at, 4ull * seqs * io->max_blocks);
	io->logit_rows = region(&at, 4ull * seqs);
	io->logits = region(&at, 4ull * seqs * s->vocab);
	io->argmax_value = region(&at, 4ull * seqs);
	io->argmax_index = region(&at, 4ull * seqs);
	io->size = align_up(at, LAYOUT_ALIGN);
}

void rbln_layout_scratch(const struct rbln_compiled_config *cc, const struct rbln_layout_shape *s,
		    uint32_t tokens, uint32_t seqs, struct rbln_layout_scratch *sc)
{
	uint64_t t = tokens, at = 0;

	memset(sc, 0, sizeof(*sc));
	sc->h = region(&at, 4 * t * s->hidden);
	sc->xn = region(&at, 4 * t * s->hidden);
	sc->qkv = region(&at, 4 * t * s->qkv_cols);
	sc->attn = region(&at, 4 * t * s->q_heads * s->head_dim);
	sc->gate_up = region(&at, 8 * t * s->inter);
	sc->act = region(&at, 4 * t * s->inter);
	sc->sum = region(&at, 4 * t * s->hidden);
	sc->work_size = 4 * t * s->q_heads * rbln_layout_partitions(cc) * (s->head_dim + 2ull);
	sc->work = region(&at, sc->work_size);
	sc->sel = region(&at, 4ull * seqs * s->hidden);
	sc->size = align_up(at, LAYOUT_ALIGN);
}

void rbln_layout_comm(const struct rbln_layout_shape *s, uint32_t tokens, struct rbln_layout_comm *c)
{
	uint64_t at = 0;

	c->sem = region(&at, 8);
	c->area[0] = region(&at, 4ull * tokens * s->hidden);
	c->area[1] = region(&at, 4ull * tokens * s->hidden);
	c->size = align_up(at, LAYOUT_ALIGN);
}

uint32_t rbln_layout_programs(const struct rbln_compiled_config *cc,
			 struct layout_program progs[RBLN_MAX_DECODER_BATCHES + 1])
{
	uint32_t n = 0;
	size_t i;

	snprintf(progs[n].name, sizeof(progs[n].name), "prefill");
	progs[n].tokens = cc->prefill_chunk_size;
	progs[n].seqs = cc->batch_size;
	n++;
	for (i = 0; i < cc->n_decoder_batch_sizes; i++, n++) {
		snprintf(progs[n].name, sizeof(progs[n].name), "decoder_batch_%u",
			 cc->decoder_batch_sizes[i]);
		progs[n].tokens = cc->decoder_batch_sizes[i];
		progs[n].seqs = cc->decoder_batch_sizes[i];
	}
	return n;
}

void rbln_layout_max_shape(const struct rbln_compiled_config *cc, uint32_t *tokens, uint32_t *seqs)
{
	/* rbln_compile_resolve() keeps prefill_chunk_size >= batch_size >= every bucket. */
	*tokens = cc->prefill_chunk_size;
	*seqs = cc->batch_size;
}

int rbln_layout_buffers(const struct rbln_compiled_config *cc, const struct rbln_layout_shape *s,
		   struct rbln_layout_buffers *b)
{
	struct rbln_layout_weights w;
	struct rbln_layout_kv kv;
	struct rbln_layout_io io;
	struct rbln_layout_scratch sc;
	struct rbln_layout_comm cm;
	uint32_t t, bs, p;

	memset(b, 0, sizeof(*b));
	if (rbln_layout_weights(s, &w))
		return -ENOMEM;
	rbln_layout_max_shape(cc, &t, &bs);
	rbln_layout_kv(cc, s, &kv);
	rbln_layout_io(cc, s, t, bs, &io);
	rbln_layout_scratch(cc, s, t, bs, &sc);
	rbln_layout_comm(s, t, &cm);
	b->size[SLOT_WEIGHTS] = w.size;
	b->access[SLOT_WEIGHTS] = DRM_RBLN_BO_READ;
	b->size[SLOT_KV] = kv.size;
	b->size[SLOT_SCRATCH] = sc.size;
	b->size[SLOT_IO] = io.size;
	b->access[SLOT_KV] = b->access[SLOT_SCRATCH] = b->access[SLOT_IO] =
		DRM_RBLN_BO_READ | DRM_RBLN_BO_WRITE;
	b->n_slots = SLOT_COMM;
	if (s->tp > 1) {
		for (p = 0; p < s->tp; p++) {
			b->size[SLOT_COMM + p] = cm.size;
			/*
			 * A rank writes its own comm buffer and reads its peers';
			 * rank 0's also holds the arrival counter every rank adds to.
			 */
			b->access[SLOT_COMM + p] = p == s->rank || p == 0 ?
				DRM_RBLN_BO_READ | DRM_RBLN_BO_WRITE : DRM_RBLN_BO_READ;
		}
		b->n_slots += s->tp;
	}
	rbln_layout_weights_free(&w);
	return 0;
}
