// SPDX-License-Identifier: MIT
/*
 * rbln-bench: prefill and decode throughput of the engine.
 *
 * For each model and tensor-parallel degree: compile (batch 8, decoder
 * buckets 8/4/1), load, then measure
 *   - prefill: one prompt of --prompt-len tokens until its first token,
 *   - decode: B sequences (B = 1, 4, 8) decoding together in bucket B,
 *     tokens per second over --decode-steps steps after their prefill.
 * The default models are tiny-llama3 (the reference checkpoint) and a
 * Llama-3.2-1B-shaped model with random bf16 weights (--dummy-weights).
 * --quantize none,w8a16 measures each model both ways in the same run
 * (rows "NAME w8a16": int8 weights, rbln-compile --quantize), and
 * --matmul-precision float32,bf16 likewise (rows "NAME bf16a": the
 * matrix products may round their activations to bfloat16, rbln-compile
 * --matmul-precision bf16).
 *
 * A peer is compared only when it runs in the same run: with
 * --peer-llama-bench PATH --peer-model GGUF (and --peer-batched-bench PATH
 * for B > 1) rbln-bench runs llama.cpp's benchmarks after its own rows and
 * prints their figures beside them (bench_peer.c); without, no peer figure.
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cli/compile_cli.h"
#include "bench_peer.h"
#include "cli/sample_cli.h"
#include "config/compiled_config.h"
#include "rbln_runtime.h"
#include "util/text.h"

#define MAX_MODELS 8
#define MAX_TPS 8
#define MAX_NAMES 2	/* of a --quantize or --matmul-precision list */
#define MAX_PRECS MAX_NAMES
#define N_BATCHES 3
/* Width of the first column: a model's name, its quantisation and precision. */
#define NAME_W 32
/* The row name's suffix of bf16 activations (--matmul-precision bf16). */
#define BF16A_SUFFIX " bf16a"

static const uint32_t batches[N_BATCHES] = { 1, 4, 8 };

struct bench_model {
	char *name;		/* strndup()ed from the command line */
	const char *dir;	/* Hugging Face directory or config-only directory */
	bool dummy;
};

/* An enum's values as a list spelled them (parse_names()), in its order. */
struct name_list {
	unsigned int v[MAX_NAMES];
	size_t n;
};

struct options {
	struct bench_model models[MAX_MODELS];
	size_t n_models;
	uint32_t tps[MAX_TPS];
	size_t n_tps;
	struct name_list quants;	/* enum rbln_quantize */
	struct name_list precs;		/* enum rbln_matmul_precision */
	uint32_t prompt_len;
	uint32_t decode_steps;
	uint32_t chunk;
	uint32_t repeat;	/* measurements per number; the best is shown */
	const char *work_dir;	/* keeps compiled models for the next run */
	struct bench_peer peer;	/* llama_bench NULL: no peer */
	const char *peer_vs;	/* our model the peer's GGUF has the shape of */
};

struct row {
	double prefill;
	double decode[N_BATCHES];
	double load_s;
	double others;		/* CPU share other processes took during the row */
};

/* CPU time so far, in clock ticks: the whole host's busy time and ours. */
static void cpu_ticks(unsigned long long *host_busy, unsigned long long *ours)
{
	unsigned long long v[8] = { 0 }, ut = 0, st = 0;
	char buf[1024], *p;
	FILE *f = fopen("/proc/stat", "r");
	int i;

	*host_busy = *ours = 0;
	if (f) {
		if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5], &v[6], &v[7]) == 8)
			for (i = 0; i < 8; i++)
				*host_busy += i == 3 || i == 4 ? 0 : v[i];	/* not idle, iowait */
		fclose(f);
	}
	f = fopen("/proc/self/stat", "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
		    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			   &st) == 2)
			*ours = ut + st;
		fclose(f);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rbln-bench [options]\n"
		"\n"
		"  --model NAME=DIR        a Hugging Face checkpoint (repeatable; default\n"
		"                          tiny-llama3 from RBLN_MODELS_DIR and the 1B shape)\n"
		"  --dummy-model NAME=DIR  a config.json directory, random weights\n"
		"  --tp LIST               tensor-parallel degrees (default 1,8)\n"
		"  --quantize LIST         none and/or w8a16 (int8 weights), each model\n"
		"                          measured each way (default none)\n"
		"  --matmul-precision LIST float32 and/or bf16 (matrix products may round\n"
		"                          activations to bfloat16: rows NAME bf16a), each\n"
		"                          model measured each way (default float32)\n"
		"  --prompt-len N          prefill prompt length (default 512)\n"
		"  --decode-steps N        measured decode steps per batch (default 32)\n"
		"  --prefill-chunk-size N  compile with this chunk (default 512, llama-bench's\n"
		"                          micro-batch)\n"
		"  --repeat N              measure each number N times, show the best (a\n"
		"                          busy host only ever slows a run down)\n"
		"  --work-dir DIR          keep compiled models there and reuse them\n"
		"  --peer-llama-bench PATH run llama.cpp's llama-bench after our rows, in\n"
		"                          the same run (prefill, decode B=1); needs\n"
		"  --peer-model GGUF       the peer's model, of the same shape as ours\n"
		"  --peer-batched-bench PATH  llama-batched-bench too (decode B=4, 8)\n"
		"  --peer-threads N        llama.cpp threads (default: online CPUs)\n"
		"  --peer-vs NAME          our model to compare with (default the 1B shape)\n"
		"  -h, --help              this help\n"
		"      --version           the version\n");
}

static int add_model(struct options *o, const char *arg, bool dummy)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1] || o->n_models == MAX_MODELS)
		return -EINVAL;
	o->models[o->n_models].name = strndup(arg, (size_t)(eq - arg));
	o->models[o->n_models].dir = eq + 1;
	o->models[o->n_models].dummy = dummy;
	o->n_models++;
	return 0;
}

/*
 * --FLAG "none,w8a16", "float32,bf16": spellings of @names (an enum's, by
 * value: util/text.h), each once; their values into @l.  The error is
 * printed.
 */
static int parse_names(const char *flag, const char *arg, const char *const names[],
		       struct name_list *l)
{
	char *list = strdup(arg), *save = NULL, *tok, choices[64];
	size_t i;
	int v, rc = list ? 0 : -ENOMEM;

	l->n = 0;
	for (tok = list ? strtok_r(list, ",", &save) : NULL; tok && !rc;
	     tok = strtok_r(NULL, ",", &save)) {
		v = rbln_name_index(names, tok);
		for (i = 0; v >= 0 && i < l->n && l->v[i] != (unsigned int)v; i++)
			;
		if (v < 0 || i < l->n || l->n == MAX_NAMES)
			rc = -EINVAL;
		else
			l->v[l->n++] = (unsigned int)v;
	}
	free(list);
	if (!rc && l->n)
		return 0;
	rbln_name_choices(names, " and ", choices, sizeof(choices));
	fprintf(stderr, "rbln-bench: --%s '%s': a list of %s, each once\n", flag, arg, choices);
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "dummy-model", required_argument, NULL, 'd' },
		{ "tp", required_argument, NULL, 't' },
		{ "quantize", required_argument, NULL, 'q' },
		{ "matmul-precision", required_argument, NULL, 'M' },
		{ "prompt-len", required_argument, NULL, 'p' },
		{ "decode-steps", required_argument, NULL, 's' },
		{ "prefill-chunk-size", required_argument, NULL, 'c' },
		{ "work-dir", required_argument, NULL, 'w' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "peer-llama-bench", required_argument, NULL, 'L' },
		{ "peer-batched-bench", required_argument, NULL, 'B' },
		{ "peer-model", required_argument, NULL, 'G' },
		{ "peer-threads", required_argument, NULL, 'T' },
		{ "peer-vs", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct rbln_error err = { 0 };
	unsigned long long v;
	struct rbln_compile_options tmp = { 0 };
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
		case 'd':
			if (add_model(o, optarg, c == 'd')) {
				fprintf(stderr, "rbln-bench: --%s wants NAME=DIR (at most %d)\n",
					c == 'd' ? "dummy-model" : "model", MAX_MODELS);
				return 2;
			}
			break;
		case 't':
			if (rbln_compile_parse_batch_sizes(optarg, &tmp, &err)) {
				fprintf(stderr, "rbln-bench: --tp '%s': a list such as 1,8\n", optarg);
				return 2;
			}
			memcpy(o->tps, tmp.decoder_batch_sizes, sizeof(o->tps));
			o->n_tps = tmp.n_decoder_batch_sizes < MAX_TPS ? tmp.n_decoder_batch_sizes :
				   MAX_TPS;
			break;
		case 'q':
		case 'M':
			if (parse_names(c == 'q' ? "quantize" : "matmul-precision", optarg,
					c == 'q' ? rbln_quantize_names : rbln_matmul_precision_names,
					c == 'q' ? &o->quants : &o->precs))
				return 2;
			break;
		case 'p':
		case 's':
		case 'c':
			if (rbln_cli_parse_u64(c == 'p' ? "prompt-len" : c == 's' ? "decode-steps" :
					       "prefill-chunk-size", optarg, 1, 1u << 20, &v, &err)) {
				fprintf(stderr, "rbln-bench: %s\n", err.msg);
				return 2;
			}
			*(c == 'p' ? &o->prompt_len : c == 's' ? &o->decode_steps : &o->chunk) =
				(uint32_t)v;
			break;
		case 'w':
			o->work_dir = optarg;
			break;
		case 'r':
			if (rbln_cli_parse_u64("repeat", optarg, 1, 100, &v, &err)) {
				fprintf(stderr, "rbln-bench: %s\n", err.msg);
				return 2;
			}
			o->repeat = (uint32_t)v;
			break;
		case 'L':
			o->peer.llama_bench = optarg;
			break;
		case 'B':
			o->peer.batched_bench = optarg;
			break;
		case 'G':
			o->peer.gguf = optarg;
			break;
		case 'T':
			if (rbln_cli_parse_u64("peer-threads", optarg, 1, 1024, &v, &err)) {
				fprintf(stderr, "rbln-bench: %s\n", err.msg);
				return 2;
			}
			o->peer.threads = (uint32_t)v;
			break;
		case 'P':
			o->peer_vs = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("rbln-bench %s\n", RBLN_VERSION);
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rbln-bench: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!o->peer.llama_bench != !o->peer.gguf ||
	    (o->peer.batched_bench && !o->peer.llama_bench)) {
		fprintf(stderr, "rbln-bench: a peer needs both --peer-llama-bench and "
			"--peer-model (--peer-batched-bench only with them)\n");
		return 2;
	}
	if (o->peer.llama_bench && bench_peer_check(&o->peer, &err)) {
		fprintf(stderr, "rbln-bench: %s\n", err.msg);
		return 2;
	}
	return 0;
}

/* Deterministic token ids spread over the vocabulary. */
static void fill_ids(int32_t *ids, size_t n, uint32_t vocab, uint32_t salt)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (salt + 1);
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ids[i] = (int32_t)(x % vocab);
	}
}

static int step_until(struct rbln_runtime *e, struct rbln_seq **s, size_t n,
		      struct rbln_error *err)
{
	size_t i, ready;
	int rc;

	/* Until every sequence has its first token (its prompt is computed). */
	for (;;) {
		for (i = 0, ready = 0; i < n; i++) {
			size_t k;

			rbln_seq_output(s[i], &k);
			ready += k > 0;
		}
		if (ready == n)
			return 0;
		rc = rbln_runtime_step(e, NULL, err);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return rbln_error_set(err, -EIO, "no progress");
	}
}

static int measure(struct rbln_runtime *e, const struct options *o, struct row *row,
		   struct rbln_error *err)
{
	const struct rbln_compiled_config *cc;
	struct rbln_runtime_info info;
	struct rbln_sampling_params sp;
	struct rbln_seq *s[8];
	int32_t *ids;
	uint32_t b, i, k;
	double t0;
	int rc = 0;

	rbln_runtime_get_info(e, &info);
	cc = info.config;
	/* The prompt, and the 64-token prompts of the decode measurement. */
	ids = malloc(sizeof(int32_t) * (o->prompt_len > 64 ? o->prompt_len : 64));
	if (!ids)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rbln_sampling_params_init(&sp);
	sp.temperature = 0.0;
	sp.ignore_eos = true;
	/* Prefill: a warm-up of one chunk, then the measured prompt. */
	for (k = 0; k < 1 + o->repeat && !rc; k++) {
		uint32_t n = k ? o->prompt_len : 16;
		double tps;

		sp.max_tokens = 1;
		fill_ids(ids, n, (uint32_t)cc->model.vocab_size, k);
		rc = rbln_runtime_add(e, ids, n, &sp, 0, &s[0], err);
		if (rc)
			break;
		t0 = now_s();
		rc = step_until(e, s, 1, err);
		tps = n / (now_s() - t0);
		if (k && tps > row->prefill)
			row->prefill = tps;
		rbln_seq_release(s[0]);
	}
	/* Decode in each bucket: B sequences of 64-token prompts, then timed steps. */
	for (b = 0; b < N_BATCHES * o->repeat && !rc; b++) {
		uint32_t nb = batches[b % N_BATCHES];
		double tps;

		sp.max_tokens = o->decode_steps + 2;
		for (i = 0; i < nb && !rc; i++) {
			fill_ids(ids, 64, (uint32_t)cc->model.vocab_size, 100 + i);
			rc = rbln_runtime_add(e, ids, 64, &sp, 0, &s[i], err);
		}
		if (!rc)
			rc = step_until(e, s, nb, err);
		t0 = now_s();
		for (k = 0; k < o->decode_steps && !rc; k++) {
			rc = rbln_runtime_step(e, NULL, err);
			rc = rc < 0 ? rc : 0;
		}
		tps = (double)nb * o->decode_steps / (now_s() - t0);
		if (!rc && tps > row->decode[b % N_BATCHES])
			row->decode[b % N_BATCHES] = tps;
		for (i = 0; i < nb; i++)
			rbln_seq_release(s[i]);
	}
	free(ids);
	return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int bench_one(const struct options *o, const struct bench_model *m, uint32_t tp,
		     enum rbln_quantize q, enum rbln_matmul_precision p, struct row *row,
		     struct rbln_error *err)
{
	struct rbln_compile_options co = {
		.tensor_parallel_size = tp, .batch_size = 8,
		.decoder_batch_sizes = { 8, 4, 1 }, .n_decoder_batch_sizes = 3,
		.max_seq_len = 1024, .prefill_chunk_size = o->chunk,
		.dummy_weights = m->dummy, .quantize = q, .matmul_precision = p,
	};
	const char *qs = q == RBLN_QUANT_NONE ? "" : "-w8a16";
	const char *ps = p == RBLN_MATMUL_F32 ? "" : "-bf16a";
	struct rbln_runtime *e = NULL;
	char *dir = NULL, *cfg = NULL;
	bool temporary = !o->work_dir;
	double t0;
	int rc;

	if (o->prompt_len + o->decode_steps + 8 > co.max_seq_len)
		co.max_seq_len = (o->prompt_len + o->decode_steps + 8 + 63) / 64 * 64;
	if (o->work_dir) {
		mkdir(o->work_dir, 0755);
		if (asprintf(&dir, "%s/%s-tp%u-chunk%u%s%s", o->work_dir, m->name, tp, o->chunk,
			     qs, ps) < 0)
			return rbln_error_set(err, -ENOMEM, "out of memory");
	} else {
		const char *tmp = getenv("TMPDIR");

		if (asprintf(&dir, "%s/rbln-bench-XXXXXX", tmp ? tmp : "/tmp") < 0)
			return rbln_error_set(err, -ENOMEM, "out of memory");
		if (!mkdtemp(dir)) {
			rc = rbln_error_set(err, -errno, "%s: %s", dir, strerror(errno));
			free(dir);
			return rc;
		}
	}
	if (asprintf(&cfg, "%s/rbln_config.json", dir) < 0)
		cfg = NULL;
	rc = 0;
	if (!cfg || access(cfg, F_OK)) {
		fprintf(stderr, "rbln-bench: compiling %s at TP %u%s%s into %s\n", m->name, tp,
			q == RBLN_QUANT_NONE ? "" : ", --quantize w8a16",
			p == RBLN_MATMUL_F32 ? "" : ", --matmul-precision bf16", dir);
		rc = rbln_compile(m->dir, dir, &co, err);
	}
	if (!rc) {
		t0 = now_s();
		rc = rbln_runtime_open(dir, NULL, &e, err);
		row->load_s = now_s() - t0;
	}
	if (!rc) {
		unsigned long long h0, o0, h1, o1;
		double t1;

		fprintf(stderr, "rbln-bench: measuring %s at TP %u\n", m->name, tp);
		cpu_ticks(&h0, &o0);
		t1 = now_s();
		rc = measure(e, o, row, err);
		cpu_ticks(&h1, &o1);
		/* Others' busy time over the capacity of the run: 0 is a quiet host. */
		row->others = (double)((h1 - h0) - (o1 - o0 < h1 - h0 ? o1 - o0 : h1 - h0)) /
			      ((now_s() - t1) * sysconf(_SC_CLK_TCK) *
			       sysconf(_SC_NPROCESSORS_ONLN));
	}
	rbln_runtime_close(e);
	if (temporary)
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(cfg);
	free(dir);
	return rc;
}

static void print_machine(void)
{
	char line[512], cpu[256] = "unknown CPU", date[64];
	unsigned long long mem_kb = 0;
	struct utsname u;
	time_t t = time(NULL);
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && p) {
			snprintf(cpu, sizeof(cpu), "%s", p + 2);
			cpu[strcspn(cpu, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	f = fopen("/proc/meminfo", "r");
	if (f) {
		if (fscanf(f, "MemTotal: %llu kB", &mem_kb) != 1)
			mem_kb = 0;
		fclose(f);
	}
	uname(&u);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&t));
	printf("date:    %s\n", date);
	printf("machine: %s, %ld online CPUs, %.1f GiB, Linux %s\n", cpu,
	       sysconf(_SC_NPROCESSORS_ONLN), mem_kb / 1048576.0, u.release);
	f = fopen("/proc/loadavg", "r");
	if (f && fgets(line, sizeof(line), f))
		printf("load:    %s", line);	/* other work on the host skews the numbers */
	if (f)
		fclose(f);
	printf("devices: RBLN_BACKEND=%s RBLN_EMUL_ENGINES=%s\n",
	       getenv("RBLN_BACKEND") ? getenv("RBLN_BACKEND") : "(auto)",
	       getenv("RBLN_EMUL_ENGINES") ? getenv("RBLN_EMUL_ENGINES") :
	       "(cores / TP, at least 1)");
}

/*
 * Runs the peer now, in the same run as our rows, and prints its row and
 * the ratio of each of our rows of the compared model to it: "ours" for
 * float32 activations, "ours bf16a" for bf16 ones.
 */
static void print_peer(struct options *o, const struct row *vs, const uint32_t *tps,
		       const enum rbln_matmul_precision *precs, size_t n)
{
	struct bench_peer_row pr;
	struct rbln_error err = { 0 };
	size_t i, b;

	o->peer.prompt_len = o->prompt_len;
	o->peer.decode_steps = o->decode_steps;
	o->peer.repeat = o->repeat < 3 ? 3 : o->repeat;
	if (!o->peer.threads)
		o->peer.threads = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	if (bench_peer_run(&o->peer, &pr, &err)) {
		printf("\npeer: error: %s\n", err.msg);
		return;
	}
	printf("\npeer, same run: llama.cpp (%s, %s, %u threads), model %s; best of %u\n",
	       o->peer.llama_bench, o->peer.batched_bench ? o->peer.batched_bench :
	       "no batched-bench", o->peer.threads, o->peer.gguf, o->peer.repeat);
	printf("%-*s %3s %14.1f", NAME_W, "llama.cpp", "", pr.prefill);
	for (b = 0; b < N_BATCHES; b++)
		if (pr.decode[b] > 0)
			printf(" %12.1f", pr.decode[b]);
		else
			printf(" %12s", "-");
	printf("\n");
	for (i = 0; i < n; i++) {
		printf("%-*s %3u %13.2fx", NAME_W, precs[i] == RBLN_MATMUL_BF16 ?
		       "ours" BF16A_SUFFIX " / llama.cpp" : "ours / llama.cpp", tps[i],
		       vs[i].prefill / pr.prefill);
		for (b = 0; b < N_BATCHES; b++)
			if (pr.decode[b] > 0)
				printf(" %11.2fx", vs[i].decode[b] / pr.decode[b]);
			else
				printf(" %12s", "-");
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	/*
	 * The prompt is one chunk of 512 by default: llama-bench's default
	 * micro-batch, so that a peer measured beside us prefills the same
	 * way. (The engine compiles 128 by default, a serving choice: a
	 * shorter chunk keeps the decodes mixed with it moving.)
	 */
	struct options o = { .prompt_len = 512, .decode_steps = 32, .chunk = 512, .repeat = 1 };
	struct rbln_error err = { 0 };
	static char tiny[4096];
	struct row vs_rows[MAX_TPS * MAX_PRECS];
	uint32_t vs_tps[MAX_TPS * MAX_PRECS];
	enum rbln_matmul_precision vs_precs[MAX_TPS * MAX_PRECS];
	size_t n_vs = 0;
	char line[256];
	size_t m, t, b;
	FILE *f;
	int rc;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	if (!o.n_models) {
		const char *models = getenv("RBLN_MODELS_DIR");

		snprintf(tiny, sizeof(tiny), "%s/tiny-llama3",
			 models && *models ? models : RBLN_DEFAULT_MODELS_DIR);
		o.models[0] = (struct bench_model){ "tiny-llama3", tiny, false };
		o.models[1] = (struct bench_model){ "llama-3.2-1b-shape", RBLN_BENCH_1B_DIR, true };
		o.n_models = 2;
	}
	if (!o.quants.n) {
		o.quants.v[0] = RBLN_QUANT_NONE;
		o.quants.n = 1;
	}
	if (!o.precs.n) {
		o.precs.v[0] = RBLN_MATMUL_F32;
		o.precs.n = 1;
	}
	if (!o.n_tps) {
		o.tps[0] = 1;
		o.tps[1] = 8;
		o.n_tps = 2;
	}
	print_machine();
	printf("prefill: one %u-token prompt (chunks of %u); decode: B sequences of 64-token "
	       "prompts, %u steps; best of %u\n\n", o.prompt_len, o.chunk, o.decode_steps,
	       o.repeat);
	printf("%-*s %3s %14s %12s %12s %12s %8s %8s\n", NAME_W, "model", "TP", "prefill tok/s",
	       "decode B=1", "decode B=4", "decode B=8", "load s", "others");
	fflush(stdout);
	for (m = 0; m < o.n_models; m++) {
		/* Per TP degree: each quantisation, each precision. */
		for (t = 0; t < o.n_tps * o.quants.n * o.precs.n; t++) {
			enum rbln_matmul_precision p = o.precs.v[t % o.precs.n];
			enum rbln_quantize q = o.quants.v[t / o.precs.n % o.quants.n];
			uint32_t tp = o.tps[t / o.precs.n / o.quants.n];
			struct row row = { 0 };
			char name[128];

			snprintf(name, sizeof(name), "%s%s%s", o.models[m].name,
				 q == RBLN_QUANT_NONE ? "" : " w8a16",
				 p == RBLN_MATMUL_F32 ? "" : BF16A_SUFFIX);
			rc = bench_one(&o, &o.models[m], tp, q, p, &row, &err);
			if (rc) {
				printf("%-*s %3u  error: %s\n", NAME_W, name, tp, err.msg);
				continue;
			}
			printf("%-*s %3u %14.1f", NAME_W, name, tp, row.prefill);
			for (b = 0; b < N_BATCHES; b++)
				printf(" %12.1f", row.decode[b]);
			printf(" %8.1f %7.0f%%\n", row.load_s, 100 * row.others);
			fflush(stdout);
			/*
			 * The peer runs the float weights: compared with our rows of
			 * them, float32 and bf16 activations (llama.cpp's bf16 path
			 * rounds its activations to bf16 too).
			 */
			if (!strcmp(o.models[m].name, o.peer_vs ? o.peer_vs :
				    "llama-3.2-1b-shape") && q == RBLN_QUANT_NONE &&
			    n_vs < MAX_TPS * MAX_PRECS) {
				vs_rows[n_vs] = row;
				vs_precs[n_vs] = p;
				vs_tps[n_vs++] = tp;
			}
		}
	}
	if (o.peer.llama_bench)
		print_peer(&o, vs_rows, vs_tps, vs_precs, n_vs);
	f = fopen("/proc/loadavg", "r");
	if (f && fgets(line, sizeof(line), f))
		printf("\nload at the end: %s", line);
	if (f)
		fclose(f);
	printf("others: the CPU share other processes used while the row was measured\n");
	for (m = 0; m < o.n_models; m++)
		free(o.models[m].name);
	return 0;
}
