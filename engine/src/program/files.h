/* SPDX-License-Identifier: MIT */
/*
 * The binary files of a compiled model: per rank a weight file
 * (rank_R/weights.bin) and one program file per step shape
 * (rank_R/prefill.rbln, rank_R/decoder_batch_N.rbln).  Each starts with a
 * small little-endian header naming its compile (compile_id), rank and
 * shape, so that files of different compiles or ranks are never mixed.
 */
#ifndef RBLN_PROGRAM_FILES_H
#define RBLN_PROGRAM_FILES_H

#include <stdint.h>
#include <stddef.h>

#include "rbln_error.h"

#define WEIGHT_FILE_MAGIC "RBLNWGT"	/* 8 bytes with the NUL */
#define PROGRAM_FILE_MAGIC "RBLNPRG"
#define RBLN_FILES_VERSION 1u
#define PROGRAM_MAX_SLOTS 128u

struct weight_file_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;		/* sizeof(struct weight_file_header) */
	uint64_t compile_id;
	uint32_t rank;
	uint32_t tp;
	uint64_t file_size;		/* whole file, header included */
	uint32_t dtype;			/* enum rbln_dtype of the weights */
	uint32_t reserved;
};

struct program_slot {
	uint64_t size;			/* bytes the program addresses */
	uint32_t access;		/* DRM_RBLN_BO_READ | DRM_RBLN_BO_WRITE */
	uint32_t reserved;
};

struct program_file_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;		/* sizeof(struct program_file_header) */
	uint64_t compile_id;
	uint32_t rank;
	uint32_t tp;
	uint32_t tokens;		/* T: token rows per step */
	uint32_t seqs;			/* B: sequences per step */
	uint32_t n_slots;
	uint32_t reserved;
	uint64_t stream_size;
	/* then n_slots struct program_slot, then the stream */
};

struct program_image {
	struct program_file_header hdr;
	struct program_slot *slots;	/* hdr.n_slots entries */
	void *stream;			/* hdr.stream_size bytes, 8-aligned */
};

/* Writes path atomically (a temporary name, then rename). */
int rbln_program_file_write(const char *path, const struct program_image *img,
		       struct rbln_error *err);
/*
 * Reads and checks the structure (magic, version, sizes, slot count);
 * whether it fits the model is the caller's check.
 */
int rbln_program_file_read(const char *path, struct program_image *img, struct rbln_error *err);
void rbln_program_image_free(struct program_image *img);

/* Checks a weight file's header against what the loader expects. */
int rbln_weight_file_check(const char *path, const struct weight_file_header *h, uint64_t file_size,
		      uint64_t compile_id, uint32_t rank, uint32_t tp, uint32_t dtype,
		      uint64_t expected_size, struct rbln_error *err);

#endif
