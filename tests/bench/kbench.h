/* SPDX-License-Identifier: MIT */
/*
 * kbench.h - rbln-kbench, the compute-kernel benchmark: the machine's
 * limits (kbench_limits.c), the kernels run through libnpu's emulated
 * devices (kbench_kernels.c), and the table (rbln-kbench.c).
 */
#ifndef KBENCH_H
#define KBENCH_H

#include <stddef.h>
#include <stdint.h>

#include <libnpu.h>

/* Seconds on CLOCK_MONOTONIC. */
double kb_now(void);
/* Exits with a message naming @what when @err is an error. */
void kb_check(int err, const char *what);

/*
 * Bytes the read sweeps cover, and the least that a bandwidth-bound
 * kernel streams through in one measurement (kbench_kernels.c).
 */
#define KB_SWEEP_BYTES	(1ULL << 30)
/* Timed repetitions of a kernel's stream, the best kept (kbench_kernels.c). */
#define KB_KERNEL_REPS	8U

/*
 * Read bandwidth in bytes/s of @threads threads sweeping @bytes in all,
 * with the widest loads the CPU has (kb_load_width() names them).
 */
double kb_read_bandwidth(unsigned int threads, uint64_t bytes);
/*
 * kb_read_bandwidth()'s best combinations for @threads once more over
 * the @bytes at @mem: the best of @passes passes over its halves, each
 * way of sharing it between the threads in turn.
 */
double kb_read_bandwidth_of(unsigned int threads, const void *mem,
			    uint64_t bytes, unsigned int passes);
/*
 * The same over the sweep's own memory (0 before any kb_read_bandwidth()
 * of @threads).
 */
double kb_read_bandwidth_again(unsigned int threads, unsigned int passes);
/* That combination in words, into @buf of @len bytes. */
void kb_read_pattern(unsigned int threads, char *buf, size_t len);
/*
 * Every combination of the first sweep for @threads (rbln-kbench -v): what
 * a kernel's own pattern of streams, prefetch and sharing can read.
 */
void kb_print_sweep(unsigned int threads);
const char *kb_load_width(void);
/* float32 FMA throughput in FLOP/s of @threads threads, widest FMAs. */
double kb_fma_peak(unsigned int threads);
const char *kb_fma_width(void);
/* bfloat16 dot-product throughput (vdpbf16ps) in FLOP/s; 0 without it. */
double kb_dpbf16_peak(unsigned int threads);
/* AMX-BF16 tile throughput (tdpbf16ps) in FLOP/s; 0 without it. */
double kb_amx_peak(unsigned int threads);

/**
 * struct kb_result - one kernel's measurement
 * @name: what ran
 * @value: achieved rate (bytes/s or FLOP/s) or latency (seconds)
 * @unit: "GB/s", "GFLOP/s" or "us"
 * @limit: the machine's bound for any program doing this work, in the
 *	same unit: the read bandwidth, or for a MATMUL its best arithmetic
 *	peak (float32 FMA, bf16 dot products or AMX tiles, whichever is
 *	highest); 0 for none
 * @f32_limit: for a MATMUL, the float32 FMA peak: the bound of kernels
 *	that widen their weights to float32 (tile kernels may pass it);
 *	0 where not applicable
 */
struct kb_result {
	char name[96];
	double value;
	const char *unit;
	double limit;
	double f32_limit;
};

/*
 * @fn runs after each timed run of a bandwidth-bound kernel (MATMUL M=1,
 * ATTENTION, the decode step), given the memory the kernel reads: the
 * read bandwidth sampled beside each run on the same pages, so that a
 * kernel's best run meets the best the machine read in the same moments.
 * NULL for none.
 */
void kb_between_runs(void (*fn)(const void *mem, uint64_t bytes));

/*
 * MATMUL of @m rows times [n, k] weights of @dtype in 16-column panels of
 * @layout (packed or spaced) on @dev; with @a_bf16 the command allows bf16
 * activations (RBLN_MATMUL_A_BF16).
 */
void kb_matmul(npu_device *dev, uint32_t m, uint32_t k, uint32_t n,
	       enum npu_dtype dtype, enum npu_layout layout, int a_bf16,
	       double bw, double peak, struct kb_result *out);
/*
 * A Llama-3.2-1B-shape decode step's 65 GEMVs (M = 1, bfloat16) in the
 * spaced panels and in packed16 (out[0], out[1]: mean GB/s over @rounds),
 * the two layouts' steps alternating so that a host's drifting bandwidth
 * meets both alike; *ratio is the mean of the rounds' packed16 / spaced.
 */
void kb_decode_step(npu_device *dev, unsigned int rounds, double bw,
		    struct kb_result out[2], double *ratio);
/* Decode ATTENTION: @batch sequences of @ctx tokens (bfloat16 cache in @layout). */
void kb_attention(npu_device *dev, uint32_t batch, uint32_t ctx,
		  uint32_t q_heads, uint32_t kv_heads, uint32_t head_dim,
		  uint32_t partition, enum npu_kv_layout layout, double bw,
		  struct kb_result *out);
/* All-reduce of @bytes over every open device of @devs: latency. */
void kb_allreduce(npu_device *const *devs, unsigned int n, uint64_t bytes,
		  struct kb_result *out);

#endif /* KBENCH_H */
