/* SPDX-License-Identifier: MIT */
/*
 * A Triton model repository as the RBLN tutorial lays it out:
 *
 *   DIR/<name>/config.pbtxt
 *   DIR/<name>/<version>/model.json
 *   DIR/<name>/<version>/<compiled model>/   (optional; model.json points at it)
 *
 * Several models at once, each with one version loaded (the version policy
 * must select exactly one).  `--model PATH` makes a one-model repository.
 */
#ifndef RBLN_SERVE_REPOSITORY_H
#define RBLN_SERVE_REPOSITORY_H

#include <stddef.h>

#include "model_config.h"
#include "model_json.h"
#include "model_source.h"
#include "rbln_error.h"

struct serve_model_entry {
	char *name;
	char *version;		/* "1" */
	char *model_dir;	/* DIR/<name> */
	char *version_dir;	/* DIR/<name>/<version> */
	struct serve_model_config config;
	struct serve_model_json mj;
	struct serve_model_plan plan;
};

struct serve_repository {
	struct serve_model_entry *models;
	size_t n;
};

/* Reads every model of DIR; the first bad one fails the load (as Triton's default). */
int serve_repository_load(const char *dir, struct serve_repository *repo,
			  struct rbln_error *err);

/*
 * One model from a path (rbln-serve --model PATH): the built-in vLLM
 * configuration, engine arguments given as a model.json would be
 * (mj->model is PATH; mj->file names where they came from).
 */
int serve_repository_single(const char *name, struct serve_model_json *mj,
			    struct serve_repository *repo, struct rbln_error *err);

void serve_repository_free(struct serve_repository *repo);

/* The version directory a configuration selects among DIR's numeric subdirectories. */
int serve_select_version(const char *model_dir, const struct serve_model_config *cfg,
			 char **version, struct rbln_error *err);

#endif
