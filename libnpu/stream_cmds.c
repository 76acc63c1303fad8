// SPDX-License-Identifier: MIT
/*
 * One builder function per opcode: each names its buffers in the stream's
 * buffer list with the access the opcode needs and appends the command as
 * uapi/rbln_isa.h lays it out. Ranges are not checked here: the device
 * validates the whole stream at submission and names the offending
 * command, so there is one source of truth for what is valid.
 */
#include <errno.h>
#include <string.h>

#include "stream_internal.h"

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
	pthread_mutex_unlock(&s->lock);
}

static struct rbln_isa_cmd header(enum rbln_isa_opcode opcode, size_t size)
{
	return (struct rbln_isa_cmd){ .opcode = (uint16_t)opcode,
				      .size = (uint16_t)size };
}

/* An operand naming @buf; false when the buffer list refused it. */
bool npu_stream_operand(npu_stream *s, struct rbln_isa_operand *op,
			npu_buffer *buf, uint32_t access, uint64_t offset,
			uint64_t size, const char *what)
{
	uint32_t index = npu_stream_use(s, buf, access, what);

	if (index == NPU_STREAM_NO_BUFFER)
		return false;
	*op = (struct rbln_isa_operand){ .bo = index, .offset = offset,
					 .size = size };
	return true;
}

void npu_stream_nop(npu_stream *s)
{
	if (!npu_stream_begin(s))
		return;
	struct rbln_isa_cmd cmd = header(RBLN_OP_NOP, sizeof(cmd));

	npu_stream_append(s, &cmd, sizeof(cmd));
	npu_stream_end(s);
}

void npu_stream_barrier(npu_stream *s)
{
	if (!npu_stream_begin(s))
		return;
	struct rbln_isa_cmd cmd = header(RBLN_OP_BARRIER, sizeof(cmd));

	npu_stream_append(s, &cmd, sizeof(cmd));
	npu_stream_end(s);
}

void npu_stream_fill(npu_stream *s, npu_buffer *dst, uint64_t offset,
		     uint64_t size, uint32_t value)
{
	if (!npu_stream_begin(s))
		return;
	struct rbln_isa_fill cmd = {
		.hdr = header(RBLN_OP_FILL, sizeof(cmd)),
		.value = value,
	};

	if (npu_stream_operand(s, &cmd.dst, dst, NPU_ACCESS_WRITE, offset, size,
		    "npu_stream_fill dst"))
		npu_stream_append(s, &cmd, sizeof(cmd));
	npu_stream_end(s);
}

void npu_stream_copy(npu_stream *s, npu_buffer *dst, uint64_t dst_offset,
		     npu_buffer *src, uint64_t src_offset, uint64_t size)
{
	if (!npu_stream_begin(s))
		return;
	struct rbln_isa_copy cmd = { .hdr = header(RBLN_OP_COPY, sizeof(cmd)) };

	if (npu_stream_operand(s, &cmd.dst, dst, NPU_ACCESS_WRITE, dst_offset, size,
		    "npu_stream_copy dst") &&
	    npu_stream_operand(s, &cmd.src, src, NPU_ACCESS_READ, src_offset, size,
		    "npu_stream_copy src"))
		npu_stream_append(s, &cmd, sizeof(cmd));
	npu_stream_end(s);
}

void npu_stream_sem_signal(npu_stream *s, npu_buffer *sem, uint64_t offset,
			   enum npu_sem_op op, uint64_t value)
{
	if (!npu_stream_begin(s))
		return;
	struct rbln_isa_sem_signal cmd = {
		.hdr = header(RBLN_OP_SEM_SIGNAL, sizeof(cmd)),
		.op = (uint32_t)op,
		.value = value,
	};

	if (npu_stream_operand(s, &cmd.sem, sem, NPU_ACCESS_WRITE, offset,
		    sizeof(uint64_t), "npu_stream_sem_signal sem"))
		npu_stream_append(s, &cmd, sizeof(cmd));
	npu_stream_end(s);
}

void npu_stream_sem_wait(npu_stream *s, npu_buffer *sem, uint64_t offset,
			 enum npu_sem_cond cond, uint64_t value,
			 uint64_t timeout_ns)
{
	if (!npu_stream_begin(s))
		return;
	struct rbln_isa_sem_wait cmd = {
		.hdr = header(RBLN_OP_SEM_WAIT, sizeof(cmd)),
		.cond = (uint32_t)cond,
		.value = value,
		.timeout_ns = timeout_ns,
	};

	if (npu_stream_operand(s, &cmd.sem, sem, NPU_ACCESS_READ, offset,
		    sizeof(uint64_t), "npu_stream_sem_wait sem"))
		npu_stream_append(s, &cmd, sizeof(cmd));
	npu_stream_end(s);
}

void npu_stream_add_f32(npu_stream *s, npu_buffer *dst, uint64_t dst_offset,
			npu_buffer *a, uint64_t a_offset, npu_buffer *b,
			uint64_t b_offset, uint64_t count)
{
	if (!npu_stream_begin(s))
		return;
	struct rbln_isa_add cmd = { .hdr = header(RBLN_OP_ADD, sizeof(cmd)) };
	uint64_t bytes = count * sizeof(float);

	if (count > UINT64_MAX / sizeof(float)) {
		npu_stream_set_error(s, npu_fail(-EINVAL,
			"npu_stream_add_f32: %llu elements overflow",
			(unsigned long long)count));
	} else if (npu_stream_operand(s, &cmd.dst, dst, NPU_ACCESS_WRITE, dst_offset, bytes,
			   "npu_stream_add_f32 dst") &&
		   npu_stream_operand(s, &cmd.a, a, NPU_ACCESS_READ, a_offset, bytes,
			   "npu_stream_add_f32 a") &&
		   npu_stream_operand(s, &cmd.b, b, NPU_ACCESS_READ, b_offset, bytes,
			   "npu_stream_add_f32 b")) {
		npu_stream_append(s, &cmd, sizeof(cmd));
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
		npu_stream_append(s, cmd, size);
	npu_stream_end(s);
}
