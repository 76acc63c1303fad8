// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gen_corpus.c - writes the seed corpus of fuzz_model.c: small valid
 * streams of every opcode (and a few invalid ones) with their buffer
 * lists, in the input format described in fuzz_model.c.
 *
 *   gen_corpus DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbln_model.h"

struct seed {
	uint8_t buf[8192];
	size_t len;
	size_t stream;	/* offset of the stream header in buf */
};

#define RW	(RBLN_MODEL_READ | RBLN_MODEL_WRITE)
#define SCALE64	4	/* size in 64-byte units */
#define UNMAPPED 8

#define OPND(b, off, sz) \
	((struct rbln_isa_operand){ .bo = (b), .offset = (off), .size = (sz) })

static void put(struct seed *s, const void *p, size_t n)
{
	if (s->len + n > sizeof(s->buf))
		abort();
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

/* flags: fuzz_model.c byte 0 bits 4-5; then (size, access) per buffer. */
static void begin(struct seed *s, uint8_t flags, uint32_t nbos,
		  const uint32_t *sizes, const uint8_t *access)
{
	struct rbln_isa_stream_header hdr = {
		.magic = RBLN_ISA_MAGIC,
		.version_major = RBLN_ISA_VERSION_MAJOR,
		.version_minor = RBLN_ISA_VERSION_MINOR,
	};
	uint8_t b0 = (uint8_t)(nbos | flags);
	uint8_t d[4];

	s->len = 0;
	put(s, &b0, 1);
	for (uint32_t i = 0; i < nbos; i++) {
		d[0] = (uint8_t)sizes[i];
		d[1] = (uint8_t)(sizes[i] >> 8);
		d[2] = access[i];
		d[3] = 0;
		put(s, d, 4);
	}
	s->stream = s->len;
	put(s, &hdr, sizeof(hdr));
}

static void finish(struct seed *s, const char *dir, const char *name)
{
	struct rbln_isa_stream_header hdr;
	char path[4096];
	FILE *f;

	memcpy(&hdr, s->buf + s->stream, sizeof(hdr));
	hdr.size = (uint32_t)(s->len - s->stream);
	memcpy(s->buf + s->stream, &hdr, sizeof(hdr));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(s->buf, 1, s->len, f) != s->len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void nop(struct seed *s, uint16_t size)
{
	uint8_t body[RBLN_ISA_CMD_MAX_SIZE] = { 0 };
	struct rbln_isa_cmd c = { .opcode = RBLN_OP_NOP, .size = size };

	memcpy(body, &c, sizeof(c));
	put(s, body, size);
}

static void barrier(struct seed *s)
{
	struct rbln_isa_cmd c = { .opcode = RBLN_OP_BARRIER, .size = 8 };

	put(s, &c, sizeof(c));
}

static void fill(struct seed *s, struct rbln_isa_operand dst, uint32_t v)
{
	struct rbln_isa_fill c = {
		.hdr = { .opcode = RBLN_OP_FILL, .size = sizeof(c) },
		.dst = dst, .value = v,
	};

	put(s, &c, sizeof(c));
}

static void copy(struct seed *s, struct rbln_isa_operand dst,
		 struct rbln_isa_operand src)
{
	struct rbln_isa_copy c = {
		.hdr = { .opcode = RBLN_OP_COPY, .size = sizeof(c) },
		.dst = dst, .src = src,
	};

	put(s, &c, sizeof(c));
}

static void sig(struct seed *s, struct rbln_isa_operand sem, uint32_t op,
		uint64_t v)
{
	struct rbln_isa_sem_signal c = {
		.hdr = { .opcode = RBLN_OP_SEM_SIGNAL, .size = sizeof(c) },
		.sem = sem, .op = op, .value = v,
	};

	put(s, &c, sizeof(c));
}

static void wait_cmd(struct seed *s, struct rbln_isa_operand sem,
		     uint32_t cond, uint64_t v, uint64_t timeout)
{
	struct rbln_isa_sem_wait c = {
		.hdr = { .opcode = RBLN_OP_SEM_WAIT, .size = sizeof(c) },
		.sem = sem, .cond = cond, .value = v, .timeout_ns = timeout,
	};

	put(s, &c, sizeof(c));
}

static void add(struct seed *s, struct rbln_isa_operand dst,
		struct rbln_isa_operand a, struct rbln_isa_operand b)
{
	struct rbln_isa_add c = {
		.hdr = { .opcode = RBLN_OP_ADD, .size = sizeof(c) },
		.dst = dst, .a = a, .b = b,
	};

	put(s, &c, sizeof(c));
}

int main(int argc, char **argv)
{
	static struct seed s;
	const char *dir = argc > 1 ? argv[1] : ".";
	uint32_t sz[4];
	uint8_t ac[4];

	begin(&s, 0, 0, NULL, NULL);
	nop(&s, 8);
	nop(&s, 64);
	barrier(&s);
	finish(&s, dir, "nop-barrier");

	sz[0] = 256; ac[0] = RW;
	begin(&s, 0, 1, sz, ac);
	fill(&s, OPND(0, 0, 256), 0x3f800000);
	fill(&s, OPND(0, 4, 8), 0x01010101);
	finish(&s, dir, "fill");

	sz[0] = 100; ac[0] = RBLN_MODEL_WRITE;
	sz[1] = 100; ac[1] = RBLN_MODEL_READ;
	begin(&s, 0x10, 2, sz, ac);
	copy(&s, OPND(0, 1, 97), OPND(1, 3, 97));
	copy(&s, OPND(0, 99, 1), OPND(1, 0, 1));
	finish(&s, dir, "copy");

	sz[0] = 128; ac[0] = RW;
	begin(&s, 0, 1, sz, ac);
	copy(&s, OPND(0, 5, 100), OPND(0, 0, 100));
	copy(&s, OPND(0, 0, 100), OPND(0, 27, 100));
	finish(&s, dir, "copy-overlap");

	sz[0] = 64; ac[0] = RW;
	begin(&s, 0, 1, sz, ac);
	sig(&s, OPND(0, 0, 8), RBLN_SEM_SET, 5);
	sig(&s, OPND(0, 0, 8), RBLN_SEM_ADD, UINT64_MAX);
	wait_cmd(&s, OPND(0, 0, 8), RBLN_SEM_EQ, 4, 1000);
	wait_cmd(&s, OPND(0, 56, 8), RBLN_SEM_GEQ, 0,
		 RBLN_ISA_SEM_WAIT_MAX_NS);
	finish(&s, dir, "sem");

	sz[0] = 16; ac[0] = RBLN_MODEL_READ;
	begin(&s, 0, 1, sz, ac);
	wait_cmd(&s, OPND(0, 8, 8), RBLN_SEM_EQ, 12345, 1);
	barrier(&s);
	finish(&s, dir, "sem-timeout");

	sz[0] = 1024; ac[0] = RW;
	sz[1] = 512; ac[1] = RBLN_MODEL_READ;
	begin(&s, 0, 2, sz, ac);
	add(&s, OPND(0, 0, 508), OPND(1, 0, 508), OPND(1, 4, 508));
	add(&s, OPND(0, 0, 508), OPND(0, 0, 508), OPND(1, 0, 508));
	add(&s, OPND(0, 512, 36), OPND(0, 512, 36), OPND(0, 512, 36));
	finish(&s, dir, "add");

	/* 2 MiB, 4 engines: x = x + x over 2 MiB, split in 2 parts; then
	 * FILL and COPY across a 1 MiB DMA chunk boundary. */
	sz[0] = 32768; ac[0] = RW | SCALE64;
	begin(&s, 0x20, 1, sz, ac);
	add(&s, OPND(0, 0, 2 << 20), OPND(0, 0, 2 << 20),
	    OPND(0, 0, 2 << 20));
	fill(&s, OPND(0, 4, (1 << 20) + 8), 0x40490fdb);
	copy(&s, OPND(0, 3, (1 << 20) + 9), OPND(0, 0, (1 << 20) + 9));
	finish(&s, dir, "add-engines");

	sz[0] = 256; ac[0] = RW;
	sz[1] = 256; ac[1] = RBLN_MODEL_READ;
	sz[2] = 64; ac[2] = RBLN_MODEL_WRITE;
	begin(&s, 0, 3, sz, ac);
	nop(&s, 16);
	fill(&s, OPND(0, 0, 128), 7);
	copy(&s, OPND(2, 0, 64), OPND(1, 1, 64));
	sig(&s, OPND(0, 248, 8), RBLN_SEM_ADD, 1);
	wait_cmd(&s, OPND(0, 248, 8), RBLN_SEM_GEQ, 1, 10);
	add(&s, OPND(0, 128, 64), OPND(1, 0, 64), OPND(0, 0, 64));
	barrier(&s);
	finish(&s, dir, "all-opcodes");

	sz[0] = 64; ac[0] = RW;
	sz[1] = 64; ac[1] = RW | UNMAPPED;
	begin(&s, 0, 2, sz, ac);
	fill(&s, OPND(0, 0, 64), 1);
	copy(&s, OPND(0, 0, 8), OPND(1, 0, 8));
	finish(&s, dir, "unmapped");

	/* Rejected streams, so that the error paths are in the corpus. */
	sz[0] = 64; ac[0] = RBLN_MODEL_READ;
	begin(&s, 0, 1, sz, ac);
	fill(&s, OPND(0, 60, 8), 1);
	finish(&s, dir, "bad-bounds-access");

	begin(&s, 0, 1, sz, ac);
	add(&s, OPND(0, 4, 16), OPND(0, 0, 16), OPND(0, 0, 16));
	finish(&s, dir, "bad-overlap");

	begin(&s, 0, 1, sz, ac);
	nop(&s, 32);
	s.len -= 8;
	finish(&s, dir, "bad-truncated");
	return 0;
}
