// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the Jinja lexer, parser and evaluator on arbitrary
 * template text, rendered with chat-like variables.  Any input must either
 * render or fail with a message; budgets bound time and memory.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "rbln_jinja.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char vars_json[] =
	"{\"messages\": [{\"role\": \"system\", \"content\": \" sys \"}, "
	"{\"role\": \"user\", \"content\": \"Hi \\u00e9\"}, {\"role\": \"assistant\", "
	"\"content\": \"Yo\", \"tool_calls\": [{\"function\": {\"name\": \"f\", \"arguments\": "
	"{\"a\": [1, 2.5, null, true]}}}]}], \"add_generation_prompt\": true, \"bos_token\": "
	"\"<s>\", \"eos_token\": \"</s>\", \"tools\": null, \"n\": 3}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_object *vars;
	/* A small budget: budget failures stay cheap, so the fuzzer stays fast. */
	struct rbln_jinja_options opt = { .now = 1721952000, .max_steps = 200000 };
	struct rbln_jinja_template *t;
	struct rbln_error err = { 0 };
	char *out;
	size_t len;

	if (!vars)
		vars = json_tokener_parse(vars_json);
	if (size > 4096)
		return 0;	/* keeps each run short; the grammar is small */
	if (rbln_jinja_compile((const char *)data, size, "fuzz", &t, &err)) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	if (rbln_jinja_render(t, vars, &opt, &out, &len, &err) == 0)
		free(out);
	else if (!err.msg[0])
		abort();
	rbln_jinja_free(t);
	return 0;
}
