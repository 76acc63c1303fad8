// SPDX-License-Identifier: MIT
#include "cli/sample_cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/compile_cli.h"

const char rbln_sample_cli_usage[] =
	"  --temperature T            0 = greedy (default: generation_config.json's,\n"
	"                             else 1)\n"
	"  --top-k K, --top-p P, --min-p P\n"
	"  --repetition-penalty R, --presence-penalty P, --frequency-penalty F\n"
	"  --seed N                   same seed, same output\n"
	"  --max-tokens N             tokens to generate (default: max_new_tokens of\n"
	"                             generation_config.json, else 64)\n"
	"  --min-tokens N             no EOS or stop id before N tokens\n"
	"  --ignore-eos               go on past EOS\n"
	"  --stop-token-ids L         ids that end generation, e.g. 128001,128009\n";

void rbln_sample_cli_init(struct rbln_sample_cli *c)
{
	memset(c, 0, sizeof(*c));
	rbln_sampling_params_init(&c->p);
	c->p.stop_token_ids = c->stop_ids;
}

static int parse_double(const char *flag, const char *arg, double *out, struct rbln_error *err)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v))
		return rbln_error_set(err, -EINVAL, "--%s: '%s' is not a number", flag, arg);
	*out = v;
	return 0;
}

static int parse_int(const char *flag, const char *arg, long long min, long long max,
		     long long *out, struct rbln_error *err)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		return rbln_error_set(err, -EINVAL, "--%s: '%s' must be an integer from %lld to "
				      "%lld", flag, arg, min, max);
	*out = v;
	return 0;
}

int rbln_cli_parse_ids(const char *flag, const char *text, int32_t **ids, size_t *n,
		       struct rbln_error *err)
{
	size_t cap = 16, cnt = 0;
	int32_t *v = malloc(cap * sizeof(*v));
	const char *p = text;

	if (!v)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	while (*p) {
		char *end;
		long long x;

		while (*p == ',' || *p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		errno = 0;
		x = strtoll(p, &end, 10);
		if (end == p || errno || x < 0 || x > INT32_MAX ||
		    (*end && *end != ',' && *end != ' ' && *end != '\t' && *end != '\n')) {
			free(v);
			return rbln_error_set(err, -EINVAL, "--%s: '%s' is not a list of token ids "
					      "such as 1,2,3", flag, text);
		}
		if (cnt == cap) {
			int32_t *nv = realloc(v, 2 * cap * sizeof(*v));

			if (!nv) {
				free(v);
				return rbln_error_set(err, -ENOMEM, "out of memory");
			}
			v = nv;
			cap *= 2;
		}
		v[cnt++] = (int32_t)x;
		p = end;
	}
	if (!cnt) {
		free(v);
		return rbln_error_set(err, -EINVAL, "--%s: no token ids in '%s'", flag, text);
	}
	*ids = v;
	*n = cnt;
	return 0;
}

int rbln_sample_cli_apply(int id, const char *arg, struct rbln_sample_cli *c,
			  struct rbln_error *err)
{
	struct rbln_sampling_params *p = &c->p;
	unsigned long long u;
	long long v;
	int32_t *ids;
	size_t n;
	int rc;

	switch (id) {
	case CLI_TEMPERATURE:
		c->set_temperature = true;
		return parse_double("temperature", arg, &p->temperature, err);
	case CLI_TOP_K:
		c->set_top_k = true;
		rc = parse_int("top-k", arg, -1, INT32_MAX, &v, err);
		p->top_k = (int32_t)v;
		return rc;
	case CLI_TOP_P:
		c->set_top_p = true;
		return parse_double("top-p", arg, &p->top_p, err);
	case CLI_MIN_P:
		c->set_min_p = true;
		return parse_double("min-p", arg, &p->min_p, err);
	case CLI_REP_PENALTY:
		c->set_rep = true;
		return parse_double("repetition-penalty", arg, &p->repetition_penalty, err);
	case CLI_PRES_PENALTY:
		return parse_double("presence-penalty", arg, &p->presence_penalty, err);
	case CLI_FREQ_PENALTY:
		return parse_double("frequency-penalty", arg, &p->frequency_penalty, err);
	case CLI_SEED:
		rc = rbln_cli_parse_u64("seed", arg, 0, UINT64_MAX, &u, err);
		p->has_seed = !rc;
		p->seed = u;
		return rc;
	case CLI_MAX_TOKENS:
		c->set_max_tokens = true;
		rc = parse_int("max-tokens", arg, -1, INT32_MAX, &v, err);
		p->max_tokens = v;
		return rc;
	case CLI_MIN_TOKENS:
		rc = parse_int("min-tokens", arg, 0, INT32_MAX, &v, err);
		p->min_tokens = v;
		return rc;
	case CLI_IGNORE_EOS:
		p->ignore_eos = true;
		return 0;
	case CLI_STOP_IDS:
		rc = rbln_cli_parse_ids("stop-token-ids", arg, &ids, &n, err);
		if (rc)
			return rc;
		if (n > RBLN_SAMPLING_MAX_STOP_IDS) {
			free(ids);
			return rbln_error_set(err, -EINVAL, "--stop-token-ids: at most %d ids",
					      RBLN_SAMPLING_MAX_STOP_IDS);
		}
		memcpy(c->stop_ids, ids, n * sizeof(*ids));
		p->n_stop_token_ids = n;
		free(ids);
		return 0;
	}
	return rbln_error_set(err, -EINVAL, "unknown sampling flag %d", id);
}

void rbln_sample_cli_defaults(struct rbln_sample_cli *c, const struct rbln_generation_config *gen,
			      int64_t default_max)
{
	if (!c->set_max_tokens)
		c->p.max_tokens = gen->present && gen->max_new_tokens > 0 ? gen->max_new_tokens :
				  default_max;
	if (!gen->present)
		return;
	/* transformers samples only with do_sample; without it generation is greedy. */
	if (!c->set_temperature)
		c->p.temperature = gen->do_sample ? gen->temperature : 0.0;
	/*
	 * The loader gives transformers' default 50 for an absent top_k; vLLM
	 * takes only the keys a file has, so 50 is read as "not set".
	 */
	if (!c->set_top_k && gen->top_k != 50)
		c->p.top_k = (int32_t)gen->top_k;
	if (!c->set_top_p)
		c->p.top_p = gen->top_p;
	if (!c->set_min_p)
		c->p.min_p = gen->min_p;
	if (!c->set_rep)
		c->p.repetition_penalty = gen->repetition_penalty;
}
