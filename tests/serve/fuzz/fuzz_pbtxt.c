// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: config.pbtxt text through the whole reader (the
 * protobuf text-format parser, the ModelConfig schema check and JSON
 * conversion, and the LLM interpretation with vLLM auto-completion).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "serve/repository/model_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct serve_model_config cfg;
	struct rbln_error err;

	if (!serve_model_config_parse((const char *)data, size, "config.pbtxt", "m", &cfg, &err)) {
		/* what a served model reads from it must be consistent */
		if (cfg.prompt_input >= cfg.n_inputs || cfg.text_output >= cfg.n_outputs)
			__builtin_trap();
		if (!serve_model_input(&cfg, cfg.inputs[cfg.prompt_input].name))
			__builtin_trap();
		serve_model_config_free(&cfg);
	} else if (!err.msg[0]) {
		__builtin_trap();	/* every failure says why */
	}
	return 0;
}
