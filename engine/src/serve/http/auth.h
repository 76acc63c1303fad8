/* SPDX-License-Identifier: MIT */
/*
 * --api-key: one check for HTTP's Authorization header and gRPC's
 * "authorization" metadata, both "Bearer KEY" as vLLM's server and the
 * OpenAI and Triton clients send it.
 */
#ifndef SERVE_AUTH_H
#define SERVE_AUTH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Whether @value (@len bytes, not NUL-terminated) is "Bearer KEY" for @key
 * (the scheme in any case); compared in time that depends on the key's
 * length only, not on where they differ.
 */
bool serve_bearer_matches(const char *value, size_t len, const char *key);

#endif
