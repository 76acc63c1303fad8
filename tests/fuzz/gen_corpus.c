// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * gen_corpus.c - writes the seed corpus of fuzz_model.c: small valid
 * streams of every opcode (and a few invalid ones) with their buffer
 * lists, in the input format described in fuzz_model.c.
 *
 *   cc -I uapi -I driver/model tests/fuzz/gen_corpus.c -o gen_corpus
 *   ./gen_corpus tests/fuzz/corpus
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

/* Any compute command, as its struct. */
#define cmd(s, c) put((s), &(c), sizeof(c))

/* A 32-bit value at one offset: index data of the compute seeds. */
static void set32(struct seed *s, uint32_t bo, uint64_t off, uint32_t v)
{
	fill(s, OPND(bo, off, 4), v);
}

/*
 * Seeds of the compute opcodes: small shapes (the fuzzer runs each input
 * thousands of times), index data written by FILL first so that the
 * kernels run rather than fault, and one split over four engines.
 */
static void compute_seeds(struct seed *s, const char *dir)
{
	uint32_t sz[4];
	uint8_t ac[4];

	/* EMBED: 4 tokens of 8 from a bfloat16 table; ids at 256. */
	sz[0] = 512; ac[0] = RW;
	sz[1] = 160; ac[1] = RBLN_MODEL_READ;
	begin(s, 0, 2, sz, ac);
	fill(s, OPND(0, 256, 16), 1);
	set32(s, 0, 260, 9);
	{
		struct rbln_isa_embed c = {
			.hdr = { .opcode = RBLN_OP_EMBED, .size = sizeof(c) },
			.dst = OPND(0, 0, 128), .table = OPND(1, 0, 160),
			.ids = OPND(0, 256, 16), .dtype = RBLN_DTYPE_BF16,
			.dim = 8,
		};
		struct rbln_isa_embed z = c;

		cmd(s, c);
		z.hdr.flags = RBLN_EMBED_ZERO_OUTSIDE;
		z.dtype = RBLN_DTYPE_F32;
		z.table.size = 128;
		z.id_base = 2;
		cmd(s, z);
	}
	finish(s, dir, "embed");

	/* RMSNORM: out of place with float16 weights, then in place. */
	sz[0] = 256; ac[0] = RW;
	sz[1] = 64; ac[1] = RBLN_MODEL_READ;
	begin(s, 0, 2, sz, ac);
	{
		struct rbln_isa_rmsnorm c = {
			.hdr = { .opcode = RBLN_OP_RMSNORM, .size = sizeof(c) },
			.dst = OPND(0, 128, 120), .src = OPND(0, 0, 120),
			.weight = OPND(1, 2, 20), .dtype = RBLN_DTYPE_F16,
			.dim = 10, .eps = 0x3727c5ac,
		};

		cmd(s, c);
		c.src = c.dst;
		c.dtype = RBLN_DTYPE_F32;
		c.weight = OPND(1, 0, 40);
		cmd(s, c);
	}
	finish(s, dir, "rmsnorm");

	/* MATMUL: packed bfloat16 3x5 . 20 cols, then row-major f32, +=, then int8. */
	sz[0] = 1024; ac[0] = RW;
	sz[1] = 1024; ac[1] = RBLN_MODEL_READ;
	begin(s, 0, 2, sz, ac);
	{
		struct rbln_isa_matmul c = {
			.hdr = { .opcode = RBLN_OP_MATMUL, .size = sizeof(c) },
			.dst = OPND(0, 0, 3 * 20 * 4), .a = OPND(1, 0, 60),
			.w = OPND(1, 64, 2 * 5 * 16 * 2),
			.dtype = RBLN_DTYPE_BF16,
			.layout = RBLN_LAYOUT_PACKED16, .k = 5, .n = 20,
		};

		cmd(s, c);
		c.hdr.flags = RBLN_MATMUL_ACCUMULATE;
		c.w = OPND(1, 400, 20 * 5 * 4);
		c.dtype = RBLN_DTYPE_F32;
		c.layout = RBLN_LAYOUT_ROWMAJOR;
		cmd(s, c);
		/* int8: packed with 32 scales after the panels, row-major at an odd offset. */
		c.w = OPND(1, 64, 2 * 5 * 16 + 32 * 4);
		c.dtype = RBLN_DTYPE_I8;
		c.layout = RBLN_LAYOUT_PACKED16;
		cmd(s, c);
		c.w = OPND(1, 401, 20 * 5 + 32 * 4);
		c.layout = RBLN_LAYOUT_ROWMAJOR;
		cmd(s, c);
	}
	finish(s, dir, "matmul");

	/* MATMUL, spaced panels (ISA 1.4): bfloat16, then int8 with its scales. */
	sz[0] = 1024; ac[0] = RW;
	sz[1] = 8192; ac[1] = RBLN_MODEL_READ;
	begin(s, 0, 2, sz, ac);
	{
		struct rbln_isa_matmul c = {
			.hdr = { .opcode = RBLN_OP_MATMUL, .size = sizeof(c) },
			.dst = OPND(0, 0, 3 * 20 * 4), .a = OPND(1, 0, 60),
			.w = OPND(1, 64, 2 * (5 * 16 * 2 + RBLN_ISA_PANEL_GAP)),
			.dtype = RBLN_DTYPE_BF16,
			.layout = RBLN_LAYOUT_PACKED16_SPACED, .k = 5, .n = 20,
		};

		cmd(s, c);
		c.w = OPND(1, 64, 2 * (5 * 16 + RBLN_ISA_PANEL_GAP) + 32 * 4);
		c.dtype = RBLN_DTYPE_I8;
		cmd(s, c);
	}
	finish(s, dir, "matmul-spaced");

	/* MATMUL over 4 engines: 2 row blocks x 2 panel groups. */
	sz[0] = 3200; ac[0] = RW | SCALE64;	/* 200 x 256 floats */
	sz[1] = 800; ac[1] = RBLN_MODEL_READ | SCALE64;
	sz[2] = 1024; ac[2] = RBLN_MODEL_READ | SCALE64;
	begin(s, 0x20, 3, sz, ac);
	{
		struct rbln_isa_matmul c = {
			.hdr = { .opcode = RBLN_OP_MATMUL, .size = sizeof(c) },
			.dst = OPND(0, 0, 200 * 256 * 4),
			.a = OPND(1, 0, 200 * 64 * 4),
			.w = OPND(2, 0, 256 * 64 * 4),
			.dtype = RBLN_DTYPE_F32,
			.layout = RBLN_LAYOUT_PACKED16, .k = 64, .n = 256,
		};

		cmd(s, c);
	}
	finish(s, dir, "matmul-engines");

	/* ROPE, llama3, 3 tokens of 2 heads x 8 with a gap; pos at 512. */
	sz[0] = 640; ac[0] = RW;
	begin(s, 0, 1, sz, ac);
	fill(s, OPND(0, 512, 12), 7);
	set32(s, 0, 520, 100000);
	{
		struct rbln_isa_rope c = {
			.hdr = { .opcode = RBLN_OP_ROPE, .size = sizeof(c) },
			.x = OPND(0, 0, (2 * 20 + 16) * 4),
			.pos = OPND(0, 512, 12), .heads = 2, .head_dim = 8,
			.stride = 20, .scaling = RBLN_ROPE_SCALING_LLAMA3,
			.theta = 0x48f42400, .factor = 0x41000000,
			.low_freq_factor = 0x3f800000,
			.high_freq_factor = 0x40800000,
			.original_max_pos = 8192,
		};

		cmd(s, c);
	}
	finish(s, dir, "rope");

	/* SWIGLU from a fused [2, 2 x 9] gate_up. */
	sz[0] = 256; ac[0] = RW;
	begin(s, 0, 1, sz, ac);
	{
		struct rbln_isa_swiglu c = {
			.hdr = { .opcode = RBLN_OP_SWIGLU, .size = sizeof(c) },
			.dst = OPND(0, 160, 72), .gate = OPND(0, 0, 108),
			.up = OPND(0, 36, 108), .n = 9, .gate_stride = 18,
			.up_stride = 18,
		};

		cmd(s, c);
	}
	finish(s, dir, "swiglu");

	/* KV_WRITE: 3 tokens into 2 blocks of 2 slots; slots at 256. */
	sz[0] = 512; ac[0] = RW;
	sz[1] = 256; ac[1] = RW;
	begin(s, 0, 2, sz, ac);
	set32(s, 0, 256, 3);
	set32(s, 0, 260, 0xffffffff);
	set32(s, 0, 264, 0);
	{
		struct rbln_isa_kv_write c = {
			.hdr = { .opcode = RBLN_OP_KV_WRITE, .size = sizeof(c) },
			.k_cache = OPND(1, 0, 64), .v_cache = OPND(1, 64, 64),
			.k = OPND(0, 0, 3 * 8 * 4), .v = OPND(0, 96, 96),
			.slots = OPND(0, 256, 12), .dtype = RBLN_DTYPE_BF16,
			.block_size = 2, .kv_heads = 1, .head_dim = 8,
			.k_stride = 8, .v_stride = 8,
		};

		cmd(s, c);
		c.dtype = RBLN_DTYPE_F16;
		cmd(s, c);
		c.hdr.flags = RBLN_KV_HEAD_MAJOR;
		cmd(s, c);
	}
	finish(s, dir, "kv-write");

	/*
	 * ATTENTION: 2 rows, 2 query heads over 1 KV head of 8; a cache of
	 * 3 blocks of 2 in bfloat16; one sequence {0, 2, 5, 0} and block
	 * table {2, 0, 1} written first; partitions of 3.
	 */
	sz[0] = 1024; ac[0] = RW;
	sz[1] = 1024; ac[1] = RW;
	begin(s, 0, 2, sz, ac);
	set32(s, 1, 512, 0);
	set32(s, 1, 516, 2);
	set32(s, 1, 520, 5);
	set32(s, 1, 524, 0);
	set32(s, 1, 528, 2);
	set32(s, 1, 532, 0);
	set32(s, 1, 536, 1);
	{
		struct rbln_isa_attention c = {
			.hdr = { .opcode = RBLN_OP_ATTENTION,
				 .size = sizeof(c) },
			.out = OPND(0, 0, 2 * 16 * 4),
			.q = OPND(1, 0, 2 * 16 * 4),
			.k_cache = OPND(1, 128, 3 * 2 * 8 * 2),
			.v_cache = OPND(1, 256, 3 * 2 * 8 * 2),
			.seqs = OPND(1, 512, 16),
			.block_tables = OPND(1, 528, 12),
			.work = OPND(0, 128, 2 * 2 * 2 * 10 * 4),
			.dtype = RBLN_DTYPE_BF16, .block_size = 2,
			.q_heads = 2, .kv_heads = 1, .head_dim = 8,
			.q_stride = 16, .max_blocks = 3, .partition_len = 3,
			.scale = 0x3eb504f3,
		};

		cmd(s, c);
		c.hdr.flags = RBLN_KV_HEAD_MAJOR;
		cmd(s, c);
	}
	finish(s, dir, "attention");

	/* ARGMAX and TOPK over 3 rows of 11. */
	sz[0] = 256; ac[0] = RW;
	sz[1] = 192; ac[1] = RBLN_MODEL_READ;
	begin(s, 0, 2, sz, ac);
	{
		struct rbln_isa_argmax a = {
			.hdr = { .opcode = RBLN_OP_ARGMAX, .size = sizeof(a) },
			.values = OPND(0, 0, 12), .indices = OPND(0, 16, 12),
			.src = OPND(1, 0, 132), .n = 11, .index_base = 5,
		};
		struct rbln_isa_topk t = {
			.hdr = { .opcode = RBLN_OP_TOPK, .size = sizeof(t) },
			.values = OPND(0, 32, 48), .indices = OPND(0, 96, 48),
			.src = OPND(1, 0, 132), .n = 11, .k = 4,
		};

		cmd(s, a);
		cmd(s, t);
	}
	finish(s, dir, "argmax-topk");
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

	compute_seeds(&s, dir);
	return 0;
}
