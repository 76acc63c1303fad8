/* SPDX-License-Identifier: MIT */
/*
 * Where everything lives on one tensor-parallel rank: the shapes of its
 * shards, the offsets of its weights in its weight file, and the regions of
 * its KV cache, scratch, argument/result (io) and communication buffers.
 *
 * The layout is a pure function of the compiled configuration, the rank
 * and a program's shape (T token rows, B sequences), so the compiler and
 * the runtime compute it with this same code instead of passing offsets
 * through files.
 */
#ifndef RBLN_LAYOUT_H
#define RBLN_LAYOUT_H

#include <stdint.h>

#include "rbln_compile.h"
#include "rbln_isa.h"

/* Program slots: the buffer-list index each buffer has in every submission. */
enum layout_slot {
	SLOT_WEIGHTS = 0,	/* read-only, the rank's weight file */
	SLOT_KV = 1,		/* the paged KV cache of every layer */
	SLOT_SCRATCH = 2,	/* activations */
	SLOT_IO = 3,		/* step arguments in, logits out (host memory) */
	SLOT_COMM = 4,		/* comm buffer of rank p is slot SLOT_COMM + p */
};

/* Alignment of every region: a cache line, and whole vectors for the kernels. */
#define LAYOUT_ALIGN 64u
/* Weight tensors start on pages, so that a file mapping can be used as is. */
#define LAYOUT_WEIGHT_ALIGN 4096u

struct rbln_layout_shape {
	uint32_t tp, rank;
	uint32_t hidden;
	uint32_t layers;
	uint32_t head_dim;
	uint32_t q_heads;		/* query heads of this rank */
	uint32_t q_head_first;		/* global index of its first query head */
	uint32_t kv_heads;		/* KV heads of this rank (replicated when tp > KV heads) */
	uint32_t kv_head_first;		/* global index of its first KV head */
	uint32_t qkv_cols;		/* (q_heads + 2 kv_heads) * head_dim */
	uint32_t inter;			/* MLP width of this rank */
	uint32_t vocab;			/* vocabulary rows of this rank */
	uint32_t vocab_first;		/* global id of its first row */
	enum rbln_dtype wdtype;		/* weights (embedding, norms, unquantised matrices) */
	enum rbln_quantize quant;	/* w8a16: every matrix int8 with its scales */
	enum rbln_isa_layout mlayout;	/* the matrices' MATMUL layout (packed or spaced) */
	enum rbln_dtype kvdtype;	/* KV cache */
};

struct layout_layer_weights {
	uint64_t input_norm;		/* [hidden] */
	uint64_t qkv;			/* packed [qkv_cols, hidden]: q | k | v rows */
	uint64_t o;			/* packed [hidden, q_heads * head_dim] */
	uint64_t post_norm;		/* [hidden] */
	uint64_t gate_up;		/* packed [2 inter, hidden]: gate | up rows */
	uint64_t down;			/* packed [hidden, inter] */
};

struct rbln_layout_weights {
	uint64_t header;		/* the weight file header, at 0 */
	uint64_t embed;			/* row-major [vocab, hidden] for EMBED */
	uint64_t final_norm;		/* [hidden] */
	uint64_t lm_head;		/* packed [vocab, hidden] */
	uint64_t size;
	uint32_t n_layers;
	struct layout_layer_weights *layer;	/* n_layers entries, malloc'd */
};

/*
 * The KV cache: per layer a K and a V cache of [blocks, kv_heads, block_size, head_dim]
 * (head-major, RBLN_KV_HEAD_MAJOR; the size is that of any layout).
 */
struct rbln_layout_kv {
	uint64_t layer_stride;		/* bytes of one layer's K and V */
	uint64_t cache_size;		/* bytes of one K (or V) cache of a layer */
	uint64_t size;
};

/* Offsets in SLOT_IO of one program's arguments and results. */
struct rbln_layout_io {
	uint32_t tokens, seqs, max_blocks;
	uint64_t ids;			/* int32 [T] token ids */
	uint64_t pos;			/* int32 [T] positions */
	uint64_t slots;			/* int32 [T] cache slots, -1 for padding */
	uint64_t seq_desc;		/* int32 [B, 4] {q_start, q_len, ctx_len, table row} */
	uint64_t tables;		/* int32 [B, max_blocks] block tables */
	uint64_t logit_rows;		/* int32 [B] token row whose logits are wanted */
	uint64_t logits;		/* float [B, vocab] this rank's logits */
	uint64_t argmax_value;		/* float [B] */
	uint64_t argmax_index;		/* int32 [B], global ids */
	uint64_t size;
};

/* Offsets in SLOT_SCRATCH. */
struct rbln_layout_scratch {
	uint64_t h;			/* float [T, hidden] residual stream */
	uint64_t xn;			/* float [T, hidden] normalised */
	uint64_t qkv;			/* float [T, qkv_cols] */
	uint64_t attn;			/* float [T, q_heads * head_dim] */
	uint64_t gate_up;		/* float [T, 2 inter] */
	uint64_t act;			/* float [T, inter] */
	uint64_t sum;			/* float [T, hidden] all-reduce result */
	uint64_t work;			/* ATTENTION partials */
	uint64_t work_size;
	uint64_t sel;			/* float [B, hidden] rows whose logits are wanted */
	uint64_t size;
};

/* SLOT_COMM + rank: a semaphore and two areas rank publishes partial sums in. */
struct rbln_layout_comm {
	uint64_t sem;			/* u64 counter, rank 0's: arrivals at collectives */
	uint64_t area[2];		/* float [T, hidden] each, used alternately */
	uint64_t size;
};

int rbln_layout_shape(const struct rbln_compiled_config *cc, uint32_t rank, struct rbln_layout_shape *s,
		 struct rbln_error *err);
int rbln_layout_weights(const struct rbln_layout_shape *s, struct rbln_layout_weights *w);
void rbln_layout_weights_free(struct rbln_layout_weights *w);
void rbln_layout_kv(const struct rbln_compiled_config *cc, const struct rbln_layout_shape *s,
	       struct rbln_layout_kv *kv);
void rbln_layout_io(const struct rbln_compiled_config *cc, const struct rbln_layout_shape *s,
	       uint32_t tokens, uint32_t seqs, struct rbln_layout_io *io);
void rbln_layout_scratch(const struct rbln_compiled_config *cc, const struct rbln_layout_shape *s,
		    uint32_t tokens, uint32_t seqs, struct rbln_layout_scratch *sc);
void rbln_layout_comm(const struct rbln_layout_shape *s, uint32_t tokens, struct rbln_layout_comm *c);

/* KV partitions ATTENTION splits a block-table row into. */
uint32_t rbln_layout_partitions(const struct rbln_compiled_config *cc);
/*
 * Bytes of a MATMUL's weights [n, k] on this rank, in the compile's
 * layout (packed or spaced panels): of wdtype, or under w8a16 int8
 * followed by the scales of whole panels (rbln_isa.h).
 */
uint64_t rbln_layout_matrix_size(const struct rbln_layout_shape *s, uint32_t n, uint32_t k);

#define LAYOUT_MAX_SLOTS (SLOT_COMM + RBLN_MAX_TENSOR_PARALLEL)

/* The buffers of a rank, one per slot, shared by all its programs. */
struct rbln_layout_buffers {
	uint32_t n_slots;
	uint64_t size[LAYOUT_MAX_SLOTS];
	uint32_t access[LAYOUT_MAX_SLOTS];	/* DRM_RBLN_BO_* as programs use them */
};

int rbln_layout_buffers(const struct rbln_compiled_config *cc, const struct rbln_layout_shape *s,
		   struct rbln_layout_buffers *b);

/* The program shapes every rank has: the prefill, then each decoder bucket. */
struct layout_program {
	char name[32];			/* "prefill", "decoder_batch_4" */
	uint32_t tokens;		/* T */
	uint32_t seqs;			/* B */
};

uint32_t rbln_layout_programs(const struct rbln_compiled_config *cc,
			 struct layout_program progs[RBLN_MAX_DECODER_BATCHES + 1]);
/* The largest shape every shared buffer is sized for. */
void rbln_layout_max_shape(const struct rbln_compiled_config *cc, uint32_t *tokens, uint32_t *seqs);

#endif
