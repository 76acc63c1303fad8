// SPDX-License-Identifier: MIT
#include "tokenizer/bytelevel.h"

/* Bytes that map to themselves: the printable ranges of Latin-1. */
static bool printable(uint32_t b)
{
	return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

/* The other 68 bytes get U+0100.. in byte order: 0x00-0x20, 0x7F-0xA0, 0xAD. */
uint32_t rbln_bytelevel_char(unsigned char b)
{
	if (printable(b))
		return b;
	if (b <= 0x20)
		return 256u + b;
	if (b >= 0x7F && b <= 0xA0)
		return 256u + 33u + (b - 0x7Fu);
	return 256u + 33u + 34u;	/* 0xAD */
}

bool rbln_bytelevel_byte(uint32_t cp, unsigned char *byte)
{
	if (cp < 256) {
		if (!printable(cp))
			return false;
		*byte = (unsigned char)cp;
		return true;
	}
	if (cp < 256 + 33) {
		*byte = (unsigned char)(cp - 256);
		return true;
	}
	if (cp < 256 + 33 + 34) {
		*byte = (unsigned char)(0x7F + (cp - 256 - 33));
		return true;
	}
	if (cp == 256 + 33 + 34) {
		*byte = 0xAD;
		return true;
	}
	return false;
}
