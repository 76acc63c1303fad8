/* SPDX-License-Identifier: MIT */
/* A growable, always NUL-terminated byte buffer (text may contain NULs). */
#ifndef RBLN_STRBUF_H
#define RBLN_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct rbln_strbuf {
	char *data;	/* NULL until the first append */
	size_t len;
	size_t cap;
};

int rbln_strbuf_reserve(struct rbln_strbuf *sb, size_t extra);
int rbln_strbuf_append(struct rbln_strbuf *sb, const void *bytes, size_t n);
int rbln_strbuf_append_str(struct rbln_strbuf *sb, const char *s);
int rbln_strbuf_append_char(struct rbln_strbuf *sb, char c);
int rbln_strbuf_appendf(struct rbln_strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Drops the first n bytes. */
void rbln_strbuf_consume(struct rbln_strbuf *sb, size_t n);
void rbln_strbuf_truncate(struct rbln_strbuf *sb, size_t len);
/* Hands the buffer to the caller (never NULL on success: "" when empty). */
char *rbln_strbuf_steal(struct rbln_strbuf *sb, size_t *len);
void rbln_strbuf_free(struct rbln_strbuf *sb);

#endif
