// SPDX-License-Identifier: MIT
/*
 * Rendering of /metrics (see metrics.h).  Names and help texts of the
 * nv_inference_* families are Triton's and those of vllm:* are the vLLM
 * backend's, so existing dashboards and alerts work unchanged.  A family
 * with no sample is left out, as Prometheus client libraries do.
 */
#include "metrics.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* vLLM's bucket boundaries (the vLLM backend uses the same). */
static const double ttft_bounds[] = { 0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
				      0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0 };
static const double itl_bounds[] = { 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4,
				     0.5, 0.75, 1.0, 2.5 };
static const double e2e_bounds[] = { 1.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0 };

#define N(a) (sizeof(a) / sizeof((a)[0]))

void serve_model_metrics_init(struct serve_model_metrics *m, int64_t max_model_len)
{
	static const int steps[] = { 1, 2, 5 };
	size_t n = 0, i;
	double mag = 1;

	memset(m, 0, sizeof(*m));
	/* vLLM's build_1_2_5_buckets(max_model_len) */
	while (n < PROM_MAX_BUCKETS) {
		bool done = false;

		for (i = 0; i < 3 && n < PROM_MAX_BUCKETS; i++) {
			double v = steps[i] * mag;

			if (v > (double)max_model_len) {
				done = true;
				break;
			}
			m->token_bounds[n++] = v;
		}
		if (done)
			break;
		mag *= 10;
	}
	serve_prom_histogram_init(&m->ttft, ttft_bounds, N(ttft_bounds));
	serve_prom_histogram_init(&m->itl, itl_bounds, N(itl_bounds));
	serve_prom_histogram_init(&m->e2e, e2e_bounds, N(e2e_bounds));
	serve_prom_histogram_init(&m->prompt_tokens, m->token_bounds, n);
	serve_prom_histogram_init(&m->generation_tokens, m->token_bounds, n);
}

static uint64_t ld(const atomic_uint_least64_t *a)
{
	return atomic_load_explicit(a, memory_order_relaxed);
}

enum kind { K_COUNTER, K_GAUGE };

/* A per-model family whose value is computed by `get`; rows without a value skipped. */
typedef bool (*getter)(const struct serve_metrics_source *s, double *v);

static int family(struct rbln_strbuf *sb, const struct serve_metrics_source *src, size_t n,
		  const char *name, const char *help, enum kind k, getter get)
{
	bool header = false;
	size_t i;

	for (i = 0; i < n; i++) {
		struct prom_label l[2] = { { "model", src[i].model }, { "version", src[i].version } };
		double v;

		if (!get(&src[i], &v))
			continue;
		if (!header && serve_prom_family(sb, name, help, k == K_COUNTER ? "counter" : "gauge"))
			return -ENOMEM;
		header = true;
		if (serve_prom_sample(sb, name, NULL, l, 2, v))
			return -ENOMEM;
	}
	return 0;
}

#define GET(fn, cond, expr)                                                        \
	static bool fn(const struct serve_metrics_source *s, double *v)            \
	{                                                                          \
		if (!(cond))                                                       \
			return false;                                              \
		*v = (double)(expr);                                               \
		return true;                                                       \
	}

GET(g_success, 1, ld(&s->m->success))
GET(g_count, 1, ld(&s->m->inference_count))
GET(g_exec, s->stats, s->stats->steps_total)
GET(g_req_us, 1, ld(&s->m->request_duration_us))
GET(g_queue_us, 1, ld(&s->m->queue_duration_us))
GET(g_pending, 1, s->stats ? s->stats->num_waiting : 0)
GET(g_running, s->stats, s->stats->num_running)
GET(g_waiting, s->stats, s->stats->num_waiting)
GET(g_kv, s->stats, s->stats->kv_blocks_total ? (double)s->stats->kv_blocks_used /
						 (double)s->stats->kv_blocks_total : 0)
GET(g_preempt, s->stats, s->stats->preemptions_total)
GET(g_prompt, s->stats, s->stats->prompt_tokens_total)
GET(g_gen, s->stats, s->stats->generation_tokens_total)

/*
 * A per-model family with one more label: `row` gives the k-th sample of a
 * model (its label value and number) and false past the last one.
 */
typedef bool (*row_getter)(const struct serve_metrics_source *s, size_t k, char *label,
			   size_t size, double *v);

static int labelled(struct rbln_strbuf *sb, const struct serve_metrics_source *src, size_t n,
		    const char *name, const char *help, enum kind kind, const char *label,
		    row_getter row)
{
	bool header = false;
	char value[24];
	double v;
	size_t i, k;

	for (i = 0; i < n; i++)
		for (k = 0; row(&src[i], k, value, sizeof(value), &v); k++) {
			struct prom_label l[3] = { { "model", src[i].model },
						   { "version", src[i].version },
						   { label, value } };

			if (!header && serve_prom_family(sb, name, help,
						   kind == K_COUNTER ? "counter" : "gauge"))
				return -ENOMEM;
			header = true;
			if (serve_prom_sample(sb, name, NULL, l, 3, v))
				return -ENOMEM;
		}
	return 0;
}

static bool r_failure(const struct serve_metrics_source *s, size_t k, char *label, size_t size,
		      double *v)
{
	static const char *const reasons[SERVE_FAIL_COUNT] = { "REJECTED", "CANCELED", "BACKEND",
								"OTHER" };

	if (k >= SERVE_FAIL_COUNT)
		return false;
	snprintf(label, size, "%s", reasons[k]);
	*v = (double)ld(&s->m->failure[k]);
	return true;
}

static bool r_finished(const struct serve_metrics_source *s, size_t k, char *label, size_t size,
		       double *v)
{
	static const char *const reasons[3] = { "stop", "length", "abort" };

	if (k >= 3)
		return false;
	snprintf(label, size, "%s", reasons[k]);
	*v = (double)ld(&s->m->finished[k]);
	return true;
}

static bool r_bucket(const struct serve_metrics_source *s, size_t k, char *label, size_t size,
		     double *v)
{
	const struct rbln_serving_stats *st = s->stats;

	if (!st || k >= st->n_buckets || k >= RBLN_SERVING_MAX_BUCKETS)
		return false;
	snprintf(label, size, "%u", st->buckets[k].batch_size);
	*v = (double)st->buckets[k].steps_total;
	return true;
}

/* Whether a model has a device k; its index is the label. */
static bool device(const struct serve_metrics_source *s, size_t k, char *label, size_t size)
{
	const struct rbln_serving_stats *st = s->stats;

	if (!st || k >= st->n_devices || k >= RBLN_SERVING_MAX_DEVICES)
		return false;
	snprintf(label, size, "%d", st->devices[k].index);
	return true;
}

static bool r_util(const struct serve_metrics_source *s, size_t k, char *label, size_t size,
		   double *v)
{
	if (!device(s, k, label, size))
		return false;
	*v = s->stats->devices[k].utilization;
	return true;
}

static bool r_busy(const struct serve_metrics_source *s, size_t k, char *label, size_t size,
		   double *v)
{
	if (!device(s, k, label, size))
		return false;
	*v = (double)s->stats->devices[k].busy_ns_total / 1e9;
	return true;
}

static int histograms(struct rbln_strbuf *sb, const struct serve_metrics_source *src, size_t n,
		      const char *name, const char *help, size_t offset)
{
	size_t i;

	if (!n)
		return 0;
	if (serve_prom_family(sb, name, help, "histogram"))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct prom_label l[2] = { { "model", src[i].model }, { "version", src[i].version } };
		const struct prom_histogram *h =
			(const struct prom_histogram *)((const char *)src[i].m + offset);

		if (serve_prom_histogram_samples(sb, name, l, 2, h))
			return -ENOMEM;
	}
	return 0;
}

int serve_metrics_render(struct rbln_strbuf *sb, const struct serve_metrics_source *src,
			 size_t n)
{
	int rc = 0;

#define STEP(x) if (!rc) rc = (x)

	STEP(family(sb, src, n, "nv_inference_request_success",
	     "Number of successful inference requests, all batch sizes", K_COUNTER,
	     g_success));
	STEP(labelled(sb, src, n, "nv_inference_request_failure",
	     "Number of failed inference requests, all batch sizes", K_COUNTER, "reason",
	     r_failure));
	STEP(family(sb, src, n, "nv_inference_count",
	     "Number of inferences performed (does not include cached requests)",
	     K_COUNTER, g_count));
	STEP(family(sb, src, n, "nv_inference_exec_count",
	     "Number of model executions performed (does not include cached "
	     "requests)", K_COUNTER, g_exec));
	STEP(family(sb, src, n, "nv_inference_request_duration_us",
	     "Cumulative inference request duration in microseconds (includes "
	     "cached requests)", K_COUNTER, g_req_us));
	STEP(family(sb, src, n, "nv_inference_queue_duration_us",
	     "Cumulative inference queuing duration in microseconds (includes "
	     "cached requests)", K_COUNTER, g_queue_us));
	STEP(family(sb, src, n, "nv_inference_pending_request_count",
	     "Instantaneous number of pending requests awaiting execution "
	     "per-model.", K_GAUGE, g_pending));
	STEP(family(sb, src, n, "vllm:num_requests_running",
	     "Number of requests currently running on the NPUs.", K_GAUGE, g_running));
	STEP(family(sb, src, n, "vllm:num_requests_waiting",
	     "Number of requests waiting to be processed.", K_GAUGE, g_waiting));
	STEP(family(sb, src, n, "vllm:kv_cache_usage_perc",
	     "KV-cache usage. 1 means 100 percent usage.", K_GAUGE, g_kv));
	STEP(family(sb, src, n, "vllm:gpu_cache_usage_perc",
	     "KV-cache usage. 1 means 100 percent usage (the name vLLM 0.x "
	     "dashboards use).", K_GAUGE, g_kv));
	STEP(family(sb, src, n, "vllm:num_preemptions_total",
	     "Cumulative number of preemptions from the engine.", K_COUNTER,
	     g_preempt));
	STEP(family(sb, src, n, "vllm:prompt_tokens_total",
	     "Number of prefill tokens processed.", K_COUNTER, g_prompt));
	STEP(family(sb, src, n, "vllm:generation_tokens_total",
	     "Number of generation tokens processed.", K_COUNTER, g_gen));
	STEP(histograms(sb, src, n, "vllm:time_to_first_token_seconds",
	     "Histogram of time to first token in seconds.",
	     offsetof(struct serve_model_metrics, ttft)));
	STEP(histograms(sb, src, n, "vllm:time_per_output_token_seconds",
	     "Histogram of time per output token in seconds.",
	     offsetof(struct serve_model_metrics, itl)));
	STEP(histograms(sb, src, n, "vllm:e2e_request_latency_seconds",
	     "Histogram of end to end request latency in seconds.",
	     offsetof(struct serve_model_metrics, e2e)));
	STEP(histograms(sb, src, n, "vllm:request_prompt_tokens",
	     "Number of prefill tokens processed.",
	     offsetof(struct serve_model_metrics, prompt_tokens)));
	STEP(histograms(sb, src, n, "vllm:request_generation_tokens",
	     "Number of generation tokens processed.",
	     offsetof(struct serve_model_metrics, generation_tokens)));
	STEP(labelled(sb, src, n, "vllm:request_success_total",
	     "Count of successfully processed requests.", K_COUNTER, "finished_reason",
	     r_finished));
	STEP(labelled(sb, src, n, "rbln:decoder_bucket_steps_total",
	     "Decode steps run in each compiled decoder batch size.", K_COUNTER, "batch_size",
	     r_bucket));
	STEP(labelled(sb, src, n, "rbln:device_utilization",
	     "Fraction of the last interval each RBLN device was busy.", K_GAUGE, "device",
	     r_util));
	STEP(labelled(sb, src, n, "rbln:device_busy_seconds_total",
	     "Time each RBLN device spent running this model's programs.", K_COUNTER, "device",
	     r_busy));
#undef STEP
	return rc;
}
