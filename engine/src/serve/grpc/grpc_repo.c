// SPDX-License-Identifier: MIT
/*
 * RepositoryModelLoad and RepositoryModelUnload (Triton's model repository
 * extension).  Opening an engine takes seconds, and the completion queue
 * has one thread: each call runs on a thread of its own, holding the call,
 * and answers from there (sends are thread-safe, as the inference
 * requests' are).
 */
#include "grpc_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grpc_service.pb-c.h"
#include "serve/http/model_control.h"

struct repo_call {
	struct grpc_callctx *c;
	bool load;
	char *model;
	char msg[RBLN_ERROR_MSG_MAX];
	int bad;			/* the request's parameters are wrong: msg says how */
};

bool serve_grpc_repo_method(const char *method)
{
	return !strcmp(method, "RepositoryModelLoad") || !strcmp(method, "RepositoryModelUnload");
}

/* As over HTTP: load takes no overrides; unload takes unload_dependents (a bool). */
static void check_param(struct repo_call *r, const char *key,
			const Inference__ModelRepositoryParameter *value)
{
	if (r->bad)
		return;
	if (!r->load && !strcmp(key, "unload_dependents") && value &&
	    value->parameter_choice_case ==
	    INFERENCE__MODEL_REPOSITORY_PARAMETER__PARAMETER_CHOICE_BOOL_PARAM)
		return;
	snprintf(r->msg, sizeof(r->msg), "parameter '%.100s' is not supported by %s (%s)", key,
		 r->load ? "load" : "unload",
		 r->load ? "models are loaded from the repository as they are: no config or file "
			   "overrides" : "only unload_dependents, a boolean, is");
	r->bad = 1;
}

/* The request, unpacked; NULL model when it is not one. */
static void read_request(struct repo_call *r, const grpc_byte_buffer *in)
{
	size_t len;
	uint8_t *data = serve_grpc_read_all(in, &len);

	if (r->load) {
		Inference__RepositoryModelLoadRequest *rq =
			data ? inference__repository_model_load_request__unpack(NULL, len, data)
			     : NULL;

		if (rq) {
			r->model = strdup(rq->model_name);
			for (size_t i = 0; i < rq->n_parameters; i++)
				check_param(r, rq->parameters[i]->key, rq->parameters[i]->value);
			inference__repository_model_load_request__free_unpacked(rq, NULL);
		}
	} else {
		Inference__RepositoryModelUnloadRequest *rq =
			data ? inference__repository_model_unload_request__unpack(NULL, len, data)
			     : NULL;

		if (rq) {
			r->model = strdup(rq->model_name);
			for (size_t i = 0; i < rq->n_parameters; i++)
				check_param(r, rq->parameters[i]->key, rq->parameters[i]->value);
			inference__repository_model_unload_request__free_unpacked(rq, NULL);
		}
	}
	free(data);
}

static void *run(void *arg)
{
	struct repo_call *r = arg;
	struct serve_server *s = r->c->g->srv;
	struct rbln_error err = { 0 };
	int rc;

	rc = r->load ? serve_model_load(s, r->model, &err) : serve_model_unload(s, r->model, &err);
	if (rc) {
		serve_grpc_call_finish(r->c, serve_grpc_status_of(rc), err.msg);
	} else if (r->load) {
		Inference__RepositoryModelLoadResponse out =
			INFERENCE__REPOSITORY_MODEL_LOAD_RESPONSE__INIT;

		serve_grpc_call_send(r->c, serve_grpc_pack(&out.base));
		serve_grpc_call_finish(r->c, GRPC_STATUS_OK, NULL);
	} else {
		Inference__RepositoryModelUnloadResponse out =
			INFERENCE__REPOSITORY_MODEL_UNLOAD_RESPONSE__INIT;

		serve_grpc_call_send(r->c, serve_grpc_pack(&out.base));
		serve_grpc_call_finish(r->c, GRPC_STATUS_OK, NULL);
	}
	serve_grpc_callctx_unref(r->c);
	free(r->model);
	free(r);
	return NULL;
}

void serve_grpc_repo_call(struct grpc_callctx *c, const grpc_byte_buffer *in)
{
	struct repo_call *r = calloc(1, sizeof(*r));
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (!r) {
		serve_grpc_call_finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	r->c = c;
	r->load = !strcmp(c->method, "RepositoryModelLoad");
	if (in)
		read_request(r, in);
	if (!r->model || r->bad || !*r->model) {
		serve_grpc_call_finish(c, GRPC_STATUS_INVALID_ARGUMENT,
				 r->bad ? r->msg : !r->model ? "the request is not a valid "
				 "inference.RepositoryModel(Un)loadRequest" : "model_name is empty");
		free(r->model);
		free(r);
		return;
	}
	serve_grpc_callctx_ref(c);	/* the thread's */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, run, r);
	pthread_attr_destroy(&attr);
	if (rc) {
		serve_grpc_call_finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "no thread for the request");
		serve_grpc_callctx_unref(c);
		free(r->model);
		free(r);
	}
}
