// SPDX-License-Identifier: MIT
/*
 * rbln-kbench: the speed of the compute kernels beside the machine's
 * limits measured in the same run. Prints a table; judges nothing (a
 * benchmark, not a test: numbers depend on the machine and its load).
 *
 *   rbln-kbench [-e engines] [-d devices for the all-reduce] [-t threads]
 *               [-m rows,rows,...] [-s KxN,KxN,...]
 *               [-k matmul,attention,allreduce,step] [-v]
 *
 * Memory bandwidth, float32 FMA peak and the bfloat16 peaks (vdpbf16ps,
 * AMX tiles; where the CPU has them) with 1 and 2 threads (more with -t), then
 * MATMUL M=1, 8 (a decode batch) and 512 (or the rows -m lists: up to
 * 8 counts, to find where one variant overtakes another) on 2048x8192 and
 * 8192x2048 bfloat16 weights (or the K x N shapes -s lists, e.g. a
 * model's own products; M=1 also int8), decode ATTENTION (4096-token
 * contexts, 8 KV heads of 64, 32 query heads, partitions of 512; on the
 * engine's head-major cache with batch 8 and 1, and on the token-major
 * cache of ISA 1.1 with batch 8 for comparison), ALLREDUCE of 8 KiB and
 * 1 MiB over 8 devices; then the limits again (the read sweep's best
 * combination for each thread count only), each kernel held to the
 * best figure of the two passes (and of the read bandwidth sampled
 * between each bandwidth-bound kernel's runs, over the memory it reads)
 * and of every thread count up to its
 * engines: bandwidth-bound kernels to the read bandwidth, MATMUL of
 * several rows to the machine's best arithmetic on bf16 weights (AMX
 * tiles, bf16 dot products or float32 FMA, whichever is highest: the
 * bound of any program) and, beside it, to the float32 FMA peak (the
 * bound of kernels that widen their weights to float32). The kernels run on one emulated device with -e engines
 * (2 by default); RBLN_CPU_VARIANT picks the CPU variant. -k runs only
 * the kernel groups it lists (the limits are always measured): a sweep
 * over engine counts of one group then takes seconds, not minutes. -k
 * step (never by default: 5 GB of weights) runs a 1B-shape decode step's
 * 65 GEMVs in the spaced and the packed16 panels, alternating, and prints
 * both rates and their ratio: the figure rbln-compile's --weight-layout
 * auto rests on. -v also prints every combination of the first read
 * sweep at the kernels' thread count: what a kernel's own pattern (a
 * GEMV reads four streams a thread, 2 KiB prefetched on Intel) can read.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kbench.h"

static void print_machine(void)
{
	char line[256], model[256] = "unknown";
	FILE *f = fopen("/proc/cpuinfo", "r");
	double load[3] = { 0 };

	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon) {
			snprintf(model, sizeof(model), "%s", colon + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
	getloadavg(load, 3);
	printf("machine: %s, %ld online cores, load average %.2f %.2f %.2f\n",
	       model, sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1],
	       load[2]);
}

static void row(const struct kb_result *r)
{
	char lim[32] = "-", ratio[32] = "-", bl[32] = "-", bratio[32] = "-";

	if (r->limit > 0) {
		snprintf(lim, sizeof(lim), "%.1f", r->limit);
		snprintf(ratio, sizeof(ratio), "%.0f%%",
			 100.0 * r->value / r->limit);
	}
	if (r->f32_limit > 0) {
		snprintf(bl, sizeof(bl), "%.1f", r->f32_limit);
		snprintf(bratio, sizeof(bratio), "%.0f%%",
			 100.0 * r->value / r->f32_limit);
	}
	printf("%-76s %9.1f %-8s %9s %6s %9s %6s\n", r->name, r->value,
	       r->unit, lim, ratio, bl, bratio);
}

/* A context of @devices emulated devices with @engines engines each. */
static npu_context *open_ctx(unsigned int devices, unsigned int engines,
			     npu_device **dev)
{
	struct npu_context_options o = {
		.struct_size = sizeof(o), .backend = NPU_BACKEND_EMUL,
		.emul_devices = devices, .emul_engines = engines,
		.devices = "",
	};
	char spec[32];
	npu_context *ctx;

	snprintf(spec, sizeof(spec), "0-%u", devices - 1);
	o.devices = spec;
	kb_check(npu_context_create(&o, &ctx), "npu_context_create");
	for (unsigned int i = 0; i < devices; i++)
		kb_check(npu_device_open(ctx, i, &dev[i]), "npu_device_open");
	return ctx;
}

static void close_ctx(npu_context *ctx, npu_device **dev, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		npu_device_close(dev[i]);
	npu_context_destroy(ctx);
}

/* The machine's limits by thread count; each the best measured. */
struct limits {
	double bw[17];		/* read bandwidth, bytes/s */
	double fma[17];		/* float32 FMA peak, FLOP/s */
	double dpbf16[17];	/* vdpbf16ps peak, FLOP/s (0: none) */
	double amx[17];		/* AMX-BF16 peak, FLOP/s (0: none) */
};

/*
 * The best figure of 1 to @n threads: the machine did at least that with
 * @n threads available (a shared host's figures drift between counts, and
 * a kernel must never be held to less than the machine showed).
 */
static double best_upto(const double *v, unsigned int n)
{
	double best = 0;

	for (unsigned int t = 1; t <= n; t++)
		if (v[t] > best)
			best = v[t];
	return best;
}

static void raise_to(double *best, double v)
{
	if (v > *best)
		*best = v;
}

/*
 * Raises @l to what 1..@threads threads reach now (best of 3 each); the
 * second time (@again) the read sweep runs only each thread count's best
 * combinations of the first (kb_read_bandwidth_again()): on the 16-core
 * Sapphire Rapids the limits otherwise took most of a three-minute run.
 */
static void measure_limits(unsigned int threads, struct limits *l, bool again)
{
	for (unsigned int t = 1; t <= threads; t++) {
		raise_to(&l->bw[t],
			 again ? kb_read_bandwidth_again(t, 3 * KB_KERNEL_REPS) :
				 kb_read_bandwidth(t, KB_SWEEP_BYTES));
		raise_to(&l->fma[t], kb_fma_peak(t));
		raise_to(&l->dpbf16[t], kb_dpbf16_peak(t));
		raise_to(&l->amx[t], kb_amx_peak(t));
	}
}

/*
 * Half passes of the read sweep between two runs of a kernel: more and
 * shorter samples of the limit than of the kernel, so that the best of a
 * drifting bandwidth is the limit's rather than a kernel's run that met a
 * peak alone (kb_read_bandwidth_again()).
 */
#define KB_SAMPLE_PASSES	6U

/* The limits and thread count that sample_between_runs() raises. */
static struct limits *sampled;
static unsigned int sampled_threads;

/*
 * Between a bandwidth-bound kernel's timed runs, the read sweep over the
 * memory it reads: a shared host's bandwidth drifts within a run, and a kernel
 * must never be held to less than the machine showed beside it.
 */
static void sample_between_runs(const void *mem, uint64_t bytes)
{
	raise_to(&sampled->bw[sampled_threads],
		 kb_read_bandwidth_of(sampled_threads, mem, bytes,
				      KB_SAMPLE_PASSES));
}

static void print_limits(unsigned int threads, const struct limits *l)
{
	char pattern[128];

	printf("\nmachine limits (the best measured: before and after the kernels; the read bandwidth also\n"
	       "between each bandwidth-bound kernel's timed runs):\n");
	for (unsigned int t = 1; t <= threads; t++) {
		printf("  %u thread%s: read bandwidth %6.1f GB/s (%s loads), float32 FMA peak %7.1f GFLOP/s (%s)",
		       t, t > 1 ? "s" : " ", l->bw[t] / 1e9, kb_load_width(),
		       l->fma[t] / 1e9, kb_fma_width());
		if (l->dpbf16[t] > 0)
			printf(", bf16 vdpbf16ps %7.1f", l->dpbf16[t] / 1e9);
		if (l->amx[t] > 0)
			printf(", bf16 AMX %7.1f", l->amx[t] / 1e9);
		kb_read_pattern(t, pattern, sizeof(pattern));
		printf("\n             the read sweep's best: %s\n", pattern);
	}
}

#define KB_MAX_ROWS	8
#define KB_MAX_SHAPES	8
/* The weight layout rbln-compile writes by default. */
#define SPACED		NPU_LAYOUT_PACKED16_SPACED

/*
 * Calls @item on each comma-separated item of @arg (its text, not
 * terminated, and length), at most @max items; returns how many, 0 when
 * one is refused or there are more than @max. The list options' one
 * walker: each gives its own item parser and message.
 */
static unsigned int each_item(const char *arg, unsigned int max,
			      bool (*item)(const char *s, size_t len,
					   unsigned int i, void *ctx),
			      void *ctx)
{
	unsigned int n = 0;
	size_t len;

	for (;;) {
		len = strcspn(arg, ",");
		if (n == max || !item(arg, len, n, ctx))
			return 0;
		n++;
		if (!arg[len])
			return n;
		arg += len + 1;
	}
}

/* A decimal number of 1 to @max filling @len characters at @s, else 0. */
static long item_number(const char *s, size_t len, long max)
{
	char buf[16], *end;
	long v;

	if (!len || len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	v = strtol(buf, &end, 10);
	return *end || v < 1 || v > max ? 0 : v;
}

static bool row_item(const char *s, size_t len, unsigned int i, void *ctx)
{
	uint32_t *rows = ctx;

	rows[i] = (uint32_t)item_number(s, len, 4096);
	return rows[i] != 0;
}

/* K x N, N a multiple of 16 (whole panels). */
static bool shape_item(const char *s, size_t len, unsigned int i, void *ctx)
{
	uint32_t (*shapes)[2] = ctx;
	const char *x = memchr(s, 'x', len);

	if (!x)
		return false;
	shapes[i][0] = (uint32_t)item_number(s, (size_t)(x - s), 65536);
	shapes[i][1] = (uint32_t)item_number(x + 1, len - (size_t)(x - s) - 1,
					     65536);
	return shapes[i][0] && shapes[i][1] >= 16 && shapes[i][1] % 16 == 0;
}

/* The -k groups, bit g named kb_group_names[g]. */
enum { KB_MATMUL = 1, KB_ATTENTION = 2, KB_ALLREDUCE = 4, KB_STEP = 8 };
static const char *const kb_group_names[] = { "matmul", "attention",
					      "allreduce", "step" };
#define KB_GROUPS	(sizeof(kb_group_names) / sizeof(*kb_group_names))

static bool group_item(const char *s, size_t len, unsigned int i, void *ctx)
{
	const char *const *names = kb_group_names;
	unsigned int *groups = ctx, g;

	(void)i;
	for (g = 0; g < KB_GROUPS; g++)
		if (strlen(names[g]) == len && strncmp(s, names[g], len) == 0) {
			*groups |= 1U << g;
			return true;
		}
	return false;
}

/* Whether @rows, @n of them, has @m. */
static bool has_row(const uint32_t *rows, unsigned int n, uint32_t m)
{
	for (unsigned int i = 0; i < n; i++)
		if (rows[i] == m)
			return true;
	return false;
}

/*
 * The -m list: comma-separated row counts of 1 to 4096, at most
 * KB_MAX_ROWS. Returns how many, 0 (after saying why) when it is not one.
 */
static unsigned int parse_rows(const char *arg, uint32_t *rows)
{
	unsigned int n = each_item(arg, KB_MAX_ROWS, row_item, rows);

	if (!n)
		fprintf(stderr, "rbln-kbench: -m \"%s\": want up to %d row counts of 1 to 4096, comma-separated\n",
			arg, KB_MAX_ROWS);
	return n;
}

/*
 * The -s list: comma-separated K x N shapes (each 1 to 65536; N a multiple
 * of 16, whole panels), at most KB_MAX_SHAPES. Returns how many, 0 (after
 * saying why) when it is not one.
 */
static unsigned int parse_shapes(const char *arg, uint32_t shapes[][2])
{
	unsigned int n = each_item(arg, KB_MAX_SHAPES, shape_item, shapes);

	if (!n)
		fprintf(stderr, "rbln-kbench: -s \"%s\": want up to %d KxN shapes (K 1 to 65536, N a multiple of 16 up to 65536), comma-separated\n",
			arg, KB_MAX_SHAPES);
	return n;
}

/* Rounds of the decode-step comparison (-k step): about 0.1 s each. */
#define KB_STEP_ROUNDS	40U

/*
 * The -k list: comma-separated group names. Returns the groups' bits, 0
 * (after saying why) for an unknown name.
 */
static unsigned int parse_groups(const char *arg)
{
	unsigned int groups = 0;

	/* A name may repeat; a list of more than eight each is a mistake. */
	if (!each_item(arg, KB_GROUPS * 8, group_item, &groups)) {
		fprintf(stderr, "rbln-kbench: -k \"%s\": want matmul, attention, allreduce or step, comma-separated\n",
			arg);
		return 0;
	}
	return groups;
}

int main(int argc, char **argv)
{
	uint32_t shapes[KB_MAX_SHAPES][2] = { { 2048, 8192 }, { 8192, 2048 } };
	unsigned int nshapes = 2;
	unsigned int engines = 2, ndev = 8, threads = 2;
	static struct limits l;
	struct npu_device_info info;
	struct kb_result r[(2 * KB_MAX_ROWS + 2) * KB_MAX_SHAPES + 7] = { 0 };
	double step_ratio = 0;
	uint32_t rows[KB_MAX_ROWS] = { 1, 8, 512 };
	unsigned int nrows = 3;
	const char *variant = getenv("RBLN_CPU_VARIANT");
	unsigned int nr = 0, groups = KB_MATMUL | KB_ATTENTION | KB_ALLREDUCE;
	npu_device *dev[64];
	npu_context *ctx;
	bool verbose = false;
	int opt;

	while ((opt = getopt(argc, argv, "e:d:t:m:s:k:v")) != -1) {
		switch (opt) {
		case 'e':
			engines = (unsigned int)atoi(optarg);
			break;
		case 'd':
			ndev = (unsigned int)atoi(optarg);
			break;
		case 't':
			threads = (unsigned int)atoi(optarg);
			break;
		case 'm':
			nrows = parse_rows(optarg, rows);
			if (!nrows)
				return 2;
			break;
		case 's':
			nshapes = parse_shapes(optarg, shapes);
			if (!nshapes)
				return 2;
			break;
		case 'k':
			groups = parse_groups(optarg);
			if (!groups)
				return 2;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-e engines] [-d devices] [-t threads] [-m rows,...] [-s KxN,...] [-k groups] [-v]\n",
				argv[0]);
			return 2;
		}
	}
	if (!engines || !ndev || ndev > 64 || !threads || threads > 16) {
		fprintf(stderr, "rbln-kbench: bad -e, -d or -t\n");
		return 2;
	}
	print_machine();
	measure_limits(threads, &l, false);

	ctx = open_ctx(1, engines, dev);
	kb_check(npu_device_query(dev[0], &info), "npu_device_query");
	unsigned int lim = engines < threads ? engines : threads;

	sampled = &l;
	sampled_threads = lim;
	kb_between_runs(sample_between_runs);

	if (groups & KB_MATMUL) {
		for (unsigned int m = 0; m < nrows; m++)
			for (unsigned int s = 0; s < nshapes; s++) {
				kb_matmul(dev[0], rows[m], shapes[s][0],
					  shapes[s][1], NPU_DTYPE_BF16, SPACED, 0,
					  l.bw[lim], l.fma[lim], &r[nr++]);
			}
		/*
		 * Decode's products in the panels without gaps (rbln-compile
		 * --weight-layout packed16), beside the spaced ones above.
		 */
		for (unsigned int s = 0; s < nshapes && has_row(rows, nrows, 1); s++) {
			kb_matmul(dev[0], 1, shapes[s][0], shapes[s][1],
				  NPU_DTYPE_BF16, NPU_LAYOUT_PACKED16, 0,
				  l.bw[lim], l.fma[lim], &r[nr++]);
		}
		/*
		 * With RBLN_MATMUL_A_BF16 (rbln-compile --matmul-precision
		 * bf16): a decode batch on the AMX tiles, a prompt's rows on
		 * bf16 dot products where the CPU's outrun its float32 FMAs,
		 * else the same kernels as above.
		 */
		for (unsigned int m = 0; m < nrows; m++)
			for (unsigned int s = 0; s < nshapes; s++) {
				kb_matmul(dev[0], rows[m], shapes[s][0],
					  shapes[s][1], NPU_DTYPE_BF16, SPACED, 1,
					  l.bw[lim], l.fma[lim], &r[nr++]);
			}
		/* Weight-only int8 (w8a16) decode: half the bytes of bf16. */
		for (unsigned int s = 0; s < nshapes; s++) {
			kb_matmul(dev[0], 1, shapes[s][0], shapes[s][1],
				  NPU_DTYPE_I8, SPACED, 0, l.bw[lim], l.fma[lim],
				  &r[nr++]);
		}
	}
	/*
	 * The engine's head-major cache, batch 8 and one sequence alone (its
	 * partitions and heads spread over the engines), then the token-major
	 * layout of ISA 1.1 for comparison.
	 */
	if (groups & KB_ATTENTION) {
		kb_attention(dev[0], 8, 4096, 32, 8, 64, 512,
			     NPU_KV_HEAD_MAJOR, l.bw[lim], &r[nr++]);
		kb_attention(dev[0], 1, 4096, 32, 8, 64, 512,
			     NPU_KV_HEAD_MAJOR, l.bw[lim], &r[nr++]);
		kb_attention(dev[0], 8, 4096, 32, 8, 64, 512,
			     NPU_KV_TOKEN_MAJOR, l.bw[lim], &r[nr++]);
	}
	/*
	 * Opt-in (-k step; 5 GB of weights): a 1B decode step's GEMVs in
	 * both packed layouts, which read at different rates on different
	 * CPUs (rbln-compile --weight-layout auto).
	 */
	if (groups & KB_STEP) {
		kb_decode_step(dev[0], KB_STEP_ROUNDS, l.bw[lim], &r[nr],
			       &step_ratio);
		nr += 2;
	}
	close_ctx(ctx, dev, 1);

	if (groups & KB_ALLREDUCE) {
		ctx = open_ctx(ndev, 0, dev);
		kb_allreduce(dev, ndev, 8 * 1024, &r[nr++]);
		kb_allreduce(dev, ndev, 1024 * 1024, &r[nr++]);
		close_ctx(ctx, dev, ndev);
	}

	/*
	 * A shared host's memory bandwidth drifts within a run: measure the
	 * limits again after the kernels and hold each kernel to the best.
	 */
	measure_limits(threads, &l, true);
	print_limits(threads, &l);
	if (verbose)
		kb_print_sweep(lim);
	printf("\nkernels (CPU variant %s) on one emulated device with %u engine%s (limits: %u thread%s)\n",
	       variant ? variant : "auto", info.num_engines,
	       info.num_engines > 1 ? "s" : "", lim, lim > 1 ? "s" : "");
	/* -t below -e saves time in sweeps, but bounds nothing. */
	if (lim < info.num_engines)
		printf("(limits measured with fewer threads than the engines: not the kernels' bound, ratios may exceed 100%%; -t %u for that)\n",
		       info.num_engines < 16 ? info.num_engines : 16);
	printf("%-76s %9s %-8s %9s %6s %9s %6s\n", "kernel", "achieved", "unit",
	       "limit", "ratio", "f32 peak", "ratio");
	double bw = best_upto(l.bw, lim), f32 = best_upto(l.fma, lim);
	double arith = f32;

	if (best_upto(l.dpbf16, lim) > arith)
		arith = best_upto(l.dpbf16, lim);
	if (best_upto(l.amx, lim) > arith)
		arith = best_upto(l.amx, lim);
	for (unsigned int i = 0; i < nr; i++) {
		if (r[i].limit > 0 && strcmp(r[i].unit, "GB/s") == 0) {
			r[i].limit = bw / 1e9;
		} else if (r[i].limit > 0) {
			/*
			 * Held to the machine's best arithmetic on bf16
			 * weights (tiles where the CPU has them), the bound
			 * of any program; beside it the float32 FMA peak,
			 * the bound of kernels that widen to float32.
			 */
			r[i].limit = arith / 1e9;
			r[i].f32_limit = f32 / 1e9;
		}
		row(&r[i]);
	}
	if (groups & KB_STEP)
		printf("decode step: packed16 / spaced, mean of the rounds' ratios: %.3f\n",
		       step_ratio);
	return 0;
}
