// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the safetensors header parser on arbitrary bytes.  A
 * file it accepts must describe only bytes inside the buffer, which the
 * loop below reads in full (AddressSanitizer reports any escape).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rbln_safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rbln_error err = { 0 };
	struct rbln_safetensors *st;
	volatile unsigned sum = 0;
	/* A private copy, so a read past the input is a heap overflow. */
	uint8_t *copy = malloc(size ? size : 1);
	size_t i, j;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (rbln_safetensors_parse(copy, size, "fuzz.safetensors", &st, &err) == 0) {
		for (i = 0; i < rbln_safetensors_count(st); i++) {
			const struct rbln_tensor *t = rbln_safetensors_at(st, i);

			if (rbln_safetensors_find(st, t->name) != t)
				abort();	/* the name index must agree */
			for (j = 0; j < t->nbytes; j++)
				sum += ((const uint8_t *)t->data)[j];
		}
		rbln_safetensors_close(st);
		(void)sum;
	} else if (!err.msg[0]) {
		abort();	/* every rejection explains itself */
	}
	free(copy);
	return 0;
}
