// SPDX-License-Identifier: MIT
#include "rbln_dtype.h"

const char *rbln_dtype_name(enum rbln_dtype dt)
{
	switch (dt) {
	case RBLN_TENSOR_BF16: return "BF16";
	case RBLN_TENSOR_F16: return "F16";
	case RBLN_TENSOR_F32: return "F32";
	case RBLN_TENSOR_UNKNOWN: break;
	}
	return "unknown";
}

size_t rbln_dtype_size(enum rbln_dtype dt)
{
	switch (dt) {
	case RBLN_TENSOR_BF16: return 2;
	case RBLN_TENSOR_F16: return 2;
	case RBLN_TENSOR_F32: return 4;
	case RBLN_TENSOR_UNKNOWN: break;
	}
	return 0;
}
