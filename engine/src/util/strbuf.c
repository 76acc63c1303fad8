// SPDX-License-Identifier: MIT
#include "strbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rbln_strbuf_reserve(struct rbln_strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > SIZE_MAX - sb->len - 1)
		return -ENOMEM;
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return 0;
	cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = realloc(sb->data, cap);
	if (!p)
		return -ENOMEM;
	sb->data = p;
	sb->cap = cap;
	return 0;
}

int rbln_strbuf_append(struct rbln_strbuf *sb, const void *bytes, size_t n)
{
	int rc = rbln_strbuf_reserve(sb, n);

	if (rc)
		return rc;
	if (n)
		memcpy(sb->data + sb->len, bytes, n);
	sb->len += n;
	sb->data[sb->len] = '\0';
	return 0;
}

int rbln_strbuf_append_str(struct rbln_strbuf *sb, const char *s)
{
	return rbln_strbuf_append(sb, s, strlen(s));
}

int rbln_strbuf_append_char(struct rbln_strbuf *sb, char c)
{
	return rbln_strbuf_append(sb, &c, 1);
}

int rbln_strbuf_appendf(struct rbln_strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	rc = rbln_strbuf_reserve(sb, (size_t)n);
	if (rc)
		return rc;
	va_start(ap, fmt);
	vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
	return 0;
}

void rbln_strbuf_consume(struct rbln_strbuf *sb, size_t n)
{
	if (n >= sb->len) {
		rbln_strbuf_truncate(sb, 0);
		return;
	}
	memmove(sb->data, sb->data + n, sb->len - n);
	sb->len -= n;
	sb->data[sb->len] = '\0';
}

void rbln_strbuf_truncate(struct rbln_strbuf *sb, size_t len)
{
	if (len >= sb->len)
		return;
	sb->len = len;
	sb->data[len] = '\0';
}

char *rbln_strbuf_steal(struct rbln_strbuf *sb, size_t *len)
{
	char *p;

	if (!sb->data && rbln_strbuf_reserve(sb, 0))
		return NULL;
	sb->data[sb->len] = '\0';
	p = sb->data;
	if (len)
		*len = sb->len;
	sb->data = NULL;
	sb->len = sb->cap = 0;
	return p;
}

void rbln_strbuf_free(struct rbln_strbuf *sb)
{
	free(sb->data);
	sb->data = NULL;
	sb->len = sb->cap = 0;
}
