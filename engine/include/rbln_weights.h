/* SPDX-License-Identifier: MIT */
/*
 * The weights of a Hugging Face checkpoint directory: model.safetensors,
 * or shards listed by model.safetensors.index.json.  All files are mapped
 * read-only and validated; tensors are found by name.
 */
#ifndef RBLN_WEIGHTS_H
#define RBLN_WEIGHTS_H

#include <stddef.h>

#include "rbln_config.h"
#include "rbln_error.h"
#include "rbln_safetensors.h"

struct rbln_weights;

int rbln_weights_open(const char *model_dir, struct rbln_weights **out, struct rbln_error *err);
void rbln_weights_close(struct rbln_weights *w);

size_t rbln_weights_count(const struct rbln_weights *w);
const struct rbln_tensor *rbln_weights_at(const struct rbln_weights *w, size_t i);
/* NULL when absent. */
const struct rbln_tensor *rbln_weights_find(const struct rbln_weights *w, const char *name);
/* The checkpoint directory given to rbln_weights_open(). */
const char *rbln_weights_dir(const struct rbln_weights *w);
/* Number of safetensors files (1 when not sharded). */
size_t rbln_weights_file_count(const struct rbln_weights *w);

/*
 * Checks that the tensors are exactly those of a LlamaForCausalLM with this
 * configuration, with the shapes it implies.  Errors name the tensor.
 */
int rbln_weights_check_llama(const struct rbln_weights *w, const struct rbln_llama_config *cfg,
			     struct rbln_error *err);

/*
 * Fails, naming the file, the tensor and the first bad element, when any
 * weight is a NaN or an infinity.
 */
int rbln_weights_check_finite(const struct rbln_weights *w, struct rbln_error *err);

#endif
