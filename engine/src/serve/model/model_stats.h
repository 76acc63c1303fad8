/* SPDX-License-Identifier: MIT */
/*
 * Triton's statistics extension for a served model (what perf_analyzer
 * reads), from the counters behind /metrics: the HTTP routes
 * /v2/models[/M[/versions/V]]/stats print them as JSON, the gRPC
 * ModelStatistics method as a message.
 */
#ifndef RBLN_SERVE_MODEL_STATS_H
#define RBLN_SERVE_MODEL_STATS_H

#include <stdint.h>

#include <json-c/json.h>

#include "served_model.h"

struct serve_model_stats {
	uint64_t inference_count;	/* sequences generated */
	uint64_t execution_count;	/* engine steps */
	uint64_t success, success_ns;	/* requests answered, their total time */
	uint64_t fail;			/* requests failed, every reason */
	uint64_t queue_ns;		/* time before first scheduled, over the successes */
	uint64_t last_inference_ms;	/* Unix time of the last request's end; 0: none yet */
};

void serve_model_stats_get(const struct serve_model *m, struct serve_model_stats *st);

/* One entry of Triton's "model_stats" list. */
json_object *serve_model_stats_json(const struct serve_model *m);

#endif
