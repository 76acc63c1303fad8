// SPDX-License-Identifier: MIT
/*
 * config.pbtxt -> struct serve_model_config.  The schema check (pb_json.c)
 * has already guaranteed types; this file decides what the configuration
 * means for an LLM and refuses what rbln-serve cannot honour, saying why.
 */
#include "model_config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params.h"
#include "pb_schema.h"
#include "pbtxt.h"
#include "util/file.h"

static const char *const dtype_names[] = {
	[SERVE_DT_INVALID] = "INVALID",
	[SERVE_DT_BOOL] = "BOOL",
	[SERVE_DT_UINT8] = "UINT8",
	[SERVE_DT_UINT16] = "UINT16",
	[SERVE_DT_UINT32] = "UINT32",
	[SERVE_DT_UINT64] = "UINT64",
	[SERVE_DT_INT8] = "INT8",
	[SERVE_DT_INT16] = "INT16",
	[SERVE_DT_INT32] = "INT32",
	[SERVE_DT_INT64] = "INT64",
	[SERVE_DT_FP16] = "FP16",
	[SERVE_DT_FP32] = "FP32",
	[SERVE_DT_FP64] = "FP64",
	[SERVE_DT_BYTES] = "BYTES",
	[SERVE_DT_BF16] = "BF16",
};

const char *serve_dtype_name(enum serve_dtype t)
{
	if ((unsigned)t >= sizeof(dtype_names) / sizeof(dtype_names[0]))
		return "INVALID";
	return dtype_names[t];
}

enum serve_dtype serve_dtype_from_name(const char *name)
{
	size_t i;

	for (i = 1; i < sizeof(dtype_names) / sizeof(dtype_names[0]); i++)
		if (!strcmp(dtype_names[i], name))
			return (enum serve_dtype)i;
	return SERVE_DT_INVALID;
}

size_t serve_dtype_size(enum serve_dtype t)
{
	switch (t) {
	case SERVE_DT_BOOL: case SERVE_DT_UINT8: case SERVE_DT_INT8: return 1;
	case SERVE_DT_UINT16: case SERVE_DT_INT16: case SERVE_DT_FP16: case SERVE_DT_BF16:
		return 2;
	case SERVE_DT_UINT32: case SERVE_DT_INT32: case SERVE_DT_FP32: return 4;
	case SERVE_DT_UINT64: case SERVE_DT_INT64: case SERVE_DT_FP64: return 8;
	default: return 0;
	}
}

/* The schema's enum order (TYPE_INVALID=0 ... TYPE_BF16=14) matches serve_dtype. */
static enum serve_dtype dtype_from_config(const char *type_name)
{
	static const char *const names[] = {
		"TYPE_INVALID", "TYPE_BOOL", "TYPE_UINT8", "TYPE_UINT16", "TYPE_UINT32",
		"TYPE_UINT64", "TYPE_INT8", "TYPE_INT16", "TYPE_INT32", "TYPE_INT64",
		"TYPE_FP16", "TYPE_FP32", "TYPE_FP64", "TYPE_STRING", "TYPE_BF16",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i], type_name))
			return (enum serve_dtype)i;
	return SERVE_DT_INVALID;
}

static bool is_int_type(enum serve_dtype t)
{
	return t >= SERVE_DT_UINT8 && t <= SERVE_DT_INT64;
}

static bool is_float_type(enum serve_dtype t)
{
	return t == SERVE_DT_FP16 || t == SERVE_DT_FP32 || t == SERVE_DT_FP64 ||
	       t == SERVE_DT_BF16;
}

/* Inputs with a fixed meaning other than sampling parameters. */
static const struct {
	const char *name;
	enum serve_io_role role;
	enum serve_dtype type;
} fixed_inputs[] = {
	{ "stream", SERVE_IN_STREAM, SERVE_DT_BOOL },
	{ "sampling_parameters", SERVE_IN_SAMPLING_PARAMETERS, SERVE_DT_BYTES },
	{ "exclude_input_in_output", SERVE_IN_EXCLUDE_INPUT, SERVE_DT_BOOL },
	{ "return_finish_reason", SERVE_IN_RETURN_FINISH_REASON, SERVE_DT_BOOL },
	{ "return_cumulative_logprob", SERVE_IN_RETURN_CUMULATIVE_LOGPROB, SERVE_DT_BOOL },
	{ "return_logprobs", SERVE_IN_RETURN_LOGPROBS, SERVE_DT_BOOL },
	{ "return_num_input_tokens", SERVE_IN_RETURN_NUM_INPUT_TOKENS, SERVE_DT_BOOL },
	{ "return_num_output_tokens", SERVE_IN_RETURN_NUM_OUTPUT_TOKENS, SERVE_DT_BOOL },
};

static const struct {
	const char *name;
	enum serve_io_role role;
} fixed_outputs[] = {
	{ "finish_reason", SERVE_OUT_FINISH_REASON },
	{ "cumulative_logprob", SERVE_OUT_CUMULATIVE_LOGPROB },
	{ "logprobs", SERVE_OUT_LOGPROBS },
	{ "num_input_tokens", SERVE_OUT_NUM_INPUT_TOKENS },
	{ "num_output_tokens", SERVE_OUT_NUM_OUTPUT_TOKENS },
};

static int cfg_error(struct rbln_error *err, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int cfg_error(struct rbln_error *err, const char *file, int line, const char *fmt, ...)
{
	char msg[RBLN_ERROR_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		return rbln_error_set(err, -EINVAL, "%s:%d: %s", file, line, msg);
	return rbln_error_set(err, -EINVAL, "%s: %s", file, msg);
}

/* Line of the index-th value of top-level field `name` (0 if absent). */
static int line_of(const struct pbtxt_msg *m, const char *name, size_t index)
{
	size_t i, seen = 0;

	if (!m)
		return 0;
	for (i = 0; i < m->n_fields; i++) {
		const struct pbtxt_field *f = &m->fields[i];

		if (strcmp(f->name, name))
			continue;
		if (index < seen + f->n_values)
			return f->values[index - seen].line;
		seen += f->n_values;
	}
	return 0;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return "";
	return json_object_get_string(v);
}

static int64_t jint(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		return 0;
	return json_object_get_int64(v);
}

static bool jbool(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

/* Does the declared type fit a parameter taking these kinds of value? */
static bool type_fits(enum serve_dtype t, unsigned kinds)
{
	if (t == SERVE_DT_BOOL)
		return kinds & SERVE_PK_BOOL;
	if (is_int_type(t))
		return kinds & SERVE_PK_INT;
	if (is_float_type(t))
		return kinds & SERVE_PK_FLOAT;
	if (t == SERVE_DT_BYTES)
		return kinds & SERVE_PK_STRING;
	return false;
}

static int read_tensors(json_object *list, const struct pbtxt_msg *tree, const char *field,
			const char *file, struct serve_tensor **out, size_t *n,
			struct rbln_error *err)
{
	size_t count = list ? json_object_array_length(list) : 0, i, j;
	struct serve_tensor *t;

	*out = NULL;
	*n = 0;
	if (!count)
		return 0;
	/* Requests track inputs in 64-bit sets; no LLM configuration comes close. */
	if (count > 64)
		return cfg_error(err, file, line_of(tree, field, 64), "more than 64 %ss", field);
	t = calloc(count, sizeof(*t));
	if (!t)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	*out = t;
	for (i = 0; i < count; i++) {
		json_object *e = json_object_array_get_idx(list, i), *dims;
		const char *name = jstr(e, "name");
		int line = line_of(tree, field, i);

		t[i].line = line;
		if (!*name)
			return cfg_error(err, file, line, "%s[%zu] has no name", field, i);
		for (j = 0; j < i; j++)
			if (!strcmp(t[j].name, name))
				return cfg_error(err, file, line, "%s '%s' is declared twice (first "
						 "on line %d)", field, name, t[j].line);
		t[i].name = strdup(name);
		if (!t[i].name)
			return rbln_error_set(err, -ENOMEM, "out of memory");
		(*n)++;
		t[i].dtype = dtype_from_config(jstr(e, "data_type"));
		if (t[i].dtype == SERVE_DT_INVALID)
			return cfg_error(err, file, line, "%s '%s' needs a data_type", field, name);
		t[i].optional = jbool(e, "optional");
		json_object_object_get_ex(e, "dims", &dims);
		if (!dims || !json_object_array_length(dims))
			return cfg_error(err, file, line, "%s '%s' needs dims (e.g. dims: [ 1 ])",
					 field, name);
		if (json_object_array_length(dims) > SERVE_MAX_DIMS)
			return cfg_error(err, file, line, "%s '%s' has more than %d dims", field,
					 name, SERVE_MAX_DIMS);
		t[i].n_dims = json_object_array_length(dims);
		for (j = 0; j < t[i].n_dims; j++) {
			int64_t d = json_object_get_int64(json_object_array_get_idx(dims, j));

			if (d < -1 || d == 0)
				return cfg_error(err, file, line, "%s '%s': dims must be -1 (any) "
						 "or >= 1, got %lld", field, name, (long long)d);
			t[i].dims[j] = d;
		}
	}
	return 0;
}

/* Gives every input and output its role; the prompt and text output are required. */
static int assign_roles(struct serve_model_config *cfg, struct rbln_error *err)
{
	size_t i, k, n_prompt = 0, n_text = 0;
	const char *file = cfg->file;

	for (i = 0; i < cfg->n_inputs; i++) {
		struct serve_tensor *t = &cfg->inputs[i];
		const struct serve_param *p;
		bool known = false;

		for (k = 0; k < sizeof(fixed_inputs) / sizeof(fixed_inputs[0]); k++) {
			if (strcmp(t->name, fixed_inputs[k].name))
				continue;
			if (t->dtype != fixed_inputs[k].type)
				return cfg_error(err, file, t->line, "input '%s' must have data_type "
						 "%s", t->name, fixed_inputs[k].type == SERVE_DT_BOOL
						 ? "TYPE_BOOL" : "TYPE_STRING");
			t->role = fixed_inputs[k].role;
			known = true;
		}
		if (known)
			continue;
		p = serve_param_find(t->name, SERVE_DIALECT_TRITON);
		if (p && p->kinds) {
			if (!type_fits(t->dtype, p->kinds))
				return cfg_error(err, file, t->line, "input '%s' has data_type %s, "
						 "which cannot carry its value", t->name,
						 serve_dtype_name(t->dtype));
			t->role = SERVE_IN_PARAM;
			continue;
		}
		if (p)
			return cfg_error(err, file, t->line, "input '%s' is not supported by "
					 "rbln-serve", t->name);
		if (t->dtype != SERVE_DT_BYTES)
			return cfg_error(err, file, t->line, "input '%s' (%s) means nothing to "
					 "rbln-serve: an LLM takes its prompt as TYPE_STRING plus "
					 "the known parameters (stream, sampling_parameters, "
					 "max_tokens, ...)", t->name, serve_dtype_name(t->dtype));
		t->role = SERVE_IN_PROMPT;
	}
	/* text_input wins when several string inputs could be the prompt. */
	for (i = 0; i < cfg->n_inputs; i++)
		if (cfg->inputs[i].role == SERVE_IN_PROMPT)
			n_prompt++;
	if (n_prompt > 1) {
		const struct serve_tensor *ti = serve_model_input(cfg, "text_input");

		if (!ti)
			return cfg_error(err, file, cfg->inputs[cfg->n_inputs - 1].line,
					 "several TYPE_STRING inputs could be the prompt; name it "
					 "'text_input'");
		for (i = 0; i < cfg->n_inputs; i++)
			if (cfg->inputs[i].role == SERVE_IN_PROMPT && &cfg->inputs[i] != ti)
				return cfg_error(err, file, cfg->inputs[i].line, "input '%s' "
						 "means nothing to rbln-serve (the prompt is "
						 "'text_input')", cfg->inputs[i].name);
	}
	if (!n_prompt)
		return cfg_error(err, file, 0, "no prompt input: declare a TYPE_STRING input "
				 "(text_input as in the vLLM backend, or any name)");
	for (i = 0; i < cfg->n_inputs; i++)
		if (cfg->inputs[i].role == SERVE_IN_PROMPT)
			cfg->prompt_input = i;

	for (i = 0; i < cfg->n_outputs; i++) {
		struct serve_tensor *t = &cfg->outputs[i];
		bool known = false;

		for (k = 0; k < sizeof(fixed_outputs) / sizeof(fixed_outputs[0]); k++) {
			if (!strcmp(t->name, fixed_outputs[k].name)) {
				t->role = fixed_outputs[k].role;
				known = true;
			}
		}
		if (known)
			continue;
		if (t->dtype != SERVE_DT_BYTES)
			return cfg_error(err, file, t->line, "output '%s' (%s) means nothing to "
					 "rbln-serve: an LLM returns its text as TYPE_STRING",
					 t->name, serve_dtype_name(t->dtype));
		t->role = SERVE_OUT_TEXT;
		n_text++;
		cfg->text_output = i;
	}
	if (n_text > 1) {
		const struct serve_tensor *to = serve_model_output(cfg, "text_output");

		if (!to)
			return cfg_error(err, file, cfg->outputs[cfg->n_outputs - 1].line,
					 "several TYPE_STRING outputs could be the generated text; "
					 "name it 'text_output'");
		cfg->text_output = (size_t)(to - cfg->outputs);
		for (i = 0; i < cfg->n_outputs; i++)
			if (cfg->outputs[i].role == SERVE_OUT_TEXT && &cfg->outputs[i] != to)
				return cfg_error(err, file, cfg->outputs[i].line, "output '%s' "
						 "means nothing to rbln-serve (the text is "
						 "'text_output')", cfg->outputs[i].name);
	}
	if (!n_text)
		return cfg_error(err, file, 0, "no text output: declare a TYPE_STRING output "
				 "(text_output as in the vLLM backend, or any name)");
	return 0;
}

static int read_policies(struct serve_model_config *cfg, const struct pbtxt_msg *tree,
			 struct rbln_error *err)
{
	json_object *j = cfg->json, *o, *p, *q;

	cfg->version_policy = SERVE_VERSIONS_LATEST;
	cfg->latest_versions = 1;
	if (json_object_object_get_ex(j, "version_policy", &o)) {
		if (json_object_object_get_ex(o, "all", NULL)) {
			cfg->version_policy = SERVE_VERSIONS_ALL;
		} else if (json_object_object_get_ex(o, "specific", &p)) {
			json_object *vs;
			size_t i, n;

			cfg->version_policy = SERVE_VERSIONS_SPECIFIC;
			json_object_object_get_ex(p, "versions", &vs);
			n = vs ? json_object_array_length(vs) : 0;
			if (!n)
				return cfg_error(err, cfg->file, line_of(tree, "version_policy", 0),
						 "version_policy.specific lists no versions");
			cfg->versions = calloc(n, sizeof(*cfg->versions));
			if (!cfg->versions)
				return rbln_error_set(err, -ENOMEM, "out of memory");
			for (i = 0; i < n; i++)
				cfg->versions[i] = json_object_get_int64(json_object_array_get_idx(vs, i));
			cfg->n_versions = n;
		} else if (json_object_object_get_ex(o, "latest", &p)) {
			cfg->latest_versions = (uint32_t)jint(p, "num_versions");
			if (!cfg->latest_versions)
				return cfg_error(err, cfg->file, line_of(tree, "version_policy", 0),
						 "version_policy.latest.num_versions must be at "
						 "least 1");
		}
	}
	if (json_object_object_get_ex(j, "sequence_batching", NULL))
		return cfg_error(err, cfg->file, line_of(tree, "sequence_batching", 0),
				 "sequence_batching is for stateful models; an LLM is batched "
				 "by rbln-serve's scheduler (use dynamic_batching or nothing)");
	if (json_object_object_get_ex(j, "ensemble_scheduling", NULL) ||
	    !strcmp(cfg->platform, "ensemble"))
		return cfg_error(err, cfg->file, line_of(tree, "ensemble_scheduling", 0),
				 "ensembles (tokenizer, model and detokenizer as separate "
				 "models) are not used: rbln-serve tokenizes inside one model; "
				 "serve it as one model directory with 1/model.json");
	/*
	 * TensorRT-LLM's model configurations carry exclude_input_in_output as
	 * a parameter (the TensorRT-LLM tutorial sets it to True): it becomes
	 * the default of requests that do not say.
	 */
	if (json_object_object_get_ex(j, "parameters", &o) &&
	    json_object_object_get_ex(o, "exclude_input_in_output", &p)) {
		const char *v = jstr(p, "string_value");

		if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "1"))
			cfg->exclude_input_default = true;
		else if (strcmp(v, "false") && strcmp(v, "False") && strcmp(v, "0"))
			return cfg_error(err, cfg->file, line_of(tree, "parameters", 0),
					 "parameters[\"exclude_input_in_output\"] must be "
					 "\"true\" or \"false\", got \"%s\"", v);
	}
	if (json_object_object_get_ex(j, "dynamic_batching", &o) &&
	    json_object_object_get_ex(o, "default_queue_policy", &q)) {
		cfg->max_queue_size = (uint32_t)jint(q, "max_queue_size");
		cfg->default_timeout_us = (uint64_t)jint(q, "default_timeout_microseconds");
	}
	return 0;
}

static int set_default_version_policy(json_object *j)
{
	json_object *vp, *latest;

	if (json_object_object_get_ex(j, "version_policy", NULL))
		return 0;
	vp = json_object_new_object();
	latest = json_object_new_object();
	if (!vp || !latest || json_object_object_add(latest, "num_versions",
						     json_object_new_int64(1)) ||
	    json_object_object_add(vp, "latest", latest)) {
		json_object_put(vp);
		json_object_put(latest);
		return -ENOMEM;
	}
	latest = NULL;
	return json_object_object_add(j, "version_policy", vp) ? -ENOMEM : 0;
}

/*
 * The inputs and outputs Triton's vLLM backend adds to a configuration that
 * lacks them (its auto_complete_config), less the image and embedding
 * inputs, which serve other model kinds.  The RBLN tutorial's
 * config.pbtxt declares only text_input and stream, and its client sends
 * sampling_parameters: this is why that works.
 */
static const char vllm_autocomplete[] =
	"input [\n"
	"  { name: \"text_input\" data_type: TYPE_STRING dims: [ 1 ] },\n"
	"  { name: \"stream\" data_type: TYPE_BOOL dims: [ 1 ] optional: true },\n"
	"  { name: \"sampling_parameters\" data_type: TYPE_STRING dims: [ 1 ] optional: true },\n"
	"  { name: \"exclude_input_in_output\" data_type: TYPE_BOOL dims: [ 1 ] optional: true },\n"
	"  { name: \"return_finish_reason\" data_type: TYPE_BOOL dims: [ 1 ] optional: true },\n"
	"  { name: \"return_cumulative_logprob\" data_type: TYPE_BOOL dims: [ 1 ] optional: true },\n"
	"  { name: \"return_logprobs\" data_type: TYPE_BOOL dims: [ 1 ] optional: true },\n"
	"  { name: \"return_num_input_tokens\" data_type: TYPE_BOOL dims: [ 1 ] optional: true },\n"
	"  { name: \"return_num_output_tokens\" data_type: TYPE_BOOL dims: [ 1 ] optional: true }\n"
	"]\n"
	"output [\n"
	"  { name: \"text_output\" data_type: TYPE_STRING dims: [ -1 ] },\n"
	"  { name: \"finish_reason\" data_type: TYPE_STRING dims: [ -1 ] },\n"
	"  { name: \"cumulative_logprob\" data_type: TYPE_FP32 dims: [ -1 ] },\n"
	"  { name: \"logprobs\" data_type: TYPE_STRING dims: [ -1 ] },\n"
	"  { name: \"num_input_tokens\" data_type: TYPE_UINT32 dims: [ 1 ] },\n"
	"  { name: \"num_output_tokens\" data_type: TYPE_UINT32 dims: [ -1 ] }\n"
	"]\n"
	"model_transaction_policy { decoupled: true }\n";

static bool has_named(json_object *list, const char *name)
{
	size_t i, n = list ? json_object_array_length(list) : 0;

	for (i = 0; i < n; i++)
		if (!strcmp(jstr(json_object_array_get_idx(list, i), "name"), name))
			return true;
	return false;
}

static int autocomplete_vllm(struct serve_model_config *cfg, const struct pbtxt_msg *tree,
			     struct rbln_error *err)
{
	static const char *const lists[] = { "input", "output" };
	struct pbtxt_msg *extra = NULL;
	json_object *ej = NULL, *j = cfg->json, *v;
	size_t l, i;
	int rc;

	if (jint(j, "max_batch_size") > 0)
		return cfg_error(err, cfg->file, line_of(tree, "max_batch_size", 0),
				 "max_batch_size must be 0 for backend \"%s\": the engine "
				 "batches requests itself", cfg->backend);
	rc = serve_pbtxt_parse(vllm_autocomplete, sizeof(vllm_autocomplete) - 1, "(vllm defaults)",
			 &extra, err);
	if (!rc)
		rc = serve_pb_to_json(extra, &serve_pb_model_config, "(vllm defaults)", &ej, err);
	serve_pbtxt_free(extra);
	if (rc)
		return rc;
	for (l = 0; l < 2 && !rc; l++) {
		json_object *have, *add;

		json_object_object_get_ex(j, lists[l], &have);
		json_object_object_get_ex(ej, lists[l], &add);
		for (i = 0; i < json_object_array_length(add) && !rc; i++) {
			json_object *e = json_object_array_get_idx(add, i);

			if (has_named(have, jstr(e, "name")))
				continue;
			if (json_object_array_add(have, json_object_get(e)))
				rc = -ENOMEM;
		}
	}
	if (!rc && !json_object_object_get_ex(j, "model_transaction_policy", NULL) &&
	    json_object_object_get_ex(ej, "model_transaction_policy", &v) &&
	    json_object_object_add(j, "model_transaction_policy", json_object_get(v)))
		rc = -ENOMEM;
	json_object_put(ej);
	if (rc)
		return rbln_error_set(err, rc, "out of memory");
	return 0;
}

static int interpret(struct serve_model_config *cfg, const struct pbtxt_msg *tree,
		     const char *dir_name, struct rbln_error *err)
{
	json_object *j = cfg->json, *list;
	const char *name = jstr(j, "name");
	int rc;

	if (*name && dir_name && strcmp(name, dir_name))
		return cfg_error(err, cfg->file, line_of(tree, "name", 0), "name '%s' does not "
				 "match the model directory '%s'", name, dir_name);
	if (!*name) {
		if (!dir_name)
			return cfg_error(err, cfg->file, 0, "no name");
		name = dir_name;
		if (json_object_object_add(j, "name", json_object_new_string(name)))
			return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	cfg->name = strdup(name);
	cfg->backend = strdup(jstr(j, "backend"));
	cfg->platform = strdup(jstr(j, "platform"));
	if (!cfg->name || !cfg->backend || !cfg->platform)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	if (!*cfg->backend && !*cfg->platform)
		return cfg_error(err, cfg->file, 0, "no backend: set backend: \"vllm\" (or "
				 "\"rbln\")");
	if (*cfg->backend && strcmp(cfg->backend, "vllm") && strcmp(cfg->backend, "rbln") &&
	    strcmp(cfg->backend, "python"))
		return cfg_error(err, cfg->file, line_of(tree, "backend", 0), "backend '%s' is "
				 "not served by rbln-serve (use \"vllm\", \"rbln\", or \"python\" "
				 "with a 1/model.json)", cfg->backend);
	if (*cfg->platform && strcmp(cfg->platform, "ensemble"))
		return cfg_error(err, cfg->file, line_of(tree, "platform", 0), "platform '%s' is "
				 "not served by rbln-serve (set backend: \"vllm\")", cfg->platform);
	cfg->max_batch_size = (int32_t)jint(j, "max_batch_size");
	if (cfg->max_batch_size < 0)
		return cfg_error(err, cfg->file, line_of(tree, "max_batch_size", 0),
				 "max_batch_size must be >= 0");
	rc = read_policies(cfg, tree, err);
	if (rc)
		return rc;
	if (!strcmp(cfg->backend, "vllm") || !strcmp(cfg->backend, "rbln")) {
		rc = autocomplete_vllm(cfg, tree, err);
		if (rc)
			return rc;
	}
	if (json_object_object_get_ex(j, "model_transaction_policy", &list))
		cfg->decoupled = jbool(list, "decoupled");
	json_object_object_get_ex(j, "input", &list);
	rc = read_tensors(list, tree, "input", cfg->file, &cfg->inputs, &cfg->n_inputs, err);
	if (rc)
		return rc;
	json_object_object_get_ex(j, "output", &list);
	rc = read_tensors(list, tree, "output", cfg->file, &cfg->outputs, &cfg->n_outputs, err);
	if (rc)
		return rc;
	rc = assign_roles(cfg, err);
	if (rc)
		return rc;
	if (set_default_version_policy(j))
		return rbln_error_set(err, -ENOMEM, "out of memory");
	return 0;
}

int serve_model_config_parse(const char *text, size_t len, const char *path,
			     const char *dir_name, struct serve_model_config *cfg,
			     struct rbln_error *err)
{
	struct pbtxt_msg *tree = NULL;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	cfg->file = strdup(path);
	if (!cfg->file)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rc = serve_pbtxt_parse(text, len, path, &tree, err);
	if (!rc)
		rc = serve_pb_to_json(tree, &serve_pb_model_config, path, &cfg->json, err);
	if (!rc)
		rc = interpret(cfg, tree, dir_name, err);
	serve_pbtxt_free(tree);
	if (rc)
		serve_model_config_free(cfg);
	return rc;
}

int serve_model_config_load(const char *path, const char *dir_name,
			    struct serve_model_config *cfg, struct rbln_error *err)
{
	char *text;
	size_t len;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	rc = rbln_file_read(path, &text, &len, err);
	if (rc)
		return rc;
	/* A config is a few KiB; the bound keeps a wrong path from eating memory. */
	if (len > (16u << 20)) {
		free(text);
		return rbln_error_set(err, -EFBIG, "%s: %zu bytes is too large for a model "
				      "configuration", path, len);
	}
	rc = serve_model_config_parse(text, len, path, dir_name, cfg, err);
	free(text);
	return rc;
}

int serve_model_config_default(const char *name, struct serve_model_config *cfg,
			       struct rbln_error *err)
{
	char text[512];
	size_t i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; name[i]; i++)
		if (name[i] == '"' || name[i] == '\\' || (unsigned char)name[i] < 0x20)
			return rbln_error_set(err, -EINVAL, "model name '%s' contains a quote, "
					      "backslash or control character", name);
	if (i > 256)
		return rbln_error_set(err, -EINVAL, "model name is longer than 256 bytes");
	/* What the vLLM backend's sample config.pbtxt holds; the rest is auto-completed. */
	snprintf(text, sizeof(text), "name: \"%s\"\nbackend: \"vllm\"\n"
		 "instance_group [ { count: 1 kind: KIND_MODEL } ]\n", name);
	return serve_model_config_parse(text, strlen(text), "(built-in configuration)", name,
					cfg, err);
}

static void free_tensors(struct serve_tensor *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(t[i].name);
	free(t);
}

void serve_model_config_free(struct serve_model_config *cfg)
{
	free(cfg->file);
	free(cfg->name);
	free(cfg->backend);
	free(cfg->platform);
	free_tensors(cfg->inputs, cfg->n_inputs);
	free_tensors(cfg->outputs, cfg->n_outputs);
	free(cfg->versions);
	json_object_put(cfg->json);
	memset(cfg, 0, sizeof(*cfg));
}

const struct serve_tensor *serve_model_input(const struct serve_model_config *cfg,
					     const char *name)
{
	size_t i;

	for (i = 0; i < cfg->n_inputs; i++)
		if (!strcmp(cfg->inputs[i].name, name))
			return &cfg->inputs[i];
	return NULL;
}

const struct serve_tensor *serve_model_output(const struct serve_model_config *cfg,
					      const char *name)
{
	size_t i;

	for (i = 0; i < cfg->n_outputs; i++)
		if (!strcmp(cfg->outputs[i].name, name))
			return &cfg->outputs[i];
	return NULL;
}
