/* SPDX-License-Identifier: MIT */
/* A one-line progress bar for rbln-compile, drawn only on a terminal. */
#ifndef RBLN_PROGRESS_H
#define RBLN_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct progress {
	FILE *out;		/* NULL: draw nothing */
	uint64_t total;		/* work units (bytes of weights, programs) */
	uint64_t done;
	int drawn;		/* last percentage drawn, -1 for none */
	char what[64];
};

void rbln_progress_init(struct progress *p, FILE *out, uint64_t total);
void rbln_progress_label(struct progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rbln_progress_add(struct progress *p, uint64_t units);
void rbln_progress_end(struct progress *p);

#endif
