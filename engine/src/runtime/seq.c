// SPDX-License-Identifier: MIT
/* Sequences: their tokens, end and sampler (their KV blocks: kv_pool.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime_internal.h"

int rbln_seq_push_token(struct rbln_seq *s, int32_t id)
{
	if (s->n_tokens == s->cap) {
		size_t ncap = s->cap * 2;
		int32_t *t = realloc(s->tokens, ncap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		s->tokens = t;
		s->cap = ncap;
	}
	s->tokens[s->n_tokens++] = id;
	return 0;
}

/* What the runtime does not apply must not look applied. */
static int check_runtime_params(const struct rbln_sampling_params *p, struct rbln_error *err)
{
	if (p->n_bad_words)
		return rbln_error_set(err, -EINVAL, "bad_words are not applied by the runtime: "
				      "forbid them in a logits hook (rbln_seq_set_logits_fn)");
	if (p->logprobs >= 0)
		return rbln_error_set(err, -EINVAL, "logprobs are not computed by the runtime: "
				      "read them in a logits hook (rbln_seq_set_logits_fn)");
	if (p->n_stop)
		return rbln_error_set(err, -EINVAL, "stop strings are matched on text, by the "
				      "caller (rbln_stop.h), not by the runtime");
	return 0;
}

int rbln_runtime_add(struct rbln_runtime *e, const int32_t *prompt, size_t n_prompt,
		    const struct rbln_sampling_params *params, unsigned flags,
		    struct rbln_seq **out, struct rbln_error *err)
{
	struct rbln_sampling_limits lim = { .vocab_size = e->vocab,
					    .max_model_len = e->cc.max_seq_len };
	struct rbln_sampling_params def;
	struct rbln_seq *s;
	size_t i;
	int rc;

	if (!params) {
		rbln_sampling_params_init(&def);
		params = &def;
	}
	if (!n_prompt || n_prompt >= e->cc.max_seq_len)
		return rbln_error_set(err, -E2BIG, "prompt of %zu tokens: must be 1 to %u "
				      "(max_seq_len %u leaves room for one new token)", n_prompt,
				      e->cc.max_seq_len - 1, e->cc.max_seq_len);
	for (i = 0; i < n_prompt; i++)
		if (prompt[i] < 0 || (uint32_t)prompt[i] >= e->vocab)
			return rbln_error_set(err, -EINVAL, "prompt token %zu is %d, not an id of "
					      "the vocabulary (0 to %u)", i, prompt[i],
					      e->vocab - 1);
	rc = rbln_sampling_params_validate(params, &lim, NULL, err);
	if (!rc)
		rc = check_runtime_params(params, err);
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	s->e = e;
	s->cap = n_prompt + 16;
	s->tokens = malloc(s->cap * sizeof(*s->tokens));
	s->blocks = malloc(rbln_kv_pool_blocks_for(&e->kv, e->cc.max_seq_len) * sizeof(*s->blocks));
	s->keep_prompt_logits = flags & RBLN_SEQ_KEEP_PROMPT_LOGITS;
	if (s->keep_prompt_logits)
		s->prompt_logits = malloc((size_t)e->vocab * sizeof(float));
	if (!s->tokens || !s->blocks || (s->keep_prompt_logits && !s->prompt_logits) ||
	    rbln_sampler_new(params, prompt, n_prompt, &s->sampler)) {
		free(s->tokens);
		free(s->blocks);
		free(s->prompt_logits);
		free(s);
		return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	memcpy(s->tokens, prompt, n_prompt * sizeof(*prompt));
	s->n_tokens = s->n_prompt = n_prompt;
	s->params = *params;
	if (params->n_stop_token_ids)
		memcpy(s->stop_ids, params->stop_token_ids,
		       params->n_stop_token_ids * sizeof(*s->stop_ids));
	s->params.stop_token_ids = s->stop_ids;
	s->stop_token = -1;
	s->prev = e->tail;
	if (e->tail)
		e->tail->next = s;
	else
		e->head = s;
	e->tail = s;
	*out = s;
	return 0;
}

void rbln_seq_abort(struct rbln_seq *s)
{
	if (s->end == RBLN_SEQ_RUNNING)
		s->end = RBLN_SEQ_END_ABORT;
	rbln_kv_release(s);
}

void rbln_seq_preempt(struct rbln_seq *s)
{
	if (s->end != RBLN_SEQ_RUNNING || !s->n_blocks)
		return;
	rbln_kv_release(s);
	s->preemptions++;
}

void rbln_seq_release(struct rbln_seq *s)
{
	struct rbln_runtime *e;

	if (!s)
		return;
	e = s->e;
	rbln_kv_release(s);
	if (s->prev)
		s->prev->next = s->next;
	else
		e->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		e->tail = s->prev;
	rbln_sampler_free(s->sampler);
	free(s->tokens);
	free(s->blocks);
	free(s->prompt_logits);
	free(s);
}

enum rbln_seq_end rbln_seq_end(const struct rbln_seq *s)
{
	return s->end;
}

int32_t rbln_seq_stop_token(const struct rbln_seq *s)
{
	return s->stop_token;
}

const int32_t *rbln_seq_output(const struct rbln_seq *s, size_t *n)
{
	*n = s->n_tokens - s->n_prompt;
	return s->tokens + s->n_prompt;
}

size_t rbln_seq_prompt_len(const struct rbln_seq *s)
{
	return s->n_prompt;
}

size_t rbln_seq_pending(const struct rbln_seq *s)
{
	return s->end == RBLN_SEQ_RUNNING ? s->n_tokens - s->n_computed : 0;
}

const float *rbln_seq_prompt_logits(const struct rbln_seq *s, size_t *vocab)
{
	*vocab = s->e->vocab;
	return s->has_prompt_logits ? s->prompt_logits : NULL;
}

uint32_t rbln_seq_preemptions(const struct rbln_seq *s)
{
	return s->preemptions;
}

void rbln_seq_set_logits_fn(struct rbln_seq *s, rbln_seq_logits_fn fn, void *user)
{
	s->logits_fn = fn;
	s->logits_user = fn ? user : NULL;
}

void rbln_seq_set_user(struct rbln_seq *s, void *user)
{
	s->user = user;
}

void *rbln_seq_user(const struct rbln_seq *s)
{
	return s->user;
}
