// SPDX-License-Identifier: MIT
/*
 * The compute commands of ISA 1.1 to 1.4 through libnpu's builders:
 * MATMUL in every layout (weights packed with npu_pack_weights() and, in
 * 1.4's spaced panels, npu_pack_weights_layout()), bfloat16 and int8 with
 * its scales, bfloat16 activations (1.3), against
 * float64; the ISA minor version each stream claims; one transformer
 * layer's worth of commands chained in a single stream (EMBED, RMSNORM,
 * MATMUL, ROPE, KV_WRITE and ATTENTION on a head-major cache, SWIGLU,
 * ARGMAX, TOPK), each result checked against a float64 reference computed
 * from the device's own inputs to it; and the errors: a shape or cache
 * layout the builder refuses, a stream the device rejects (named in the
 * detail), and a run-time fault of index data (-EIO). Tolerances as in
 * tests/model.
 */
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance.h"

#define U (1.0 / 16777216.0)

static float frand(void)
{
	return (float)((int64_t)(conf_rand() % 2000001) - 1000000) / 1e6f;
}

static uint16_t to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static float from_bf16(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static npu_buffer *alloc_map(npu_device *dev, uint64_t size, void **map)
{
	npu_buffer *b = conf_alloc(dev, size, 0);

	*map = conf_map(b);
	memset(*map, 0xff, size);	/* poison: NaN, int32 -1 */
	return b;
}

/* c [m, n] = a [m, k] . w [n, k]^T (+ c0), checked element by element. */
static void check_matmul(const float *c, const float *a, const float *w,
			 const float *c0, uint32_t m, uint32_t k, uint32_t n)
{
	for (uint32_t i = 0; i < m; i++)
		for (uint32_t j = 0; j < n; j++) {
			double ref = c0 ? c0[i * n + j] : 0, mag = fabs(ref);

			for (uint32_t x = 0; x < k; x++) {
				ref += (double)a[i * k + x] * w[j * k + x];
				mag += fabs((double)a[i * k + x] * w[j * k + x]);
			}
			if (!(fabs(c[i * n + j] - ref) <= (k + 2) * U * mag + 1e-30))
				fail_msg("matmul [%u,%u] %.9g want %.9g", i, j,
					 c[i * n + j], ref);
		}
}

static unsigned int stream_minor(npu_stream *s);

static void test_matmul(void **state)
{
	struct fixture *fx = *state;
	const uint32_t m = 3, k = 37, n = 21;
	npu_device *dev = fx->dev[fx->count - 1];
	npu_stream *s = fx->stream[fx->count - 1];
	float a[3 * 37], w[21 * 37], c0[3 * 21];
	uint16_t wb[21 * 37];
	float *pa, *pc, *pc2, *pwf;
	void *pw, *pwp;
	npu_buffer *ba, *bc, *bc2, *bw, *bwp, *bwf;

	for (uint32_t i = 0; i < m * k; i++)
		a[i] = frand();
	for (uint32_t i = 0; i < n * k; i++) {
		wb[i] = to_bf16(frand());
		w[i] = from_bf16(wb[i]);
	}
	for (uint32_t i = 0; i < m * n; i++)
		c0[i] = frand();
	ba = alloc_map(dev, sizeof(a), (void **)&pa);
	bc = alloc_map(dev, sizeof(c0), (void **)&pc);
	bc2 = alloc_map(dev, sizeof(c0), (void **)&pc2);
	bw = alloc_map(dev, sizeof(wb), &pw);
	bwp = alloc_map(dev, npu_packed_weights_size(NPU_DTYPE_BF16, n, k),
			&pwp);
	bwf = alloc_map(dev, sizeof(w), (void **)&pwf);
	memcpy(pa, a, sizeof(a));
	memcpy(pw, wb, sizeof(wb));
	memcpy(pwf, w, sizeof(w));
	memcpy(pc2, c0, sizeof(c0));
	assert_ok(npu_pack_weights(pwp, wb, NPU_DTYPE_BF16, n, k));
	/* Two panels and a gap after each: the sizes the device checks. */
	assert_int_equal(npu_weights_size(NPU_DTYPE_BF16,
					  NPU_LAYOUT_PACKED16_SPACED, n, k),
			 2 * (k * 16 * 2 + RBLN_ISA_PANEL_GAP));
	assert_int_equal(npu_weights_size(NPU_DTYPE_BF16, NPU_LAYOUT_PACKED16,
					  n, k),
			 npu_packed_weights_size(NPU_DTYPE_BF16, n, k));
	assert_int_equal(npu_weights_size(NPU_DTYPE_BF16, 7, n, k), 0);

	struct npu_matmul mm = {
		.dst = { bc, 0 }, .a = { ba, 0 }, .w = { bwp, 0 }, .m = m,
		.k = k, .n = n, .dtype = NPU_DTYPE_BF16,
		.layout = NPU_LAYOUT_PACKED16,
	};

	npu_stream_matmul(s, &mm);
	/* The same product from row-major float32 weights, accumulated. */
	mm.dst.buf = bc2;
	mm.w.buf = bwf;
	mm.dtype = NPU_DTYPE_F32;
	mm.layout = NPU_LAYOUT_ROWMAJOR;
	mm.accumulate = 1;
	npu_stream_matmul(s, &mm);
	conf_run(s, fx->queue[fx->count - 1]);
	check_matmul(pc, a, w, NULL, m, k, n);
	check_matmul(pc2, a, w, c0, m, k, n);

	/* Row-major bfloat16 gives the packed result's bits. */
	mm = (struct npu_matmul){
		.dst = { bc2, 0 }, .a = { ba, 0 }, .w = { bw, 0 }, .m = m,
		.k = k, .n = n, .dtype = NPU_DTYPE_BF16,
		.layout = NPU_LAYOUT_ROWMAJOR,
	};
	npu_stream_matmul(s, &mm);
	conf_run(s, fx->queue[fx->count - 1]);
	assert_memory_equal(pc, pc2, sizeof(c0));

	/* So do the spaced panels, whatever the gaps hold. */
	npu_buffer_free(bwp);
	bwp = alloc_map(dev, npu_weights_size(NPU_DTYPE_BF16,
					      NPU_LAYOUT_PACKED16_SPACED,
					      n, k), &pwp);
	assert_ok(npu_pack_weights_layout(pwp, wb, NPU_DTYPE_BF16,
					  NPU_LAYOUT_PACKED16_SPACED, n, k));
	memset((uint8_t *)pwp + k * 16 * 2, 0x7f, RBLN_ISA_PANEL_GAP);
	mm.w.buf = bwp;
	mm.layout = NPU_LAYOUT_PACKED16_SPACED;
	npu_stream_matmul(s, &mm);
	assert_int_equal(stream_minor(s), 4);
	conf_run(s, fx->queue[fx->count - 1]);
	assert_memory_equal(pc, pc2, sizeof(c0));
	npu_buffer_free(ba);
	npu_buffer_free(bc);
	npu_buffer_free(bc2);
	npu_buffer_free(bw);
	npu_buffer_free(bwp);
	npu_buffer_free(bwf);
}

/*
 * int8 weights (w8a16): the row-major operand (int8, then a scale per
 * column of whole panels) and its npu_pack_weights() form give the same
 * bits, within the float64 bound of the dequantised weights f32(q) * scale.
 */
static void test_matmul_i8(void **state)
{
	struct fixture *fx = *state;
	const uint32_t m = 3, k = 37, n = 21, cols = 32;
	npu_device *dev = fx->dev[fx->count - 1];
	npu_stream *s = fx->stream[fx->count - 1];
	uint64_t rm_size = (uint64_t)n * k + cols * 4;
	uint64_t pk_size = npu_packed_weights_size(NPU_DTYPE_I8, n, k);
	float a[3 * 37], w[21 * 37], scale[32] = { 0 };
	int8_t q[21 * 37];
	uint8_t *prm, *ppk;
	float *pa, *pc, *pc2;
	npu_buffer *ba, *bc, *bc2, *brm, *bpk;

	assert_int_equal(pk_size, (uint64_t)cols * k + cols * 4);
	for (uint32_t i = 0; i < m * k; i++)
		a[i] = frand();
	for (uint32_t j = 0; j < n; j++)
		scale[j] = (1.0f + frand()) / 127.0f;
	for (uint32_t i = 0; i < n * k; i++) {
		q[i] = (int8_t)((int)(conf_rand() % 255) - 127);
		w[i] = (float)q[i] * scale[i / k];
	}
	ba = alloc_map(dev, sizeof(a), (void **)&pa);
	bc = alloc_map(dev, (uint64_t)m * n * 4, (void **)&pc);
	bc2 = alloc_map(dev, (uint64_t)m * n * 4, (void **)&pc2);
	brm = alloc_map(dev, rm_size, (void **)&prm);
	bpk = alloc_map(dev, pk_size, (void **)&ppk);
	memcpy(pa, a, sizeof(a));
	memcpy(prm, q, sizeof(q));
	memcpy(prm + sizeof(q), scale, sizeof(scale));
	assert_ok(npu_pack_weights(ppk, prm, NPU_DTYPE_I8, n, k));

	struct npu_matmul mm = {
		.dst = { bc, 0 }, .a = { ba, 0 }, .w = { bpk, 0 }, .m = m,
		.k = k, .n = n, .dtype = NPU_DTYPE_I8,
		.layout = NPU_LAYOUT_PACKED16,
	};

	npu_stream_matmul(s, &mm);
	mm.dst.buf = bc2;
	mm.w.buf = brm;
	mm.layout = NPU_LAYOUT_ROWMAJOR;
	npu_stream_matmul(s, &mm);
	conf_run(s, fx->queue[fx->count - 1]);
	check_matmul(pc, a, w, NULL, m, k, n);
	assert_memory_equal(pc, pc2, (size_t)m * n * 4);
	npu_buffer_free(ba);
	npu_buffer_free(bc);
	npu_buffer_free(bc2);
	npu_buffer_free(brm);
	npu_buffer_free(bpk);
}

/* The last command of @s's stream with @opcode, copied into @cmd. */
static bool last_cmd(npu_stream *s, uint16_t opcode, void *cmd, size_t size)
{
	const uint8_t *p = npu_stream_data(s);
	uint64_t at = sizeof(struct rbln_isa_stream_header);
	uint64_t end = npu_stream_size(s);
	bool found = false;

	while (at < end) {
		struct rbln_isa_cmd hdr;

		memcpy(&hdr, p + at, sizeof(hdr));
		assert_true(hdr.size >= sizeof(hdr) && hdr.size <= end - at);
		if (hdr.opcode == opcode && hdr.size >= size) {
			memcpy(cmd, p + at, size);
			found = true;
		}
		at += hdr.size;
	}
	return found;
}

static unsigned int stream_minor(npu_stream *s)
{
	const struct rbln_isa_stream_header *h = npu_stream_data(s);

	assert_int_equal(h->version_major, RBLN_ISA_VERSION_MAJOR);
	return h->version_minor;
}

/*
 * MATMUL's bfloat16 activations (ISA 1.3, npu_matmul.a_bf16): the command
 * carries RBLN_MATMUL_A_BF16 and the stream claims ISA 1.3, and the result
 * is within what the ISA allows, (k + 1) * 2^-24 * sum|a w| + 2^-8 *
 * sum|a w| of the real product, whether the device rounds the activations
 * (a kernel with bfloat16 dot products: the avx512 variant on AVX512-BF16
 * CPUs, from 16 rows) or not. A one-row product, a decode batch and a
 * prompt chunk's rows, accumulated onto dst too. a_bf16 other than 0 or 1
 * is refused.
 */
static void check_matmul_bf16(const float *c, const float *a, const float *w,
			      const float *c0, uint32_t m, uint32_t k,
			      uint32_t n)
{
	for (uint32_t i = 0; i < m; i++)
		for (uint32_t j = 0; j < n; j++) {
			double ref = c0 ? c0[i * n + j] : 0, prod = 0;

			for (uint32_t x = 0; x < k; x++) {
				ref += (double)a[i * k + x] * w[j * k + x];
				prod += fabs((double)a[i * k + x] *
					     w[j * k + x]);
			}
			if (!(fabs(c[i * n + j] - ref) <=
			      (k + 2) * U * (prod + fabs(ref)) +
			      prod / 256 + 1e-30))
				fail_msg("a_bf16 matmul [%u,%u] %.9g want %.9g",
					 i, j, c[i * n + j], ref);
		}
}

static void test_matmul_a_bf16(void **state)
{
	struct fixture *fx = *state;
	const uint32_t k = 96, n = 40, rows[3] = { 1, 9, 40 };
	npu_device *dev = fx->dev[fx->count - 1];
	npu_stream *s = fx->stream[fx->count - 1];
	npu_queue *q = fx->queue[fx->count - 1];
	float a[40 * 96], w[40 * 96], c0[40 * 40];
	uint16_t wb[40 * 96];
	struct rbln_isa_matmul cmd;
	float *pa, *pc;
	void *pwp;
	npu_buffer *ba, *bc, *bwp;

	for (uint32_t i = 0; i < 40 * k; i++)
		a[i] = frand() * 3;
	for (uint32_t i = 0; i < n * k; i++) {
		wb[i] = to_bf16(frand());
		w[i] = from_bf16(wb[i]);
	}
	for (uint32_t i = 0; i < 40 * n; i++)
		c0[i] = frand();
	ba = alloc_map(dev, sizeof(a), (void **)&pa);
	bc = alloc_map(dev, sizeof(c0), (void **)&pc);
	bwp = alloc_map(dev, npu_packed_weights_size(NPU_DTYPE_BF16, n, k),
			&pwp);
	memcpy(pa, a, sizeof(a));
	assert_ok(npu_pack_weights(pwp, wb, NPU_DTYPE_BF16, n, k));
	for (int r = 0; r < 3; r++) {
		uint32_t m = rows[r];
		struct npu_matmul mm = {
			.dst = { bc, 0 }, .a = { ba, 0 }, .w = { bwp, 0 },
			.m = m, .k = k, .n = n, .dtype = NPU_DTYPE_BF16,
			.layout = NPU_LAYOUT_PACKED16, .a_bf16 = 1,
		};

		npu_stream_reset(s);
		npu_stream_matmul(s, &mm);
		assert_int_equal(npu_stream_error(s), 0);
		assert_true(last_cmd(s, RBLN_OP_MATMUL, &cmd, sizeof(cmd)));
		assert_int_equal(cmd.hdr.flags, RBLN_MATMUL_A_BF16);
		assert_int_equal(stream_minor(s), 3);
		conf_run(s, q);
		check_matmul_bf16(pc, a, w, NULL, m, k, n);
		/* Accumulating: both flags. */
		memcpy(pc, c0, sizeof(c0));
		mm.accumulate = 1;
		npu_stream_matmul(s, &mm);
		assert_true(last_cmd(s, RBLN_OP_MATMUL, &cmd, sizeof(cmd)));
		assert_int_equal(cmd.hdr.flags,
				 RBLN_MATMUL_A_BF16 | RBLN_MATMUL_ACCUMULATE);
		conf_run(s, q);
		check_matmul_bf16(pc, a, w, c0, m, k, n);
	}
	/* float32 activations, as before 1.3: no flag, an ISA 1.1 stream. */
	npu_stream_reset(s);
	npu_stream_matmul(s, &(struct npu_matmul){
		.dst = { bc, 0 }, .a = { ba, 0 }, .w = { bwp, 0 }, .m = 1,
		.k = k, .n = n, .dtype = NPU_DTYPE_BF16,
		.layout = NPU_LAYOUT_PACKED16, .accumulate = 7,
	});
	assert_true(last_cmd(s, RBLN_OP_MATMUL, &cmd, sizeof(cmd)));
	assert_int_equal(cmd.hdr.flags, RBLN_MATMUL_ACCUMULATE);
	assert_int_equal(stream_minor(s), 1);
	npu_stream_reset(s);
	npu_stream_matmul(s, &(struct npu_matmul){
		.dst = { bc, 0 }, .a = { ba, 0 }, .w = { bwp, 0 }, .m = 1,
		.k = k, .n = n, .dtype = NPU_DTYPE_BF16,
		.layout = NPU_LAYOUT_PACKED16, .a_bf16 = 2,
	});
	assert_int_equal(npu_stream_error(s), -EINVAL);
	assert_detail_contains("a_bf16");
	npu_stream_reset(s);
	npu_buffer_free(ba);
	npu_buffer_free(bc);
	npu_buffer_free(bwp);
}

/*
 * A stream claims the least ISA minor version its commands need (a lower
 * minor is valid on later devices with the same meaning), so that what it
 * does not use does not keep it from an older device: 1.0 for data
 * movement, 1.1 for the compute opcodes, 1.2 for int8 weights and the
 * head-major KV cache, 1.3 for bfloat16 activations, 1.4 for spaced
 * panels; a raw command the
 * encoder does not know (opcode or flag) claims the current version.
 */
static void test_stream_minor(void **state)
{
	struct fixture *fx = *state;
	npu_device *dev = fx->dev[0];
	npu_stream *s = fx->stream[0];
	npu_buffer *b = conf_alloc(dev, 1 << 16, 0);
	struct rbln_isa_cmd unknown = {
		.opcode = RBLN_OP_COUNT, .size = sizeof(unknown),
	};
	struct rbln_isa_cmd unknown_flag = {
		.opcode = RBLN_OP_BARRIER, .size = sizeof(unknown_flag),
		.flags = 0x80000000U,
	};
	struct npu_matmul mm = {
		.dst = { b, 0 }, .a = { b, 4096 }, .w = { b, 8192 }, .m = 2,
		.k = 32, .n = 16, .dtype = NPU_DTYPE_F32,
		.layout = NPU_LAYOUT_ROWMAJOR,
	};

	npu_stream_reset(s);
	assert_int_equal(stream_minor(s), 0);
	npu_stream_fill(s, b, 0, 64, 0);
	npu_stream_barrier(s);
	assert_int_equal(stream_minor(s), 0);
	npu_stream_matmul(s, &mm);
	assert_int_equal(stream_minor(s), 1);
	mm.dtype = NPU_DTYPE_I8;
	npu_stream_matmul(s, &mm);
	assert_int_equal(stream_minor(s), 2);
	mm.dtype = NPU_DTYPE_F32;
	npu_stream_matmul(s, &mm);
	assert_int_equal(stream_minor(s), 2);	/* never lowered */
	mm.a_bf16 = 1;
	npu_stream_matmul(s, &mm);
	assert_int_equal(stream_minor(s), 3);
	assert_int_equal(npu_stream_error(s), 0);
	npu_stream_reset(s);
	assert_int_equal(stream_minor(s), 0);
	npu_stream_kv_write(s, &(struct npu_kv_write){
		.k_cache = { b, 0 }, .v_cache = { b, 4096 }, .k = { b, 8192 },
		.v = { b, 12288 }, .slots = { b, 16384 }, .num_blocks = 2,
		.tokens = 1, .block_size = 4, .kv_heads = 2, .head_dim = 8,
		.dtype = NPU_DTYPE_F32, .layout = NPU_KV_HEAD_MAJOR,
	});
	assert_int_equal(stream_minor(s), 2);
	npu_stream_reset(s);
	npu_stream_raw(s, &unknown, sizeof(unknown));
	assert_int_equal(stream_minor(s), RBLN_ISA_VERSION_MINOR);
	/* So does a flag it does not know, on a command it knows. */
	npu_stream_reset(s);
	npu_stream_raw(s, &unknown_flag, sizeof(unknown_flag));
	assert_int_equal(stream_minor(s), RBLN_ISA_VERSION_MINOR);
	npu_stream_reset(s);
	npu_buffer_free(b);
}

/* The tiny layer's dimensions. */
#define T	5	/* tokens of the prompt */
#define V	50	/* vocabulary */
#define D	32	/* hidden */
#define HQ	4	/* query heads */
#define HKV	2	/* KV heads */
#define HD	8	/* head_dim */
#define BS	4	/* cache block size */
#define NB	4	/* cache blocks */
#define FF	12	/* feed-forward width */

/* float64 RMSNORM of one row, as the ISA defines it. */
static void check_rmsnorm(const float *got, const float *x, const float *w)
{
	double ss = 0;

	for (int i = 0; i < D; i++)
		ss += (double)x[i] * x[i];
	for (int i = 0; i < D; i++) {
		double want = x[i] / sqrt(ss / D + 1e-5) * w[i];

		assert_true(fabs(got[i] - want) <= (D / 8 + 8) * U * fabs(want) +
			    1e-30);
	}
}

/*
 * One layer of a Llama-style model for a 5-token prompt, as one stream:
 * each command reads what the one before it wrote.
 */
static void test_layer_stream(void **state)
{
	struct fixture *fx = *state;
	npu_device *dev = fx->dev[0];
	npu_stream *s = fx->stream[0];
	float *table, *emb, *nw, *h, *wq, *wk, *wv, *q, *kk, *vv, *att, *gu, *ff;
	float *tv, *av;
	int32_t *ids, *pos, *slots, *seqs, *tab, *ti, *ai;
	uint16_t *kc, *vc;
	npu_buffer *b[24];
	int nb = 0;
	double ref;

#define ALLOC(ptr, size) (b[nb++] = alloc_map(dev, (size), (void **)&(ptr)))
	ALLOC(table, V * D * 4);
	ALLOC(ids, T * 4);
	ALLOC(emb, T * D * 4);
	ALLOC(nw, D * 4);
	ALLOC(h, T * D * 4);
	ALLOC(wq, HQ * HD * D * 4);
	ALLOC(wk, HKV * HD * D * 4);
	ALLOC(wv, HKV * HD * D * 4);
	ALLOC(q, T * HQ * HD * 4);
	ALLOC(kk, T * HKV * HD * 4);
	ALLOC(vv, T * HKV * HD * 4);
	ALLOC(pos, T * 4);
	ALLOC(slots, T * 4);
	ALLOC(kc, NB * BS * HKV * HD * 2);
	ALLOC(vc, NB * BS * HKV * HD * 2);
	ALLOC(seqs, 16);
	ALLOC(tab, NB * 4);
	ALLOC(att, T * HQ * HD * 4);
	ALLOC(gu, T * 2 * FF * 4);
	ALLOC(ff, T * FF * 4);
	ALLOC(tv, T * 3 * 4);
	ALLOC(ti, T * 3 * 4);
	ALLOC(av, T * 4);
	ALLOC(ai, T * 4);
#undef ALLOC
	for (int i = 0; i < V * D; i++)
		table[i] = frand();
	for (int i = 0; i < D; i++)
		nw[i] = 0.5f + (frand() + 1) / 2;
	for (int i = 0; i < HQ * HD * D; i++)
		wq[i] = frand();
	for (int i = 0; i < HKV * HD * D; i++) {
		wk[i] = frand();
		wv[i] = frand();
	}
	for (int i = 0; i < T; i++) {
		ids[i] = (int32_t)(conf_rand() % V);
		pos[i] = i;
	}
	/* Blocks 2, 0, 3: tokens 0-3 in block 2, token 4 in block 0. */
	tab[0] = 2;
	tab[1] = 0;
	tab[2] = 3;
	tab[3] = 1;
	for (int i = 0; i < T; i++)
		slots[i] = tab[i / BS] * BS + i % BS;
	seqs[0] = 0;
	seqs[1] = T;
	seqs[2] = T;
	seqs[3] = 0;
	for (int i = 0; i < T * 2 * FF; i++)
		gu[i] = 4 * frand();

	struct npu_attention at = {
		.out = { b[17], 0 }, .q = { b[8], 0 }, .k_cache = { b[13], 0 },
		.v_cache = { b[14], 0 }, .seqs = { b[15], 0 },
		.block_tables = { b[16], 0 }, .rows = T, .num_seqs = 1,
		.num_blocks = NB, .table_rows = 1, .q_heads = HQ,
		.kv_heads = HKV, .head_dim = HD, .block_size = BS,
		.max_blocks = NB, .partition_len = 3, .dtype = NPU_DTYPE_BF16,
		.scale = 0.35355339f, .layout = NPU_KV_HEAD_MAJOR,
	};
	npu_buffer *wbuf = conf_alloc(dev, npu_attention_work_size(&at), 0);

	at.work = (struct npu_tensor){ wbuf, 0 };
	npu_stream_embed(s, &(struct npu_embed){
		.dst = { b[2], 0 }, .table = { b[0], 0 }, .ids = { b[1], 0 },
		.tokens = T, .rows = V, .dim = D, .dtype = NPU_DTYPE_F32 });
	npu_stream_rmsnorm(s, &(struct npu_rmsnorm){
		.dst = { b[4], 0 }, .src = { b[2], 0 }, .weight = { b[3], 0 },
		.rows = T, .dim = D, .dtype = NPU_DTYPE_F32, .eps = 1e-5f });
	npu_stream_matmul(s, &(struct npu_matmul){
		.dst = { b[8], 0 }, .a = { b[4], 0 }, .w = { b[5], 0 }, .m = T,
		.k = D, .n = HQ * HD, .dtype = NPU_DTYPE_F32 });
	npu_stream_matmul(s, &(struct npu_matmul){
		.dst = { b[9], 0 }, .a = { b[4], 0 }, .w = { b[6], 0 }, .m = T,
		.k = D, .n = HKV * HD, .dtype = NPU_DTYPE_F32 });
	npu_stream_matmul(s, &(struct npu_matmul){
		.dst = { b[10], 0 }, .a = { b[4], 0 }, .w = { b[7], 0 },
		.m = T, .k = D, .n = HKV * HD, .dtype = NPU_DTYPE_F32 });
	npu_stream_rope(s, &(struct npu_rope){
		.x = { b[8], 0 }, .pos = { b[11], 0 }, .tokens = T,
		.heads = HQ, .head_dim = HD, .theta = 10000.0f });
	npu_stream_rope(s, &(struct npu_rope){
		.x = { b[9], 0 }, .pos = { b[11], 0 }, .tokens = T,
		.heads = HKV, .head_dim = HD, .theta = 10000.0f });
	npu_stream_kv_write(s, &(struct npu_kv_write){
		.k_cache = { b[13], 0 }, .v_cache = { b[14], 0 },
		.k = { b[9], 0 }, .v = { b[10], 0 }, .slots = { b[12], 0 },
		.num_blocks = NB, .tokens = T, .block_size = BS,
		.kv_heads = HKV, .head_dim = HD, .dtype = NPU_DTYPE_BF16,
		.layout = NPU_KV_HEAD_MAJOR });
	npu_stream_attention(s, &at);
	npu_stream_swiglu(s, &(struct npu_swiglu){
		.dst = { b[19], 0 }, .gate = { b[18], 0 },
		.up = { b[18], FF * 4 }, .rows = T, .n = FF,
		.gate_stride = 2 * FF, .up_stride = 2 * FF });
	npu_stream_topk(s, &(struct npu_topk){
		.values = { b[20], 0 }, .indices = { b[21], 0 },
		.src = { b[19], 0 }, .rows = T, .n = FF, .k = 3,
		.index_base = 7 });
	npu_stream_argmax(s, &(struct npu_topk){
		.values = { b[22], 0 }, .indices = { b[23], 0 },
		.src = { b[19], 0 }, .rows = T, .n = FF, .k = 1 });
	conf_run(s, fx->queue[0]);

	for (int t = 0; t < T; t++) {
		assert_memory_equal(emb + t * D, table + ids[t] * D, D * 4);
		check_rmsnorm(h + t * D, emb + t * D, nw);
	}
	/* q, k after ROPE: recompute from h, then rotate in float64. */
	for (int t = 0; t < T; t++)
		for (int hh = 0; hh < HQ + HKV; hh++)
			for (int i = 0; i < HD / 2; i++) {
				const float *w = hh < HQ ? wq : wk;
				int head = hh < HQ ? hh : hh - HQ;
				float *out = hh < HQ ? q + (t * HQ + head) * HD :
					     kk + (t * HKV + head) * HD;
				double x1 = 0, x2 = 0;
				float inv = 1.0f / (float)pow(10000.0,
					(double)((float)(2 * i) / (float)HD));
				double ang = (float)((float)t * inv);

				for (int d = 0; d < D; d++) {
					x1 += (double)h[t * D + d] *
					      w[(head * HD + i) * D + d];
					x2 += (double)h[t * D + d] *
					      w[(head * HD + i + HD / 2) * D + d];
				}
				ref = x1 * cos(ang) - x2 * sin(ang);
				assert_true(fabs(out[i] - ref) < 1e-4);
				ref = x2 * cos(ang) + x1 * sin(ang);
				assert_true(fabs(out[i + HD / 2] - ref) < 1e-4);
			}
	/*
	 * The caches hold k and v rounded to bfloat16, at their slots, head
	 * major: [block][kv_head][offset][head_dim].
	 */
	for (int t = 0; t < T; t++)
		for (int i = 0; i < HKV * HD; i++) {
			int at = ((slots[t] / BS * HKV + i / HD) * BS +
				  slots[t] % BS) * HD + i % HD;

			assert_int_equal(kc[at], to_bf16(kk[t * HKV * HD + i]));
			assert_int_equal(vc[at], to_bf16(vv[t * HKV * HD + i]));
		}
	/* Causal attention of each token over the cached bfloat16 values. */
	for (int t = 0; t < T; t++)
		for (int hh = 0; hh < HQ; hh++) {
			int g = hh / (HQ / HKV);
			double sc[T], m = -INFINITY, sum = 0;

			for (int j = 0; j <= t; j++) {
				sc[j] = 0;
				for (int d = 0; d < HD; d++)
					sc[j] += (double)q[(t * HQ + hh) * HD + d] *
						 from_bf16(to_bf16(kk[(j * HKV + g) * HD + d]));
				sc[j] *= 0.35355339f;
				m = sc[j] > m ? sc[j] : m;
			}
			for (int j = 0; j <= t; j++)
				sum += sc[j] = exp(sc[j] - m);
			for (int d = 0; d < HD; d++) {
				ref = 0;
				for (int j = 0; j <= t; j++)
					ref += sc[j] * from_bf16(to_bf16(
						vv[(j * HKV + g) * HD + d]));
				assert_true(fabs(att[(t * HQ + hh) * HD + d] -
						 ref / sum) < 1e-4);
			}
		}
	/* SWIGLU, then TOPK and ARGMAX of its rows. */
	for (int t = 0; t < T; t++) {
		int best[3] = { -1, -1, -1 };

		for (int i = 0; i < FF; i++) {
			double g = gu[t * 2 * FF + i], u = gu[t * 2 * FF + FF + i];

			ref = g / (1 + exp(-g)) * u;
			assert_true(fabs(ff[t * FF + i] - ref) <=
				    16 * U * fabs(ref) + 1e-30);
		}
		for (int r = 0; r < 3; r++)
			for (int i = 0; i < FF; i++)
				if (i != best[0] && i != best[1] &&
				    (best[r] < 0 ||
				     ff[t * FF + i] > ff[t * FF + best[r]]))
					best[r] = i;
		for (int r = 0; r < 3; r++) {
			assert_int_equal(ti[t * 3 + r], best[r] + 7);
			assert_memory_equal(&tv[t * 3 + r], &ff[t * FF + best[r]],
					    4);
		}
		assert_int_equal(ai[t], best[0]);
		assert_memory_equal(&av[t], &tv[t * 3], 4);
	}
	for (int i = 0; i < nb; i++)
		npu_buffer_free(b[i]);
	npu_buffer_free(wbuf);
}

/*
 * Binaries linked against libnpu 1.1 pass struct npu_kv_write without the
 * @layout that 1.2 appended: npu_stream_kv_write@LIBNPU_1.1 must read only
 * the 1.1 structure (whatever follows it in the caller's memory) and write
 * a token-major cache, as 1.1 did.
 */
static void test_abi_1_1(void **state)
{
	struct fixture *fx = *state;
	npu_device *dev = fx->dev[0];
	npu_stream *s = fx->stream[0];
	const uint32_t kvh = 2, hd = 8, bs = 4, nb = 2, slot = 5;
	void (*kv_write_11)(npu_stream *, const void *);
	union {
		struct npu_kv_write kw;
		unsigned char bytes[sizeof(struct npu_kv_write)];
	} v11;
	float *kc, *vc, *k, *v;
	int32_t *slots;
	npu_buffer *bkc, *bvc, *bk, *bv, *bs_;

	*(void **)&kv_write_11 = dlvsym(RTLD_DEFAULT, "npu_stream_kv_write",
					"LIBNPU_1.1");
	assert_non_null(kv_write_11);
	bkc = alloc_map(dev, nb * bs * kvh * hd * 4, (void **)&kc);
	bvc = alloc_map(dev, nb * bs * kvh * hd * 4, (void **)&vc);
	bk = alloc_map(dev, kvh * hd * 4, (void **)&k);
	bv = alloc_map(dev, kvh * hd * 4, (void **)&v);
	bs_ = alloc_map(dev, 4, (void **)&slots);
	for (uint32_t i = 0; i < kvh * hd; i++) {
		k[i] = (float)i + 1;
		v[i] = -(float)i - 1;
	}
	*slots = (int32_t)slot;
	/* What a 1.1 caller builds, and garbage where 1.2 has @layout. */
	memset(v11.bytes, 0xa5, sizeof(v11.bytes));
	memcpy(v11.bytes, &(struct npu_kv_write){
		.k_cache = { bkc, 0 }, .v_cache = { bvc, 0 }, .k = { bk, 0 },
		.v = { bv, 0 }, .slots = { bs_, 0 }, .num_blocks = nb,
		.tokens = 1, .block_size = bs, .kv_heads = kvh, .head_dim = hd,
		.dtype = NPU_DTYPE_F32,
	}, offsetof(struct npu_kv_write, layout));
	kv_write_11(s, &v11);
	assert_int_equal(npu_stream_error(s), 0);
	conf_run(s, fx->queue[0]);
	/* Token-major: [block][token][kv_head][head_dim]. */
	for (uint32_t h = 0; h < kvh; h++)
		for (uint32_t d = 0; d < hd; d++) {
			assert_true(kc[(slot * kvh + h) * hd + d] == k[h * hd + d]);
			assert_true(vc[(slot * kvh + h) * hd + d] == v[h * hd + d]);
		}
	/* The 1.2 function does read @layout, and refuses the garbage. */
	npu_stream_kv_write(s, &v11.kw);
	assert_int_equal(npu_stream_error(s), -EINVAL);
	npu_stream_reset(s);
	npu_buffer_free(bkc);
	npu_buffer_free(bvc);
	npu_buffer_free(bk);
	npu_buffer_free(bv);
	npu_buffer_free(bs_);
}

/*
 * Binaries linked against libnpu 1.1 or 1.2 pass struct npu_matmul without
 * the @a_bf16 that 1.3 appended, to npu_stream_matmul@LIBNPU_1.1: it must
 * read only that structure (whatever follows it in the caller's memory)
 * and encode float32 activations, as 1.2 did.
 */
static void test_abi_1_2(void **state)
{
	struct fixture *fx = *state;
	npu_device *dev = fx->dev[0];
	npu_stream *s = fx->stream[0];
	const uint32_t m = 2, k = 24, n = 16;
	void (*matmul_12)(npu_stream *, const void *);
	void (*matmul_13)(npu_stream *, const struct npu_matmul *);
	union {
		struct npu_matmul mm;
		unsigned char bytes[sizeof(struct npu_matmul)];
	} v12;
	struct rbln_isa_matmul cmd;
	float *pa, *pw, *pc, c0[2 * 16];
	npu_buffer *ba, *bw, *bc;

	*(void **)&matmul_12 = dlvsym(RTLD_DEFAULT, "npu_stream_matmul",
				      "LIBNPU_1.1");
	*(void **)&matmul_13 = dlvsym(RTLD_DEFAULT, "npu_stream_matmul",
				      "LIBNPU_1.3");
	assert_non_null(matmul_12);
	/* What a program built now calls. */
	assert_true(matmul_13 == npu_stream_matmul);
	assert_true((void *)matmul_12 != (void *)matmul_13);
	ba = alloc_map(dev, m * k * 4, (void **)&pa);
	bw = alloc_map(dev, n * k * 4, (void **)&pw);
	bc = alloc_map(dev, m * n * 4, (void **)&pc);
	for (uint32_t i = 0; i < m * k; i++)
		pa[i] = frand();
	for (uint32_t i = 0; i < n * k; i++)
		pw[i] = frand();
	for (uint32_t i = 0; i < m * n; i++)
		pc[i] = c0[i] = frand();
	/* What a 1.2 caller builds, and garbage where 1.3 has @a_bf16. */
	memset(v12.bytes, 0xa5, sizeof(v12.bytes));
	memcpy(v12.bytes, &(struct npu_matmul){
		.dst = { bc, 0 }, .a = { ba, 0 }, .w = { bw, 0 }, .m = m,
		.k = k, .n = n, .dtype = NPU_DTYPE_F32,
		.layout = NPU_LAYOUT_ROWMAJOR, .accumulate = 1,
	}, offsetof(struct npu_matmul, a_bf16));
	npu_stream_reset(s);
	matmul_12(s, &v12);
	assert_int_equal(npu_stream_error(s), 0);
	assert_true(last_cmd(s, RBLN_OP_MATMUL, &cmd, sizeof(cmd)));
	assert_int_equal(cmd.hdr.flags, RBLN_MATMUL_ACCUMULATE);
	assert_int_equal(stream_minor(s), 1);
	conf_run(s, fx->queue[0]);
	check_matmul(pc, pa, pw, c0, m, k, n);
	/* The 1.3 function does read @a_bf16, and refuses the garbage. */
	npu_stream_matmul(s, &v12.mm);
	assert_int_equal(npu_stream_error(s), -EINVAL);
	npu_stream_reset(s);
	npu_buffer_free(ba);
	npu_buffer_free(bw);
	npu_buffer_free(bc);
}

static void test_errors(void **state)
{
	struct fixture *fx = *state;
	npu_stream *s = fx->stream[0];
	npu_buffer *buf = conf_alloc(fx->dev[0], 4096, 0);
	int32_t *ids = conf_map(buf);
	npu_fence *f;

	/* A shape whose sizes overflow: the builder's error, sticky. */
	npu_stream_matmul(s, &(struct npu_matmul){
		.dst = { buf, 0 }, .a = { buf, 0 }, .w = { buf, 0 },
		.m = UINT64_MAX / 2, .k = 8, .n = 8 });
	assert_npu(npu_stream_error(s), -EINVAL);
	assert_npu(npu_stream_submit(s, fx->queue[0], NULL, 0, &f), -EINVAL);
	assert_detail_contains("npu_stream_matmul");
	npu_stream_reset(s);

	/* A cache layout that does not exist: the builder names it. */
	npu_stream_kv_write(s, &(struct npu_kv_write){
		.k_cache = { buf, 0 }, .v_cache = { buf, 1024 },
		.k = { buf, 2048 }, .v = { buf, 2560 }, .slots = { buf, 3072 },
		.num_blocks = 1, .tokens = 1, .block_size = 4, .kv_heads = 2,
		.head_dim = 8, .dtype = NPU_DTYPE_F32,
		.layout = (enum npu_kv_layout)7 });
	assert_npu(npu_stream_submit(s, fx->queue[0], NULL, 0, &f), -EINVAL);
	assert_detail_contains("layout 7");
	npu_stream_reset(s);

	/* So is a weight layout that does not exist. */
	npu_stream_matmul(s, &(struct npu_matmul){
		.dst = { buf, 0 }, .a = { buf, 1024 }, .w = { buf, 2048 },
		.m = 1, .k = 8, .n = 8, .dtype = NPU_DTYPE_F32,
		.layout = (enum npu_layout)3 });
	assert_npu(npu_stream_submit(s, fx->queue[0], NULL, 0, &f), -EINVAL);
	assert_detail_contains("layout 3 is not an npu_layout");
	npu_stream_reset(s);

	/* Weights past the buffer: the device's validation, named. */
	npu_stream_matmul(s, &(struct npu_matmul){
		.dst = { buf, 0 }, .a = { buf, 1024 }, .w = { buf, 2048 },
		.m = 2, .k = 8, .n = 200, .dtype = NPU_DTYPE_F32 });
	assert_npu(npu_stream_submit(s, fx->queue[0], NULL, 0, &f), -EINVAL);
	assert_detail_contains("MATMUL");
	npu_stream_reset(s);

	/* A token id past the table: the job faults, -EIO. */
	ids[0] = 3;
	npu_stream_embed(s, &(struct npu_embed){
		.dst = { buf, 1024 }, .table = { buf, 2048 }, .ids = { buf, 0 },
		.tokens = 1, .rows = 3, .dim = 4, .dtype = NPU_DTYPE_F32 });
	f = conf_submit(s, fx->queue[0], NULL, 0);
	assert_npu(npu_fence_wait(f, CONF_WAIT_NS), -EIO);
	npu_fence_release(f);
	npu_stream_reset(s);
	/* The device goes on: the same command with a good id runs. */
	ids[0] = 2;
	npu_stream_embed(s, &(struct npu_embed){
		.dst = { buf, 1024 }, .table = { buf, 2048 }, .ids = { buf, 0 },
		.tokens = 1, .rows = 3, .dim = 4, .dtype = NPU_DTYPE_F32 });
	conf_run(s, fx->queue[0]);
	npu_buffer_free(buf);
}

/*
 * RBLN_CPU_VARIANT picks the emulated devices' CPU variant (rbln.ko has a
 * module parameter instead): a name it does not know fails context
 * creation. The emulated backend exists in every process, so this runs
 * whichever backend the rest of the suite uses.
 */
static void test_cpu_variant_env(void **state)
{
	const struct npu_context_options emul = {
		.struct_size = sizeof(emul), .backend = NPU_BACKEND_EMUL,
		.emul_devices = 1,
	};
	const char *old = getenv("RBLN_CPU_VARIANT");
	char *saved = old ? strdup(old) : NULL;
	npu_context *ctx = NULL;

	(void)state;
	setenv("RBLN_CPU_VARIANT", "sse9", 1);
	assert_npu(npu_context_create(&emul, &ctx), -EINVAL);
	assert_detail_contains("RBLN_CPU_VARIANT");
	setenv("RBLN_CPU_VARIANT", "baseline", 1);
	assert_ok(npu_context_create(&emul, &ctx));
	assert_string_equal(npu_context_cpu_variant(ctx), "baseline");
	npu_context_destroy(ctx);
	/* auto names what it resolved to, never "auto". */
	setenv("RBLN_CPU_VARIANT", "auto", 1);
	assert_ok(npu_context_create(&emul, &ctx));
	assert_non_null(npu_context_cpu_variant(ctx));
	assert_string_not_equal(npu_context_cpu_variant(ctx), "auto");
	npu_context_destroy(ctx);
	/* Back to what the run asked for (the choice is process-wide). */
	setenv("RBLN_CPU_VARIANT", saved ? saved : "auto", 1);
	assert_ok(npu_context_create(&emul, &ctx));
	npu_context_destroy(ctx);
	if (!saved)
		unsetenv("RBLN_CPU_VARIANT");
	free(saved);
}

/*
 * RBLN_EMUL_PROFILE=1: when an emulated device's last handle closes, its
 * time per opcode goes to stderr, one line per opcode that ran, with the
 * right call counts, after a line that counts its jobs (the stream runs
 * twice: two jobs); then MATMUL's time per shape, one line for each of the
 * first EMUL_PROFILE_SHAPES (48) shapes and one for the rest. Emulated
 * backend only (rbln.ko has no such table).
 */
static void test_profile_env(void **state)
{
	const struct npu_context_options emul = {
		.struct_size = sizeof(emul), .backend = NPU_BACKEND_EMUL,
		.emul_devices = 1,
	};
	const uint32_t m = 2, k = 40, n = 24;
	char path[] = "/tmp/rbln-profile.XXXXXX", line[256];
	npu_context *ctx = NULL;
	npu_device *dev = NULL;
	npu_queue *q = NULL;
	npu_stream *s = NULL;
	npu_buffer *ba, *bw, *bc;
	unsigned long fills = 0, matmuls = 0, calls, jobs = 0, rows;
	unsigned long m2 = 0, m1 = 0, shapes = 0, others = 0;
	unsigned int sk, sn;
	double busy = -1, idle = -1;
	bool header = false;
	char name[32];
	void *map;
	FILE *f;
	int fd, saved;

	(void)state;
	setenv("RBLN_EMUL_PROFILE", "1", 1);
	assert_ok(npu_context_create(&emul, &ctx));
	unsetenv("RBLN_EMUL_PROFILE");
	assert_ok(npu_device_open(ctx, 0, &dev));
	assert_ok(npu_queue_create(dev, NPU_PRIORITY_NORMAL, &q));
	assert_ok(npu_stream_create(dev, &s));
	ba = alloc_map(dev, m * k * 4, &map);
	bw = alloc_map(dev, (uint64_t)n * k * 4, &map);
	bc = alloc_map(dev, m * n * 4, &map);

	struct npu_matmul mm = {
		.dst = { bc, 0 }, .a = { ba, 0 }, .w = { bw, 0 }, .m = m,
		.k = k, .n = n, .dtype = NPU_DTYPE_F32,
		.layout = NPU_LAYOUT_ROWMAJOR,
	};

	struct npu_matmul row = mm;

	row.m = 1;
	for (int job = 0; job < 2; job++) {
		npu_stream_fill(s, ba, 0, m * k * 4, 0x3f800000);
		npu_stream_fill(s, bw, 0, (uint64_t)n * k * 4, 0x3f800000);
		npu_stream_matmul(s, &mm);
		npu_stream_matmul(s, &mm);
		npu_stream_matmul(s, &mm);
		npu_stream_matmul(s, &row);
		conf_run(s, q);
	}
	/* 24 shapes more, M=1 N=1..24 (N=24 is the one above): 25 in all. */
	for (uint32_t cols = 1; cols <= n; cols++) {
		row.n = cols;
		npu_stream_matmul(s, &row);
	}
	/* And 23 more of two rows: 48 shapes, a full table. */
	for (uint32_t cols = 1; cols < n; cols++) {
		mm.n = cols;
		npu_stream_matmul(s, &mm);
	}
	/* One past the table: "other shapes"; then a known one again. */
	row.n = n;
	row.k = k / 2;
	npu_stream_matmul(s, &row);
	mm.n = n;
	npu_stream_matmul(s, &mm);
	conf_run(s, q);
	npu_buffer_free(ba);
	npu_buffer_free(bw);
	npu_buffer_free(bc);
	npu_stream_destroy(s);
	npu_queue_destroy(q);

	/* The table is printed as the device's engines stop. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	npu_device_close(dev);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	npu_context_destroy(ctx);
	f = fdopen(fd, "r");
	assert_non_null(f);
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "rbln emulated device 0") &&
		    strstr(line, "61 commands"))
			header = true;
		if (sscanf(line, " %lu jobs: %lf s running, %lf s idle", &jobs,
			   &busy, &idle) == 3)
			continue;
		if (sscanf(line, " M=%lu K=%u N=%u f32 %lu", &rows, &sk, &sn,
			   &calls) == 4) {
			shapes++;
			assert_int_equal(sk, k);
			if (rows == m && sn == n)
				m2 = calls;
			if (rows == 1 && sn == n)
				m1 = calls;
			continue;
		}
		if (sscanf(line, " other shapes %lu", &calls) == 1) {
			others = calls;
			continue;
		}
		if (sscanf(line, " %31s %lu", name, &calls) != 2)
			continue;
		if (!strcmp(name, "FILL"))
			fills = calls;
		else if (!strcmp(name, "MATMUL"))
			matmuls = calls;
	}
	fclose(f);
	unlink(path);
	assert_true(header);
	assert_int_equal(jobs, 3);
	assert_true(busy >= 0 && idle >= 0);
	assert_int_equal(fills, 4);
	assert_int_equal(matmuls, 9 + 2 * n);
	/* The table's 48 lines, and K=20 in "other shapes". */
	assert_int_equal(shapes, 48);
	assert_int_equal(others, 1);
	assert_int_equal(m2, 7);
	assert_int_equal(m1, 3);
}

const struct CMUnitTest conf_compute_tests[] = {
	cmocka_unit_test(test_cpu_variant_env),
	cmocka_unit_test(test_profile_env),
	cmocka_unit_test_setup_teardown(test_matmul_i8, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_matmul, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_layer_stream, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_abi_1_1, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_matmul_a_bf16, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_stream_minor, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_abi_1_2, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_errors, fixture_setup,
					fixture_teardown),
};
const size_t conf_compute_count =
	sizeof(conf_compute_tests) / sizeof(conf_compute_tests[0]);
