// SPDX-License-Identifier: MIT
/*
 * The command encoder: one function per opcode, each filling the uapi
 * structure field by field.  Only this file and isa_validate.c see
 * uapi/rbln_isa.h (its enumerators clash with rbln_dtype.h's).
 */
#include <errno.h>
#include <string.h>

#include "rbln_isa.h"

#include "program/isa_emit.h"

_Static_assert(EMIT_MAX_HEAD_DIM == RBLN_ISA_MAX_HEAD_DIM, "head_dim limit");
_Static_assert(EMIT_PACK_COLS == RBLN_ISA_PACK_COLS, "pack width");
_Static_assert(EMIT_SEM_WAIT_MAX_NS == RBLN_ISA_SEM_WAIT_MAX_NS, "wait limit");

_Static_assert((int)EMIT_F32 == (int)RBLN_DTYPE_F32 && (int)EMIT_F16 == (int)RBLN_DTYPE_F16 &&
	       (int)EMIT_BF16 == (int)RBLN_DTYPE_BF16, "dtype values");

static uint32_t isa_dtype(enum emit_dtype dt)
{
	return (uint32_t)dt;
}

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static struct rbln_isa_operand operand(struct emit_op op)
{
	struct rbln_isa_operand o = { .bo = op.slot, .offset = op.offset, .size = op.size };

	return o;
}

void emit_init(struct emit_stream *s)
{
	struct rbln_isa_stream_header h = {
		.magic = RBLN_ISA_MAGIC,
		.version_major = RBLN_ISA_VERSION_MAJOR,
		.version_minor = RBLN_ISA_VERSION_MINOR,
	};

	memset(s, 0, sizeof(*s));
	if (rbln_strbuf_append(&s->buf, &h, sizeof(h)))
		s->error = -ENOMEM;
}

void emit_free(struct emit_stream *s)
{
	rbln_strbuf_free(&s->buf);
}

/* Appends a command whose first 8 bytes are its struct rbln_isa_cmd. */
static void put(struct emit_stream *s, void *cmd, size_t size, uint16_t opcode, uint32_t flags)
{
	struct rbln_isa_cmd *hdr = cmd;

	if (s->error)
		return;
	hdr->opcode = opcode;
	hdr->size = (uint16_t)size;
	hdr->flags = flags;
	if (size % RBLN_ISA_ALIGN || rbln_strbuf_append(&s->buf, cmd, size)) {
		s->error = -ENOMEM;
		return;
	}
	s->commands++;
}

int emit_finish(struct emit_stream *s, const void **data, size_t *len)
{
	struct rbln_isa_stream_header *h;

	if (s->error)
		return s->error;
	if (s->buf.len > UINT32_MAX)
		return -E2BIG;
	h = (struct rbln_isa_stream_header *)s->buf.data;
	h->size = (uint32_t)s->buf.len;
	*data = s->buf.data;
	*len = s->buf.len;
	return 0;
}

void emit_embed(struct emit_stream *s, struct emit_op dst, struct emit_op table,
		struct emit_op ids, enum emit_dtype dt, uint32_t dim, uint32_t id_base,
		bool zero_outside)
{
	struct rbln_isa_embed c = {
		.dst = operand(dst), .table = operand(table), .ids = operand(ids),
		.dtype = isa_dtype(dt), .dim = dim, .id_base = id_base,
	};

	put(s, &c, sizeof(c), RBLN_OP_EMBED, zero_outside ? RBLN_EMBED_ZERO_OUTSIDE : 0);
}

void emit_rmsnorm(struct emit_stream *s, struct emit_op dst, struct emit_op src,
		  struct emit_op weight, enum emit_dtype dt, uint32_t dim, float eps)
{
	struct rbln_isa_rmsnorm c = {
		.dst = operand(dst), .src = operand(src), .weight = operand(weight),
		.dtype = isa_dtype(dt), .dim = dim, .eps = f32_bits(eps),
	};

	put(s, &c, sizeof(c), RBLN_OP_RMSNORM, 0);
}

void emit_matmul(struct emit_stream *s, struct emit_op dst, struct emit_op a, struct emit_op w,
		 enum emit_dtype dt, uint32_t k, uint32_t n, bool accumulate)
{
	struct rbln_isa_matmul c = {
		.dst = operand(dst), .a = operand(a), .w = operand(w),
		.dtype = isa_dtype(dt), .layout = RBLN_LAYOUT_PACKED16, .k = k, .n = n,
	};

	put(s, &c, sizeof(c), RBLN_OP_MATMUL, accumulate ? RBLN_MATMUL_ACCUMULATE : 0);
}

void emit_rope(struct emit_stream *s, struct emit_op x, struct emit_op pos, uint32_t heads,
	       uint32_t head_dim, uint32_t stride, const struct emit_rope_params *rope)
{
	struct rbln_isa_rope c = {
		.x = operand(x), .pos = operand(pos), .heads = heads, .head_dim = head_dim,
		.stride = stride, .scaling = RBLN_ROPE_SCALING_DEFAULT, .theta = f32_bits(rope->theta),
	};

	if (rope->llama3) {
		c.scaling = RBLN_ROPE_SCALING_LLAMA3;
		c.factor = f32_bits(rope->factor);
		c.low_freq_factor = f32_bits(rope->low_freq_factor);
		c.high_freq_factor = f32_bits(rope->high_freq_factor);
		c.original_max_pos = rope->original_max_pos;
	}
	put(s, &c, sizeof(c), RBLN_OP_ROPE, 0);
}

void emit_swiglu(struct emit_stream *s, struct emit_op dst, struct emit_op gate,
		 struct emit_op up, uint32_t n, uint32_t gate_stride, uint32_t up_stride)
{
	struct rbln_isa_swiglu c = {
		.dst = operand(dst), .gate = operand(gate), .up = operand(up), .n = n,
		.gate_stride = gate_stride, .up_stride = up_stride,
	};

	put(s, &c, sizeof(c), RBLN_OP_SWIGLU, 0);
}

void emit_kv_write(struct emit_stream *s, struct emit_op k_cache, struct emit_op v_cache,
		   struct emit_op k, struct emit_op v, struct emit_op slots,
		   const struct emit_kv_shape *kv, uint32_t k_stride, uint32_t v_stride)
{
	struct rbln_isa_kv_write c = {
		.k_cache = operand(k_cache), .v_cache = operand(v_cache), .k = operand(k),
		.v = operand(v), .slots = operand(slots), .dtype = isa_dtype(kv->dtype),
		.block_size = kv->block_size, .kv_heads = kv->kv_heads, .head_dim = kv->head_dim,
		.k_stride = k_stride, .v_stride = v_stride,
	};

	put(s, &c, sizeof(c), RBLN_OP_KV_WRITE, 0);
}

void emit_attention(struct emit_stream *s, const struct emit_attention *a)
{
	struct rbln_isa_attention c = {
		.out = operand(a->out), .q = operand(a->q), .k_cache = operand(a->k_cache),
		.v_cache = operand(a->v_cache), .seqs = operand(a->seqs),
		.block_tables = operand(a->block_tables), .work = operand(a->work),
		.dtype = isa_dtype(a->kv.dtype), .block_size = a->kv.block_size,
		.q_heads = a->q_heads, .kv_heads = a->kv.kv_heads, .head_dim = a->kv.head_dim,
		.q_stride = a->q_stride, .max_blocks = a->max_blocks,
		.partition_len = a->partition_len, .scale = f32_bits(a->scale),
	};

	put(s, &c, sizeof(c), RBLN_OP_ATTENTION, 0);
}

void emit_argmax(struct emit_stream *s, struct emit_op values, struct emit_op indices,
		 struct emit_op src, uint32_t n, uint32_t index_base)
{
	struct rbln_isa_argmax c = {
		.values = operand(values), .indices = operand(indices), .src = operand(src),
		.n = n, .index_base = index_base,
	};

	put(s, &c, sizeof(c), RBLN_OP_ARGMAX, 0);
}

void emit_add(struct emit_stream *s, struct emit_op dst, struct emit_op a, struct emit_op b)
{
	struct rbln_isa_add c = { .dst = operand(dst), .a = operand(a), .b = operand(b) };

	put(s, &c, sizeof(c), RBLN_OP_ADD, 0);
}

void emit_sem_add(struct emit_stream *s, struct emit_op sem, uint64_t value)
{
	struct rbln_isa_sem_signal c = { .sem = operand(sem), .op = RBLN_SEM_ADD, .value = value };

	put(s, &c, sizeof(c), RBLN_OP_SEM_SIGNAL, 0);
}

void emit_sem_wait_geq(struct emit_stream *s, struct emit_op sem, uint64_t value,
		       uint64_t timeout_ns)
{
	struct rbln_isa_sem_wait c = {
		.sem = operand(sem), .cond = RBLN_SEM_GEQ, .value = value, .timeout_ns = timeout_ns,
	};

	put(s, &c, sizeof(c), RBLN_OP_SEM_WAIT, 0);
}
