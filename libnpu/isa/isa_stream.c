// SPDX-License-Identifier: MIT
/*
 * The stream an encoder writes into: memory that doubles as it fills, a
 * header whose size field always matches (so the bytes are a valid stream
 * after every command, as libnpu's npu_stream_data() promises), a size
 * limit, and a sticky error.
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
		.version_minor = RBLN_ISA_VERSION_MINOR,
		.size = (uint32_t)s->size,
		.flags = 0,
	};

	memcpy(s->data, &hdr, sizeof(hdr));
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
	write_header(s);
}

void isa_encode_raw(struct isa_stream *s, const void *cmd, size_t size)
{
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
	write_header(s);
}
