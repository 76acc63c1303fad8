// SPDX-License-Identifier: MIT
/*
 * From parsed request to engine input (see request_build.h).  Tokenization
 * follows vLLM: generate, infer and completions add the tokenizer's special
 * tokens (BOS), chat does not (the template writes them); bad words are
 * banned both as written and with a leading space, the way vLLM builds
 * their token sequences.
 */
#include "request_build.h"

#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "util/utf8.h"

#define SP(f) ((enum serve_param_target)(SERVE_T_SP_BASE + (f)))

void serve_built_free(struct serve_built *b)
{
	size_t i;

	for (i = 0; i < b->n_prompts; i++) {
		free(b->prompts[i].ids);
		free(b->prompts[i].text);
	}
	free(b->prompts);
	for (i = 0; i < b->n_bad_words; i++)
		free((int32_t *)b->bad_words[i].ids);
	free(b->bad_words);
	free(b->stop_ids);
	memset(b, 0, sizeof(*b));
}

static bool is_set(const struct serve_request *r, enum rbln_sampling_field f)
{
	return r->opts.set_by[SP(f)] != NULL;
}

/* vLLM's defaults, then the model's generation_config.json, then the request. */
static void apply_defaults(const struct serve_model_text *m, struct serve_request *r)
{
	const struct serve_gen_defaults *d = &m->defaults;
	struct rbln_sampling_params *p = &r->opts.sp;

	if (d->has_temperature && !is_set(r, RBLN_SP_TEMPERATURE))
		p->temperature = d->temperature;
	if (d->has_top_p && !is_set(r, RBLN_SP_TOP_P))
		p->top_p = d->top_p;
	if (d->has_top_k && !is_set(r, RBLN_SP_TOP_K))
		p->top_k = (int32_t)d->top_k;
	if (d->has_min_p && !is_set(r, RBLN_SP_MIN_P))
		p->min_p = d->min_p;
	if (d->has_repetition_penalty && !is_set(r, RBLN_SP_REPETITION_PENALTY))
		p->repetition_penalty = d->repetition_penalty;
	if (!r->opts.max_tokens_set) {
		/*
		 * OpenAI completions default to 16 tokens.  Elsewhere the answer
		 * runs to EOS or the context's end: the RBLN tutorial's answer is
		 * longer than the 16 tokens of vLLM's SamplingParams default, and a
		 * server that cuts answers at 16 tokens surprises everyone.
		 */
		if (r->api == SERVE_API_COMPLETIONS)
			p->max_tokens = 16;
		else if (d->has_max_new_tokens)
			p->max_tokens = d->max_new_tokens;
		else
			p->max_tokens = -1;
	}
}

size_t serve_longest_token(const struct rbln_tokenizer *tok)
{
	size_t n = rbln_tokenizer_vocab_size(tok), longest = 1, len;
	int32_t id;

	for (id = 0; (size_t)id < n && id < INT32_MAX; id++)
		if (rbln_tokenizer_id_to_token(tok, id, &len) && len > longest)
			longest = len;
	return longest;
}

/* The most bytes of text that can still fit in max_model_len tokens. */
static size_t max_text_bytes(const struct serve_model_text *m)
{
	size_t per = m->longest_token ? m->longest_token : 1;

	if (m->max_model_len <= 0)
		return 0;
	return (size_t)m->max_model_len > SIZE_MAX / per ? SIZE_MAX
							  : (size_t)m->max_model_len * per;
}

/*
 * Tokenizes text.  The tokenizer's own messages name its file, a server
 * path a client must not see: the client gets what went wrong with its text.
 */
static int encode(const struct serve_model_text *m, const char *what, const char *text,
		  size_t len, bool special, struct rbln_ids *ids, struct rbln_error *err)
{
	struct rbln_error terr = { 0 };
	size_t cap = max_text_bytes(m), bad;
	int rc;

	if (len > cap)
		return rbln_error_set(err, -E2BIG, "%s is %zu bytes, more than can fit in "
				      "max_model_len %lld tokens of model '%s' (at most %zu "
				      "bytes)", what, len, (long long)m->max_model_len, m->name,
				      cap);
	rc = rbln_tokenizer_encode(m->tok, text, len, special ? RBLN_ENCODE_ADD_SPECIAL : 0, ids,
				   &terr);
	if (!rc)
		return 0;
	if (rc == -ENOMEM)
		return rbln_error_set(err, rc, "out of memory");
	if (!rbln_utf8_valid(text, len, &bad))
		return rbln_error_set(err, -EINVAL, "%s is not valid UTF-8 (byte %zu)", what, bad);
	return rbln_error_set(err, -EINVAL, "%s cannot be tokenized by model '%s'", what,
			      m->name);
}

/* transformers' continue_final_message: cut the rendering after the last message. */
static int cut_after_final(const char *messages_json, char *text, size_t *len,
			   struct rbln_error *err)
{
	json_object *arr = json_tokener_parse(messages_json), *last, *content;
	const char *c, *hit = NULL, *p;
	size_t clen, start = 0;
	int rc = 0;

	if (!arr || !json_object_is_type(arr, json_type_array) || !json_object_array_length(arr)) {
		json_object_put(arr);
		return rbln_error_set(err, -EINVAL, "field 'messages' is empty");
	}
	last = json_object_array_get_idx(arr, json_object_array_length(arr) - 1);
	if (!json_object_object_get_ex(last, "content", &content) ||
	    !json_object_is_type(content, json_type_string)) {
		json_object_put(arr);
		return rbln_error_set(err, -EINVAL, "continue_final_message needs the final "
				      "message to have text content");
	}
	c = json_object_get_string(content);
	clen = (size_t)json_object_get_string_len(content);
	/* The final message is searched stripped, as transformers does. */
	while (clen && (c[clen - 1] == ' ' || c[clen - 1] == '\n' || c[clen - 1] == '\t'))
		clen--;
	while (start < clen && (c[start] == ' ' || c[start] == '\n' || c[start] == '\t'))
		start++;
	for (p = text; clen > start && (p = memmem(p, *len - (size_t)(p - text), c + start,
					      clen - start)); p++)
		hit = p;
	if (!hit)
		rc = rbln_error_set(err, -EINVAL, "continue_final_message: the chat template does "
				    "not render the final message's content verbatim");
	else
		*len = (size_t)(hit - text) + (clen - start);
	if (!rc)
		text[*len] = '\0';
	json_object_put(arr);
	return rc;
}

static int build_prompt(const struct serve_model_text *m, const struct serve_request *r,
			const struct serve_prompt *in, struct serve_built_prompt *out,
			struct rbln_error *err)
{
	struct rbln_ids ids = { 0 };
	size_t i, len;
	int rc;

	if (r->api == SERVE_API_CHAT) {
		struct rbln_chat_options co = {
			.add_generation_prompt = r->add_generation_prompt,
			.extra_vars_json = r->chat_kwargs_json,
		};
		char *text;

		if (!m->chat)
			return rbln_error_set(err, -EINVAL, "model '%s' has no chat template "
					      "(chat_template.jinja or tokenizer_config.json); use "
					      "/v1/completions", m->name);
		rc = rbln_chat_render_json(m->chat, r->messages_json, strlen(r->messages_json), &co,
					   &text, &len, err);
		if (rc) {
			rbln_error_prefix(err, "field 'messages': ");
			return -EINVAL;
		}
		if (r->continue_final_message) {
			rc = cut_after_final(r->messages_json, text, &len, err);
			if (rc) {
				free(text);
				return rc;
			}
		}
		out->text = text;
		rc = encode(m, "the rendered chat", text, len, r->add_special_tokens, &ids, err);
	} else if (in->text) {
		out->text = strdup(in->text);
		if (!out->text)
			return rbln_error_set(err, -ENOMEM, "out of memory");
		rc = encode(m, "the prompt", in->text, strlen(in->text),
			    r->api != SERVE_API_COMPLETIONS || r->add_special_tokens, &ids, err);
	} else {
		for (i = 0; i < in->n_ids; i++)
			if (in->ids[i] >= m->vocab_size)
				return rbln_error_set(err, -EINVAL, "field 'prompt': token id %d is "
						      "outside the vocabulary (0..%lld)",
						      in->ids[i], (long long)m->vocab_size - 1);
		rc = rbln_tokenizer_decode(m->tok, in->ids, in->n_ids, 0, &out->text, &len, err);
		for (i = 0; !rc && i < in->n_ids; i++)
			rc = rbln_ids_push(&ids, in->ids[i]);
	}
	if (rc) {
		rbln_ids_free(&ids);
		return rc == -ENOMEM ? rbln_error_set(err, rc, "out of memory") : -EINVAL;
	}
	if (r->opts.truncate_prompt_tokens > 0 && ids.len > (size_t)r->opts.truncate_prompt_tokens) {
		size_t drop = ids.len - (size_t)r->opts.truncate_prompt_tokens;

		memmove(ids.ids, ids.ids + drop, (ids.len - drop) * sizeof(*ids.ids));
		ids.len -= drop;
	}
	out->ids = ids.ids;
	out->n_ids = ids.len;
	if (!ids.len)
		return rbln_error_set(err, -EINVAL, "the prompt is empty (0 tokens)");
	if ((int64_t)ids.len > m->max_model_len)
		return rbln_error_set(err, -E2BIG, "the prompt is %zu tokens, longer than "
				      "max_model_len %lld of model '%s'", ids.len,
				      (long long)m->max_model_len, m->name);
	/* OpenAI clients ask for an exact length; refuse one that cannot fit, as vLLM does. */
	if ((r->api == SERVE_API_COMPLETIONS || r->api == SERVE_API_CHAT) &&
	    r->opts.max_tokens_set &&
	    /* ids.len <= max_model_len here, so this difference cannot overflow. */
	    r->opts.sp.max_tokens > m->max_model_len - (int64_t)ids.len)
		return rbln_error_set(err, -E2BIG, "This model's maximum context length is %lld "
				      "tokens. However, you requested %llu tokens (%zu in the "
				      "prompt, %lld in the completion). Please reduce the length "
				      "of the prompt or completion.", (long long)m->max_model_len,
				      (unsigned long long)ids.len +
				      (unsigned long long)r->opts.sp.max_tokens, ids.len,
				      (long long)r->opts.sp.max_tokens);
	return 0;
}

static int add_bad(struct serve_built *b, struct rbln_ids *ids, struct rbln_error *err)
{
	struct rbln_token_seq *nb = realloc(b->bad_words, (b->n_bad_words + 1) * sizeof(*nb));

	if (!nb) {
		rbln_ids_free(ids);
		return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	b->bad_words = nb;
	nb[b->n_bad_words].ids = ids->ids;
	nb[b->n_bad_words].len = ids->len;
	b->n_bad_words++;
	memset(ids, 0, sizeof(*ids));
	return 0;
}

static int build_bad_words(const struct serve_model_text *m, const struct serve_request *r,
			   struct serve_built *b, struct rbln_error *err)
{
	size_t i;
	int rc;

	for (i = 0; i < r->opts.n_bad_words; i++) {
		const char *w = r->opts.bad_words[i];
		struct rbln_ids plain = { 0 }, spaced = { 0 };
		char *sp;
		size_t n;

		while (*w == ' ' || *w == '\t' || *w == '\n')
			w++;
		if (!*w)
			return rbln_error_set(err, -EINVAL, "field 'bad_words' entry %zu is empty",
					      i);
		n = strlen(w);
		rc = encode(m, "a bad word", w, n, false, &plain, err);
		if (rc)
			return rc == -ENOMEM ? rc : -EINVAL;
		sp = malloc(n + 2);
		if (!sp) {
			rbln_ids_free(&plain);
			return rbln_error_set(err, -ENOMEM, "out of memory");
		}
		sp[0] = ' ';
		memcpy(sp + 1, w, n + 1);
		rc = encode(m, "a bad word", sp, n + 1, false, &spaced, err);
		free(sp);
		if (rc) {
			rbln_ids_free(&plain);
			return rc == -ENOMEM ? rc : -EINVAL;
		}
		/* The spaced form counts when it is a different word of the same length. */
		if (spaced.len && plain.len && spaced.len == plain.len && spaced.ids[0] != plain.ids[0]) {
			rc = add_bad(b, &spaced, err);
			if (rc) {
				rbln_ids_free(&plain);
				return rc;
			}
		}
		rbln_ids_free(&spaced);
		if (plain.len) {
			rc = add_bad(b, &plain, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int serve_request_build(const struct serve_model_text *m, struct serve_request *r,
			struct serve_built *b, struct rbln_error *err)
{
	struct rbln_sampling_limits lim = {
		.vocab_size = m->vocab_size,
		.max_model_len = m->max_model_len,
		.max_logprobs = m->max_logprobs,
	};
	size_t i;
	int rc;

	memset(b, 0, sizeof(*b));
	apply_defaults(m, r);
	b->prompts = calloc(r->n_prompts ? r->n_prompts : 1, sizeof(*b->prompts));
	if (!b->prompts)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	if (r->api == SERVE_API_CHAT && !r->n_prompts) {
		/* chat has one conversation: build it as one prompt */
		b->n_prompts = 1;
		rc = build_prompt(m, r, NULL, &b->prompts[0], err);
		if (rc)
			goto fail;
	}
	for (i = 0; i < r->n_prompts; i++) {
		b->n_prompts++;
		rc = build_prompt(m, r, &r->prompts[i], &b->prompts[i], err);
		if (rc)
			goto fail;
	}
	rc = build_bad_words(m, r, b, err);
	if (rc)
		goto fail;
	b->sp = r->opts.sp;
	b->sp.bad_words = b->bad_words;
	b->sp.n_bad_words = b->n_bad_words;
	/* TensorRT-LLM's end_id ends the sequence instead of the model's EOS. */
	b->n_stop_ids = r->opts.n_stop_token_ids + (r->opts.end_id >= 0);
	if (b->n_stop_ids) {
		b->stop_ids = malloc(b->n_stop_ids * sizeof(*b->stop_ids));
		if (!b->stop_ids) {
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
			goto fail;
		}
		if (r->opts.n_stop_token_ids)
			memcpy(b->stop_ids, r->opts.stop_token_ids,
			       r->opts.n_stop_token_ids * sizeof(*b->stop_ids));
		if (r->opts.end_id >= 0) {
			b->stop_ids[b->n_stop_ids - 1] = (int32_t)r->opts.end_id;
			b->sp.ignore_eos = true;
		}
	}
	b->sp.stop_token_ids = b->stop_ids;
	b->sp.n_stop_token_ids = b->n_stop_ids;
	if (r->opts.end_id >= m->vocab_size) {
		rc = rbln_error_set(err, -EINVAL, "field 'end_id' %lld is outside the vocabulary "
				    "(0..%lld)", (long long)r->opts.end_id,
				    (long long)m->vocab_size - 1);
		goto fail;
	}
	rc = rbln_sampling_params_validate(&b->sp, &lim, r->opts.names, err);
	if (rc)
		goto fail;
	return 0;
fail:
	serve_built_free(b);
	return rc;
}
