/* SPDX-License-Identifier: MIT */
/*
 * Where a compile writes: a fresh staging directory beside the output
 * (mkdtemp, so no one else can have planted anything in it), renamed into
 * place only when complete.  An existing complete build is swapped out
 * atomically (renameat2 RENAME_EXCHANGE, else rename aside, rename in) and
 * removed afterwards, so an interrupted compile leaves the old build intact.
 */
#ifndef RBLN_COMPILE_OUTPUT_DIR_H
#define RBLN_COMPILE_OUTPUT_DIR_H

#include "rbln_error.h"

struct output_stage {
	char *out_dir;		/* where the result goes */
	char *path;		/* the staging directory */
	int lock_fd;		/* flock'd while the compile runs */
};

/*
 * Checks that out_dir may be replaced (missing, empty, or a compiled model),
 * removes staging directories of killed compiles of the same output (their
 * lock is free), and creates a new staging directory.
 */
int rbln_output_stage_begin(struct output_stage *st, const char *out_dir, struct rbln_error *err);
/* Moves the complete staging directory into place. */
int rbln_output_stage_commit(struct output_stage *st, struct rbln_error *err);
/* Removes the staging directory (after a failure) and frees st. */
void rbln_output_stage_abort(struct output_stage *st);

/*
 * Creates `path` for writing: exclusive and not following a symlink, so a
 * planted file or link makes the compile fail instead of being written
 * through.  Returns the fd or a negative errno (error recorded).
 */
int rbln_output_create(const char *path, struct rbln_error *err);

#endif
