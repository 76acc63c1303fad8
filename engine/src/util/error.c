// SPDX-License-Identifier: MIT
#include "rbln_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int rbln_error_set(struct rbln_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void rbln_error_prefix(struct rbln_error *err, const char *fmt, ...)
{
	char prefix[RBLN_ERROR_MSG_MAX];
	char old[RBLN_ERROR_MSG_MAX];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Concatenate by hand: the result is meant to truncate when long. */
	{
		size_t pl = strnlen(prefix, sizeof(err->msg) - 1);
		size_t ol = strnlen(old, sizeof(err->msg) - 1 - pl);

		memcpy(err->msg, prefix, pl);
		memcpy(err->msg + pl, old, ol);
		err->msg[pl + ol] = '\0';
	}
}

void rbln_error_clear(struct rbln_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}
