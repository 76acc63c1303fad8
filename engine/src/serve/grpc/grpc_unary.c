// SPDX-License-Identifier: MIT
/*
 * The gRPC methods that do not generate: health, metadata, configuration,
 * statistics and the repository index, answering what the HTTP routes of
 * handlers_info.c answer, in the protocol's messages.
 */
#include "grpc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_service.pb-c.h"
#include "serve/model/model_stats.h"

#ifndef RBLN_SERVE_VERSION
#define RBLN_SERVE_VERSION "0.0.0"
#endif

struct unary_ctx {
	struct serve_grpc *g;
	const uint8_t *in;
	size_t in_len;
	grpc_byte_buffer **out;
	grpc_status_code *code;
	char *msg;
	size_t msg_len;
};

static void set_status(struct unary_ctx *u, grpc_status_code code, const char *fmt,
		       const char *a, const char *b)
{
	*u->code = code;
	snprintf(u->msg, u->msg_len, fmt, a, b);
}

static bool all_ready(const struct serve_server *s)
{
	size_t i;

	for (i = 0; i < s->n_models; i++)
		if (!serve_model_ready_or_unloaded(&s->models[i]))
			return false;
	return !atomic_load(&s->draining);
}

/* Triton's answer for an unknown model or version (NOT_FOUND). */
static struct serve_model *model_or_status(struct unary_ctx *u, const char *name,
					   const char *version)
{
	struct serve_model *m = serve_server_model(u->g->srv, name, version);

	if (m)
		return m;
	if (*version)
		set_status(u, GRPC_STATUS_NOT_FOUND, "Request for unknown model: '%s' version %s "
			   "is not found", name, version);
	else
		set_status(u, GRPC_STATUS_NOT_FOUND, "Request for unknown model: '%s' is not "
			   "found%s", name, "");
	return NULL;
}

#define UNPACK(type, fn, u) fn##__unpack(NULL, (u)->in_len, (u)->in)
#define BAD_REQUEST(u) set_status(u, GRPC_STATUS_INVALID_ARGUMENT, \
				  "the request is not a valid %s%s", "message", "")

static void server_live(struct unary_ctx *u)
{
	Inference__ServerLiveResponse r = INFERENCE__SERVER_LIVE_RESPONSE__INIT;

	r.live = true;
	*u->out = serve_grpc_pack(&r.base);
}

static void server_ready(struct unary_ctx *u)
{
	Inference__ServerReadyResponse r = INFERENCE__SERVER_READY_RESPONSE__INIT;

	r.ready = all_ready(u->g->srv);
	*u->out = serve_grpc_pack(&r.base);
}

static void model_ready(struct unary_ctx *u)
{
	Inference__ModelReadyRequest *rq = UNPACK(rq, inference__model_ready_request, u);
	Inference__ModelReadyResponse r = INFERENCE__MODEL_READY_RESPONSE__INIT;
	struct serve_model *m;

	if (!rq) {
		BAD_REQUEST(u);
		return;
	}
	m = serve_server_model(u->g->srv, rq->name, rq->version);
	r.ready = m && serve_model_state(m) == SERVE_MODEL_READY;
	*u->out = serve_grpc_pack(&r.base);
	inference__model_ready_request__free_unpacked(rq, NULL);
}

static void server_metadata(struct unary_ctx *u)
{
	static const char *const ext[] = { "model_repository", "model_configuration",
					   "statistics", "binary_tensor_data", "parameters",
					   "generate" };
	Inference__ServerMetadataResponse r = INFERENCE__SERVER_METADATA_RESPONSE__INIT;

	r.name = (char *)"rbln-serve";
	r.version = (char *)RBLN_SERVE_VERSION;
	r.extensions = (char **)ext;
	r.n_extensions = sizeof(ext) / sizeof(ext[0]);
	*u->out = serve_grpc_pack(&r.base);
}

/* TensorMetadata of a model's inputs or outputs (shape with -1 for the batch). */
static Inference__ModelMetadataResponse__TensorMetadata **
tensors(const struct serve_model_config *cfg, const struct serve_tensor *t, size_t n)
{
	Inference__ModelMetadataResponse__TensorMetadata **v = calloc(n ? n : 1, sizeof(*v));
	size_t i, k;

	for (i = 0; v && i < n; i++) {
		Inference__ModelMetadataResponse__TensorMetadata *e = calloc(1, sizeof(*e));

		v[i] = e;
		if (!e)
			break;
		inference__model_metadata_response__tensor_metadata__init(e);
		e->name = t[i].name;
		e->datatype = (char *)serve_dtype_name(t[i].dtype);
		e->shape = calloc(t[i].n_dims + 1, sizeof(*e->shape));
		if (!e->shape)
			break;
		if (cfg->max_batch_size > 0)
			e->shape[e->n_shape++] = -1;
		for (k = 0; k < t[i].n_dims; k++)
			e->shape[e->n_shape++] = t[i].dims[k];
	}
	return v;
}

static void tensors_free(Inference__ModelMetadataResponse__TensorMetadata **v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++) {
		if (v[i])
			free(v[i]->shape);
		free(v[i]);
	}
	free(v);
}

static void model_metadata(struct unary_ctx *u)
{
	Inference__ModelMetadataRequest *rq = UNPACK(rq, inference__model_metadata_request, u);
	Inference__ModelMetadataResponse r = INFERENCE__MODEL_METADATA_RESPONSE__INIT;
	const struct serve_model_config *cfg;
	struct serve_model *m;
	char *version;

	if (!rq) {
		BAD_REQUEST(u);
		return;
	}
	m = model_or_status(u, rq->name, rq->version);
	if (m) {
		cfg = &m->entry->config;
		version = (char *)m->version;
		r.name = (char *)m->name;
		r.versions = &version;
		r.n_versions = 1;
		r.platform = *cfg->platform ? cfg->platform : cfg->backend;
		r.inputs = tensors(cfg, cfg->inputs, cfg->n_inputs);
		r.n_inputs = cfg->n_inputs;
		r.outputs = tensors(cfg, cfg->outputs, cfg->n_outputs);
		r.n_outputs = cfg->n_outputs;
		if (r.inputs && r.outputs)
			*u->out = serve_grpc_pack(&r.base);
		tensors_free(r.inputs, r.n_inputs);
		tensors_free(r.outputs, r.n_outputs);
	}
	inference__model_metadata_request__free_unpacked(rq, NULL);
}

static void model_config(struct unary_ctx *u)
{
	Inference__ModelConfigRequest *rq = UNPACK(rq, inference__model_config_request, u);
	Inference__ModelConfigResponse r = INFERENCE__MODEL_CONFIG_RESPONSE__INIT;
	struct rbln_error err = { 0 };
	ProtobufCMessage *cfg = NULL;
	struct serve_model *m;

	if (!rq) {
		BAD_REQUEST(u);
		return;
	}
	m = model_or_status(u, rq->name, rq->version);
	if (m && serve_grpc_config_from_json(m->entry->config.json, &cfg, &err)) {
		set_status(u, GRPC_STATUS_INTERNAL, "model '%s': %s", m->name, err.msg);
	} else if (m) {
		r.config = (Inference__ModelConfig *)cfg;
		*u->out = serve_grpc_pack(&r.base);
	}
	serve_grpc_config_free(cfg);
	inference__model_config_request__free_unpacked(rq, NULL);
}

static Inference__StatisticDuration *duration(Inference__StatisticDuration *d, uint64_t count,
					      uint64_t ns)
{
	inference__statistic_duration__init(d);
	d->count = count;
	d->ns = ns;
	return d;
}

/* Triton's statistics, from the counters behind /metrics (model_stats.h). */
static void fill_stats(const struct serve_model *m, Inference__ModelStatistics *st,
		       Inference__InferStatistics *is, Inference__StatisticDuration *d)
{
	struct serve_model_stats ms;

	serve_model_stats_get(m, &ms);
	inference__model_statistics__init(st);
	inference__infer_statistics__init(is);
	st->name = (char *)m->name;
	st->version = (char *)m->version;
	st->last_inference = ms.last_inference_ms;
	st->inference_count = ms.inference_count;
	st->execution_count = ms.execution_count;
	st->inference_stats = is;
	is->success = duration(&d[0], ms.success, ms.success_ns);
	is->fail = duration(&d[1], ms.fail, 0);
	is->queue = duration(&d[2], ms.success, ms.queue_ns);
	is->compute_input = duration(&d[3], 0, 0);
	is->compute_infer = duration(&d[4], 0, 0);
	is->compute_output = duration(&d[5], 0, 0);
	is->cache_hit = duration(&d[6], 0, 0);
	is->cache_miss = duration(&d[7], 0, 0);
}

static void model_statistics(struct unary_ctx *u)
{
	Inference__ModelStatisticsRequest *rq = UNPACK(rq, inference__model_statistics_request, u);
	Inference__ModelStatisticsResponse r = INFERENCE__MODEL_STATISTICS_RESPONSE__INIT;
	struct serve_server *s = u->g->srv;
	Inference__ModelStatistics *st = NULL, **pst = NULL;
	Inference__InferStatistics *is = NULL;
	Inference__StatisticDuration *d = NULL;
	size_t n = s->n_models ? s->n_models : 1, i;

	if (!rq) {
		BAD_REQUEST(u);
		return;
	}
	if (*rq->name && !model_or_status(u, rq->name, rq->version))
		goto out;
	st = calloc(n, sizeof(*st));
	pst = calloc(n, sizeof(*pst));
	is = calloc(n, sizeof(*is));
	d = calloc(n * 8, sizeof(*d));
	if (!st || !pst || !is || !d) {
		set_status(u, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory%s%s", "", "");
		goto out;
	}
	for (i = 0; i < s->n_models; i++) {
		const struct serve_model *m = &s->models[i];

		if (*rq->name && (strcmp(m->name, rq->name) ||
				  (*rq->version && strcmp(m->version, rq->version))))
			continue;
		fill_stats(m, &st[r.n_model_stats], &is[r.n_model_stats],
			   &d[8 * r.n_model_stats]);
		pst[r.n_model_stats] = &st[r.n_model_stats];
		r.n_model_stats++;
	}
	r.model_stats = pst;
	*u->out = serve_grpc_pack(&r.base);
out:
	free(st);
	free(pst);
	free(is);
	free(d);
	inference__model_statistics_request__free_unpacked(rq, NULL);
}

static void repository_index(struct unary_ctx *u)
{
	Inference__RepositoryIndexRequest *rq = UNPACK(rq, inference__repository_index_request, u);
	Inference__RepositoryIndexResponse r = INFERENCE__REPOSITORY_INDEX_RESPONSE__INIT;
	struct serve_server *s = u->g->srv;
	Inference__RepositoryIndexResponse__ModelIndex *e = NULL, **pe = NULL;
	size_t n = s->n_models ? s->n_models : 1, i;

	if (!rq) {
		BAD_REQUEST(u);
		return;
	}
	e = calloc(n, sizeof(*e));
	pe = calloc(n, sizeof(*pe));
	if (!e || !pe) {
		set_status(u, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory%s%s", "", "");
		goto out;
	}
	for (i = 0; i < s->n_models; i++) {
		struct serve_model *m = &s->models[i];
		enum serve_model_state st = serve_model_state(m);
		Inference__RepositoryIndexResponse__ModelIndex *x = &e[r.n_models];

		if (rq->ready && st != SERVE_MODEL_READY)
			continue;
		inference__repository_index_response__model_index__init(x);
		x->name = (char *)m->name;
		x->version = (char *)m->version;
		x->state = (char *)serve_model_state_name(st);
		x->reason = st == SERVE_MODEL_UNAVAILABLE ? m->reason : (char *)"";
		pe[r.n_models++] = x;
	}
	r.models = pe;
	*u->out = serve_grpc_pack(&r.base);
out:
	free(e);
	free(pe);
	inference__repository_index_request__free_unpacked(rq, NULL);
}

static const struct {
	const char *name;
	void (*fn)(struct unary_ctx *u);
} methods[] = {
	{ "ServerLive", server_live },
	{ "ServerReady", server_ready },
	{ "ModelReady", model_ready },
	{ "ServerMetadata", server_metadata },
	{ "ModelMetadata", model_metadata },
	{ "ModelConfig", model_config },
	{ "ModelStatistics", model_statistics },
	{ "RepositoryIndex", repository_index },
};

bool serve_grpc_unary_known(const char *method)
{
	size_t i;

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (!strcmp(method, methods[i].name))
			return true;
	return false;
}

int serve_grpc_unary_handle(struct serve_grpc *g, const char *method, const grpc_byte_buffer *in,
		      grpc_byte_buffer **out, grpc_status_code *code, char *msg, size_t msg_len)
{
	struct unary_ctx u = { g, NULL, 0, out, code, msg, msg_len };
	uint8_t *data;
	size_t i;

	*out = NULL;
	*code = GRPC_STATUS_OK;
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (strcmp(method, methods[i].name))
			continue;
		data = serve_grpc_read_all(in, &u.in_len);
		if (!data) {
			set_status(&u, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory%s%s", "", "");
			return 1;
		}
		u.in = data;
		methods[i].fn(&u);
		free(data);
		if (*code == GRPC_STATUS_OK && !*out)
			set_status(&u, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory%s%s", "", "");
		return 1;
	}
	return 0;
}
