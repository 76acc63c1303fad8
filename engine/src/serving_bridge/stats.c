// SPDX-License-Identifier: MIT
/*
 * Statistics for /metrics.  The scheduler publishes a snapshot under the
 * model's mutex after every step (and about once a second when idle);
 * stats() copies it, so a scrape never waits for a step.
 *
 * Device utilization: every device of the model runs its program in every
 * step (one submission per device, tensor parallel), so each device's busy
 * time is the steps' wall time; the gauge is the busy fraction over the
 * last window of at least a second.
 */
#include <stdlib.h>
#include <string.h>

#include "serving_bridge/binding.h"

#define UTIL_WINDOW_NS 1000000000LL

/*
 * Rank r runs on visible device r; its index (N of /dev/rblnN) is the r-th
 * device the devices option or RBLN_DEVICES lists ("4,5" or "4-7", the
 * grammar libnpu accepts; libnpu has already refused a bad list when the
 * engine opened), else r.
 */
void rbln_bridge_devices_map(struct rbln_serving_model *e, const char *devices, uint32_t n_ranks)
{
	const char *p = devices ? devices : getenv("RBLN_DEVICES");
	uint32_t r = 0;

	e->n_devices = n_ranks < RBLN_SERVING_MAX_DEVICES ? n_ranks : RBLN_SERVING_MAX_DEVICES;
	while (p && *p && r < e->n_devices) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			break;
		p = end;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			p = end;
		}
		for (; lo <= hi && r < e->n_devices; lo++)
			e->devices[r++] = (int32_t)lo;
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
	}
	for (; r < e->n_devices; r++)
		e->devices[r] = (int32_t)r;
}

uint32_t rbln_bridge_num_running(const struct rbln_serving_model *e)
{
	struct rbln_runtime_info info;

	rbln_runtime_get_info(e->engine, &info);
	return info.n_running;
}

/* Called by the scheduler, after a step or an idle wait. */
void rbln_bridge_publish(struct rbln_serving_model *e)
{
	struct rbln_runtime_info info;
	int64_t now = rbln_bridge_now_ns();
	size_t i;

	rbln_runtime_get_info(e->engine, &info);
	for (i = 0; i < e->cc->n_decoder_batch_sizes && i < RBLN_MAX_DECODER_BATCHES; i++)
		e->acc.bucket_steps[i] = info.decode_steps[i];
	e->acc.num_running = info.n_running;
	e->acc.kv_blocks_used = info.kv_blocks_total - info.kv_blocks_free;
	pthread_mutex_lock(&e->mu);
	e->acc.num_waiting = (uint32_t)(e->active.n - info.n_running + e->inbox.n);
	e->n_waiting_seen = e->active.n - info.n_running;
	e->free_slots_seen = e->batch - info.n_running;
	e->pub = e->acc;
	if (now - e->util_win_start_ns >= UTIL_WINDOW_NS) {
		e->utilization = (double)(e->pub.busy_ns_total - e->util_win_busy_ns) /
				 (double)(now - e->util_win_start_ns);
		if (e->utilization > 1.0)
			e->utilization = 1.0;
		e->util_win_start_ns = now;
		e->util_win_busy_ns = e->pub.busy_ns_total;
	}
	pthread_mutex_unlock(&e->mu);
}

void rbln_bridge_stats(struct rbln_serving_model *e, struct rbln_serving_stats *st)
{
	uint32_t i;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&e->mu);
	st->num_running = e->pub.num_running;
	/* The inbox is live: a request submitted a moment ago is waiting. */
	st->num_waiting = (uint32_t)(e->n_waiting_seen + e->inbox.n);
	st->kv_blocks_used = e->pub.kv_blocks_used;
	st->prompt_tokens_total = e->pub.prompt_tokens_total;
	st->generation_tokens_total = e->pub.generation_tokens_total;
	st->preemptions_total = e->pub.preemptions_total;
	st->steps_total = e->pub.steps_total;
	st->n_buckets = (uint32_t)e->cc->n_decoder_batch_sizes;
	if (st->n_buckets > RBLN_SERVING_MAX_BUCKETS)
		st->n_buckets = RBLN_SERVING_MAX_BUCKETS;
	for (i = 0; i < st->n_buckets; i++) {
		st->buckets[i].batch_size = e->cc->decoder_batch_sizes[i];
		st->buckets[i].steps_total = e->pub.bucket_steps[i];
	}
	st->n_devices = e->n_devices;
	for (i = 0; i < e->n_devices; i++) {
		st->devices[i].index = e->devices[i];
		st->devices[i].utilization = e->utilization;
		st->devices[i].busy_ns_total = e->pub.busy_ns_total;
	}
	pthread_mutex_unlock(&e->mu);
	st->kv_blocks_total = e->kv_blocks_total;
}
