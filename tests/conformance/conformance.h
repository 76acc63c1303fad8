/* SPDX-License-Identifier: MIT */
/*
 * conformance.h - shared pieces of the libnpu conformance suite.
 *
 * The suite uses libnpu.h and the public uapi headers only, so that the
 * same binary checks the emulated backend here and rbln.ko inside a VM
 * (RBLN_BACKEND=kernel). Nothing in it may depend on how a backend is
 * built, only on what the API promises.
 */
#ifndef CONFORMANCE_H
#define CONFORMANCE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <libnpu.h>
#include <rbln_isa.h>

#define CONF_MAX_DEVICES 64
/* Long enough for any job of the suite on a slow VM, short enough to fail. */
#define CONF_WAIT_NS (30LL * 1000000000LL)
#define CONF_MS (1000000LL)

/**
 * struct fixture - every visible device open, one queue and one stream
 * each; made by fixture_setup() for the tests that want it
 */
struct fixture {
	npu_context *ctx;
	unsigned int count;
	npu_device *dev[CONF_MAX_DEVICES];
	npu_queue *queue[CONF_MAX_DEVICES];
	npu_stream *stream[CONF_MAX_DEVICES];
};

int fixture_setup(void **state);
int fixture_teardown(void **state);

/* Assert that a libnpu call returned @expected, printing the detail if not. */
#define assert_npu(call, expected)                                            \
	do {                                                                  \
		int conf_rc_ = (call);                                        \
		if (conf_rc_ != (expected))                                   \
			print_error("%s = %d (%s), want %d; detail: %s\n",    \
				    #call, conf_rc_, npu_strerror(conf_rc_),  \
				    (int)(expected), npu_error_detail());     \
		assert_int_equal(conf_rc_, (expected));                       \
	} while (0)

#define assert_ok(call) assert_npu(call, 0)

/* The detail message of the last failure contains @needle. */
void assert_detail_contains(const char *needle);

npu_buffer *conf_alloc(npu_device *dev, uint64_t size, uint32_t flags);
void *conf_map(npu_buffer *buf);
/** Submit @s on @q, wait for it, expect status 0, and reset @s. */
void conf_run(npu_stream *s, npu_queue *q);
/** Submit @s on @q after @wait and return its fence (asserting success). */
npu_fence *conf_submit(npu_stream *s, npu_queue *q, npu_fence *const *wait,
		       unsigned int num_wait);

/** Visible devices the environment asks for: RBLN_DEVICES, else 8. */
unsigned int conf_expected_devices(void);

/* Deterministic pseudo-random data; the seed is printed at start. */
void conf_seed(void);
uint64_t conf_rand(void);
/** A random float of moderate magnitude and random sign, never NaN/inf. */
float conf_rand_float(void);
void conf_rand_fill(void *dst, size_t size);

/* Number of open file descriptors of this process. */
int conf_open_fds(void);

/* Test groups, one per file. */
extern const struct CMUnitTest conf_enum_tests[];
extern const size_t conf_enum_count;
extern const struct CMUnitTest conf_memory_tests[];
extern const size_t conf_memory_count;
extern const struct CMUnitTest conf_exec_tests[];
extern const size_t conf_exec_count;
extern const struct CMUnitTest conf_concurrency_tests[];
extern const size_t conf_concurrency_count;
extern const struct CMUnitTest conf_sync_tests[];
extern const size_t conf_sync_count;
extern const struct CMUnitTest conf_invalid_tests[];
extern const size_t conf_invalid_count;
extern const struct CMUnitTest conf_leak_tests[];
extern const size_t conf_leak_count;
extern const struct CMUnitTest conf_compute_tests[];
extern const size_t conf_compute_count;
extern const struct CMUnitTest conf_collective_tests[];
extern const size_t conf_collective_count;

#endif /* CONFORMANCE_H */
