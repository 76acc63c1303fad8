/* SPDX-License-Identifier: MIT */
/*
 * GPT-2's reversible byte <-> unicode mapping used by byte-level BPE: every
 * byte becomes a printable character (space is 'Ġ' U+0120), so BPE can run
 * on text without ever meeting control characters or broken UTF-8.
 */
#ifndef RBLN_BYTELEVEL_H
#define RBLN_BYTELEVEL_H

#include <stdbool.h>
#include <stdint.h>

uint32_t rbln_bytelevel_char(unsigned char byte);
/* False when cp is not one of the 256 characters of the alphabet. */
bool rbln_bytelevel_byte(uint32_t cp, unsigned char *byte);

#endif
