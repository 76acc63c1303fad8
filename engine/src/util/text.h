/* SPDX-License-Identifier: MIT */
/*
 * Small text helpers shared by the parsers: hex digits, edit distance, the
 * spellings of an enum's values.
 */
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

/*
 * An enum's spellings: names[v] spells value v (0, 1, ... without gaps),
 * and a NULL ends the table.  The one parser of such spellings, for the
 * command lines and the files alike.
 */
/* The value that @s spells, -EINVAL for anything else. */
int rbln_name_index(const char *const names[], const char *s);
/* The spelling of @v, the first one's for a value past the table. */
const char *rbln_name_of(const char *const names[], unsigned int v);
/*
 * "a, b or c" (@last " or "), "a and b" (" and "): the spellings as a
 * message lists them, cut to @size bytes.
 */
void rbln_name_choices(const char *const names[], const char *last, char *buf, size_t size);

#endif
