// SPDX-License-Identifier: MIT
/*
 * rbln_compiled_config_load(): a compiled directory as the runtime trusts
 * it.  The recorded values (rbln_compiled_config_read(), every key) go
 * through the compile rules again (rbln_compile_resolve()) with the copied
 * config.json, and the result must equal what is recorded: a hand-edited
 * or damaged file is refused with the rule it breaks, and the runtime can
 * trust every field.
 */
#include <errno.h>
#include <stdlib.h>

#include "rbln_compile.h"
#include "util/file.h"

/* The recorded values as the options that would compile them. */
static void as_options(const struct rbln_compiled_config *rec, struct rbln_compile_options *opt)
{
	size_t i;

	*opt = (struct rbln_compile_options){
		.tensor_parallel_size = rec->tensor_parallel_size,
		.batch_size = rec->batch_size,
		.max_seq_len = rec->max_seq_len,
		.kvcache_partition_len = rec->kvcache_partition_len,
		.kvcache_block_size = rec->kvcache_block_size,
		.kvcache_num_blocks = rec->kvcache_num_blocks,
		.n_decoder_batch_sizes = rec->n_decoder_batch_sizes,
		.prefill_chunk_size = rec->prefill_chunk_size,
		.dtype = rec->dtype,
		.kv_cache_dtype = rec->kv_cache_dtype,
		.quantize = rec->quantize,
		.matmul_precision = rec->matmul_precision,
		.weight_layout = rec->weight_layout,
		.dummy_weights = rec->dummy_weights,
	};
	for (i = 0; i < rec->n_decoder_batch_sizes; i++)
		opt->decoder_batch_sizes[i] = rec->decoder_batch_sizes[i];
}

int rbln_compiled_config_load(const char *dir, struct rbln_compiled_config *cc,
			      struct rbln_error *err)
{
	struct rbln_compile_options opt;
	struct rbln_compiled_config rec;
	struct rbln_llama_config model;
	char *path;
	size_t i;
	int rc;

	rc = rbln_compiled_config_read(dir, RBLN_COMPILED_ALL_KEYS, &rec, err);
	if (rc)
		return rc;
	rc = rbln_llama_config_load(dir, &model, err);
	if (rc)
		return rc;
	path = rbln_path_join(dir, "rbln_config.json");
	if (!path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	as_options(&rec, &opt);
	rc = rbln_compile_resolve(&model, &opt, cc, err);
	if (rc) {
		rbln_error_prefix(err, "%s: ", path);
		goto out;
	}
	/* The list must be recorded as resolved: sorted, with batch_size in it. */
	for (i = 0; i < rec.n_decoder_batch_sizes; i++)
		if (cc->n_decoder_batch_sizes != rec.n_decoder_batch_sizes ||
		    cc->decoder_batch_sizes[i] != rec.decoder_batch_sizes[i]) {
			rc = rbln_error_set(err, -EINVAL, "%s: field 'decoder_batch_sizes' is "
					    "not in the compiled form (descending, including "
					    "batch_size %u)", path, cc->batch_size);
			goto out;
		}
	cc->compile_id = rec.compile_id;
out:
	free(path);
	return rc;
}
