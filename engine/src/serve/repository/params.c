// SPDX-License-Identifier: MIT
/*
 * The parameter table and value conversions behind params.h.
 */
#include "params.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

#define TR (1u << SERVE_DIALECT_TRITON)
#define OA (1u << SERVE_DIALECT_OPENAI)
#define BOTH (TR | OA)
#define NUM (SERVE_PK_INT | SERVE_PK_FLOAT)
#define SP(f) ((enum serve_param_target)(SERVE_T_SP_BASE + (f)))

static const struct serve_param params[] = {
	{ "temperature", SP(RBLN_SP_TEMPERATURE), NUM, BOTH },
	{ "top_p", SP(RBLN_SP_TOP_P), NUM, BOTH },
	{ "runtime_top_p", SP(RBLN_SP_TOP_P), NUM, TR },
	{ "top_k", SP(RBLN_SP_TOP_K), SERVE_PK_INT, BOTH },
	{ "runtime_top_k", SP(RBLN_SP_TOP_K), SERVE_PK_INT, TR },
	{ "min_p", SP(RBLN_SP_MIN_P), NUM, BOTH },
	{ "repetition_penalty", SP(RBLN_SP_REPETITION_PENALTY), NUM, BOTH },
	{ "presence_penalty", SP(RBLN_SP_PRESENCE_PENALTY), NUM, BOTH },
	{ "frequency_penalty", SP(RBLN_SP_FREQUENCY_PENALTY), NUM, BOTH },
	{ "seed", SP(RBLN_SP_SEED), SERVE_PK_INT, BOTH },
	{ "random_seed", SP(RBLN_SP_SEED), SERVE_PK_INT, TR },
	{ "max_tokens", SP(RBLN_SP_MAX_TOKENS), SERVE_PK_INT, BOTH },
	{ "max_completion_tokens", SP(RBLN_SP_MAX_TOKENS), SERVE_PK_INT, OA },
	{ "min_tokens", SP(RBLN_SP_MIN_TOKENS), SERVE_PK_INT, BOTH },
	{ "min_length", SP(RBLN_SP_MIN_TOKENS), SERVE_PK_INT, TR },
	{ "stop", SP(RBLN_SP_STOP), SERVE_PK_STRING, BOTH },
	{ "stop_words", SP(RBLN_SP_STOP), SERVE_PK_STRING, TR },
	{ "stop_token_ids", SP(RBLN_SP_STOP_TOKEN_IDS), SERVE_PK_INT, BOTH },
	{ "bad_words", SP(RBLN_SP_BAD_WORDS), SERVE_PK_STRING, BOTH },
	{ "logprobs", SP(RBLN_SP_LOGPROBS), SERVE_PK_INT, TR },
	{ "n", SERVE_T_N, SERVE_PK_INT, BOTH },
	{ "best_of", SERVE_T_BEST_OF, SERVE_PK_INT, BOTH },
	{ "end_id", SERVE_T_END_ID, SERVE_PK_INT, TR },
	{ "pad_id", SERVE_T_PAD_ID, SERVE_PK_INT, TR },
	{ "ignore_eos", SERVE_T_IGNORE_EOS, SERVE_PK_BOOL, BOTH },
	{ "include_stop_str_in_output", SERVE_T_INCLUDE_STOP, SERVE_PK_BOOL, BOTH },
	{ "skip_special_tokens", SERVE_T_SKIP_SPECIAL, SERVE_PK_BOOL, BOTH },
	{ "spaces_between_special_tokens", SERVE_T_SPACES_SPECIAL, SERVE_PK_BOOL, BOTH },
	{ "use_beam_search", SERVE_T_BEAM, SERVE_PK_BOOL, BOTH },
	{ "beam_width", SERVE_T_BEAM, SERVE_PK_INT, TR },
	{ "length_penalty", SERVE_T_LENGTH_PENALTY, NUM, BOTH },
	{ "early_stopping", SERVE_T_EARLY_STOPPING, SERVE_PK_BOOL, BOTH },
	{ "detokenize", SERVE_T_DETOKENIZE, SERVE_PK_BOOL, TR },
	{ "truncate_prompt_tokens", SERVE_T_TRUNCATE_PROMPT, SERVE_PK_INT, BOTH },
	{ "prompt_logprobs", SERVE_T_PROMPT_LOGPROBS, SERVE_PK_INT, BOTH },
	{ "allowed_token_ids", SERVE_T_UNSUPPORTED, 0, BOTH },
	{ "logits_processors", SERVE_T_UNSUPPORTED, 0, BOTH },
	{ "guided_decoding", SERVE_T_UNSUPPORTED, 0, BOTH },
	{ "guided_json", SERVE_T_UNSUPPORTED, 0, BOTH },
	{ "guided_regex", SERVE_T_UNSUPPORTED, 0, BOTH },
	{ "guided_choice", SERVE_T_UNSUPPORTED, 0, BOTH },
	{ "guided_grammar", SERVE_T_UNSUPPORTED, 0, BOTH },
	{ "structured_outputs", SERVE_T_UNSUPPORTED, 0, BOTH },
	{ "lora_name", SERVE_T_UNSUPPORTED, 0, TR },
	{ "return_log_probs", SERVE_T_UNSUPPORTED, 0, TR },
};

void serve_gen_options_init(struct serve_gen_options *o)
{
	memset(o, 0, sizeof(*o));
	rbln_sampling_params_init(&o->sp);
	o->end_id = -1;
	o->truncate_prompt_tokens = -1;
}

static void free_strv(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void serve_gen_options_free(struct serve_gen_options *o)
{
	free_strv(o->stop, o->n_stop);
	free_strv(o->bad_words, o->n_bad_words);
	free(o->stop_token_ids);
	memset(o, 0, sizeof(*o));
}

const struct serve_param *serve_param_find(const char *name, enum serve_dialect d)
{
	size_t i;

	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++)
		if ((params[i].dialects & (1u << d)) && !strcmp(params[i].name, name))
			return &params[i];
	return NULL;
}

struct ctx {
	const char *key;
	const char *where;
	enum serve_dialect d;
	struct rbln_error *err;
};

static int bad(const struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(const struct ctx *c, const char *fmt, ...)
{
	char msg[RBLN_ERROR_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->where)
		return rbln_error_set(c->err, -EINVAL, "%s: field '%s' %s", c->where, c->key, msg);
	return rbln_error_set(c->err, -EINVAL, "field '%s' %s", c->key, msg);
}

/* A short rendering of a JSON value for messages. */
static const char *show(json_object *v, char *buf, size_t n)
{
	const char *s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_NOSLASHESCAPE);

	snprintf(buf, n, "%s %.60s%s", rbln_json_type_name(v), s ? s : "",
		 s && strlen(s) > 60 ? "..." : "");
	return buf;
}

static int get_double(const struct ctx *c, json_object *v, double *out)
{
	char buf[96];

	if (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) {
		*out = json_object_get_double(v);
		return 0;
	}
	if (c->d == SERVE_DIALECT_TRITON && json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		char *end;

		*out = strtod(s, &end);
		if (end != s && !*end)
			return 0;
	}
	return bad(c, "must be a number, got %s", show(v, buf, sizeof(buf)));
}

static int get_int(const struct ctx *c, json_object *v, int64_t *out)
{
	char buf[96];

	if (json_object_is_type(v, json_type_int)) {
		errno = 0;
		*out = json_object_get_int64(v);
		if (errno == ERANGE)
			return bad(c, "is out of range, got %s", show(v, buf, sizeof(buf)));
		return 0;
	}
	if (json_object_is_type(v, json_type_double)) {
		double x = json_object_get_double(v);

		/* JSON has one number type; 100.0 is the integer 100. */
		if (x == floor(x) && fabs(x) < 9.007199254740992e15) {
			*out = (int64_t)x;
			return 0;
		}
	}
	if (c->d == SERVE_DIALECT_TRITON && json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		char *end;
		long long x;

		errno = 0;
		x = strtoll(s, &end, 10);
		if (end != s && !*end && !errno) {
			*out = x;
			return 0;
		}
	}
	return bad(c, "must be an integer, got %s", show(v, buf, sizeof(buf)));
}

static int get_bool(const struct ctx *c, json_object *v, bool *out)
{
	char buf[96];

	if (json_object_is_type(v, json_type_boolean)) {
		*out = json_object_get_boolean(v);
		return 0;
	}
	if (c->d == SERVE_DIALECT_TRITON) {
		if (json_object_is_type(v, json_type_string)) {
			const char *s = json_object_get_string(v);

			if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "1")) {
				*out = true;
				return 0;
			}
			if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "0")) {
				*out = false;
				return 0;
			}
		}
		if (json_object_is_type(v, json_type_int)) {
			int64_t x = json_object_get_int64(v);

			if (x == 0 || x == 1) {
				*out = x == 1;
				return 0;
			}
		}
	}
	return bad(c, "must be true or false, got %s", show(v, buf, sizeof(buf)));
}

/*
 * A string or a list of strings.  In the Triton dialect a list may be
 * nested once (a [1, N] tensor) and empty strings are dropped: that is how
 * the TensorRT-LLM tutorial says "no stop words" ("stop_words": [""]).
 */
static int get_strings(const struct ctx *c, json_object *v, char ***out, size_t *n)
{
	json_object *items[1] = { v };
	json_object *arr = NULL;
	size_t count, i, k = 0;
	char buf[96];
	char **res;

	if (json_object_is_type(v, json_type_string)) {
		count = 1;
	} else if (json_object_is_type(v, json_type_array)) {
		arr = v;
		if (c->d == SERVE_DIALECT_TRITON && json_object_array_length(v) == 1 &&
		    json_object_is_type(json_object_array_get_idx(v, 0), json_type_array))
			arr = json_object_array_get_idx(v, 0);
		count = json_object_array_length(arr);
	} else {
		return bad(c, "must be a string or a list of strings, got %s",
			   show(v, buf, sizeof(buf)));
	}
	res = calloc(count ? count : 1, sizeof(*res));
	if (!res)
		return rbln_error_set(c->err, -ENOMEM, "out of memory");
	for (i = 0; i < count; i++) {
		json_object *s = arr ? json_object_array_get_idx(arr, i) : items[0];
		const char *str;

		if (!json_object_is_type(s, json_type_string)) {
			free_strv(res, k);
			return bad(c, "entry %zu must be a string, got %s", i,
				   show(s, buf, sizeof(buf)));
		}
		str = json_object_get_string(s);
		if (!*str && c->d == SERVE_DIALECT_TRITON)
			continue;
		if (strlen(str) != (size_t)json_object_get_string_len(s)) {
			free_strv(res, k);
			return bad(c, "entry %zu contains a NUL character", i);
		}
		res[k] = strdup(str);
		if (!res[k]) {
			free_strv(res, k);
			return rbln_error_set(c->err, -ENOMEM, "out of memory");
		}
		k++;
	}
	*out = res;
	*n = k;
	return 0;
}

static int get_ids(const struct ctx *c, json_object *v, int32_t **out, size_t *n)
{
	size_t count, i;
	int32_t *ids;
	char buf[96];

	if (c->d == SERVE_DIALECT_TRITON && !json_object_is_type(v, json_type_array)) {
		int64_t x;
		int rc = get_int(c, v, &x);

		if (rc)
			return rc;
		if (x < 0 || x > INT32_MAX)
			return bad(c, "must hold token ids >= 0, got %lld", (long long)x);
		ids = malloc(sizeof(*ids));
		if (!ids)
			return rbln_error_set(c->err, -ENOMEM, "out of memory");
		ids[0] = (int32_t)x;
		*out = ids;
		*n = 1;
		return 0;
	}
	if (!json_object_is_type(v, json_type_array))
		return bad(c, "must be a list of token ids, got %s", show(v, buf, sizeof(buf)));
	count = json_object_array_length(v);
	ids = calloc(count ? count : 1, sizeof(*ids));
	if (!ids)
		return rbln_error_set(c->err, -ENOMEM, "out of memory");
	for (i = 0; i < count; i++) {
		json_object *e = json_object_array_get_idx(v, i);
		int64_t x;

		if (!json_object_is_type(e, json_type_int)) {
			free(ids);
			return bad(c, "entry %zu must be a token id, got %s", i,
				   show(e, buf, sizeof(buf)));
		}
		x = json_object_get_int64(e);
		if (x < 0 || x > INT32_MAX) {
			free(ids);
			return bad(c, "entry %zu must be a token id >= 0, got %lld", i,
				   (long long)x);
		}
		ids[i] = (int32_t)x;
	}
	*out = ids;
	*n = count;
	return 0;
}

static int apply_sp(struct serve_gen_options *o, const struct ctx *c, enum rbln_sampling_field f,
		    json_object *v)
{
	struct rbln_sampling_params *p = &o->sp;
	double x;
	int64_t i;
	int rc;

	o->names[f] = c->key;
	switch (f) {
	case RBLN_SP_TEMPERATURE:
	case RBLN_SP_TOP_P:
	case RBLN_SP_MIN_P:
	case RBLN_SP_REPETITION_PENALTY:
	case RBLN_SP_PRESENCE_PENALTY:
	case RBLN_SP_FREQUENCY_PENALTY:
		rc = get_double(c, v, &x);
		if (rc)
			return rc;
		/* OpenAI's API takes temperatures in [0, 2] and refuses others */
		if (f == RBLN_SP_TEMPERATURE && c->d == SERVE_DIALECT_OPENAI && x > 2)
			return bad(c, "must be at most 2, got %g", x);
		if (f == RBLN_SP_TEMPERATURE)
			p->temperature = x;
		else if (f == RBLN_SP_TOP_P)
			/* TensorRT-LLM's runtime_top_p uses 0 for "off". */
			p->top_p = (x == 0 && !strcmp(c->key, "runtime_top_p")) ? 1.0 : x;
		else if (f == RBLN_SP_MIN_P)
			p->min_p = x;
		else if (f == RBLN_SP_REPETITION_PENALTY)
			p->repetition_penalty = x;
		else if (f == RBLN_SP_PRESENCE_PENALTY)
			p->presence_penalty = x;
		else
			p->frequency_penalty = x;
		return 0;
	case RBLN_SP_TOP_K:
		rc = get_int(c, v, &i);
		if (rc)
			return rc;
		if (i < -1 || i > INT32_MAX)
			return bad(c, "must be -1 or 0 (off) or at least 1, got %lld", (long long)i);
		p->top_k = (int32_t)i;
		return 0;
	case RBLN_SP_SEED:
		rc = get_int(c, v, &i);
		if (rc)
			return rc;
		p->has_seed = true;
		p->seed = (uint64_t)i;
		return 0;
	case RBLN_SP_MAX_TOKENS:
	case RBLN_SP_MIN_TOKENS:
		rc = get_int(c, v, &i);
		if (rc)
			return rc;
		if (f == RBLN_SP_MAX_TOKENS) {
			if (i < 1)
				return bad(c, "must be at least 1, got %lld", (long long)i);
			p->max_tokens = i;
			o->max_tokens_set = true;
		} else {
			if (i < 0)
				return bad(c, "must be >= 0, got %lld", (long long)i);
			p->min_tokens = i;
		}
		return 0;
	case RBLN_SP_STOP:
		rc = get_strings(c, v, &o->stop, &o->n_stop);
		if (rc)
			return rc;
		p->stop = (const char *const *)o->stop;
		p->n_stop = o->n_stop;
		return 0;
	case RBLN_SP_BAD_WORDS:
		return get_strings(c, v, &o->bad_words, &o->n_bad_words);
	case RBLN_SP_STOP_TOKEN_IDS:
		rc = get_ids(c, v, &o->stop_token_ids, &o->n_stop_token_ids);
		if (rc)
			return rc;
		p->stop_token_ids = o->stop_token_ids;
		p->n_stop_token_ids = o->n_stop_token_ids;
		return 0;
	case RBLN_SP_LOGPROBS:
		rc = get_int(c, v, &i);
		if (rc)
			return rc;
		if (i < 0 || i > RBLN_SAMPLING_MAX_LOGPROBS)
			return bad(c, "must be between 0 and %d, got %lld",
				   RBLN_SAMPLING_MAX_LOGPROBS, (long long)i);
		p->logprobs = (int32_t)i;
		return 0;
	case RBLN_SP_FIELD_COUNT:
		break;
	}
	return bad(c, "has no handler");
}

static int apply_other(struct serve_gen_options *o, const struct ctx *c,
		       enum serve_param_target t, json_object *v)
{
	int64_t i;
	double x;
	bool b;
	int rc;

	switch (t) {
	case SERVE_T_N:
	case SERVE_T_BEST_OF:
		rc = get_int(c, v, &i);
		if (rc)
			return rc;
		/* One sequence per prompt: best-of search is beam-like and not offered. */
		if (i != 1)
			return bad(c, "must be 1 (rbln-serve returns one sequence per "
				   "request), got %lld", (long long)i);
		return 0;
	case SERVE_T_END_ID:
	case SERVE_T_PAD_ID:
		rc = get_int(c, v, &i);
		if (rc)
			return rc;
		if (i < 0 || i > INT32_MAX)
			return bad(c, "must be a token id >= 0, got %lld", (long long)i);
		/* pad_id has no use: continuous batching never pads. */
		if (t == SERVE_T_END_ID)
			o->end_id = i;
		return 0;
	case SERVE_T_IGNORE_EOS:
	case SERVE_T_INCLUDE_STOP:
	case SERVE_T_SKIP_SPECIAL:
	case SERVE_T_SPACES_SPECIAL:
		rc = get_bool(c, v, &b);
		if (rc)
			return rc;
		if (t == SERVE_T_IGNORE_EOS)
			o->sp.ignore_eos = b;
		else if (t == SERVE_T_INCLUDE_STOP)
			o->sp.include_stop_str_in_output = b;
		else if (t == SERVE_T_SKIP_SPECIAL)
			o->sp.skip_special_tokens = b;
		/*
		 * spaces_between_special_tokens only changes the output of
		 * slow (Python) tokenizers; decoding here is tokenizers'
		 * decode(), where it has no effect either way.
		 */
		return 0;
	case SERVE_T_BEAM:
		if (!strcmp(c->key, "beam_width")) {
			rc = get_int(c, v, &i);
			if (rc)
				return rc;
			if (i != 1)
				return bad(c, "must be 1: beam search is not supported, got %lld",
					   (long long)i);
			return 0;
		}
		rc = get_bool(c, v, &b);
		if (rc)
			return rc;
		if (b)
			return bad(c, "must be false: beam search is not supported");
		return 0;
	case SERVE_T_LENGTH_PENALTY:
		rc = get_double(c, v, &x);
		if (rc)
			return rc;
		if (x != 1.0)
			return bad(c, "must be 1: it applies to beam search, which is not "
				   "supported, got %g", x);
		return 0;
	case SERVE_T_EARLY_STOPPING:
		rc = get_bool(c, v, &b);
		if (rc)
			return rc;
		if (b)
			return bad(c, "must be false: it applies to beam search, which is not "
				   "supported");
		return 0;
	case SERVE_T_DETOKENIZE:
		rc = get_bool(c, v, &b);
		if (rc)
			return rc;
		if (!b)
			return bad(c, "must be true: responses always carry text");
		return 0;
	case SERVE_T_TRUNCATE_PROMPT:
		rc = get_int(c, v, &i);
		if (rc)
			return rc;
		if (i < 1)
			return bad(c, "must be at least 1, got %lld", (long long)i);
		o->truncate_prompt_tokens = i;
		return 0;
	case SERVE_T_PROMPT_LOGPROBS:
		return bad(c, "is not supported: prompt log-probabilities are not computed");
	case SERVE_T_UNSUPPORTED:
		return bad(c, "is not supported by rbln-serve");
	default:
		break;
	}
	return bad(c, "has no handler");
}

int serve_params_apply(struct serve_gen_options *o, const char *key, json_object *val,
		       enum serve_dialect d, const char *where, struct rbln_error *err)
{
	const struct serve_param *p = serve_param_find(key, d);
	struct ctx c = { .key = NULL, .where = where, .d = d, .err = err };
	int rc;

	if (!p)
		return 1;
	c.key = p->name;	/* static storage: outlives the request JSON */
	if (!val || json_object_is_type(val, json_type_null))
		return 0;
	if (o->set_by[p->target]) {
		const char *w1 = o->set_in[p->target], *w2 = where;

		return rbln_error_set(err, -EINVAL, "field '%s'%s%s and field '%s'%s%s set the "
				      "same parameter: give it once", o->set_by[p->target],
				      w1 ? " in " : "", w1 ? w1 : "", p->name, w2 ? " in " : "",
				      w2 ? w2 : "");
	}
	if ((unsigned)p->target < RBLN_SP_FIELD_COUNT)
		rc = apply_sp(o, &c, (enum rbln_sampling_field)p->target, val);
	else
		rc = apply_other(o, &c, p->target, val);
	if (rc)
		return rc;
	o->set_by[p->target] = p->name;
	o->set_in[p->target] = where;
	return 0;
}

int serve_params_apply_object(struct serve_gen_options *o, json_object *obj,
			      enum serve_dialect d, const char *where, struct rbln_error *err)
{
	json_object_object_foreach(obj, key, val) {
		int rc = serve_params_apply(o, key, val, d, where, err);

		if (rc < 0)
			return rc;
		if (rc > 0) {
			if (where)
				return rbln_error_set(err, -EINVAL, "%s: unknown field '%s'", where,
						      key);
			return rbln_error_set(err, -EINVAL, "unknown field '%s'", key);
		}
	}
	return 0;
}

int serve_params_apply_json_string(struct serve_gen_options *o, const char *text, size_t len,
				   struct rbln_error *err)
{
	json_object *obj;
	int rc;

	rc = rbln_json_parse(text, len, "sampling_parameters", &obj, err);
	if (rc)
		return rc;
	if (!json_object_is_type(obj, json_type_object)) {
		rc = rbln_error_set(err, -EINVAL, "sampling_parameters must be a JSON object, "
				    "got %s", rbln_json_type_name(obj));
	} else {
		rc = serve_params_apply_object(o, obj, SERVE_DIALECT_TRITON, "sampling_parameters",
					       err);
	}
	json_object_put(obj);
	return rc;
}
