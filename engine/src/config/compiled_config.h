/* SPDX-License-Identifier: MIT */
/* rbln_config.json writing and the spellings of its values (the reader: rbln_compile.h). */
#ifndef RBLN_SRC_CONFIG_COMPILED_CONFIG_H
#define RBLN_SRC_CONFIG_COMPILED_CONFIG_H

#include "rbln_compiled_config.h"

/* Writes DIR/rbln_config.json atomically. */
int rbln_compiled_config_write(const char *dir, const struct rbln_compiled_config *cc,
			  struct rbln_error *err);

/* "bfloat16"/"bf16", "float16"/"fp16"/"f16", "float32"/"fp32"/"f32". */
int rbln_compiled_dtype_parse(const char *s, enum rbln_dtype *dt);
/* The torch spelling rbln_config.json uses. */
const char *rbln_compiled_dtype_name(enum rbln_dtype dt);

/*
 * The spellings of enum rbln_quantize, enum rbln_matmul_precision and
 * enum rbln_weight_layout, by value, NULL-terminated (util/text.h's
 * rbln_name_*()): what rbln_config.json, --quantize, --matmul-precision
 * and --weight-layout take.
 */
extern const char *const rbln_quantize_names[];
extern const char *const rbln_matmul_precision_names[];
extern const char *const rbln_weight_layout_names[];

#endif
