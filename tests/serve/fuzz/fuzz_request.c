// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: request bodies of every generating endpoint, parsed
 * against the tutorials' model configurations and then built for the
 * tiny-llama3 reference model (tokenizer, chat template, validation).
 *
 * Input: byte 0 picks the endpoint (generate, generate_stream, infer,
 * completions, chat), byte 1 the configuration, bytes 2-3 the infer JSON
 * header length (binary tensor data follows it); the rest is the body.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/api/request.h"
#include "serve/api/request_build.h"

static struct serve_model_config cfgs[4];
static size_t n_cfgs;
static struct rbln_tokenizer *tok;
static struct rbln_chat_template *chat;
static struct serve_model_text mt;

static void load_cfg(const char *fixtures, const char *rel, const char *name)
{
	char path[4096];
	struct rbln_error err;

	snprintf(path, sizeof(path), "%s/%s", fixtures, rel);
	if (serve_model_config_load(path, name, &cfgs[n_cfgs], &err)) {
		fprintf(stderr, "fuzz_request: %s\n", err.msg);
		exit(1);
	}
	n_cfgs++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *models = getenv("RBLN_MODELS_DIR"), *fx = getenv("SERVE_FIXTURES_DIR");
	char dir[4096];
	struct rbln_error err;

	(void)argc;
	(void)argv;
	if (!models || !fx) {
		fprintf(stderr, "fuzz_request: set RBLN_MODELS_DIR and SERVE_FIXTURES_DIR\n");
		exit(1);
	}
	load_cfg(fx, "repo-rbln/vllm_model/config.pbtxt", "vllm_model");
	load_cfg(fx, "repo-trtllm/ensemble/config.pbtxt", "ensemble");
	load_cfg(fx, "repo-llama2-dynamic/llamav2/config.pbtxt", "llamav2");
	if (serve_model_config_default("tiny", &cfgs[n_cfgs++], &err))
		exit(1);
	snprintf(dir, sizeof(dir), "%s/tiny-llama3", models);
	if (rbln_tokenizer_load(dir, &tok, &err) || rbln_chat_template_load(dir, &chat, &err) ||
	    serve_gen_defaults_load(dir, &mt.defaults, &err)) {
		fprintf(stderr, "fuzz_request: %s\n", err.msg);
		exit(1);
	}
	mt.name = "tiny";
	mt.tok = tok;
	mt.chat = chat;
	mt.max_model_len = 256;
	mt.vocab_size = (int64_t)rbln_tokenizer_vocab_size(tok);
	mt.max_logprobs = RBLN_SAMPLING_MAX_LOGPROBS;
	mt.longest_token = serve_longest_token(tok);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct serve_model_config *cfg;
	struct serve_request r;
	struct serve_built b;
	struct rbln_error err;
	const char *body;
	size_t len, jlen;
	int rc;

	if (size < 4)
		return 0;
	cfg = &cfgs[data[1] % n_cfgs];
	body = (const char *)data + 4;
	len = size - 4;
	jlen = ((size_t)data[2] | (size_t)data[3] << 8);
	if (jlen > len)
		jlen = len;
	switch (data[0] % 5) {
	case 0: rc = serve_parse_generate(cfg, body, len, false, &r, &err); break;
	case 1: rc = serve_parse_generate(cfg, body, len, true, &r, &err); break;
	case 2: rc = serve_parse_infer(cfg, body, len, jlen, &r, &err); break;
	case 3: rc = serve_parse_completions(body, len, &r, &err); break;
	default: rc = serve_parse_chat(body, len, &r, &err); break;
	}
	if (rc) {
		if (!err.msg[0])
			__builtin_trap();
		return 0;
	}
	rc = serve_request_build(&mt, &r, &b, &err);
	if (!rc) {
		size_t i;

		/* what reaches the engine respects the limits */
		for (i = 0; i < b.n_prompts; i++)
			if (!b.prompts[i].n_ids || (int64_t)b.prompts[i].n_ids > mt.max_model_len)
				__builtin_trap();
		serve_built_free(&b);
	} else if (!err.msg[0]) {
		__builtin_trap();
	}
	serve_request_free(&r);
	return 0;
}
