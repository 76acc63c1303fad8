/* SPDX-License-Identifier: MIT */
/* The runtime's objects: ranks on devices, the KV block pool, the planner, sequences. */
#ifndef RBLN_RUNTIME_INTERNAL_H
#define RBLN_RUNTIME_INTERNAL_H

#include <stdint.h>

#include "libnpu.h"
#include "program/layout.h"
#include "rbln_runtime.h"

#define ENGINE_MAX_PROGRAMS (RBLN_MAX_DECODER_BATCHES + 1)

/* One tensor-parallel rank: a device with its buffers and programs. */
struct rank {
	npu_device *dev;
	npu_queue *queue;
	struct rbln_layout_shape shape;
	struct rbln_layout_buffers bufs;
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
	uint32_t block_size;		/* tokens per block */
};

/* runtime/kv_pool.c: the pool, and the blocks of a sequence. */
int rbln_kv_pool_init(struct kv_pool *p, uint32_t blocks, uint32_t block_size);
void rbln_kv_pool_free(struct kv_pool *p);
/* Blocks that hold `tokens` tokens. */
uint32_t rbln_kv_pool_blocks_for(const struct kv_pool *p, size_t tokens);
/* Blocks s must take to cache n more tokens (0 when its last block has room). */
uint32_t rbln_kv_blocks_to_grow(const struct rbln_seq *s, size_t n);
/* Whether s can cache n more tokens now. */
bool rbln_kv_can_grow(const struct rbln_seq *s, size_t n);
/* Takes the blocks for n more tokens of s, all or none; false when too few are free. */
bool rbln_kv_grow(struct rbln_seq *s, size_t n);
/* How many more tokens s can cache with its blocks and every free one. */
size_t rbln_kv_room(const struct rbln_seq *s);
/* Gives s's blocks back; its cached tokens are forgotten. */
void rbln_kv_release(struct rbln_seq *s);

/* The planner's policy and what it measures (runtime/planner.c). */
struct planner {
	struct rbln_plan_policy policy;	/* resolved: no zero defaults left */
	int64_t prefill_ns_avg;		/* moving average of a prefill step's wall time */
	int64_t defer_since_ns;		/* prefill work held back since then; 0 = none */
};

/* Sets the policy of a freshly opened engine (the defaults). */
void rbln_planner_init(struct rbln_runtime *e);
/* After a step ran: what the prefill deferral learns from it. */
void rbln_planner_step_done(struct rbln_runtime *e, bool prefill, uint64_t ns);

struct rbln_seq {
	struct rbln_runtime *e;
	struct rbln_seq *prev, *next;	/* the engine's list, in add order */
	int32_t *tokens;		/* prompt, then output (stop token excluded) */
	size_t n_tokens, cap;
	size_t n_prompt;
	size_t n_computed;		/* tokens whose keys and values are cached */
	int32_t *blocks;		/* block table: blocks[i] holds tokens i*bs.. */
	uint32_t n_blocks;
	struct rbln_sampling_params params;	/* stop_token_ids -> stop_ids */
	int32_t stop_ids[RBLN_SAMPLING_MAX_STOP_IDS];
	struct rbln_sampler *sampler;
	enum rbln_seq_end end;
	int32_t stop_token;
	float *prompt_logits;		/* RBLN_SEQ_KEEP_PROMPT_LOGITS */
	bool keep_prompt_logits;
	bool has_prompt_logits;		/* prompt_logits holds them */
	uint32_t preemptions;
	rbln_seq_logits_fn logits_fn;	/* rbln_seq_set_logits_fn() */
	void *logits_user;
	void *user;			/* rbln_seq_set_user() */
};

struct rbln_runtime {
	struct rbln_compiled_config cc;
	char *dir;
	char *tmp_dir;			/* compiled on the fly, removed at close */
	npu_context *ctx;
	const char *backend;
	struct rank *ranks;
	uint32_t tp;
	struct layout_program progs[ENGINE_MAX_PROGRAMS];	/* [0] prefill */
	struct rbln_layout_io io[ENGINE_MAX_PROGRAMS];
	uint32_t n_progs;
	struct kv_pool kv;
	struct planner planner;
	struct rbln_seq *head, *tail;
	int64_t eos_ids[RBLN_MAX_EOS_IDS];
	size_t n_eos_ids;
	uint32_t vocab;			/* full vocabulary */
	float *logits;			/* [vocab] gathered from the ranks */
	uint64_t steps;
	uint64_t decode_steps[RBLN_MAX_DECODER_BATCHES];
};

/* runtime/devices.c: context, devices, buffers and their sharing. */
int rbln_ranks_open(struct rbln_runtime *e, const char *devices, struct rbln_error *err);
void rbln_ranks_close(struct rbln_runtime *e);
/*
 * Whether a device of ISA major.minor runs cc's programs (1.2, or 1.3 for
 * --matmul-precision bf16); -ENOTSUP naming rank, device and what the
 * programs need otherwise.
 */
int rbln_runtime_check_isa(const struct rbln_compiled_config *cc, uint32_t rank,
			   const char *device, unsigned int major, unsigned int minor,
			   struct rbln_error *err);

/* runtime/upload.c: weights and programs, once. */
int rbln_ranks_upload_weights(struct rbln_runtime *e, struct rbln_error *err);
int rbln_ranks_load_programs(struct rbln_runtime *e, struct rbln_error *err);

/* runtime/seq.c */
int rbln_seq_push_token(struct rbln_seq *s, int32_t id);

#endif
