// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_compute_validate.c - validation of the compute opcodes of ISA 1.2:
 * for each opcode a valid command, then every rejection with its exact
 * diagnostic: command size and flags, pad and reserved fields, enums,
 * float parameters, shape fields, each operand's flags, buffer index,
 * overflow, bounds, alignment, zero size and access (generated for every
 * operand from its rule), sizes that disagree with the shape (including
 * products that would overflow), and the aliasing rules. Also: 1.0 and
 * 1.1 streams stay valid, and truncations and bit flips of a stream of every
 * compute opcode never crash and give consistent diagnostics.
 */
#include <stddef.h>

#include "model_test.h"

#define RW	(RBLN_MODEL_READ | RBLN_MODEL_WRITE)
#define NONE	RBLN_ISA_NO_INDEX
#define BIG	(1U << 20)

/* No mappings: validation never looks at contents. */
static const struct rbln_model_bo bos[] = {
	{ .size = BIG, .access = RW },
	{ .size = BIG, .access = RBLN_MODEL_READ },
	{ .size = BIG, .access = RBLN_MODEL_WRITE },
	{ .size = BIG, .access = RW },
	/* Large enough for sizes whose shape products overflow 64 bits. */
	{ .size = 1ULL << 62, .access = RW },
};

#define NBOS 5
#define BO_RW	0
#define BO_RO	1
#define BO_WO	2
#define BO_RW2	3
#define BO_HUGE	4

/* What an operand needs: its access and its element alignment. */
enum { OP_R, OP_W, OP_RW };

/**
 * struct opnd_rule - one operand of a command, for the generated checks
 * @off: offset of the &struct rbln_isa_operand in the command
 * @access: OP_R, OP_W or OP_RW
 * @align: offset alignment
 */
struct opnd_rule {
	size_t off;
	int access;
	uint32_t align;
};

/**
 * struct field_case - one field set to one value, and the expected verdict
 * @what: for the failure message
 * @off: byte offset of the field in the command
 * @len: its size (1, 2, 4 or 8)
 * @val: the value
 * @reason: expected &enum rbln_isa_error (RBLN_ISA_OK: accepted)
 * @operand: expected operand index
 * @off2: a second field set with the first (@len2 0: none)
 * @len2: its size
 * @val2: its value
 */
struct field_case {
	const char *what;
	size_t off;
	uint32_t len;
	uint64_t val;
	uint32_t reason;
	uint16_t operand;
	size_t off2;
	uint32_t len2;
	uint64_t val2;
};

/* Builds [NOP, cmd] and checks the verdict for command 1. */
static void expect(const void *cmd, size_t size, uint32_t reason,
		   uint16_t operand, const char *what)
{
	struct rbln_model_diag diag;
	const struct rbln_isa_cmd *hdr = cmd;
	struct sb sb;
	int ret;

	sb_init(&sb);
	sb_nop(&sb, 8);
	sb_raw(&sb, cmd, size);
	if (reason == RBLN_ISA_OK) {
		memset(&diag, 0xa5, sizeof(diag));
		ret = validate_copy(sb.buf, sb.len, bos, NBOS, &diag, 0);
		if (ret)
			fail_msg("%s: rejected (%s, operand %u)", what,
				 rbln_model_error_str(diag.reason),
				 diag.operand);
	} else {
		/* The case's name stands in for the file in the message. */
		expect_reject_at(&sb, bos, NBOS, reason, 1, hdr->opcode,
				 operand, what, 0);
	}
	sb_free(&sb);
}

static void run_fields(const void *base, size_t size,
		       const struct field_case *cases, size_t n)
{
	uint8_t cmd[RBLN_ISA_CMD_MAX_SIZE];
	size_t i;

	expect(base, size, RBLN_ISA_OK, NONE, "the base command");
	for (i = 0; i < n; i++) {
		memcpy(cmd, base, size);
		memcpy(cmd + cases[i].off, &cases[i].val, cases[i].len);
		memcpy(cmd + cases[i].off2, &cases[i].val2, cases[i].len2);
		expect(cmd, size, cases[i].reason, cases[i].operand,
		       cases[i].what);
	}
}

/* The checks every operand gets from its rule, in the documented order. */
static void run_operands(const void *base, size_t size,
			 const struct opnd_rule *rules, uint16_t n)
{
	uint8_t cmd[RBLN_ISA_CMD_MAX_SIZE];
	struct rbln_isa_operand *op;
	uint16_t i;

	for (i = 0; i < n; i++) {
		op = (struct rbln_isa_operand *)(cmd + rules[i].off);

		memcpy(cmd, base, size);
		op->flags = 1;
		expect(cmd, size, RBLN_ISA_ERR_RESERVED, i, "operand flags");

		memcpy(cmd, base, size);
		op->bo = NBOS;
		expect(cmd, size, RBLN_ISA_ERR_BO_INDEX, i, "bo index");

		memcpy(cmd, base, size);
		op->offset = ~0ULL - op->size + 2;
		expect(cmd, size, RBLN_ISA_ERR_OVERFLOW, i, "overflow");

		memcpy(cmd, base, size);
		op->offset = BIG - op->size + rules[i].align;
		expect(cmd, size, RBLN_ISA_ERR_BOUNDS, i, "bounds");

		memcpy(cmd, base, size);
		op->offset += rules[i].align / 2;
		expect(cmd, size, RBLN_ISA_ERR_ALIGN, i, "offset align");

		memcpy(cmd, base, size);
		op->size = 0;
		expect(cmd, size, RBLN_ISA_ERR_LENGTH, i, "zero size");

		memcpy(cmd, base, size);
		op->bo = rules[i].access == OP_R ? BO_WO : BO_RO;
		expect(cmd, size, RBLN_ISA_ERR_ACCESS, i, "access");
		if (rules[i].access == OP_RW) {
			memcpy(cmd, base, size);
			op->bo = BO_WO;
			expect(cmd, size, RBLN_ISA_ERR_ACCESS, i, "read access");
		}
	}
}

/* Header checks shared by every opcode: size and flags. */
static void run_header(const void *base, size_t size, uint32_t flags_ok)
{
	uint8_t cmd[RBLN_ISA_CMD_MAX_SIZE];
	struct rbln_isa_cmd *hdr = (struct rbln_isa_cmd *)cmd;
	struct sb sb;
	uint32_t bit;

	memcpy(cmd, base, size);
	hdr->size = (uint16_t)(size + 8);
	sb_init(&sb);
	sb_raw(&sb, cmd, size + 8 <= sizeof(cmd) ? size + 8 : size);
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_CMD_SIZE, 0, hdr->opcode,
		      NONE);
	sb_free(&sb);
	for (bit = 0; bit < 32; bit++) {
		memcpy(cmd, base, size);
		hdr->flags = 1U << bit;
		expect(cmd, size, (flags_ok & (1U << bit)) ? RBLN_ISA_OK :
		       RBLN_ISA_ERR_RESERVED, NONE, "header flag");
	}
}

#define OPR(type, field, acc, al) \
	{ offsetof(type, field), (acc), (al) }
#define FLD(type, field, val, reason, operand)				\
	{ #field " = " #val, offsetof(type, field),			\
	  sizeof(((type *)0)->field), (uint64_t)(val), (reason), (operand), \
	  0, 0, 0 }
#define SZ(type, opnd, val, reason, operand)				\
	{ #opnd ".size = " #val, offsetof(type, opnd.size), 8,		\
	  (uint64_t)(val), (reason), (operand), 0, 0, 0 }
#define AT(type, opnd, b_, o_, reason, operand)				\
	{ #opnd " at " #b_ ":" #o_, offsetof(type, opnd.offset), 8,	\
	  (uint64_t)(o_), (reason), (operand),				\
	  offsetof(type, opnd.bo), 4, (uint64_t)(b_) }

/* ----------------------------------------------------------------- EMBED */

static void test_embed(void **state)
{
	/* 4 tokens of 8 dims from a bfloat16 table of 10 rows. */
	static const struct rbln_isa_embed base = {
		.hdr = { .opcode = RBLN_OP_EMBED, .size = 96 },
		.dst = OPND(BO_RW, 4096, 4 * 8 * 4),
		.table = OPND(BO_RO, 1024, 10 * 8 * 2),
		.ids = OPND(BO_RO, 8192, 16),
		.dtype = RBLN_DTYPE_BF16, .dim = 8,
	};
	static const struct opnd_rule rules[] = {
		OPR(struct rbln_isa_embed, dst, OP_W, 4),
		OPR(struct rbln_isa_embed, table, OP_R, 2),
		OPR(struct rbln_isa_embed, ids, OP_R, 4),
	};
	static const struct field_case cases[] = {
		FLD(struct rbln_isa_embed, pad, 1, RBLN_ISA_ERR_RESERVED, NONE),
		FLD(struct rbln_isa_embed, dtype, RBLN_DTYPE_COUNT,
		    RBLN_ISA_ERR_ENUM, NONE),
		/* int8 is only MATMUL's weight type. */
		FLD(struct rbln_isa_embed, dtype, RBLN_DTYPE_I8,
		    RBLN_ISA_ERR_ENUM, NONE),
		FLD(struct rbln_isa_embed, dim, 0, RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_embed, dim, BIG + 1, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_embed, id_base, 0xffffffff, RBLN_ISA_OK,
		    NONE),
		SZ(struct rbln_isa_embed, dst, 132, RBLN_ISA_ERR_SHAPE, 0),
		SZ(struct rbln_isa_embed, dst, 8 * 4 * 3, RBLN_ISA_ERR_SHAPE,
		   2),
		SZ(struct rbln_isa_embed, table, 162, RBLN_ISA_ERR_SHAPE, 1),
		SZ(struct rbln_isa_embed, table, 16, RBLN_ISA_OK, NONE),
		SZ(struct rbln_isa_embed, ids, 20, RBLN_ISA_ERR_SHAPE, 2),
		/* f32 table: its offset must be a multiple of 4. */
		FLD(struct rbln_isa_embed, dtype, RBLN_DTYPE_F32, RBLN_ISA_OK,
		    NONE),
		AT(struct rbln_isa_embed, table, BO_RW, 4096 + 64,
		   RBLN_ISA_ERR_OVERLAP, 1),
		AT(struct rbln_isa_embed, ids, BO_RW, 4096 + 124,
		   RBLN_ISA_ERR_OVERLAP, 2),
	};

	(void)state;
	run_header(&base, sizeof(base), RBLN_EMBED_ZERO_OUTSIDE);
	run_fields(&base, sizeof(base), cases, sizeof(cases) / sizeof(*cases));
	run_operands(&base, sizeof(base), rules, 3);
}

/* -------------------------------------------------------------- RMSNORM */

static void test_rmsnorm(void **state)
{
	static const struct rbln_isa_rmsnorm base = {
		.hdr = { .opcode = RBLN_OP_RMSNORM, .size = 96 },
		.dst = OPND(BO_RW, 0, 3 * 20 * 4),
		.src = OPND(BO_RO, 400, 3 * 20 * 4),
		.weight = OPND(BO_RO, 2, 20 * 2),
		.dtype = RBLN_DTYPE_F16, .dim = 20, .eps = 0x3727c5ac,
	};
	static const struct opnd_rule rules[] = {
		OPR(struct rbln_isa_rmsnorm, dst, OP_W, 4),
		OPR(struct rbln_isa_rmsnorm, src, OP_R, 4),
		OPR(struct rbln_isa_rmsnorm, weight, OP_R, 2),
	};
	static const struct field_case cases[] = {
		FLD(struct rbln_isa_rmsnorm, pad, 1, RBLN_ISA_ERR_RESERVED,
		    NONE),
		FLD(struct rbln_isa_rmsnorm, dtype, 7, RBLN_ISA_ERR_ENUM, NONE),
		FLD(struct rbln_isa_rmsnorm, dtype, RBLN_DTYPE_I8,
		    RBLN_ISA_ERR_ENUM, NONE),
		FLD(struct rbln_isa_rmsnorm, eps, 0, RBLN_ISA_OK, NONE),
		FLD(struct rbln_isa_rmsnorm, eps, 0x80000000,
		    RBLN_ISA_ERR_PARAM, NONE),
		FLD(struct rbln_isa_rmsnorm, eps, 0xbf800000,
		    RBLN_ISA_ERR_PARAM, NONE),
		FLD(struct rbln_isa_rmsnorm, eps, 0x7f800000,
		    RBLN_ISA_ERR_PARAM, NONE),
		FLD(struct rbln_isa_rmsnorm, eps, 0x7fc00000,
		    RBLN_ISA_ERR_PARAM, NONE),
		FLD(struct rbln_isa_rmsnorm, dim, 0, RBLN_ISA_ERR_SHAPE, NONE),
		SZ(struct rbln_isa_rmsnorm, dst, 3 * 20 * 4 + 4,
		   RBLN_ISA_ERR_SHAPE, 0),
		SZ(struct rbln_isa_rmsnorm, src, 2 * 20 * 4,
		   RBLN_ISA_ERR_SHAPE, 1),
		SZ(struct rbln_isa_rmsnorm, weight, 21 * 2,
		   RBLN_ISA_ERR_SHAPE, 2),
		/* In place is allowed; a partial overlap is not. */
		AT(struct rbln_isa_rmsnorm, src, BO_RW, 0, RBLN_ISA_OK, NONE),
		AT(struct rbln_isa_rmsnorm, src, BO_RW, 80,
		   RBLN_ISA_ERR_OVERLAP, 1),
		AT(struct rbln_isa_rmsnorm, weight, BO_RW, 100,
		   RBLN_ISA_ERR_OVERLAP, 2),
	};

	(void)state;
	run_header(&base, sizeof(base), 0);
	run_fields(&base, sizeof(base), cases, sizeof(cases) / sizeof(*cases));
	run_operands(&base, sizeof(base), rules, 3);
}

/* --------------------------------------------------------------- MATMUL */

static void test_matmul(void **state)
{
	/* M 5, K 7, N 20: packed bfloat16 is 2 panels of 7 x 16. */
	static const struct rbln_isa_matmul base = {
		.hdr = { .opcode = RBLN_OP_MATMUL, .size = 96 },
		.dst = OPND(BO_RW, 0, 5 * 20 * 4),
		.a = OPND(BO_RO, 0, 5 * 7 * 4),
		.w = OPND(BO_RO, 1024, 2 * 7 * 16 * 2),
		.dtype = RBLN_DTYPE_BF16, .layout = RBLN_LAYOUT_PACKED16,
		.k = 7, .n = 20,
	};
	static const struct opnd_rule rules[] = {
		OPR(struct rbln_isa_matmul, dst, OP_W, 4),
		OPR(struct rbln_isa_matmul, a, OP_R, 4),
		OPR(struct rbln_isa_matmul, w, OP_R, 2),
	};
	static const struct field_case cases[] = {
		FLD(struct rbln_isa_matmul, dtype, RBLN_DTYPE_COUNT,
		    RBLN_ISA_ERR_ENUM, NONE),
		FLD(struct rbln_isa_matmul, layout, RBLN_LAYOUT_COUNT,
		    RBLN_ISA_ERR_ENUM, NONE),
		/* Spaced: a gap after each panel, 2 * (224 + 2112) bytes. */
		FLD(struct rbln_isa_matmul, layout,
		    RBLN_LAYOUT_PACKED16_SPACED, RBLN_ISA_ERR_SHAPE, 2),
		FLD(struct rbln_isa_matmul, k, 0, RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_matmul, n, 0, RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_matmul, n, BIG + 1, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_matmul, k, 6, RBLN_ISA_ERR_SHAPE, 1),
		/* Row-major [20, 7]: 280 bytes, not the packed 448. */
		FLD(struct rbln_isa_matmul, layout, RBLN_LAYOUT_ROWMAJOR,
		    RBLN_ISA_ERR_SHAPE, 2),
		FLD(struct rbln_isa_matmul, n, 32, RBLN_ISA_ERR_SHAPE, 0),
		SZ(struct rbln_isa_matmul, a, 4 * 7 * 4, RBLN_ISA_ERR_SHAPE, 0),
		SZ(struct rbln_isa_matmul, dst, 4 * 20 * 4, RBLN_ISA_ERR_SHAPE,
		   0),
		SZ(struct rbln_isa_matmul, w, 2 * 7 * 16 * 2 + 2,
		   RBLN_ISA_ERR_SHAPE, 2),
		FLD(struct rbln_isa_matmul, dtype, RBLN_DTYPE_F32,
		    RBLN_ISA_ERR_SHAPE, 2),
		AT(struct rbln_isa_matmul, a, BO_RW, 396, RBLN_ISA_ERR_OVERLAP,
		   1),
		AT(struct rbln_isa_matmul, w, BO_RW, 398, RBLN_ISA_ERR_OVERLAP,
		   2),
		/* Even the product's own output is no exception. */
		AT(struct rbln_isa_matmul, a, BO_RW, 0, RBLN_ISA_ERR_OVERLAP,
		   1),
	};
	struct rbln_isa_matmul cmd = base;

	(void)state;
	run_header(&base, sizeof(base),
		   RBLN_MATMUL_ACCUMULATE | RBLN_MATMUL_A_BF16);
	run_fields(&base, sizeof(base), cases, sizeof(cases) / sizeof(*cases));
	run_operands(&base, sizeof(base), rules, 3);
	/* Accumulating reads dst: write-only is no longer enough. */
	cmd.hdr.flags = RBLN_MATMUL_ACCUMULATE;
	cmd.dst.bo = BO_WO;
	expect(&cmd, sizeof(cmd), RBLN_ISA_ERR_ACCESS, 0, "accumulate, WO");
	cmd.dst.bo = BO_RW2;
	expect(&cmd, sizeof(cmd), RBLN_ISA_OK, NONE, "accumulate, RW");
	/* Row-major sizes. */
	cmd = base;
	cmd.layout = RBLN_LAYOUT_ROWMAJOR;
	cmd.w.size = 20 * 7 * 2;
	expect(&cmd, sizeof(cmd), RBLN_ISA_OK, NONE, "row-major");
	/* Spaced sizes: the last panel's gap counts too. */
	cmd = base;
	cmd.layout = RBLN_LAYOUT_PACKED16_SPACED;
	cmd.w.size = 2 * (7 * 16 * 2 + RBLN_ISA_PANEL_GAP);
	expect(&cmd, sizeof(cmd), RBLN_ISA_OK, NONE, "spaced");
	cmd.w.size -= RBLN_ISA_PANEL_GAP;
	expect(&cmd, sizeof(cmd), RBLN_ISA_ERR_SHAPE, 2,
	       "spaced without the last gap");
	/* A product past 64 bits never wraps into a matching size. */
	cmd = base;
	cmd.k = 1;
	cmd.n = BIG;
	cmd.a = OPND(BO_HUGE, 0, 1ULL << 61);
	cmd.dst = OPND(BO_HUGE, 1ULL << 61, 1ULL << 19);
	expect(&cmd, sizeof(cmd), RBLN_ISA_ERR_SHAPE, 0, "huge dst");
}

/*
 * int8 weights: the int8 elements, then the float32 scales of whole
 * panels, in either layout; bytewise, so any offset will do.
 */
static void test_matmul_i8(void **state)
{
	/* M 5, K 7, N 20: 2 panels of 7 x 16 bytes, then 32 scales. */
	static const struct rbln_isa_matmul base = {
		.hdr = { .opcode = RBLN_OP_MATMUL, .size = 96 },
		.dst = OPND(BO_RW, 0, 5 * 20 * 4),
		.a = OPND(BO_RO, 0, 5 * 7 * 4),
		.w = OPND(BO_RO, 1024, 2 * 7 * 16 + 32 * 4),
		.dtype = RBLN_DTYPE_I8, .layout = RBLN_LAYOUT_PACKED16,
		.k = 7, .n = 20,
	};
	static const struct field_case cases[] = {
		/* Without the scales. */
		SZ(struct rbln_isa_matmul, w, 2 * 7 * 16, RBLN_ISA_ERR_SHAPE,
		   2),
		/* Scales for the 20 columns, not for both whole panels. */
		SZ(struct rbln_isa_matmul, w, 2 * 7 * 16 + 20 * 4,
		   RBLN_ISA_ERR_SHAPE, 2),
		SZ(struct rbln_isa_matmul, w, 2 * 7 * 16 + 32 * 4 + 1,
		   RBLN_ISA_ERR_SHAPE, 2),
		/* Row-major [20, 7] is 140 bytes + 128 of scales, not 352. */
		FLD(struct rbln_isa_matmul, layout, RBLN_LAYOUT_ROWMAJOR,
		    RBLN_ISA_ERR_SHAPE, 2),
		FLD(struct rbln_isa_matmul, n, 17, RBLN_ISA_ERR_SHAPE, 0),
		/* The scales are part of w: they must not overlap dst. */
		AT(struct rbln_isa_matmul, w, BO_RW, 399, RBLN_ISA_ERR_OVERLAP,
		   2),
		/* Bytewise: an odd offset is fine. */
		AT(struct rbln_isa_matmul, w, BO_RO, 1027, RBLN_ISA_OK, NONE),
		SZ(struct rbln_isa_matmul, w, 0, RBLN_ISA_ERR_LENGTH, 2),
		AT(struct rbln_isa_matmul, w, BO_WO, 1024, RBLN_ISA_ERR_ACCESS,
		   2),
	};
	struct rbln_isa_matmul cmd = base;

	(void)state;
	expect(&cmd, sizeof(cmd), RBLN_ISA_OK, NONE, "int8 packed");
	run_fields(&base, sizeof(base), cases, sizeof(cases) / sizeof(*cases));
	cmd.layout = RBLN_LAYOUT_ROWMAJOR;
	cmd.w = OPND(BO_RO, 1001, 20 * 7 + 32 * 4);
	expect(&cmd, sizeof(cmd), RBLN_ISA_OK, NONE, "int8 row-major");
	cmd.w.size = 20 * 7;
	expect(&cmd, sizeof(cmd), RBLN_ISA_ERR_SHAPE, 2,
	       "int8 row-major without scales");
	/* Spaced: the scales follow the last panel's gap. */
	cmd.layout = RBLN_LAYOUT_PACKED16_SPACED;
	cmd.w.size = 2 * (7 * 16 + RBLN_ISA_PANEL_GAP) + 32 * 4;
	expect(&cmd, sizeof(cmd), RBLN_ISA_OK, NONE, "int8 spaced");
	cmd.w.size = 2 * 7 * 16 + 32 * 4;
	expect(&cmd, sizeof(cmd), RBLN_ISA_ERR_SHAPE, 2,
	       "int8 spaced without the gaps");
	/* Large shapes: the scales are counted on top of 2^40 weights. */
	cmd = base;
	cmd.k = BIG;
	cmd.n = BIG;
	cmd.a = OPND(BO_HUGE, 0, 4ULL * BIG);
	cmd.dst = OPND(BO_HUGE, 1ULL << 61, 4ULL * BIG);
	cmd.w = OPND(BO_HUGE, 1ULL << 50, (uint64_t)BIG * BIG);
	expect(&cmd, sizeof(cmd), RBLN_ISA_ERR_SHAPE, 2, "huge int8 w");
	cmd.w.size += (uint64_t)BIG * 4;
	expect(&cmd, sizeof(cmd), RBLN_ISA_OK, NONE, "huge int8 w + scales");
}

/* ----------------------------------------------------------------- ROPE */

static void test_rope(void **state)
{
	/* 3 tokens of 4 heads x 16, stride 80 (a fused row). */
	static const struct rbln_isa_rope base = {
		.hdr = { .opcode = RBLN_OP_ROPE, .size = 96 },
		.x = OPND(BO_RW, 64, (2 * 80 + 64) * 4),
		.pos = OPND(BO_RO, 0, 12),
		.heads = 4, .head_dim = 16, .stride = 80,
		.scaling = RBLN_ROPE_SCALING_LLAMA3, .theta = 0x48f42400,
		.factor = 0x41000000, .low_freq_factor = 0x3f800000,
		.high_freq_factor = 0x40800000, .original_max_pos = 8192,
	};
	static const struct opnd_rule rules[] = {
		OPR(struct rbln_isa_rope, x, OP_RW, 4),
		OPR(struct rbln_isa_rope, pos, OP_R, 4),
	};
	static const struct field_case cases[] = {
		FLD(struct rbln_isa_rope, pad, 1, RBLN_ISA_ERR_RESERVED, NONE),
		FLD(struct rbln_isa_rope, scaling, 2, RBLN_ISA_ERR_ENUM, NONE),
		FLD(struct rbln_isa_rope, theta, 0x3f800000,
		    RBLN_ISA_ERR_PARAM, NONE),
		FLD(struct rbln_isa_rope, theta, 0x7f800000,
		    RBLN_ISA_ERR_PARAM, NONE),
		FLD(struct rbln_isa_rope, theta, 0xc61c4000,
		    RBLN_ISA_ERR_PARAM, NONE),
		FLD(struct rbln_isa_rope, factor, 0x3f000000,
		    RBLN_ISA_ERR_PARAM, NONE),
		FLD(struct rbln_isa_rope, factor, 0x7fc00000,
		    RBLN_ISA_ERR_PARAM, NONE),
		FLD(struct rbln_isa_rope, low_freq_factor, 0,
		    RBLN_ISA_ERR_PARAM, NONE),
		FLD(struct rbln_isa_rope, high_freq_factor, 0x3f800000,
		    RBLN_ISA_ERR_PARAM, NONE),
		FLD(struct rbln_isa_rope, original_max_pos, 0,
		    RBLN_ISA_ERR_PARAM, NONE),
		/* Default scaling: its fields must be zero. */
		FLD(struct rbln_isa_rope, scaling, RBLN_ROPE_SCALING_DEFAULT,
		    RBLN_ISA_ERR_RESERVED, NONE),
		FLD(struct rbln_isa_rope, heads, 0, RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_rope, head_dim, 15, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_rope, head_dim, 0, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_rope, head_dim, 258, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_rope, stride, 63, RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_rope, heads, BIG, RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_rope, stride, 64, RBLN_ISA_ERR_SHAPE, 0),
		SZ(struct rbln_isa_rope, pos, 8, RBLN_ISA_ERR_SHAPE, 0),
		SZ(struct rbln_isa_rope, x, (2 * 80 + 64) * 4 + 4,
		   RBLN_ISA_ERR_SHAPE, 0),
		AT(struct rbln_isa_rope, pos, BO_RW, 900, RBLN_ISA_ERR_OVERLAP,
		   1),
	};
	struct rbln_isa_rope cmd = base;

	(void)state;
	run_header(&base, sizeof(base), 0);
	run_fields(&base, sizeof(base), cases, sizeof(cases) / sizeof(*cases));
	run_operands(&base, sizeof(base), rules, 2);
	cmd.scaling = RBLN_ROPE_SCALING_DEFAULT;
	cmd.factor = 0;
	cmd.low_freq_factor = 0;
	cmd.high_freq_factor = 0;
	cmd.original_max_pos = 0;
	expect(&cmd, sizeof(cmd), RBLN_ISA_OK, NONE, "default scaling");
}

/* --------------------------------------------------------------- SWIGLU */

static void test_swiglu(void **state)
{
	/* 3 rows of 10 from a fused [3, 20] gate_up. */
	static const struct rbln_isa_swiglu base = {
		.hdr = { .opcode = RBLN_OP_SWIGLU, .size = 96 },
		.dst = OPND(BO_RW, 0, 3 * 10 * 4),
		.gate = OPND(BO_RO, 0, (2 * 20 + 10) * 4),
		.up = OPND(BO_RO, 40, (2 * 20 + 10) * 4),
		.n = 10, .gate_stride = 20, .up_stride = 20,
	};
	static const struct opnd_rule rules[] = {
		OPR(struct rbln_isa_swiglu, dst, OP_W, 4),
		OPR(struct rbln_isa_swiglu, gate, OP_R, 4),
		OPR(struct rbln_isa_swiglu, up, OP_R, 4),
	};
	static const struct field_case cases[] = {
		FLD(struct rbln_isa_swiglu, pad, 1, RBLN_ISA_ERR_RESERVED,
		    NONE),
		FLD(struct rbln_isa_swiglu, n, 0, RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_swiglu, gate_stride, 9, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_swiglu, up_stride, 9, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_swiglu, gate_stride, 21,
		    RBLN_ISA_ERR_SHAPE, 1),
		FLD(struct rbln_isa_swiglu, up_stride, 19, RBLN_ISA_ERR_SHAPE,
		    2),
		SZ(struct rbln_isa_swiglu, dst, 100, RBLN_ISA_ERR_SHAPE, 0),
		AT(struct rbln_isa_swiglu, gate, BO_RW, 100,
		   RBLN_ISA_ERR_OVERLAP, 1),
		AT(struct rbln_isa_swiglu, up, BO_RW, 0, RBLN_ISA_ERR_OVERLAP,
		   2),
	};
	struct rbln_isa_swiglu cmd = base;

	(void)state;
	run_header(&base, sizeof(base), 0);
	run_fields(&base, sizeof(base), cases, sizeof(cases) / sizeof(*cases));
	run_operands(&base, sizeof(base), rules, 3);
	/* In place into a contiguous gate: allowed. */
	cmd.gate = OPND(BO_RW, 0, 3 * 10 * 4);
	cmd.gate_stride = 10;
	expect(&cmd, sizeof(cmd), RBLN_ISA_OK, NONE, "in place");
}

/* ------------------------------------------------------------- KV_WRITE */

static void test_kv_write(void **state)
{
	/* 5 blocks of 4 slots x 2 heads x 8 in float16; 3 tokens. */
	static const struct rbln_isa_kv_write base = {
		.hdr = { .opcode = RBLN_OP_KV_WRITE, .size = 152 },
		.k_cache = OPND(BO_RW, 0, 5 * 4 * 2 * 8 * 2),
		.v_cache = OPND(BO_RW, 1024, 5 * 4 * 2 * 8 * 2),
		.k = OPND(BO_RO, 0, (2 * 32 + 16) * 4),
		.v = OPND(BO_RO, 512, 3 * 16 * 4),
		.slots = OPND(BO_RO, 4096, 12),
		.dtype = RBLN_DTYPE_F16, .block_size = 4, .kv_heads = 2,
		.head_dim = 8, .k_stride = 32, .v_stride = 16,
	};
	static const struct opnd_rule rules[] = {
		OPR(struct rbln_isa_kv_write, k_cache, OP_W, 2),
		OPR(struct rbln_isa_kv_write, v_cache, OP_W, 2),
		OPR(struct rbln_isa_kv_write, k, OP_R, 4),
		OPR(struct rbln_isa_kv_write, v, OP_R, 4),
		OPR(struct rbln_isa_kv_write, slots, OP_R, 4),
	};
	static const struct field_case cases[] = {
		FLD(struct rbln_isa_kv_write, dtype, RBLN_DTYPE_COUNT,
		    RBLN_ISA_ERR_ENUM, NONE),
		/* int8 is only MATMUL's weight type. */
		FLD(struct rbln_isa_kv_write, dtype, RBLN_DTYPE_I8,
		    RBLN_ISA_ERR_ENUM, NONE),
		FLD(struct rbln_isa_kv_write, block_size, 0,
		    RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_kv_write, block_size, 65537,
		    RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_kv_write, kv_heads, 0, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_kv_write, head_dim, 12, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_kv_write, head_dim, 264,
		    RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_kv_write, k_stride, 15, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_kv_write, v_stride, 15, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_kv_write, block_size, 3,
		    RBLN_ISA_ERR_SHAPE, 0),
		SZ(struct rbln_isa_kv_write, v_cache, 4 * 4 * 2 * 8 * 2,
		   RBLN_ISA_ERR_SHAPE, 1),
		FLD(struct rbln_isa_kv_write, k_stride, 33, RBLN_ISA_ERR_SHAPE,
		    2),
		SZ(struct rbln_isa_kv_write, v, 2 * 16 * 4,
		   RBLN_ISA_ERR_SHAPE, 3),
		SZ(struct rbln_isa_kv_write, slots, 16, RBLN_ISA_ERR_SHAPE, 2),
		AT(struct rbln_isa_kv_write, v_cache, BO_RW, 638,
		   RBLN_ISA_ERR_OVERLAP, 1),
		AT(struct rbln_isa_kv_write, k, BO_RW, 1280,
		   RBLN_ISA_ERR_OVERLAP, 2),
		AT(struct rbln_isa_kv_write, slots, BO_RW, 1024,
		   RBLN_ISA_ERR_OVERLAP, 4),
	};

	(void)state;
	run_header(&base, sizeof(base), RBLN_KV_HEAD_MAJOR);
	run_fields(&base, sizeof(base), cases, sizeof(cases) / sizeof(*cases));
	run_operands(&base, sizeof(base), rules, 5);
}

/* ------------------------------------------------------------ ATTENTION */

static void test_attention(void **state)
{
	/*
	 * 3 query rows, 4 query heads over 2 KV heads of 8; caches of 6
	 * blocks of 4 tokens in bfloat16; block tables [2, 3]; partitions
	 * of 5: P = ceil(12 / 5) = 3, work = 3 * 4 * 3 * 10 floats.
	 */
	static const struct rbln_isa_attention base = {
		.hdr = { .opcode = RBLN_OP_ATTENTION, .size = 216 },
		.out = OPND(BO_RW, 0, 3 * 32 * 4),
		.q = OPND(BO_RO, 0, (2 * 40 + 32) * 4),
		.k_cache = OPND(BO_RO, 1024, 6 * 4 * 2 * 8 * 2),
		.v_cache = OPND(BO_RO, 4096, 6 * 4 * 2 * 8 * 2),
		.seqs = OPND(BO_RO, 8192, 32),
		.block_tables = OPND(BO_RO, 9000, 2 * 3 * 4),
		.work = OPND(BO_RW, 4096, 3 * 4 * 3 * 10 * 4),
		.dtype = RBLN_DTYPE_BF16, .block_size = 4, .q_heads = 4,
		.kv_heads = 2, .head_dim = 8, .q_stride = 40, .max_blocks = 3,
		.partition_len = 5, .scale = 0x3eb504f3,
	};
	static const struct opnd_rule rules[] = {
		OPR(struct rbln_isa_attention, out, OP_W, 4),
		OPR(struct rbln_isa_attention, q, OP_R, 4),
		OPR(struct rbln_isa_attention, k_cache, OP_R, 2),
		OPR(struct rbln_isa_attention, v_cache, OP_R, 2),
		OPR(struct rbln_isa_attention, seqs, OP_R, 4),
		OPR(struct rbln_isa_attention, block_tables, OP_R, 4),
		OPR(struct rbln_isa_attention, work, OP_RW, 4),
	};
	static const struct field_case cases[] = {
		FLD(struct rbln_isa_attention, pad, 1, RBLN_ISA_ERR_RESERVED,
		    NONE),
		FLD(struct rbln_isa_attention, dtype, RBLN_DTYPE_COUNT,
		    RBLN_ISA_ERR_ENUM, NONE),
		/* int8 is only MATMUL's weight type. */
		FLD(struct rbln_isa_attention, dtype, RBLN_DTYPE_I8,
		    RBLN_ISA_ERR_ENUM, NONE),
		FLD(struct rbln_isa_attention, scale, 0, RBLN_ISA_ERR_PARAM,
		    NONE),
		FLD(struct rbln_isa_attention, scale, 0xbf800000,
		    RBLN_ISA_ERR_PARAM, NONE),
		FLD(struct rbln_isa_attention, scale, 0x7f800000,
		    RBLN_ISA_ERR_PARAM, NONE),
		FLD(struct rbln_isa_attention, q_heads, 3, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_attention, q_heads, 0, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_attention, kv_heads, 0, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_attention, head_dim, 4, RBLN_ISA_ERR_SHAPE,
		    NONE),
		FLD(struct rbln_isa_attention, q_stride, 31,
		    RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_attention, max_blocks, 0,
		    RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_attention, partition_len, 0,
		    RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_attention, block_size, 0,
		    RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_attention, q_stride, 41,
		    RBLN_ISA_ERR_SHAPE, 1),
		FLD(struct rbln_isa_attention, block_size, 5,
		    RBLN_ISA_ERR_SHAPE, 2),
		SZ(struct rbln_isa_attention, out, 3 * 32 * 4 + 4,
		   RBLN_ISA_ERR_SHAPE, 0),
		SZ(struct rbln_isa_attention, v_cache, 5 * 4 * 2 * 8 * 2,
		   RBLN_ISA_ERR_SHAPE, 3),
		SZ(struct rbln_isa_attention, seqs, 24, RBLN_ISA_ERR_ALIGN, 4),
		SZ(struct rbln_isa_attention, block_tables, 20,
		   RBLN_ISA_ERR_SHAPE, 5),
		/* Too little work space; more is fine. */
		SZ(struct rbln_isa_attention, work, 3 * 4 * 3 * 10 * 4 - 4,
		   RBLN_ISA_ERR_SHAPE, 6),
		SZ(struct rbln_isa_attention, work, 3 * 4 * 3 * 10 * 4 + 4,
		   RBLN_ISA_OK, NONE),
		FLD(struct rbln_isa_attention, partition_len, 3,
		    RBLN_ISA_ERR_SHAPE, 6),
		FLD(struct rbln_isa_attention, partition_len, 12, RBLN_ISA_OK,
		    NONE),
		AT(struct rbln_isa_attention, q, BO_RW, 380,
		   RBLN_ISA_ERR_OVERLAP, 1),
		AT(struct rbln_isa_attention, seqs, BO_RW, 4200,
		   RBLN_ISA_ERR_OVERLAP, 6),
		AT(struct rbln_isa_attention, block_tables, BO_RW, 4096,
		   RBLN_ISA_ERR_OVERLAP, 6),
	};
	struct rbln_isa_attention cmd = base;

	(void)state;
	run_header(&base, sizeof(base), RBLN_KV_HEAD_MAJOR);
	run_fields(&base, sizeof(base), cases, sizeof(cases) / sizeof(*cases));
	run_operands(&base, sizeof(base), rules, 7);
	/* A work requirement past 64 bits: rejected, not wrapped. */
	cmd.max_blocks = BIG;
	cmd.block_size = 65536;
	cmd.partition_len = 1;
	cmd.q_heads = 2;
	cmd.kv_heads = 1;
	cmd.head_dim = 256;
	cmd.q_stride = 512;
	cmd.out = OPND(BO_HUGE, 0, 1ULL << 61);
	cmd.q = OPND(BO_HUGE, 0, 1ULL << 61);
	cmd.k_cache = OPND(BO_HUGE, 0, 1ULL << 25);
	cmd.v_cache = OPND(BO_HUGE, 0, 1ULL << 25);
	cmd.seqs = OPND(BO_HUGE, 0, 16);
	cmd.block_tables = OPND(BO_HUGE, 0, (uint64_t)BIG * 4);
	cmd.work = OPND(BO_HUGE, 1ULL << 61, 1ULL << 60);
	expect(&cmd, sizeof(cmd), RBLN_ISA_ERR_SHAPE, 6, "huge work");
}

/* -------------------------------------------------------- ARGMAX, TOPK */

static void test_argmax_topk(void **state)
{
	static const struct rbln_isa_argmax am = {
		.hdr = { .opcode = RBLN_OP_ARGMAX, .size = 88 },
		.values = OPND(BO_RW, 0, 12),
		.indices = OPND(BO_RW, 16, 12),
		.src = OPND(BO_RO, 0, 3 * 50 * 4),
		.n = 50, .index_base = 100,
	};
	static const struct opnd_rule am_rules[] = {
		OPR(struct rbln_isa_argmax, values, OP_W, 4),
		OPR(struct rbln_isa_argmax, indices, OP_W, 4),
		OPR(struct rbln_isa_argmax, src, OP_R, 4),
	};
	static const struct field_case am_cases[] = {
		FLD(struct rbln_isa_argmax, n, 0, RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_argmax, index_base, 0x80000000 - 50,
		    RBLN_ISA_OK, NONE),
		FLD(struct rbln_isa_argmax, index_base, 0x80000000 - 49,
		    RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_argmax, n, 49, RBLN_ISA_ERR_SHAPE, 2),
		SZ(struct rbln_isa_argmax, values, 8, RBLN_ISA_ERR_SHAPE, 0),
		SZ(struct rbln_isa_argmax, indices, 16, RBLN_ISA_ERR_SHAPE, 1),
		AT(struct rbln_isa_argmax, indices, BO_RW, 8,
		   RBLN_ISA_ERR_OVERLAP, 1),
		AT(struct rbln_isa_argmax, src, BO_RW, 20,
		   RBLN_ISA_ERR_OVERLAP, 2),
	};
	static const struct rbln_isa_topk tk = {
		.hdr = { .opcode = RBLN_OP_TOPK, .size = 96 },
		.values = OPND(BO_RW, 0, 3 * 5 * 4),
		.indices = OPND(BO_RW, 64, 3 * 5 * 4),
		.src = OPND(BO_RO, 0, 3 * 50 * 4),
		.n = 50, .k = 5,
	};
	static const struct opnd_rule tk_rules[] = {
		OPR(struct rbln_isa_topk, values, OP_W, 4),
		OPR(struct rbln_isa_topk, indices, OP_W, 4),
		OPR(struct rbln_isa_topk, src, OP_R, 4),
	};
	static const struct field_case tk_cases[] = {
		FLD(struct rbln_isa_topk, pad, 1, RBLN_ISA_ERR_RESERVED, NONE),
		FLD(struct rbln_isa_topk, k, 0, RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_topk, k, 51, RBLN_ISA_ERR_SHAPE, NONE),
		FLD(struct rbln_isa_topk, k, 4, RBLN_ISA_ERR_SHAPE, 0),
		FLD(struct rbln_isa_topk, n, 1025, RBLN_ISA_ERR_SHAPE, 2),
		SZ(struct rbln_isa_topk, indices, 3 * 6 * 4,
		   RBLN_ISA_ERR_SHAPE, 1),
		AT(struct rbln_isa_topk, src, BO_RW, 100,
		   RBLN_ISA_ERR_OVERLAP, 2),
	};
	struct rbln_isa_topk cmd = tk;

	(void)state;
	run_header(&am, sizeof(am), 0);
	run_fields(&am, sizeof(am), am_cases, sizeof(am_cases) /
		   sizeof(*am_cases));
	run_operands(&am, sizeof(am), am_rules, 3);
	run_header(&tk, sizeof(tk), 0);
	run_fields(&tk, sizeof(tk), tk_cases, sizeof(tk_cases) /
		   sizeof(*tk_cases));
	run_operands(&tk, sizeof(tk), tk_rules, 3);
	/* k above the ISA's maximum, even when the row is long enough. */
	cmd.n = 5000;
	cmd.k = RBLN_ISA_MAX_TOPK + 1;
	expect(&cmd, sizeof(cmd), RBLN_ISA_ERR_SHAPE, NONE, "k > max");
}

/* ------------------------------------------------------------- streams */

/* One command of every compute opcode, valid together. */
static void build_compute(struct sb *sb)
{
	struct rbln_isa_embed e = {
		.hdr = { .opcode = RBLN_OP_EMBED, .size = 96 },
		.dst = OPND(BO_RW, 0, 128), .table = OPND(BO_RO, 0, 160),
		.ids = OPND(BO_RO, 256, 16), .dtype = RBLN_DTYPE_BF16,
		.dim = 8,
	};
	struct rbln_isa_matmul m = {
		.hdr = { .opcode = RBLN_OP_MATMUL, .size = 96,
			 .flags = RBLN_MATMUL_ACCUMULATE },
		.dst = OPND(BO_RW, 1024, 5 * 20 * 4),
		.a = OPND(BO_RO, 0, 5 * 7 * 4),
		.w = OPND(BO_RO, 1024, 20 * 7 * 4),
		.dtype = RBLN_DTYPE_F32, .layout = RBLN_LAYOUT_ROWMAJOR,
		.k = 7, .n = 20,
	};
	struct rbln_isa_swiglu s = {
		.hdr = { .opcode = RBLN_OP_SWIGLU, .size = 96 },
		.dst = OPND(BO_WO, 0, 40), .gate = OPND(BO_RO, 0, 40),
		.up = OPND(BO_RO, 40, 40), .n = 10, .gate_stride = 10,
		.up_stride = 10,
	};
	struct rbln_isa_topk t = {
		.hdr = { .opcode = RBLN_OP_TOPK, .size = 96 },
		.values = OPND(BO_WO, 64, 16), .indices = OPND(BO_WO, 128, 16),
		.src = OPND(BO_RO, 0, 400), .n = 50, .k = 2,
	};

	sb_init(sb);
	sb_cmd_struct(sb, e);
	sb_cmd_struct(sb, m);
	sb_cmd_struct(sb, s);
	sb_cmd_struct(sb, t);
}

/* Every prefix and every single-bit flip: no crash, consistent diag. */
static void test_stream_mutations(void **state)
{
	struct rbln_model_diag diag;
	struct sb sb;
	size_t len, bit;
	int ret;

	(void)state;
	build_compute(&sb);
	assert_int_equal(validate_copy(sb.buf, sb.len, bos, NBOS, &diag, 1), 0);
	for (len = 0; len < sb.len; len += 8) {
		ret = validate_copy(sb.buf, len, bos, NBOS, &diag, len % 16);
		assert_int_equal(ret, -RBLN_EINVAL);
	}
	for (bit = 16 * 8; bit < sb.len * 8; bit++) {
		sb.buf[bit / 8] ^= 1U << (bit % 8);
		ret = validate_copy(sb.buf, sb.len, bos, NBOS, &diag, bit % 2);
		assert_true(ret == 0 || ret == -RBLN_EINVAL);
		assert_true((ret == 0) == (diag.reason == RBLN_ISA_OK));
		assert_true(diag.reason < RBLN_ISA_ERR_COUNT);
		assert_true(diag.operand == NONE ||
			    diag.operand < RBLN_MODEL_MAX_OPERANDS);
		sb.buf[bit / 8] ^= 1U << (bit % 8);
	}
	sb_free(&sb);
}

/* ISA 1.0 to 1.3 streams stay valid in 1.4, with the same meaning. */
static void test_older_streams(void **state)
{
	struct rbln_isa_stream_header *hdr;
	struct rbln_model_diag diag;
	struct sb sb;

	(void)state;
	sb_init(&sb);
	sb_fill(&sb, OPND(BO_RW, 0, 64), 0x3f800000);
	sb_add(&sb, OPND(BO_RW, 64, 64), OPND(BO_RO, 0, 64),
	       OPND(BO_RO, 64, 64));
	hdr = (void *)sb.buf;
	hdr->version_minor = 0;
	assert_int_equal(validate_copy(sb.buf, sb.len, bos, NBOS, &diag, 0), 0);
	hdr->version_minor = 1;
	assert_int_equal(validate_copy(sb.buf, sb.len, bos, NBOS, &diag, 0), 0);
	hdr->version_minor = 2;
	assert_int_equal(validate_copy(sb.buf, sb.len, bos, NBOS, &diag, 0), 0);
	hdr->version_minor = 3;
	assert_int_equal(validate_copy(sb.buf, sb.len, bos, NBOS, &diag, 0), 0);
	hdr->version_minor = 4;
	assert_int_equal(validate_copy(sb.buf, sb.len, bos, NBOS, &diag, 0), 0);
	hdr->version_minor = 5;
	expect_reject(&sb, bos, NBOS, RBLN_ISA_ERR_VERSION, HDR_ERR, NONE,
		      NONE);
	sb_free(&sb);
	assert_int_equal(RBLN_ISA_VERSION, 0x10004);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embed),
		cmocka_unit_test(test_rmsnorm),
		cmocka_unit_test(test_matmul),
		cmocka_unit_test(test_matmul_i8),
		cmocka_unit_test(test_rope),
		cmocka_unit_test(test_swiglu),
		cmocka_unit_test(test_kv_write),
		cmocka_unit_test(test_attention),
		cmocka_unit_test(test_argmax_topk),
		cmocka_unit_test(test_stream_mutations),
		cmocka_unit_test(test_older_streams),
	};

	rng_seed_from_env();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
