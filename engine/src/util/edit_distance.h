/* SPDX-License-Identifier: MIT */
/* Levenshtein distance, for "did you mean ...?" hints on unknown names. */
#ifndef RBLN_EDIT_DISTANCE_H
#define RBLN_EDIT_DISTANCE_H

#include <stddef.h>

#define RBLN_EDIT_DISTANCE_FAR	99

/*
 * Insertions, deletions and substitutions that turn @a into @b; names of
 * 63 bytes or more are RBLN_EDIT_DISTANCE_FAR from everything (a hint for
 * them would not help, and the row stays on the stack).
 */
size_t rbln_edit_distance(const char *a, const char *b);

#endif
