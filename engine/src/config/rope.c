// SPDX-License-Identifier: MIT
/*
 * Rotary-embedding inverse frequencies.  The arithmetic is float32 and in
 * the order of transformers' _compute_default_rope_parameters and
 * _compute_llama3_parameters, so the device kernels start from the same
 * numbers the reference logits were computed with.
 */
#include "rbln_config.h"

#include <errno.h>
#include <math.h>

int rbln_rope_inv_freq(const struct rbln_rope_config *rope, int64_t head_dim, float *inv_freq,
		       struct rbln_error *err)
{
	const float two_pi = (float)(2.0 * M_PI);
	int64_t i, half = head_dim / 2;

	if (head_dim < 2 || head_dim % 2)
		return rbln_error_set(err, -EINVAL, "rope: head_dim %lld must be even and >= 2",
				      (long long)head_dim);
	for (i = 0; i < half; i++) {
		float exponent = (float)(2 * i) / (float)head_dim;

		inv_freq[i] = 1.0f / powf((float)rope->theta, exponent);
	}
	if (rope->type == RBLN_ROPE_LINEAR) {
		for (i = 0; i < half; i++)
			inv_freq[i] /= (float)rope->factor;
		return 0;
	}
	if (rope->type != RBLN_ROPE_LLAMA3)
		return 0;

	{
		float factor = (float)rope->factor;
		float low = (float)rope->low_freq_factor;
		float old_ctx = (float)rope->original_max_position_embeddings;
		float low_freq_wavelen = (float)(rope->original_max_position_embeddings /
						 rope->low_freq_factor);
		float high_freq_wavelen = (float)(rope->original_max_position_embeddings /
						  rope->high_freq_factor);
		float span = (float)(rope->high_freq_factor - rope->low_freq_factor);

		for (i = 0; i < half; i++) {
			float f = inv_freq[i];
			float wavelen = two_pi / f;
			/* Long wavelengths (low frequencies) are slowed by factor. */
			float scaled = wavelen > low_freq_wavelen ? f / factor : f;

			if (!(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen)) {
				/* The band in between blends the two smoothly. */
				float smooth = (old_ctx / wavelen - low) / span;

				scaled = (1.0f - smooth) * scaled / factor + smooth * scaled;
			}
			inv_freq[i] = scaled;
		}
	}
	return 0;
}
