// SPDX-License-Identifier: MIT
/*
 * Non-finite weights: a NaN or an infinity in a checkpoint compiles and
 * runs without complaint but makes every logit NaN (token 0 forever), so
 * the compiler refuses such a checkpoint and names the tensor.
 */
#include "rbln_weights.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Exponent bits of each dtype: all ones means NaN or infinity. */
static bool non_finite_at(const unsigned char *p, enum rbln_dtype dt, size_t i, bool *nan)
{
	uint32_t x;
	uint16_t h;

	switch (dt) {
	case RBLN_TENSOR_F32:
		memcpy(&x, p + 4 * i, 4);
		*nan = (x & 0x007fffffu) != 0;
		return (x & 0x7f800000u) == 0x7f800000u;
	case RBLN_TENSOR_BF16:
		memcpy(&h, p + 2 * i, 2);
		*nan = (h & 0x007fu) != 0;
		return (h & 0x7f80u) == 0x7f80u;
	case RBLN_TENSOR_F16:
		memcpy(&h, p + 2 * i, 2);
		*nan = (h & 0x03ffu) != 0;
		return (h & 0x7c00u) == 0x7c00u;
	case RBLN_TENSOR_UNKNOWN:
		break;
	}
	return false;
}

static int check_tensor(const struct rbln_tensor *t, struct rbln_error *err)
{
	size_t es = rbln_dtype_size(t->dtype), n = es ? t->nbytes / es : 0, i, bad = 0, first = 0;
	bool nan = false, first_nan = false;

	for (i = 0; i < n; i++) {
		if (non_finite_at(t->data, t->dtype, i, &nan)) {
			if (!bad++) {
				first = i;
				first_nan = nan;
			}
		}
	}
	if (!bad)
		return 0;
	return rbln_error_set(err, -EINVAL,
			      "%s: tensor '%s' holds %zu non-finite value%s (the first, a %s, "
			      "at element %zu): the checkpoint is damaged and would generate "
			      "garbage", t->file, t->name, bad, bad == 1 ? "" : "s",
			      first_nan ? "NaN" : "infinity", first);
}

int rbln_weights_check_finite(const struct rbln_weights *w, struct rbln_error *err)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < rbln_weights_count(w) && !rc; i++)
		rc = check_tensor(rbln_weights_at(w, i), err);
	return rc;
}
