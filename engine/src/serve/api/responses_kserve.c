// SPDX-License-Identifier: MIT
/*
 * KServe v2 response bodies: generate as Triton's generate extension
 * returns the vLLM backend's outputs (text_output, and finish_reason,
 * cumulative_logprob, logprobs, num_input_tokens, num_output_tokens when
 * asked for), infer with tensors (JSON or the binary data extension), and
 * Triton's error object.
 */
#include "responses.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *serve_finish_reason_name(enum rbln_finish_reason r, bool final)
{
	if (!final)
		return "None";	/* what the vLLM backend sends: str(None) */
	switch (r) {
	case RBLN_FINISH_STOP: return "stop";
	case RBLN_FINISH_LENGTH: return "length";
	case RBLN_FINISH_NONE: return "None";
	case RBLN_FINISH_ABORT:
	case RBLN_FINISH_ERROR:
		break;
	}
	return "abort";
}

int serve_json_append(struct rbln_strbuf *sb, json_object *o)
{
	size_t len;
	const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE, &len);

	if (!s)
		return -ENOMEM;
	return rbln_strbuf_append(sb, s, len);
}

json_object *serve_error_json(const char *msg)
{
	json_object *o = json_object_new_object();

	if (o)
		json_object_object_add(o, "error", json_object_new_string(msg));
	return o;
}

/* The vLLM backend's logprobs output: [{"<id>": {"logprob", "rank", "decoded_token"}}]. */
static char *logprobs_text(const struct serve_piece *p)
{
	json_object *arr = json_object_new_array();
	char *text;
	size_t i, k;

	if (!arr)
		return NULL;
	for (i = 0; i < p->n_lps; i++) {
		const struct serve_lp_entry *e = &p->lps[i];
		json_object *d = json_object_new_object();
		char key[16];
		bool sampled_listed = false;

		for (k = 0; k < e->n_top; k++) {
			json_object *v = json_object_new_object();

			json_object_object_add(v, "logprob", json_object_new_double(e->top[k].logprob));
			json_object_object_add(v, "rank", json_object_new_int64((int64_t)k + 1));
			json_object_object_add(v, "decoded_token",
					       json_object_new_string_len(e->top[k].token,
									  (int)e->top[k].token_len));
			snprintf(key, sizeof(key), "%d", e->top[k].id);
			json_object_object_add(d, key, v);
			sampled_listed |= e->top[k].id == e->id;
		}
		if (!sampled_listed) {
			json_object *v = json_object_new_object();

			json_object_object_add(v, "logprob", json_object_new_double(e->logprob));
			/* the engine reports ranks only through the top-k list */
			json_object_object_add(v, "rank", NULL);
			json_object_object_add(v, "decoded_token",
					       json_object_new_string_len(e->token, (int)e->token_len));
			snprintf(key, sizeof(key), "%d", e->id);
			json_object_object_add(d, key, v);
		}
		json_object_array_add(arr, d);
	}
	text = strdup(json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN));
	json_object_put(arr);
	return text;
}

json_object *serve_generate_json(const struct serve_resp_ctx *c, const struct serve_piece *p)
{
	const struct serve_request *r = c->req;
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "model_name", json_object_new_string(c->model_name));
	json_object_object_add(o, "model_version", json_object_new_string(c->model_version));
	json_object_object_add(o, "text_output", json_object_new_string_len(p->text,
									      (int)p->text_len));
	if (r->ret_finish_reason)
		json_object_object_add(o, "finish_reason",
				       json_object_new_string(serve_finish_reason_name(p->reason,
										       p->final)));
	if (r->ret_cumulative_logprob)
		json_object_object_add(o, "cumulative_logprob",
				       json_object_new_double(p->cumulative_logprob));
	if (r->ret_logprobs) {
		char *t = p->lps ? logprobs_text(p) : NULL;

		json_object_object_add(o, "logprobs", json_object_new_string(t ? t : "null"));
		free(t);
	}
	if (r->ret_num_input_tokens)
		json_object_object_add(o, "num_input_tokens",
				       json_object_new_int64((int64_t)p->n_prompt_tokens));
	if (r->ret_num_output_tokens)
		json_object_object_add(o, "num_output_tokens",
				       json_object_new_int64((int64_t)p->n_tokens));
	return o;
}

/* Outputs an infer response carries: those asked for, else the text and the return_* ones. */
static size_t infer_outputs(const struct serve_request *r, const struct serve_model_config *cfg,
			    const struct serve_tensor **out, bool *binary)
{
	size_t i, n = 0;

	if (r->n_outputs) {
		for (i = 0; i < r->n_outputs; i++) {
			out[n] = r->outputs[i].tensor;
			binary[n++] = r->outputs[i].binary;
		}
		return n;
	}
	for (i = 0; i < cfg->n_outputs && n < 64; i++) {
		const struct serve_tensor *t = &cfg->outputs[i];
		bool want = t->role == SERVE_OUT_TEXT ||
			    (t->role == SERVE_OUT_FINISH_REASON && r->ret_finish_reason) ||
			    (t->role == SERVE_OUT_CUMULATIVE_LOGPROB && r->ret_cumulative_logprob) ||
			    (t->role == SERVE_OUT_LOGPROBS && r->ret_logprobs) ||
			    (t->role == SERVE_OUT_NUM_INPUT_TOKENS && r->ret_num_input_tokens) ||
			    (t->role == SERVE_OUT_NUM_OUTPUT_TOKENS && r->ret_num_output_tokens);

		if (want) {
			out[n] = t;
			binary[n++] = r->binary_output;
		}
	}
	return n;
}

int serve_put_le(struct rbln_strbuf *b, uint64_t x, size_t n)
{
	unsigned char buf[8];
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = (unsigned char)(x >> (8 * i));
	return rbln_strbuf_append(b, buf, n);
}

/* Appends one element of output t for piece p, as JSON or binary. */
static int add_element(const struct serve_tensor *t, const struct serve_piece *p,
		       json_object *data, struct rbln_strbuf *bin)
{
	double num = 0;
	const char *s = NULL;
	size_t slen = 0;
	char *owned = NULL;
	int rc = 0;

	switch (t->role) {
	case SERVE_OUT_TEXT:
		s = p->text;
		slen = p->text_len;
		break;
	case SERVE_OUT_FINISH_REASON:
		s = serve_finish_reason_name(p->reason, p->final);
		slen = strlen(s);
		break;
	case SERVE_OUT_LOGPROBS:
		owned = p->lps ? logprobs_text(p) : strdup("null");
		if (!owned)
			return -ENOMEM;
		s = owned;
		slen = strlen(s);
		break;
	case SERVE_OUT_NUM_INPUT_TOKENS:
		num = (double)p->n_prompt_tokens;
		break;
	case SERVE_OUT_NUM_OUTPUT_TOKENS:
		num = (double)p->n_tokens;
		break;
	case SERVE_OUT_CUMULATIVE_LOGPROB:
		num = p->cumulative_logprob;
		break;
	default:
		break;
	}
	if (s) {
		if (data)
			rc = json_object_array_add(data, json_object_new_string_len(s, (int)slen));
		else
			rc = serve_put_le(bin, slen, 4) ? -ENOMEM : rbln_strbuf_append(bin, s, slen);
	} else if (data) {
		if (t->dtype == SERVE_DT_FP32 || t->dtype == SERVE_DT_FP64 ||
		    t->dtype == SERVE_DT_FP16 || t->dtype == SERVE_DT_BF16)
			rc = json_object_array_add(data, json_object_new_double(num));
		else
			rc = json_object_array_add(data, json_object_new_int64((int64_t)num));
	} else {
		size_t es = serve_dtype_size(t->dtype);

		if (t->dtype == SERVE_DT_FP32) {
			float f = (float)num;
			uint32_t bits;

			memcpy(&bits, &f, 4);
			rc = serve_put_le(bin, bits, 4);
		} else if (t->dtype == SERVE_DT_FP64) {
			uint64_t bits;

			memcpy(&bits, &num, 8);
			rc = serve_put_le(bin, bits, 8);
		} else if (es) {
			rc = serve_put_le(bin, (uint64_t)(int64_t)num, es);
		}
	}
	free(owned);
	return rc ? -ENOMEM : 0;
}

int serve_infer_body(const struct serve_resp_ctx *c, const struct serve_model_config *cfg,
		     const struct serve_piece *pieces, size_t n, struct rbln_strbuf *body,
		     size_t *json_len)
{
	const struct serve_request *r = c->req;
	const struct serve_tensor *outs[64];
	bool binary[64];
	struct rbln_strbuf bin = { 0 };
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	size_t n_out, i, k;
	int rc = 0;

	if (!o || !arr) {
		json_object_put(o);
		json_object_put(arr);
		return -ENOMEM;
	}
	n_out = infer_outputs(r, cfg, outs, binary);
	if (c->id)
		json_object_object_add(o, "id", json_object_new_string(c->id));
	json_object_object_add(o, "model_name", json_object_new_string(c->model_name));
	json_object_object_add(o, "model_version", json_object_new_string(c->model_version));
	for (i = 0; i < n_out && !rc; i++) {
		json_object *t = json_object_new_object(), *shape = json_object_new_array();
		json_object *data = binary[i] ? NULL : json_object_new_array();
		size_t before = bin.len;

		json_object_object_add(t, "name", json_object_new_string(outs[i]->name));
		json_object_object_add(t, "datatype",
				       json_object_new_string(serve_dtype_name(outs[i]->dtype)));
		/* one element per prompt, in the prompt tensor's shape */
		for (k = 0; k < r->prompt_rank; k++)
			json_object_array_add(shape, json_object_new_int64(r->prompt_shape[k]));
		if (!r->prompt_rank)
			json_object_array_add(shape, json_object_new_int64((int64_t)n));
		json_object_object_add(t, "shape", shape);
		for (k = 0; k < n && !rc; k++)
			rc = add_element(outs[i], &pieces[k], data, &bin);
		if (binary[i]) {
			json_object *params = json_object_new_object();

			json_object_object_add(params, "binary_data_size",
					       json_object_new_int64((int64_t)(bin.len - before)));
			json_object_object_add(t, "parameters", params);
		} else {
			json_object_object_add(t, "data", data);
		}
		json_object_array_add(arr, t);
	}
	json_object_object_add(o, "outputs", arr);
	if (!rc)
		rc = serve_json_append(body, o);
	*json_len = body->len;
	if (!rc && bin.len)
		rc = rbln_strbuf_append(body, bin.data, bin.len);
	rbln_strbuf_free(&bin);
	json_object_put(o);
	return rc;
}
