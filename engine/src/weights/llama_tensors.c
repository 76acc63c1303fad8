// SPDX-License-Identifier: MIT
/*
 * The tensor set of LlamaForCausalLM, derived from config.json.  A checkpoint
 * must contain exactly these tensors with exactly these shapes: a missing
 * tensor, a wrong shape or an unexpected extra tensor (say, a ninth layer
 * for an eight-layer config) means config and weights do not belong
 * together, and running anyway would produce garbage silently.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbln_weights.h"
#include "util/hashmap.h"

#define NAME_MAX_LEN 128

struct expected {
	char name[NAME_MAX_LEN];
	size_t ndim;
	int64_t shape[2];
};

struct expected_set {
	struct expected *items;
	size_t count, cap;
};

static int expect(struct expected_set *set, int64_t layer, const char *suffix, size_t ndim,
		  int64_t d0, int64_t d1)
{
	struct expected *e;

	if (set->count == set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 64;
		struct expected *items = realloc(set->items, cap * sizeof(*items));

		if (!items)
			return -ENOMEM;
		set->items = items;
		set->cap = cap;
	}
	e = &set->items[set->count++];
	if (layer >= 0)
		snprintf(e->name, sizeof(e->name), "model.layers.%lld.%s", (long long)layer, suffix);
	else
		snprintf(e->name, sizeof(e->name), "%s", suffix);
	e->ndim = ndim;
	e->shape[0] = d0;
	e->shape[1] = d1;
	return 0;
}

static int expect_layer(struct expected_set *s, const struct rbln_llama_config *c, int64_t l)
{
	int64_t h = c->hidden_size, q = c->num_attention_heads * c->head_dim;
	int64_t kv = c->num_key_value_heads * c->head_dim, m = c->intermediate_size;
	int rc = 0;

	rc |= expect(s, l, "input_layernorm.weight", 1, h, 0);
	rc |= expect(s, l, "post_attention_layernorm.weight", 1, h, 0);
	rc |= expect(s, l, "self_attn.q_proj.weight", 2, q, h);
	rc |= expect(s, l, "self_attn.k_proj.weight", 2, kv, h);
	rc |= expect(s, l, "self_attn.v_proj.weight", 2, kv, h);
	rc |= expect(s, l, "self_attn.o_proj.weight", 2, h, q);
	rc |= expect(s, l, "mlp.gate_proj.weight", 2, m, h);
	rc |= expect(s, l, "mlp.up_proj.weight", 2, m, h);
	rc |= expect(s, l, "mlp.down_proj.weight", 2, h, m);
	if (c->attention_bias) {
		rc |= expect(s, l, "self_attn.q_proj.bias", 1, q, 0);
		rc |= expect(s, l, "self_attn.k_proj.bias", 1, kv, 0);
		rc |= expect(s, l, "self_attn.v_proj.bias", 1, kv, 0);
		rc |= expect(s, l, "self_attn.o_proj.bias", 1, h, 0);
	}
	if (c->mlp_bias) {
		rc |= expect(s, l, "mlp.gate_proj.bias", 1, m, 0);
		rc |= expect(s, l, "mlp.up_proj.bias", 1, m, 0);
		rc |= expect(s, l, "mlp.down_proj.bias", 1, h, 0);
	}
	return rc ? -ENOMEM : 0;
}

static int build_expected(struct expected_set *s, const struct rbln_llama_config *c)
{
	int64_t l;
	int rc = 0;

	rc |= expect(s, -1, "model.embed_tokens.weight", 2, c->vocab_size, c->hidden_size);
	rc |= expect(s, -1, "model.norm.weight", 1, c->hidden_size, 0);
	for (l = 0; l < c->num_hidden_layers && !rc; l++)
		rc = expect_layer(s, c, l);
	return rc ? -ENOMEM : 0;
}

static void format_shape(char *buf, size_t len, size_t ndim, const int64_t *shape)
{
	size_t i, off = 0;

	off += (size_t)snprintf(buf + off, len - off, "[");
	for (i = 0; i < ndim && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%lld", i ? ", " : "",
					(long long)shape[i]);
	if (off < len)
		snprintf(buf + off, len - off, "]");
}

static int check_one(const struct rbln_tensor *t, const struct expected *e,
		     struct rbln_error *err)
{
	char have[96], want[96];

	if (t->ndim == e->ndim && t->shape[0] == e->shape[0] &&
	    (e->ndim < 2 || t->shape[1] == e->shape[1]))
		return 0;
	format_shape(have, sizeof(have), t->ndim, t->shape);
	format_shape(want, sizeof(want), e->ndim, e->shape);
	return rbln_error_set(err, -EINVAL, "%s: tensor '%s' has shape %s but config.json implies %s",
			      t->file, t->name, have, want);
}

/* Old checkpoints carry the rotary tables; transformers recomputes them. */
static bool ignorable(const char *name)
{
	const char *suffix = "rotary_emb.inv_freq";
	size_t n = strlen(name), s = strlen(suffix);

	return n >= s && strcmp(name + n - s, suffix) == 0;
}

static int check_set(const struct rbln_weights *w, const struct rbln_llama_config *cfg,
		     const struct expected_set *set, struct rbln_error *err)
{
	struct rbln_strmap wanted = { 0 };
	const struct rbln_tensor *lm_head;
	struct expected head;
	size_t i;
	int rc = 0;

	for (i = 0; i < set->count && !rc; i++) {
		const struct rbln_tensor *t = rbln_weights_find(w, set->items[i].name);

		if (!t)
			rc = rbln_error_set(err, -EINVAL, "%s: tensor '%s' is missing",
					    rbln_weights_dir(w), set->items[i].name);
		else
			rc = check_one(t, &set->items[i], err);
		if (!rc && rbln_strmap_put(&wanted, set->items[i].name, strlen(set->items[i].name),
					   1, NULL))
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
	}
	/* lm_head is required unless tied to the embedding; tied
	 * checkpoints sometimes store it anyway. */
	lm_head = rbln_weights_find(w, "lm_head.weight");
	snprintf(head.name, sizeof(head.name), "lm_head.weight");
	head.ndim = 2;
	head.shape[0] = cfg->vocab_size;
	head.shape[1] = cfg->hidden_size;
	if (!rc && !lm_head && !cfg->tie_word_embeddings)
		rc = rbln_error_set(err, -EINVAL,
				    "%s: tensor 'lm_head.weight' is missing (tie_word_embeddings is false)",
				    rbln_weights_dir(w));
	if (!rc && lm_head)
		rc = check_one(lm_head, &head, err);
	for (i = 0; i < rbln_weights_count(w) && !rc; i++) {
		const struct rbln_tensor *t = rbln_weights_at(w, i);

		if (t == lm_head || ignorable(t->name) ||
		    rbln_strmap_get(&wanted, t->name, strlen(t->name)) >= 0)
			continue;
		rc = rbln_error_set(err, -EINVAL,
				    "%s: unexpected tensor '%s' for a LlamaForCausalLM with %lld layers",
				    t->file, t->name, (long long)cfg->num_hidden_layers);
	}
	rbln_strmap_free(&wanted);
	return rc;
}

int rbln_weights_check_llama(const struct rbln_weights *w, const struct rbln_llama_config *cfg,
			     struct rbln_error *err)
{
	struct expected_set set = { 0 };
	int rc = build_expected(&set, cfg);

	if (rc)
		rc = rbln_error_set(err, rc, "out of memory");
	else
		rc = check_set(w, cfg, &set, err);
	free(set.items);
	return rc;
}
