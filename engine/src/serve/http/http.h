/* SPDX-License-Identifier: MIT */
/* What the HTTP service's files share: the per-request context. */
#ifndef RBLN_SERVE_HTTP_H
#define RBLN_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>
#include <microhttpd.h>

#include "prep.h"
#include "router.h"
#include "serve/api/request.h"
#include "serve/api/request_build.h"
#include "serve/api/responses.h"
#include "server.h"
#include "util/strbuf.h"

#ifndef RBLN_SERVE_VERSION
#define RBLN_SERVE_VERSION "0.0.0"
#endif

/* Where a generating request is with its preparation (prep.h). */
enum serve_prep_state { SERVE_PREP_NONE, SERVE_PREP_RUNNING, SERVE_PREP_DONE };

/* What the preparation of a generating request leaves for the handler. */
struct serve_prepared {
	struct serve_model *model;
	size_t infer_json_len;		/* the Inference-Header-Content-Length */
	struct serve_request req;	/* valid when ok */
	struct serve_built built;
	bool ok;
	unsigned status;		/* else the error's */
	char msg[RBLN_ERROR_MSG_MAX];
};

/* One HTTP request (libmicrohttpd's per-request closure). */
struct serve_conn {
	struct serve_server *srv;
	struct MHD_Connection *conn;
	struct serve_route route;
	bool method_ok;
	bool arrived;			/* the body is complete */
	bool decoded;			/* and inflated by its Content-Encoding */
	struct rbln_strbuf body;
	size_t body_total;		/* bytes received, kept or not */
	struct serve_job *job;		/* a generation in flight, or NULL */
	struct serve_prep_task task;
	_Atomic int prep_state;		/* enum serve_prep_state */
	struct serve_prepared prep;
};

#endif
