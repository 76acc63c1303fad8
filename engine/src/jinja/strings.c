// SPDX-License-Identifier: MIT
/*
 * Python string operations the templates rely on: strip with Unicode
 * whitespace, case mapping (through the C library's UTF-8 locale tables,
 * which implement Unicode simple case mapping) and splitlines.
 */
#include <locale.h>
#include <string.h>
#include <wctype.h>

#include "jinja/jinja_internal.h"
#include "util/utf8.h"

uint32_t rbln_jinja_char_at(const char *s, size_t n, size_t i, size_t *adv)
{
	uint32_t cp;

	if (rbln_utf8_next(s + i, n - i, adv, &cp) != RBLN_UTF8_OK) {
		*adv = 1;
		return (unsigned char)s[i];
	}
	return cp;
}

bool rbln_jinja_is_space_at(const char *s, size_t n, size_t i, size_t *adv)
{
	return rbln_unicode_is_python_space(rbln_jinja_char_at(s, n, i, adv));
}

static bool in_chars(const struct jv *chars, uint32_t cp)
{
	size_t i = 0, adv;

	while (i < chars->u.s->len) {
		if (rbln_jinja_char_at(chars->u.s->data, chars->u.s->len, i, &adv) == cp)
			return true;
		i += adv;
	}
	return false;
}

static bool strippable(const struct jv *chars, const char *s, size_t n, size_t i, size_t *adv)
{
	uint32_t cp = rbln_jinja_char_at(s, n, i, adv);

	return chars ? in_chars(chars, cp) : rbln_unicode_is_python_space(cp);
}

struct jv rbln_jinja_strip(struct jctx *c, const struct jv *sv, const struct jv *chars, bool left,
		      bool right)
{
	struct jv s = rbln_jv_stringify(c, sv);
	const char *d = s.u.s->data;
	size_t n = s.u.s->len, start = 0, end = n, adv;

	if (chars && chars->kind == JV_NONE)
		chars = NULL;
	if (chars && chars->kind != JV_STR)
		rbln_jinja_fail(c, 0, "strip arg must be None or str, not %s", rbln_jv_type_name(chars));
	while (left && start < end && strippable(chars, d, n, start, &adv))
		start += adv;
	while (right && end > start) {
		size_t j = end - 1;

		while (j > start && ((unsigned char)d[j] & 0xC0) == 0x80)
			j--;
		if (!strippable(chars, d, end, j, &adv))
			break;
		end = j;
	}
	return rbln_jv_str(c, d + start, end - start);
}

static locale_t utf8_locale(struct jctx *c)
{
	if (!c->utf8_locale) {
		c->utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
		if (!c->utf8_locale)
			rbln_jinja_fail(c, 0, "the C.UTF-8 locale is not available for case mapping");
	}
	return (locale_t)c->utf8_locale;
}

/*
 * Characters whose upper or title case is more than one character
 * (Unicode SpecialCasing, unconditional entries Python applies); the C
 * library only knows one-to-one mappings.
 */
static const struct {
	uint32_t cp;
	const char *upper, *title;
} special_cases[] = {
	{ 0x00DF, "SS", "Ss" },			/* ß */
	{ 0x0149, "\xCA\xBCN", "\xCA\xBCN" },	/* ŉ */
	{ 0xFB00, "FF", "Ff" }, { 0xFB01, "FI", "Fi" }, { 0xFB02, "FL", "Fl" },
	{ 0xFB03, "FFI", "Ffi" }, { 0xFB04, "FFL", "Ffl" }, { 0xFB05, "ST", "St" },
	{ 0xFB06, "ST", "St" },
};

static const char *special_case(uint32_t cp, bool title)
{
	size_t i;

	for (i = 0; i < sizeof(special_cases) / sizeof(special_cases[0]); i++)
		if (special_cases[i].cp == cp)
			return title ? special_cases[i].title : special_cases[i].upper;
	return NULL;
}

static bool is_cased(uint32_t cp, locale_t loc)
{
	return iswupper_l((wint_t)cp, loc) || iswlower_l((wint_t)cp, loc);
}

/* Jinja's title filter capitalizes after these delimiters. */
static bool jinja_word_break(uint32_t cp)
{
	return cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<' ||
	       rbln_unicode_is_python_space(cp);
}

struct jv rbln_jinja_case(struct jctx *c, const struct jv *sv, enum jcase mode)
{
	struct jv s = rbln_jv_stringify(c, sv);
	locale_t loc = utf8_locale(c);
	struct rbln_strbuf *sb = rbln_jinja_temp_buf(c);
	bool prev_cased = false, first = true;
	size_t i = 0, adv;
	struct jv r;

	while (i < s.u.s->len) {
		uint32_t cp, out;
		bool upper = false;
		char u[4];

		if (rbln_utf8_next(s.u.s->data + i, s.u.s->len - i, &adv, &cp) != RBLN_UTF8_OK) {
			rbln_jout(c, sb, s.u.s->data + i, 1);	/* not text: keep the byte */
			i++;
			continue;
		}
		switch (mode) {
		case JCASE_UPPER: upper = true; break;
		case JCASE_LOWER: break;
		case JCASE_TITLE: upper = !prev_cased; break;
		case JCASE_CAPITALIZE:
		case JCASE_JINJA_TITLE: upper = first; break;
		}
		out = upper ? (uint32_t)towupper_l((wint_t)cp, loc) : (uint32_t)towlower_l((wint_t)cp, loc);
		if (mode == JCASE_TITLE)
			prev_cased = is_cased(cp, loc);
		first = mode == JCASE_JINJA_TITLE && jinja_word_break(cp);
		/* Python title-cases for title() and capitalize(); Jinja's
		 * title filter upper-cases. */
		if (upper && special_case(cp, mode == JCASE_TITLE || mode == JCASE_CAPITALIZE)) {
			const char *sp = special_case(cp, mode == JCASE_TITLE ||
							  mode == JCASE_CAPITALIZE);

			rbln_jout(c, sb, sp, strlen(sp));
		} else {
			rbln_jout(c, sb, u, rbln_utf8_encode(out, u));
		}
		i += adv;
	}
	r = rbln_jinja_temp_str(c, sb);
	return r;
}

struct jv rbln_jinja_splitlines(struct jctx *c, const struct jv *sv)
{
	struct jv s = rbln_jv_stringify(c, sv), lines = rbln_jv_list(c, 0);
	const char *d = s.u.s->data;
	size_t n = s.u.s->len, start = 0, i = 0, adv;

	while (i < n) {
		uint32_t cp = rbln_jinja_char_at(d, n, i, &adv);
		bool brk = cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C ||
			   (cp >= 0x1C && cp <= 0x1E) || cp == 0x85 || cp == 0x2028 || cp == 0x2029;

		if (!brk) {
			i += adv;
			continue;
		}
		rbln_jv_list_push(c, &lines, rbln_jv_str(c, d + start, i - start));
		i += adv;
		if (cp == '\r' && i < n && d[i] == '\n')
			i++;
		start = i;
	}
	if (start < n)
		rbln_jv_list_push(c, &lines, rbln_jv_str(c, d + start, n - start));
	return lines;
}
