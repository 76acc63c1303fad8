/* SPDX-License-Identifier: MIT */
/*
 * URL routing of the HTTP API: Triton's KServe v2 paths (with its model
 * path syntax /v2/models/NAME[/versions/N][/ACTION]) and OpenAI's /v1.
 */
#ifndef RBLN_SERVE_ROUTER_H
#define RBLN_SERVE_ROUTER_H

#include <stdbool.h>

enum serve_route_kind {
	SERVE_R_NOT_FOUND,
	SERVE_R_SERVER_META,		/* GET /v2 */
	SERVE_R_LIVE,			/* GET /v2/health/live */
	SERVE_R_READY,			/* GET /v2/health/ready */
	SERVE_R_REPO_INDEX,		/* POST /v2/repository/index */
	SERVE_R_MODEL_META,		/* GET /v2/models/M[/versions/V] */
	SERVE_R_MODEL_READY,		/* GET .../ready */
	SERVE_R_MODEL_CONFIG,		/* GET .../config */
	SERVE_R_INFER,			/* POST .../infer */
	SERVE_R_GENERATE,		/* POST .../generate */
	SERVE_R_GENERATE_STREAM,	/* POST .../generate_stream */
	SERVE_R_V1_MODELS,		/* GET /v1/models */
	SERVE_R_V1_COMPLETIONS,		/* POST /v1/completions */
	SERVE_R_V1_CHAT,		/* POST /v1/chat/completions */
	SERVE_R_STATS,			/* GET /v2/models/stats: every model's */
	SERVE_R_MODEL_STATS,		/* GET /v2/models/M[/versions/V]/stats */
	SERVE_R_V1_MODEL,		/* GET /v1/models/ID */
	SERVE_R_REPO_LOAD,		/* POST /v2/repository/models/M/load */
	SERVE_R_REPO_UNLOAD,		/* POST /v2/repository/models/M/unload */
};

#define SERVE_NAME_MAX 256

struct serve_route {
	enum serve_route_kind kind;
	char model[SERVE_NAME_MAX];
	char version[32];		/* "" when the URL names none */
};

/* Routes a (decoded) URL path; a query string, if any, is ignored. */
enum serve_route_kind serve_route(const char *url, struct serve_route *r);
/* The method a route answers ("GET" or "POST"). */
const char *serve_route_method(enum serve_route_kind k);
/* True for the routes that generate (they take a body and run the engine). */
bool serve_route_generates(enum serve_route_kind k);

#endif
