// SPDX-License-Identifier: MIT
/*
 * Protocol-buffer text format parser (see pbtxt.h).  A hand-written lexer
 * and recursive-descent parser: protobuf's own parser is C++ and needs the
 * schema compiled in, and Triton's configs use a small, stable subset.
 * Every error names FILE:LINE, because the reader is editing that file.
 */
#include "pbtxt.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"
#include "util/utf8.h"
#include "util/text.h"

/* Real configs nest 4 levels; the bound keeps hostile input off the stack. */
#define PBTXT_MAX_DEPTH 64

enum tok_type {
	T_EOF,
	T_IDENT,
	T_NUMBER,
	T_STRING,
	T_PUNCT,
};

struct lexer {
	const char *s;
	size_t len;
	size_t pos;
	int line;
	const char *name;
	struct rbln_error *err;
	/* current token */
	enum tok_type type;
	char punct;
	int tok_line;
	struct rbln_strbuf text;	/* identifier, number literal or decoded string */
};

static int lex_error(struct lexer *lx, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int lex_error(struct lexer *lx, int line, const char *fmt, ...)
{
	char msg[RBLN_ERROR_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return rbln_error_set(lx->err, -EINVAL, "%s:%d: %s", lx->name, line, msg);
}

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Curly quotes arrive when a config is copied from a typeset web page. */
static const char *curly_quote(const char *s, size_t n)
{
	if (n < 3 || (unsigned char)s[0] != 0xE2 || (unsigned char)s[1] != 0x80)
		return NULL;
	switch ((unsigned char)s[2]) {
	case 0x9C: return "\xE2\x80\x9C (U+201C)";
	case 0x9D: return "\xE2\x80\x9D (U+201D)";
	case 0x98: return "\xE2\x80\x98 (U+2018)";
	case 0x99: return "\xE2\x80\x99 (U+2019)";
	}
	return NULL;
}

static void skip_space(struct lexer *lx)
{
	while (lx->pos < lx->len) {
		char c = lx->s[lx->pos];

		if (c == '\n') {
			lx->line++;
			lx->pos++;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			lx->pos++;
		} else if (c == '#') {
			while (lx->pos < lx->len && lx->s[lx->pos] != '\n')
				lx->pos++;
		} else {
			break;
		}
	}
}

static int lex_escape(struct lexer *lx)
{
	char c, out;
	int v, i;

	if (lx->pos >= lx->len)
		return lex_error(lx, lx->line, "unterminated string");
	c = lx->s[lx->pos++];
	switch (c) {
	case 'n': out = '\n'; break;
	case 't': out = '\t'; break;
	case 'r': out = '\r'; break;
	case 'a': out = '\a'; break;
	case 'b': out = '\b'; break;
	case 'f': out = '\f'; break;
	case 'v': out = '\v'; break;
	case '\\': case '\'': case '"': case '?': out = c; break;
	case 'x': case 'X':
		v = 0;
		for (i = 0; i < 2 && lx->pos < lx->len && rbln_hex_digit(lx->s[lx->pos]) >= 0; i++)
			v = v * 16 + rbln_hex_digit(lx->s[lx->pos++]);
		if (!i)
			return lex_error(lx, lx->line, "\\x escape without hex digits");
		out = (char)v;
		break;
	case 'u': case 'U': {
		int n = c == 'u' ? 4 : 8;
		uint32_t cp = 0;
		char buf[4];
		size_t k;

		for (i = 0; i < n; i++) {
			if (lx->pos >= lx->len || rbln_hex_digit(lx->s[lx->pos]) < 0)
				return lex_error(lx, lx->line, "\\%c escape needs %d hex digits", c, n);
			cp = cp * 16 + (uint32_t)rbln_hex_digit(lx->s[lx->pos++]);
		}
		k = rbln_utf8_encode(cp, buf);
		if (!k)
			return lex_error(lx, lx->line, "\\%c escape is not a Unicode scalar value",
					 c);
		return rbln_strbuf_append(&lx->text, buf, k) ? -ENOMEM : 0;
	}
	default:
		if (c >= '0' && c <= '7') {
			v = c - '0';
			for (i = 0; i < 2 && lx->pos < lx->len && lx->s[lx->pos] >= '0' &&
				    lx->s[lx->pos] <= '7'; i++)
				v = v * 8 + (lx->s[lx->pos++] - '0');
			if (v > 255)
				return lex_error(lx, lx->line, "octal escape out of range");
			out = (char)v;
			break;
		}
		return lex_error(lx, lx->line, "unknown escape '\\%c' in string", c);
	}
	return rbln_strbuf_append_char(&lx->text, out) ? -ENOMEM : 0;
}

static int lex_string(struct lexer *lx)
{
	char q = lx->s[lx->pos++];
	int rc;

	while (1) {
		char c;

		if (lx->pos >= lx->len || lx->s[lx->pos] == '\n')
			return lex_error(lx, lx->tok_line, "unterminated string (a string "
					 "ends on the line it starts)");
		c = lx->s[lx->pos++];
		if (c == q)
			return 0;
		if (c == '\\') {
			rc = lex_escape(lx);
			if (rc)
				return rc;
			continue;
		}
		if (rbln_strbuf_append_char(&lx->text, c))
			return -ENOMEM;
	}
}

/* Reads the next token into lx; 0 or an error. */
static int lex_next(struct lexer *lx)
{
	char c;
	const char *cq;

	rbln_strbuf_truncate(&lx->text, 0);
	skip_space(lx);
	lx->tok_line = lx->line;
	if (lx->pos >= lx->len) {
		lx->type = T_EOF;
		return 0;
	}
	c = lx->s[lx->pos];
	if (c == '"' || c == '\'') {
		lx->type = T_STRING;
		return lex_string(lx);
	}
	if (is_ident_start(c)) {
		size_t start = lx->pos;

		while (lx->pos < lx->len && is_ident_char(lx->s[lx->pos]))
			lx->pos++;
		lx->type = T_IDENT;
		return rbln_strbuf_append(&lx->text, lx->s + start, lx->pos - start) ? -ENOMEM : 0;
	}
	if (is_digit(c) || c == '.' ||
	    ((c == '-' || c == '+') && lx->pos + 1 < lx->len &&
	     (is_digit(lx->s[lx->pos + 1]) || lx->s[lx->pos + 1] == '.' ||
	      is_ident_start(lx->s[lx->pos + 1])))) {
		size_t start = lx->pos;

		lx->pos++;
		/* Accept the literal's whole run ("1e-5", "0x1F", "-inf", "1.5f");
		 * the interpreter decides whether it is a valid number. */
		while (lx->pos < lx->len) {
			char d = lx->s[lx->pos];

			if (is_ident_char(d) || d == '.' ||
			    ((d == '-' || d == '+') &&
			     (lx->s[lx->pos - 1] == 'e' || lx->s[lx->pos - 1] == 'E')))
				lx->pos++;
			else
				break;
		}
		lx->type = T_NUMBER;
		return rbln_strbuf_append(&lx->text, lx->s + start, lx->pos - start) ? -ENOMEM : 0;
	}
	if (strchr(":{}<>[],;", c)) {
		lx->type = T_PUNCT;
		lx->punct = c;
		lx->pos++;
		return 0;
	}
	cq = curly_quote(lx->s + lx->pos, lx->len - lx->pos);
	if (cq)
		return lex_error(lx, lx->line, "curly quote %s: strings need straight quotes "
				 "(\" or ')", cq);
	if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f)
		return lex_error(lx, lx->line, "unexpected character '%c'", c);
	return lex_error(lx, lx->line, "unexpected byte 0x%02x", (unsigned char)c);
}

static const char *tok_desc(const struct lexer *lx, char *buf, size_t n)
{
	switch (lx->type) {
	case T_EOF: return "end of file";
	case T_STRING: return "a string";
	case T_NUMBER: snprintf(buf, n, "number '%.40s'", lx->text.data); return buf;
	case T_IDENT: snprintf(buf, n, "'%.40s'", lx->text.data); return buf;
	case T_PUNCT: snprintf(buf, n, "'%c'", lx->punct); return buf;
	}
	return "?";
}

static bool is_punct(const struct lexer *lx, char c)
{
	return lx->type == T_PUNCT && lx->punct == c;
}

static void value_free(struct pbtxt_value *v);

static void msg_free(struct pbtxt_msg *m)
{
	size_t i, j;

	if (!m)
		return;
	for (i = 0; i < m->n_fields; i++) {
		for (j = 0; j < m->fields[i].n_values; j++)
			value_free(&m->fields[i].values[j]);
		free(m->fields[i].values);
		free(m->fields[i].name);
	}
	free(m->fields);
	free(m);
}

static void value_free(struct pbtxt_value *v)
{
	free(v->str);
	msg_free(v->msg);
}

void serve_pbtxt_free(struct pbtxt_msg *m)
{
	msg_free(m);
}

static int parse_body(struct lexer *lx, struct pbtxt_msg *m, char close, int depth);

static int push_value(struct pbtxt_field *f, struct pbtxt_value *v)
{
	struct pbtxt_value *nv = realloc(f->values, (f->n_values + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	f->values = nv;
	f->values[f->n_values++] = *v;
	return 0;
}

/* Parses a message whose opening brace is the current token. */
static int parse_message_value(struct lexer *lx, struct pbtxt_value *v, int depth)
{
	char close = lx->punct == '{' ? '}' : '>';
	int rc;

	if (depth >= PBTXT_MAX_DEPTH)
		return lex_error(lx, lx->tok_line, "messages nested more than %d deep",
				 PBTXT_MAX_DEPTH);
	v->kind = PBTXT_MESSAGE;
	v->line = lx->tok_line;
	v->msg = calloc(1, sizeof(*v->msg));
	if (!v->msg)
		return -ENOMEM;
	v->msg->line = lx->tok_line;
	rc = lex_next(lx);
	if (rc)
		return rc;
	return parse_body(lx, v->msg, close, depth + 1);
}

/* Parses a scalar (the current token); adjacent strings concatenate. */
static int parse_scalar(struct lexer *lx, struct pbtxt_value *v, const char *field)
{
	char buf[64];
	int rc;

	v->line = lx->tok_line;
	switch (lx->type) {
	case T_STRING: {
		struct rbln_strbuf sb = { 0 };

		do {
			if (rbln_strbuf_append(&sb, lx->text.data ? lx->text.data : "", lx->text.len)) {
				rbln_strbuf_free(&sb);
				return -ENOMEM;
			}
			rc = lex_next(lx);
			if (rc) {
				rbln_strbuf_free(&sb);
				return rc;
			}
		} while (lx->type == T_STRING);
		v->kind = PBTXT_STRING;
		v->str = rbln_strbuf_steal(&sb, &v->len);
		return v->str ? 0 : -ENOMEM;
	}
	case T_NUMBER:
	case T_IDENT:
		v->kind = lx->type == T_NUMBER ? PBTXT_NUMBER : PBTXT_IDENT;
		v->str = rbln_strbuf_steal(&lx->text, &v->len);
		if (!v->str)
			return -ENOMEM;
		return lex_next(lx);
	default:
		return lex_error(lx, lx->tok_line, "expected a value for field '%s', got %s",
				 field, tok_desc(lx, buf, sizeof(buf)));
	}
}

static int parse_list(struct lexer *lx, struct pbtxt_field *f, int depth)
{
	char buf[64];
	int rc;

	f->list = true;
	rc = lex_next(lx);	/* past '[' */
	if (rc)
		return rc;
	if (is_punct(lx, ']'))
		return lex_next(lx);
	while (1) {
		struct pbtxt_value v = { 0 };

		if (is_punct(lx, '{') || is_punct(lx, '<')) {
			rc = parse_message_value(lx, &v, depth);
		} else {
			rc = parse_scalar(lx, &v, f->name);
		}
		if (rc || (rc = push_value(f, &v))) {
			value_free(&v);
			return rc;
		}
		if (is_punct(lx, ',')) {
			rc = lex_next(lx);
			if (rc)
				return rc;
			continue;
		}
		if (is_punct(lx, ']'))
			return lex_next(lx);
		return lex_error(lx, lx->tok_line, "expected ',' or ']' in the list of field "
				 "'%s' (opened on line %d), got %s", f->name, f->line,
				 tok_desc(lx, buf, sizeof(buf)));
	}
}

static int parse_field(struct lexer *lx, struct pbtxt_msg *m, int depth)
{
	struct pbtxt_field *nf, *f;
	char buf[64];
	bool colon = false;
	int rc;

	if (lx->type != T_IDENT)
		return lex_error(lx, lx->tok_line, "expected a field name, got %s",
				 tok_desc(lx, buf, sizeof(buf)));
	nf = realloc(m->fields, (m->n_fields + 1) * sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	m->fields = nf;
	f = &m->fields[m->n_fields++];
	memset(f, 0, sizeof(*f));
	f->line = lx->tok_line;
	f->name = rbln_strbuf_steal(&lx->text, NULL);
	if (!f->name)
		return -ENOMEM;
	rc = lex_next(lx);
	if (rc)
		return rc;
	if (is_punct(lx, ':')) {
		colon = true;
		rc = lex_next(lx);
		if (rc)
			return rc;
	}
	if (is_punct(lx, '[')) {
		rc = parse_list(lx, f, depth);
	} else if (is_punct(lx, '{') || is_punct(lx, '<')) {
		struct pbtxt_value v = { 0 };

		rc = parse_message_value(lx, &v, depth);
		if (rc || (rc = push_value(f, &v)))
			value_free(&v);
	} else if (colon) {
		struct pbtxt_value v = { 0 };

		rc = parse_scalar(lx, &v, f->name);
		if (rc || (rc = push_value(f, &v)))
			value_free(&v);
	} else {
		return lex_error(lx, lx->tok_line, "expected ':' or '{' after field name '%s', "
				 "got %s", f->name, tok_desc(lx, buf, sizeof(buf)));
	}
	if (rc)
		return rc;
	if (is_punct(lx, ',') || is_punct(lx, ';'))
		rc = lex_next(lx);
	return rc;
}

static int parse_body(struct lexer *lx, struct pbtxt_msg *m, char close, int depth)
{
	char buf[64];
	int rc;

	while (1) {
		if (close && is_punct(lx, close))
			return lex_next(lx);
		if (lx->type == T_EOF) {
			if (!close)
				return 0;
			return lex_error(lx, lx->tok_line, "end of file inside the message opened "
					 "on line %d (missing '%c')", m->line, close);
		}
		if (lx->type == T_PUNCT && (lx->punct == '}' || lx->punct == '>'))
			return lex_error(lx, lx->tok_line, "unexpected %s",
					 tok_desc(lx, buf, sizeof(buf)));
		rc = parse_field(lx, m, depth);
		if (rc)
			return rc;
	}
}

int serve_pbtxt_parse(const char *text, size_t len, const char *name, struct pbtxt_msg **out,
		struct rbln_error *err)
{
	struct lexer lx = { .s = text, .len = len, .line = 1, .name = name, .err = err };
	struct pbtxt_msg *m = calloc(1, sizeof(*m));
	int rc;

	*out = NULL;
	if (!m)
		return rbln_error_set(err, -ENOMEM, "%s: out of memory", name);
	m->line = 1;
	rc = lex_next(&lx);
	if (!rc)
		rc = parse_body(&lx, m, 0, 0);
	rbln_strbuf_free(&lx.text);
	if (rc) {
		if (rc == -ENOMEM)
			rbln_error_set(err, rc, "%s: out of memory", name);
		serve_pbtxt_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

bool serve_pbtxt_value_int(const struct pbtxt_value *v, int64_t *out)
{
	const char *s;
	bool neg = false;
	uint64_t acc = 0, lim;
	int base = 10;

	if (v->kind != PBTXT_NUMBER)
		return false;
	s = v->str;
	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; *s; s++) {
		int d = rbln_hex_digit(*s);

		if (d < 0 || d >= base)
			return false;
		if (acc > (lim - (uint64_t)d) / (uint64_t)base)
			return false;
		acc = acc * (uint64_t)base + (uint64_t)d;
	}
	*out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
	return true;
}

static bool ieq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a, y = *b;

		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (char)(y - 'A' + 'a');
		if (x != y)
			return false;
	}
	return !*a && !*b;
}

bool serve_pbtxt_value_double(const struct pbtxt_value *v, double *out)
{
	const char *s = v->str;
	char *end;
	int64_t i;
	size_t n;

	if (v->kind != PBTXT_NUMBER && v->kind != PBTXT_IDENT)
		return false;
	{
		bool neg = *s == '-';
		const char *w = (*s == '-' || *s == '+') ? s + 1 : s;

		if (ieq(w, "inf") || ieq(w, "infinity")) {
			*out = neg ? -INFINITY : INFINITY;
			return true;
		}
		if (ieq(w, "nan")) {
			*out = NAN;
			return true;
		}
	}
	if (v->kind != PBTXT_NUMBER)
		return false;
	if (serve_pbtxt_value_int(v, &i)) {
		*out = (double)i;
		return true;
	}
	n = strlen(s);
	/* "1.5f" is valid in the text format: a float suffix. */
	if (n > 1 && (s[n - 1] == 'f' || s[n - 1] == 'F') && s[n - 2] != 'x' && s[n - 2] != 'X') {
		char buf[64];

		if (n - 1 >= sizeof(buf))
			return false;
		memcpy(buf, s, n - 1);
		buf[n - 1] = '\0';
		*out = strtod(buf, &end);
		return end != buf && !*end;
	}
	if (strchr(s, 'x') || strchr(s, 'X'))
		return false;	/* strtod would take hex floats; protobuf does not */
	*out = strtod(s, &end);
	return end != s && !*end;
}

bool serve_pbtxt_value_bool(const struct pbtxt_value *v, bool *out)
{
	if (v->kind == PBTXT_IDENT) {
		if (!strcmp(v->str, "true") || !strcmp(v->str, "True") || !strcmp(v->str, "t")) {
			*out = true;
			return true;
		}
		if (!strcmp(v->str, "false") || !strcmp(v->str, "False") || !strcmp(v->str, "f")) {
			*out = false;
			return true;
		}
		return false;
	}
	if (v->kind == PBTXT_NUMBER && (!strcmp(v->str, "0") || !strcmp(v->str, "1"))) {
		*out = v->str[0] == '1';
		return true;
	}
	return false;
}

const char *serve_pbtxt_kind_name(enum pbtxt_kind k)
{
	switch (k) {
	case PBTXT_STRING: return "a string";
	case PBTXT_NUMBER: return "a number";
	case PBTXT_IDENT: return "an identifier";
	case PBTXT_MESSAGE: return "a message";
	}
	return "?";
}
