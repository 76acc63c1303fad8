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
#include <asm/fpu/api.h>

static inline void rbln_os_fpu_begin(void) { kernel_fpu_begin(); }
static inline void rbln_os_fpu_end(void) { kernel_fpu_end(); }
#else
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

/* The three libc functions the model calls; the kernel has the same three. */
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);

static inline void rbln_os_fpu_begin(void) { }
static inline void rbln_os_fpu_end(void) { }
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
