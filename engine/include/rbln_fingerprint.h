/* SPDX-License-Identifier: MIT */
/*
 * What a compiled model was compiled from: a SHA-256 over the compiler's
 * version and the checkpoint (config, generation config, tokenizer files
 * and chat template by content; every *.safetensors file by name, size,
 * modification time and header; the shard index by content).  rbln-compile
 * records it in the output; the model cache of rbln-serve keys and checks
 * builds by it, so a changed or different checkpoint is never served from
 * a stale build.
 */
#ifndef RBLN_FINGERPRINT_H
#define RBLN_FINGERPRINT_H

#include "rbln_error.h"

/* The file in a compiled directory that holds the fingerprint (hex, newline). */
#define RBLN_FINGERPRINT_FILE "checkpoint.fingerprint"
/* Hex digits of a fingerprint, without the terminating NUL. */
#define RBLN_FINGERPRINT_LEN 64

/*
 * Bumped whenever the compiler's output for the same checkpoint and
 * options changes, so that cached builds of older compilers are not used.
 */
#define RBLN_COMPILER_VERSION "rbln-compile 2"

int rbln_checkpoint_fingerprint(const char *hf_dir, char out[RBLN_FINGERPRINT_LEN + 1],
				struct rbln_error *err);

/*
 * Is compiled_dir a complete build of the checkpoint with fingerprint
 * `want`?  1: yes.  0: no build there (the directory does not exist).
 * Negative, with an error saying what the directory is instead: a compile's
 * unfinished staging directory, an incomplete build, or a build of another
 * checkpoint or compiler.
 */
int rbln_compiled_dir_check(const char *compiled_dir, const char *want,
			    struct rbln_error *err);

/*
 * For a directory that is neither a compiled model nor a checkpoint: an
 * error naming what it is when it is the leftover of an interrupted compile
 * (a staging directory, or a build without rbln_config.json); 0 otherwise.
 */
int rbln_compiled_dir_explain(const char *dir, struct rbln_error *err);

#endif
