// SPDX-License-Identifier: MIT
/*
 * rbln-compile: compile a Hugging Face Llama checkpoint for RBLN devices,
 * the command-line form of the SDK's
 * RBLNLlamaForCausalLM.from_pretrained(export=True, rbln_*=...).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/compile_cli.h"
#include "rbln_compile.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rbln-compile HF_DIR -o OUT_DIR [options]\n"
		"\n"
		"Compiles the Llama checkpoint in HF_DIR (config.json, safetensors weights,\n"
		"tokenizer files) into OUT_DIR: rbln_config.json, and per tensor-parallel\n"
		"rank its weight file and the prefill and decoder_batch_N programs.\n"
		"The build is written beside OUT_DIR and moved into place when complete:\n"
		"an interrupted compile leaves OUT_DIR as it was. OUT_DIR must be missing,\n"
		"empty or a compiled model.\n"
		"\n"
		"  -o, --output DIR           the compiled directory (required)\n"
		"%s"
		"  -q, --quiet                no progress bar and no summary\n"
		"  -h, --help                 this help\n"
		"      --version              the version\n",
		rbln_compile_cli_usage);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		RBLN_COMPILE_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct rbln_compile_options opt = { 0 };
	struct rbln_compiled_config cc;
	struct rbln_error err = { 0 };
	const char *out = NULL;
	bool quiet = false;
	int c;

	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("rbln-compile %s\n", RBLN_VERSION);
			return 0;
		case '?':
			usage(stderr);
			return 2;
		default:
			if (rbln_compile_cli_apply(c, optarg, &opt, &err)) {
				fprintf(stderr, "rbln-compile: %s\n", err.msg);
				return 2;
			}
		}
	}
	if (optind != argc - 1 || !out) {
		fprintf(stderr, "rbln-compile: %s\n", !out ? "missing -o OUT_DIR" :
			optind >= argc ? "missing HF_DIR" : "more than one HF_DIR");
		usage(stderr);
		return 2;
	}
	opt.progress = !quiet && isatty(STDOUT_FILENO);
	if (rbln_compile(argv[optind], out, &opt, &err)) {
		fprintf(stderr, "rbln-compile: %s\n", err.msg);
		return 1;
	}
	if (!quiet && !rbln_compiled_config_load(out, &cc, &err)) {
		printf("compiled %s -> %s: tensor_parallel_size %u, batch_size %u, max_seq_len %u, "
		       "%s (kvcache_partition_len %u, kvcache_block_size %u, kvcache_num_blocks %u), "
		       "decoder_batch_sizes",
		       argv[optind], out, cc.tensor_parallel_size, cc.batch_size,
		       cc.max_seq_len, rbln_attn_impl_name(cc.attn_impl),
		       cc.kvcache_partition_len, cc.kvcache_block_size, cc.kvcache_num_blocks);
		for (size_t i = 0; i < cc.n_decoder_batch_sizes; i++)
			printf("%s%u", i ? "," : " ", cc.decoder_batch_sizes[i]);
		printf(", prefill_chunk_size %u, quantize %s, matmul_precision %s, "
		       "weight_layout %s\n", cc.prefill_chunk_size, rbln_quantize_name(cc.quantize),
		       rbln_matmul_precision_name(cc.matmul_precision),
		       rbln_weight_layout_name(cc.weight_layout));
	}
	return 0;
}
