// SPDX-License-Identifier: MIT
/* Triton's model statistics from rbln-serve's counters (see model_stats.h). */
#include "model_stats.h"

#include <string.h>

void serve_model_stats_get(const struct serve_model *m, struct serve_model_stats *st)
{
	const struct serve_model_metrics *mm = &m->metrics;
	struct rbln_serving_stats es;
	size_t i;

	memset(st, 0, sizeof(*st));
	memset(&es, 0, sizeof(es));
	if (m->engine && m->ops && m->ops->stats)
		m->ops->stats(m->engine, &es);
	st->inference_count = atomic_load(&mm->inference_count);
	st->execution_count = es.steps_total;
	st->success = atomic_load(&mm->success);
	st->success_ns = atomic_load(&mm->request_duration_us) * 1000;
	for (i = 0; i < SERVE_FAIL_COUNT; i++)
		st->fail += atomic_load(&mm->failure[i]);
	st->queue_ns = atomic_load(&mm->queue_duration_us) * 1000;
	st->last_inference_ms = atomic_load(&mm->last_inference_ms);
}

static json_object *duration(uint64_t count, uint64_t ns)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "count", json_object_new_uint64(count));
	json_object_object_add(o, "ns", json_object_new_uint64(ns));
	return o;
}

json_object *serve_model_stats_json(const struct serve_model *m)
{
	static const char *const unmeasured[] = { "compute_input", "compute_infer",
						  "compute_output", "cache_hit", "cache_miss" };
	json_object *o = json_object_new_object(), *is = json_object_new_object();
	struct serve_model_stats st;
	size_t i;

	serve_model_stats_get(m, &st);
	json_object_object_add(o, "name", json_object_new_string(m->name));
	json_object_object_add(o, "version", json_object_new_string(m->version));
	json_object_object_add(o, "last_inference", json_object_new_uint64(st.last_inference_ms));
	json_object_object_add(o, "inference_count", json_object_new_uint64(st.inference_count));
	json_object_object_add(o, "execution_count", json_object_new_uint64(st.execution_count));
	json_object_object_add(is, "success", duration(st.success, st.success_ns));
	json_object_object_add(is, "fail", duration(st.fail, 0));
	json_object_object_add(is, "queue", duration(st.success, st.queue_ns));
	for (i = 0; i < sizeof(unmeasured) / sizeof(unmeasured[0]); i++)
		json_object_object_add(is, unmeasured[i], duration(0, 0));
	json_object_object_add(o, "inference_stats", is);
	json_object_object_add(o, "response_stats", json_object_new_object());
	json_object_object_add(o, "batch_stats", json_object_new_array());
	json_object_object_add(o, "memory_usage", json_object_new_array());
	return o;
}
