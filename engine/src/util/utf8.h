/* SPDX-License-Identifier: MIT */
/* UTF-8 decoding with the exact error classification Rust and WHATWG use
 * ("maximal subpart"), so lossy conversions match Hugging Face tokenizers. */
#ifndef RBLN_UTF8_H
#define RBLN_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rbln_utf8_status {
	RBLN_UTF8_OK,		/* a complete character of *adv bytes */
	RBLN_UTF8_INCOMPLETE,	/* a valid prefix that the input ends inside */
	RBLN_UTF8_INVALID,	/* *adv bytes form one invalid maximal subpart */
};

/* Classifies the sequence at s[0..len), len >= 1; *cp is set when OK. */
enum rbln_utf8_status rbln_utf8_next(const char *s, size_t len, size_t *adv, uint32_t *cp);

/* True when s[0..len) is valid UTF-8; otherwise *bad is the offending offset. */
bool rbln_utf8_valid(const char *s, size_t len, size_t *bad);

/* Encodes a scalar value; returns the byte count (1..4) or 0 if invalid. */
size_t rbln_utf8_encode(uint32_t cp, char out[4]);

/* Length of the character starting with byte c (1 for stray bytes). */
size_t rbln_utf8_char_len(unsigned char c);

/* Number of code points in a valid UTF-8 string. */
size_t rbln_utf8_count(const char *s, size_t len);

/* Python's str.isspace() (Unicode whitespace, bidi WS/B/S or Zs). */
bool rbln_unicode_is_python_space(uint32_t cp);

/* Rust's char::is_whitespace() (the Unicode White_Space property). */
bool rbln_unicode_is_white_space(uint32_t cp);

#endif
