/* SPDX-License-Identifier: MIT */
/*
 * The compile flags shared by rbln-compile and rbln-generate (which
 * compiles a Hugging Face directory on the fly with the same flags).
 */
#ifndef RBLN_COMPILE_CLI_H
#define RBLN_COMPILE_CLI_H

#include <getopt.h>

#include "rbln_compile.h"

/* getopt_long values of the compile flags. */
enum {
	CLI_TP = 1000,
	CLI_BATCH,
	CLI_MAX_SEQ_LEN,
	CLI_PARTITION,
	CLI_BLOCK,
	CLI_NUM_BLOCKS,
	CLI_DECODER_BATCHES,
	CLI_CHUNK,
	CLI_DTYPE,
	CLI_KV_DTYPE,
	CLI_DUMMY,
	CLI_DUMMY_SEED,
	CLI_QUANTIZE,
	CLI_MATMUL_PRECISION,
	CLI_WEIGHT_LAYOUT,
	CLI_COMPILE_LAST,
};

#define RBLN_COMPILE_LONG_OPTIONS \
	{ "tensor-parallel-size", required_argument, NULL, CLI_TP }, \
	{ "batch-size", required_argument, NULL, CLI_BATCH }, \
	{ "max-seq-len", required_argument, NULL, CLI_MAX_SEQ_LEN }, \
	{ "kvcache-partition-len", required_argument, NULL, CLI_PARTITION }, \
	{ "kvcache-block-size", required_argument, NULL, CLI_BLOCK }, \
	{ "kvcache-num-blocks", required_argument, NULL, CLI_NUM_BLOCKS }, \
	{ "decoder-batch-sizes", required_argument, NULL, CLI_DECODER_BATCHES }, \
	{ "prefill-chunk-size", required_argument, NULL, CLI_CHUNK }, \
	{ "dtype", required_argument, NULL, CLI_DTYPE }, \
	{ "kv-cache-dtype", required_argument, NULL, CLI_KV_DTYPE }, \
	{ "dummy-weights", no_argument, NULL, CLI_DUMMY }, \
	{ "dummy-seed", required_argument, NULL, CLI_DUMMY_SEED }, \
	{ "quantize", required_argument, NULL, CLI_QUANTIZE }, \
	{ "matmul-precision", required_argument, NULL, CLI_MATMUL_PRECISION }, \
	{ "weight-layout", required_argument, NULL, CLI_WEIGHT_LAYOUT }

extern const char rbln_compile_cli_usage[];

/* Applies one compile flag; -EINVAL with a message naming the flag. */
int rbln_compile_cli_apply(int id, const char *arg, struct rbln_compile_options *opt,
			   struct rbln_error *err);

/* A strictly parsed unsigned integer flag value in [min, max]. */
int rbln_cli_parse_u64(const char *flag, const char *arg, unsigned long long min,
		       unsigned long long max, unsigned long long *out, struct rbln_error *err);

#endif
