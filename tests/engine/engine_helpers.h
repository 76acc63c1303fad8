/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the engine runtime tests: compiling a reference model into a
 * scratch directory, opening it, and running sequences to completion.
 */
#ifndef RBLN_ENGINE_HELPERS_H
#define RBLN_ENGINE_HELPERS_H

#include "rbln_compile.h"
#include "rbln_runtime.h"
#include "test_common.h"

/* A scratch directory holding MODEL compiled with opt (rmtree it after). */
char *eh_compile(const char *model, const struct rbln_compile_options *opt);
struct rbln_runtime *eh_open(const char *dir);

/* Greedy to exactly max_tokens tokens (ignore_eos). */
void eh_greedy(struct rbln_sampling_params *p, int64_t max_tokens);

/* Runs steps until no sequence has work; fails the test on an error. */
void eh_run_all(struct rbln_runtime *e);

/* ids of a JSON array. */
int32_t *eh_json_ids(json_object *arr, size_t *n);

/*
 * Environment variable NAME as a number in [min, max] into *value (left
 * as it is when unset): 0, or -1 with a message on stderr.
 */
int eh_env_size(const char *name, size_t min, size_t max, size_t *value);

#endif
