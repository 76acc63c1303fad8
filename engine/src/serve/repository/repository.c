// SPDX-License-Identifier: MIT
/*
 * Model repository scanning (see repository.h).  Models are read in name
 * order so that the startup table and /v1/models are stable.
 */
#include "repository.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/file.h"

static bool is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Subdirectory names of dir, sorted; hidden ones left out. */
static int list_dirs(const char *dir, char ***out, size_t *n, struct rbln_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t k = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return rbln_error_set(err, -errno, "cannot read %s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		char *p, **nv;

		if (e->d_name[0] == '.')
			continue;
		p = rbln_path_join(dir, e->d_name);
		if (!p)
			goto nomem;
		if (!is_dir(p)) {
			free(p);
			continue;
		}
		free(p);
		nv = realloc(v, (k + 1) * sizeof(*v));
		if (!nv)
			goto nomem;
		v = nv;
		v[k] = strdup(e->d_name);
		if (!v[k])
			goto nomem;
		k++;
	}
	closedir(d);
	if (k)
		qsort(v, k, sizeof(*v), cmp_str);
	*out = v;
	*n = k;
	return 0;
nomem:
	closedir(d);
	while (k)
		free(v[--k]);
	free(v);
	return rbln_error_set(err, -ENOMEM, "out of memory");
}

static void free_list(char **v, size_t n)
{
	while (n)
		free(v[--n]);
	free(v);
}

static bool numeric(const char *s, long long *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return !*end && !errno;
}

int serve_select_version(const char *model_dir, const struct serve_model_config *cfg,
			 char **version, struct rbln_error *err)
{
	char **names;
	size_t n, i, count = 0;
	long long best = -1, v;
	char buf[32];
	int rc = list_dirs(model_dir, &names, &n, err);

	*version = NULL;
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		bool selected = false;
		size_t k;

		if (!numeric(names[i], &v))
			continue;
		if (cfg->version_policy == SERVE_VERSIONS_SPECIFIC) {
			for (k = 0; k < cfg->n_versions; k++)
				selected |= cfg->versions[k] == v;
		} else {
			selected = true;
		}
		if (!selected)
			continue;
		count++;
		if (v > best)
			best = v;
	}
	free_list(names, n);
	if (cfg->version_policy == SERVE_VERSIONS_SPECIFIC && cfg->n_versions > 1)
		return rbln_error_set(err, -EINVAL, "%s: version_policy selects %zu versions; "
				      "rbln-serve loads one version of a model", cfg->file,
				      cfg->n_versions);
	if (cfg->version_policy == SERVE_VERSIONS_SPECIFIC && !count)
		return rbln_error_set(err, -ENOENT, "%s: version_policy selects version %lld, "
				      "but %s/%lld does not exist", cfg->file,
				      (long long)cfg->versions[0], model_dir,
				      (long long)cfg->versions[0]);
	if (!count)
		return rbln_error_set(err, -ENOENT, "%s: no version directory (a numeric "
				      "subdirectory such as %s/1 holding model.json)", model_dir,
				      model_dir);
	if (cfg->version_policy == SERVE_VERSIONS_ALL && count > 1)
		return rbln_error_set(err, -EINVAL, "%s: version_policy all selects %zu versions; "
				      "rbln-serve loads one version of a model", cfg->file, count);
	if (cfg->version_policy == SERVE_VERSIONS_LATEST && cfg->latest_versions > 1 && count > 1)
		return rbln_error_set(err, -EINVAL, "%s: version_policy latest { num_versions: %u } "
				      "selects %zu versions; rbln-serve loads one version of a "
				      "model", cfg->file, cfg->latest_versions,
				      count < cfg->latest_versions ? count
								   : (size_t)cfg->latest_versions);
	snprintf(buf, sizeof(buf), "%lld", best);
	*version = strdup(buf);
	return *version ? 0 : rbln_error_set(err, -ENOMEM, "out of memory");
}

static void entry_free(struct serve_model_entry *e)
{
	free(e->name);
	free(e->version);
	free(e->model_dir);
	free(e->version_dir);
	serve_model_config_free(&e->config);
	serve_model_json_free(&e->mj);
	serve_model_plan_free(&e->plan);
	memset(e, 0, sizeof(*e));
}

static int load_entry(const char *repo_dir, const char *name, struct serve_model_entry *e,
		      struct rbln_error *err)
{
	char *cfg_path = NULL, *mj_path = NULL;
	int rc;

	memset(e, 0, sizeof(*e));
	e->name = strdup(name);
	e->model_dir = rbln_path_join(repo_dir, name);
	if (!e->name || !e->model_dir)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	cfg_path = rbln_path_join(e->model_dir, "config.pbtxt");
	if (!cfg_path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	if (!rbln_file_exists(cfg_path)) {
		rc = rbln_error_set(err, -ENOENT, "%s is missing: every model directory needs one "
				    "(at least backend: \"vllm\")", cfg_path);
		goto out;
	}
	rc = serve_model_config_load(cfg_path, name, &e->config, err);
	if (rc)
		goto out;
	rc = serve_select_version(e->model_dir, &e->config, &e->version, err);
	if (rc)
		goto out;
	e->version_dir = rbln_path_join(e->model_dir, e->version);
	mj_path = e->version_dir ? rbln_path_join(e->version_dir, "model.json") : NULL;
	if (!mj_path) {
		rc = rbln_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (!rbln_file_exists(mj_path)) {
		rc = rbln_error_set(err, -ENOENT, "%s is missing: it names the model to serve "
				    "({\"model\": ..., \"max_num_seqs\": ..., \"device\": "
				    "\"rbln\"})%s", mj_path,
				    !strcmp(e->config.backend, "python")
				    ? " (rbln-serve does not run model.py)" : "");
		goto out;
	}
	rc = serve_model_json_load(mj_path, &e->mj, err);
	if (rc)
		goto out;
	rc = serve_model_plan(&e->mj, e->version_dir, &e->plan, err);
out:
	free(cfg_path);
	free(mj_path);
	return rc;
}

int serve_repository_load(const char *dir, struct serve_repository *repo,
			  struct rbln_error *err)
{
	char **names;
	size_t n, i;
	int rc;

	memset(repo, 0, sizeof(*repo));
	if (!is_dir(dir))
		return rbln_error_set(err, -ENOENT, "model repository %s is not a directory", dir);
	rc = list_dirs(dir, &names, &n, err);
	if (rc)
		return rc;
	if (!n) {
		free_list(names, n);
		return rbln_error_set(err, -ENOENT, "model repository %s has no models (expected "
				      "%s/<name>/config.pbtxt)", dir, dir);
	}
	repo->models = calloc(n, sizeof(*repo->models));
	if (!repo->models) {
		free_list(names, n);
		return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		repo->n++;
		rc = load_entry(dir, names[i], &repo->models[i], err);
		if (rc)
			break;
	}
	free_list(names, n);
	if (rc)
		serve_repository_free(repo);
	return rc;
}

int serve_repository_single(const char *name, struct serve_model_json *mj,
			    struct serve_repository *repo, struct rbln_error *err)
{
	struct serve_model_entry *e;
	int rc;

	memset(repo, 0, sizeof(*repo));
	repo->models = calloc(1, sizeof(*repo->models));
	if (!repo->models)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	repo->n = 1;
	e = &repo->models[0];
	e->name = strdup(name);
	e->version = strdup("1");
	e->version_dir = strdup(".");
	if (!e->name || !e->version || !e->version_dir) {
		serve_repository_free(repo);
		return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	e->mj = *mj;
	memset(mj, 0, sizeof(*mj));
	rc = serve_model_config_default(name, &e->config, err);
	if (!rc)
		rc = serve_model_plan(&e->mj, e->version_dir, &e->plan, err);
	if (rc)
		serve_repository_free(repo);
	return rc;
}

void serve_repository_free(struct serve_repository *repo)
{
	size_t i;

	for (i = 0; i < repo->n; i++)
		entry_free(&repo->models[i]);
	free(repo->models);
	memset(repo, 0, sizeof(*repo));
}
