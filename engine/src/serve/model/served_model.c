// SPDX-License-Identifier: MIT
/* Served models: preparation, engine start, state (see served_model.h). */
#include "served_model.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/file.h"

int serve_model_prepare(struct serve_model *m, const struct serve_model_entry *e,
			struct rbln_error *err)
{
	const struct serve_model_plan *plan = &e->plan;
	char *chat_file;
	bool has_chat;
	int rc;

	memset(m, 0, sizeof(*m));
	m->entry = e;
	m->name = e->name;
	m->version = e->version;
	atomic_init(&m->state, SERVE_MODEL_LOADING);
	pthread_mutex_init(&m->ctl_lock, NULL);
	pthread_cond_init(&m->ctl_cond, NULL);
	rc = rbln_tokenizer_load(plan->tokenizer_dir, &m->tok, err);
	if (rc)
		return rc;
	/*
	 * A model without a chat template is still served; chat requests to it
	 * get a 400 saying so.  A template that is present but broken is an
	 * error now, not at the first chat request.
	 */
	chat_file = rbln_path_join(plan->tokenizer_dir, "chat_template.jinja");
	has_chat = chat_file && rbln_file_exists(chat_file);
	free(chat_file);
	rc = rbln_chat_template_load(plan->tokenizer_dir, &m->chat, err);
	if (rc == -ENOENT && !has_chat) {
		m->chat = NULL;
		rc = 0;
	}
	if (rc)
		return rc;
	rc = serve_gen_defaults_load(plan->tokenizer_dir, &m->text.defaults, err);
	if (rc)
		return rc;
	m->text.name = m->name;
	m->text.tok = m->tok;
	m->text.chat = m->chat;
	m->text.max_model_len = plan->max_model_len;
	m->text.vocab_size = (int64_t)rbln_tokenizer_vocab_size(m->tok);
	m->text.longest_token = serve_longest_token(m->tok);
	m->text.max_logprobs = plan->max_logprobs;
	m->default_timeout_us = e->config.default_timeout_us;
	serve_model_metrics_init(&m->metrics, plan->max_model_len);
	return 0;
}

void serve_model_set_unavailable(struct serve_model *m, const char *reason)
{
	snprintf(m->reason, sizeof(m->reason), "%s", reason);
	atomic_store(&m->state, SERVE_MODEL_UNAVAILABLE);
}

int serve_model_start(struct serve_model *m, const struct rbln_serving_ops *ops,
		      uint32_t default_max_waiting, struct rbln_error *err)
{
	struct serve_model_entry *e = (struct serve_model_entry *)m->entry;
	struct rbln_serving_model_spec spec;
	int rc;

	m->ops = ops;
	m->max_waiting = e->config.max_queue_size ? e->config.max_queue_size
						  : default_max_waiting;
	rc = serve_compile_on_first_load(ops, &e->mj, &e->plan, err);
	if (!rc) {
		serve_model_plan_spec(&e->plan, m->name, m->max_waiting, &spec);
		rc = ops->open(&spec, &m->engine, err);
	}
	if (rc) {
		serve_model_set_unavailable(m, err ? err->msg : "loading failed");
		return rc;
	}
	ops->info(m->engine, &m->info);
	/* The engine's view wins: it may serve less than model.json allows. */
	if (m->info.max_model_len > 0 && m->info.max_model_len < m->text.max_model_len)
		m->text.max_model_len = m->info.max_model_len;
	if (m->info.vocab_size > 0 && m->info.vocab_size < m->text.vocab_size)
		m->text.vocab_size = m->info.vocab_size;
	atomic_store(&m->state, SERVE_MODEL_READY);
	return 0;
}

enum serve_model_state serve_model_state(const struct serve_model *m)
{
	return (enum serve_model_state)atomic_load(&m->state);
}

const char *serve_model_state_name(enum serve_model_state s)
{
	switch (s) {
	case SERVE_MODEL_LOADING: return "LOADING";
	case SERVE_MODEL_READY: return "READY";
	case SERVE_MODEL_UNAVAILABLE: return "UNAVAILABLE";
	case SERVE_MODEL_UNLOADING: return "UNLOADING";
	}
	return "UNKNOWN";
}

void serve_model_free(struct serve_model *m)
{
	if (!m->name)
		return;	/* never prepared */
	/* an unload still closing the engine finishes first */
	pthread_mutex_lock(&m->ctl_lock);
	while (serve_model_state(m) == SERVE_MODEL_UNLOADING && !m->holders)
		pthread_cond_wait(&m->ctl_cond, &m->ctl_lock);
	pthread_mutex_unlock(&m->ctl_lock);
	if (m->engine)
		m->ops->close(m->engine);
	rbln_chat_template_free(m->chat);
	rbln_tokenizer_free(m->tok);
	pthread_cond_destroy(&m->ctl_cond);
	pthread_mutex_destroy(&m->ctl_lock);
	memset(m, 0, sizeof(*m));
}

struct serve_model *serve_model_find(struct serve_model *models, size_t n, const char *name,
				     const char *version)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct serve_model *m = &models[i];

		if (strcmp(m->name, name))
			continue;
		if (version && *version && strcmp(m->version, version))
			return NULL;
		return m;
	}
	return NULL;
}
