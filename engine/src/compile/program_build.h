/* SPDX-License-Identifier: MIT */
/*
 * Building one rank's program for one step shape: the whole forward pass of
 * T token rows of B sequences as one command stream, from the embedding to
 * the logits and their ARGMAX, with the all-reduces of tensor parallelism
 * done by the devices themselves (semaphores on shared buffers).
 */
#ifndef RBLN_PROGRAM_BUILD_H
#define RBLN_PROGRAM_BUILD_H

#include "program/files.h"
#include "isa_encode.h"
#include "program/layout.h"
#include "rbln_compile.h"

/*
 * Builds the program of shape (tokens, seqs) for rank s->rank into img
 * (malloc'd; free with rbln_program_image_free()), checked with the device
 * model's validator against the rank's buffers.
 */
int rbln_program_build(const struct rbln_compiled_config *cc, const struct rbln_layout_shape *s,
		  const struct rbln_layout_buffers *bufs, uint32_t tokens, uint32_t seqs,
		  struct program_image *img, struct rbln_error *err);

/* The device ROPE's parameters for a config.json RoPE (linear as llama3, see there). */
void rbln_program_rope_params(const struct rbln_rope_config *r, struct isa_rope_params *p);

#endif
