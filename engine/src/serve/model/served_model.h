/* SPDX-License-Identifier: MIT */
/*
 * A model as the server holds it: its repository entry, what the HTTP side
 * needs to turn text into tokens and back (tokenizer, chat template,
 * generation defaults), its engine once started, its state and metrics.
 */
#ifndef RBLN_SERVE_SERVED_MODEL_H
#define RBLN_SERVE_SERVED_MODEL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_chat.h"
#include "rbln_serving.h"
#include "rbln_tokenizer.h"
#include "serve/api/request_build.h"
#include "serve/metrics/metrics.h"
#include "serve/repository/repository.h"

enum serve_model_state {
	SERVE_MODEL_LOADING,		/* tokenizer ready, engine not (yet) */
	SERVE_MODEL_READY,
	SERVE_MODEL_UNAVAILABLE,	/* loading failed, or unloaded: reason says why */
	SERVE_MODEL_UNLOADING,		/* no new requests; its engine closes after the last */
};

struct serve_model {
	const struct serve_model_entry *entry;	/* owned by the repository */
	const char *name;
	const char *version;
	struct rbln_tokenizer *tok;
	struct rbln_chat_template *chat;	/* NULL when the model has none */
	struct serve_model_text text;		/* for serve_request_build() */
	const struct rbln_serving_ops *ops;
	struct rbln_serving_model *engine;
	struct rbln_serving_model_info info;
	atomic_int state;
	char reason[512];			/* why UNAVAILABLE */
	uint32_t max_waiting;
	uint64_t default_timeout_us;
	struct serve_model_metrics metrics;
	/* Load and unload (model_control.h): the requests that hold the engine. */
	pthread_mutex_t ctl_lock;
	pthread_cond_t ctl_cond;	/* the state left LOADING or UNLOADING */
	unsigned holders;
};

/* Loads the tokenizer, chat template and defaults; the model is then LOADING. */
int serve_model_prepare(struct serve_model *m, const struct serve_model_entry *e,
			struct rbln_error *err);

/*
 * Compiles on first load if needed and opens the engine: READY on success,
 * else UNAVAILABLE with the reason (also returned in err).
 */
int serve_model_start(struct serve_model *m, const struct rbln_serving_ops *ops,
		      uint32_t default_max_waiting, struct rbln_error *err);

/* Marks the model unavailable without an engine, giving the reason. */
void serve_model_set_unavailable(struct serve_model *m, const char *reason);

/*
 * The model of a name among n; a version other than NULL or "" must match
 * too.  NULL if there is none.
 */
struct serve_model *serve_model_find(struct serve_model *models, size_t n, const char *name,
				     const char *version);

enum serve_model_state serve_model_state(const struct serve_model *m);
const char *serve_model_state_name(enum serve_model_state s);

/* Closes the engine (its requests end) and frees everything. */
void serve_model_free(struct serve_model *m);

#endif
