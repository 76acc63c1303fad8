// SPDX-License-Identifier: MIT
/*
 * The model repository extension's load and unload over HTTP:
 * POST /v2/repository/models/M/load and .../unload, with an optional body
 * {"parameters": {...}}.  Opening an engine takes seconds (minutes when a
 * checkpoint is compiled on first load), so the work runs on the bulk
 * preparation worker while the connection waits suspended, as a generating
 * request's preparation does; the HTTP threads stay free.
 */
#include "handlers.h"
#include "reply.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "model_control.h"

/*
 * The body's parameters, checked: Triton's load takes "config" and "file:"
 * overrides, which this server does not (its models are compiled
 * directories); unload takes "unload_dependents" (a model here has none).
 */
static int check_parameters(const struct serve_conn *cx, bool load, char *msg, size_t len)
{
	json_object *body, *params = NULL;
	enum json_tokener_error jerr = json_tokener_success;
	int rc = 0;

	if (!cx->body.len)
		return 0;
	body = json_tokener_parse_verbose(cx->body.data, &jerr);
	if (!body || !json_object_is_type(body, json_type_object)) {
		snprintf(msg, len, "the %s request body must be a JSON object ({\"parameters\": "
			 "{...}}): %s", load ? "load" : "unload",
			 body ? "it is another JSON value" : json_tokener_error_desc(jerr));
		json_object_put(body);
		return -EINVAL;
	}
	json_object_object_foreach(body, key, val) {
		if (strcmp(key, "parameters")) {
			snprintf(msg, len, "unknown field '%.100s' in the %s request body", key,
				 load ? "load" : "unload");
			rc = -EINVAL;
			break;
		}
		params = val;
	}
	if (!rc && params && !json_object_is_type(params, json_type_object)) {
		snprintf(msg, len, "field 'parameters' must be an object");
		rc = -EINVAL;
	}
	if (!rc && params) {
		json_object_object_foreach(params, key, val) {
			if (!load && !strcmp(key, "unload_dependents") &&
			    json_object_is_type(val, json_type_boolean))
				continue;
			snprintf(msg, len, "parameter '%.100s' is not supported by %s (%s)", key,
				 load ? "load" : "unload",
				 load ? "models are loaded from the repository as they are: no "
					"config or file overrides"
				      : "only unload_dependents, a boolean, is");
			rc = -EINVAL;
			break;
		}
	}
	json_object_put(body);
	return rc;
}

int serve_index_request(const struct serve_conn *cx, bool *ready_only, char *msg, size_t len)
{
	enum json_tokener_error jerr = json_tokener_success;
	json_object *body;
	int rc = 0;

	*ready_only = false;
	if (!cx->body.len)
		return 0;
	body = json_tokener_parse_verbose(cx->body.data, &jerr);
	if (!body || !json_object_is_type(body, json_type_object)) {
		snprintf(msg, len, "the index request body must be a JSON object: %s",
			 body ? "it is another JSON value" : json_tokener_error_desc(jerr));
		json_object_put(body);
		return -EINVAL;
	}
	json_object_object_foreach(body, key, val) {
		if (!strcmp(key, "ready") && json_object_is_type(val, json_type_boolean)) {
			*ready_only = json_object_get_boolean(val);
		} else if (strcmp(key, "repository_name") ||
			   !json_object_is_type(val, json_type_string)) {
			snprintf(msg, len, "index request: '%.100s' is not a field of it (it takes "
				 "'repository_name', a string, and 'ready', a boolean)", key);
			rc = -EINVAL;
			break;
		}
	}
	json_object_put(body);
	return rc;
}

static unsigned repo_status(int err)
{
	switch (err) {
	case -ENOSYS:
	case -EBUSY:
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	case -ENOENT:
		return MHD_HTTP_NOT_FOUND;
	default:
		return MHD_HTTP_BAD_REQUEST;	/* a failed load, as tritonserver answers it */
	}
}

/* On the bulk preparation worker: the load or unload itself. */
static void run_control(struct serve_prep_task *t)
{
	struct serve_conn *cx = (struct serve_conn *)((char *)t - offsetof(struct serve_conn, task));
	struct serve_prepared *p = &cx->prep;
	struct serve_server *srv = cx->srv;
	struct rbln_error err = { 0 };
	int rc;

	rc = cx->route.kind == SERVE_R_REPO_LOAD ? serve_model_load(srv, cx->route.model, &err)
						 : serve_model_unload(srv, cx->route.model, &err);
	p->status = rc ? repo_status(rc) : MHD_HTTP_OK;
	snprintf(p->msg, sizeof(p->msg), "%s", rc ? err.msg : "");
	serve_conn_offload_done(cx);
}

enum MHD_Result serve_handle_repo(struct serve_conn *cx, struct MHD_Connection *c)
{
	enum serve_prep_state st = serve_conn_offload_state(cx);

	if (st == SERVE_PREP_RUNNING)
		return MHD_YES;	/* called again while suspended: the worker resumes us */
	if (st == SERVE_PREP_DONE) {
		if (cx->prep.status != MHD_HTTP_OK)
			return serve_http_error(c, cx->prep.status, cx->prep.msg, false);
		return serve_http_reply(c, MHD_HTTP_OK, NULL, "", 0, NULL, NULL);
	}
	if (check_parameters(cx, cx->route.kind == SERVE_R_REPO_LOAD, cx->prep.msg,
			     sizeof(cx->prep.msg)))
		return serve_http_error(c, MHD_HTTP_BAD_REQUEST, cx->prep.msg, false);
	if (serve_conn_offload(cx, c, cx->srv->prep_bulk, run_control))
		return serve_http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE,
					"the server is shutting down", false);
	return MHD_YES;
}
