// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_validate.c - rbln_model_validate(): every rejection reason with its
 * exact diagnostic (reason, command index, byte offset, opcode, operand),
 * the documented order of checks, the boundaries that must be accepted, and
 * truncation of a valid stream at every length.
 */
#include "model_test.h"

/* The command sizes are ABI (rbln_isa.h); the validator relies on them. */
_Static_assert(sizeof(struct rbln_isa_stream_header) == 16, "isa header");
_Static_assert(sizeof(struct rbln_isa_cmd) == 8, "isa cmd");
_Static_assert(sizeof(struct rbln_isa_operand) == 24, "isa operand");
_Static_assert(sizeof(struct rbln_isa_fill) == 40, "isa fill");
_Static_assert(sizeof(struct rbln_isa_copy) == 56, "isa copy");
_Static_assert(sizeof(struct rbln_isa_sem_signal) == 48, "isa sem signal");
_Static_assert(sizeof(struct rbln_isa_sem_wait) == 56, "isa sem wait");
_Static_assert(sizeof(struct rbln_isa_add) == 80, "isa add");
/* Homes copy the diagnostic into drm_rbln_submit_diag as is. */
_Static_assert(sizeof(struct rbln_model_diag) == 16, "diag layout");
/* Every command offset fits rbln_model_diag.cmd_offset. */
_Static_assert(RBLN_MODEL_MAX_STREAM_SIZE <= 0xffffffffULL, "stream cap");

#define RW	(RBLN_MODEL_READ | RBLN_MODEL_WRITE)
#define RO	RBLN_MODEL_READ
#define WO	RBLN_MODEL_WRITE
#define NONE	RBLN_ISA_NO_INDEX

/* Validation never looks at contents: no mappings at all. */
static const struct rbln_model_bo bos[] = {
	{ .size = 4096, .access = RW },
	{ .size = 4096, .access = RO },
	{ .size = 4096, .access = WO },
	{ .size = 64, .access = RW },
};

#define NBOS 4

static void expect_valid(struct sb *sb)
{
	struct rbln_model_diag diag;
	int misalign;

	for (misalign = 0; misalign < 2; misalign++) {
		memset(&diag, 0xa5, sizeof(diag));
		if (validate_copy(sb->buf, sb->len, bos, NBOS, &diag, misalign))
			fail_msg("rejected: %s at command %u operand %u",
				 rbln_model_error_str(diag.reason),
				 diag.cmd_index, diag.operand);
		assert_int_equal(diag.reason, RBLN_ISA_OK);
		assert_int_equal(diag.cmd_index, 0);
		assert_int_equal(diag.cmd_offset, 0);
		assert_int_equal(diag.opcode, 0);
		assert_int_equal(diag.operand, 0);
	}
}

/* One valid command of every opcode, in one stream. */
static void build_all(struct sb *sb)
{
	sb_init(sb);
	sb_nop(sb, 8);
	sb_nop(sb, 32);
	sb_barrier(sb);
	sb_fill(sb, OPND(0, 0, 4096), 0x12345678);
	sb_copy(sb, OPND(2, 1, 3), OPND(1, 4093, 3));
	sb_signal(sb, OPND(0, 8, 8), RBLN_SEM_ADD, 1);
	sb_wait(sb, OPND(1, 4088, 8), RBLN_SEM_EQ, 1, 1);
	sb_add(sb, OPND(0, 0, 64), OPND(1, 64, 64), OPND(3, 0, 64));
}

static void test_valid_streams(void **state)
{
	struct sb sb;

	(void)state;
	build_all(&sb);
	expect_valid(&sb);
	sb_free(&sb);

	/* A header alone is an empty job. */
	sb_init(&sb);
	expect_valid(&sb);
	sb_free(&sb);
}

static void test_validate_null_diag(void **state)
{
	struct sb sb;

	(void)state;
	build_all(&sb);
	assert_int_equal(rbln_model_validate(sb.buf, sb.len, bos, NBOS, NULL),
			 0);
	sb.buf[0] ^= 1;
	assert_int_equal(rbln_model_validate(sb.buf, sb.len, bos, NBOS, NULL),
			 -RBLN_EINVAL);
	sb_free(&sb);
}

static void test_err_stream_size(void **state)
{
	static const size_t lens[] = { 0, 8, 15, 20, 36 };
	struct rbln_model_diag diag;
	struct sb sb;
	size_t i;
	uint8_t *big;

	(void)state;
	sb_init(&sb);
	sb_nop(&sb, 24);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		memset(&diag, 0xa5, sizeof(diag));
		assert_int_equal(validate_copy(sb.buf, lens[i], bos, NBOS,
					       &diag, 0), -RBLN_EINVAL);
		assert_int_equal(diag.reason, RBLN_ISA_ERR_STREAM_SIZE);
		assert_int_equal(diag.cmd_index, 0);
		assert_int_equal(diag.cmd_offset, 0);
		assert_int_equal(diag.opcode, NONE);
		assert_int_equal(diag.operand, NONE);
	}
	/* NULL stream. */
	assert_int_equal(rbln_model_validate(NULL, 16, bos, NBOS, &diag),
			 -RBLN_EINVAL);
	assert_int_equal(diag.reason, RBLN_ISA_ERR_STREAM_SIZE);
	sb_free(&sb);

	/* The cap: exactly RBLN_MODEL_MAX_STREAM_SIZE passes, 8 more fail. */
	sb_init(&sb);
	while (sb.len + RBLN_ISA_CMD_MAX_SIZE <= RBLN_MODEL_MAX_STREAM_SIZE)
		sb_nop(&sb, RBLN_ISA_CMD_MAX_SIZE);
	sb_nop(&sb, RBLN_MODEL_MAX_STREAM_SIZE - sb.len);
	assert_int_equal(sb.len, RBLN_MODEL_MAX_STREAM_SIZE);
	expect_valid(&sb);
	sb_nop(&sb, 8);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_STREAM_SIZE, HDR_ERR,
		      NONE, NONE);
	/* Also for a size beyond 32 bits, which the header cannot state. */
	big = sb.buf;
	assert_int_equal(rbln_model_validate(big, 1ULL << 32, bos, NBOS, &diag),
			 -RBLN_EINVAL);
	assert_int_equal(diag.reason, RBLN_ISA_ERR_STREAM_SIZE);
	sb_free(&sb);
}

static void test_err_header(void **state)
{
	struct rbln_isa_stream_header *hdr;
	struct sb sb;

	(void)state;
	sb_init(&sb);
	sb_barrier(&sb);
	hdr = (void *)sb.buf;

	hdr->magic = 0x4e4c4253;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_MAGIC, HDR_ERR, NONE, NONE);
	hdr->magic = RBLN_ISA_MAGIC;

	hdr->version_major = 2;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_VERSION, HDR_ERR, NONE,
		      NONE);
	hdr->version_major = 0;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_VERSION, HDR_ERR, NONE,
		      NONE);
	hdr->version_major = 1;
	hdr->version_minor = RBLN_ISA_VERSION_MINOR + 1;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_VERSION, HDR_ERR, NONE,
		      NONE);
	hdr->version_minor = RBLN_ISA_VERSION_MINOR;

	hdr->size = (uint32_t)sb.len + 8;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_HEADER_SIZE, HDR_ERR, NONE,
		      NONE);
	hdr->size = (uint32_t)sb.len - 8;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_HEADER_SIZE, HDR_ERR, NONE,
		      NONE);
	hdr->size = (uint32_t)sb.len;

	hdr->flags = 0x80000000;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_RESERVED, HDR_ERR, NONE,
		      NONE);
	hdr->flags = 0;
	expect_valid(&sb);
	sb_free(&sb);
}

static void test_err_opcode(void **state)
{
	static const uint16_t bad[] = { 0x06, 0x0f, 0x1a, 0x20, 0x7fff, 0xfffe };
	struct rbln_isa_cmd *c;
	struct sb sb;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sb_init(&sb);
		sb_nop(&sb, 16);
		sb_barrier(&sb);
		c = sb_cmd(&sb, 1);
		c->opcode = bad[i];
		expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_OPCODE, 1, bad[i],
			      NONE);
		sb_free(&sb);
	}
}

static void test_err_cmd_size(void **state)
{
	struct rbln_isa_cmd *c;
	struct sb sb;

	(void)state;
	/* Fixed-size opcodes: any other size, even a valid-looking one. */
	sb_init(&sb);
	sb_barrier(&sb);
	sb_fill(&sb, OPND(0, 0, 4), 0);
	sb_nop(&sb, 8);
	c = sb_cmd(&sb, 1);
	c->size = 48;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_CMD_SIZE, 1, RBLN_OP_FILL,
		      NONE);
	c->size = 32;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_CMD_SIZE, 1, RBLN_OP_FILL,
		      NONE);
	c->size = 0;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_CMD_SIZE, 1, RBLN_OP_FILL,
		      NONE);
	c->size = 40;
	c = sb_cmd(&sb, 0);
	c->size = 16;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_CMD_SIZE, 0,
		      RBLN_OP_BARRIER, NONE);
	sb_free(&sb);

	/* NOP: 8 or more, a multiple of 8, at most RBLN_ISA_CMD_MAX_SIZE. */
	sb_init(&sb);
	sb_nop(&sb, RBLN_ISA_CMD_MAX_SIZE);
	sb_nop(&sb, 16);
	expect_valid(&sb);
	c = sb_cmd(&sb, 1);
	c->size = 0;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_CMD_SIZE, 1, RBLN_OP_NOP,
		      NONE);
	c->size = 4;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_CMD_SIZE, 1, RBLN_OP_NOP,
		      NONE);
	c->size = 12;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_CMD_SIZE, 1, RBLN_OP_NOP,
		      NONE);
	c->size = RBLN_ISA_CMD_MAX_SIZE + 8;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_CMD_SIZE, 1, RBLN_OP_NOP,
		      NONE);
	sb_free(&sb);

	/* Each fixed-size opcode, one byte-pair too long. */
	sb_init(&sb);
	sb_copy(&sb, OPND(0, 0, 1), OPND(0, 1, 1));
	sb_signal(&sb, OPND(0, 0, 8), RBLN_SEM_SET, 0);
	sb_wait(&sb, OPND(0, 0, 8), RBLN_SEM_GEQ, 0, 1);
	sb_add(&sb, OPND(0, 0, 4), OPND(0, 0, 4), OPND(0, 0, 4));
	for (uint32_t i = 0; i < 4; i++) {
		c = sb_cmd(&sb, i);
		c->size += 8;
		expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_CMD_SIZE, i,
			      c->opcode, NONE);
		c->size -= 8;
	}
	expect_valid(&sb);
	sb_free(&sb);
}

static void test_err_truncated(void **state)
{
	struct rbln_isa_cmd *c;
	struct sb sb;

	(void)state;
	/* A FILL whose stream ends 16 bytes early (header says so too). */
	sb_init(&sb);
	sb_barrier(&sb);
	sb_fill(&sb, OPND(0, 0, 4), 0);
	sb.len -= 16;
	sb_seal(&sb);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_TRUNCATED, 1, RBLN_OP_FILL,
		      NONE);
	sb_free(&sb);

	/* A NOP claiming more bytes than are left. */
	sb_init(&sb);
	sb_nop(&sb, 16);
	c = sb_cmd(&sb, 0);
	c->size = 24;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_TRUNCATED, 0, RBLN_OP_NOP,
		      NONE);
	c->size = RBLN_ISA_CMD_MAX_SIZE;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_TRUNCATED, 0, RBLN_OP_NOP,
		      NONE);
	sb_free(&sb);
}

static void test_err_reserved(void **state)
{
	struct rbln_isa_fill *fill;
	struct rbln_isa_sem_signal *sig;
	struct rbln_isa_sem_wait *wait;
	struct rbln_isa_copy *copy;
	struct rbln_isa_add *add;
	uint8_t *nop;
	struct sb sb;

	(void)state;
	sb_init(&sb);
	sb_nop(&sb, 32);					/* 0 */
	sb_fill(&sb, OPND(0, 0, 4), 0);				/* 1 */
	sb_signal(&sb, OPND(0, 0, 8), RBLN_SEM_SET, 0);		/* 2 */
	sb_wait(&sb, OPND(0, 0, 8), RBLN_SEM_GEQ, 0, 1);	/* 3 */
	sb_copy(&sb, OPND(0, 0, 1), OPND(0, 1, 1));		/* 4 */
	sb_add(&sb, OPND(0, 0, 4), OPND(0, 0, 4), OPND(0, 0, 4)); /* 5 */
	sb_barrier(&sb);					/* 6 */
	expect_valid(&sb);

	/* NOP body, its last byte. */
	nop = sb_cmd(&sb, 0);
	nop[31] = 1;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_RESERVED, 0, RBLN_OP_NOP,
		      NONE);
	nop[31] = 0;

	fill = sb_cmd(&sb, 1);
	fill->hdr.flags = 1;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_RESERVED, 1, RBLN_OP_FILL,
		      NONE);
	fill->hdr.flags = 0;
	fill->pad = 0x100;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_RESERVED, 1, RBLN_OP_FILL,
		      NONE);
	fill->pad = 0;
	fill->dst.flags = 2;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_RESERVED, 1, RBLN_OP_FILL,
		      0);
	fill->dst.flags = 0;

	sig = sb_cmd(&sb, 2);
	sig->pad = 1;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_RESERVED, 2,
		      RBLN_OP_SEM_SIGNAL, NONE);
	sig->pad = 0;

	wait = sb_cmd(&sb, 3);
	wait->pad = 1;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_RESERVED, 3,
		      RBLN_OP_SEM_WAIT, NONE);
	wait->pad = 0;
	wait->sem.flags = 1;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_RESERVED, 3,
		      RBLN_OP_SEM_WAIT, 0);
	wait->sem.flags = 0;

	copy = sb_cmd(&sb, 4);
	copy->src.flags = 0x80000000;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_RESERVED, 4, RBLN_OP_COPY,
		      1);
	copy->src.flags = 0;

	add = sb_cmd(&sb, 5);
	add->b.flags = 1;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_RESERVED, 5, RBLN_OP_ADD, 2);
	add->b.flags = 0;

	((struct rbln_isa_cmd *)sb_cmd(&sb, 6))->flags = 4;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_RESERVED, 6,
		      RBLN_OP_BARRIER, NONE);
	((struct rbln_isa_cmd *)sb_cmd(&sb, 6))->flags = 0;
	expect_valid(&sb);
	sb_free(&sb);
}

static void test_err_bo_index(void **state)
{
	struct sb sb;

	(void)state;
	sb_init(&sb);
	sb_fill(&sb, OPND(NBOS, 0, 4), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_BO_INDEX, 0, RBLN_OP_FILL,
		      0);
	sb_free(&sb);

	sb_init(&sb);
	sb_barrier(&sb);
	sb_add(&sb, OPND(0, 0, 4), OPND(1, 0, 4), OPND(0xffffffff, 0, 4));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_BO_INDEX, 1, RBLN_OP_ADD, 2);
	sb_free(&sb);

	/* An empty buffer list. */
	sb_init(&sb);
	sb_copy(&sb, OPND(0, 0, 1), OPND(0, 1, 1));
	{
		struct rbln_model_diag diag;

		assert_int_equal(rbln_model_validate(sb.buf, sb.len, NULL, 0,
						     &diag), -RBLN_EINVAL);
		assert_int_equal(diag.reason, RBLN_ISA_ERR_BO_INDEX);
		assert_int_equal(diag.operand, 0);
	}
	sb_free(&sb);
}

static void test_err_overflow(void **state)
{
	struct sb sb;

	(void)state;
	/* offset + size wraps to a small number that would pass bounds. */
	sb_init(&sb);
	sb_copy(&sb, OPND(0, 0, 16), OPND(0, UINT64_MAX - 7, 16));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_OVERFLOW, 0, RBLN_OP_COPY,
		      1);
	sb_free(&sb);

	sb_init(&sb);
	sb_fill(&sb, OPND(0, 4, UINT64_MAX - 3), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_OVERFLOW, 0, RBLN_OP_FILL,
		      0);
	sb_free(&sb);

	/* UINT64_MAX exactly is representable: bounds, not overflow. */
	sb_init(&sb);
	sb_fill(&sb, OPND(0, 4, UINT64_MAX - 4), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_BOUNDS, 0, RBLN_OP_FILL, 0);
	sb_free(&sb);
}

static void test_err_bounds(void **state)
{
	struct sb sb;

	(void)state;
	/* Exact fit at the end passes; one element more does not. */
	sb_init(&sb);
	sb_fill(&sb, OPND(3, 60, 4), 0);
	sb_copy(&sb, OPND(3, 63, 1), OPND(3, 0, 1));
	expect_valid(&sb);
	sb_fill(&sb, OPND(3, 60, 8), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_BOUNDS, 2, RBLN_OP_FILL, 0);
	sb_free(&sb);

	sb_init(&sb);
	sb_copy(&sb, OPND(0, 0, 2), OPND(3, 63, 2));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_BOUNDS, 0, RBLN_OP_COPY, 1);
	sb_free(&sb);

	sb_init(&sb);
	sb_wait(&sb, OPND(3, 64, 8), RBLN_SEM_GEQ, 0, 1);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_BOUNDS, 0, RBLN_OP_SEM_WAIT,
		      0);
	sb_free(&sb);

	/* A zero-sized range just past the end is out of bounds, too. */
	sb_init(&sb);
	sb_fill(&sb, OPND(3, 68, 0), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_BOUNDS, 0, RBLN_OP_FILL, 0);
	sb_free(&sb);
}

static void test_err_align(void **state)
{
	struct sb sb;

	(void)state;
	sb_init(&sb);
	sb_fill(&sb, OPND(0, 2, 4), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ALIGN, 0, RBLN_OP_FILL, 0);
	sb_free(&sb);

	sb_init(&sb);
	sb_fill(&sb, OPND(0, 4, 6), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ALIGN, 0, RBLN_OP_FILL, 0);
	sb_free(&sb);

	sb_init(&sb);
	sb_add(&sb, OPND(0, 0, 8), OPND(1, 2, 8), OPND(1, 0, 8));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ALIGN, 0, RBLN_OP_ADD, 1);
	sb_free(&sb);

	sb_init(&sb);
	sb_add(&sb, OPND(0, 0, 8), OPND(1, 0, 8), OPND(1, 0, 9));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ALIGN, 0, RBLN_OP_ADD, 2);
	sb_free(&sb);

	sb_init(&sb);
	sb_signal(&sb, OPND(0, 4, 8), RBLN_SEM_SET, 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ALIGN, 0,
		      RBLN_OP_SEM_SIGNAL, 0);
	sb_free(&sb);

	sb_init(&sb);
	sb_wait(&sb, OPND(1, 12, 8), RBLN_SEM_GEQ, 0, 1);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ALIGN, 0, RBLN_OP_SEM_WAIT,
		      0);
	sb_free(&sb);

	/* COPY takes any alignment. */
	sb_init(&sb);
	sb_copy(&sb, OPND(0, 3, 5), OPND(1, 7, 5));
	expect_valid(&sb);
	sb_free(&sb);
}

static void test_err_length(void **state)
{
	struct sb sb;

	(void)state;
	sb_init(&sb);
	sb_fill(&sb, OPND(0, 0, 0), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_LENGTH, 0, RBLN_OP_FILL, 0);
	sb_free(&sb);

	sb_init(&sb);
	sb_copy(&sb, OPND(0, 0, 0), OPND(1, 0, 0));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_LENGTH, 0, RBLN_OP_COPY, 0);
	sb_free(&sb);

	sb_init(&sb);
	sb_copy(&sb, OPND(0, 0, 4), OPND(1, 0, 5));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_LENGTH, 0, RBLN_OP_COPY, 1);
	sb_free(&sb);

	sb_init(&sb);
	sb_add(&sb, OPND(0, 0, 8), OPND(1, 0, 4), OPND(1, 0, 8));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_LENGTH, 0, RBLN_OP_ADD, 1);
	sb_free(&sb);

	sb_init(&sb);
	sb_add(&sb, OPND(0, 0, 8), OPND(1, 0, 8), OPND(1, 0, 12));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_LENGTH, 0, RBLN_OP_ADD, 2);
	sb_free(&sb);

	sb_init(&sb);
	sb_add(&sb, OPND(0, 0, 0), OPND(1, 0, 0), OPND(1, 0, 0));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_LENGTH, 0, RBLN_OP_ADD, 0);
	sb_free(&sb);

	/* A semaphore is exactly 8 bytes. */
	sb_init(&sb);
	sb_signal(&sb, OPND(0, 0, 16), RBLN_SEM_SET, 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_LENGTH, 0,
		      RBLN_OP_SEM_SIGNAL, 0);
	sb_free(&sb);

	sb_init(&sb);
	sb_wait(&sb, OPND(0, 0, 4), RBLN_SEM_GEQ, 0, 1);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_LENGTH, 0, RBLN_OP_SEM_WAIT,
		      0);
	sb_free(&sb);
}

static void test_err_access(void **state)
{
	struct rbln_model_bo none[2] = {
		{ .size = 64, .access = 0 },
		{ .size = 64, .access = RW },
	};
	struct sb sb;

	(void)state;
	sb_init(&sb);
	sb_fill(&sb, OPND(1, 0, 4), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ACCESS, 0, RBLN_OP_FILL, 0);
	sb_free(&sb);

	sb_init(&sb);
	sb_copy(&sb, OPND(2, 0, 4), OPND(2, 8, 4));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ACCESS, 0, RBLN_OP_COPY, 1);
	sb_free(&sb);

	sb_init(&sb);
	sb_copy(&sb, OPND(1, 0, 4), OPND(0, 8, 4));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ACCESS, 0, RBLN_OP_COPY, 0);
	sb_free(&sb);

	sb_init(&sb);
	sb_signal(&sb, OPND(1, 0, 8), RBLN_SEM_SET, 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ACCESS, 0,
		      RBLN_OP_SEM_SIGNAL, 0);
	sb_free(&sb);

	sb_init(&sb);
	sb_wait(&sb, OPND(2, 0, 8), RBLN_SEM_GEQ, 0, 1);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ACCESS, 0, RBLN_OP_SEM_WAIT,
		      0);
	sb_free(&sb);

	sb_init(&sb);
	sb_add(&sb, OPND(0, 0, 4), OPND(1, 0, 4), OPND(2, 0, 4));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ACCESS, 0, RBLN_OP_ADD, 2);
	sb_free(&sb);

	/* Write-only and read-only halves of a COPY, and no access at all. */
	sb_init(&sb);
	sb_copy(&sb, OPND(2, 0, 4), OPND(1, 8, 4));
	expect_valid(&sb);
	sb_free(&sb);

	sb_init(&sb);
	sb_copy(&sb, OPND(1, 0, 4), OPND(0, 8, 4));
	expect_reject(&sb, none, 2, RBLN_ISA_ERR_ACCESS, 0, RBLN_OP_COPY, 1);
	sb_free(&sb);
}

static void test_err_enum(void **state)
{
	struct sb sb;

	(void)state;
	sb_init(&sb);
	sb_signal(&sb, OPND(0, 0, 8), 2, 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ENUM, 0, RBLN_OP_SEM_SIGNAL,
		      NONE);
	sb_free(&sb);

	sb_init(&sb);
	sb_wait(&sb, OPND(0, 0, 8), 0xffffffff, 0, 1);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ENUM, 0, RBLN_OP_SEM_WAIT,
		      NONE);
	sb_free(&sb);
}

static void test_err_timeout(void **state)
{
	struct sb sb;

	(void)state;
	sb_init(&sb);
	sb_wait(&sb, OPND(0, 0, 8), RBLN_SEM_GEQ, 0, 1);
	sb_wait(&sb, OPND(0, 0, 8), RBLN_SEM_GEQ, 0, RBLN_ISA_SEM_WAIT_MAX_NS);
	expect_valid(&sb);
	sb_wait(&sb, OPND(0, 0, 8), RBLN_SEM_GEQ, 0,
		RBLN_ISA_SEM_WAIT_MAX_NS + 1);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_TIMEOUT, 2,
		      RBLN_OP_SEM_WAIT, NONE);
	sb_free(&sb);

	sb_init(&sb);
	sb_wait(&sb, OPND(0, 0, 8), RBLN_SEM_EQ, 0, 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_TIMEOUT, 0,
		      RBLN_OP_SEM_WAIT, NONE);
	sb_free(&sb);
}

static void test_err_overlap(void **state)
{
	struct sb sb;

	(void)state;
	/* Allowed: exact alias of dst with a or b; a and b overlapping;
	 * same offsets in different buffers; COPY overlap. */
	sb_init(&sb);
	sb_add(&sb, OPND(0, 0, 64), OPND(0, 0, 64), OPND(0, 64, 64));
	sb_add(&sb, OPND(0, 0, 64), OPND(0, 64, 64), OPND(0, 0, 64));
	sb_add(&sb, OPND(0, 0, 64), OPND(0, 0, 64), OPND(0, 0, 64));
	sb_add(&sb, OPND(0, 256, 64), OPND(0, 0, 64), OPND(0, 4, 64));
	sb_add(&sb, OPND(0, 0, 64), OPND(3, 0, 64), OPND(1, 0, 64));
	sb_add(&sb, OPND(0, 0, 64), OPND(0, 64, 64), OPND(0, 128, 64));
	sb_copy(&sb, OPND(0, 1, 100), OPND(0, 0, 100));
	sb_copy(&sb, OPND(0, 0, 100), OPND(0, 1, 100));
	expect_valid(&sb);
	sb_free(&sb);

	sb_init(&sb);
	sb_add(&sb, OPND(0, 4, 64), OPND(0, 0, 64), OPND(1, 0, 64));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_OVERLAP, 0, RBLN_OP_ADD, 1);
	sb_free(&sb);

	sb_init(&sb);
	sb_add(&sb, OPND(0, 0, 64), OPND(1, 0, 64), OPND(0, 60, 64));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_OVERLAP, 0, RBLN_OP_ADD, 2);
	sb_free(&sb);

	/* Touching but not overlapping is fine; one element in is not. */
	sb_init(&sb);
	sb_add(&sb, OPND(0, 64, 64), OPND(0, 0, 64), OPND(0, 128, 64));
	expect_valid(&sb);
	sb_add(&sb, OPND(0, 64, 64), OPND(0, 4, 64), OPND(0, 128, 64));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_OVERLAP, 1, RBLN_OP_ADD, 1);
	sb_free(&sb);
}

/*
 * When one operand has several faults, the first in the documented order
 * (flags, bo index, overflow, bounds, alignment, length, access) is
 * reported; fields before operands; operands in order; relations last.
 */
static void test_check_order(void **state)
{
	struct sb sb;

	(void)state;
	sb_init(&sb);
	sb_raw(&sb, &(struct rbln_isa_fill){
		.hdr = { .opcode = RBLN_OP_FILL, .size = 40 },
		.dst = { .bo = 99, .flags = 1, .offset = 1 } }, 40);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_RESERVED, 0, RBLN_OP_FILL,
		      0);
	sb_free(&sb);

	sb_init(&sb);
	sb_fill(&sb, OPND(99, UINT64_MAX, 2), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_BO_INDEX, 0, RBLN_OP_FILL,
		      0);
	sb_free(&sb);

	sb_init(&sb);
	sb_fill(&sb, OPND(1, UINT64_MAX, 2), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_OVERFLOW, 0, RBLN_OP_FILL,
		      0);
	sb_free(&sb);

	sb_init(&sb);
	sb_fill(&sb, OPND(1, 4095, 2), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_BOUNDS, 0, RBLN_OP_FILL, 0);
	sb_free(&sb);

	sb_init(&sb);
	sb_fill(&sb, OPND(1, 1, 0), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ALIGN, 0, RBLN_OP_FILL, 0);
	sb_free(&sb);

	sb_init(&sb);
	sb_fill(&sb, OPND(1, 0, 0), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_LENGTH, 0, RBLN_OP_FILL, 0);
	sb_free(&sb);

	/* Fields before operands: pad and op beat a bad operand. */
	sb_init(&sb);
	sb_signal(&sb, OPND(99, 0, 8), 7, 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ENUM, 0, RBLN_OP_SEM_SIGNAL,
		      NONE);
	sb_free(&sb);

	/* Operands in order, then relations: operand 0 before 1. */
	sb_init(&sb);
	sb_add(&sb, OPND(1, 0, 8), OPND(0, 4, 8), OPND(0, 0, 4));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_ACCESS, 0, RBLN_OP_ADD, 0);
	sb_free(&sb);

	/* Lengths before overlap. */
	sb_init(&sb);
	sb_add(&sb, OPND(0, 0, 8), OPND(0, 4, 8), OPND(0, 0, 4));
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_LENGTH, 0, RBLN_OP_ADD, 2);
	sb_free(&sb);

	/* Opcode before size; size before truncation. */
	sb_init(&sb);
	sb_nop(&sb, 8);
	((struct rbln_isa_cmd *)sb_cmd(&sb, 0))->opcode = 0x20;
	((struct rbln_isa_cmd *)sb_cmd(&sb, 0))->size = 4;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_OPCODE, 0, 0x20, NONE);
	((struct rbln_isa_cmd *)sb_cmd(&sb, 0))->opcode = RBLN_OP_FILL;
	((struct rbln_isa_cmd *)sb_cmd(&sb, 0))->size = 48;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_CMD_SIZE, 0, RBLN_OP_FILL,
		      NONE);
	((struct rbln_isa_cmd *)sb_cmd(&sb, 0))->size = 40;
	((struct rbln_isa_cmd *)sb_cmd(&sb, 0))->flags = 1;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_TRUNCATED, 0, RBLN_OP_FILL,
		      NONE);
	sb_free(&sb);

	/* The first bad command wins; later ones are not looked at. */
	sb_init(&sb);
	sb_nop(&sb, 24);
	sb_fill(&sb, OPND(0, 0, 0), 0);
	sb_fill(&sb, OPND(99, 0, 4), 0);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_LENGTH, 1, RBLN_OP_FILL, 0);
	sb_free(&sb);
}

/*
 * A valid stream cut at every length: with the original header (whose size
 * then disagrees) and with the header rewritten to the cut length, when the
 * cut must be reported as the command that runs past the end, or accepted
 * when it falls between commands.
 */
static void test_truncated_every_length(void **state)
{
	struct rbln_model_diag diag;
	struct rbln_isa_stream_header *hdr;
	uint8_t *cut;
	struct sb sb;
	size_t len;
	uint32_t i, expect_index;
	int ret;

	(void)state;
	build_all(&sb);
	for (len = 0; len < sb.len; len++) {
		memset(&diag, 0xa5, sizeof(diag));
		ret = validate_copy(sb.buf, len, bos, NBOS, &diag, len & 1);
		assert_int_equal(ret, -RBLN_EINVAL);
		if (len < 16 || len % 8)
			assert_int_equal(diag.reason, RBLN_ISA_ERR_STREAM_SIZE);
		else
			assert_int_equal(diag.reason,
					 RBLN_ISA_ERR_HEADER_SIZE);
		assert_int_equal(diag.cmd_offset, 0);

		if (len < 16 || len % 8)
			continue;
		cut = malloc(len);
		assert_non_null(cut);
		memcpy(cut, sb.buf, len);
		hdr = (void *)cut;
		hdr->size = (uint32_t)len;
		memset(&diag, 0xa5, sizeof(diag));
		ret = rbln_model_validate(cut, len, bos, NBOS, &diag);
		expect_index = UINT32_MAX;
		for (i = 0; i < sb.ncmds; i++) {
			if (sb.offsets[i] < len &&
			    (i + 1 == sb.ncmds ? sb.len : sb.offsets[i + 1]) >
			    len)
				expect_index = i;
		}
		if (expect_index == UINT32_MAX) {
			assert_int_equal(ret, 0);
		} else {
			assert_int_equal(ret, -RBLN_EINVAL);
			assert_int_equal(diag.reason, RBLN_ISA_ERR_TRUNCATED);
			assert_int_equal(diag.cmd_index, expect_index);
			assert_int_equal(diag.cmd_offset,
					 sb.offsets[expect_index]);
			assert_int_equal(diag.opcode,
					 ((struct rbln_isa_cmd *)
					  sb_cmd(&sb, expect_index))->opcode);
			assert_int_equal(diag.operand, NONE);
		}
		free(cut);
	}
	sb_free(&sb);
}

/* Every single-bit flip of a valid stream is rejected or still valid,
 * never a crash, and a rejection always points inside the stream. */
static void test_bit_flips(void **state)
{
	struct rbln_model_diag diag;
	struct sb sb;
	size_t bit;
	int ret;

	(void)state;
	build_all(&sb);
	for (bit = 0; bit < sb.len * 8; bit++) {
		sb.buf[bit / 8] ^= (uint8_t)(1U << (bit % 8));
		ret = validate_copy(sb.buf, sb.len, bos, NBOS, &diag, 0);
		if (ret) {
			assert_int_equal(ret, -RBLN_EINVAL);
			assert_true(diag.reason > RBLN_ISA_OK &&
				    diag.reason < RBLN_ISA_ERR_COUNT);
			assert_true(diag.cmd_offset < sb.len);
			assert_true(diag.cmd_offset % 8 == 0);
		} else {
			assert_int_equal(diag.reason, RBLN_ISA_OK);
		}
		sb.buf[bit / 8] ^= (uint8_t)(1U << (bit % 8));
	}
	sb_free(&sb);
}

static void test_strings(void **state)
{
	uint32_t i, j;
	const char *name;

	(void)state;
	for (i = 0; i < RBLN_ISA_ERR_COUNT; i++) {
		assert_string_not_equal(rbln_model_error_str(i),
					"unknown error");
		for (j = 0; j < i; j++)
			assert_string_not_equal(rbln_model_error_str(i),
						rbln_model_error_str(j));
	}
	assert_string_equal(rbln_model_error_str(RBLN_ISA_ERR_COUNT),
			    "unknown error");
	assert_string_equal(rbln_model_error_str(0xffffffff),
			    "unknown error");

	assert_string_equal(rbln_model_opcode_name(RBLN_OP_NOP), "NOP");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_BARRIER),
			    "BARRIER");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_FILL), "FILL");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_COPY), "COPY");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_SEM_SIGNAL),
			    "SEM_SIGNAL");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_SEM_WAIT),
			    "SEM_WAIT");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_ADD), "ADD");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_EMBED), "EMBED");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_RMSNORM),
			    "RMSNORM");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_MATMUL), "MATMUL");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_ROPE), "ROPE");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_SWIGLU), "SWIGLU");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_KV_WRITE),
			    "KV_WRITE");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_ATTENTION),
			    "ATTENTION");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_ARGMAX), "ARGMAX");
	assert_string_equal(rbln_model_opcode_name(RBLN_OP_TOPK), "TOPK");
	for (i = 0; i < 0x10000; i++) {
		name = rbln_model_opcode_name(i);
		if (i <= RBLN_OP_SEM_WAIT ||
		    (i >= RBLN_OP_ADD && i < RBLN_OP_COUNT))
			assert_non_null(name);
		else
			assert_null(name);
	}
	assert_null(rbln_model_opcode_name(0xffffffff));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_streams),
		cmocka_unit_test(test_validate_null_diag),
		cmocka_unit_test(test_err_stream_size),
		cmocka_unit_test(test_err_header),
		cmocka_unit_test(test_err_opcode),
		cmocka_unit_test(test_err_cmd_size),
		cmocka_unit_test(test_err_truncated),
		cmocka_unit_test(test_err_reserved),
		cmocka_unit_test(test_err_bo_index),
		cmocka_unit_test(test_err_overflow),
		cmocka_unit_test(test_err_bounds),
		cmocka_unit_test(test_err_align),
		cmocka_unit_test(test_err_length),
		cmocka_unit_test(test_err_access),
		cmocka_unit_test(test_err_enum),
		cmocka_unit_test(test_err_timeout),
		cmocka_unit_test(test_err_overlap),
		cmocka_unit_test(test_check_order),
		cmocka_unit_test(test_truncated_every_length),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
