// SPDX-License-Identifier: MIT
/*
 * Resolving model.json's "model" and checking it against the compiled model
 * (see model_source.h).  The rules are the RBLN tutorial's: max_num_seqs
 * is the compiled batch size, block_size is the compiled KV block (the
 * partition length with flash attention), max_model_len fits the compiled
 * max_seq_len, and max_num_batched_tokens defaults to max_model_len.
 */
#include "model_source.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rbln_config.h"
#include "util/file.h"

static bool is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

static bool has_file(const char *dir, const char *name)
{
	char *p = rbln_path_join(dir, name);
	bool ok = p && rbln_file_exists(p);

	free(p);
	return ok;
}

static char *resolve(const char *version_dir, const char *p)
{
	if (p[0] == '/')
		return strdup(p);
	return rbln_path_join(version_dir, p);
}

static int missing_model(const struct serve_model_json *mj, const char *version_dir,
			 const char *path, struct rbln_error *err)
{
	char *copy = strdup(mj->model), *in_version = NULL;
	int rc;

	if (!copy)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	if (mj->model[0] == '/')
		in_version = rbln_path_join(version_dir, basename(copy));
	if (in_version && is_dir(in_version))
		rc = rbln_error_set(err, -ENOENT, "%s: field 'model': %s does not exist (there is "
				    "%s: write \"model\": \"%s\" to use it)", mj->file, path,
				    in_version, basename(copy));
	else if (mj->model[0] != '/')
		rc = rbln_error_set(err, -ENOENT, "%s: field 'model': %s does not exist ('%s' is "
				    "taken relative to the version directory; rbln-serve does not "
				    "download from the Hugging Face Hub)", mj->file, path,
				    mj->model);
	else
		rc = rbln_error_set(err, -ENOENT, "%s: field 'model': %s does not exist",
				    mj->file, path);
	free(in_version);
	free(copy);
	return rc;
}

static int check_compiled(const struct serve_model_json *mj, struct serve_model_plan *plan,
			  struct rbln_error *err)
{
	const struct rbln_compiled_config *cc = &plan->compiled;
	const char *dir = plan->compiled_dir;
	int64_t block = cc->kvcache_block_size ? cc->kvcache_block_size : cc->kvcache_partition_len;

	if (mj->max_num_seqs && cc->batch_size && mj->max_num_seqs != cc->batch_size)
		return rbln_error_set(err, -EINVAL, "%s: field 'max_num_seqs' (%lld) must equal "
				      "the compiled batch_size (%lld) of %s/rbln_config.json",
				      mj->file, (long long)mj->max_num_seqs,
				      (long long)cc->batch_size, dir);
	if (mj->max_model_len && cc->max_seq_len && mj->max_model_len > cc->max_seq_len)
		return rbln_error_set(err, -EINVAL, "%s: field 'max_model_len' (%lld) exceeds the "
				      "compiled max_seq_len (%lld) of %s/rbln_config.json",
				      mj->file, (long long)mj->max_model_len,
				      (long long)cc->max_seq_len, dir);
	if (mj->block_size && block && mj->block_size != block)
		return rbln_error_set(err, -EINVAL, "%s: field 'block_size' (%lld) must equal the "
				      "compiled KV block size (%lld, kvcache_%s in "
				      "%s/rbln_config.json)", mj->file, (long long)mj->block_size,
				      (long long)block, cc->kvcache_block_size ? "block_size"
				      : "partition_len", dir);
	if (mj->tensor_parallel_size && cc->tensor_parallel_size &&
	    mj->tensor_parallel_size != cc->tensor_parallel_size)
		return rbln_error_set(err, -EINVAL, "%s: field 'tensor_parallel_size' (%lld) must "
				      "equal the compiled tensor_parallel_size (%lld) of "
				      "%s/rbln_config.json", mj->file,
				      (long long)mj->tensor_parallel_size,
				      (long long)cc->tensor_parallel_size, dir);
	plan->max_num_seqs = (uint32_t)(mj->max_num_seqs ? mj->max_num_seqs
							 : cc->batch_size ? cc->batch_size : 1);
	plan->max_model_len = (uint32_t)(mj->max_model_len ? mj->max_model_len : cc->max_seq_len);
	if (!plan->max_model_len)
		return rbln_error_set(err, -EINVAL, "%s: no max_model_len, and %s/rbln_config.json "
				      "has no max_seq_len", mj->file, dir);
	plan->block_size = (uint32_t)(mj->block_size ? mj->block_size : block);
	plan->tensor_parallel_size = (uint32_t)(mj->tensor_parallel_size
						? mj->tensor_parallel_size
						: cc->tensor_parallel_size);
	plan->max_num_batched_tokens = (uint32_t)(mj->max_num_batched_tokens
						  ? mj->max_num_batched_tokens
						  : plan->max_model_len);
	if (plan->max_num_batched_tokens < plan->max_num_seqs)
		return rbln_error_set(err, -EINVAL, "%s: max_num_batched_tokens (%u) must be at "
				      "least max_num_seqs (%u)", mj->file,
				      plan->max_num_batched_tokens, plan->max_num_seqs);
	return 0;
}

/* Where an HF checkpoint is compiled to: named by the compile arguments. */
static char *compile_dir(const char *version_dir, const char *source,
			 const struct serve_model_plan *plan)
{
	char *copy = strdup(source), *name, *base = NULL, *dir;
	size_t n;

	if (!copy)
		return NULL;
	name = basename(copy);
	n = strlen(name) + 96;
	dir = malloc(n);
	if (dir) {
		/* The checkpoint's fingerprint is part of the key: a changed
		 * or different checkpoint of the same name gets its own build. */
		snprintf(dir, n, ".rbln-compiled/%s-bs%u-len%u-tp%u-blk%u-%.16s", name,
			 plan->max_num_seqs, plan->max_model_len, plan->tensor_parallel_size,
			 plan->block_size, plan->fingerprint);
		base = rbln_path_join(version_dir, dir);
	}
	free(dir);
	free(copy);
	return base;
}

int serve_model_plan(const struct serve_model_json *mj, const char *version_dir,
		     struct serve_model_plan *plan, struct rbln_error *err)
{
	int rc = 0;

	memset(plan, 0, sizeof(*plan));
	plan->has_seed = mj->has_seed;
	plan->seed = (uint64_t)mj->seed;
	plan->max_logprobs = mj->max_logprobs ? (int32_t)mj->max_logprobs
					      : RBLN_SAMPLING_MAX_LOGPROBS;
	plan->source_dir = resolve(version_dir, mj->model);
	if (!plan->source_dir)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	if (!is_dir(plan->source_dir)) {
		rc = missing_model(mj, version_dir, plan->source_dir, err);
		goto fail;
	}
	if (mj->tokenizer) {
		plan->tokenizer_dir = resolve(version_dir, mj->tokenizer);
		if (!plan->tokenizer_dir) {
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
			goto fail;
		}
		if (!has_file(plan->tokenizer_dir, "tokenizer.json")) {
			rc = rbln_error_set(err, -ENOENT, "%s: field 'tokenizer': no tokenizer.json "
					    "in %s", mj->file, plan->tokenizer_dir);
			goto fail;
		}
	}
	if (has_file(plan->source_dir, "rbln_config.json")) {
		plan->kind = SERVE_SRC_COMPILED;
		plan->compiled_dir = strdup(plan->source_dir);
		if (!plan->compiled_dir) {
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
			goto fail;
		}
		rc = serve_model_plan_compiled(mj, plan, err);
		if (rc)
			goto fail;
	} else if (has_file(plan->source_dir, "config.json") &&
		   (has_file(plan->source_dir, "model.safetensors") ||
		    has_file(plan->source_dir, "model.safetensors.index.json"))) {
		struct rbln_llama_config lc;

		plan->kind = SERVE_SRC_HF;
		rc = rbln_llama_config_load(plan->source_dir, &lc, err);
		if (rc)
			goto fail;
		plan->max_position_embeddings = lc.max_position_embeddings;
		if (mj->max_model_len && mj->max_model_len > lc.max_position_embeddings) {
			rc = rbln_error_set(err, -EINVAL, "%s: field 'max_model_len' (%lld) exceeds "
					    "the model's max_position_embeddings (%lld) in "
					    "%s/config.json", mj->file, (long long)mj->max_model_len,
					    (long long)lc.max_position_embeddings, plan->source_dir);
			goto fail;
		}
		plan->max_num_seqs = (uint32_t)(mj->max_num_seqs ? mj->max_num_seqs : 1);
		plan->max_model_len = (uint32_t)(mj->max_model_len ? mj->max_model_len
								   : lc.max_position_embeddings);
		plan->block_size = (uint32_t)mj->block_size;
		plan->tensor_parallel_size = (uint32_t)(mj->tensor_parallel_size
							? mj->tensor_parallel_size : 1);
		plan->max_num_batched_tokens = (uint32_t)(mj->max_num_batched_tokens
							  ? mj->max_num_batched_tokens
							  : plan->max_model_len);
		rc = rbln_checkpoint_fingerprint(plan->source_dir, plan->fingerprint, err);
		if (rc)
			goto fail;
		plan->compiled_dir = compile_dir(version_dir, plan->source_dir, plan);
		if (!plan->compiled_dir) {
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
			goto fail;
		}
	} else if ((rc = rbln_compiled_dir_explain(plan->source_dir, err))) {
		rbln_error_prefix(err, "%s: field 'model': ", mj->file);
		goto fail;
	} else {
		rc = rbln_error_set(err, -EINVAL, "%s: field 'model': %s is neither a compiled "
				    "model (rbln_config.json) nor a Hugging Face checkpoint "
				    "(config.json with model.safetensors)", mj->file,
				    plan->source_dir);
		goto fail;
	}
	if (!plan->tokenizer_dir) {
		plan->tokenizer_dir = strdup(plan->source_dir);
		if (!plan->tokenizer_dir) {
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
			goto fail;
		}
		if (!has_file(plan->tokenizer_dir, "tokenizer.json")) {
			rc = rbln_error_set(err, -ENOENT, "%s: no tokenizer.json in %s: set "
					    "'tokenizer' to the Hugging Face directory", mj->file,
					    plan->tokenizer_dir);
			goto fail;
		}
	}
	return 0;
fail:
	serve_model_plan_free(plan);
	return rc;
}

int serve_model_plan_compiled(const struct serve_model_json *mj, struct serve_model_plan *plan,
			      struct rbln_error *err)
{
	int rc = rbln_compiled_config_read(plan->compiled_dir, RBLN_COMPILED_KEYS_PRESENT,
					   &plan->compiled, err);

	if (rc)
		return rc;
	return check_compiled(mj, plan, err);
}

void serve_model_plan_free(struct serve_model_plan *plan)
{
	free(plan->source_dir);
	free(plan->compiled_dir);
	free(plan->tokenizer_dir);
	memset(plan, 0, sizeof(*plan));
}

void serve_model_plan_spec(const struct serve_model_plan *plan, const char *name,
			   uint32_t max_waiting, struct rbln_serving_model_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->name = name;
	spec->model_dir = plan->compiled_dir;
	spec->max_num_seqs = plan->max_num_seqs;
	spec->max_num_batched_tokens = plan->max_num_batched_tokens;
	spec->max_model_len = plan->max_model_len;
	spec->block_size = plan->block_size;
	spec->tensor_parallel_size = plan->tensor_parallel_size;
	spec->max_waiting = max_waiting;
	spec->has_seed = plan->has_seed;
	spec->seed = plan->seed;
}
