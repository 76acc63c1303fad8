/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rbln_budget.h - the host memory rbln.ko may hold for its clients.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */
#ifndef RBLN_BUDGET_H
#define RBLN_BUDGET_H

#include <linux/atomic.h>
#include <linux/types.h>

int rbln_charge_bounded(atomic64_t *used, u64 limit, u64 size);
int rbln_budget_init(void);
u64 rbln_budget_total(void);
u64 rbln_budget_used(void);
int rbln_budget_charge(u64 size);
void rbln_budget_uncharge(u64 size);

#endif /* RBLN_BUDGET_H */
