// SPDX-License-Identifier: MIT
/*
 * The KServe v2 endpoints that do not generate, as Triton answers them:
 * server metadata, health (200, or 400 when not ready), model metadata,
 * readiness and configuration, the repository index; and OpenAI's
 * /v1/models.
 */
#include "handlers.h"
#include "reply.h"
#include "serve/model/model_stats.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Triton's wording for an unknown model or version (a 404). */
static enum MHD_Result unknown_model(struct MHD_Connection *c, const struct serve_route *r)
{
	char msg[SERVE_NAME_MAX + 96];

	if (*r->version)
		snprintf(msg, sizeof(msg), "Request for unknown model: '%s' version %s is not found",
			 r->model, r->version);
	else
		snprintf(msg, sizeof(msg), "Request for unknown model: '%s' is not found",
			 r->model);
	return serve_http_error(c, MHD_HTTP_NOT_FOUND, msg, false);
}

static json_object *tensor_list(const struct serve_model_config *cfg,
				const struct serve_tensor *t, size_t n)
{
	json_object *arr = json_object_new_array();
	size_t i, k;

	for (i = 0; arr && i < n; i++) {
		json_object *o = json_object_new_object(), *shape = json_object_new_array();

		json_object_object_add(o, "name", json_object_new_string(t[i].name));
		json_object_object_add(o, "datatype",
				       json_object_new_string(serve_dtype_name(t[i].dtype)));
		/* with batching, the batch dimension comes first as -1 */
		if (cfg->max_batch_size > 0)
			json_object_array_add(shape, json_object_new_int64(-1));
		for (k = 0; k < t[i].n_dims; k++)
			json_object_array_add(shape, json_object_new_int64(t[i].dims[k]));
		json_object_object_add(o, "shape", shape);
		json_object_array_add(arr, o);
	}
	return arr;
}

static enum MHD_Result model_metadata(struct MHD_Connection *c, const struct serve_model *m)
{
	const struct serve_model_config *cfg = &m->entry->config;
	json_object *o = json_object_new_object(), *versions = json_object_new_array();

	json_object_object_add(o, "name", json_object_new_string(m->name));
	json_object_array_add(versions, json_object_new_string(m->version));
	json_object_object_add(o, "versions", versions);
	json_object_object_add(o, "platform", json_object_new_string(*cfg->platform ? cfg->platform
										 : cfg->backend));
	json_object_object_add(o, "inputs", tensor_list(cfg, cfg->inputs, cfg->n_inputs));
	json_object_object_add(o, "outputs", tensor_list(cfg, cfg->outputs, cfg->n_outputs));
	return serve_http_json(c, MHD_HTTP_OK, o);
}

static bool all_ready(const struct serve_server *s)
{
	size_t i;

	for (i = 0; i < s->n_models; i++)
		if (!serve_model_ready_or_unloaded(&s->models[i]))
			return false;
	return true;
}

static enum MHD_Result server_metadata(struct MHD_Connection *c)
{
	static const char *const ext[] = { "binary_tensor_data", "parameters",
					   "model_configuration", "model_repository", "statistics",
					   "generate" };
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	size_t i;

	json_object_object_add(o, "name", json_object_new_string("rbln-serve"));
	json_object_object_add(o, "version", json_object_new_string(RBLN_SERVE_VERSION));
	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		json_object_array_add(arr, json_object_new_string(ext[i]));
	json_object_object_add(o, "extensions", arr);
	return serve_http_json(c, MHD_HTTP_OK, o);
}

static enum MHD_Result repository_index(struct serve_conn *cx, struct MHD_Connection *c)
{
	struct serve_server *s = cx->srv;
	json_object *arr;
	char msg[256];
	bool ready_only;
	size_t i;

	if (serve_index_request(cx, &ready_only, msg, sizeof(msg)))
		return serve_http_error(c, MHD_HTTP_BAD_REQUEST, msg, false);
	arr = json_object_new_array();
	for (i = 0; i < s->n_models; i++) {
		const struct serve_model *m = &s->models[i];
		enum serve_model_state st = serve_model_state(m);
		json_object *o;

		if (ready_only && st != SERVE_MODEL_READY)
			continue;
		o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(m->name));
		json_object_object_add(o, "version", json_object_new_string(m->version));
		json_object_object_add(o, "state", json_object_new_string(serve_model_state_name(st)));
		if (st == SERVE_MODEL_UNAVAILABLE)
			json_object_object_add(o, "reason", json_object_new_string(m->reason));
		json_object_array_add(arr, o);
	}
	return serve_http_json(c, MHD_HTTP_OK, arr);
}

/* One entry of OpenAI's model list (GET /v1/models/ID answers it alone). */
static json_object *v1_model(const struct serve_model *m, int64_t now)
{
	json_object *e = json_object_new_object();

	json_object_object_add(e, "id", json_object_new_string(m->name));
	json_object_object_add(e, "object", json_object_new_string("model"));
	json_object_object_add(e, "created", json_object_new_int64(now));
	json_object_object_add(e, "owned_by", json_object_new_string("rbln"));
	json_object_object_add(e, "root", json_object_new_string(m->name));
	json_object_object_add(e, "parent", NULL);
	json_object_object_add(e, "max_model_len", json_object_new_int64(m->text.max_model_len));
	return e;
}

static enum MHD_Result v1_models(struct serve_server *s, struct MHD_Connection *c)
{
	json_object *o = json_object_new_object(), *data = json_object_new_array();
	int64_t now = (int64_t)time(NULL);
	size_t i;

	json_object_object_add(o, "object", json_object_new_string("list"));
	for (i = 0; i < s->n_models; i++)
		json_object_array_add(data, v1_model(&s->models[i], now));
	json_object_object_add(o, "data", data);
	return serve_http_json(c, MHD_HTTP_OK, o);
}

static enum MHD_Result v1_model_by_id(struct serve_server *s, struct MHD_Connection *c,
				      const char *id)
{
	struct serve_model *m = serve_server_model(s, id, NULL);
	char msg[SERVE_NAME_MAX + 48];

	if (m)
		return serve_http_json(c, MHD_HTTP_OK, v1_model(m, (int64_t)time(NULL)));
	snprintf(msg, sizeof(msg), "The model `%s` does not exist.", id);
	return serve_http_error(c, MHD_HTTP_NOT_FOUND, msg, true);
}

/* Triton's statistics: {"model_stats": [...]} of one model, or of all (m NULL). */
static enum MHD_Result model_stats(struct serve_server *s, struct MHD_Connection *c,
				   const struct serve_model *m)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	size_t i;

	for (i = 0; i < s->n_models; i++)
		if (!m || m == &s->models[i])
			json_object_array_add(arr, serve_model_stats_json(&s->models[i]));
	json_object_object_add(o, "model_stats", arr);
	return serve_http_json(c, MHD_HTTP_OK, o);
}

enum MHD_Result serve_handle_info(struct serve_conn *cx, struct MHD_Connection *c)
{
	struct serve_server *s = cx->srv;
	const struct serve_route *r = &cx->route;
	struct serve_model *m;

	switch (r->kind) {
	case SERVE_R_SERVER_META:
		return server_metadata(c);
	case SERVE_R_LIVE:
		return serve_http_reply(c, MHD_HTTP_OK, NULL, "", 0, NULL, NULL);
	case SERVE_R_READY:
		/* Ready when every model is and no shutdown has begun, as in Triton. */
		return serve_http_reply(c, all_ready(s) && !atomic_load(&s->draining)
				       ? MHD_HTTP_OK : MHD_HTTP_BAD_REQUEST, NULL, "", 0, NULL,
				       NULL);
	case SERVE_R_REPO_INDEX:
		return repository_index(cx, c);
	case SERVE_R_V1_MODELS:
		return v1_models(s, c);
	case SERVE_R_V1_MODEL:
		return v1_model_by_id(s, c, r->model);
	case SERVE_R_STATS:
		return model_stats(s, c, NULL);
	default:
		break;
	}
	m = serve_server_model(s, r->model, r->version);
	if (!m)
		return unknown_model(c, r);
	switch (r->kind) {
	case SERVE_R_MODEL_META:
		return model_metadata(c, m);
	case SERVE_R_MODEL_READY:
		if (serve_model_state(m) == SERVE_MODEL_READY)
			return serve_http_reply(c, MHD_HTTP_OK, NULL, "", 0, NULL, NULL);
		return serve_http_error(c, MHD_HTTP_BAD_REQUEST, "Model version not ready", false);
	case SERVE_R_MODEL_CONFIG:
		return serve_http_json(c, MHD_HTTP_OK, json_object_get(m->entry->config.json));
	case SERVE_R_MODEL_STATS:
		return model_stats(s, c, m);
	default:
		return serve_http_error(c, MHD_HTTP_NOT_FOUND, "Not Found", false);
	}
}
