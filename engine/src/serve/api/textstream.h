/* SPDX-License-Identifier: MIT */
/*
 * Generated ids -> released text, with stop strings.  Text is released as
 * soon as it is final: complete UTF-8 characters (the streaming
 * detokenizer's guarantee) that cannot be the start of a stop string.  The
 * shortest possible hold-back is kept, so a stream never shows text that a
 * stop string later takes back, and never waits longer than it must.
 */
#ifndef RBLN_SERVE_TEXTSTREAM_H
#define RBLN_SERVE_TEXTSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_error.h"
#include "rbln_serving.h"
#include "rbln_tokenizer.h"
#include "util/strbuf.h"

struct serve_textstream;

/* Reads sp->stop, include_stop_str_in_output and skip_special_tokens (copies them). */
struct serve_textstream *serve_textstream_new(const struct rbln_tokenizer *tok,
					      const struct rbln_sampling_params *sp);
void serve_textstream_free(struct serve_textstream *ts);

/*
 * Feeds ids in order, appending released text to out.  Returns 1 when a
 * stop string completed (the text up to it, or through it with
 * include_stop_str_in_output, was released; later ids must not be pushed;
 * *consumed says how many of ids were used), 0 otherwise, negative on error.
 */
int serve_textstream_push(struct serve_textstream *ts, const int32_t *ids, size_t n,
			  struct rbln_strbuf *out, size_t *consumed, struct rbln_error *err);

/* The sequence ended: releases what was held back (a stop string may still match). */
int serve_textstream_finish(struct serve_textstream *ts, struct rbln_strbuf *out,
			    struct rbln_error *err);

/* The stop string that matched, or NULL. */
const char *serve_textstream_stop(const struct serve_textstream *ts);

#endif
