// SPDX-License-Identifier: MIT
/*
 * KServe generate requests.  Triton maps every key of the body (top level
 * or inside "parameters") to the model input of that name, or else passes
 * it on as a request parameter; the vLLM backend reads its sampling
 * parameters from the sampling_parameters input or, without it, from the
 * request parameters.  Here the same keys mean the same things, with two
 * deliberate differences: a key known to nobody is an error naming it
 * (instead of being dropped), and sampling_parameters and "parameters" may
 * both be given (a parameter set in both is an error naming both).
 */
#include "request.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "request_internal.h"
#include "util/json.h"

struct gen_state {
	const struct serve_model_config *cfg;
	struct serve_request *r;
	struct rbln_error *err;
	const char *seen_where[64];	/* per input index: where it was given */
	bool seen[64];
	bool stream_set, exclude_set;
	bool exclude;
	bool have_prompt;
};

static const char *in_where(const char *where)
{
	return where ? where : "the top level";
}

/* A tensor value is a primitive or a one-element list: [true] is true. */
static json_object *scalar(json_object *v)
{
	if (json_object_is_type(v, json_type_array) && json_object_array_length(v) == 1)
		return json_object_array_get_idx(v, 0);
	return v;
}

static int get_flag(struct gen_state *s, const char *key, json_object *v, bool *out)
{
	json_object *x = scalar(v);

	if (!json_object_is_type(x, json_type_boolean))
		return rbln_error_set(s->err, -EINVAL, "field '%s' must be true or false, got %s",
				      key, rbln_json_type_name(x));
	*out = json_object_get_boolean(x);
	return 0;
}

static int take_prompt(struct gen_state *s, const char *key, json_object *v)
{
	json_object *x = scalar(v);

	if (json_object_is_type(v, json_type_array) && json_object_array_length(v) != 1)
		return rbln_error_set(s->err, -EINVAL, "field '%s' must hold one prompt, got %zu",
				      key, json_object_array_length(v));
	if (!json_object_is_type(x, json_type_string))
		return rbln_error_set(s->err, -EINVAL, "field '%s' must be a string, got %s", key,
				      rbln_json_type_name(x));
	s->have_prompt = true;
	return serve_prompt_add_text(s->r, json_object_get_string(x),
				     (size_t)json_object_get_string_len(x), s->err);
}

static int apply_role(struct gen_state *s, enum serve_io_role role, const char *key,
		      json_object *v, const char *where)
{
	struct serve_request *r = s->r;
	json_object *x;
	bool b;
	int rc;

	switch (role) {
	case SERVE_IN_PROMPT:
		return take_prompt(s, key, v);
	case SERVE_IN_STREAM:
		s->stream_set = true;
		return get_flag(s, key, v, &r->stream);
	case SERVE_IN_EXCLUDE_INPUT:
		s->exclude_set = true;
		return get_flag(s, key, v, &s->exclude);
	case SERVE_IN_SAMPLING_PARAMETERS:
		x = scalar(v);
		if (json_object_is_type(x, json_type_string))
			return serve_params_apply_json_string(&r->opts, json_object_get_string(x),
							      (size_t)json_object_get_string_len(x),
							      s->err);
		if (json_object_is_type(x, json_type_object))
			return serve_params_apply_object(&r->opts, x, SERVE_DIALECT_TRITON,
							 "sampling_parameters", s->err);
		return rbln_error_set(s->err, -EINVAL, "field 'sampling_parameters' must be a JSON "
				      "string (or object), got %s", rbln_json_type_name(x));
	case SERVE_IN_RETURN_FINISH_REASON:
	case SERVE_IN_RETURN_CUMULATIVE_LOGPROB:
	case SERVE_IN_RETURN_LOGPROBS:
	case SERVE_IN_RETURN_NUM_INPUT_TOKENS:
	case SERVE_IN_RETURN_NUM_OUTPUT_TOKENS:
		rc = get_flag(s, key, v, &b);
		if (rc)
			return rc;
		if (role == SERVE_IN_RETURN_FINISH_REASON)
			r->ret_finish_reason = b;
		else if (role == SERVE_IN_RETURN_CUMULATIVE_LOGPROB)
			r->ret_cumulative_logprob = b;
		else if (role == SERVE_IN_RETURN_LOGPROBS)
			r->ret_logprobs = b;
		else if (role == SERVE_IN_RETURN_NUM_INPUT_TOKENS)
			r->ret_num_input_tokens = b;
		else
			r->ret_num_output_tokens = b;
		return 0;
	case SERVE_IN_PARAM: {
		/* stop_words and bad_words are lists; other parameters one value */
		bool list = !strcmp(key, "stop_words") || !strcmp(key, "bad_words") ||
			    !strcmp(key, "stop") || !strcmp(key, "stop_token_ids");

		rc = serve_params_apply(&r->opts, key, list ? v : scalar(v), SERVE_DIALECT_TRITON,
					where, s->err);
		return rc > 0 ? rbln_error_set(s->err, -EINVAL, "unknown field '%s'", key) : rc;
	}
	default:
		break;
	}
	return rbln_error_set(s->err, -EINVAL, "field '%s' cannot be given in a request", key);
}

/* Fixed-meaning names, honoured even when the configuration does not declare them. */
static int fixed_role(const char *key, enum serve_io_role *role)
{
	static const struct {
		const char *name;
		enum serve_io_role role;
	} names[] = {
		{ "stream", SERVE_IN_STREAM },
		{ "sampling_parameters", SERVE_IN_SAMPLING_PARAMETERS },
		{ "exclude_input_in_output", SERVE_IN_EXCLUDE_INPUT },
		{ "return_finish_reason", SERVE_IN_RETURN_FINISH_REASON },
		{ "return_cumulative_logprob", SERVE_IN_RETURN_CUMULATIVE_LOGPROB },
		{ "return_logprobs", SERVE_IN_RETURN_LOGPROBS },
		{ "return_num_input_tokens", SERVE_IN_RETURN_NUM_INPUT_TOKENS },
		{ "return_num_output_tokens", SERVE_IN_RETURN_NUM_OUTPUT_TOKENS },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i].name, key)) {
			*role = names[i].role;
			return 1;
		}
	return 0;
}

static int apply_key(struct gen_state *s, const char *key, json_object *v, const char *where)
{
	const struct serve_model_config *cfg = s->cfg;
	const struct serve_tensor *t = serve_model_input(cfg, key);
	enum serve_io_role role;
	int rc;

	if (t) {
		size_t idx = (size_t)(t - cfg->inputs);

		if (idx < 64) {
			if (s->seen[idx])
				return rbln_error_set(s->err, -EINVAL, "field '%s' given twice (in %s "
						      "and in %s)", key, in_where(s->seen_where[idx]),
						      in_where(where));
			s->seen[idx] = true;
			s->seen_where[idx] = where;
		}
		if (json_object_is_type(v, json_type_null))
			return 0;
		return apply_role(s, t->role, key, v, where);
	}
	if (json_object_is_type(v, json_type_null))
		return 0;
	if (fixed_role(key, &role))
		return apply_role(s, role, key, v, where);
	if (!strcmp(key, "timeout")) {
		json_object *x = scalar(v);

		if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) < 0)
			return rbln_error_set(s->err, -EINVAL, "field 'timeout' must be an integer "
					      "number of microseconds >= 0");
		s->r->timeout_us = json_object_get_int64(x);
		return 0;
	}
	rc = serve_params_apply(&s->r->opts, key, scalar(v), SERVE_DIALECT_TRITON, where, s->err);
	if (rc <= 0)
		return rc;
	if (!strcmp(key, "text_input") || !strcmp(key, "prompt") || !strcmp(key, "PROMPT"))
		return rbln_error_set(s->err, -EINVAL, "unknown field '%s': the prompt input of model "
				      "'%s' is '%s'", key, cfg->name,
				      cfg->inputs[cfg->prompt_input].name);
	return rbln_error_set(s->err, -EINVAL, "unknown field '%s'%s%s", key,
			      where ? " in " : "", where ? where : "");
}

int serve_parse_generate(const struct serve_model_config *cfg, const char *body, size_t len,
			 bool stream_endpoint, struct serve_request *r, struct rbln_error *err)
{
	struct gen_state s = { .cfg = cfg, .r = r, .err = err };
	json_object *o;
	size_t i;
	int rc;

	serve_request_init(r, SERVE_API_GENERATE);
	r->sse = stream_endpoint;
	rc = serve_request_body(body, len, true, &o, err);
	if (rc)
		return rc;
	{
		json_object_object_foreach(o, key, val) {
			if (!strcmp(key, "parameters")) {
				if (json_object_is_type(val, json_type_null))
					continue;
				if (!json_object_is_type(val, json_type_object)) {
					rc = rbln_error_set(err, -EINVAL, "field 'parameters' must be "
							    "an object, got %s",
							    rbln_json_type_name(val));
					break;
				}
				json_object_object_foreach(val, pk, pv) {
					if (!strcmp(pk, "parameters")) {
						rc = rbln_error_set(err, -EINVAL, "'parameters' "
								    "inside 'parameters'");
						break;
					}
					rc = apply_key(&s, pk, pv, "parameters");
					if (rc)
						break;
				}
			} else if (!strcmp(key, "id")) {
				if (!json_object_is_type(val, json_type_string)) {
					rc = rbln_error_set(err, -EINVAL, "field 'id' must be a "
							    "string");
					break;
				}
				free(r->id);
				r->id = strdup(json_object_get_string(val));
				if (!r->id)
					rc = rbln_error_set(err, -ENOMEM, "out of memory");
			} else {
				rc = apply_key(&s, key, val, NULL);
			}
			if (rc)
				break;
		}
	}
	json_object_put(o);
	if (rc)
		goto fail;
	for (i = 0; i < cfg->n_inputs && i < 64; i++) {
		if (!s.seen[i] && !cfg->inputs[i].optional) {
			rc = rbln_error_set(err, -EINVAL, "missing required input '%s' for model '%s' "
					    "(declared in config.pbtxt without optional: true)",
					    cfg->inputs[i].name, cfg->name);
			goto fail;
		}
	}
	if (!s.have_prompt) {
		rc = rbln_error_set(err, -EINVAL, "missing the prompt: field '%s'",
				    cfg->inputs[cfg->prompt_input].name);
		goto fail;
	}
	/*
	 * The vLLM backend prepends the prompt unless exclude_input_in_output,
	 * except when streaming, where prepending is refused.
	 */
	if (r->stream && s.exclude_set && !s.exclude) {
		rc = rbln_error_set(err, -EINVAL, "When streaming, `exclude_input_in_output` = False "
				    "is not allowed.");
		goto fail;
	}
	r->prepend_input = s.exclude_set ? !s.exclude : !r->stream && !cfg->exclude_input_default;
	if (r->stream && !stream_endpoint) {
		rc = rbln_error_set(err, -EINVAL, "generate expects model to produce exactly 1 "
				    "response, use generate stream for model that generates "
				    "various number of responses");
		goto fail;
	}
	return 0;
fail:
	serve_request_free(r);
	return rc;
}
