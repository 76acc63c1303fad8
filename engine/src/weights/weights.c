// SPDX-License-Identifier: MIT
/*
 * A checkpoint's weights: one model.safetensors, or the shards named by
 * model.safetensors.index.json.  The index and the shards must agree
 * exactly (same tensors, each in the file the index names, total_size
 * matching), because a disagreement means a partial or mixed download.
 */
#include "rbln_weights.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"
#include "util/hashmap.h"
#include "util/json.h"

#define SINGLE_FILE "model.safetensors"
#define INDEX_FILE "model.safetensors.index.json"

struct rbln_weights {
	char *dir;
	struct rbln_safetensors **files;
	size_t n_files;
	const struct rbln_tensor **tensors;
	size_t count;
	struct rbln_strmap by_name;	/* name -> index into tensors */
};

static int add_file(struct rbln_weights *w, const char *path, struct rbln_error *err)
{
	struct rbln_safetensors **files = realloc(w->files, (w->n_files + 1) * sizeof(*files));
	int rc;

	if (!files)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	w->files = files;
	rc = rbln_safetensors_open(path, &w->files[w->n_files], err);
	if (rc)
		return rc;
	w->n_files++;
	return 0;
}

/* Flattens all files' tensors into one name index. */
static int build_index(struct rbln_weights *w, struct rbln_error *err)
{
	size_t i, j, total = 0;

	for (i = 0; i < w->n_files; i++)
		total += rbln_safetensors_count(w->files[i]);
	w->tensors = calloc(total ? total : 1, sizeof(*w->tensors));
	if (!w->tensors)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < w->n_files; i++) {
		for (j = 0; j < rbln_safetensors_count(w->files[i]); j++) {
			const struct rbln_tensor *t = rbln_safetensors_at(w->files[i], j);
			int32_t old;

			if (rbln_strmap_put(&w->by_name, t->name, strlen(t->name), (int32_t)w->count,
					    &old))
				return rbln_error_set(err, -ENOMEM, "out of memory");
			if (old >= 0)
				return rbln_error_set(err, -EINVAL, "tensor '%s' appears in both %s and %s",
						      t->name, w->tensors[old]->file, t->file);
			w->tensors[w->count++] = t;
		}
	}
	return 0;
}

static bool plain_file_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* Opens every distinct shard named in weight_map, in first-mention order. */
static int open_shards(struct rbln_weights *w, const char *dir, const char *index_path,
		       json_object *map, struct rbln_error *err)
{
	struct rbln_strmap seen = { 0 };
	int rc = 0;

	json_object_object_foreach(map, name, val) {
		const char *file;
		char *path;

		if (!json_object_is_type(val, json_type_string) ||
		    !plain_file_name(json_object_get_string(val))) {
			rc = rbln_error_set(err, -EINVAL,
					    "%s: weight_map entry for tensor '%s' must be a file name in the same directory, got %s",
					    index_path, name, json_object_to_json_string(val));
			break;
		}
		file = json_object_get_string(val);
		if (rbln_strmap_get(&seen, file, strlen(file)) >= 0)
			continue;
		if (rbln_strmap_put(&seen, file, strlen(file), 1, NULL)) {
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
			break;
		}
		path = rbln_path_join(dir, file);
		if (!path) {
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
			break;
		}
		rc = add_file(w, path, err);
		free(path);
		if (rc) {
			rbln_error_prefix(err, "%s lists shard %s: ", index_path, file);
			break;
		}
	}
	rbln_strmap_free(&seen);
	return rc;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Every indexed tensor sits in its shard, and every shard tensor is indexed. */
static int check_index_agrees(const struct rbln_weights *w, const char *index_path,
			      json_object *map, json_object *root, struct rbln_error *err)
{
	struct rbln_json_scope s = { index_path, "metadata.", err };
	json_object *meta;
	int64_t total_size;
	uint64_t sum = 0;
	size_t i;
	int rc;

	json_object_object_foreach(map, name, val) {
		const struct rbln_tensor *t = rbln_weights_find(w, name);
		const char *file = json_object_get_string(val);

		if (!t)
			return rbln_error_set(err, -EINVAL,
					      "%s: tensor '%s' is mapped to %s, which does not contain it",
					      index_path, name, file);
		if (strcmp(base_name(t->file), file) != 0)
			return rbln_error_set(err, -EINVAL,
					      "%s: tensor '%s' is mapped to %s but found in %s",
					      index_path, name, file, t->file);
	}
	for (i = 0; i < w->count; i++) {
		sum += w->tensors[i]->nbytes;
		if (!json_object_object_get_ex(map, w->tensors[i]->name, NULL))
			return rbln_error_set(err, -EINVAL,
					      "%s: tensor '%s' is not listed in %s",
					      w->tensors[i]->file, w->tensors[i]->name, index_path);
	}
	if (!json_object_object_get_ex(root, "metadata", &meta) ||
	    json_object_is_type(meta, json_type_null))
		return 0;
	if (!json_object_is_type(meta, json_type_object))
		return rbln_error_set(err, -EINVAL, "%s: field 'metadata' must be an object, got %s",
				      index_path, rbln_json_type_name(meta));
	rc = rbln_json_get_int(&s, meta, "total_size", false, 0, INT64_MAX, &total_size);
	if (rc < 0)
		return rc;
	if (rc > 0 && (uint64_t)total_size != sum)
		return rbln_json_field_error(&s, "total_size", -EINVAL,
					     "is %lld but the shards hold %llu bytes of tensors",
					     (long long)total_size, (unsigned long long)sum);
	return 0;
}

static int open_sharded(struct rbln_weights *w, const char *dir, const char *index_path,
			struct rbln_error *err)
{
	struct rbln_json_scope s = { index_path, "", err };
	json_object *root, *map;
	int rc;

	rc = rbln_json_load_file(index_path, &root, err);
	if (rc)
		return rc;
	if (!json_object_is_type(root, json_type_object)) {
		rc = rbln_error_set(err, -EINVAL, "%s: expected a JSON object, got %s", index_path,
				    rbln_json_type_name(root));
		goto out;
	}
	rc = rbln_json_get_typed(&s, root, "weight_map", true, json_type_object, &map);
	if (rc < 0)
		goto out;
	if (json_object_object_length(map) == 0) {
		rc = rbln_error_set(err, -EINVAL, "%s: weight_map is empty", index_path);
		goto out;
	}
	rc = open_shards(w, dir, index_path, map, err);
	if (!rc)
		rc = build_index(w, err);
	if (!rc)
		rc = check_index_agrees(w, index_path, map, root, err);
out:
	json_object_put(root);
	return rc < 0 ? rc : 0;
}

int rbln_weights_open(const char *model_dir, struct rbln_weights **out, struct rbln_error *err)
{
	struct rbln_weights *w = calloc(1, sizeof(*w));
	char *single = rbln_path_join(model_dir, SINGLE_FILE);
	char *index = rbln_path_join(model_dir, INDEX_FILE);
	int rc;

	*out = NULL;
	if (w)
		w->dir = strdup(model_dir);
	if (!w || !w->dir || !single || !index) {
		rc = rbln_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	/* Same preference as transformers: a single file wins over an index. */
	if (rbln_file_exists(single)) {
		rc = add_file(w, single, err);
		if (!rc)
			rc = build_index(w, err);
	} else if (rbln_file_exists(index)) {
		rc = open_sharded(w, model_dir, index, err);
	} else {
		rc = rbln_error_set(err, -ENOENT, "%s: neither %s nor %s exists", model_dir,
				    SINGLE_FILE, INDEX_FILE);
	}
out:
	free(single);
	free(index);
	if (rc) {
		rbln_weights_close(w);
		return rc;
	}
	*out = w;
	return 0;
}

void rbln_weights_close(struct rbln_weights *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->n_files; i++)
		rbln_safetensors_close(w->files[i]);
	free(w->files);
	free(w->tensors);
	rbln_strmap_free(&w->by_name);
	free(w->dir);
	free(w);
}

size_t rbln_weights_count(const struct rbln_weights *w)
{
	return w->count;
}

const struct rbln_tensor *rbln_weights_at(const struct rbln_weights *w, size_t i)
{
	return i < w->count ? w->tensors[i] : NULL;
}

const struct rbln_tensor *rbln_weights_find(const struct rbln_weights *w, const char *name)
{
	int32_t i = rbln_strmap_get(&w->by_name, name, strlen(name));

	return i < 0 ? NULL : w->tensors[i];
}

size_t rbln_weights_file_count(const struct rbln_weights *w)
{
	return w->n_files;
}

const char *rbln_weights_dir(const struct rbln_weights *w)
{
	return w->dir;
}
