// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: gRPC inference requests.  The input is a serialized
 * inference.ModelInferRequest (as it arrives on ModelInfer and
 * ModelStreamInfer), unpacked by protobuf-c, read by serve_grpc_parse_infer
 * against the RBLN tutorial's configuration and built for tiny-llama3;
 * a request that passes gets a response built from its prompt.
 *
 * Input: byte 0 bit 0 says whether it came on a stream; the rest is the
 * message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/grpc/grpc_infer.h"
#include "serve/api/request_build.h"

static struct serve_model_config cfg;
static struct rbln_tokenizer *tok;
static struct serve_model_text mt;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *models = getenv("RBLN_MODELS_DIR"), *fx = getenv("SERVE_FIXTURES_DIR");
	char path[4096];
	struct rbln_error err;

	(void)argc;
	(void)argv;
	if (!models || !fx) {
		fprintf(stderr, "fuzz_grpc: set RBLN_MODELS_DIR and SERVE_FIXTURES_DIR\n");
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/repo-rbln/vllm_model/config.pbtxt", fx);
	if (serve_model_config_load(path, "vllm_model", &cfg, &err)) {
		fprintf(stderr, "fuzz_grpc: %s\n", err.msg);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/tiny-llama3", models);
	if (rbln_tokenizer_load(path, &tok, &err) ||
	    serve_gen_defaults_load(path, &mt.defaults, &err)) {
		fprintf(stderr, "fuzz_grpc: %s\n", err.msg);
		exit(1);
	}
	mt.name = "vllm_model";
	mt.tok = tok;
	mt.max_model_len = 256;
	mt.vocab_size = (int64_t)rbln_tokenizer_vocab_size(tok);
	mt.max_logprobs = RBLN_SAMPLING_MAX_LOGPROBS;
	return 0;
}

/* The response of a request that parsed: its prompt as the output text. */
static void respond(const struct serve_request *r, const struct serve_built *b)
{
	struct serve_resp_ctx ctx = { "vllm_model", "1", r->id, 0, r };
	struct serve_piece p = { 0 };
	struct serve_job_batch batch = { &ctx, &p, 1, true, 0, NULL };
	Inference__ModelInferResponse *m = NULL;
	struct rbln_error err;

	p.text = b->prompts[0].text ? b->prompts[0].text : "";
	p.text_len = strlen(p.text);
	p.final = true;
	p.stop_token_id = -1;
	if (!serve_grpc_infer_response(&batch, &cfg, true, true, &m, &err))
		serve_grpc_infer_response_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Inference__ModelInferRequest *rq;
	struct serve_grpc_infer_opts o;
	struct serve_request r;
	struct serve_built b;
	struct rbln_error err;

	if (size < 1)
		return 0;
	rq = inference__model_infer_request__unpack(NULL, size - 1, data + 1);
	if (!rq)
		return 0;
	if (!serve_grpc_parse_infer(&cfg, rq, data[0] & 1, &r, &o, &err)) {
		if (!serve_request_build(&mt, &r, &b, &err)) {
			if (b.n_prompts == 1)
				respond(&r, &b);
			serve_built_free(&b);
		}
		serve_request_free(&r);
	}
	inference__model_infer_request__free_unpacked(rq, NULL);
	return 0;
}
