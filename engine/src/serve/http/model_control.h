/* SPDX-License-Identifier: MIT */
/*
 * Loading and unloading models while the server runs, as tritonserver's
 * --model-control-mode does.  "none" (the default) starts every model of
 * the repository and refuses load and unload; "explicit" starts only the
 * models named by --load-model and lets the repository API load and unload
 * them (POST /v2/repository/models/M/load|unload, gRPC
 * RepositoryModelLoad|Unload).
 *
 * An unload returns at once, as Triton's does: the model takes no new
 * request from then on (UNLOADING), the requests in flight finish, and the
 * last of them closes the engine (UNAVAILABLE, "unloaded").  Each request
 * holds the model for its life (serve_model_hold), so the engine never
 * closes under one.
 */
#ifndef RBLN_SERVE_MODEL_CONTROL_H
#define RBLN_SERVE_MODEL_CONTROL_H

#include <stdbool.h>

#include "rbln_error.h"
#include "serve/model/served_model.h"

struct serve_server;

enum serve_control_mode {
	SERVE_CONTROL_NONE,
	SERVE_CONTROL_EXPLICIT,
};

/* "none" or "explicit"; -EINVAL for anything else ("poll" is not supported). */
int serve_control_mode_parse(const char *s, enum serve_control_mode *out);

/* A request's hold on a READY model's engine; false (nothing held) when it is not READY. */
bool serve_model_hold(struct serve_model *m);
/* The hold ends; the last one of an unloading model closes its engine. */
void serve_model_unhold(struct serve_model *m);

/*
 * What server readiness asks of each model, as in Triton: READY, or
 * unloaded on purpose (a model that failed to load, or is loading or
 * unloading, makes the server not ready).
 */
bool serve_model_ready_or_unloaded(struct serve_model *m);

/* Marks a prepared model not loaded (explicit mode, at start); ops are for a later load. */
void serve_model_set_unloaded(struct serve_model *m, const struct rbln_serving_ops *ops);

/*
 * The repository API.  0 when done (a model already READY loads as a
 * no-op; one not loaded unloads as a no-op); else -errno with err saying
 * why: -ENOSYS in mode none (Triton's message), -ENOENT for a model not
 * in the repository, -EBUSY while it is still unloading, or the load's
 * own failure (the model is then UNAVAILABLE with that reason).
 */
int serve_model_load(struct serve_server *s, const char *name, struct rbln_error *err);
int serve_model_unload(struct serve_server *s, const char *name, struct rbln_error *err);

#endif
