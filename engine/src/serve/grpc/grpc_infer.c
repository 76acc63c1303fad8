// SPDX-License-Identifier: MIT
/*
 * ModelInferRequest -> serve_request and batches -> ModelInferResponse
 * (see grpc_infer.h).  Typed tensor contents are first laid out as raw
 * little-endian bytes, so that one reader (serve_parse_infer's binary
 * path) checks sizes, types and UTF-8 for every way a client sends data.
 */
#include "grpc_infer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/api/responses.h"

#define FINAL_PARAM "triton_final_response"
#define EMPTY_FINAL_PARAM "triton_enable_empty_final_response"

/* The number of elements of the repeated field that carries type t. */
static size_t typed_count(const Inference__InferTensorContents *c, enum serve_dtype t)
{
	switch (t) {
	case SERVE_DT_BOOL: return c->n_bool_contents;
	case SERVE_DT_INT8: case SERVE_DT_INT16: case SERVE_DT_INT32: return c->n_int_contents;
	case SERVE_DT_INT64: return c->n_int64_contents;
	case SERVE_DT_UINT8: case SERVE_DT_UINT16: case SERVE_DT_UINT32: return c->n_uint_contents;
	case SERVE_DT_UINT64: return c->n_uint64_contents;
	case SERVE_DT_FP32: return c->n_fp32_contents;
	case SERVE_DT_FP64: return c->n_fp64_contents;
	case SERVE_DT_BYTES: return c->n_bytes_contents;
	default: return 0;
	}
}

static size_t all_count(const Inference__InferTensorContents *c)
{
	return c->n_bool_contents + c->n_int_contents + c->n_int64_contents + c->n_uint_contents +
	       c->n_uint64_contents + c->n_fp32_contents + c->n_fp64_contents +
	       c->n_bytes_contents;
}

/* InferTensorContents as the raw bytes raw_input_contents would hold. */
static int contents_to_raw(const Inference__ModelInferRequest__InferInputTensor *in,
			   enum serve_dtype t, struct rbln_strbuf *raw, struct rbln_error *err)
{
	const Inference__InferTensorContents *c = in->contents;
	size_t n = typed_count(c, t), es = serve_dtype_size(t), i;
	int rc = 0;

	if (t == SERVE_DT_FP16 || t == SERVE_DT_BF16)
		return rbln_error_set(err, -EINVAL, "input '%s': %s data must be sent in "
				      "raw_input_contents", in->name, serve_dtype_name(t));
	if (n != all_count(c))
		return rbln_error_set(err, -EINVAL, "input '%s': contents hold elements of a type "
				      "other than its datatype %s", in->name, in->datatype);
	for (i = 0; i < n && !rc; i++) {
		switch (t) {
		case SERVE_DT_BOOL: rc = serve_put_le(raw, c->bool_contents[i] != 0, 1); break;
		case SERVE_DT_INT8: case SERVE_DT_INT16: case SERVE_DT_INT32:
			rc = serve_put_le(raw, (uint64_t)(int64_t)c->int_contents[i], es);
			break;
		case SERVE_DT_INT64: rc = serve_put_le(raw, (uint64_t)c->int64_contents[i], 8); break;
		case SERVE_DT_UINT8: case SERVE_DT_UINT16: case SERVE_DT_UINT32:
			rc = serve_put_le(raw, c->uint_contents[i], es);
			break;
		case SERVE_DT_UINT64: rc = serve_put_le(raw, c->uint64_contents[i], 8); break;
		case SERVE_DT_FP32: {
			uint32_t bits;

			memcpy(&bits, &c->fp32_contents[i], 4);
			rc = serve_put_le(raw, bits, 4);
			break;
		}
		case SERVE_DT_FP64: {
			uint64_t bits;

			memcpy(&bits, &c->fp64_contents[i], 8);
			rc = serve_put_le(raw, bits, 8);
			break;
		}
		case SERVE_DT_BYTES:
			rc = serve_put_le(raw, c->bytes_contents[i].len, 4);
			if (!rc)
				rc = rbln_strbuf_append(raw, c->bytes_contents[i].data,
							c->bytes_contents[i].len);
			break;
		default:
			break;
		}
	}
	return rc ? rbln_error_set(err, -ENOMEM, "out of memory") : 0;
}

static json_object *param_json(const Inference__InferParameter *p)
{
	switch (p->parameter_choice_case) {
	case INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_BOOL_PARAM:
		return json_object_new_boolean(p->bool_param);
	case INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_INT64_PARAM:
		return json_object_new_int64(p->int64_param);
	case INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_STRING_PARAM:
		return json_object_new_string(p->string_param);
	case INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_DOUBLE_PARAM:
		return json_object_new_double(p->double_param);
	case INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_UINT64_PARAM:
		return json_object_new_uint64(p->uint64_param);
	default:
		return NULL;
	}
}

/* Request parameters as the JSON "parameters" object; Triton's own flags taken out. */
static int request_params(const Inference__ModelInferRequest *rq, json_object *params,
			  struct serve_grpc_infer_opts *o, struct rbln_error *err)
{
	size_t i;

	for (i = 0; i < rq->n_parameters; i++) {
		const char *key = rq->parameters[i]->key;
		const Inference__InferParameter *v = rq->parameters[i]->value;
		json_object *jv;

		if (!v || v->parameter_choice_case ==
		    INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE__NOT_SET)
			return rbln_error_set(err, -EINVAL, "parameter '%s' has no value", key);
		if (!strcmp(key, EMPTY_FINAL_PARAM)) {
			if (v->parameter_choice_case !=
			    INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_BOOL_PARAM)
				return rbln_error_set(err, -EINVAL, "parameter '%s' must be a bool",
						      key);
			o->empty_final = v->bool_param;
			continue;
		}
		jv = param_json(v);
		if (!jv)
			return rbln_error_set(err, -ENOMEM, "out of memory");
		json_object_object_add(params, key, jv);
	}
	return 0;
}

struct body_state {
	const struct serve_model_config *cfg;
	const Inference__ModelInferRequest *rq;
	struct serve_grpc_infer_opts *o;
	struct rbln_strbuf raw;		/* the binary part */
	bool exclude_given;
	bool stream_input;
};

/* One input: its JSON header entry, its data appended to s->raw. */
static int input_entry(struct body_state *s, size_t i, json_object *inputs,
		       struct rbln_error *err)
{
	const Inference__ModelInferRequest__InferInputTensor *in = s->rq->inputs[i];
	const struct serve_tensor *t = serve_model_input(s->cfg, in->name);
	enum serve_dtype dt = serve_dtype_from_name(in->datatype);
	json_object *e = json_object_new_object(), *shape = json_object_new_array();
	json_object *params = json_object_new_object();
	size_t before = s->raw.len, k;
	int rc;

	json_object_object_add(e, "name", json_object_new_string(in->name));
	json_object_object_add(e, "datatype", json_object_new_string(in->datatype));
	for (k = 0; k < in->n_shape; k++)
		json_object_array_add(shape, json_object_new_int64(in->shape[k]));
	json_object_object_add(e, "shape", shape);
	json_object_object_add(e, "parameters", params);
	json_object_array_add(inputs, e);
	if (in->n_parameters)
		return rbln_error_set(err, -EINVAL, "input '%s': parameter '%s' is not supported "
				      "(no shared memory here)", in->name, in->parameters[0]->key);
	if (dt == SERVE_DT_INVALID)
		return rbln_error_set(err, -EINVAL, "input '%s': unknown datatype '%s'", in->name,
				      in->datatype);
	if (s->rq->n_raw_input_contents) {
		if (in->contents)
			return rbln_error_set(err, -EINVAL, "input '%s' has contents, but the "
					      "request uses raw_input_contents", in->name);
		rc = rbln_strbuf_append(&s->raw, s->rq->raw_input_contents[i].data,
					s->rq->raw_input_contents[i].len);
		if (rc)
			return rbln_error_set(err, -ENOMEM, "out of memory");
	} else if (in->contents) {
		rc = contents_to_raw(in, dt, &s->raw, err);
		if (rc)
			return rc;
	} else {
		return rbln_error_set(err, -EINVAL, "input '%s' has no data: give contents or "
				      "raw_input_contents", in->name);
	}
	/* the "stream" flag is the RPC's business: the HTTP parser sees false */
	if (t && t->role == SERVE_IN_STREAM && t->dtype == dt) {
		for (k = before; k < s->raw.len; k++) {
			s->stream_input |= s->raw.data[k] != 0;
			s->raw.data[k] = 0;
		}
	}
	if (t && t->role == SERVE_IN_EXCLUDE_INPUT)
		s->exclude_given = true;
	json_object_object_add(params, "binary_data_size",
			       json_object_new_int64((int64_t)(s->raw.len - before)));
	return 0;
}

static int output_entry(const Inference__ModelInferRequest__InferRequestedOutputTensor *out,
			json_object *outputs, struct rbln_error *err)
{
	json_object *e = json_object_new_object();
	size_t k;

	json_object_object_add(e, "name", json_object_new_string(out->name));
	json_object_array_add(outputs, e);
	for (k = 0; k < out->n_parameters; k++) {
		const Inference__InferParameter *v = out->parameters[k]->value;
		json_object *params, *jv = v ? param_json(v) : NULL;

		if (!jv)
			return rbln_error_set(err, -EINVAL, "output '%s': parameter '%s' has no "
					      "value", out->name, out->parameters[k]->key);
		if (!json_object_object_get_ex(e, "parameters", &params)) {
			params = json_object_new_object();
			json_object_object_add(e, "parameters", params);
		}
		json_object_object_add(params, out->parameters[k]->key, jv);
	}
	return 0;
}

/* The HTTP infer body (JSON header + binary data) that says what rq says. */
static int http_body(struct body_state *s, struct rbln_strbuf *body, size_t *json_len,
		     struct rbln_error *err)
{
	const Inference__ModelInferRequest *rq = s->rq;
	json_object *o = json_object_new_object(), *params = json_object_new_object();
	json_object *inputs = json_object_new_array(), *outputs = json_object_new_array();
	size_t i;
	int rc = 0;

	json_object_object_add(o, "parameters", params);
	json_object_object_add(o, "inputs", inputs);
	if (rq->id && *rq->id)
		json_object_object_add(o, "id", json_object_new_string(rq->id));
	if (rq->n_outputs)
		json_object_object_add(o, "outputs", outputs);
	else
		json_object_put(outputs);
	if (rq->n_raw_input_contents && rq->n_raw_input_contents != rq->n_inputs)
		rc = rbln_error_set(err, -EINVAL, "raw_input_contents has %zu entries for %zu "
				    "inputs", rq->n_raw_input_contents, rq->n_inputs);
	if (!rc)
		rc = request_params(rq, params, s->o, err);
	for (i = 0; !rc && i < rq->n_inputs; i++)
		rc = input_entry(s, i, inputs, err);
	for (i = 0; !rc && i < rq->n_outputs; i++)
		rc = output_entry(rq->outputs[i], outputs, err);
	if (!rc && serve_json_append(body, o))
		rc = rbln_error_set(err, -ENOMEM, "out of memory");
	*json_len = body->len;
	if (!rc && s->raw.len && rbln_strbuf_append(body, s->raw.data, s->raw.len))
		rc = rbln_error_set(err, -ENOMEM, "out of memory");
	json_object_put(o);
	return rc;
}

int serve_grpc_parse_infer(const struct serve_model_config *cfg,
			   const Inference__ModelInferRequest *rq, bool streaming,
			   struct serve_request *r, struct serve_grpc_infer_opts *o,
			   struct rbln_error *err)
{
	struct body_state s = { .cfg = cfg, .rq = rq, .o = o };
	struct rbln_strbuf body = { 0 };
	size_t json_len = 0, i;
	int rc;

	memset(o, 0, sizeof(*o));
	memset(r, 0, sizeof(*r));
	rc = http_body(&s, &body, &json_len, err);
	rbln_strbuf_free(&s.raw);
	if (!rc)
		rc = serve_parse_infer(cfg, body.data ? body.data : "", body.len, json_len, r, err);
	rbln_strbuf_free(&body);
	if (rc)
		return rc;
	o->stream = s.stream_input;
	if (o->stream && !streaming) {
		rc = rbln_error_set(err, -EINVAL, "input 'stream' is true, but ModelInfer returns "
				    "one response: use ModelStreamInfer to stream");
	} else if (o->stream && s.exclude_given && r->prepend_input) {
		rc = rbln_error_set(err, -EINVAL, "When streaming, `exclude_input_in_output` = "
				    "False is not allowed.");
	}
	if (rc) {
		serve_request_free(r);
		return rc;
	}
	/* as the vLLM backend: a stream never starts with the prompt */
	r->stream = o->stream;
	if (o->stream)
		r->prepend_input = false;
	/* gRPC carries every output as raw bytes */
	r->binary_output = true;
	for (i = 0; i < r->n_outputs; i++)
		r->outputs[i].binary = true;
	return 0;
}

/* ---- responses ---- */

static Inference__InferParameter *bool_param(bool v)
{
	Inference__InferParameter *p = malloc(sizeof(*p));

	if (!p)
		return NULL;
	inference__infer_parameter__init(p);
	p->parameter_choice_case = INFERENCE__INFER_PARAMETER__PARAMETER_CHOICE_BOOL_PARAM;
	p->bool_param = v;
	return p;
}

void serve_grpc_infer_response_free(Inference__ModelInferResponse *m)
{
	size_t i;

	if (!m)
		return;
	free(m->model_name);
	free(m->model_version);
	free(m->id);
	for (i = 0; i < m->n_parameters; i++) {
		free(m->parameters[i]->key);
		free(m->parameters[i]->value);
		free(m->parameters[i]);
	}
	free(m->parameters);
	for (i = 0; i < m->n_outputs; i++) {
		free(m->outputs[i]->name);
		free(m->outputs[i]->datatype);
		free(m->outputs[i]->shape);
		free(m->outputs[i]);
	}
	free(m->outputs);
	for (i = 0; i < m->n_raw_output_contents; i++)
		free(m->raw_output_contents[i].data);
	free(m->raw_output_contents);
	free(m);
}

static char *dup_json_string(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return strdup("");
	return strdup(json_object_get_string(v));
}

/* One output of the HTTP body's header, with its slice of the binary part. */
static int add_output(Inference__ModelInferResponse *m, json_object *t, const char *bin,
		      size_t bin_len, size_t *pos)
{
	Inference__ModelInferResponse__InferOutputTensor *o = malloc(sizeof(*o));
	ProtobufCBinaryData *raw = &m->raw_output_contents[m->n_raw_output_contents];
	json_object *shape = NULL, *params = NULL, *size = NULL;
	size_t k, n_shape, len;

	if (!o)
		return -ENOMEM;
	inference__model_infer_response__infer_output_tensor__init(o);
	m->outputs[m->n_outputs++] = o;
	o->name = dup_json_string(t, "name");
	o->datatype = dup_json_string(t, "datatype");
	json_object_object_get_ex(t, "shape", &shape);
	n_shape = shape ? json_object_array_length(shape) : 0;
	o->shape = calloc(n_shape ? n_shape : 1, sizeof(*o->shape));
	if (!o->name || !o->datatype || !o->shape)
		return -ENOMEM;
	for (k = 0; k < n_shape; k++)
		o->shape[k] = json_object_get_int64(json_object_array_get_idx(shape, k));
	o->n_shape = n_shape;
	json_object_object_get_ex(t, "parameters", &params);
	if (params)
		json_object_object_get_ex(params, "binary_data_size", &size);
	len = size ? (size_t)json_object_get_int64(size) : 0;
	if (len > bin_len - *pos)
		return -EINVAL;
	raw->data = malloc(len ? len : 1);
	if (!raw->data)
		return -ENOMEM;
	memcpy(raw->data, bin + *pos, len);
	raw->len = len;
	m->n_raw_output_contents++;
	*pos += len;
	return 0;
}

static int add_final_param(Inference__ModelInferResponse *m, bool final)
{
	Inference__ModelInferResponse__ParametersEntry *e = malloc(sizeof(*e));

	m->parameters = calloc(1, sizeof(*m->parameters));
	if (!e || !m->parameters) {
		free(e);
		return -ENOMEM;
	}
	inference__model_infer_response__parameters_entry__init(e);
	m->parameters[m->n_parameters++] = e;
	e->key = strdup(FINAL_PARAM);
	e->value = bool_param(final);
	return e->key && e->value ? 0 : -ENOMEM;
}

int serve_grpc_infer_response(const struct serve_job_batch *b,
			      const struct serve_model_config *cfg, bool final, bool with_outputs,
			      Inference__ModelInferResponse **out, struct rbln_error *err)
{
	Inference__ModelInferResponse *m = calloc(1, sizeof(*m));
	struct rbln_strbuf body = { 0 };
	json_object *hdr = NULL, *outs = NULL;
	struct json_tokener *tok;
	size_t json_len = 0, pos = 0, n = 0, i;
	int rc = -ENOMEM;

	*out = NULL;
	if (!m)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	inference__model_infer_response__init(m);
	m->model_name = strdup(b->ctx->model_name);
	m->model_version = strdup(b->ctx->model_version);
	m->id = strdup(b->ctx->id ? b->ctx->id : "");
	if (!m->model_name || !m->model_version || !m->id || add_final_param(m, final))
		goto fail;
	if (with_outputs) {
		rc = serve_infer_body(b->ctx, cfg, b->pieces, b->n, &body, &json_len);
		if (rc)
			goto fail;
		rc = -EINVAL;
		tok = json_tokener_new();
		hdr = tok ? json_tokener_parse_ex(tok, body.data, (int)json_len) : NULL;
		json_tokener_free(tok);
		if (!hdr || !json_object_object_get_ex(hdr, "outputs", &outs))
			goto fail;
		n = json_object_array_length(outs);
		m->outputs = calloc(n ? n : 1, sizeof(*m->outputs));
		m->raw_output_contents = calloc(n ? n : 1, sizeof(*m->raw_output_contents));
		rc = -ENOMEM;
		if (!m->outputs || !m->raw_output_contents)
			goto fail;
		for (i = 0; i < n; i++) {
			rc = add_output(m, json_object_array_get_idx(outs, i), body.data + json_len,
					body.len - json_len, &pos);
			if (rc)
				goto fail;
		}
	}
	json_object_put(hdr);
	rbln_strbuf_free(&body);
	*out = m;
	return 0;
fail:
	json_object_put(hdr);
	rbln_strbuf_free(&body);
	serve_grpc_infer_response_free(m);
	return rbln_error_set(err, rc, "cannot build the inference response (%s)",
			      rc == -ENOMEM ? "out of memory" : "inconsistent output tensors");
}
