// SPDX-License-Identifier: MIT
/*
 * The one all-reduce construction (see isa_encode_allreduce() in
 * isa_encode.h for why it is built this way), whole or with the sum
 * scattered over the ranks. libnpu's npu_stream_allreduce_f32() and the
 * engine's compiled programs both encode their all-reduces with it.
 */
#include "isa_encode.h"

/* One phase: +1 on the counter, then wait for every rank's +1. */
static void arrive(struct isa_stream *s, const struct isa_allreduce *ar,
		   uint64_t phase)
{
	isa_encode_sem_signal(s, ar->arrivals, RBLN_SEM_ADD, 1);
	isa_encode_sem_wait(s, ar->arrivals, RBLN_SEM_GEQ,
			    (uint64_t)ar->ranks * (phase + 1), ar->timeout_ns);
}

/* sum = areas[0] + areas[1] + ... in rank order, bytes [first, +bytes) of each. */
static void sum_in_rank_order(struct isa_stream *s,
			      const struct isa_allreduce *ar,
			      struct rbln_isa_operand sum, uint64_t first,
			      uint64_t bytes)
{
	struct rbln_isa_operand a = ar->areas[0], b = ar->areas[1];
	uint32_t p;

	a.offset += first;
	a.size = bytes;
	b.offset += first;
	b.size = bytes;
	isa_encode_add(s, sum, a, b);
	for (p = 2; p < ar->ranks; p++) {
		a = ar->areas[p];
		a.offset += first;
		a.size = bytes;
		isa_encode_add(s, sum, sum, a);
	}
}

void isa_encode_allreduce(struct isa_stream *s, const struct isa_allreduce *ar)
{
	struct rbln_isa_operand sum = ar->add_to_dst ? ar->sum : ar->dst;

	arrive(s, ar, ar->phases_before);
	sum_in_rank_order(s, ar, sum, 0, ar->areas[0].size);
	if (ar->add_to_dst)
		isa_encode_add(s, ar->dst, ar->dst, sum);
}

void isa_encode_allreduce_scattered(struct isa_stream *s,
				    const struct isa_allreduce *ar)
{
	/* Chunk r of n floats: the first count % n chunks one float longer. */
	uint64_t count = ar->areas[0].size / sizeof(float);
	uint64_t per = count / ar->ranks, extra = count % ar->ranks;
	uint64_t first = (per * ar->rank + (ar->rank < extra ? ar->rank : extra)) *
			 sizeof(float);
	uint64_t bytes = (per + (ar->rank < extra ? 1 : 0)) * sizeof(float);
	struct rbln_isa_operand chunk = ar->dst, area;
	uint32_t p;

	chunk.offset += first;
	chunk.size = bytes;
	arrive(s, ar, ar->phases_before);
	if (bytes) {
		sum_in_rank_order(s, ar, chunk, first, bytes);
		/* Peers first, each starting at the next rank, spreading the load. */
		for (p = 1; p <= ar->ranks; p++) {
			area = ar->areas[(ar->rank + p) % ar->ranks];
			area.offset += first;
			area.size = bytes;
			isa_encode_copy(s, area, chunk);
		}
	}
	arrive(s, ar, ar->phases_before + 1);
	isa_encode_copy(s, ar->dst, ar->areas[ar->rank]);
}
