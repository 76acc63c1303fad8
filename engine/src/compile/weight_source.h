/* SPDX-License-Identifier: MIT */
/*
 * Where the compiler reads a checkpoint tensor from: the memory-mapped
 * safetensors data, or, for --dummy-weights, a deterministic generator
 * that gives any element from (seed, tensor name, index) without ever
 * materialising the tensor (so a 1B-parameter model compiles in the
 * memory of one row).
 */
#ifndef RBLN_WEIGHT_SOURCE_H
#define RBLN_WEIGHT_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "rbln_config.h"
#include "rbln_weights.h"

struct weight_source {
	const struct rbln_weights *ckpt;	/* NULL: dummy weights */
	uint64_t seed;
	const struct rbln_llama_config *cfg;
};

/* A 2-D view of one tensor (1-D tensors are one row). */
struct weight_tensor {
	const unsigned char *data;		/* checkpoint data, or NULL (dummy) */
	enum rbln_dtype dtype;
	int64_t rows, cols;
	uint64_t name_hash;			/* dummy: the generator's stream */
	bool norm;				/* dummy: RMSNorm weights are ones */
};

/*
 * Looks a tensor up by its checkpoint name ("model.layers.3.mlp.up_proj.weight");
 * lm_head.weight resolves to the embedding when the embeddings are tied.
 */
int rbln_weight_source_get(const struct weight_source *src, const char *name,
		      struct weight_tensor *t, struct rbln_error *err);

/* Row r, columns [c0, c0 + n), converted to dt, into out. */
void rbln_weight_tensor_row(const struct weight_tensor *t, int64_t r, int64_t c0, int64_t n,
		       enum rbln_dtype dt, void *out);

#endif
