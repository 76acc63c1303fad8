// SPDX-License-Identifier: MIT
#include "utf8.h"

static bool in(unsigned char c, unsigned char lo, unsigned char hi)
{
	return c >= lo && c <= hi;
}

enum rbln_utf8_status rbln_utf8_next(const char *str, size_t len, size_t *adv, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char c = s[0], lo = 0x80, hi = 0xBF;
	size_t need, i;
	uint32_t v;

	if (c < 0x80) {
		*adv = 1;
		if (cp)
			*cp = c;
		return RBLN_UTF8_OK;
	}
	if (in(c, 0xC2, 0xDF)) {
		need = 1;
		v = c & 0x1F;
	} else if (in(c, 0xE0, 0xEF)) {
		need = 2;
		v = c & 0x0F;
		if (c == 0xE0)
			lo = 0xA0;	/* overlong */
		else if (c == 0xED)
			hi = 0x9F;	/* surrogates */
	} else if (in(c, 0xF0, 0xF4)) {
		need = 3;
		v = c & 0x07;
		if (c == 0xF0)
			lo = 0x90;	/* overlong */
		else if (c == 0xF4)
			hi = 0x8F;	/* above U+10FFFF */
	} else {
		*adv = 1;
		return RBLN_UTF8_INVALID;
	}
	/* Only the second byte has a restricted range; the rest are 80..BF. */
	for (i = 1; i <= need; i++) {
		if (i >= len) {
			*adv = len;
			return RBLN_UTF8_INCOMPLETE;
		}
		if (!in(s[i], lo, hi)) {
			*adv = i;
			return RBLN_UTF8_INVALID;
		}
		v = (v << 6) | (s[i] & 0x3F);
		lo = 0x80;
		hi = 0xBF;
	}
	*adv = need + 1;
	if (cp)
		*cp = v;
	return RBLN_UTF8_OK;
}

bool rbln_utf8_valid(const char *s, size_t len, size_t *bad)
{
	size_t i = 0, adv;

	while (i < len) {
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		if (rbln_utf8_next(s + i, len - i, &adv, NULL) != RBLN_UTF8_OK) {
			if (bad)
				*bad = i;
			return false;
		}
		i += adv;
	}
	return true;
}

size_t rbln_utf8_encode(uint32_t cp, char out[4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp >= 0xD800 && cp <= 0xDFFF)
		return 0;
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	if (cp <= 0x10FFFF) {
		out[0] = (char)(0xF0 | (cp >> 18));
		out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		out[3] = (char)(0x80 | (cp & 0x3F));
		return 4;
	}
	return 0;
}

size_t rbln_utf8_char_len(unsigned char c)
{
	if (c >= 0xF0 && c <= 0xF4)
		return 4;
	if (c >= 0xE0 && c <= 0xEF)
		return 3;
	if (c >= 0xC2 && c <= 0xDF)
		return 2;
	return 1;
}

size_t rbln_utf8_count(const char *s, size_t len)
{
	size_t n = 0, i;

	for (i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xC0) != 0x80;
	return n;
}

/* Both tables are short and fixed by the Unicode standard, so they are
 * spelled out rather than pulled from a Unicode library. */
static bool is_unicode_space_common(uint32_t cp)
{
	return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 ||
	       cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
	       cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool rbln_unicode_is_python_space(uint32_t cp)
{
	/* Python also counts the ASCII information separators (bidi class B/S). */
	return is_unicode_space_common(cp) || (cp >= 0x1C && cp <= 0x1F);
}

bool rbln_unicode_is_white_space(uint32_t cp)
{
	return is_unicode_space_common(cp);
}
