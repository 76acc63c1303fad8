// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rbln_model_validate.c - complete validation of a command stream.
 *
 * A stream is checked whole, against the submission's buffer list, before
 * any of it runs: the executor then trusts what it runs. The decoder here is
 * also what the executor uses to step through the stream, so that the two
 * can never disagree about where a command starts or what it means.
 *
 * Fields are read by copying them out of the stream: the stream may sit at
 * any alignment, and nothing is read before the bytes holding it are known
 * to lie inside the stream.
 */

#include "rbln_model_internal.h"

static const struct rbln_model_operand_rule rbln_model_rule_fill_dst = {
	.access = RBLN_MODEL_WRITE, .offset_align = 4, .size_align = 4,
};

static const struct rbln_model_operand_rule rbln_model_rule_copy_dst = {
	.access = RBLN_MODEL_WRITE, .offset_align = 1, .size_align = 1,
};

static const struct rbln_model_operand_rule rbln_model_rule_copy_src = {
	.access = RBLN_MODEL_READ, .offset_align = 1, .size_align = 1,
};

static const struct rbln_model_operand_rule rbln_model_rule_signal = {
	.access = RBLN_MODEL_WRITE, .offset_align = 8, .size_align = 1,
	.exact_size = 8,
};

static const struct rbln_model_operand_rule rbln_model_rule_wait = {
	.access = RBLN_MODEL_READ, .offset_align = 8, .size_align = 1,
	.exact_size = 8,
};

static const struct rbln_model_operand_rule rbln_model_rule_add_dst = {
	.access = RBLN_MODEL_WRITE, .offset_align = 4, .size_align = 4,
};

static const struct rbln_model_operand_rule rbln_model_rule_add_src = {
	.access = RBLN_MODEL_READ, .offset_align = 4, .size_align = 4,
};

/**
 * rbln_model_diag_set() - fill a diagnostic record, if there is one
 * @diag: the record, or NULL
 * @reason: an &enum rbln_isa_error value
 * @cmd_index: index of the command
 * @cmd_offset: byte offset of the command in the stream
 * @opcode: its opcode, or RBLN_ISA_NO_INDEX
 * @operand: index of the operand, or RBLN_ISA_NO_INDEX
 */
void rbln_model_diag_set(struct rbln_model_diag *diag, u32 reason,
			 u32 cmd_index, u32 cmd_offset, u16 opcode,
			 u16 operand)
{
	if (!diag)
		return;
	diag->reason = reason;
	diag->cmd_index = cmd_index;
	diag->cmd_offset = cmd_offset;
	diag->opcode = opcode;
	diag->operand = operand;
}

/**
 * rbln_model_check_header() - check the size and header of a stream
 * @stream: the stream
 * @size: its size in bytes
 * @diag: filled on error (command 0, offset 0, no opcode, no operand)
 *
 * Return: RBLN_ISA_OK or the &enum rbln_isa_error reason.
 */
u32 rbln_model_check_header(const u8 *stream, u64 size,
			    struct rbln_model_diag *diag)
{
	struct rbln_isa_stream_header hdr;
	u32 reason = RBLN_ISA_OK;

	if (!stream || size < sizeof(hdr) || size % RBLN_ISA_ALIGN ||
	    size > RBLN_MODEL_MAX_STREAM_SIZE) {
		reason = RBLN_ISA_ERR_STREAM_SIZE;
	} else {
		memcpy(&hdr, stream, sizeof(hdr));
		if (hdr.magic != RBLN_ISA_MAGIC)
			reason = RBLN_ISA_ERR_MAGIC;
		else if (hdr.version_major != RBLN_ISA_VERSION_MAJOR ||
			 hdr.version_minor > RBLN_ISA_VERSION_MINOR)
			reason = RBLN_ISA_ERR_VERSION;
		else if (hdr.size != size)
			reason = RBLN_ISA_ERR_HEADER_SIZE;
		else if (hdr.flags)
			reason = RBLN_ISA_ERR_RESERVED;
	}
	if (reason != RBLN_ISA_OK)
		rbln_model_diag_set(diag, reason, 0, 0, RBLN_ISA_NO_INDEX,
				    RBLN_ISA_NO_INDEX);
	return reason;
}

/**
 * rbln_model_size_ok() - whether a command size is right for its opcode
 * @opcode: the opcode
 * @size: the size field of the command
 *
 * Return: true for a known opcode with a size it allows.
 */
static bool rbln_model_size_ok(u16 opcode, u16 size)
{
	switch (opcode) {
	case RBLN_OP_NOP:
		return size >= sizeof(struct rbln_isa_cmd) &&
		       size <= RBLN_ISA_CMD_MAX_SIZE &&
		       !(size % RBLN_ISA_ALIGN);
	case RBLN_OP_BARRIER:
		return size == sizeof(struct rbln_isa_cmd);
	case RBLN_OP_FILL:
		return size == sizeof(struct rbln_isa_fill);
	case RBLN_OP_COPY:
		return size == sizeof(struct rbln_isa_copy);
	case RBLN_OP_SEM_SIGNAL:
		return size == sizeof(struct rbln_isa_sem_signal);
	case RBLN_OP_SEM_WAIT:
		return size == sizeof(struct rbln_isa_sem_wait);
	case RBLN_OP_ADD:
		return size == sizeof(struct rbln_isa_add);
	}
	return size == rbln_model_cmd_size(opcode);
}

/**
 * rbln_model_opcode_known() - whether the ISA defines an opcode
 * @opcode: the opcode
 *
 * Return: true if it does.
 */
static bool rbln_model_opcode_known(u16 opcode)
{
	return rbln_model_opcode_name(opcode);
}

/**
 * rbln_model_check_operand() - check one operand against its rule
 * @op: the operand
 * @rule: what the opcode requires of it
 * @bos: the buffer list
 * @nbos: entries in @bos
 *
 * The order of the checks is part of the contract (rbln_model.h): each
 * check may rely on the ones before it, e.g. bounds on a sum that cannot
 * overflow.
 *
 * Return: RBLN_ISA_OK or the &enum rbln_isa_error reason.
 */
static u32
rbln_model_check_operand(const struct rbln_isa_operand *op,
			 const struct rbln_model_operand_rule *rule,
			 const struct rbln_model_bo *bos, u32 nbos)
{
	const struct rbln_model_bo *bo;

	if (op->flags)
		return RBLN_ISA_ERR_RESERVED;
	if (op->bo >= nbos)
		return RBLN_ISA_ERR_BO_INDEX;
	bo = &bos[op->bo];
	if (op->size > ~(u64)0 - op->offset)
		return RBLN_ISA_ERR_OVERFLOW;
	if (op->offset + op->size > bo->size)
		return RBLN_ISA_ERR_BOUNDS;
	if ((op->offset & (rule->offset_align - 1)) ||
	    (op->size & (rule->size_align - 1)))
		return RBLN_ISA_ERR_ALIGN;
	if (!op->size || (rule->exact_size && op->size != rule->exact_size))
		return RBLN_ISA_ERR_LENGTH;
	if ((bo->access & rule->access) != rule->access)
		return RBLN_ISA_ERR_ACCESS;
	return RBLN_ISA_OK;
}

/**
 * rbln_model_check_operands() - check the operands of a command in order
 * @ops: the operands
 * @rules: the rule of each operand
 * @n: number of operands
 * @bos: the buffer list
 * @nbos: entries in @bos
 * @operand: set to the index of the first bad operand
 *
 * Return: RBLN_ISA_OK or the reason the first bad operand failed.
 */
u32 rbln_model_check_operands(const struct rbln_isa_operand *const *ops,
			      const struct rbln_model_operand_rule *const *rules,
			      u32 n, const struct rbln_model_bo *bos, u32 nbos,
			      u16 *operand)
{
	u32 reason;
	u32 i;

	for (i = 0; i < n; i++) {
		reason = rbln_model_check_operand(ops[i], rules[i], bos, nbos);
		if (reason != RBLN_ISA_OK) {
			*operand = i;
			return reason;
		}
	}
	return RBLN_ISA_OK;
}

/**
 * rbln_model_overlap() - whether two checked operands share any byte
 * @x: one operand
 * @y: the other
 *
 * Both operands have passed rbln_model_check_operand(), so their ends do
 * not overflow.
 *
 * Return: true if they name intersecting ranges of one buffer.
 */
bool rbln_model_overlap(const struct rbln_isa_operand *x,
			const struct rbln_isa_operand *y)
{
	return x->bo == y->bo && x->offset < y->offset + y->size &&
	       y->offset < x->offset + x->size;
}

/**
 * rbln_model_check_nop() - check that the body of a NOP is zero
 * @body: the bytes after the command header
 * @len: their number
 *
 * Return: RBLN_ISA_OK or RBLN_ISA_ERR_RESERVED.
 */
static u32 rbln_model_check_nop(const u8 *body, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (body[i])
			return RBLN_ISA_ERR_RESERVED;
	return RBLN_ISA_OK;
}

/**
 * rbln_model_check_fill() - check the fields and operand of a FILL
 * @f: the command
 * @bos: the buffer list
 * @nbos: entries in @bos
 * @operand: set to the index of a bad operand
 *
 * Return: RBLN_ISA_OK or the &enum rbln_isa_error reason.
 */
static u32 rbln_model_check_fill(const struct rbln_isa_fill *f,
				 const struct rbln_model_bo *bos, u32 nbos,
				 u16 *operand)
{
	const struct rbln_isa_operand *ops[] = { &f->dst };
	const struct rbln_model_operand_rule *rules[] = {
		&rbln_model_rule_fill_dst,
	};

	if (f->pad)
		return RBLN_ISA_ERR_RESERVED;
	return rbln_model_check_operands(ops, rules, 1, bos, nbos, operand);
}

/**
 * rbln_model_check_copy() - check the operands of a COPY
 * @c: the command
 * @bos: the buffer list
 * @nbos: entries in @bos
 * @operand: set to the index of a bad operand
 *
 * Overlap is allowed: COPY has memmove semantics.
 *
 * Return: RBLN_ISA_OK or the &enum rbln_isa_error reason.
 */
static u32 rbln_model_check_copy(const struct rbln_isa_copy *c,
				 const struct rbln_model_bo *bos, u32 nbos,
				 u16 *operand)
{
	const struct rbln_isa_operand *ops[] = { &c->dst, &c->src };
	const struct rbln_model_operand_rule *rules[] = {
		&rbln_model_rule_copy_dst, &rbln_model_rule_copy_src,
	};
	u32 reason;

	reason = rbln_model_check_operands(ops, rules, 2, bos, nbos, operand);
	if (reason != RBLN_ISA_OK)
		return reason;
	if (c->src.size != c->dst.size) {
		*operand = 1;
		return RBLN_ISA_ERR_LENGTH;
	}
	return RBLN_ISA_OK;
}

/**
 * rbln_model_check_signal() - check the fields and operand of a SEM_SIGNAL
 * @s: the command
 * @bos: the buffer list
 * @nbos: entries in @bos
 * @operand: set to the index of a bad operand
 *
 * Return: RBLN_ISA_OK or the &enum rbln_isa_error reason.
 */
static u32 rbln_model_check_signal(const struct rbln_isa_sem_signal *s,
				   const struct rbln_model_bo *bos, u32 nbos,
				   u16 *operand)
{
	const struct rbln_isa_operand *ops[] = { &s->sem };
	const struct rbln_model_operand_rule *rules[] = {
		&rbln_model_rule_signal,
	};

	if (s->pad)
		return RBLN_ISA_ERR_RESERVED;
	if (s->op != RBLN_SEM_SET && s->op != RBLN_SEM_ADD)
		return RBLN_ISA_ERR_ENUM;
	return rbln_model_check_operands(ops, rules, 1, bos, nbos, operand);
}

/**
 * rbln_model_check_wait() - check the fields and operand of a SEM_WAIT
 * @w: the command
 * @bos: the buffer list
 * @nbos: entries in @bos
 * @operand: set to the index of a bad operand
 *
 * Return: RBLN_ISA_OK or the &enum rbln_isa_error reason.
 */
static u32 rbln_model_check_wait(const struct rbln_isa_sem_wait *w,
				 const struct rbln_model_bo *bos, u32 nbos,
				 u16 *operand)
{
	const struct rbln_isa_operand *ops[] = { &w->sem };
	const struct rbln_model_operand_rule *rules[] = {
		&rbln_model_rule_wait,
	};

	if (w->pad)
		return RBLN_ISA_ERR_RESERVED;
	if (w->cond != RBLN_SEM_GEQ && w->cond != RBLN_SEM_EQ)
		return RBLN_ISA_ERR_ENUM;
	if (!w->timeout_ns || w->timeout_ns > RBLN_ISA_SEM_WAIT_MAX_NS)
		return RBLN_ISA_ERR_TIMEOUT;
	return rbln_model_check_operands(ops, rules, 1, bos, nbos, operand);
}

/**
 * rbln_model_check_add() - check the operands of an ADD
 * @c: the command
 * @bos: the buffer list
 * @nbos: entries in @bos
 * @operand: set to the index of a bad operand
 *
 * @dst may be @a or @b exactly (in-place accumulation stays element-wise);
 * a partial overlap would let the vector loop read elements it has already
 * written, so it is rejected. @a and @b are only read and may overlap.
 *
 * Return: RBLN_ISA_OK or the &enum rbln_isa_error reason.
 */
static u32 rbln_model_check_add(const struct rbln_isa_add *c,
				const struct rbln_model_bo *bos, u32 nbos,
				u16 *operand)
{
	const struct rbln_isa_operand *ops[] = { &c->dst, &c->a, &c->b };
	const struct rbln_model_operand_rule *rules[] = {
		&rbln_model_rule_add_dst, &rbln_model_rule_add_src,
		&rbln_model_rule_add_src,
	};
	u32 reason;
	u32 i;

	reason = rbln_model_check_operands(ops, rules, 3, bos, nbos, operand);
	if (reason != RBLN_ISA_OK)
		return reason;
	for (i = 1; i < 3; i++) {
		if (ops[i]->size != c->dst.size) {
			*operand = i;
			return RBLN_ISA_ERR_LENGTH;
		}
	}
	/* Equal sizes: an exact alias is an overlap at the same offset. */
	for (i = 1; i < 3; i++) {
		if (rbln_model_overlap(&c->dst, ops[i]) &&
		    ops[i]->offset != c->dst.offset) {
			*operand = i;
			return RBLN_ISA_ERR_OVERLAP;
		}
	}
	return RBLN_ISA_OK;
}

/**
 * rbln_model_check_body() - check what follows a command's header
 * @body: the command's bytes in the stream (for the NOP body)
 * @cmd: the command, copied out
 * @bos: the buffer list
 * @nbos: entries in @bos
 * @operand: set to the index of a bad operand
 *
 * Return: RBLN_ISA_OK or the &enum rbln_isa_error reason.
 */
static u32 rbln_model_check_body(const u8 *body,
				 const struct rbln_model_cmd *cmd,
				 const struct rbln_model_bo *bos, u32 nbos,
				 u16 *operand)
{
	switch (cmd->u.hdr.opcode) {
	case RBLN_OP_NOP:
		return rbln_model_check_nop(body + sizeof(struct rbln_isa_cmd),
					    cmd->u.hdr.size -
					    sizeof(struct rbln_isa_cmd));
	case RBLN_OP_BARRIER:
		return RBLN_ISA_OK;
	case RBLN_OP_FILL:
		return rbln_model_check_fill(&cmd->u.fill, bos, nbos, operand);
	case RBLN_OP_COPY:
		return rbln_model_check_copy(&cmd->u.copy, bos, nbos, operand);
	case RBLN_OP_SEM_SIGNAL:
		return rbln_model_check_signal(&cmd->u.signal, bos, nbos,
					       operand);
	case RBLN_OP_SEM_WAIT:
		return rbln_model_check_wait(&cmd->u.wait, bos, nbos, operand);
	case RBLN_OP_ADD:
		return rbln_model_check_add(&cmd->u.add, bos, nbos, operand);
	}
	return rbln_model_check_compute(cmd, bos, nbos, operand);
}

/**
 * rbln_model_decode() - copy out and check the command at an offset
 * @stream: the stream, whose header has been checked
 * @size: its size
 * @offset: where the command starts, below @size
 * @index: the command's index in the stream
 * @bos: the buffer list
 * @nbos: entries in @bos
 * @cmd: filled with the command; its header is valid when this returns
 *	RBLN_ISA_OK, so the next command starts at @offset + cmd->u.hdr.size
 * @diag: filled on error
 *
 * Return: RBLN_ISA_OK or the &enum rbln_isa_error reason.
 */
u32 rbln_model_decode(const u8 *stream, u64 size, u32 offset, u32 index,
		      const struct rbln_model_bo *bos, u32 nbos,
		      struct rbln_model_cmd *cmd, struct rbln_model_diag *diag)
{
	u64 left = size - offset;
	u16 operand = RBLN_ISA_NO_INDEX;
	u32 reason;
	u32 len;

	cmd->index = index;
	cmd->offset = offset;
	if (left < sizeof(struct rbln_isa_cmd)) {
		/* Unreachable for an 8-aligned stream; kept as a guard. */
		rbln_model_diag_set(diag, RBLN_ISA_ERR_TRUNCATED, index, offset,
				    RBLN_ISA_NO_INDEX, RBLN_ISA_NO_INDEX);
		return RBLN_ISA_ERR_TRUNCATED;
	}
	memcpy(&cmd->u.hdr, stream + offset, sizeof(cmd->u.hdr));
	if (!rbln_model_opcode_known(cmd->u.hdr.opcode)) {
		reason = RBLN_ISA_ERR_OPCODE;
	} else if (!rbln_model_size_ok(cmd->u.hdr.opcode, cmd->u.hdr.size)) {
		reason = RBLN_ISA_ERR_CMD_SIZE;
	} else if (cmd->u.hdr.size > left) {
		reason = RBLN_ISA_ERR_TRUNCATED;
	} else if (cmd->u.hdr.flags &
		   ~rbln_model_cmd_flags(cmd->u.hdr.opcode)) {
		reason = RBLN_ISA_ERR_RESERVED;
	} else {
		/* Only NOP is larger than the union, and its body stays put. */
		len = cmd->u.hdr.size;
		if (len > sizeof(cmd->u))
			len = sizeof(cmd->u);
		memcpy(&cmd->u, stream + offset, len);
		reason = rbln_model_check_body(stream + offset, cmd, bos, nbos,
					       &operand);
	}
	if (reason != RBLN_ISA_OK)
		rbln_model_diag_set(diag, reason, index, offset,
				    cmd->u.hdr.opcode, operand);
	return reason;
}

/**
 * rbln_model_validate() - check a whole stream against its buffer list
 * @stream: the stream (a private copy the caller will also execute)
 * @size: its size in bytes
 * @bos: the buffer list
 * @nbos: entries in @bos
 * @diag: filled with the reason and position of the first error; zeroed
 *	on success. May be NULL.
 *
 * Return: 0, or -RBLN_EINVAL with @diag saying why.
 */
int rbln_model_validate(const void *stream, u64 size,
			const struct rbln_model_bo *bos, u32 nbos,
			struct rbln_model_diag *diag)
{
	const u8 *s = stream;
	struct rbln_model_cmd cmd;
	u32 offset;
	u32 index;

	if (rbln_model_check_header(s, size, diag) != RBLN_ISA_OK)
		return -RBLN_EINVAL;
	/* The header check bounds @size by RBLN_MODEL_MAX_STREAM_SIZE. */
	offset = sizeof(struct rbln_isa_stream_header);
	for (index = 0; offset < size; index++) {
		if (rbln_model_decode(s, size, offset, index, bos, nbos, &cmd,
				      diag) != RBLN_ISA_OK)
			return -RBLN_EINVAL;
		offset += cmd.u.hdr.size;
	}
	rbln_model_diag_set(diag, RBLN_ISA_OK, 0, 0, 0, 0);
	return 0;
}
