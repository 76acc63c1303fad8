/* SPDX-License-Identifier: MIT */
/*
 * diag.h - rbln-diag's checks and what they share: the devices under test,
 * the level's sizes, the results, and small helpers around libnpu.
 */
#ifndef RBLN_DIAG_H
#define RBLN_DIAG_H

#include <stdbool.h>
#include <stdint.h>

#include <libnpu.h>

#define DIAG_MAX_DEVICES	64

/**
 * struct diag_level - how much each check does
 * @name: quick, medium or long
 * @mem_bytes: bytes of device memory the pattern test covers per device
 * @walking_bits: also the 32 walking-one and walking-zero patterns
 * @dma_bytes: transfer size of the host<->device bandwidth test
 * @dma_repeat: transfers per direction (best time taken)
 * @p2p_bytes: transfer size of each device->device pair
 * @compute_rounds: times the opcode self-test runs
 * @coll_bytes: bytes all-reduced across all devices
 * @coll_repeat: all-reduces timed (best time taken)
 */
struct diag_level {
	const char *name;
	uint64_t mem_bytes;
	bool walking_bits;
	uint64_t dma_bytes;
	unsigned int dma_repeat;
	uint64_t p2p_bytes;
	unsigned int compute_rounds;
	uint64_t coll_bytes;
	unsigned int coll_repeat;
};

/**
 * struct diag_result - one check on one device (or on all: @device -1)
 * @check: memory, dma_h2d, dma_d2h, p2p, compute, collective
 * @device: hw index of the device, -1 for a check of all devices
 * @pass: the check passed
 * @value: its figure (GB/s for bandwidths; NaN when it has none)
 * @unit: the figure's unit ("" when none)
 * @detail: what was done, or what went wrong
 */
struct diag_result {
	char check[16];
	int device;
	bool pass;
	double value;
	char unit[8];
	char detail[256];
};

/**
 * struct diag - the run
 * @ctx: libnpu context
 * @dev: open devices, visible order
 * @hw: their hw indices
 * @n: number of devices
 * @queue: one queue per device
 * @level: sizes
 * @results: what the checks found
 * @num_results: entries in @results
 * @p2p_gbps: device->device bandwidth matrix [src][dst], GB/s, NaN unmeasured
 */
struct diag {
	npu_context *ctx;
	npu_device *dev[DIAG_MAX_DEVICES];
	unsigned int hw[DIAG_MAX_DEVICES];
	unsigned int n;
	npu_queue *queue[DIAG_MAX_DEVICES];
	const struct diag_level *level;
	struct diag_result *results;
	unsigned int num_results;
	double (*p2p_gbps)[DIAG_MAX_DEVICES];
};

/* Adds a result; printf-style detail. */
void diag_report(struct diag *d, const char *check, int device, bool pass, double value,
		 const char *unit, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* The checks: each adds one result per device (or one for all). */
void diag_memory(struct diag *d, unsigned int i);
void diag_dma(struct diag *d, unsigned int i);
void diag_p2p(struct diag *d);
void diag_compute(struct diag *d, unsigned int i);
void diag_collective(struct diag *d);

/* Output. */
void diag_print_table(const struct diag *d, const char *backend);
void diag_print_json(const struct diag *d, const char *backend);

/* Helpers: a mapped buffer (NULL and *why set on failure). */
npu_buffer *diag_alloc(npu_device *dev, uint64_t size, uint32_t flags, void **map,
		       char *why, size_t len);
/* Submits @s on @q and waits; 0 or the error, *why set. */
int diag_run(npu_stream *s, npu_queue *q, char *why, size_t len);
/* Seconds on CLOCK_MONOTONIC. */
double diag_now(void);

#endif
