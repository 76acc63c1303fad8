/* SPDX-License-Identifier: MIT */
/*
 * Stop strings on streamed text, as vLLM applies them: generation ends at
 * the first occurrence of any stop string in the output text, which is cut
 * before it (or after it with include_stop).  A stop string may span any
 * number of tokens, so text that could be the start of one is held back
 * until the following text decides.
 */
#ifndef RBLN_STOP_H
#define RBLN_STOP_H

#include <stdbool.h>
#include <stddef.h>

struct rbln_stop_matcher;

/* stops: n non-empty strings, copied.  -EINVAL for an empty one. */
int rbln_stop_new(const char *const *stops, size_t n, bool include_stop,
		  struct rbln_stop_matcher **out);
void rbln_stop_free(struct rbln_stop_matcher *m);

/*
 * Adds text; emit and emit_len receive the text that is final now (valid until the
 * next call).  Returns 1 once a stop string matched (the emitted text then
 * ends the output; later pushes emit nothing), 0 otherwise, -ENOMEM.
 */
int rbln_stop_push(struct rbln_stop_matcher *m, const char *text, size_t len,
		   const char **emit, size_t *emit_len);
/* The end of the stream: releases the held-back text. */
void rbln_stop_finish(struct rbln_stop_matcher *m, const char **emit, size_t *emit_len);
/* Index of the stop string that matched, or -1. */
int rbln_stop_matched(const struct rbln_stop_matcher *m);

#endif
