/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * rbln_model_os.h - the one place where the device model meets its home.
 *
 * driver/model/ is compiled into rbln.ko and into libnpu's emulated backend.
 * Model sources include no libc and no kernel header; they get fixed-size
 * types, the three memory primitives, atomics and the FPU bracket from here.
 * Everything else a home must provide comes through &struct rbln_model_env.
 */
#ifndef RBLN_MODEL_OS_H
#define RBLN_MODEL_OS_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/compiler.h>
/*
 * Files built with CC_FLAGS_FPU (rbln_model_ops_f32.c) may not include the
 * FPU API; they run inside a bracket opened by a file that does.
 */
#ifndef _LINUX_FPU_COMPILATION_UNIT
#include <linux/fpu.h>
#ifdef CONFIG_X86
#include <asm/cpufeature.h>
#endif

/*
 * kernel_fpu_begin() also loads the default MXCSR (round to nearest, no
 * flush-to-zero, no denormals-are-zero), which is what makes float results
 * identical to userspace's, where rbln_os_fpu_begin() does the same.
 */
static inline void rbln_os_fpu_begin(void)
{
	kernel_fpu_begin();
}

static inline void rbln_os_fpu_end(void)
{
	kernel_fpu_end();
}

/* The kernel clears AVX2 when the OS does not manage the YMM state. */
static inline bool rbln_os_cpu_has_avx2(void)
{
#ifdef CONFIG_X86
	return boot_cpu_has(X86_FEATURE_AVX2);
#else
	return false;
#endif
}

static inline bool rbln_os_cpu_has_fma(void)
{
#ifdef CONFIG_X86
	return boot_cpu_has(X86_FEATURE_FMA);
#else
	return false;
#endif
}

/* Cleared too when the OS does not manage the ZMM state. */
static inline bool rbln_os_cpu_has_avx512f(void)
{
#ifdef CONFIG_X86
	return boot_cpu_has(X86_FEATURE_AVX512F);
#else
	return false;
#endif
}

/* vdpbf16ps and vcvtne2ps2bf16 (AVX512-BF16); cleared with AVX-512F. */
static inline bool rbln_os_cpu_has_avx512bf16(void)
{
#ifdef CONFIG_X86
	return boot_cpu_has(X86_FEATURE_AVX512_BF16) &&
	       boot_cpu_has(X86_FEATURE_AVX512BW);
#else
	return false;
#endif
}

static inline bool rbln_os_cpu_is_intel(void)
{
#ifdef CONFIG_X86
	return boot_cpu_data.x86_vendor == X86_VENDOR_INTEL;
#else
	return false;
#endif
}

/* The CPU's family, extended family included (AMD Zen 5: 0x1a). */
static inline u32 rbln_os_cpu_family(void)
{
#ifdef CONFIG_X86
	return boot_cpu_data.x86;
#else
	return 0;
#endif
}

/* The kernel home never uses AMX tiles (rbln_model_kern_amx.c). */
static inline bool rbln_os_cpu_has_amx(void)
{
	return false;
}
#endif /* _LINUX_FPU_COMPILATION_UNIT */
#else
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/*
 * The compiler's own names for the <stdint.h> types: the same types as
 * uint8_t..int64_t, spelled so that kernel style checks accept them.
 */
typedef __INT8_TYPE__ s8;
typedef __UINT8_TYPE__ u8;
typedef __UINT16_TYPE__ u16;
typedef __UINT32_TYPE__ u32;
typedef __UINT64_TYPE__ u64;
typedef __INT16_TYPE__ s16;
typedef __INT32_TYPE__ s32;
typedef __INT64_TYPE__ s64;

/* The three libc functions the model calls; the kernel has the same three. */
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);

#if defined(__x86_64__)
/*
 * The application may run with flush-to-zero/denormals-are-zero or another
 * rounding mode set in MXCSR (e.g. when linked with -ffast-math). Float work
 * of the model runs with the default MXCSR, as kernel_fpu_begin() arranges
 * in the kernel; the caller's value is restored afterwards. Begin and end
 * are called on one thread, in one translation unit, never nested.
 */
#define RBLN_OS_MXCSR_DEFAULT	0x1f80U

static inline unsigned int *rbln_os_mxcsr_saved(void)
{
	static __thread unsigned int saved;

	return &saved;
}

static inline void rbln_os_fpu_begin(void)
{
	*rbln_os_mxcsr_saved() = __builtin_ia32_stmxcsr();
	__builtin_ia32_ldmxcsr(RBLN_OS_MXCSR_DEFAULT);
}

static inline void rbln_os_fpu_end(void)
{
	__builtin_ia32_ldmxcsr(*rbln_os_mxcsr_saved());
}

/* libgcc's check includes the OS (XGETBV) support for the YMM state. */
static inline bool rbln_os_cpu_has_avx2(void)
{
	return __builtin_cpu_supports("avx2");
}

static inline bool rbln_os_cpu_has_fma(void)
{
	return __builtin_cpu_supports("fma");
}

/* As for AVX2, libgcc's check includes the OS support (ZMM state). */
static inline bool rbln_os_cpu_has_avx512f(void)
{
	return __builtin_cpu_supports("avx512f");
}

static inline bool rbln_os_cpu_has_avx512bf16(void)
{
	return __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512bf16");
}

static inline bool rbln_os_cpu_is_intel(void)
{
	return __builtin_cpu_is("intel");
}

/* CPUID @leaf, @sub: r[0..3] = EAX, EBX, ECX, EDX. */
static inline void rbln_os_cpuid(u32 leaf, u32 sub, u32 r[4])
{
	__asm__("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
		: "a"(leaf), "c"(sub));
}

/*
 * The CPU's family, extended family included (AMD Zen 5: 0x1a), from CPUID
 * leaf 1 once: CPUID traps to the hypervisor in a guest, so it is kept.
 */
static inline u32 rbln_os_cpu_family(void)
{
	static u32 known;
	u32 r[4], family;

	family = __atomic_load_n(&known, __ATOMIC_ACQUIRE);
	if (family)
		return family;
	rbln_os_cpuid(1, 0, r);
	family = (r[0] >> 8) & 0xf;
	if (family == 0xf)
		family += (r[0] >> 20) & 0xff;
	__atomic_store_n(&known, family, __ATOMIC_RELEASE);
	return family;
}

long syscall(long number, ...);

#define RBLN_OS_SYS_ARCH_PRCTL		158
#define RBLN_OS_ARCH_REQ_XCOMP_PERM	0x1023
#define RBLN_OS_XFEATURE_XTILEDATA	18

/*
 * AMX-TILE and AMX-BF16 (CPUID leaf 7: EDX bits 24 and 22), AVX-512F, and
 * the OS's permission for this process to use the tile data state
 * (Linux 5.16 and later grant it on request, once per process; the
 * answer is kept: 1 yes, 2 no).
 */
static inline bool rbln_os_cpu_has_amx(void)
{
	static int known;
	u32 r[4] = { 0 };
	int ok = 2;

	if (__atomic_load_n(&known, __ATOMIC_ACQUIRE))
		return __atomic_load_n(&known, __ATOMIC_ACQUIRE) == 1;
	/* AVX-512F implies CPUID leaf 7. */
	if (__builtin_cpu_supports("avx512f"))
		rbln_os_cpuid(7, 0, r);
	if ((r[3] & (1U << 24)) && (r[3] & (1U << 22)) &&
	    !syscall(RBLN_OS_SYS_ARCH_PRCTL, RBLN_OS_ARCH_REQ_XCOMP_PERM,
		     RBLN_OS_XFEATURE_XTILEDATA))
		ok = 1;
	__atomic_store_n(&known, ok, __ATOMIC_RELEASE);
	return ok == 1;
}
#else
static inline void rbln_os_fpu_begin(void)
{
}

static inline void rbln_os_fpu_end(void)
{
}

static inline bool rbln_os_cpu_has_avx2(void)
{
	return false;
}

static inline bool rbln_os_cpu_has_fma(void)
{
	return false;
}

static inline bool rbln_os_cpu_has_avx512f(void)
{
	return false;
}

static inline bool rbln_os_cpu_has_avx512bf16(void)
{
	return false;
}

static inline bool rbln_os_cpu_is_intel(void)
{
	return false;
}

static inline u32 rbln_os_cpu_family(void)
{
	return 0;
}

static inline bool rbln_os_cpu_has_amx(void)
{
	return false;
}
#endif
#endif

/*
 * Inlining the compute kernels' small helpers is what keeps their
 * accumulators in registers, so it is required, not suggested: "static
 * inline RBLN_OS_INLINE" in both homes (the kernel's __always_inline
 * spells the same attribute).
 */
#define RBLN_OS_ATTR(x)	__attribute__((x))
#define RBLN_OS_INLINE	RBLN_OS_ATTR(__always_inline__)
/* Keeps a large kernel frame out of its caller's (2 KiB kernel limit). */
#define RBLN_OS_NOINLINE	RBLN_OS_ATTR(__noinline__)
/*
 * A local array whose elements are all written before they are read:
 * exempt from the kernel's -ftrivial-auto-var-init=zero, under which an
 * array of accumulators stays in memory instead of in registers (the
 * kernel's __uninitialized; no such option in userspace).
 */
#if defined(__has_attribute)
#if __has_attribute(__uninitialized__)
#define RBLN_OS_UNINIT	RBLN_OS_ATTR(__uninitialized__)
#endif
#endif
#ifndef RBLN_OS_UNINIT
#define RBLN_OS_UNINIT
#endif

/*
 * Semaphores are shared with other devices (other engine threads, other
 * processes through dma-buf), so their accesses are real atomics with
 * acquire/release order in both homes. GCC's builtins compile to the same
 * instructions as the kernel's smp_load_acquire()/smp_store_release().
 */
static inline u64 rbln_os_load_acquire64(const u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void rbln_os_store_release64(u64 *p, u64 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void rbln_os_add_release64(u64 *p, u64 v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELEASE);
}

/* Flags several engines of one device read and write while splitting work. */
static inline u32 rbln_os_load_relaxed32(const u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void rbln_os_store_relaxed32(u32 *p, u32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* Claims the next piece of work among the engines of one device. */
static inline u64 rbln_os_fetch_add64(u64 *p, u64 v)
{
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/*
 * Index data (token ids, slots, block tables) lives in buffers the host or
 * another device may write while a command runs. Each value is read exactly
 * once into a local, like READ_ONCE(), so that the value checked is the
 * value used: a plain load could legally be repeated by the compiler.
 * Buffer offsets of index operands are multiples of 4, so the load is
 * naturally aligned when the mapping is (page-aligned in both homes).
 */
static inline s32 rbln_os_read_once_s32(const u8 *p)
{
	return (s32)__atomic_load_n((const u32 *)p, __ATOMIC_RELAXED);
}

static inline void rbln_os_fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* errno values are ABI: identical in the kernel and in userspace. */
#define RBLN_EIO	5
#define RBLN_EINVAL	22
#define RBLN_ETIMEDOUT	110
#define RBLN_ECANCELED	125

#endif /* RBLN_MODEL_OS_H */
