/* SPDX-License-Identifier: MIT */
/* Sampling flags of rbln-generate and rbln-bench (vLLM's SamplingParams names). */
#ifndef RBLN_SAMPLE_CLI_H
#define RBLN_SAMPLE_CLI_H

#include <getopt.h>
#include <stdbool.h>

#include "rbln_config.h"
#include "rbln_sample.h"

enum {
	CLI_TEMPERATURE = 1100,
	CLI_TOP_K,
	CLI_TOP_P,
	CLI_MIN_P,
	CLI_REP_PENALTY,
	CLI_PRES_PENALTY,
	CLI_FREQ_PENALTY,
	CLI_SEED,
	CLI_MAX_TOKENS,
	CLI_MIN_TOKENS,
	CLI_IGNORE_EOS,
	CLI_STOP_IDS,
	CLI_SAMPLE_LAST,
};

#define RBLN_SAMPLE_LONG_OPTIONS \
	{ "temperature", required_argument, NULL, CLI_TEMPERATURE }, \
	{ "top-k", required_argument, NULL, CLI_TOP_K }, \
	{ "top-p", required_argument, NULL, CLI_TOP_P }, \
	{ "min-p", required_argument, NULL, CLI_MIN_P }, \
	{ "repetition-penalty", required_argument, NULL, CLI_REP_PENALTY }, \
	{ "presence-penalty", required_argument, NULL, CLI_PRES_PENALTY }, \
	{ "frequency-penalty", required_argument, NULL, CLI_FREQ_PENALTY }, \
	{ "seed", required_argument, NULL, CLI_SEED }, \
	{ "max-tokens", required_argument, NULL, CLI_MAX_TOKENS }, \
	{ "min-tokens", required_argument, NULL, CLI_MIN_TOKENS }, \
	{ "ignore-eos", no_argument, NULL, CLI_IGNORE_EOS }, \
	{ "stop-token-ids", required_argument, NULL, CLI_STOP_IDS }

extern const char rbln_sample_cli_usage[];

/* Which fields a flag set, so model defaults fill only the others. */
struct rbln_sample_cli {
	struct rbln_sampling_params p;		/* p.stop_token_ids points at stop_ids */
	int32_t stop_ids[RBLN_SAMPLING_MAX_STOP_IDS];
	bool set_temperature, set_top_k, set_top_p, set_min_p, set_rep, set_max_tokens;
};

void rbln_sample_cli_init(struct rbln_sample_cli *c);
int rbln_sample_cli_apply(int id, const char *arg, struct rbln_sample_cli *c,
			  struct rbln_error *err);
/*
 * Fills what no flag set from generation_config.json, as vLLM does with
 * the model's generation config: temperature, top_k, top_p, min_p,
 * repetition_penalty, max_new_tokens (max_tokens; default_max when absent).
 */
void rbln_sample_cli_defaults(struct rbln_sample_cli *c, const struct rbln_generation_config *gen,
			      int64_t default_max);

/* "1,2,3" (or blanks) into ids; -EINVAL naming the flag. */
int rbln_cli_parse_ids(const char *flag, const char *text, int32_t **ids, size_t *n,
		       struct rbln_error *err);

#endif
