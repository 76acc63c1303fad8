/* SPDX-License-Identifier: MIT */
/*
 * What /metrics reports per model: Triton's nv_inference_* families
 * (labels model and version), vLLM's engine families (vllm:*, as Triton's
 * vLLM backend exports them) and the NPU's (rbln:*: decoder batch buckets,
 * device utilization).  Request counters and latency histograms are kept
 * here; engine state comes from rbln_serving_ops.stats() at scrape time.
 */
#ifndef RBLN_SERVE_METRICS_H
#define RBLN_SERVE_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "prom.h"
#include "rbln_serving.h"

/* Triton's failure reasons (label "reason" of nv_inference_request_failure). */
enum serve_fail_reason {
	SERVE_FAIL_REJECTED,	/* queue full, model not ready, shutting down */
	SERVE_FAIL_CANCELED,	/* the client went away */
	SERVE_FAIL_BACKEND,	/* the engine failed or the deadline passed */
	SERVE_FAIL_OTHER,
	SERVE_FAIL_COUNT,
};

struct serve_model_metrics {
	atomic_uint_least64_t success;
	atomic_uint_least64_t failure[SERVE_FAIL_COUNT];
	atomic_uint_least64_t inference_count;		/* sequences generated */
	atomic_uint_least64_t request_duration_us;
	atomic_uint_least64_t queue_duration_us;
	atomic_uint_least64_t last_inference_ms;	/* Unix time of the last request's end */
	atomic_uint_least64_t finished[3];		/* stop, length, abort */
	struct prom_histogram ttft;			/* seconds */
	struct prom_histogram itl;			/* seconds between tokens */
	struct prom_histogram e2e;			/* seconds */
	struct prom_histogram prompt_tokens;		/* per request */
	struct prom_histogram generation_tokens;	/* per request */
	double token_bounds[PROM_MAX_BUCKETS];		/* 1, 2, 5, 10, ... <= max_model_len */
};

void serve_model_metrics_init(struct serve_model_metrics *m, int64_t max_model_len);

/* One model as the renderer sees it. */
struct serve_metrics_source {
	const char *model;
	const char *version;
	const struct serve_model_metrics *m;
	const struct rbln_serving_stats *stats;	/* NULL: no engine running */
};

/* The whole exposition for these models. */
int serve_metrics_render(struct rbln_strbuf *sb, const struct serve_metrics_source *src,
			 size_t n);

#endif
