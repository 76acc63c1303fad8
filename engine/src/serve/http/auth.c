// SPDX-License-Identifier: MIT
/* --api-key's check, shared by the HTTP and gRPC transports. */
#include "auth.h"

#include <string.h>
#include <strings.h>

bool serve_bearer_matches(const char *value, size_t len, const char *key)
{
	size_t lk = strlen(key), i;
	unsigned char diff;

	if (len < 7 || strncasecmp(value, "Bearer ", 7))
		return false;
	for (value += 7, len -= 7; len && *value == ' '; value++, len--)
		;
	diff = len != lk;
	for (i = 0; i < lk; i++)
		diff |= (unsigned char)key[i] ^ (unsigned char)(i < len ? value[i] : 0);
	return !diff;
}
