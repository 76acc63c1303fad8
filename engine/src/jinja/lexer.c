// SPDX-License-Identifier: MIT
/*
 * The template lexer, following Jinja's: newlines are normalized and one
 * trailing newline dropped (keep_trailing_newline=False); data between tags
 * becomes DATA tokens; "{{ }}" and "{% %}" contents become expression
 * tokens.  Whitespace control is applied here as transformers configures
 * Jinja: trim_blocks (one newline after %} or #} is removed), lstrip_blocks
 * (indentation before {% or {# on its own line is removed), and the "-"
 * and "+" markers.  Tag ends inside open brackets do not count, so dict
 * literals may contain "}}".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jinja/jinja_internal.h"
#include "util/utf8.h"
#include "util/text.h"

struct lexer {
	const char *s;
	size_t n, pos;
	int line;
	bool line_starting;	/* the previous tag end consumed a newline */
	struct jarena *a;
	struct jtokens *out;
	const char *name;
	struct rbln_error *err;
	char brackets[64];	/* open ( [ { inside the current tag */
	size_t depth;
};

static int lex_error(struct lexer *lx, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int lex_error(struct lexer *lx, int line, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return rbln_error_set(lx->err, -EINVAL, "%s line %d: %s", lx->name, line, msg);
}

static struct jtok *push(struct lexer *lx, enum jtok_kind kind, int line)
{
	struct jtokens *t = lx->out;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct jtok *v = rbln_jarena_alloc(lx->a, cap * sizeof(*v));

		if (!v)
			return NULL;
		if (t->n)
			memcpy(v, t->v, t->n * sizeof(*v));
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n] = (struct jtok){ .kind = kind, .line = line };
	return &t->v[t->n++];
}

static int count_lines(const char *s, size_t n)
{
	int k = 0;
	size_t i;

	for (i = 0; i < n; i++)
		k += s[i] == '\n';
	return k;
}

/* Python's str.isspace() on the character at s[i]; *adv its length. */
static bool space_at(const char *s, size_t n, size_t i, size_t *adv)
{
	uint32_t cp;

	if (rbln_utf8_next(s + i, n - i, adv, &cp) != RBLN_UTF8_OK) {
		*adv = 1;
		return false;
	}
	return rbln_unicode_is_python_space(cp);
}

static size_t rstrip_len(const char *s, size_t n)
{
	size_t end = n;

	while (end > 0) {
		size_t j = end - 1, adv;

		while (j > 0 && ((unsigned char)s[j] & 0xC0) == 0x80)
			j--;
		if (!space_at(s, end, j, &adv))
			break;
		end = j;
	}
	return end;
}

static size_t skip_space(const char *s, size_t n, size_t i)
{
	size_t adv;

	while (i < n && space_at(s, n, i, &adv))
		i += adv;
	return i;
}

static int emit_data(struct lexer *lx, const char *text, size_t len, int line)
{
	struct jtok *t;

	if (!len)
		return 0;
	t = push(lx, JT_DATA, line);
	if (!t || !(t->text = rbln_jarena_strndup(lx->a, text, len)))
		return rbln_error_set(lx->err, -ENOMEM, "out of memory");
	t->len = len;
	return 0;
}

/* Text before a tag, with the tag's whitespace control applied. */
static int emit_text_before(struct lexer *lx, size_t start, size_t tag, char sign,
			    bool lstrip_applies)
{
	const char *text = lx->s + start;
	size_t len = tag - start, l_pos, i;
	int line = lx->line;

	lx->line += count_lines(text, len);
	if (sign == '-') {
		len = rstrip_len(text, len);
	} else if (sign != '+' && lstrip_applies) {
		const char *nl = len ? memrchr(text, '\n', len) : NULL;

		l_pos = nl ? (size_t)(nl - text) + 1 : 0;
		/* Jinja: the rest of the line must match \s+ (Unicode whitespace). */
		if (l_pos > 0 || lx->line_starting) {
			i = skip_space(text, len, l_pos);
			if (i == len)
				len = l_pos;
		}
	}
	return emit_data(lx, text, len, line);
}

/* ---- string literals: Python unicode-escape rules ---- */

static bool read_hex(const char *s, size_t n, size_t i, int digits, uint32_t *out)
{
	int k;

	*out = 0;
	if (i + (size_t)digits > n)
		return false;
	for (k = 0; k < digits; k++) {
		int h = rbln_hex_digit(s[i + (size_t)k]);

		if (h < 0)
			return false;
		*out = *out * 16 + (uint32_t)h;
	}
	return true;
}

static int append_cp(struct rbln_strbuf *sb, uint32_t cp)
{
	char u[4];
	size_t k = rbln_utf8_encode(cp, u);

	if (!k)
		k = rbln_utf8_encode(0xFFFD, u);	/* lone surrogate */
	return rbln_strbuf_append(sb, u, k);
}

/* One escape after a backslash at s[i]; returns the bytes consumed. */
static size_t unescape_one(const char *s, size_t n, size_t i, struct rbln_strbuf *sb, int *rc)
{
	static const char simple_from[] = "\\'\"abfnrtv";
	static const char simple_to[] = "\\'\"\a\b\f\n\r\t\v";
	const char *p = i < n ? strchr(simple_from, s[i]) : NULL;
	uint32_t cp, lo;
	int digits;

	if (i >= n) {
		*rc = rbln_strbuf_append_char(sb, '\\');
		return 0;
	}
	if (p && *p) {
		*rc = rbln_strbuf_append_char(sb, simple_to[p - simple_from]);
		return 1;
	}
	if (s[i] == '\n')
		return 1;	/* line continuation */
	if (s[i] >= '0' && s[i] <= '7') {
		size_t k = 0;

		for (cp = 0; k < 3 && i + k < n && s[i + k] >= '0' && s[i + k] <= '7'; k++)
			cp = cp * 8 + (uint32_t)(s[i + k] - '0');
		*rc = append_cp(sb, cp);
		return k;
	}
	digits = s[i] == 'x' ? 2 : s[i] == 'u' ? 4 : s[i] == 'U' ? 8 : 0;
	if (digits && read_hex(s, n, i + 1, digits, &cp) && cp <= 0x10FFFF) {
		/* Join a UTF-16 surrogate pair written as two \u escapes. */
		if (cp >= 0xD800 && cp < 0xDC00 && i + 11 <= n && s[i + 5] == '\\' &&
		    s[i + 6] == 'u' && read_hex(s, n, i + 7, 4, &lo) && lo >= 0xDC00 && lo < 0xE000) {
			*rc = append_cp(sb, 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00));
			return 11;
		}
		*rc = append_cp(sb, cp);
		return 1 + (size_t)digits;
	}
	/* Unknown escapes stay as written, like Python. */
	*rc = rbln_strbuf_append_char(sb, '\\');
	return 0;
}

static int lex_string(struct lexer *lx, size_t *pos)
{
	char quote = lx->s[*pos];
	size_t i = *pos + 1;
	int start_line = lx->line, rc = 0;
	struct rbln_strbuf sb = { 0 };
	struct jtok *t;

	while (i < lx->n && lx->s[i] != quote && !rc) {
		if (lx->s[i] == '\\') {
			i++;
			if (i < lx->n && lx->s[i] == '\n')
				lx->line++;
			i += unescape_one(lx->s, lx->n, i, &sb, &rc);
			continue;
		}
		if (lx->s[i] == '\n')
			lx->line++;
		rc = rbln_strbuf_append_char(&sb, lx->s[i++]);
	}
	if (!rc && i >= lx->n)
		rc = lex_error(lx, start_line, "unterminated string literal");
	t = rc ? NULL : push(lx, JT_STRING, start_line);
	if (!rc && (!t || !(t->text = rbln_jarena_strndup(lx->a, sb.data ? sb.data : "", sb.len))))
		rc = rbln_error_set(lx->err, -ENOMEM, "out of memory");
	if (!rc)
		t->len = sb.len;
	rbln_strbuf_free(&sb);
	*pos = i + 1;
	return rc;
}

/* ---- numbers, names, operators ---- */

static size_t digits_run(const char *s, size_t n, size_t i)
{
	/* Jinja allows 1_000_000. */
	while (i < n && ((s[i] >= '0' && s[i] <= '9') ||
			 (s[i] == '_' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9')))
		i++;
	return i;
}

static int lex_number(struct lexer *lx, size_t *pos)
{
	const char *s = lx->s;
	size_t i = digits_run(s, lx->n, *pos), j, k = 0;
	bool is_float = false;
	char buf[64];
	struct jtok *t;

	if (i + 1 < lx->n && s[i] == '.' && s[i + 1] >= '0' && s[i + 1] <= '9') {
		i = digits_run(s, lx->n, i + 1);
		is_float = true;
	}
	if (i < lx->n && (s[i] == 'e' || s[i] == 'E')) {
		j = i + 1;
		if (j < lx->n && (s[j] == '+' || s[j] == '-'))
			j++;
		if (j < lx->n && s[j] >= '0' && s[j] <= '9') {
			i = digits_run(s, lx->n, j);
			is_float = true;
		}
	}
	for (j = *pos; j < i && k + 1 < sizeof(buf); j++)
		if (s[j] != '_')
			buf[k++] = s[j];
	buf[k] = '\0';
	if (i - *pos >= sizeof(buf))
		return lex_error(lx, lx->line, "number literal too long");
	t = push(lx, is_float ? JT_FLOAT : JT_INT, lx->line);
	if (!t)
		return rbln_error_set(lx->err, -ENOMEM, "out of memory");
	errno = 0;
	if (is_float)
		t->f = strtod(buf, NULL);
	else
		t->i = strtoll(buf, NULL, 10);
	if (errno == ERANGE && !is_float)
		return lex_error(lx, lx->line, "integer literal %s out of range", buf);
	*pos = i;
	return 0;
}

static bool name_start(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

static bool name_char(char ch)
{
	return name_start(ch) || (ch >= '0' && ch <= '9');
}

static int lex_operator(struct lexer *lx, size_t *pos)
{
	static const char *const ops[] = {
		"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[", "]", "(",
		")", "{", "}", ">", "<", "=", ".", ":", "|", ",", ";",
	};
	const char *s = lx->s + *pos;
	size_t i, len;
	struct jtok *t;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		len = strlen(ops[i]);
		if (*pos + len <= lx->n && memcmp(s, ops[i], len) == 0)
			break;
	}
	if (i == sizeof(ops) / sizeof(ops[0]))
		return lex_error(lx, lx->line, "unexpected character '%c'", *s);
	if (s[0] == '(' || s[0] == '[' || s[0] == '{') {
		if (lx->depth == sizeof(lx->brackets))
			return lex_error(lx, lx->line, "brackets nested too deeply");
		lx->brackets[lx->depth++] = s[0];
	} else if (s[0] == ')' || s[0] == ']' || s[0] == '}') {
		char open = s[0] == ')' ? '(' : s[0] == ']' ? '[' : '{';

		if (!lx->depth || lx->brackets[lx->depth - 1] != open)
			return lex_error(lx, lx->line, "unexpected '%c'", s[0]);
		lx->depth--;
	}
	t = push(lx, JT_OP, lx->line);
	if (!t)
		return rbln_error_set(lx->err, -ENOMEM, "out of memory");
	t->text = ops[i];
	t->len = len;
	*pos += len;
	return 0;
}

/* At a tag end?  Returns the bytes it spans (with trimmed whitespace), else 0. */
static size_t tag_end(struct lexer *lx, size_t i, bool block)
{
	const char *s = lx->s;
	const char *close = block ? "%}" : "}}";

	if (lx->depth)
		return 0;
	if (i + 3 <= lx->n && s[i] == '-' && memcmp(s + i + 1, close, 2) == 0)
		return skip_space(s, lx->n, i + 3) - i;
	if (block && i + 3 <= lx->n && s[i] == '+' && memcmp(s + i + 1, close, 2) == 0)
		return 3;
	if (i + 2 <= lx->n && memcmp(s + i, close, 2) == 0)
		return 2 + (block && i + 2 < lx->n && s[i + 2] == '\n');	/* trim_blocks */
	return 0;
}

static int lex_tag(struct lexer *lx, size_t *pos, bool block, int open_line)
{
	size_t i = *pos, end;
	int rc = 0;

	lx->depth = 0;
	for (;;) {
		i = skip_space(lx->s, lx->n, i);
		lx->line += count_lines(lx->s + *pos, i - *pos);
		*pos = i;
		if (i >= lx->n)
			return lex_error(lx, open_line, "unclosed '%s'", block ? "{%" : "{{");
		end = tag_end(lx, i, block);
		if (end)
			break;
		if (lx->s[i] == '\'' || lx->s[i] == '"') {
			rc = lex_string(lx, &i);
		} else if (lx->s[i] >= '0' && lx->s[i] <= '9') {
			rc = lex_number(lx, &i);
		} else if (name_start(lx->s[i])) {
			size_t j = i;
			struct jtok *t;

			while (j < lx->n && name_char(lx->s[j]))
				j++;
			t = push(lx, JT_NAME, lx->line);
			if (!t || !(t->text = rbln_jarena_strndup(lx->a, lx->s + i, j - i)))
				return rbln_error_set(lx->err, -ENOMEM, "out of memory");
			t->len = j - i;
			i = j;
		} else {
			rc = lex_operator(lx, &i);
		}
		if (rc)
			return rc;
		*pos = i;
	}
	if (!push(lx, block ? JT_BLOCK_END : JT_VAR_END, lx->line))
		return rbln_error_set(lx->err, -ENOMEM, "out of memory");
	lx->line += count_lines(lx->s + i, end);
	lx->line_starting = lx->s[i + end - 1] == '\n';
	*pos = i + end;
	return 0;
}

static int lex_comment(struct lexer *lx, size_t *pos, int open_line)
{
	const char *s = lx->s;
	size_t i = *pos;

	for (; i + 1 < lx->n; i++) {
		size_t end = 0;

		if (s[i] == '-' && i + 2 < lx->n && s[i + 1] == '#' && s[i + 2] == '}')
			end = skip_space(s, lx->n, i + 3) - i;
		else if (s[i] == '+' && i + 2 < lx->n && s[i + 1] == '#' && s[i + 2] == '}')
			end = 3;
		else if (s[i] == '#' && s[i + 1] == '}')
			end = 2 + (i + 2 < lx->n && s[i + 2] == '\n');
		if (end) {
			lx->line += count_lines(s + *pos, i + end - *pos);
			lx->line_starting = s[i + end - 1] == '\n';
			*pos = i + end;
			return 0;
		}
	}
	return lex_error(lx, open_line, "unclosed comment");
}

/* "{% raw %}" after the opener at s[i]? Returns the end of the tag or 0. */
static size_t raw_begin(const struct lexer *lx, size_t i)
{
	const char *s = lx->s;

	i = skip_space(s, lx->n, i);
	if (i + 3 > lx->n || memcmp(s + i, "raw", 3) != 0 || (i + 3 < lx->n && name_char(s[i + 3])))
		return 0;
	i = skip_space(s, lx->n, i + 3);
	if (i + 3 <= lx->n && s[i] == '-' && memcmp(s + i + 1, "%}", 2) == 0)
		return skip_space(s, lx->n, i + 3);
	if (i + 2 <= lx->n && memcmp(s + i, "%}", 2) == 0)
		return i + 2;
	return 0;
}

static int lex_raw(struct lexer *lx, size_t *pos, int open_line)
{
	const char *s = lx->s;
	size_t i, j;

	for (i = *pos; i + 1 < lx->n; i++) {
		char sign;

		if (s[i] != '{' || s[i + 1] != '%')
			continue;
		j = i + 2;
		sign = j < lx->n && (s[j] == '-' || s[j] == '+') ? s[j++] : 0;
		j = skip_space(s, lx->n, j);
		if (j + 6 > lx->n || memcmp(s + j, "endraw", 6) != 0)
			continue;
		j = skip_space(s, lx->n, j + 6);
		if (emit_text_before(lx, *pos, i, sign, true))
			return -ENOMEM;
		if (j + 3 <= lx->n && s[j] == '-' && memcmp(s + j + 1, "%}", 2) == 0)
			j = skip_space(s, lx->n, j + 3);
		else if (j + 3 <= lx->n && s[j] == '+' && memcmp(s + j + 1, "%}", 2) == 0)
			j += 3;
		else if (j + 2 <= lx->n && memcmp(s + j, "%}", 2) == 0)
			j += 2 + (j + 2 < lx->n && s[j + 2] == '\n');
		else
			return lex_error(lx, lx->line, "malformed endraw tag");
		lx->line += count_lines(s + i, j - i);
		lx->line_starting = s[j - 1] == '\n';
		*pos = j;
		return 0;
	}
	return lex_error(lx, open_line, "unclosed raw block");
}

/* Newlines normalized to \n, one trailing newline removed. */
static char *normalize_source(struct jarena *a, const char *src, size_t len, size_t *out_len)
{
	char *dst = rbln_jarena_alloc(a, len + 1);
	size_t i, o = 0;

	if (!dst)
		return NULL;
	for (i = 0; i < len; i++) {
		if (src[i] == '\r') {
			dst[o++] = '\n';
			if (i + 1 < len && src[i + 1] == '\n')
				i++;
		} else {
			dst[o++] = src[i];
		}
	}
	if (o && dst[o - 1] == '\n')
		o--;
	dst[o] = '\0';
	*out_len = o;
	return dst;
}

static int lex_root(struct lexer *lx)
{
	const char *s = lx->s;
	size_t pos = 0;
	int rc = 0;

	while (!rc) {
		size_t tag = pos, after;
		char kind = 0, sign = 0;
		int line;

		while (tag + 1 < lx->n &&
		       !(s[tag] == '{' && (s[tag + 1] == '{' || s[tag + 1] == '%' || s[tag + 1] == '#')))
			tag++;
		if (tag + 1 >= lx->n)
			return emit_text_before(lx, pos, lx->n, 0, false);
		kind = s[tag + 1];
		after = tag + 2;
		if (after < lx->n && (s[after] == '-' || s[after] == '+'))
			sign = s[after++];
		rc = emit_text_before(lx, pos, tag, sign, kind != '{');
		if (rc)
			return rc;
		line = lx->line;
		pos = after;
		if (kind == '#') {
			rc = lex_comment(lx, &pos, line);
		} else if (kind == '%' && raw_begin(lx, pos)) {
			pos = raw_begin(lx, pos);
			lx->line += count_lines(s + after, pos - after);
			lx->line_starting = s[pos - 1] == '\n';
			rc = lex_raw(lx, &pos, line);
		} else {
			if (!push(lx, kind == '%' ? JT_BLOCK_BEGIN : JT_VAR_BEGIN, line))
				return rbln_error_set(lx->err, -ENOMEM, "out of memory");
			rc = lex_tag(lx, &pos, kind == '%', line);
		}
	}
	return rc;
}

int rbln_jinja_lex(const char *src, size_t len, const char *name, struct jarena *a,
		   struct jtokens *out, struct rbln_error *err)
{
	struct lexer lx = { .a = a, .out = out, .name = name, .err = err, .line = 1,
			    .line_starting = true };
	int rc;

	lx.s = normalize_source(a, src, len, &lx.n);
	if (!lx.s)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rc = lex_root(&lx);
	if (!rc && !push(&lx, JT_EOF, lx.line))
		rc = rbln_error_set(err, -ENOMEM, "out of memory");
	return rc;
}
