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

static inline bool rbln_os_cpu_is_intel(void)
{
#ifdef CONFIG_X86
	return boot_cpu_data.x86_vendor == X86_VENDOR_INTEL;
#else
	return false;
#endif
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

static inline bool rbln_os_cpu_is_intel(void)
{
	return __builtin_cpu_is("intel");
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

static inline bool rbln_os_cpu_is_intel(void)
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
