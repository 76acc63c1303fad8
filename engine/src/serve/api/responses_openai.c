// SPDX-License-Identifier: MIT
/*
 * OpenAI response bodies: text_completion and chat.completion objects,
 * their stream chunks, usage, log-probabilities in each API's format, and
 * vLLM's stop_reason (the stop string or token that ended a choice).
 */
#include "responses.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool is_chat(const struct serve_resp_ctx *c)
{
	return c->req->api == SERVE_API_CHAT;
}

static json_object *finish_value(const struct serve_piece *p)
{
	if (!p->final)
		return NULL;	/* JSON null while the choice goes on */
	return json_object_new_string(serve_finish_reason_name(p->reason, true));
}

static json_object *stop_reason_value(const struct serve_piece *p)
{
	if (!p->final)
		return NULL;
	if (p->stop_str)
		return json_object_new_string(p->stop_str);
	if (p->stop_token_id >= 0 && p->reason == RBLN_FINISH_STOP)
		return json_object_new_int64(p->stop_token_id);
	return NULL;
}

static json_object *byte_list(const char *s, size_t n)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		json_object_array_add(a, json_object_new_int64((unsigned char)s[i]));
	return a;
}

/* Chat: {"content": [{"token", "logprob", "bytes", "top_logprobs": [...]}]}. */
static json_object *chat_logprobs(const struct serve_piece *p)
{
	json_object *o = json_object_new_object(), *content = json_object_new_array();
	size_t i, k;

	for (i = 0; i < p->n_lps; i++) {
		const struct serve_lp_entry *e = &p->lps[i];
		json_object *t = json_object_new_object(), *tops = json_object_new_array();

		json_object_object_add(t, "token", json_object_new_string_len(e->token,
									    (int)e->token_len));
		json_object_object_add(t, "logprob", json_object_new_double(e->logprob));
		json_object_object_add(t, "bytes", byte_list(e->token, e->token_len));
		for (k = 0; k < e->n_top; k++) {
			json_object *a = json_object_new_object();

			json_object_object_add(a, "token",
					       json_object_new_string_len(e->top[k].token,
									  (int)e->top[k].token_len));
			json_object_object_add(a, "logprob", json_object_new_double(e->top[k].logprob));
			json_object_object_add(a, "bytes", byte_list(e->top[k].token,
								     e->top[k].token_len));
			json_object_array_add(tops, a);
		}
		json_object_object_add(t, "top_logprobs", tops);
		json_object_array_add(content, t);
	}
	json_object_object_add(o, "content", content);
	return o;
}

/* Completions: {"tokens", "token_logprobs", "top_logprobs", "text_offset"}. */
static json_object *completion_logprobs(const struct serve_piece *p)
{
	json_object *o = json_object_new_object();
	json_object *tokens = json_object_new_array(), *lps = json_object_new_array();
	json_object *tops = json_object_new_array(), *offs = json_object_new_array();
	size_t i, k, off = p->text_offset;

	for (i = 0; i < p->n_lps; i++) {
		const struct serve_lp_entry *e = &p->lps[i];
		json_object *top = json_object_new_object();
		char *key;

		json_object_array_add(tokens, json_object_new_string_len(e->token, (int)e->token_len));
		json_object_array_add(lps, json_object_new_double(e->logprob));
		for (k = 0; k < e->n_top; k++) {
			key = strndup(e->top[k].token, e->top[k].token_len);
			if (key)
				json_object_object_add(top, key,
						       json_object_new_double(e->top[k].logprob));
			free(key);
		}
		json_object_array_add(tops, top);
		json_object_array_add(offs, json_object_new_int64((int64_t)off));
		off += e->token_len;
	}
	json_object_object_add(o, "tokens", tokens);
	json_object_object_add(o, "token_logprobs", lps);
	json_object_object_add(o, "top_logprobs", tops);
	json_object_object_add(o, "text_offset", offs);
	return o;
}

static json_object *logprobs_value(const struct serve_resp_ctx *c, const struct serve_piece *p)
{
	if (!p->lps)
		return NULL;
	return is_chat(c) ? chat_logprobs(p) : completion_logprobs(p);
}

static json_object *envelope(const struct serve_resp_ctx *c, bool chunk)
{
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "id", json_object_new_string(c->id ? c->id : ""));
	json_object_object_add(o, "object", json_object_new_string(
		is_chat(c) ? (chunk ? "chat.completion.chunk" : "chat.completion")
			   : "text_completion"));
	json_object_object_add(o, "created", json_object_new_int64(c->created));
	json_object_object_add(o, "model", json_object_new_string(c->model_name));
	return o;
}

static json_object *usage_value(const struct serve_usage *u)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "prompt_tokens", json_object_new_int64((int64_t)u->prompt_tokens));
	json_object_object_add(o, "completion_tokens",
			       json_object_new_int64((int64_t)u->completion_tokens));
	json_object_object_add(o, "total_tokens",
			       json_object_new_int64((int64_t)(u->prompt_tokens +
							       u->completion_tokens)));
	return o;
}

json_object *serve_openai_json(const struct serve_resp_ctx *c, const struct serve_piece *pieces,
			       size_t n, const struct serve_usage *u)
{
	json_object *o = envelope(c, false), *choices = json_object_new_array();
	size_t i;

	if (!o || !choices) {
		json_object_put(o);
		json_object_put(choices);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		const struct serve_piece *p = &pieces[i];
		json_object *ch = json_object_new_object();

		json_object_object_add(ch, "index", json_object_new_int64((int64_t)p->index));
		if (is_chat(c)) {
			json_object *m = json_object_new_object();

			json_object_object_add(m, "role", json_object_new_string("assistant"));
			json_object_object_add(m, "content",
					       json_object_new_string_len(p->text, (int)p->text_len));
			json_object_object_add(ch, "message", m);
		} else {
			json_object_object_add(ch, "text",
					       json_object_new_string_len(p->text, (int)p->text_len));
		}
		json_object_object_add(ch, "logprobs", logprobs_value(c, p));
		json_object_object_add(ch, "finish_reason", finish_value(p));
		json_object_object_add(ch, "stop_reason", stop_reason_value(p));
		json_object_array_add(choices, ch);
	}
	json_object_object_add(o, "choices", choices);
	json_object_object_add(o, "usage", usage_value(u));
	return o;
}

json_object *serve_openai_chunk_json(const struct serve_resp_ctx *c, const struct serve_piece *p)
{
	json_object *o = envelope(c, true), *choices = json_object_new_array();
	json_object *ch = json_object_new_object();

	if (!o || !choices || !ch) {
		json_object_put(o);
		json_object_put(choices);
		json_object_put(ch);
		return NULL;
	}
	json_object_object_add(ch, "index", json_object_new_int64((int64_t)p->index));
	if (is_chat(c)) {
		json_object *d = json_object_new_object();

		/* The first chunk of a choice names the role, as OpenAI's do. */
		if (p->first)
			json_object_object_add(d, "role", json_object_new_string("assistant"));
		if (p->text_len || p->first)
			json_object_object_add(d, "content",
					       json_object_new_string_len(p->text, (int)p->text_len));
		json_object_object_add(ch, "delta", d);
	} else {
		json_object_object_add(ch, "text", json_object_new_string_len(p->text,
									      (int)p->text_len));
	}
	json_object_object_add(ch, "logprobs", logprobs_value(c, p));
	json_object_object_add(ch, "finish_reason", finish_value(p));
	if (p->final)
		json_object_object_add(ch, "stop_reason", stop_reason_value(p));
	json_object_array_add(choices, ch);
	json_object_object_add(o, "choices", choices);
	if (c->req->include_usage)
		json_object_object_add(o, "usage", NULL);
	return o;
}

json_object *serve_openai_usage_chunk_json(const struct serve_resp_ctx *c,
					   const struct serve_usage *u)
{
	json_object *o = envelope(c, true);

	if (!o)
		return NULL;
	json_object_object_add(o, "choices", json_object_new_array());
	json_object_object_add(o, "usage", usage_value(u));
	return o;
}

json_object *serve_openai_error_json(const char *msg, int http_status)
{
	json_object *o = json_object_new_object(), *e = json_object_new_object();
	const char *type = http_status == 404 ? "NotFoundError"
			 : http_status == 503 ? "ServiceUnavailableError"
			 : http_status >= 500 ? "InternalServerError" : "BadRequestError";

	if (!o || !e) {
		json_object_put(o);
		json_object_put(e);
		return NULL;
	}
	json_object_object_add(e, "message", json_object_new_string(msg));
	json_object_object_add(e, "type", json_object_new_string(type));
	json_object_object_add(e, "param", NULL);
	json_object_object_add(e, "code", json_object_new_int64(http_status));
	json_object_object_add(o, "error", e);
	return o;
}
