// SPDX-License-Identifier: MIT
/*
 * The table rbln-serve binds to (rbln_serving.h): compiling a checkpoint,
 * opening a compiled model with its scheduler thread, model facts,
 * statistics and closing.  Requests are in request.c, the scheduler in
 * scheduler.c and planner.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serving_bridge/binding.h"

#define DEFAULT_MAX_WAITING 1024

static int rbln_bridge_compile(const struct rbln_compile_spec *spec, struct rbln_error *err)
{
	struct rbln_compile_options opt;
	uint32_t b;

	memset(&opt, 0, sizeof(opt));
	opt.batch_size = spec->batch_size;
	opt.max_seq_len = spec->max_seq_len;
	opt.tensor_parallel_size = spec->tensor_parallel_size;
	/*
	 * model.json's block_size is the KV partition of flash attention (the
	 * RBLN tutorial); a block of the whole max_model_len is eager attention,
	 * as in the dynamic-batch tutorial (block_size = max_seq_len).
	 */
	if (spec->kvcache_partition_len && spec->kvcache_partition_len != spec->max_seq_len)
		opt.kvcache_partition_len = spec->kvcache_partition_len;
	/*
	 * Decoder buckets max_num_seqs, /2, /4 ... 1: served traffic comes in
	 * every batch size, and the runtime decodes in the smallest bucket that
	 * holds the running sequences (a lone request in bucket 1, not 8).
	 * rbln-compile --decoder-batch-sizes chooses others.
	 */
	for (b = spec->batch_size; b >= 1 && opt.n_decoder_batch_sizes < RBLN_MAX_DECODER_BATCHES;
	     b /= 2)
		opt.decoder_batch_sizes[opt.n_decoder_batch_sizes++] = b;
	return rbln_compile(spec->hf_dir, spec->out_dir, &opt, err);
}

/*
 * The runtime planner's policy for serving: max_num_seqs running at once,
 * steps of min(prefill_chunk_size, max_num_batched_tokens) tokens, small
 * prefills held back while others decode, strict FCFS admission.
 */
static int set_policy(struct rbln_serving_model *e, const struct rbln_serving_model_spec *spec,
		      struct rbln_error *err)
{
	struct rbln_plan_policy policy = {
		.max_seqs = e->batch,
		.step_tokens = e->cc->prefill_chunk_size,
		.defer_prefill = true,
		.admission = RBLN_ADMIT_FCFS,
		.preempted = rbln_bridge_preempted,
		.user = e,
	};

	if (spec->max_num_batched_tokens && spec->max_num_batched_tokens < policy.step_tokens)
		policy.step_tokens = spec->max_num_batched_tokens;
	return rbln_runtime_set_policy(e->engine, &policy, err);
}

/* model.json against what was compiled (rbln-serve checked it too; this is the engine's word). */
static int check_spec(const struct rbln_serving_model_spec *spec,
		      const struct rbln_compiled_config *cc, struct rbln_error *err)
{
	if (spec->max_num_seqs > cc->batch_size)
		return rbln_error_set(err, -EINVAL, "max_num_seqs %u is above the compiled "
				      "batch_size %u", spec->max_num_seqs, cc->batch_size);
	if (spec->max_model_len > cc->max_seq_len)
		return rbln_error_set(err, -EINVAL, "max_model_len %u is above the compiled "
				      "max_seq_len %u", spec->max_model_len, cc->max_seq_len);
	if (spec->block_size && spec->block_size != cc->kvcache_block_size)
		return rbln_error_set(err, -EINVAL, "block_size %u is not the compiled KV block "
				      "size %u", spec->block_size, cc->kvcache_block_size);
	if (spec->tensor_parallel_size && spec->tensor_parallel_size != cc->tensor_parallel_size)
		return rbln_error_set(err, -EINVAL, "tensor_parallel_size %u is not the compiled "
				      "%u", spec->tensor_parallel_size, cc->tensor_parallel_size);
	if (spec->max_num_batched_tokens && spec->max_num_batched_tokens < spec->max_num_seqs)
		return rbln_error_set(err, -EINVAL, "max_num_batched_tokens %u is below "
				      "max_num_seqs %u", spec->max_num_batched_tokens,
				      spec->max_num_seqs);
	return 0;
}

static void free_engine(struct rbln_serving_model *e)
{
	rbln_runtime_close(e->engine);
	free(e->items);
	free(e->item_h);
	free(e->name);
	free(e);
}

static int init_sync(struct rbln_serving_model *e)
{
	pthread_condattr_t ca;
	int rc;

	/* The idle wait is timed on CLOCK_MONOTONIC, like every time here. */
	rc = pthread_condattr_init(&ca);
	if (rc)
		return -rc;
	rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!rc)
		rc = pthread_cond_init(&e->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (rc)
		return -rc;
	rc = pthread_mutex_init(&e->mu, NULL);
	if (rc) {
		pthread_cond_destroy(&e->wake);
		return -rc;
	}
	return 0;
}

static int rbln_bridge_open(const struct rbln_serving_model_spec *spec, struct rbln_serving_model **out,
		   struct rbln_error *err)
{
	struct rbln_runtime_options eo = { .devices = spec->devices };
	struct rbln_serving_model *e = calloc(1, sizeof(*e));
	struct rbln_runtime_info info;
	const struct rbln_compiled_config *cc;
	const char *log;
	int rc;

	if (!e)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	e->name = strdup(spec->name ? spec->name : "model");
	if (!e->name) {
		free(e);
		return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	rc = rbln_runtime_open(spec->model_dir, &eo, &e->engine, err);
	if (rc) {
		free_engine(e);
		return rc;
	}
	rbln_runtime_get_info(e->engine, &info);
	cc = e->cc = info.config;
	rc = check_spec(spec, cc, err);
	if (rc) {
		free_engine(e);
		return rc;
	}
	e->batch = spec->max_num_seqs ? spec->max_num_seqs : cc->batch_size;
	e->max_model_len = spec->max_model_len ? spec->max_model_len : cc->max_seq_len;
	e->max_waiting = spec->max_waiting ? spec->max_waiting : DEFAULT_MAX_WAITING;
	e->block_size = cc->kvcache_block_size;
	e->kv_blocks_total = info.kv_blocks_total;
	e->vocab = (uint32_t)cc->model.vocab_size;
	e->has_seed = spec->has_seed;
	e->seed = spec->seed;
	log = getenv("RBLN_SERVE_LOG_STEPS");
	e->log_steps = log && *log && strcmp(log, "0");
	rbln_bridge_devices_map(e, spec->devices, info.n_devices);
	rc = set_policy(e, spec, err);
	if (rc) {
		free_engine(e);
		return rc;
	}
	e->items = calloc(e->batch, sizeof(*e->items));
	e->item_h = calloc(e->batch, sizeof(*e->item_h));
	if (!e->items || !e->item_h) {
		free_engine(e);
		return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	rc = init_sync(e);
	if (rc) {
		free_engine(e);
		return rbln_error_set(err, rc, "cannot create the scheduler's lock: %s",
				      strerror(-rc));
	}
	e->free_slots_seen = e->batch;
	e->util_win_start_ns = rbln_bridge_now_ns();
	rc = pthread_create(&e->thread, NULL, rbln_bridge_scheduler_main, e);
	if (rc) {
		pthread_mutex_destroy(&e->mu);
		pthread_cond_destroy(&e->wake);
		free_engine(e);
		return rbln_error_set(err, -rc, "cannot start the scheduler thread: %s",
				      strerror(rc));
	}
	*out = e;
	return 0;
}

static void rbln_bridge_info(const struct rbln_serving_model *e, struct rbln_serving_model_info *info)
{
	const struct rbln_compiled_config *cc = e->cc;
	uint32_t i;

	memset(info, 0, sizeof(*info));
	info->max_model_len = e->max_model_len;
	info->vocab_size = e->vocab;
	info->max_num_seqs = e->batch;
	info->block_size = e->block_size;
	info->kv_blocks_total = e->kv_blocks_total;
	info->n_decoder_batch_sizes = (uint32_t)cc->n_decoder_batch_sizes;
	if (info->n_decoder_batch_sizes > RBLN_SERVING_MAX_BUCKETS)
		info->n_decoder_batch_sizes = RBLN_SERVING_MAX_BUCKETS;
	for (i = 0; i < info->n_decoder_batch_sizes; i++)
		info->decoder_batch_sizes[i] = cc->decoder_batch_sizes[i];
	info->n_devices = e->n_devices;
	for (i = 0; i < e->n_devices; i++)
		info->devices[i] = e->devices[i];
}

static void rbln_bridge_close(struct rbln_serving_model *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	e->stopping = true;
	pthread_cond_signal(&e->wake);
	pthread_mutex_unlock(&e->mu);
	/* The thread delivers every remaining final event before it returns. */
	pthread_join(e->thread, NULL);
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->wake);
	free_engine(e);
}

const struct rbln_serving_ops rbln_serving_bridge_ops = {
	.compile = rbln_bridge_compile,
	.open = rbln_bridge_open,
	.info = rbln_bridge_info,
	.submit = rbln_bridge_submit,
	.cancel = rbln_bridge_cancel,
	.release = rbln_bridge_release,
	.stats = rbln_bridge_stats,
	.close = rbln_bridge_close,
};
