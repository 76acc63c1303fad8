// SPDX-License-Identifier: MIT
/*
 * submit(), cancel() and release(): the HTTP threads' side of a request.
 * None of them touches the engine; they meet the scheduler thread only
 * under the model's mutex (the inbox) or through a request's atomic flags.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "serving_bridge/binding.h"

void rbln_bridge_request_free(struct rbln_gen_handle *h)
{
	size_t i;

	for (i = 0; i < h->n_bad; i++)
		free(h->bad[i].ids);
	free(h->bad);
	free(h->prompt);
	free(h->lp_row);
	if (h->lp_out) {
		free(h->lp_out->logprobs);
		free(h->lp_out->top);
		free(h->lp_out);
	}
	free(h);
}

/*
 * The runtime's sampling parameters of a request: the request's own, with
 * lengths bounded by the served max_model_len (which may be below the
 * compiled max_seq_len, so a sequence ends with "length" exactly where the
 * client was told), its stop ids copied (the request's are borrowed), and
 * what the runtime leaves to this binding (bad words and logprobs: the
 * logits hook; stop strings: the serving layer's text stream) taken out.
 */
static int convert_params(const struct rbln_serving_model *e, const struct rbln_gen_request *r,
			  struct rbln_gen_handle *h, struct rbln_error *err)
{
	struct rbln_sampling_limits lim = { .vocab_size = e->vocab,
					    .max_model_len = e->max_model_len };
	int64_t room = (int64_t)e->max_model_len - (int64_t)r->n_prompt_ids;
	struct rbln_sampling_params *sp = &h->sp;
	int rc = rbln_sampling_params_validate(&r->params, &lim, NULL, err);

	if (rc)
		return rc;
	*sp = r->params;
	if (sp->max_tokens < 0 || sp->max_tokens > room)
		sp->max_tokens = room;
	if (sp->min_tokens > sp->max_tokens)
		sp->min_tokens = sp->max_tokens;
	if (sp->n_stop_token_ids)
		memcpy(h->stop_ids, sp->stop_token_ids, sp->n_stop_token_ids * sizeof(*h->stop_ids));
	sp->stop_token_ids = h->stop_ids;
	sp->bad_words = NULL;
	sp->n_bad_words = 0;
	sp->logprobs = -1;
	sp->stop = NULL;
	sp->n_stop = 0;
	return 0;
}

static int check_prompt(const struct rbln_serving_model *e, const struct rbln_gen_request *r,
			struct rbln_error *err)
{
	size_t i;

	if (!r->n_prompt_ids || !r->prompt_ids)
		return rbln_error_set(err, -EINVAL, "the prompt is empty (0 tokens)");
	/* Room for one new token at least, as the engine needs. */
	if (r->n_prompt_ids >= e->max_model_len)
		return rbln_error_set(err, -E2BIG, "the prompt is %zu tokens; max_model_len %u "
				      "of model '%s' leaves no room for an output token",
				      r->n_prompt_ids, e->max_model_len, e->name);
	for (i = 0; i < r->n_prompt_ids; i++)
		if (r->prompt_ids[i] < 0 || (uint32_t)r->prompt_ids[i] >= e->vocab)
			return rbln_error_set(err, -EINVAL, "prompt token %zu is %d, outside the "
					      "vocabulary (0..%u)", i, r->prompt_ids[i],
					      e->vocab - 1);
	return 0;
}

static int copy_bad_words(struct rbln_gen_handle *h, const struct rbln_sampling_params *p,
			  uint32_t vocab, struct rbln_error *err)
{
	size_t i, k;

	if (!p->n_bad_words)
		return 0;
	h->bad = calloc(p->n_bad_words, sizeof(*h->bad));
	if (!h->bad)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	h->n_bad = p->n_bad_words;
	for (i = 0; i < p->n_bad_words; i++) {
		const struct rbln_token_seq *w = &p->bad_words[i];

		if (!w->len)
			return rbln_error_set(err, -EINVAL, "field 'bad_words' entry %zu is empty", i);
		for (k = 0; k < w->len; k++)
			if (w->ids[k] < 0 || (uint32_t)w->ids[k] >= vocab)
				return rbln_error_set(err, -EINVAL, "field 'bad_words' entry %zu: "
						      "token id %d is outside the vocabulary", i,
						      w->ids[k]);
		h->bad[i].ids = malloc(w->len * sizeof(*w->ids));
		if (!h->bad[i].ids)
			return rbln_error_set(err, -ENOMEM, "out of memory");
		memcpy(h->bad[i].ids, w->ids, w->len * sizeof(*w->ids));
		h->bad[i].len = w->len;
	}
	return 0;
}

int rbln_bridge_submit(struct rbln_serving_model *e, const struct rbln_gen_request *req,
	      rbln_gen_event_fn cb, void *user, struct rbln_gen_handle **out,
	      struct rbln_error *err)
{
	struct rbln_gen_handle *h;
	int rc;

	if (!cb)
		return rbln_error_set(err, -EINVAL, "no event callback");
	rc = check_prompt(e, req, err);
	if (rc)
		return rc;
	h = calloc(1, sizeof(*h));
	if (!h)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	h->e = e;
	h->id = req->id;
	h->cb = cb;
	h->user = user;
	h->deadline_ns = req->deadline_ns;
	h->logprobs = req->params.logprobs;
	atomic_init(&h->cancelled, false);
	atomic_init(&h->done, false);
	rc = convert_params(e, req, h, err);
	if (!rc)
		rc = copy_bad_words(h, &req->params, e->vocab, err);
	if (!rc && h->logprobs > RBLN_SAMPLING_MAX_LOGPROBS)
		rc = rbln_error_set(err, -EINVAL, "field 'logprobs' must be at most %d, got %d",
				    RBLN_SAMPLING_MAX_LOGPROBS, h->logprobs);
	if (!rc) {
		h->prompt = malloc(req->n_prompt_ids * sizeof(*h->prompt));
		if (!h->prompt)
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
	}
	if (rc) {
		rbln_bridge_request_free(h);
		return rc;
	}
	memcpy(h->prompt, req->prompt_ids, req->n_prompt_ids * sizeof(*h->prompt));
	h->n_prompt = req->n_prompt_ids;

	pthread_mutex_lock(&e->mu);
	if (e->stopping) {
		rc = rbln_error_set(err, -ESHUTDOWN, "model '%s' is shutting down", e->name);
	} else if (e->inbox.n + e->n_waiting_seen >= e->max_waiting + e->free_slots_seen) {
		/*
		 * Requests that will start at the next step (free slots of the
		 * running batch) are not waiting: a burst that fits the batch is
		 * never refused, whatever the queue bound.
		 */
		rc = rbln_error_set(err, -EBUSY, "the waiting queue of model '%s' is full (%u "
				    "requests)", e->name, e->max_waiting);
	} else {
		h->arrival = e->next_arrival++;
		/*
		 * model.json's seed makes unseeded requests reproducible too: each
		 * gets the base seed plus its submission number.
		 */
		if (!h->sp.has_seed && e->has_seed) {
			h->sp.has_seed = true;
			h->sp.seed = e->seed + h->arrival;
		}
		/* Written before the scheduler can see the request (and deliver events). */
		*out = h;
		rbln_bridge_list_push_back(&e->inbox, h);
		pthread_cond_signal(&e->wake);
	}
	pthread_mutex_unlock(&e->mu);
	if (rc)
		rbln_bridge_request_free(h);
	return rc;
}

void rbln_bridge_cancel(struct rbln_gen_handle *h)
{
	/*
	 * Only a flag: the scheduler looks at it before every step (a request
	 * that is waiting or running keeps the scheduler awake), ends the
	 * request and frees its blocks.  After the final event it is a no-op.
	 */
	if (!atomic_load(&h->done))
		atomic_store(&h->cancelled, true);
}

void rbln_bridge_release(struct rbln_gen_handle *h)
{
	if (h)
		rbln_bridge_request_free(h);
}
