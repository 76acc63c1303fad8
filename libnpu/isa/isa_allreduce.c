// SPDX-License-Identifier: MIT
/*
 * The one all-reduce construction (see isa_encode_allreduce() in
 * isa_encode.h for why it is built this way). libnpu's
 * npu_stream_allreduce_f32() and the engine's compiled programs both
 * encode their all-reduces with it.
 */
#include "isa_encode.h"

void isa_encode_allreduce(struct isa_stream *s, const struct isa_allreduce *ar)
{
	struct rbln_isa_operand sum = ar->add_to_dst ? ar->sum : ar->dst;
	uint32_t p;

	isa_encode_sem_signal(s, ar->arrivals, RBLN_SEM_ADD, 1);
	isa_encode_sem_wait(s, ar->arrivals, RBLN_SEM_GEQ,
			    (uint64_t)ar->ranks * (ar->collective + 1),
			    ar->timeout_ns);
	isa_encode_add(s, sum, ar->areas[0], ar->areas[1]);
	for (p = 2; p < ar->ranks; p++)
		isa_encode_add(s, sum, sum, ar->areas[p]);
	if (ar->add_to_dst)
		isa_encode_add(s, ar->dst, ar->dst, sum);
}
