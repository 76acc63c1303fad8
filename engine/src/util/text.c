// SPDX-License-Identifier: MIT
#include "text.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int rbln_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t rbln_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[64];

	if (la >= 63 || lb >= 63)
		return RBLN_EDIT_DISTANCE_FAR;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	/* One row of the table at a time; prev is the diagonal cell. */
	for (i = 1; i <= la; i++) {
		size_t prev = row[0], tmp;

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t best = prev + (a[i - 1] != b[j - 1]);

			tmp = row[j];
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

int rbln_name_index(const char *const names[], const char *s)
{
	int v;

	for (v = 0; names[v]; v++)
		if (!strcmp(names[v], s))
			return v;
	return -EINVAL;
}

const char *rbln_name_of(const char *const names[], unsigned int v)
{
	unsigned int i;

	/* Past the table's end (its NULL): the first name. */
	for (i = 0; i <= v; i++)
		if (!names[i])
			return names[0];
	return names[v];
}

void rbln_name_choices(const char *const names[], const char *last, char *buf, size_t size)
{
	size_t len = 0;
	int v, n;

	if (size)
		buf[0] = '\0';
	for (v = 0; names[v] && len < size; v++) {
		n = snprintf(buf + len, size - len, "%s%s", !v ? "" : names[v + 1] ? ", " : last,
			     names[v]);
		if (n < 0)
			break;
		len += (size_t)n;
	}
}
