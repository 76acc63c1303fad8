// SPDX-License-Identifier: MIT
/*
 * Memory: the device fills its memory with patterns (FILL) that the host
 * reads back through the buffer's mapping, then copies an address-derived
 * pattern the host wrote from one half to the other (COPY), which catches
 * address faults that constant patterns cannot. The long level adds the
 * 32 walking-one and 32 walking-zero patterns.
 */
#include <stdio.h>
#include <string.h>

#include "diag.h"

/* Index of the first 32-bit word that is not @want, or -1. */
static int64_t first_bad_word(const uint32_t *p, uint64_t words, uint32_t want)
{
	for (uint64_t w = 0; w < words; w++)
		if (p[w] != want)
			return (int64_t)w;
	return -1;
}

static uint32_t address_pattern(uint64_t word)
{
	return (uint32_t)(word * 2654435761u) ^ 0x5bd1e995u;
}

void diag_memory(struct diag *d, unsigned int i)
{
	const uint64_t size = d->level->mem_bytes, words = size / 4;
	uint32_t patterns[4 + 64] = { 0x00000000u, 0xffffffffu, 0xa5a5a5a5u, 0x5a5a5a5au };
	unsigned int npat = 4;
	char why[200] = "";
	npu_stream *s = NULL;
	npu_buffer *b;
	uint32_t *p;
	int64_t bad;

	if (d->level->walking_bits)
		for (unsigned int bit = 0; bit < 32; bit++) {
			patterns[npat++] = 1u << bit;
			patterns[npat++] = ~(1u << bit);
		}
	b = diag_alloc(d->dev[i], size, 0, (void **)&p, why, sizeof(why));
	if (!b)
		goto fail;
	if (npu_stream_create(d->dev[i], &s)) {
		snprintf(why, sizeof(why), "stream: %s", npu_error_detail());
		goto fail;
	}
	for (unsigned int k = 0; k < npat; k++) {
		npu_stream_fill(s, b, 0, size, patterns[k]);
		if (diag_run(s, d->queue[i], why, sizeof(why)))
			goto fail;
		bad = first_bad_word(p, words, patterns[k]);
		if (bad >= 0) {
			snprintf(why, sizeof(why), "pattern 0x%08x: word at offset 0x%llx reads 0x%08x",
				 patterns[k], (unsigned long long)bad * 4, p[bad]);
			goto fail;
		}
	}
	for (uint64_t w = 0; w < words / 2; w++)
		p[w] = address_pattern(w);
	npu_stream_copy(s, b, size / 2, b, 0, size / 2);
	if (diag_run(s, d->queue[i], why, sizeof(why)))
		goto fail;
	for (uint64_t w = 0; w < words / 2; w++)
		if (p[words / 2 + w] != address_pattern(w)) {
			snprintf(why, sizeof(why), "address pattern copied to offset 0x%llx reads "
				 "0x%08x, not 0x%08x", (unsigned long long)(size / 2 + w * 4),
				 p[words / 2 + w], address_pattern(w));
			goto fail;
		}
	diag_report(d, "memory", (int)d->hw[i], true, (double)size / (1 << 20), "MiB",
		    "%u fill patterns and an address pattern over %llu MiB", npat,
		    (unsigned long long)(size >> 20));
	npu_stream_destroy(s);
	npu_buffer_free(b);
	return;
fail:
	diag_report(d, "memory", (int)d->hw[i], false, (double)size / (1 << 20), "MiB", "%s", why);
	if (s)
		npu_stream_destroy(s);
	if (b)
		npu_buffer_free(b);
}
