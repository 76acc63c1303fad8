/* SPDX-License-Identifier: MIT */
/*
 * Error reporting for the engine front end.
 *
 * Every fallible call takes an optional struct rbln_error and returns a
 * negative errno-style code.  The message always names the file and the
 * field or tensor at fault, because the person reading it is looking at a
 * model directory, not at our source.
 */
#ifndef RBLN_ERROR_H
#define RBLN_ERROR_H

#include <stddef.h>

#define RBLN_ERROR_MSG_MAX 768

struct rbln_error {
	int code;			/* negative errno, 0 when no error */
	char msg[RBLN_ERROR_MSG_MAX];	/* NUL-terminated human-readable text */
};

/* Records an error; returns code so callers can write `return rbln_error_set(...)`. */
int rbln_error_set(struct rbln_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepends context ("tokenizer.json: ") to an already recorded message. */
void rbln_error_prefix(struct rbln_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void rbln_error_clear(struct rbln_error *err);

#endif
