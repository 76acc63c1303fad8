/* SPDX-License-Identifier: MIT */
/*
 * Request parameters -> struct rbln_sampling_params.  One table serves all
 * the ways clients spell them: vLLM SamplingParams names (in the
 * sampling_parameters JSON string, in "parameters", or top-level in
 * generate), TensorRT-LLM's tensor names (max_tokens, stop_words,
 * bad_words, end_id, random_seed, ...) and the OpenAI request fields.
 * A value given twice under any of its names is an error naming both.
 */
#ifndef RBLN_SERVE_PARAMS_H
#define RBLN_SERVE_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "rbln_error.h"
#include "rbln_serving.h"

/* How strictly values are read. */
enum serve_dialect {
	/*
	 * Triton: the vLLM backend converts sampling_parameters values with
	 * int()/float(), so "0.1" is a temperature; TensorRT-LLM's empty
	 * stop/bad words ("") mean none.
	 */
	SERVE_DIALECT_TRITON,
	SERVE_DIALECT_OPENAI,	/* JSON types as the OpenAI API defines them */
};

/* Kinds of value a parameter takes, for checking declared config inputs. */
#define SERVE_PK_BOOL 1u
#define SERVE_PK_INT 2u
#define SERVE_PK_FLOAT 4u
#define SERVE_PK_STRING 8u

/* What parameters set beyond struct rbln_sampling_params. */
enum serve_param_target {
	SERVE_T_SP_BASE = 0,	/* + enum rbln_sampling_field */
	SERVE_T_N = RBLN_SP_FIELD_COUNT,
	SERVE_T_BEST_OF,
	SERVE_T_END_ID,
	SERVE_T_PAD_ID,
	SERVE_T_IGNORE_EOS,
	SERVE_T_INCLUDE_STOP,
	SERVE_T_SKIP_SPECIAL,
	SERVE_T_SPACES_SPECIAL,
	SERVE_T_BEAM,
	SERVE_T_LENGTH_PENALTY,
	SERVE_T_EARLY_STOPPING,
	SERVE_T_DETOKENIZE,
	SERVE_T_TRUNCATE_PROMPT,
	SERVE_T_PROMPT_LOGPROBS,
	SERVE_T_UNSUPPORTED,	/* known to vLLM/OpenAI, not offered here */
	SERVE_T_COUNT,
};

struct serve_param {
	const char *name;
	enum serve_param_target target;
	unsigned kinds;		/* SERVE_PK_* */
	unsigned dialects;	/* bit (1 << enum serve_dialect) where the name is known */
};

/* The options of one generation request, as parsed. */
struct serve_gen_options {
	struct rbln_sampling_params sp;
	const char *names[RBLN_SP_FIELD_COUNT];	/* the key each field came from */
	const char *set_by[SERVE_T_COUNT];	/* key that set each target */
	const char *set_in[SERVE_T_COUNT];	/* where: "sampling_parameters", ... */
	char **stop;			/* owned; sp.stop points here */
	size_t n_stop;
	char **bad_words;		/* owned text; tokenized when the request is built */
	size_t n_bad_words;
	int32_t *stop_token_ids;	/* owned; sp.stop_token_ids points here */
	size_t n_stop_token_ids;
	int64_t end_id;			/* -1 or TensorRT-LLM's end_id */
	int64_t truncate_prompt_tokens;	/* -1 or keep the last N prompt tokens */
	bool max_tokens_set;
};

void serve_gen_options_init(struct serve_gen_options *o);
void serve_gen_options_free(struct serve_gen_options *o);

/* The table entry for a name in a dialect, or NULL. */
const struct serve_param *serve_param_find(const char *name, enum serve_dialect d);

/*
 * Applies key=val.  `where` names the container for messages ("parameters",
 * "sampling_parameters", NULL for the top level).  Returns 0 when applied,
 * 1 when key is not a parameter (the caller decides), negative on a bad
 * value or a conflict.  JSON null counts as not given.
 */
int serve_params_apply(struct serve_gen_options *o, const char *key, json_object *val,
		       enum serve_dialect d, const char *where, struct rbln_error *err);

/*
 * Applies every member of a JSON object (sampling_parameters or
 * "parameters"); unknown keys are errors naming the key.
 */
int serve_params_apply_object(struct serve_gen_options *o, json_object *obj,
			      enum serve_dialect d, const char *where, struct rbln_error *err);

/*
 * Parses the sampling_parameters JSON string (as the vLLM backend takes it)
 * and applies it.
 */
int serve_params_apply_json_string(struct serve_gen_options *o, const char *text, size_t len,
				   struct rbln_error *err);

#endif
