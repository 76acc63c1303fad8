// SPDX-License-Identifier: MIT
/*
 * Time: the API takes relative timeouts, backends wait for absolute
 * CLOCK_MONOTONIC deadlines (like DRM_IOCTL_RBLN_WAIT and syncobj waits),
 * so that a wait interrupted and restarted does not wait longer in total.
 */
#include <stdint.h>
#include <time.h>

#include "npu_backend.h"

int64_t npu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t npu_deadline(int64_t timeout_ns)
{
	if (timeout_ns < 0)
		return INT64_MAX;
	int64_t now = npu_now_ns();

	return timeout_ns > INT64_MAX - now ? INT64_MAX : now + timeout_ns;
}
