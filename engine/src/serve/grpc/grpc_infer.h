/* SPDX-License-Identifier: MIT */
/*
 * gRPC ModelInferRequest <-> the HTTP side's request and response.  A
 * request is turned into the KServe v2 binary-data form of an HTTP infer
 * body (JSON header, raw tensors after it) and read by serve_parse_infer,
 * so both protocols check inputs with the same code and the same words;
 * a response is the HTTP infer body with every output binary, its JSON
 * header turned into InferOutputTensor entries and the binary part into
 * raw_output_contents (the two protocols lay tensors out alike).
 */
#ifndef RBLN_SERVE_GRPC_INFER_H
#define RBLN_SERVE_GRPC_INFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grpc_service.pb-c.h"
#include "serve/api/request.h"
#include "serve/http/job.h"
#include "serve/repository/model_config.h"
#include "util/strbuf.h"

/* What a gRPC request asks beyond the HTTP request it becomes. */
struct serve_grpc_infer_opts {
	bool stream;		/* the model's "stream" input was true */
	bool empty_final;	/* triton_enable_empty_final_response */
};

/*
 * Parses rq for the model configuration cfg.  streaming: the request came
 * on ModelStreamInfer, where a true "stream" input asks for one response
 * per generated piece.  Errors name the input or parameter at fault.
 */
int serve_grpc_parse_infer(const struct serve_model_config *cfg,
			   const Inference__ModelInferRequest *rq, bool streaming,
			   struct serve_request *r, struct serve_grpc_infer_opts *o,
			   struct rbln_error *err);

/*
 * The ModelInferResponse of one batch of output, packed into out.  final
 * adds the parameter triton_final_response = true (false otherwise);
 * with_outputs false leaves the tensors out (the empty final response).
 */
int serve_grpc_infer_response(const struct serve_job_batch *b,
			      const struct serve_model_config *cfg, bool final, bool with_outputs,
			      Inference__ModelInferResponse **out, struct rbln_error *err);
void serve_grpc_infer_response_free(Inference__ModelInferResponse *m);

#endif
