// SPDX-License-Identifier: MIT
/* Checkpoint and generated tensors (see weight_source.h). */
#include "compile/weight_source.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compile/convert.h"

/* transformers' LlamaConfig.initializer_range: weights ~ N(0, 0.02). */
#define DUMMY_STD 0.02f
#define DUMMY_ROW_CHUNK 1024

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Uniform in [-a, a) with a chosen for the standard deviation of N(0, 0.02). */
static float dummy_value(uint64_t stream, uint64_t index)
{
	uint64_t r = splitmix64(stream ^ splitmix64(index));
	float u = (float)(r >> 40) * (1.0f / 16777216.0f);	/* [0, 1) */

	return (2.0f * u - 1.0f) * (DUMMY_STD * 1.7320508f);
}

static void dummy_shape(const struct rbln_llama_config *c, const char *name, int64_t *rows,
			int64_t *cols, bool *norm)
{
	int64_t H = c->hidden_size, hd = c->head_dim;

	*norm = strstr(name, "norm") != NULL;
	*cols = H;
	if (*norm)
		*rows = 1;
	else if (strstr(name, "embed_tokens") || strstr(name, "lm_head"))
		*rows = c->vocab_size;
	else if (strstr(name, "q_proj"))
		*rows = c->num_attention_heads * hd;
	else if (strstr(name, "k_proj") || strstr(name, "v_proj"))
		*rows = c->num_key_value_heads * hd;
	else if (strstr(name, "o_proj")) {
		*rows = H;
		*cols = c->num_attention_heads * hd;
	} else if (strstr(name, "gate_proj") || strstr(name, "up_proj"))
		*rows = c->intermediate_size;
	else {				/* down_proj */
		*rows = H;
		*cols = c->intermediate_size;
	}
}

int rbln_weight_source_get(const struct weight_source *src, const char *name,
		      struct weight_tensor *t, struct rbln_error *err)
{
	const struct rbln_tensor *ct;

	memset(t, 0, sizeof(*t));
	if (strcmp(name, "lm_head.weight") == 0 && src->cfg->tie_word_embeddings)
		name = "model.embed_tokens.weight";
	if (!src->ckpt) {
		t->dtype = src->cfg->dtype != RBLN_TENSOR_UNKNOWN ? src->cfg->dtype : RBLN_TENSOR_F32;
		t->name_hash = fnv1a(name) ^ splitmix64(src->seed);
		dummy_shape(src->cfg, name, &t->rows, &t->cols, &t->norm);
		return 0;
	}
	ct = rbln_weights_find(src->ckpt, name);
	if (!ct)	/* rbln_weights_check_llama() ran first; this is a bug guard */
		return rbln_error_set(err, -ENOENT, "%s: tensor '%s' not found",
				      rbln_weights_dir(src->ckpt), name);
	t->data = ct->data;
	t->dtype = ct->dtype;
	t->rows = ct->ndim == 2 ? ct->shape[0] : 1;
	t->cols = ct->ndim == 2 ? ct->shape[1] : ct->shape[0];
	return 0;
}

void rbln_weight_tensor_row(const struct weight_tensor *t, int64_t r, int64_t c0, int64_t n,
		       enum rbln_dtype dt, void *out)
{
	float buf[DUMMY_ROW_CHUNK];
	unsigned char *o = out;
	int64_t i, j, m;

	if (t->data) {
		size_t es = rbln_dtype_size(t->dtype);

		rbln_convert_elements(out, dt, t->data + ((uint64_t)r * t->cols + c0) * es, t->dtype,
				 (size_t)n);
		return;
	}
	for (i = 0; i < n; i += m) {
		m = n - i < DUMMY_ROW_CHUNK ? n - i : DUMMY_ROW_CHUNK;
		for (j = 0; j < m; j++)
			buf[j] = t->norm ? 1.0f :
				 dummy_value(t->name_hash, (uint64_t)r * t->cols + c0 + i + j);
		rbln_convert_from_f32(o + i * rbln_dtype_size(dt), dt, buf, (size_t)m);
	}
}
