// SPDX-License-Identifier: MIT
#include "cli/compile_cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/compiled_config.h"

const char rbln_compile_cli_usage[] =
	"  --tensor-parallel-size N   devices the model is split across (default 1)\n"
	"  --batch-size N             most sequences decoded at once (default 1)\n"
	"  --max-seq-len N            longest sequence, prompt included\n"
	"                             (default max_position_embeddings)\n"
	"  --kvcache-partition-len N  KV partition for flash attention (default none:\n"
	"                             eager attention over max_seq_len)\n"
	"  --kvcache-block-size N     KV block (equals the partition, or max_seq_len)\n"
	"  --kvcache-num-blocks N     KV blocks (default batch_size full sequences)\n"
	"  --decoder-batch-sizes L    decoder buckets, e.g. 8,4,1 (default batch_size)\n"
	"  --prefill-chunk-size N     prefill tokens per step, a multiple of 64\n"
	"                             (default 128)\n"
	"  --dtype T                  weights: bfloat16, float16, float32\n"
	"                             (default the checkpoint's)\n"
	"  --kv-cache-dtype T         KV cache element type (default float32)\n"
	"  --quantize Q               none, or w8a16: int8 weights with per-channel\n"
	"                             scales for every matrix product (default none)\n"
	"  --matmul-precision P       float32, or bf16: matrix products may round\n"
	"                             their activations to bfloat16 (faster on bf16\n"
	"                             units; needs ISA 1.3 devices) (default float32)\n"
	"  --weight-layout L          spaced: a gap after each 16-column panel of\n"
	"                             weights (needs ISA 1.4 devices); packed16:\n"
	"                             none; auto (default): the one this host's\n"
	"                             CPU streams faster, spaced on Intel CPUs,\n"
	"                             packed16 on others\n"
	"  --dummy-weights            random weights from config.json alone\n"
	"  --dummy-seed N             their seed (default 0)\n";

int rbln_cli_parse_u64(const char *flag, const char *arg, unsigned long long min,
		       unsigned long long max, unsigned long long *out, struct rbln_error *err)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (!arg || arg[0] < '0' || arg[0] > '9')
		return rbln_error_set(err, -EINVAL, "--%s: '%s' is not a number", flag,
				      arg ? arg : "");
	v = strtoull(arg, &end, 10);
	if (errno || *end || v < min || v > max)
		return rbln_error_set(err, -EINVAL, "--%s: '%s' must be a number from %llu to %llu",
				      flag, arg, min, max);
	*out = v;
	return 0;
}

static int u32_flag(const char *flag, const char *arg, uint32_t *out, struct rbln_error *err)
{
	unsigned long long v;
	int rc = rbln_cli_parse_u64(flag, arg, 1, INT32_MAX, &v, err);

	if (!rc)
		*out = (uint32_t)v;
	return rc;
}

static int dtype_flag(const char *flag, const char *arg, enum rbln_dtype *dt,
		      struct rbln_error *err)
{
	if (rbln_compiled_dtype_parse(arg, dt))
		return rbln_error_set(err, -EINVAL, "--%s: '%s' is not bfloat16, float16 or "
				      "float32", flag, arg);
	return 0;
}

int rbln_compile_cli_apply(int id, const char *arg, struct rbln_compile_options *opt,
			   struct rbln_error *err)
{
	unsigned long long v;
	int rc;

	switch (id) {
	case CLI_TP:
		return u32_flag("tensor-parallel-size", arg, &opt->tensor_parallel_size, err);
	case CLI_BATCH:
		return u32_flag("batch-size", arg, &opt->batch_size, err);
	case CLI_MAX_SEQ_LEN:
		return u32_flag("max-seq-len", arg, &opt->max_seq_len, err);
	case CLI_PARTITION:
		return u32_flag("kvcache-partition-len", arg, &opt->kvcache_partition_len, err);
	case CLI_BLOCK:
		return u32_flag("kvcache-block-size", arg, &opt->kvcache_block_size, err);
	case CLI_NUM_BLOCKS:
		return u32_flag("kvcache-num-blocks", arg, &opt->kvcache_num_blocks, err);
	case CLI_DECODER_BATCHES:
		return rbln_compile_parse_batch_sizes(arg, opt, err);
	case CLI_CHUNK:
		return u32_flag("prefill-chunk-size", arg, &opt->prefill_chunk_size, err);
	case CLI_DTYPE:
		return dtype_flag("dtype", arg, &opt->dtype, err);
	case CLI_KV_DTYPE:
		return dtype_flag("kv-cache-dtype", arg, &opt->kv_cache_dtype, err);
	case CLI_QUANTIZE:
		if (rbln_quantize_parse(arg, &opt->quantize))
			return rbln_error_set(err, -EINVAL, "--quantize: '%s' is not none or w8a16",
					      arg);
		return 0;
	case CLI_MATMUL_PRECISION:
		if (rbln_matmul_precision_parse(arg, &opt->matmul_precision))
			return rbln_error_set(err, -EINVAL, "--matmul-precision: '%s' is not float32 "
					      "or bf16", arg);
		return 0;
	case CLI_WEIGHT_LAYOUT:
		if (rbln_weight_layout_parse(arg, &opt->weight_layout))
			return rbln_error_set(err, -EINVAL, "--weight-layout: '%s' is not auto, "
					      "spaced or packed16", arg);
		return 0;
	case CLI_DUMMY:
		opt->dummy_weights = true;
		return 0;
	case CLI_DUMMY_SEED:
		rc = rbln_cli_parse_u64("dummy-seed", arg, 0, UINT64_MAX, &v, err);
		if (!rc)
			opt->dummy_seed = v;
		return rc;
	}
	return rbln_error_set(err, -EINVAL, "unknown compile flag %d", id);
}
