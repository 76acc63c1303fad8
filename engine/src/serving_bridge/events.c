// SPDX-License-Identifier: MIT
/*
 * Delivering a request's events to the serving layer.  Always on the
 * scheduler thread and with no lock held: the callback takes the serving
 * layer's job lock and may call release() from the final event.  Every
 * step's new ids are delivered right after the step, so an event normally
 * carries one id; the final event carries whatever the last step added.
 */
#include "serving_bridge/binding.h"

#include <string.h>

static void fill_logprobs(const struct rbln_gen_handle *h, struct rbln_gen_event *ev)
{
	if (h->logprobs < 0 || !h->lp_out || h->lp_out->n != ev->n_ids)
		return;
	ev->logprobs = h->lp_out->logprobs;
	ev->n_top = (size_t)h->logprobs;
	ev->top_logprobs = ev->n_top ? h->lp_out->top : NULL;
}

bool rbln_bridge_deliver_tokens(struct rbln_serving_model *e, struct rbln_gen_handle *h, int64_t now_ns)
{
	struct rbln_gen_event ev;
	const int32_t *out;
	size_t n_out;

	out = rbln_seq_output(h->seq, &n_out);
	if (n_out <= h->n_sent)
		return false;
	memset(&ev, 0, sizeof(ev));
	ev.ids = out + h->n_sent;
	ev.n_ids = n_out - h->n_sent;
	ev.time_ns = now_ns;
	rbln_bridge_logprobs_take(e, h, ev.ids, ev.n_ids);
	fill_logprobs(h, &ev);
	h->n_sent = n_out;
	if (!h->t_first_ns)
		h->t_first_ns = now_ns;
	return h->cb(h->user, &ev) == RBLN_GEN_STOP;
}

void rbln_bridge_finish(struct rbln_serving_model *e, struct rbln_gen_handle *h,
	       enum rbln_finish_reason reason, int error_code, const char *msg,
	       int64_t now_ns)
{
	struct rbln_seq *s = h->seq;
	struct rbln_gen_event ev;
	size_t n_out = 0;

	memset(&ev, 0, sizeof(ev));
	ev.final = true;
	ev.time_ns = now_ns;
	ev.reason = reason;
	ev.stop_token_id = -1;
	ev.error_code = error_code;
	ev.error_msg = msg;
	ev.n_prompt_tokens = h->n_prompt;
	if (s) {
		const int32_t *out = rbln_seq_output(s, &n_out);

		if (n_out > h->n_sent) {
			ev.ids = out + h->n_sent;
			ev.n_ids = n_out - h->n_sent;
			rbln_bridge_logprobs_take(e, h, ev.ids, ev.n_ids);
			fill_logprobs(h, &ev);
			if (!h->t_first_ns)
				h->t_first_ns = now_ns;
		}
		if (reason == RBLN_FINISH_STOP && !h->stop_asked)
			ev.stop_token_id = rbln_seq_stop_token(s);
		ev.n_preemptions = rbln_seq_preemptions(s);
	}
	ev.n_output_tokens = n_out + (ev.stop_token_id >= 0);
	ev.t_scheduled_ns = h->t_scheduled_ns;
	ev.t_first_token_ns = h->t_first_ns;
	rbln_bridge_list_remove(&e->active, h);
	h->seq = NULL;
	/*
	 * Blocks free and the snapshot current before the client can hear of
	 * the end: a client that reads /metrics after its answer sees them.
	 */
	if (s)
		rbln_seq_abort(s);
	rbln_bridge_publish(e);
	/* From here cancel() is a no-op; after the callback h may be gone. */
	atomic_store(&h->done, true);
	h->cb(h->user, &ev);
	/* The ids pointed into the sequence: give it back only now. */
	if (s)
		rbln_seq_release(s);
}
