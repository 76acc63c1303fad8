// SPDX-License-Identifier: MIT
/*
 * URL routing.  Model names are one path segment (Triton's [^/]+); a
 * version is decimal digits, as Triton's regex demands.
 */
#include "router.h"

#include <stdio.h>
#include <string.h>

static bool take_segment(const char **p, char *out, size_t len)
{
	const char *s = *p, *e = strchr(s, '/');
	size_t n = e ? (size_t)(e - s) : strlen(s);

	if (!n || n >= len)
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	*p = s + n;
	return true;
}

static bool digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

enum serve_route_kind serve_route(const char *url, struct serve_route *r)
{
	static const struct {
		const char *path;
		enum serve_route_kind kind;
	} fixed[] = {
		{ "/v2", SERVE_R_SERVER_META },
		{ "/v2/health/live", SERVE_R_LIVE },
		{ "/v2/health/ready", SERVE_R_READY },
		{ "/v2/repository/index", SERVE_R_REPO_INDEX },
		{ "/v1/models", SERVE_R_V1_MODELS },
		{ "/v1/completions", SERVE_R_V1_COMPLETIONS },
		{ "/v1/chat/completions", SERVE_R_V1_CHAT },
		{ "/v2/models/stats", SERVE_R_STATS },
	};
	static const struct {
		const char *action;
		enum serve_route_kind kind;
	} actions[] = {
		{ "", SERVE_R_MODEL_META },
		{ "/ready", SERVE_R_MODEL_READY },
		{ "/config", SERVE_R_MODEL_CONFIG },
		{ "/infer", SERVE_R_INFER },
		{ "/generate", SERVE_R_GENERATE },
		{ "/generate_stream", SERVE_R_GENERATE_STREAM },
		{ "/stats", SERVE_R_MODEL_STATS },
	};
	char path[1024];
	const char *p;
	size_t i, n = strcspn(url, "?");

	memset(r, 0, sizeof(*r));
	r->kind = SERVE_R_NOT_FOUND;
	if (n >= sizeof(path))
		return r->kind;
	memcpy(path, url, n);
	path[n] = '\0';
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcmp(path, fixed[i].path))
			return r->kind = fixed[i].kind;
	if (!strncmp(path, "/v1/models/", 11)) {
		p = path + 11;
		if (take_segment(&p, r->model, sizeof(r->model)) && !*p)
			r->kind = SERVE_R_V1_MODEL;
		return r->kind;
	}
	if (!strncmp(path, "/v2/repository/models/", 22)) {
		p = path + 22;
		if (take_segment(&p, r->model, sizeof(r->model)))
			r->kind = !strcmp(p, "/load") ? SERVE_R_REPO_LOAD
				: !strcmp(p, "/unload") ? SERVE_R_REPO_UNLOAD : SERVE_R_NOT_FOUND;
		return r->kind;
	}
	if (strncmp(path, "/v2/models/", 11))
		return r->kind;
	p = path + 11;
	if (!take_segment(&p, r->model, sizeof(r->model)))
		return r->kind;
	if (!strncmp(p, "/versions/", 10)) {
		p += 10;
		if (!take_segment(&p, r->version, sizeof(r->version)) || !digits(r->version))
			return r->kind = SERVE_R_NOT_FOUND;
	}
	for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (!strcmp(p, actions[i].action))
			return r->kind = actions[i].kind;
	return r->kind = SERVE_R_NOT_FOUND;
}

const char *serve_route_method(enum serve_route_kind k)
{
	switch (k) {
	case SERVE_R_REPO_INDEX:
	case SERVE_R_REPO_LOAD:
	case SERVE_R_REPO_UNLOAD:
	case SERVE_R_INFER:
	case SERVE_R_GENERATE:
	case SERVE_R_GENERATE_STREAM:
	case SERVE_R_V1_COMPLETIONS:
	case SERVE_R_V1_CHAT:
		return "POST";
	default:
		return "GET";
	}
}

bool serve_route_generates(enum serve_route_kind k)
{
	return k == SERVE_R_INFER || k == SERVE_R_GENERATE || k == SERVE_R_GENERATE_STREAM ||
	       k == SERVE_R_V1_COMPLETIONS || k == SERVE_R_V1_CHAT;
}
