// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_budget.c - how much host memory rbln.ko may hold for its clients.
 *
 * Modeled device memory, host buffers and the kernel copies of command
 * streams in flight are all host RAM, and none of it shows in any
 * process's RSS: when a driver holds more than the host has, the OOM
 * killer picks an innocent process. So the driver holds at most a budget
 * derived at load from what the host can back, and the device capacities
 * (mem_size) are split from that budget so that their sum never exceeds
 * it.
 *
 * The budget is half of RAM, as TTM allows GPU buffers by default. Swap
 * does not count: buffer pages stay pinned while the driver maps them (the
 * engines' kernel mappings are kept for the life of a buffer), so they can
 * never be swapped out.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/atomic.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/printk.h>
#include <linux/sizes.h>

#include "rbln_budget.h"
#include "rbln_drv.h"

/* The product's device memory (ATOM: 16 GiB), the most a default gives. */
#define RBLN_DEFAULT_MEM_SIZE	(16ULL << 30)
/* Share of RAM the driver may hold: 1/RBLN_BUDGET_DIVISOR. */
#define RBLN_BUDGET_DIVISOR	2

static u64 rbln_host_budget;
static atomic64_t rbln_host_used = ATOMIC64_INIT(0);

/**
 * rbln_charge_bounded() - add to a usage counter unless it passes a limit
 * @used: the counter
 * @limit: the most it may reach
 * @size: bytes to add
 *
 * Return: 0, or -ENOMEM when @used + @size would exceed @limit.
 */
int rbln_charge_bounded(atomic64_t *used, u64 limit, u64 size)
{
	s64 old = atomic64_read(used);

	do {
		if (size > limit || (u64)old > limit - size)
			return -ENOMEM;
	} while (!atomic64_try_cmpxchg(used, &old, old + size));
	return 0;
}

/**
 * rbln_budget_init() - derive the host budget and settle mem_size
 *
 * Called once at load, after the parameters were checked. Without an
 * explicit mem_size every device gets min(16 GiB, budget / num_devices),
 * rounded down to MiB; an explicit one is honoured up to that share and
 * capped above it, with a message that names both values.
 *
 * Return: 0, or -ENOMEM when the share of a device is below 1 MiB.
 */
int rbln_budget_init(void)
{
	u64 ram = (u64)totalram_pages() << PAGE_SHIFT;
	unsigned int n = rbln_params.num_devices;
	u64 share;

	rbln_host_budget = div_u64(ram, RBLN_BUDGET_DIVISOR);
	share = round_down(div_u64(rbln_host_budget, n), SZ_1M);
	if (!share) {
		pr_err("rbln: %llu MiB of RAM is too little for %u devices of 1 MiB each\n",
		       ram >> 20, n);
		return -ENOMEM;
	}

	if (!rbln_params.mem_size) {
		rbln_params.mem_size = min(share, RBLN_DEFAULT_MEM_SIZE);
	} else if (rbln_params.mem_size > share) {
		pr_warn("rbln: mem_size=%llu MiB for each of %u devices is more than the host can back (half of %llu MiB RAM); capped to %llu MiB\n",
			rbln_params.mem_size >> 20, n, ram >> 20, share >> 20);
		rbln_params.mem_size = share;
	}
	return 0;
}

/**
 * rbln_budget_total() - the host budget in bytes
 *
 * Return: what rbln_budget_init() derived.
 */
u64 rbln_budget_total(void)
{
	return rbln_host_budget;
}

/**
 * rbln_budget_used() - bytes charged to the host budget now
 *
 * Return: the sum of all charges not yet given back; zero when no client
 * holds anything, which the unload leak check relies on.
 */
u64 rbln_budget_used(void)
{
	return atomic64_read(&rbln_host_used);
}

/**
 * rbln_budget_charge() - reserve host memory for a client
 * @size: bytes
 *
 * Return: 0, or -ENOMEM when the budget would be exceeded.
 */
int rbln_budget_charge(u64 size)
{
	return rbln_charge_bounded(&rbln_host_used, rbln_host_budget, size);
}

/**
 * rbln_budget_uncharge() - give back host memory
 * @size: bytes charged before
 */
void rbln_budget_uncharge(u64 size)
{
	atomic64_sub(size, &rbln_host_used);
}
