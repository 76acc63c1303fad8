// SPDX-License-Identifier: MIT
/*
 * rbln-serve: Triton/KServe- and OpenAI-compatible serving of compiled
 * Llama models on RBLN NPUs.  Reads a Triton model repository laid out as
 * in the RBLN tutorial (or one model path), loads every model through the
 * engine runtime, and serves HTTP on 8000 and Prometheus metrics on 8002.
 * SIGTERM (or SIGINT) stops accepting, finishes in-flight requests and
 * exits 0; a second signal cancels what still runs.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rbln_serving.h"
#include "serve/grpc/grpc_server.h"
#include "serve/http/server.h"
#include "serve/model/served_model.h"
#include "serve/repository/repository.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rbln-serve --model-repository DIR [options]\n"
		"  or:  rbln-serve --model PATH [options]\n"
		"\n"
		"Serves LLMs over KServe v2 (Triton's HTTP API, with generate and\n"
		"generate_stream) and OpenAI's /v1 API, with Prometheus metrics.\n"
		"\n"
		"  --model-repository DIR    a Triton model repository: DIR/<name>/config.pbtxt\n"
		"                            and DIR/<name>/<version>/model.json\n"
		"  --model PATH              serve one model: a compiled directory or a Hugging\n"
		"                            Face checkpoint (compiled on first load)\n"
		"  --served-model-name NAME  its name (default: PATH's last component)\n"
		"  --max-num-seqs N, --max-model-len N, --max-num-batched-tokens N,\n"
		"  --block-size N, --tensor-parallel-size N, --tokenizer DIR, --seed N\n"
		"                            with --model: what model.json would say\n"
		"  --host ADDR               listen address (default 0.0.0.0: every interface,\n"
		"                            reachable by anyone who can reach this machine;\n"
		"                            use 127.0.0.1, --api-key and TLS where that is\n"
		"                            not what you want)\n"
		"  --http-port N             HTTP port (default 8000)\n"
		"  --metrics-port N          metrics port (default 8002)\n"
		"  --allow-metrics BOOL      serve metrics (default true)\n"
		"  --http-threads N          HTTP threads (default 4)\n"
		"  --http-max-input-size N   largest request body in bytes (default 67108864)\n"
		"  --http-max-connections N  open connections per port (default 2048)\n"
		"  --http-max-connections-per-client N\n"
		"                            from one address, per port (default 128; 0: no\n"
		"                            limit, e.g. behind a proxy)\n"
		"  --http-idle-timeout S     close a connection silent for S seconds (default 60;\n"
		"                            0: never)\n"
		"  --http-header-timeout S   a request's headers must arrive within S seconds of\n"
		"                            the connection or of the previous answer (default 30;\n"
		"                            0: no limit)\n"
		"  --http-body-timeout S     and its body within S seconds more (default 120;\n"
		"                            0: no limit)\n"
		"  --prep-threads N          threads that parse, render and tokenize requests\n"
		"                            (default 2)\n"
		"  --api-key KEY             require 'Authorization: Bearer KEY' on every route\n"
		"                            but health and metrics (default: $RBLN_API_KEY;\n"
		"                            none: no check)\n"
		"  --ssl-certfile FILE, --ssl-keyfile FILE\n"
		"                            serve HTTPS on the HTTP port (PEM certificate chain\n"
		"                            and private key)\n"
		"  --max-queue-size N        requests waiting per model before 503 (default\n"
		"                            1024; config.pbtxt's default_queue_policy wins)\n"
		"  --request-timeout-us N    deadline of requests that set none (default none)\n"
		"  --drain-timeout S         on SIGTERM, seconds to let requests finish before\n"
		"                            cancelling them (default: no limit)\n"
		"  --check                   read and check the models, print them, and exit\n"
		"  --model-control-mode MODE none (default): every model is loaded at start,\n"
		"                            load and unload are refused; explicit: only the\n"
		"                            --load-model models are, and the repository API\n"
		"                            loads and unloads them\n"
		"  --load-model NAME         with explicit: load NAME at start (repeatable; '*'\n"
		"                            alone loads every model)\n"
		"  --grpc-port N             gRPC port (default 8001)\n"
		"  --allow-grpc BOOL         serve KServe v2 gRPC (default true)\n"
		"  --grpc-keepalive-time MS, --grpc-keepalive-timeout MS,\n"
		"  --grpc-keepalive-permit-without-calls BOOL,\n"
		"  --grpc-http2-max-pings-without-data N,\n"
		"  --grpc-http2-min-recv-ping-interval-without-data MS\n"
		"                            gRPC keepalive, as tritonserver's flags (defaults\n"
		"                            7200000, 20000, false, 2, 300000)\n"
		"  -h, --help                this help\n"
		"      --version             the version\n");
}

enum {
	OPT_REPO = 256, OPT_MODEL, OPT_NAME, OPT_SEQS, OPT_LEN, OPT_BATCHED, OPT_BLOCK, OPT_TP,
	OPT_TOKENIZER, OPT_SEED, OPT_HOST, OPT_HTTP_PORT, OPT_METRICS_PORT, OPT_ALLOW_METRICS,
	OPT_THREADS, OPT_MAX_INPUT, OPT_MAX_QUEUE, OPT_TIMEOUT, OPT_DRAIN, OPT_CHECK,
	OPT_GRPC_PORT, OPT_ALLOW_GRPC, OPT_MAX_CONN, OPT_MAX_PER_CLIENT, OPT_IDLE_TIMEOUT,
	OPT_HEADER_TIMEOUT, OPT_BODY_TIMEOUT, OPT_PREP_THREADS, OPT_API_KEY, OPT_SSL_CERT,
	OPT_SSL_KEY, OPT_CONTROL_MODE, OPT_LOAD_MODEL,
};

/* gRPC keepalive, tritonserver's flags. */
enum { OPT_KA_TIME = 512, OPT_KA_TIMEOUT, OPT_KA_PERMIT, OPT_KA_PINGS, OPT_KA_INTERVAL };

struct args {
	const char *repo;
	struct serve_model_json mj;	/* --model and its engine arguments */
	const char *name;
	struct serve_options opt;
	long drain_s;
	bool check;
	bool allow_grpc;
	struct serve_grpc_options grpc;
	const char **load;		/* --load-model, in order */
	size_t n_load;
};

static int num(const char *flag, const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end || errno || v < min || v > max) {
		fprintf(stderr, "rbln-serve: %s must be an integer in [%lld, %lld], got '%s'\n",
			flag, min, max, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int boolean(const char *flag, const char *s, bool *out)
{
	if (!strcmp(s, "true") || !strcmp(s, "1")) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "false") || !strcmp(s, "0")) {
		*out = false;
		return 0;
	}
	fprintf(stderr, "rbln-serve: %s must be true or false, got '%s'\n", flag, s);
	return -1;
}

/* The flags that bound what clients can hold (connections, time, threads). */
static int bound_flag(int opt, const char *arg, struct serve_options *o)
{
	static const struct {
		int opt;
		const char *flag;
		long long min, max;
		size_t field;
	} flags[] = {
		{ OPT_MAX_CONN, "--http-max-connections", 1, 1000000,
		  offsetof(struct serve_options, max_connections) },
		{ OPT_MAX_PER_CLIENT, "--http-max-connections-per-client", 0, 1000000,
		  offsetof(struct serve_options, max_connections_per_client) },
		{ OPT_IDLE_TIMEOUT, "--http-idle-timeout", 0, 86400,
		  offsetof(struct serve_options, idle_timeout_s) },
		{ OPT_HEADER_TIMEOUT, "--http-header-timeout", 0, 86400,
		  offsetof(struct serve_options, header_timeout_s) },
		{ OPT_BODY_TIMEOUT, "--http-body-timeout", 0, 86400,
		  offsetof(struct serve_options, body_timeout_s) },
		{ OPT_PREP_THREADS, "--prep-threads", 1, 256,
		  offsetof(struct serve_options, prep_threads) },
	};
	long long v;
	size_t i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (flags[i].opt != opt)
			continue;
		if (num(flags[i].flag, arg, flags[i].min, flags[i].max, &v))
			return -1;
		*(unsigned *)((char *)o + flags[i].field) = (unsigned)v;
		return 0;
	}
	return -1;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
		{ "model-repository", required_argument, NULL, OPT_REPO },
		{ "model", required_argument, NULL, OPT_MODEL },
		{ "served-model-name", required_argument, NULL, OPT_NAME },
		{ "max-num-seqs", required_argument, NULL, OPT_SEQS },
		{ "max-model-len", required_argument, NULL, OPT_LEN },
		{ "max-num-batched-tokens", required_argument, NULL, OPT_BATCHED },
		{ "block-size", required_argument, NULL, OPT_BLOCK },
		{ "tensor-parallel-size", required_argument, NULL, OPT_TP },
		{ "tokenizer", required_argument, NULL, OPT_TOKENIZER },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "host", required_argument, NULL, OPT_HOST },
		{ "grpc-keepalive-time", required_argument, NULL, OPT_KA_TIME },
		{ "grpc-keepalive-timeout", required_argument, NULL, OPT_KA_TIMEOUT },
		{ "grpc-keepalive-permit-without-calls", required_argument, NULL, OPT_KA_PERMIT },
		{ "grpc-http2-max-pings-without-data", required_argument, NULL, OPT_KA_PINGS },
		{ "grpc-http2-min-recv-ping-interval-without-data", required_argument, NULL,
		  OPT_KA_INTERVAL },
		{ "http-port", required_argument, NULL, OPT_HTTP_PORT },
		{ "metrics-port", required_argument, NULL, OPT_METRICS_PORT },
		{ "allow-metrics", required_argument, NULL, OPT_ALLOW_METRICS },
		{ "http-threads", required_argument, NULL, OPT_THREADS },
		{ "http-max-input-size", required_argument, NULL, OPT_MAX_INPUT },
		{ "max-queue-size", required_argument, NULL, OPT_MAX_QUEUE },
		{ "request-timeout-us", required_argument, NULL, OPT_TIMEOUT },
		{ "drain-timeout", required_argument, NULL, OPT_DRAIN },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "grpc-port", required_argument, NULL, OPT_GRPC_PORT },
		{ "allow-grpc", required_argument, NULL, OPT_ALLOW_GRPC },
		{ "http-max-connections", required_argument, NULL, OPT_MAX_CONN },
		{ "http-max-connections-per-client", required_argument, NULL, OPT_MAX_PER_CLIENT },
		{ "http-idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
		{ "http-header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT },
		{ "http-body-timeout", required_argument, NULL, OPT_BODY_TIMEOUT },
		{ "prep-threads", required_argument, NULL, OPT_PREP_THREADS },
		{ "api-key", required_argument, NULL, OPT_API_KEY },
		{ "ssl-certfile", required_argument, NULL, OPT_SSL_CERT },
		{ "ssl-keyfile", required_argument, NULL, OPT_SSL_KEY },
		{ "model-control-mode", required_argument, NULL, OPT_CONTROL_MODE },
		{ "load-model", required_argument, NULL, OPT_LOAD_MODEL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	long long v;
	int c;

	memset(a, 0, sizeof(*a));
	serve_options_default(&a->opt);
	serve_grpc_options_default(&a->grpc);
	a->allow_grpc = true;
	a->drain_s = -1;
	a->load = calloc((size_t)argc, sizeof(*a->load));
	if (!a->load)
		return 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_REPO: a->repo = optarg; break;
		case OPT_MODEL:
			free(a->mj.model);
			a->mj.model = strdup(optarg);
			break;
		case OPT_NAME: a->name = optarg; break;
		case OPT_SEQS: case OPT_LEN: case OPT_BATCHED: case OPT_BLOCK: case OPT_TP:
			if (num(argv[optind - 2], optarg, 1, INT32_MAX, &v))
				return 2;
			*(c == OPT_SEQS ? &a->mj.max_num_seqs : c == OPT_LEN ? &a->mj.max_model_len
			  : c == OPT_BATCHED ? &a->mj.max_num_batched_tokens
			  : c == OPT_BLOCK ? &a->mj.block_size : &a->mj.tensor_parallel_size) = v;
			break;
		case OPT_TOKENIZER:
			free(a->mj.tokenizer);
			a->mj.tokenizer = strdup(optarg);
			break;
		case OPT_SEED:
			if (num("--seed", optarg, INT64_MIN, INT64_MAX, &v))
				return 2;
			a->mj.has_seed = true;
			a->mj.seed = v;
			break;
		case OPT_HOST: a->opt.host = optarg; break;
		case OPT_HTTP_PORT: case OPT_METRICS_PORT: case OPT_GRPC_PORT:
			if (num(c == OPT_HTTP_PORT ? "--http-port" : c == OPT_METRICS_PORT
				? "--metrics-port" : "--grpc-port", optarg, 0, 65535, &v))
				return 2;
			if (c == OPT_HTTP_PORT)
				a->opt.http_port = (unsigned)v;
			else if (c == OPT_METRICS_PORT)
				a->opt.metrics_port = (unsigned)v;
			else
				a->grpc.port = (unsigned)v;
			break;
		case OPT_ALLOW_METRICS:
			if (boolean("--allow-metrics", optarg, &a->opt.allow_metrics))
				return 2;
			break;
		case OPT_ALLOW_GRPC:
			if (boolean("--allow-grpc", optarg, &a->allow_grpc))
				return 2;
			break;
		case OPT_KA_TIME: case OPT_KA_TIMEOUT: case OPT_KA_PINGS: case OPT_KA_INTERVAL:
			if (num(argv[optind - 2], optarg, 0, INT32_MAX, &v))
				return 2;
			*(c == OPT_KA_TIME ? &a->grpc.keepalive_time_ms
			  : c == OPT_KA_TIMEOUT ? &a->grpc.keepalive_timeout_ms
			  : c == OPT_KA_PINGS ? &a->grpc.http2_max_pings_without_data
			  : &a->grpc.http2_min_recv_ping_interval_ms) = (int)v;
			break;
		case OPT_KA_PERMIT:
			if (boolean("--grpc-keepalive-permit-without-calls", optarg,
				    &a->grpc.keepalive_permit_without_calls))
				return 2;
			break;
		case OPT_THREADS:
			if (num("--http-threads", optarg, 1, 256, &v))
				return 2;
			a->opt.http_threads = (unsigned)v;
			break;
		case OPT_MAX_INPUT:
			if (num("--http-max-input-size", optarg, 1, (long long)1 << 40, &v))
				return 2;
			a->opt.max_input_size = (size_t)v;
			break;
		case OPT_MAX_QUEUE:
			if (num("--max-queue-size", optarg, 1, INT32_MAX, &v))
				return 2;
			a->opt.max_queue_size = (uint32_t)v;
			break;
		case OPT_TIMEOUT:
			if (num("--request-timeout-us", optarg, 0, INT64_MAX / 1000, &v))
				return 2;
			a->opt.request_timeout_us = (uint64_t)v;
			break;
		case OPT_DRAIN:
			if (num("--drain-timeout", optarg, 0, 1000000, &v))
				return 2;
			a->drain_s = (long)v;
			break;
		case OPT_MAX_CONN: case OPT_MAX_PER_CLIENT: case OPT_IDLE_TIMEOUT:
		case OPT_HEADER_TIMEOUT: case OPT_BODY_TIMEOUT: case OPT_PREP_THREADS:
			if (bound_flag(c, optarg, &a->opt))
				return 2;
			break;
		case OPT_API_KEY: a->opt.api_key = optarg; break;
		case OPT_SSL_CERT: a->opt.ssl_certfile = optarg; break;
		case OPT_SSL_KEY: a->opt.ssl_keyfile = optarg; break;
		case OPT_CHECK: a->check = true; break;
		case OPT_CONTROL_MODE:
			if (serve_control_mode_parse(optarg, &a->opt.control_mode)) {
				fprintf(stderr, "rbln-serve: --model-control-mode: '%s' is not "
					"'none' or 'explicit'\n", optarg);
				return 2;
			}
			break;
		case OPT_LOAD_MODEL: a->load[a->n_load++] = optarg; break;
		case 'h': usage(stdout); return -1;
		case 'V': printf("rbln-serve %s\n", RBLN_VERSION); return -1;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rbln-serve: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!a->opt.api_key)
		a->opt.api_key = getenv("RBLN_API_KEY");
	if (a->opt.api_key && !*a->opt.api_key) {
		fprintf(stderr, "rbln-serve: --api-key (or RBLN_API_KEY) is empty\n");
		return 2;
	}
	if (a->opt.max_connections < a->opt.http_threads) {
		fprintf(stderr, "rbln-serve: --http-max-connections %u is less than --http-threads "
			"%u (each thread needs at least one)\n", a->opt.max_connections,
			a->opt.http_threads);
		return 2;
	}
	if (a->n_load && a->opt.control_mode != SERVE_CONTROL_EXPLICIT) {
		fprintf(stderr, "rbln-serve: --load-model needs --model-control-mode explicit "
			"(in mode none every model is loaded)\n");
		return 2;
	}
	if (!a->opt.ssl_certfile != !a->opt.ssl_keyfile) {
		fprintf(stderr, "rbln-serve: --ssl-certfile and --ssl-keyfile go together\n");
		return 2;
	}
	if (!a->repo == !a->mj.model) {
		fprintf(stderr, "rbln-serve: give exactly one of --model-repository DIR and "
			"--model PATH\n");
		usage(stderr);
		return 2;
	}
	if (a->repo && (a->name || a->mj.max_num_seqs || a->mj.max_model_len ||
			a->mj.max_num_batched_tokens || a->mj.block_size ||
			a->mj.tensor_parallel_size || a->mj.tokenizer || a->mj.has_seed)) {
		fprintf(stderr, "rbln-serve: engine arguments go into each model's model.json "
			"with --model-repository (the flags are for --model)\n");
		return 2;
	}
	return 0;
}

/* The model table Triton prints at startup; `check` shows models read and checked. */
static void print_table(const struct serve_model *m, size_t n, bool check)
{
	size_t wn = 5, wv = 7, ws = 7, i;
	char line[512];

	for (i = 0; i < n; i++) {
		const char *st = serve_model_state_name(serve_model_state(&m[i]));
		size_t l = strlen(st) + (serve_model_state(&m[i]) == SERVE_MODEL_UNAVAILABLE
					 ? strlen(m[i].reason) + 2 : 0);

		wn = strlen(m[i].name) > wn ? strlen(m[i].name) : wn;
		wv = strlen(m[i].version) > wv ? strlen(m[i].version) : wv;
		ws = l > ws ? l : ws;
	}
	if (ws > 200)
		ws = 200;
	memset(line, '-', sizeof(line));
	printf("+%.*s+%.*s+%.*s+\n", (int)wn + 2, line, (int)wv + 2, line, (int)ws + 2, line);
	printf("| %-*s | %-*s | %-*s |\n", (int)wn, "Model", (int)wv, "Version", (int)ws, "Status");
	printf("+%.*s+%.*s+%.*s+\n", (int)wn + 2, line, (int)wv + 2, line, (int)ws + 2, line);
	for (i = 0; i < n; i++) {
		enum serve_model_state st = serve_model_state(&m[i]);
		char status[256];

		if (st == SERVE_MODEL_UNAVAILABLE)
			snprintf(status, sizeof(status), "%s: %s", serve_model_state_name(st),
				 m[i].reason);
		else if (check)
			snprintf(status, sizeof(status), "CHECKED");
		else
			snprintf(status, sizeof(status), "%s", serve_model_state_name(st));
		printf("| %-*s | %-*s | %-*.*s |\n", (int)wn, m[i].name, (int)wv, m[i].version,
		       (int)ws, (int)ws, status);
	}
	printf("+%.*s+%.*s+%.*s+\n", (int)wn + 2, line, (int)wv + 2, line, (int)ws + 2, line);
	fflush(stdout);
}

/* Waits for SIGTERM/SIGINT, then drains; a second signal cancels what runs. */
static void serve_until_signal(struct serve_server *s, struct serve_grpc *g, const sigset_t *set,
			       long drain_s)
{
	struct timespec zero = { 0, 0 };
	time_t give_up;
	bool cancelled = false;
	size_t left;
	int sig;

	sigwait(set, &sig);
	/* Stop accepting before saying so: a client that reads the line may test it. */
	serve_grpc_shutdown(g);
	left = serve_server_drain(s, 0);
	printf("rbln-serve: %s: no new requests; waiting for %zu in flight\n",
	       sig == SIGTERM ? "SIGTERM" : "SIGINT", left);
	fflush(stdout);
	give_up = drain_s >= 0 ? time(NULL) + drain_s : 0;
	while (serve_server_drain(s, 200)) {
		bool again = sigtimedwait(set, NULL, &zero) > 0;

		if (!cancelled && (again || (give_up && time(NULL) >= give_up))) {
			printf("rbln-serve: cancelling the requests still running\n");
			fflush(stdout);
			serve_server_cancel_all(s);
			cancelled = true;
		}
	}
}

/* Mode none loads every model; explicit, those --load-model names. */
static bool loaded_at_start(const struct args *a, const char *name)
{
	size_t i;

	if (a->opt.control_mode == SERVE_CONTROL_NONE)
		return true;
	for (i = 0; i < a->n_load; i++)
		if (!strcmp(a->load[i], "*") || !strcmp(a->load[i], name))
			return true;
	return false;
}

/* Each --load-model names a model of the repository (or is '*'). */
static int check_load_models(const struct args *a, const struct serve_repository *repo)
{
	size_t i, k;

	for (i = 0; i < a->n_load; i++) {
		if (!strcmp(a->load[i], "*") && a->n_load > 1) {
			/* tritonserver's rule: '*' stands alone */
			fprintf(stderr, "rbln-serve: --load-model '*' loads every model and must be "
				"the only --load-model\n");
			return 2;
		}
		for (k = 0; k < repo->n && strcmp(a->load[i], "*") &&
			    strcmp(a->load[i], repo->models[k].name); k++)
			;
		if (k == repo->n) {
			fprintf(stderr, "rbln-serve: --load-model %s: no model of that name in the "
				"repository\n", a->load[i]);
			return 2;
		}
	}
	return 0;
}

static void free_models(struct serve_model *models, size_t n)
{
	size_t i;

	for (i = 0; models && i < n; i++)
		serve_model_free(&models[i]);
	free(models);
}

int main(int argc, char **argv)
{
	const struct rbln_serving_ops *ops = &rbln_serving_bridge_ops;
	struct serve_repository repo = { 0 };
	struct serve_model *models = NULL;
	struct serve_server srv;
	struct serve_grpc *grpc = NULL;
	struct rbln_error err = { 0 };
	struct args a;
	sigset_t set;
	size_t i;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc) {
		serve_model_json_free(&a.mj);
		free(a.load);
		return rc < 0 ? 0 : rc;	/* -1: --help or --version */
	}
	if (a.repo) {
		rc = serve_repository_load(a.repo, &repo, &err);
	} else {
		char *copy = strdup(a.mj.model);
		const char *name = a.name ? a.name : basename(copy);

		a.mj.file = strdup("command line");
		rc = serve_repository_single(name, &a.mj, &repo, &err);
		free(copy);
	}
	serve_model_json_free(&a.mj);
	if (rc) {
		fprintf(stderr, "rbln-serve: %s\n", err.msg);
		free(a.load);
		return 1;
	}
	rc = check_load_models(&a, &repo);
	if (rc)
		goto out;
	models = calloc(repo.n, sizeof(*models));
	rc = models ? 0 : 1;
	for (i = 0; !rc && i < repo.n; i++) {
		if (serve_model_prepare(&models[i], &repo.models[i], &err)) {
			fprintf(stderr, "rbln-serve: model '%s': %s\n", repo.models[i].name,
				err.msg);
			rc = 1;
		}
	}
	if (rc)
		goto out;
	if (a.check) {
		print_table(models, repo.n, true);
		printf("rbln-serve: %zu model%s checked (--check: not started)\n", repo.n,
		       repo.n == 1 ? "" : "s");
		goto out;
	}
	/* Every thread started from here on inherits the blocked signals. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < repo.n; i++) {
		if (!loaded_at_start(&a, models[i].name)) {
			serve_model_set_unloaded(&models[i], ops);
			continue;
		}
		if (serve_model_start(&models[i], ops, a.opt.max_queue_size, &err)) {
			print_table(models, repo.n, false);
			fprintf(stderr, "rbln-serve: model '%s' failed to load: %s\n",
				models[i].name, err.msg);
			rc = 1;
			goto out;
		}
	}
	print_table(models, repo.n, false);
	if (serve_server_start(&srv, &a.opt, models, repo.n, &err)) {
		fprintf(stderr, "rbln-serve: %s\n", err.msg);
		rc = 1;
		goto out;
	}
	if (a.allow_grpc && serve_grpc_start(&srv, &a.grpc, &grpc, &err)) {
		fprintf(stderr, "rbln-serve: %s\n", err.msg);
		serve_server_stop(&srv);
		rc = 1;
		goto out;
	}
	/* The tutorial's startup lines, with the ports as bound. */
	if (grpc)
		printf("Started GRPCInferenceService at %s:%u\n", a.opt.host,
		       serve_grpc_port(grpc));
	if (a.opt.ssl_certfile)
		printf("rbln-serve: HTTPS (TLS) on the HTTP port\n");
	if (!a.opt.api_key && strcmp(a.opt.host, "127.0.0.1") && strcmp(a.opt.host, "::1") &&
	    strcmp(a.opt.host, "localhost"))
		printf("rbln-serve: no --api-key, and %s is reachable from other machines: anyone "
		       "who can reach it can use the API\n", a.opt.host);
	printf("Started HTTPService at %s:%u\n", a.opt.host, srv.http_port);
	if (a.opt.allow_metrics)
		printf("Started Metrics Service at %s:%u\n", a.opt.host, srv.metrics_port);
	fflush(stdout);
	serve_until_signal(&srv, grpc, &set, a.drain_s);
	/* the last responses of finished requests still go out */
	serve_grpc_stop(grpc, 5000);
	serve_server_stop(&srv);
	printf("rbln-serve: stopped\n");
out:
	free_models(models, repo.n);
	serve_repository_free(&repo);
	free(a.load);
	return rc;
}
