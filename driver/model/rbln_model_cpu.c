// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_cpu.c - which CPU variant of the compute kernels runs.
 *
 * One choice for the whole model, read once per command: a command never
 * mixes variants, so its bits are those of one variant. The choice is a
 * plain word with relaxed atomics: it is set at load (module parameter,
 * environment) or by tests between commands.
 */

#include "rbln_model_internal.h"

static u32 rbln_model_cpu_forced = RBLN_MODEL_CPU_AUTO;

static const char *const rbln_model_cpu_names[RBLN_MODEL_CPU_COUNT] = {
	[RBLN_MODEL_CPU_AUTO] = "auto",
	[RBLN_MODEL_CPU_BASELINE] = "baseline",
	[RBLN_MODEL_CPU_AVX2] = "avx2",
	[RBLN_MODEL_CPU_AVX512] = "avx512",
	[RBLN_MODEL_CPU_AMX] = "amx",
	[RBLN_MODEL_CPU_AVX512_AMX] = "avx512+amx",
};

/* Whether this CPU (and OS) can run the AVX2 variant. */
static bool rbln_model_cpu_avx2_ok(void)
{
#if defined(__x86_64__)
	return rbln_os_cpu_has_avx2() && rbln_os_cpu_has_fma();
#else
	return false;
#endif
}

/* Whether this CPU (and OS) can run the AVX-512 variant. */
static bool rbln_model_cpu_avx512_ok(void)
{
#if defined(__x86_64__)
	return rbln_model_cpu_avx2_ok() && rbln_os_cpu_has_avx512f();
#else
	return false;
#endif
}

/*
 * Whether this CPU and OS can run the AMX variant: never in the kernel
 * home, which does not build it.
 */
static bool rbln_model_cpu_amx_ok(void)
{
#if defined(__x86_64__) && !defined(__KERNEL__)
	return rbln_model_cpu_avx512_ok() && rbln_os_cpu_has_amx();
#else
	return false;
#endif
}

/* Whether this CPU can run variant @cpu (AUTO always). */
static bool rbln_model_cpu_ok(u32 cpu)
{
	if (cpu == RBLN_MODEL_CPU_AVX2)
		return rbln_model_cpu_avx2_ok();
	if (cpu == RBLN_MODEL_CPU_AVX512)
		return rbln_model_cpu_avx512_ok();
	if (cpu == RBLN_MODEL_CPU_AMX || cpu == RBLN_MODEL_CPU_AVX512_AMX)
		return rbln_model_cpu_amx_ok();
	return true;
}

/**
 * rbln_model_set_cpu() - force a CPU variant (tests, module parameter)
 * @cpu: an &enum rbln_model_cpu value
 *
 * Return: 0, or -RBLN_EINVAL for an unknown value or one this CPU cannot run.
 */
int rbln_model_set_cpu(u32 cpu)
{
	if (cpu >= RBLN_MODEL_CPU_COUNT)
		return -RBLN_EINVAL;
	if (!rbln_model_cpu_ok(cpu))
		return -RBLN_EINVAL;
	rbln_os_store_relaxed32(&rbln_model_cpu_forced, cpu);
	return 0;
}

/**
 * rbln_model_cpu() - the CPU variant commands run with
 *
 * Auto takes avx512+amx where amx runs, never amx alone: measured on an
 * AMX CPU (Documentation/isa-compute.md), the tiles win for a prompt's
 * rows, while for a decode batch's few rows they read the weights slower
 * than the avx512 GEMV. avx512+amx takes each where it wins.
 *
 * Return: RBLN_MODEL_CPU_BASELINE, _AVX2, _AVX512, _AMX or _AVX512_AMX:
 * the forced one, or the widest this CPU runs, amx alone excepted.
 */
u32 rbln_model_cpu(void)
{
	u32 cpu = rbln_os_load_relaxed32(&rbln_model_cpu_forced);

	if (cpu != RBLN_MODEL_CPU_AUTO)
		return cpu;
	if (rbln_model_cpu_amx_ok())
		return RBLN_MODEL_CPU_AVX512_AMX;
	if (rbln_model_cpu_avx512_ok())
		return RBLN_MODEL_CPU_AVX512;
	return rbln_model_cpu_avx2_ok() ? RBLN_MODEL_CPU_AVX2 :
					  RBLN_MODEL_CPU_BASELINE;
}

/**
 * rbln_model_mm_a_bf16_ok() - whether MATMULs that allow bf16 activations
 *	(RBLN_MATMUL_A_BF16) run on AVX512-BF16 dot products here
 *
 * Where vdpbf16ps, two products a lane, issues at the float32 FMA's rate:
 * AMD's Zen 4 and Zen 5 (rbln-kbench on a Zen 5: 234 against 117 GFLOP/s
 * a core), not Intel's CPUs to date (Sapphire Rapids: half the FMA's
 * FLOP/s, so the dot products would be the slower path). Both homes
 * decide alike, so they run the same kernel on the same CPU.
 *
 * Return: true where the avx512 variant's kernels use them.
 */
bool rbln_model_mm_a_bf16_ok(void)
{
#if defined(__x86_64__)
	return rbln_model_cpu_avx512_ok() && rbln_os_cpu_has_avx512bf16() &&
	       !rbln_os_cpu_is_intel();
#else
	return false;
#endif
}

/**
 * rbln_model_cpu_name() - name of an &enum rbln_model_cpu value
 * @cpu: the value
 *
 * Return: the name, or NULL.
 */
const char *rbln_model_cpu_name(u32 cpu)
{
	return cpu < RBLN_MODEL_CPU_COUNT ? rbln_model_cpu_names[cpu] : NULL;
}

/**
 * rbln_model_cpu_parse() - the &enum rbln_model_cpu value of a name
 * @name: the name, optionally followed by a newline
 *
 * Return: the value, or -RBLN_EINVAL.
 */
int rbln_model_cpu_parse(const char *name)
{
	const char *want;
	u32 cpu, i;

	if (!name)
		return -RBLN_EINVAL;
	for (cpu = 0; cpu < RBLN_MODEL_CPU_COUNT; cpu++) {
		want = rbln_model_cpu_names[cpu];
		for (i = 0; want[i] && name[i] == want[i]; i++)
			;
		if (!want[i] && (!name[i] || (name[i] == '\n' && !name[i + 1])))
			return cpu;
	}
	return -RBLN_EINVAL;
}

/**
 * rbln_model_kernels() - the kernels of the variant in use
 *
 * Return: the table of compute kernels.
 */
const struct rbln_model_kernels *rbln_model_kernels(void)
{
#if defined(__x86_64__)
	u32 cpu = rbln_model_cpu();

#if !defined(__KERNEL__)
	if (cpu == RBLN_MODEL_CPU_AMX)
		return &rbln_model_kernels_amx;
	if (cpu == RBLN_MODEL_CPU_AVX512_AMX)
		return &rbln_model_kernels_avx512_amx;
#endif
	if (cpu == RBLN_MODEL_CPU_AVX512)
		return &rbln_model_kernels_avx512;
	if (cpu == RBLN_MODEL_CPU_AVX2)
		return &rbln_model_kernels_avx2;
#endif
	return &rbln_model_kernels_baseline;
}

/**
 * rbln_model_prefetch_bytes() - software prefetch distance of weight streams
 * @streams: sequential weight streams the kernel reads side by side: the
 *	GEMV reads four panels at once, a tile of rows one panel
 * @rows: activation rows each weight line feeds: 1 for the GEMV, the
 *	tile's rows for a decode batch's wide tiles
 *
 * Measured with rbln-kbench: on Intel cores (Sapphire Rapids guests) the
 * hardware alone keeps too few lines of the GEMV's streams in flight, and
 * a prefetch 2 KiB ahead lifts a long-panel GEMV from about 60% to over
 * 90% of the read bandwidth. On AMD Zen 4 the L2 stream prefetcher ran
 * far enough ahead of four streams, and software prefetches there only
 * took its miss buffers (M=1 at 76-80% of bandwidth with, 91-100%
 * without); but one stream, whose panel ends every few KiB, gains from a
 * prefetch 4 KiB ahead (M=4: about 65 GFLOP/s without, 115 with). On the
 * Zen 5 a decode batch's wide tiles, whose loads wait on their rows'
 * multiply-adds, gain as well (M=8, 2048 x 8192 and 8192 x 2048 bf16, 2
 * threads, three rounds alternating: 205-214 GFLOP/s without, 315-351
 * with 2 or 4 KiB ahead), and so does the GEMV where the memory is fast:
 * a decode step's 65 GEMVs (2 engines, packed16, a test build alternating
 * the distance every step, 2026-11-29), in the rounds where the 2-core
 * guest read over 58 GB/s, 61.3 GB/s without, 66.2 at 2 KiB, 59.5 at 4
 * KiB (556 rounds; in another run's 125 such rounds 59.9 without, 60.1,
 * 64.0 and 60.8 at 1, 2 and 3 KiB), while in its slow stretches 2 KiB
 * cost 1.3% (45.7 against 45.1 GB/s, 1345 rounds). Decode B=1 of the 1B
 * shape (rbln-generate, 40 pairs alternating) followed: 25.7 against 27.7
 * tok/s in the fast pairs (1.076x, ahead in 14 of 14), 18.5 against 18.4
 * in the slow ones. A prefetch never changes a result, so the choice
 * follows the CPU.
 *
 * Return: bytes ahead to prefetch, 0 for none.
 */
u32 rbln_model_prefetch_bytes(u32 streams, u32 rows)
{
	if (streams == 1)
		return 4096;
	if (rbln_os_cpu_is_intel())
		return 2048;
	if (rows > 1)
		return 4096;
	/* The GEMV on AMD: from Zen 5 (family 0x1a) on. */
	return rbln_os_cpu_family() >= 0x1a ? 2048 : 0;
}
