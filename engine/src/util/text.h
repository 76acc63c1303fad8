/* SPDX-License-Identifier: MIT */
/* Small text helpers shared by the parsers: hex digits, edit distance. */
#ifndef RBLN_TEXT_H
#define RBLN_TEXT_H

#include <stddef.h>

/* The value of hex digit @c (either case), -1 for any other character. */
int rbln_hex_digit(char c);

#define RBLN_EDIT_DISTANCE_FAR	99

/*
 * Levenshtein distance, for "did you mean ...?" hints on unknown names:
 * insertions, deletions and substitutions that turn @a into @b; names of
 * 63 bytes or more are RBLN_EDIT_DISTANCE_FAR from everything (a hint for
 * them would not help, and the row stays on the stack).
 */
size_t rbln_edit_distance(const char *a, const char *b);

#endif
