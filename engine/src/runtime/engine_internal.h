/* SPDX-License-Identifier: MIT */
/* The runtime's objects: ranks on devices, the KV block pool, sequences. */
#ifndef RBLN_ENGINE_INTERNAL_H
#define RBLN_ENGINE_INTERNAL_H

#include <stdint.h>

#include "libnpu.h"
#include "program/layout.h"
#include "rbln_engine.h"

#define ENGINE_MAX_PROGRAMS (RBLN_MAX_DECODER_BATCHES + 1)

/* One tensor-parallel rank: a device with its buffers and programs. */
struct rank {
	npu_device *dev;
	npu_queue *queue;
	struct layout_shape shape;
	struct layout_buffers bufs;
	/* Slot i's buffer on this device (peers' comm buffers imported). */
	npu_buffer *buf[LAYOUT_MAX_SLOTS];
	struct npu_buffer_use uses[LAYOUT_MAX_SLOTS];
	unsigned char *io;		/* mapping of SLOT_IO */
	unsigned char *comm;		/* mapping of this rank's own comm buffer */
	npu_buffer *cmd;		/* every program's stream, back to back */
	uint64_t prog_offset[ENGINE_MAX_PROGRAMS];
	uint64_t prog_size[ENGINE_MAX_PROGRAMS];
	npu_fence *fence;		/* the step in flight */
};

/* Fixed-size KV blocks handed to sequences (a stack of free block ids). */
struct kv_pool {
	int32_t *free_ids;
	uint32_t n_free;
	uint32_t total;
};

int kv_pool_init(struct kv_pool *p, uint32_t blocks);
void kv_pool_free(struct kv_pool *p);
int32_t kv_pool_take(struct kv_pool *p);	/* -1 when empty */
void kv_pool_give(struct kv_pool *p, int32_t id);

struct rbln_seq {
	struct rbln_engine *e;
	struct rbln_seq *prev, *next;	/* the engine's list, in add order */
	int32_t *tokens;		/* prompt, then output (stop token excluded) */
	size_t n_tokens, cap;
	size_t n_prompt;
	size_t n_computed;		/* tokens whose keys and values are cached */
	int32_t *blocks;		/* block table: blocks[i] holds tokens i*bs.. */
	uint32_t n_blocks;
	struct rbln_sample_params params;
	struct rbln_sampler *sampler;
	enum rbln_seq_end end;
	int32_t stop_token;
	float *prompt_logits;		/* RBLN_SEQ_KEEP_PROMPT_LOGITS */
	bool keep_prompt_logits;
	bool has_prompt_logits;		/* prompt_logits holds them */
	uint32_t preemptions;
	rbln_seq_logits_fn logits_fn;	/* rbln_seq_set_logits_fn() */
	void *logits_user;
};

struct rbln_engine {
	struct rbln_compiled_config cc;
	char *dir;
	char *tmp_dir;			/* compiled on the fly, removed at close */
	npu_context *ctx;
	const char *backend;
	struct rank *ranks;
	uint32_t tp;
	struct layout_program progs[ENGINE_MAX_PROGRAMS];	/* [0] prefill */
	struct layout_io io[ENGINE_MAX_PROGRAMS];
	uint32_t n_progs;
	struct kv_pool kv;
	struct rbln_seq *head, *tail;
	int64_t eos_ids[RBLN_MAX_EOS_IDS];
	size_t n_eos_ids;
	uint32_t vocab;			/* full vocabulary */
	float *logits;			/* [vocab] gathered from the ranks */
	uint64_t steps;
	uint64_t decode_steps[RBLN_MAX_DECODER_BATCHES];
};

/* runtime/devices.c: context, devices, buffers and their sharing. */
int ranks_open(struct rbln_engine *e, const char *devices, struct rbln_error *err);
void ranks_close(struct rbln_engine *e);

/* runtime/upload.c: weights and programs, once. */
int ranks_upload_weights(struct rbln_engine *e, struct rbln_error *err);
int ranks_load_programs(struct rbln_engine *e, struct rbln_error *err);

/* runtime/seq.c */
void seq_drop_blocks(struct rbln_seq *s);
int seq_push_token(struct rbln_seq *s, int32_t id);
/* Blocks needed to cache the first n tokens. */
uint32_t seq_blocks_for(const struct rbln_engine *e, size_t n);

#endif
