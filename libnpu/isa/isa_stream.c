// SPDX-License-Identifier: MIT
/*
 * The stream an encoder writes into: memory that doubles as it fills, a
 * header whose size field always matches (so the bytes are a valid stream
 * after every command, as libnpu's npu_stream_data() promises) and whose
 * minor version is the least its commands need, a size limit, and a
 * sticky error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "isa_encode.h"

/* Streams start small and double; most are a few commands long. */
#define ISA_STREAM_INITIAL_CAPACITY 4096
/* The header's size field is 32 bits wide, whatever the consumer allows. */
#define ISA_STREAM_MAX_SIZE ((uint64_t)UINT32_MAX / RBLN_ISA_ALIGN * RBLN_ISA_ALIGN)

static void write_header(struct isa_stream *s)
{
	struct rbln_isa_stream_header hdr = {
		.magic = RBLN_ISA_MAGIC,
		.version_major = RBLN_ISA_VERSION_MAJOR,
		.version_minor = s->minor,
		.size = (uint32_t)s->size,
		.flags = 0,
	};

	memcpy(s->data, &hdr, sizeof(hdr));
}

/*
 * The least ISA minor version that gives one command its meaning; the
 * current one for what this encoder does not know (an opcode, flag or
 * weight type of a later ISA, a command too short for its opcode: the
 * device judges those).
 */
static uint16_t cmd_minor(const uint8_t *cmd, const struct rbln_isa_cmd *hdr)
{
	const uint16_t current = RBLN_ISA_VERSION_MINOR;
	struct rbln_isa_matmul mm;

	switch (hdr->opcode) {
	case RBLN_OP_NOP:
	case RBLN_OP_BARRIER:
	case RBLN_OP_FILL:
	case RBLN_OP_COPY:
	case RBLN_OP_SEM_SIGNAL:
	case RBLN_OP_SEM_WAIT:
	case RBLN_OP_ADD:
		return hdr->flags ? current : 0;
	case RBLN_OP_RMSNORM:
	case RBLN_OP_ROPE:
	case RBLN_OP_SWIGLU:
	case RBLN_OP_ARGMAX:
	case RBLN_OP_TOPK:
		return hdr->flags ? current : 1;
	case RBLN_OP_EMBED:
		return hdr->flags & ~RBLN_EMBED_ZERO_OUTSIDE ? current : 1;
	case RBLN_OP_KV_WRITE:
	case RBLN_OP_ATTENTION:
		if (hdr->flags & ~RBLN_KV_HEAD_MAJOR)
			return current;
		return hdr->flags & RBLN_KV_HEAD_MAJOR ? 2 : 1;
	case RBLN_OP_MATMUL:
		if (hdr->size < sizeof(mm) ||
		    hdr->flags & ~(RBLN_MATMUL_ACCUMULATE | RBLN_MATMUL_A_BF16))
			return current;
		memcpy(&mm, cmd, sizeof(mm));
		if (mm.layout == RBLN_LAYOUT_PACKED16_SPACED)
			return 4;
		if (hdr->flags & RBLN_MATMUL_A_BF16)
			return 3;
		if (mm.dtype == RBLN_DTYPE_I8)
			return 2;
		return mm.dtype <= RBLN_DTYPE_BF16 ? 1 : current;
	default:
		return current;
	}
}

/* The least minor version of @size bytes of whole commands. */
static uint16_t cmds_minor(const uint8_t *p, size_t size)
{
	struct rbln_isa_cmd hdr;
	uint16_t minor = 0, m;

	while (size) {
		if (size < sizeof(hdr))
			return RBLN_ISA_VERSION_MINOR;
		memcpy(&hdr, p, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > size ||
		    hdr.size % RBLN_ISA_ALIGN)
			return RBLN_ISA_VERSION_MINOR;
		m = cmd_minor(p, &hdr);
		if (m > minor)
			minor = m;
		p += hdr.size;
		size -= hdr.size;
	}
	return minor;
}

int isa_stream_init(struct isa_stream *s, uint64_t limit)
{
	memset(s, 0, sizeof(*s));
	s->limit = (size_t)(limit < ISA_STREAM_MAX_SIZE ? limit : ISA_STREAM_MAX_SIZE);
	s->data = malloc(ISA_STREAM_INITIAL_CAPACITY);
	if (!s->data) {
		s->error = -ENOMEM;
		return -ENOMEM;
	}
	s->capacity = ISA_STREAM_INITIAL_CAPACITY;
	s->size = sizeof(struct rbln_isa_stream_header);
	write_header(s);
	return 0;
}

void isa_stream_free(struct isa_stream *s)
{
	free(s->data);
	memset(s, 0, sizeof(*s));
}

void isa_stream_reset(struct isa_stream *s)
{
	if (!s->data)
		return;
	s->size = sizeof(struct rbln_isa_stream_header);
	s->error = 0;
	s->minor = 0;
	write_header(s);
}

void isa_encode_raw(struct isa_stream *s, const void *cmd, size_t size)
{
	uint16_t minor;

	if (s->error)
		return;
	if (size > s->limit || s->size > s->limit - size) {
		s->error = -E2BIG;
		return;
	}
	if (s->size + size > s->capacity) {
		size_t capacity = s->capacity;
		uint8_t *grown;

		while (capacity < s->size + size)
			capacity *= 2;
		grown = realloc(s->data, capacity);
		if (!grown) {
			s->error = -ENOMEM;
			return;
		}
		s->data = grown;
		s->capacity = capacity;
	}
	memcpy(s->data + s->size, cmd, size);
	s->size += size;
	minor = cmds_minor(cmd, size);
	if (minor > s->minor)
		s->minor = minor;
	write_header(s);
}
