// SPDX-License-Identifier: MIT
/*
 * Finding a checkpoint's chat template and rendering it with the variables
 * transformers' apply_chat_template passes.
 */
#include "rbln_chat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "rbln_jinja.h"
#include "util/file.h"
#include "util/json.h"

struct rbln_chat_template {
	struct rbln_jinja_template *tmpl;
	char *tokens[4];	/* bos, eos, unk, pad */
};

static const char *const token_names[4] = { "bos_token", "eos_token", "unk_token", "pad_token" };

void rbln_chat_template_free(struct rbln_chat_template *t)
{
	size_t i;

	if (!t)
		return;
	rbln_jinja_free(t->tmpl);
	for (i = 0; i < 4; i++)
		free(t->tokens[i]);
	free(t);
}

int rbln_chat_template_from_text(const char *src, size_t len, const char *name,
				 const struct rbln_chat_tokens *tokens,
				 struct rbln_chat_template **out, struct rbln_error *err)
{
	struct rbln_chat_template *t = calloc(1, sizeof(*t));
	const char *vals[4] = { NULL, NULL, NULL, NULL };
	size_t i;
	int rc;

	*out = NULL;
	if (len > RBLN_CHAT_TEMPLATE_MAX) {
		free(t);
		return rbln_error_set(err, -EFBIG,
				      "%s: a %zu-byte chat template is more than the %zu bytes "
				      "allowed", name, len, (size_t)RBLN_CHAT_TEMPLATE_MAX);
	}
	if (!t)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	if (tokens) {
		vals[0] = tokens->bos_token;
		vals[1] = tokens->eos_token;
		vals[2] = tokens->unk_token;
		vals[3] = tokens->pad_token;
	}
	for (i = 0; i < 4; i++) {
		if (vals[i] && !(t->tokens[i] = strdup(vals[i]))) {
			rbln_chat_template_free(t);
			return rbln_error_set(err, -ENOMEM, "out of memory");
		}
	}
	rc = rbln_jinja_compile(src, len, name, &t->tmpl, err);
	if (rc) {
		rbln_chat_template_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

/* A special token is a string or, in older files, {"content": "...", ...}. */
static int read_token(const char *path, json_object *root, const char *key, char **out,
		      struct rbln_error *err)
{
	json_object *v, *content;

	if (!json_object_object_get_ex(root, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (json_object_is_type(v, json_type_object) &&
	    json_object_object_get_ex(v, "content", &content))
		v = content;
	if (!json_object_is_type(v, json_type_string))
		return rbln_error_set(err, -EINVAL,
				      "%s: field '%s' must be a string or {\"content\": string}", path,
				      key);
	free(*out);
	*out = strdup(json_object_get_string(v));
	return *out ? 0 : rbln_error_set(err, -ENOMEM, "out of memory");
}

/* One {"name", "template"} entry of a chat_template list; 1 when it is `want`. */
static int template_entry(const char *path, json_object *e, size_t i, const char *want,
			  json_object **tpl, struct rbln_error *err)
{
	json_object *n;

	if (!json_object_is_type(e, json_type_object) ||
	    !json_object_object_get_ex(e, "name", &n) || !json_object_is_type(n, json_type_string) ||
	    !json_object_object_get_ex(e, "template", tpl) ||
	    !json_object_is_type(*tpl, json_type_string))
		return rbln_error_set(err, -EINVAL,
				      "%s: chat_template[%zu] must be {\"name\": string, "
				      "\"template\": string}", path, i);
	return !strcmp(json_object_get_string(n), want);
}

/*
 * "chat_template" is a string, or (as transformers writes several) a list of
 * {"name", "template"}: take the one called `want`.
 */
static int template_from_config(const char *path, json_object *root, const char *want,
				const char **src, size_t *len, struct rbln_error *err)
{
	json_object *v, *found = NULL;
	size_t i;
	int rc;

	if (!json_object_object_get_ex(root, "chat_template", &v) ||
	    json_object_is_type(v, json_type_null))
		return rbln_error_set(err, -ENOENT, "%s: no chat_template (and no chat_template.jinja)",
				      path);
	if (json_object_is_type(v, json_type_array)) {
		for (i = 0; i < json_object_array_length(v); i++) {
			json_object *tpl;

			rc = template_entry(path, json_object_array_get_idx(v, i), i, want, &tpl, err);
			if (rc < 0)
				return rc;
			if (rc && !found)
				found = tpl;
		}
		if (!found)
			return rbln_error_set(err, -ENOENT,
					      "%s: chat_template list has no template named \"%s\"",
					      path, want);
		v = found;
	} else if (strcmp(want, RBLN_CHAT_TEMPLATE_DEFAULT)) {
		return rbln_error_set(err, -ENOENT,
				      "%s: chat template \"%s\" asked for, but chat_template is a "
				      "single template, not a list of named ones", path, want);
	}
	if (!json_object_is_type(v, json_type_string))
		return rbln_error_set(err, -EINVAL,
				      "%s: field 'chat_template' must be a string or a list of "
				      "{\"name\", \"template\"}", path);
	*src = json_object_get_string(v);
	*len = (size_t)json_object_get_string_len(v);
	return 0;
}

static int load_tokens(const char *dir, json_object *config, const char *config_path,
		       struct rbln_chat_template *t, struct rbln_error *err)
{
	char *map_path = rbln_path_join(dir, "special_tokens_map.json");
	json_object *map = NULL;
	size_t i;
	int rc = 0;

	if (!map_path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	/* tokenizer_config.json wins; special_tokens_map.json fills gaps. */
	if (rbln_file_exists(map_path))
		rc = rbln_json_load_file(map_path, &map, err);
	for (i = 0; i < 4 && !rc; i++) {
		if (map && json_object_is_type(map, json_type_object))
			rc = read_token(map_path, map, token_names[i], &t->tokens[i], err);
		if (!rc && config)
			rc = read_token(config_path, config, token_names[i], &t->tokens[i], err);
	}
	json_object_put(map);
	free(map_path);
	return rc;
}

int rbln_chat_template_load(const char *dir, struct rbln_chat_template **out,
			    struct rbln_error *err)
{
	return rbln_chat_template_load_named(dir, getenv("RBLN_CHAT_TEMPLATE_NAME"), out, err);
}

int rbln_chat_template_load_named(const char *dir, const char *want,
				  struct rbln_chat_template **out, struct rbln_error *err)
{
	char *jinja_path = rbln_path_join(dir, "chat_template.jinja");
	char *config_path = rbln_path_join(dir, "tokenizer_config.json");
	struct rbln_chat_template *t = NULL;
	json_object *config = NULL;
	char *text = NULL;
	const char *src = NULL, *name = NULL;
	size_t len = 0;
	int rc = 0;

	*out = NULL;
	if (!jinja_path || !config_path) {
		rc = rbln_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (rbln_file_exists(config_path)) {
		rc = rbln_json_load_file(config_path, &config, err);
		if (!rc && !json_object_is_type(config, json_type_object))
			rc = rbln_error_set(err, -EINVAL, "%s: expected a JSON object", config_path);
		if (rc)
			goto out;
	}
	if (!want || !*want)
		want = RBLN_CHAT_TEMPLATE_DEFAULT;
	/* Like transformers, a chat_template.jinja file takes precedence. */
	if (rbln_file_exists(jinja_path) && !strcmp(want, RBLN_CHAT_TEMPLATE_DEFAULT)) {
		rc = rbln_file_read_max(jinja_path, RBLN_CHAT_TEMPLATE_MAX, &text, &len, err);
		src = text;
		/* The template's name is in every render error, which reaches
		 * the server's clients: the file name, not the server's path. */
		name = "chat_template.jinja";
	} else if (config) {
		rc = template_from_config(config_path, config, want, &src, &len, err);
		name = "tokenizer_config.json chat_template";
	} else {
		rc = rbln_error_set(err, -ENOENT, "%s: no chat_template.jinja or tokenizer_config.json",
				    dir);
	}
	if (!rc)
		rc = rbln_chat_template_from_text(src, len, name, NULL, &t, err);
	if (!rc)
		rc = load_tokens(dir, config, config_path, t, err);
	if (rc) {
		rbln_chat_template_free(t);
		t = NULL;
	}
	*out = t;
out:
	json_object_put(config);
	free(text);
	free(jinja_path);
	free(config_path);
	return rc;
}

static int add_json_var(json_object *vars, const char *key, const char *json,
			enum json_type want, struct rbln_error *err)
{
	json_object *v = NULL;
	int rc;

	if (!json) {
		json_object_object_add(vars, key, NULL);	/* renders as None */
		return 0;
	}
	rc = rbln_json_parse(json, strlen(json), key, &v, err);
	if (rc)
		return rc;
	if (!json_object_is_type(v, want)) {
		json_object_put(v);
		return rbln_error_set(err, -EINVAL, "%s must be a JSON %s", key,
				      json_type_to_name(want));
	}
	json_object_object_add(vars, key, v);
	return 0;
}

static int check_messages(json_object *msgs, struct rbln_error *err)
{
	size_t i;

	if (!json_object_is_type(msgs, json_type_array))
		return rbln_error_set(err, -EINVAL, "messages must be a JSON array");
	for (i = 0; i < json_object_array_length(msgs); i++) {
		json_object *m = json_object_array_get_idx(msgs, i), *role;

		if (!json_object_is_type(m, json_type_object) ||
		    !json_object_object_get_ex(m, "role", &role) ||
		    !json_object_is_type(role, json_type_string))
			return rbln_error_set(err, -EINVAL,
					      "messages[%zu] must be an object with a string \"role\"", i);
	}
	return 0;
}

/*
 * Variables the caller sets: the messages, tools and special tokens come from
 * the request and the model, never from client-supplied extra variables
 * (chat_template_kwargs), which could otherwise replace them.
 */
static const char *const reserved_vars[] = {
	"messages", "tools", "documents", "add_generation_prompt",
	"bos_token", "eos_token", "unk_token", "pad_token",
};

static int add_extra_vars(json_object *vars, json_object *extra, struct rbln_error *err)
{
	size_t i;

	json_object_object_foreach(extra, key, val) {
		(void)val;
		for (i = 0; i < sizeof(reserved_vars) / sizeof(reserved_vars[0]); i++)
			if (!strcmp(key, reserved_vars[i]))
				return rbln_error_set(err, -EINVAL,
						      "extra template variables (chat_template_kwargs) may "
						      "not set '%s': the request or the model gives it",
						      key);
	}
	json_object_object_foreach(extra, name, v)
		json_object_object_add(vars, name, json_object_get(v));
	return 0;
}

/* Renders with `msgs` (ownership taken). */
static int render(const struct rbln_chat_template *t, json_object *msgs,
		  const struct rbln_chat_options *opt, char **text, size_t *text_len,
		  struct rbln_error *err)
{
	struct rbln_jinja_options jopt = { .now = opt ? opt->now : 0 };
	json_object *vars = json_object_new_object();
	size_t i;
	int rc;

	if (!vars) {
		json_object_put(msgs);
		return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	json_object_object_add(vars, "messages", msgs);
	rc = check_messages(msgs, err);
	if (!rc)
		rc = add_json_var(vars, "tools", opt ? opt->tools_json : NULL, json_type_array, err);
	if (!rc)
		rc = add_json_var(vars, "documents", NULL, json_type_array, err);
	json_object_object_add(vars, "add_generation_prompt",
			       json_object_new_boolean(opt && opt->add_generation_prompt));
	for (i = 0; i < 4 && !rc; i++)
		if (t->tokens[i])
			json_object_object_add(vars, token_names[i],
					       json_object_new_string(t->tokens[i]));
	if (!rc && opt && opt->extra_vars_json) {
		json_object *extra;

		rc = rbln_json_parse(opt->extra_vars_json, strlen(opt->extra_vars_json),
				     "extra variables", &extra, err);
		if (!rc && !json_object_is_type(extra, json_type_object))
			rc = rbln_error_set(err, -EINVAL, "extra variables must be a JSON object");
		if (!rc)
			rc = add_extra_vars(vars, extra, err);
		json_object_put(extra);
	}
	if (!rc)
		rc = rbln_jinja_render(t->tmpl, vars, &jopt, text, text_len, err);
	json_object_put(vars);
	return rc;
}

int rbln_chat_render_json(const struct rbln_chat_template *t, const char *messages_json,
			  size_t len, const struct rbln_chat_options *opt, char **text,
			  size_t *text_len, struct rbln_error *err)
{
	json_object *msgs;
	int rc = rbln_json_parse(messages_json, len, "messages", &msgs, err);

	*text = NULL;
	if (rc)
		return rc;
	return render(t, msgs, opt, text, text_len, err);
}

int rbln_chat_render(const struct rbln_chat_template *t, const struct rbln_chat_message *msgs,
		     size_t n, const struct rbln_chat_options *opt, char **text, size_t *text_len,
		     struct rbln_error *err)
{
	json_object *arr = json_object_new_array();
	size_t i;

	*text = NULL;
	if (!arr)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		json_object *m = json_object_new_object();

		if (!m) {
			json_object_put(arr);
			return rbln_error_set(err, -ENOMEM, "out of memory");
		}
		json_object_object_add(m, "role", json_object_new_string(msgs[i].role));
		json_object_object_add(m, "content", msgs[i].content ?
						     json_object_new_string(msgs[i].content) : NULL);
		json_object_array_add(arr, m);
	}
	return render(t, arr, opt, text, text_len, err);
}
