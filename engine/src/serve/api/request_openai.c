// SPDX-License-Identifier: MIT
/*
 * OpenAI /v1/completions and /v1/chat/completions requests, with the
 * sampling fields vLLM's OpenAI server adds (top_k, min_p,
 * repetition_penalty, ignore_eos, stop_token_ids, ...).  The OpenAI API
 * rejects arguments it does not know, and so do we, naming the field.
 */
#include "request.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "request_internal.h"
#include "util/json.h"
#include "util/strbuf.h"

static int bad(struct rbln_error *err, const char *field, const char *what)
{
	return rbln_error_set(err, -EINVAL, "field '%s' %s", field, what);
}

static int get_bool(json_object *v, const char *field, bool *out, struct rbln_error *err)
{
	if (!json_object_is_type(v, json_type_boolean))
		return rbln_error_set(err, -EINVAL, "field '%s' must be true or false, got %s",
				      field, rbln_json_type_name(v));
	*out = json_object_get_boolean(v);
	return 0;
}

static int get_int(json_object *v, const char *field, int64_t min, int64_t max, int64_t *out,
		   struct rbln_error *err)
{
	int64_t x;

	if (!json_object_is_type(v, json_type_int))
		return rbln_error_set(err, -EINVAL, "field '%s' must be an integer, got %s", field,
				      rbln_json_type_name(v));
	x = json_object_get_int64(v);
	if (x < min || x > max)
		return rbln_error_set(err, -EINVAL, "field '%s' must be between %lld and %lld, got "
				      "%lld", field, (long long)min, (long long)max, (long long)x);
	*out = x;
	return 0;
}

/* Fields common to both endpoints; 1 = not one of them. */
static int common_field(struct serve_request *r, const char *key, json_object *v,
			struct rbln_error *err)
{
	int64_t x;
	int rc;

	if (!strcmp(key, "model")) {
		if (!json_object_is_type(v, json_type_string))
			return bad(err, "model", "must be a string");
		free(r->model);
		r->model = strdup(json_object_get_string(v));
		return r->model ? 0 : rbln_error_set(err, -ENOMEM, "out of memory");
	}
	if (!strcmp(key, "stream")) {
		rc = get_bool(v, key, &r->stream, err);
		r->sse = r->stream;
		return rc;
	}
	if (!strcmp(key, "stream_options")) {
		if (!json_object_is_type(v, json_type_object))
			return bad(err, "stream_options", "must be an object");
		json_object_object_foreach(v, k, sv) {
			if (!strcmp(k, "include_usage")) {
				rc = get_bool(sv, "stream_options.include_usage", &r->include_usage,
					      err);
				if (rc)
					return rc;
			} else if (!strcmp(k, "continuous_usage_stats")) {
				bool b;

				rc = get_bool(sv, "stream_options.continuous_usage_stats", &b, err);
				if (rc)
					return rc;
				if (b)
					return bad(err, "stream_options.continuous_usage_stats",
						   "is not supported");
			} else {
				return rbln_error_set(err, -EINVAL, "unknown field "
						      "'stream_options.%s'", k);
			}
		}
		return 0;
	}
	if (!strcmp(key, "n")) {
		rc = get_int(v, "n", 1, 128, &x, err);
		r->n = (size_t)x;
		return rc;
	}
	if (!strcmp(key, "user"))
		return json_object_is_type(v, json_type_string) ? 0
								: bad(err, "user", "must be a string");
	if (!strcmp(key, "logit_bias")) {
		if (json_object_is_type(v, json_type_object) && !json_object_object_length(v))
			return 0;
		return bad(err, "logit_bias", "is not supported");
	}
	if (!strcmp(key, "response_format")) {
		json_object *t;

		if (json_object_is_type(v, json_type_object) &&
		    json_object_object_get_ex(v, "type", &t) &&
		    json_object_is_type(t, json_type_string) &&
		    !strcmp(json_object_get_string(t), "text"))
			return 0;
		return bad(err, "response_format", "is not supported except {\"type\": \"text\"}");
	}
	if (!strcmp(key, "add_special_tokens"))
		return get_bool(v, key, &r->add_special_tokens, err);
	if (!strcmp(key, "best_of")) {
		rc = get_int(v, key, 1, 128, &x, err);
		if (rc)
			return rc;
		return (size_t)x == r->n || x == 1 ? 0 : bad(err, "best_of", "must equal n: best-of "
							      "search is not supported");
	}
	return 1;
}

static int apply_param(struct serve_request *r, const char *key, json_object *v,
		       struct rbln_error *err)
{
	int rc = serve_params_apply(&r->opts, key, v, SERVE_DIALECT_OPENAI, NULL, err);

	if (rc > 0)
		return rbln_error_set(err, -EINVAL, "unknown field '%s'", key);
	return rc;
}

static int add_id_prompt(struct serve_request *r, json_object *arr, const char *field,
			 struct rbln_error *err)
{
	size_t n = json_object_array_length(arr), i;
	struct serve_prompt *np;
	int32_t *ids;

	if (!n)
		return bad(err, field, "is an empty list of token ids");
	ids = malloc(n * sizeof(*ids));
	if (!ids)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		if (!json_object_is_type(e, json_type_int) || json_object_get_int64(e) < 0 ||
		    json_object_get_int64(e) > INT32_MAX) {
			free(ids);
			return rbln_error_set(err, -EINVAL, "field '%s' entry %zu must be a token "
					      "id >= 0", field, i);
		}
		ids[i] = (int32_t)json_object_get_int64(e);
	}
	np = realloc(r->prompts, (r->n_prompts + 1) * sizeof(*np));
	if (!np) {
		free(ids);
		return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	r->prompts = np;
	memset(&np[r->n_prompts], 0, sizeof(*np));
	np[r->n_prompts].ids = ids;
	np[r->n_prompts].n_ids = n;
	r->n_prompts++;
	return 0;
}

/* A string, a list of strings, a list of ids, or a list of id lists. */
static int read_prompt(struct serve_request *r, json_object *v, struct rbln_error *err)
{
	size_t n, i;
	json_object *first;
	int rc;

	if (json_object_is_type(v, json_type_string))
		return serve_prompt_add_text(r, json_object_get_string(v),
					     (size_t)json_object_get_string_len(v), err);
	if (!json_object_is_type(v, json_type_array) || !json_object_array_length(v))
		return bad(err, "prompt", "must be a string, a list of strings, or token ids");
	n = json_object_array_length(v);
	first = json_object_array_get_idx(v, 0);
	if (json_object_is_type(first, json_type_int))
		return add_id_prompt(r, v, "prompt", err);
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);

		if (json_object_is_type(e, json_type_string))
			rc = serve_prompt_add_text(r, json_object_get_string(e),
						   (size_t)json_object_get_string_len(e), err);
		else if (json_object_is_type(e, json_type_array))
			rc = add_id_prompt(r, e, "prompt", err);
		else
			rc = rbln_error_set(err, -EINVAL, "field 'prompt' entry %zu must be a string "
					    "or a list of token ids", i);
		if (rc)
			return rc;
	}
	return 0;
}

static int finish_common(struct serve_request *r, struct rbln_error *err)
{
	if (r->include_usage && !r->stream)
		return bad(err, "stream_options", "is only allowed with stream: true");
	if (r->n_prompts * r->n > 256)
		return rbln_error_set(err, -EINVAL, "%zu prompts times n=%zu is more than 256 "
				      "sequences in one request", r->n_prompts, r->n);
	return 0;
}

/* A field of one endpoint only: 0, or an error set in @err. */
typedef int (*endpoint_field_fn)(struct serve_request *r, const char *key, json_object *v,
				 void *ctx, struct rbln_error *err);

/*
 * Parses an OpenAI body and walks its fields once: nulls mean "not given",
 * @main_key (the prompt or the messages, read last since the other fields
 * decide how) is left in *@main and is required, the fields both endpoints
 * share go to common_field(), the rest to @field. *@o is the parsed body,
 * or NULL; the caller puts it when done with *@main, on success or not.
 */
static int walk_body(const char *body, size_t len, struct serve_request *r,
		     const char *main_key, json_object **o, json_object **main,
		     endpoint_field_fn field, void *ctx, struct rbln_error *err)
{
	int rc;

	*o = *main = NULL;
	rc = serve_request_body(body, len, false, o, err);
	if (rc) {
		*o = NULL;
		return rc;
	}
	{
		json_object_object_foreach(*o, key, v) {
			if (json_object_is_type(v, json_type_null))
				continue;
			if (!strcmp(key, main_key)) {
				*main = v;
				continue;
			}
			rc = common_field(r, key, v, err);
			if (rc > 0)
				rc = field(r, key, v, ctx, err);
			if (rc)
				return rc;
		}
	}
	return *main ? 0 : bad(err, main_key, "is required");
}

static int completions_field(struct serve_request *r, const char *key, json_object *v,
			     void *ctx, struct rbln_error *err)
{
	int64_t x;
	int rc;

	(void)ctx;
	if (!strcmp(key, "echo"))
		return get_bool(v, key, &r->echo, err);
	if (!strcmp(key, "logprobs")) {
		rc = get_int(v, key, 0, RBLN_SAMPLING_MAX_LOGPROBS, &x, err);
		r->opts.sp.logprobs = (int32_t)x;
		return rc;
	}
	if (!strcmp(key, "suffix"))
		return bad(err, "suffix", "is not supported");
	return apply_param(r, key, v, err);
}

int serve_parse_completions(const char *body, size_t len, struct serve_request *r,
			    struct rbln_error *err)
{
	json_object *o, *prompt;
	int rc;

	serve_request_init(r, SERVE_API_COMPLETIONS);
	r->add_special_tokens = true;
	rc = walk_body(body, len, r, "prompt", &o, &prompt, completions_field, NULL, err);
	if (!rc)
		rc = read_prompt(r, prompt, err);
	json_object_put(o);
	if (!rc)
		rc = finish_common(r, err);
	if (rc)
		serve_request_free(r);
	return rc;
}

/* OpenAI content parts: the text ones joined with newlines, as vLLM does. */
static int flatten_content(json_object *msg, size_t index, struct rbln_error *err)
{
	json_object *content;
	struct rbln_strbuf sb = { 0 };
	size_t i, n;
	char *text;

	if (!json_object_object_get_ex(msg, "content", &content) ||
	    !json_object_is_type(content, json_type_array))
		return 0;
	n = json_object_array_length(content);
	for (i = 0; i < n; i++) {
		json_object *part = json_object_array_get_idx(content, i), *type, *t;

		if (!json_object_is_type(part, json_type_object) ||
		    !json_object_object_get_ex(part, "type", &type) ||
		    !json_object_is_type(type, json_type_string)) {
			rbln_strbuf_free(&sb);
			return rbln_error_set(err, -EINVAL, "field 'messages[%zu].content[%zu]' must "
					      "be an object with a 'type'", index, i);
		}
		if (strcmp(json_object_get_string(type), "text")) {
			rbln_strbuf_free(&sb);
			return rbln_error_set(err, -EINVAL, "field 'messages[%zu].content[%zu].type': "
					      "'%s' is not supported (text only)", index, i,
					      json_object_get_string(type));
		}
		if (!json_object_object_get_ex(part, "text", &t) ||
		    !json_object_is_type(t, json_type_string)) {
			rbln_strbuf_free(&sb);
			return rbln_error_set(err, -EINVAL, "field 'messages[%zu].content[%zu].text' "
					      "must be a string", index, i);
		}
		if ((i && rbln_strbuf_append_char(&sb, '\n')) ||
		    rbln_strbuf_append(&sb, json_object_get_string(t),
				       (size_t)json_object_get_string_len(t))) {
			rbln_strbuf_free(&sb);
			return rbln_error_set(err, -ENOMEM, "out of memory");
		}
	}
	text = rbln_strbuf_steal(&sb, &n);
	if (!text)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	json_object_object_add(msg, "content", json_object_new_string_len(text, (int)n));
	free(text);
	return 0;
}

static int read_messages(struct serve_request *r, json_object *v, struct rbln_error *err)
{
	size_t n, i;
	const char *text;
	int rc;

	if (!json_object_is_type(v, json_type_array) || !json_object_array_length(v))
		return bad(err, "messages", "must be a non-empty list of messages");
	n = json_object_array_length(v);
	for (i = 0; i < n; i++) {
		json_object *m = json_object_array_get_idx(v, i), *role, *content;

		if (!json_object_is_type(m, json_type_object))
			return rbln_error_set(err, -EINVAL, "field 'messages[%zu]' must be an object",
					      i);
		if (!json_object_object_get_ex(m, "role", &role) ||
		    !json_object_is_type(role, json_type_string))
			return rbln_error_set(err, -EINVAL, "field 'messages[%zu].role' must be a "
					      "string", i);
		if (json_object_object_get_ex(m, "content", &content) &&
		    !json_object_is_type(content, json_type_string) &&
		    !json_object_is_type(content, json_type_array) &&
		    !json_object_is_type(content, json_type_null))
			return rbln_error_set(err, -EINVAL, "field 'messages[%zu].content' must be a "
					      "string or a list of parts", i);
		rc = flatten_content(m, i, err);
		if (rc)
			return rc;
	}
	text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
					      JSON_C_TO_STRING_NOSLASHESCAPE);
	r->messages_json = text ? strdup(text) : NULL;
	return r->messages_json ? 0 : rbln_error_set(err, -ENOMEM, "out of memory");
}

/* What chat's logprobs fields said, checked together once all are read. */
struct chat_logprobs {
	bool logprobs;
	bool have_top;
	int64_t top;
};

static int chat_field(struct serve_request *r, const char *key, json_object *v, void *ctx,
		      struct rbln_error *err)
{
	struct chat_logprobs *lp = ctx;
	bool b;
	int rc;

	if (!strcmp(key, "logprobs"))
		return get_bool(v, key, &lp->logprobs, err);
	if (!strcmp(key, "top_logprobs")) {
		lp->have_top = true;
		return get_int(v, key, 0, RBLN_SAMPLING_MAX_LOGPROBS, &lp->top, err);
	}
	if (!strcmp(key, "add_generation_prompt"))
		return get_bool(v, key, &r->add_generation_prompt, err);
	if (!strcmp(key, "continue_final_message"))
		return get_bool(v, key, &r->continue_final_message, err);
	if (!strcmp(key, "chat_template_kwargs")) {
		if (!json_object_is_type(v, json_type_object))
			return bad(err, key, "must be an object");
		r->chat_kwargs_json = strdup(json_object_to_json_string_ext(
			v, JSON_C_TO_STRING_PLAIN));
		return r->chat_kwargs_json ? 0 : rbln_error_set(err, -ENOMEM, "out of memory");
	}
	if (!strcmp(key, "tools") || !strcmp(key, "tool_choice") ||
	    !strcmp(key, "functions") || !strcmp(key, "function_call") ||
	    !strcmp(key, "chat_template") || !strcmp(key, "documents"))
		return bad(err, key, "is not supported");
	if (!strcmp(key, "parallel_tool_calls"))
		return json_object_is_type(v, json_type_boolean) ? 0
			: bad(err, key, "must be true or false");
	if (!strcmp(key, "echo")) {
		rc = get_bool(v, key, &b, err);
		return !rc && b ? bad(err, key, "is not supported for chat") : rc;
	}
	return apply_param(r, key, v, err);
}

int serve_parse_chat(const char *body, size_t len, struct serve_request *r,
		     struct rbln_error *err)
{
	struct chat_logprobs lp = { 0 };
	json_object *o, *messages;
	int rc;

	serve_request_init(r, SERVE_API_CHAT);
	r->add_generation_prompt = true;
	rc = walk_body(body, len, r, "messages", &o, &messages, chat_field, &lp, err);
	if (!rc)
		rc = read_messages(r, messages, err);
	json_object_put(o);
	if (!rc && lp.have_top && !lp.logprobs)
		rc = bad(err, "top_logprobs", "needs logprobs: true");
	if (!rc && r->continue_final_message && r->add_generation_prompt)
		rc = rbln_error_set(err, -EINVAL, "fields 'continue_final_message' and "
				    "'add_generation_prompt' cannot both be true");
	if (!rc && lp.logprobs) {
		r->chat_logprobs = true;
		r->opts.sp.logprobs = (int32_t)lp.top;
	}
	if (!rc)
		rc = finish_common(r, err);
	if (rc)
		serve_request_free(r);
	return rc;
}
