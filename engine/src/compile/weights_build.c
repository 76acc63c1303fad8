// SPDX-License-Identifier: MIT
/*
 * Writing a rank's weight file (see layout.h for what goes where): the
 * vocabulary rows of the embedding row-major for EMBED, every matrix the
 * rank multiplies by in the packed 16-column layout MATMUL reads front to
 * back, norms as vectors.  The file is built through a shared mapping
 * under a temporary name and renamed when complete.
 */
#include "compile/weights_build.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "compile/output_dir.h"
#include "compile/quantize.h"
#include "libnpu.h"
#include "program/files.h"
#include "rbln_isa.h"

#define NAME_MAX_LEN 96

/* Up to three tensors' row ranges stacked (q | k | v, gate | up). */
struct matrix_view {
	struct {
		struct weight_tensor t;
		int64_t row0, nrows;
	} part[3];
	int nparts;
	int64_t col0;		/* first column of the rank's slice */
	int64_t k;		/* columns */
};

static void view_row(const void *ctx, int64_t r, enum rbln_dtype dt, void *out)
{
	const struct matrix_view *m = ctx;
	int i;

	for (i = 0; i < m->nparts; i++) {
		if (r < m->part[i].nrows) {
			rbln_weight_tensor_row(&m->part[i].t, m->part[i].row0 + r, m->col0, m->k, dt,
					  out);
			return;
		}
		r -= m->part[i].nrows;
	}
}

int rbln_pack16(pack_row_fn row_fn, const void *ctx, int64_t n, int64_t k, enum rbln_dtype dt,
		enum npu_layout layout, unsigned char *dst)
{
	size_t es = rbln_dtype_size(dt), panel = (size_t)(RBLN_ISA_PACK_COLS * k) * es;
	enum npu_dtype ndt = dt == RBLN_TENSOR_BF16 ? NPU_DTYPE_BF16 :
			     dt == RBLN_TENSOR_F16 ? NPU_DTYPE_F16 : NPU_DTYPE_F32;
	/* One panel with what follows it (the spaced layout's gap). */
	size_t stride = npu_weights_size(ndt, layout, RBLN_ISA_PACK_COLS, (uint32_t)k);
	unsigned char *rows = malloc(panel);
	int64_t p0, r, cols;
	int rc = 0;

	if (!rows)
		return -ENOMEM;
	/*
	 * Panel by panel: panels are contiguous in the packed layouts, so
	 * packing 16 rows at a time needs memory for 16 rows, not the matrix.
	 * The device's layout is libnpu's to define: it packs, we gather.
	 */
	for (p0 = 0; p0 < n && !rc; p0 += RBLN_ISA_PACK_COLS) {
		cols = n - p0 < RBLN_ISA_PACK_COLS ? n - p0 : RBLN_ISA_PACK_COLS;
		for (r = 0; r < cols; r++)
			row_fn(ctx, p0 + r, dt, rows + (size_t)(r * k) * es);
		rc = npu_pack_weights_layout(dst + (size_t)(p0 / RBLN_ISA_PACK_COLS) * stride, rows,
					     ndt, layout, (uint32_t)cols, (uint32_t)k);
	}
	free(rows);
	return rc;
}

struct wbuild {
	const struct rbln_layout_shape *s;
	const struct weight_source *src;
	unsigned char *map;
	struct progress *pg;
	struct rbln_error *err;
};

static int get(struct wbuild *b, struct weight_tensor *t, const char *fmt, int layer)
{
	char name[NAME_MAX_LEN];

	snprintf(name, sizeof(name), fmt, layer);
	return rbln_weight_source_get(b->src, name, t, b->err);
}

/* A matrix as MATMUL reads it: packed in the weights' type, or int8 (w8a16). */
static int put_packed(struct wbuild *b, struct matrix_view *m, int64_t n, uint64_t off)
{
	int rc = b->s->quant == RBLN_QUANT_W8A16 ?
		 rbln_pack16_w8(view_row, m, n, m->k, (enum npu_layout)b->s->mlayout, b->map + off) :
		 rbln_pack16(view_row, m, n, m->k, b->s->wdtype, (enum npu_layout)b->s->mlayout,
			     b->map + off);

	if (rc)
		return rbln_error_set(b->err, rc, "out of memory");
	rbln_progress_add(b->pg, rbln_layout_matrix_size(b->s, (uint32_t)n, (uint32_t)m->k));
	return 0;
}

static int put_norm(struct wbuild *b, const char *fmt, int layer, uint64_t off)
{
	struct weight_tensor t;
	int rc = get(b, &t, fmt, layer);

	if (rc)
		return rc;
	rbln_weight_tensor_row(&t, 0, 0, b->s->hidden, b->s->wdtype, b->map + off);
	rbln_progress_add(b->pg, (uint64_t)b->s->hidden * rbln_dtype_size(b->s->wdtype));
	return 0;
}

/* A view of `nparts` tensors, rows [row0, row0 + nrows) of each. */
static int view(struct wbuild *b, struct matrix_view *m, int layer, int64_t col0, int64_t k,
		int nparts, const char *const *fmts, const int64_t *row0, const int64_t *nrows)
{
	int i, rc;

	memset(m, 0, sizeof(*m));
	m->nparts = nparts;
	m->col0 = col0;
	m->k = k;
	for (i = 0; i < nparts; i++) {
		rc = get(b, &m->part[i].t, fmts[i], layer);
		if (rc)
			return rc;
		m->part[i].row0 = row0[i];
		m->part[i].nrows = nrows[i];
	}
	return 0;
}

static int put_layer(struct wbuild *b, const struct layout_layer_weights *lw, int l)
{
	static const char *const qkv[] = {
		"model.layers.%d.self_attn.q_proj.weight",
		"model.layers.%d.self_attn.k_proj.weight",
		"model.layers.%d.self_attn.v_proj.weight",
	};
	static const char *const o[] = { "model.layers.%d.self_attn.o_proj.weight" };
	static const char *const gu[] = {
		"model.layers.%d.mlp.gate_proj.weight",
		"model.layers.%d.mlp.up_proj.weight",
	};
	static const char *const down[] = { "model.layers.%d.mlp.down_proj.weight" };
	const struct rbln_layout_shape *s = b->s;
	int64_t hd = s->head_dim, H = s->hidden, qw = (int64_t)s->q_heads * hd;
	int64_t kvw = (int64_t)s->kv_heads * hd, I = s->inter;
	int64_t qkv_row0[] = { s->q_head_first * hd, s->kv_head_first * hd,
			       s->kv_head_first * hd };
	int64_t qkv_rows[] = { qw, kvw, kvw };
	int64_t gu_row0[] = { s->rank * I, s->rank * I }, gu_rows[] = { I, I };
	int64_t zero[] = { 0 }, all_h[] = { H };
	struct matrix_view m;
	int rc;

	rc = put_norm(b, "model.layers.%d.input_layernorm.weight", l, lw->input_norm);
	if (!rc)
		rc = view(b, &m, l, 0, H, 3, qkv, qkv_row0, qkv_rows);
	if (!rc)
		rc = put_packed(b, &m, s->qkv_cols, lw->qkv);
	/* Row-parallel: all output rows, the rank's slice of the input columns. */
	if (!rc)
		rc = view(b, &m, l, s->q_head_first * hd, qw, 1, o, zero, all_h);
	if (!rc)
		rc = put_packed(b, &m, H, lw->o);
	if (!rc)
		rc = put_norm(b, "model.layers.%d.post_attention_layernorm.weight", l,
			      lw->post_norm);
	if (!rc)
		rc = view(b, &m, l, 0, H, 2, gu, gu_row0, gu_rows);
	if (!rc)
		rc = put_packed(b, &m, 2 * I, lw->gate_up);
	if (!rc)
		rc = view(b, &m, l, s->rank * I, I, 1, down, zero, all_h);
	if (!rc)
		rc = put_packed(b, &m, H, lw->down);
	return rc;
}

static int put_vocab(struct wbuild *b, const struct rbln_layout_weights *w)
{
	static const char *const lm[] = { "lm_head.weight" };
	const struct rbln_layout_shape *s = b->s;
	size_t row = (size_t)s->hidden * rbln_dtype_size(s->wdtype);
	int64_t row0[] = { s->vocab_first }, nrows[] = { s->vocab };
	struct weight_tensor emb;
	struct matrix_view m;
	uint32_t r;
	int rc;

	rc = get(b, &emb, "model.embed_tokens.weight", 0);
	if (rc)
		return rc;
	for (r = 0; r < s->vocab; r++)
		rbln_weight_tensor_row(&emb, s->vocab_first + r, 0, s->hidden, s->wdtype,
				  b->map + w->embed + r * row);
	rbln_progress_add(b->pg, (uint64_t)s->vocab * row);
	rc = put_norm(b, "model.norm.weight", 0, w->final_norm);
	if (!rc)
		rc = view(b, &m, 0, 0, s->hidden, 1, lm, row0, nrows);
	if (!rc)
		rc = put_packed(b, &m, s->vocab, w->lm_head);
	return rc;
}

uint64_t rbln_weights_build_size(const struct rbln_layout_shape *s)
{
	struct rbln_layout_weights w;
	uint64_t size;

	if (rbln_layout_weights(s, &w))
		return 0;
	size = w.size;
	rbln_layout_weights_free(&w);
	return size;
}

int rbln_weights_build(const struct rbln_compiled_config *cc, const struct rbln_layout_shape *s,
		  const struct weight_source *src, const char *path, struct progress *pg,
		  struct rbln_error *err)
{
	struct wbuild b = { .s = s, .src = src, .pg = pg, .err = err };
	struct weight_file_header hdr = { .version = RBLN_FILES_VERSION,
					  .header_size = sizeof(hdr) };
	struct rbln_layout_weights w;
	uint32_t l;
	int fd, rc;

	if (rbln_layout_weights(s, &w))
		return rbln_error_set(err, -ENOMEM, "out of memory");
	/* The compile's fresh staging directory: exclusive, no-follow. */
	fd = rbln_output_create(path, err);
	if (fd < 0) {
		rc = fd;
		goto out_layout;
	}
	/* posix_fallocate, not ftruncate: a full disk fails here, not as SIGBUS later. */
	rc = posix_fallocate(fd, 0, (off_t)w.size);
	if (rc) {
		rc = rbln_error_set(err, -rc, "%s: cannot allocate %llu bytes: %s", path,
				    (unsigned long long)w.size, strerror(rc));
		goto out_close;
	}
	b.map = mmap(NULL, w.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (b.map == MAP_FAILED) {
		rc = rbln_error_set(err, -errno, "%s: cannot map: %s", path, strerror(errno));
		goto out_close;
	}
	memcpy(hdr.magic, WEIGHT_FILE_MAGIC, sizeof(hdr.magic));
	hdr.compile_id = cc->compile_id;
	hdr.rank = s->rank;
	hdr.tp = s->tp;
	hdr.file_size = w.size;
	hdr.dtype = (uint32_t)s->wdtype;
	memcpy(b.map, &hdr, sizeof(hdr));

	rc = put_vocab(&b, &w);
	for (l = 0; !rc && l < s->layers; l++)
		rc = put_layer(&b, &w.layer[l], (int)l);
	if (munmap(b.map, w.size) && !rc)
		rc = rbln_error_set(err, -errno, "%s: %s", path, strerror(errno));
out_close:
	if (close(fd) && !rc)
		rc = rbln_error_set(err, -errno, "%s: write failed: %s", path, strerror(errno));

out_layout:
	rbln_layout_weights_free(&w);
	return rc;
}
