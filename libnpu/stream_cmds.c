// SPDX-License-Identifier: MIT
/*
 * One builder function per data-movement opcode: each names its buffers
 * in the stream's buffer list with the access the opcode needs and has the
 * ISA encoder append the command. Ranges are not checked here: the device
 * validates the whole stream at submission and names the offending
 * command, so there is one source of truth for what is valid.
 */
#include <errno.h>
#include <stdio.h>

#include "stream_internal.h"

/* libnpu.h's public enums carry the ISA's values, so they pass through. */
_Static_assert((int)NPU_SEM_SET == RBLN_SEM_SET &&
	       (int)NPU_SEM_ADD == RBLN_SEM_ADD, "semaphore ops");
_Static_assert((int)NPU_SEM_GEQ == RBLN_SEM_GEQ &&
	       (int)NPU_SEM_EQ == RBLN_SEM_EQ, "semaphore conditions");

/* Lock @s; false (and unlocked) when it is NULL or already failed. */
bool npu_stream_begin(npu_stream *s)
{
	if (!s)
		return false;
	pthread_mutex_lock(&s->lock);
	if (s->error) {
		pthread_mutex_unlock(&s->lock);
		return false;
	}
	return true;
}

void npu_stream_end(npu_stream *s)
{
	int err = s->enc.error;

	if (err == -E2BIG && !s->error)
		npu_stream_set_error(s, npu_fail(err,
			"a command would grow the stream of %zu bytes past the device's %zu-byte limit",
			s->enc.size, s->enc.limit));
	else if (err && !s->error)
		npu_stream_set_error(s, npu_fail(err, NULL));
	pthread_mutex_unlock(&s->lock);
}

/* An operand naming @buf; false when the buffer list refused it. */
bool npu_stream_operand(npu_stream *s, struct rbln_isa_operand *op,
			npu_buffer *buf, uint32_t access, uint64_t offset,
			uint64_t size, const char *what)
{
	uint32_t index = npu_stream_use(s, buf, access, what);

	if (index == NPU_STREAM_NO_BUFFER)
		return false;
	*op = isa_operand(index, offset, size);
	return true;
}

void npu_stream_nop(npu_stream *s)
{
	if (!npu_stream_begin(s))
		return;
	isa_encode_nop(&s->enc);
	npu_stream_end(s);
}

void npu_stream_barrier(npu_stream *s)
{
	if (!npu_stream_begin(s))
		return;
	isa_encode_barrier(&s->enc);
	npu_stream_end(s);
}

void npu_stream_fill(npu_stream *s, npu_buffer *dst, uint64_t offset,
		     uint64_t size, uint32_t value)
{
	struct rbln_isa_operand d;

	if (!npu_stream_begin(s))
		return;
	if (npu_stream_operand(s, &d, dst, NPU_ACCESS_WRITE, offset, size,
			       "npu_stream_fill dst"))
		isa_encode_fill(&s->enc, d, value);
	npu_stream_end(s);
}

void npu_stream_copy(npu_stream *s, npu_buffer *dst, uint64_t dst_offset,
		     npu_buffer *src, uint64_t src_offset, uint64_t size)
{
	struct rbln_isa_operand d, a;

	if (!npu_stream_begin(s))
		return;
	if (npu_stream_operand(s, &d, dst, NPU_ACCESS_WRITE, dst_offset, size,
			       "npu_stream_copy dst") &&
	    npu_stream_operand(s, &a, src, NPU_ACCESS_READ, src_offset, size,
			       "npu_stream_copy src"))
		isa_encode_copy(&s->enc, d, a);
	npu_stream_end(s);
}

void npu_stream_sem_signal(npu_stream *s, npu_buffer *sem, uint64_t offset,
			   enum npu_sem_op op, uint64_t value)
{
	struct rbln_isa_operand c;

	if (!npu_stream_begin(s))
		return;
	if (npu_stream_operand(s, &c, sem, NPU_ACCESS_WRITE, offset,
			       sizeof(uint64_t), "npu_stream_sem_signal sem"))
		isa_encode_sem_signal(&s->enc, c, (enum rbln_isa_sem_op)op,
				      value);
	npu_stream_end(s);
}

void npu_stream_sem_wait(npu_stream *s, npu_buffer *sem, uint64_t offset,
			 enum npu_sem_cond cond, uint64_t value,
			 uint64_t timeout_ns)
{
	struct rbln_isa_operand c;

	if (!npu_stream_begin(s))
		return;
	if (npu_stream_operand(s, &c, sem, NPU_ACCESS_READ, offset,
			       sizeof(uint64_t), "npu_stream_sem_wait sem"))
		isa_encode_sem_wait(&s->enc, c, (enum rbln_isa_sem_cond)cond,
				    value, timeout_ns);
	npu_stream_end(s);
}

void npu_stream_add_f32(npu_stream *s, npu_buffer *dst, uint64_t dst_offset,
			npu_buffer *a, uint64_t a_offset, npu_buffer *b,
			uint64_t b_offset, uint64_t count)
{
	struct rbln_isa_operand d, x, y;
	uint64_t bytes = count * sizeof(float);

	if (!npu_stream_begin(s))
		return;
	if (count > UINT64_MAX / sizeof(float)) {
		npu_stream_set_error(s, npu_fail(-EINVAL,
			"npu_stream_add_f32: %llu elements overflow",
			(unsigned long long)count));
	} else if (npu_stream_operand(s, &d, dst, NPU_ACCESS_WRITE, dst_offset,
				      bytes, "npu_stream_add_f32 dst") &&
		   npu_stream_operand(s, &x, a, NPU_ACCESS_READ, a_offset,
				      bytes, "npu_stream_add_f32 a") &&
		   npu_stream_operand(s, &y, b, NPU_ACCESS_READ, b_offset,
				      bytes, "npu_stream_add_f32 b")) {
		isa_encode_add(&s->enc, d, x, y);
	}
	npu_stream_end(s);
}

void npu_stream_raw(npu_stream *s, const void *cmd, size_t size)
{
	if (!npu_stream_begin(s))
		return;
	if (!cmd || size == 0 || size % RBLN_ISA_ALIGN)
		npu_stream_set_error(s, npu_fail(-EINVAL,
			"npu_stream_raw: %s", !cmd ? "command is NULL" :
			"size is not a non-zero multiple of 8"));
	else
		isa_encode_raw(&s->enc, cmd, size);
	npu_stream_end(s);
}
