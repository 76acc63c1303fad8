/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rbln_engine.h - neural engines: the kthreads that execute command streams
 * with the device model, and the model's environment in the kernel.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */
#ifndef RBLN_ENGINE_H
#define RBLN_ENGINE_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

struct rbln_device;
struct rbln_job;
struct task_struct;

/**
 * struct rbln_engines - the engines of one device
 * @count: number of engine kthreads
 * @tasks: the kthreads, @count entries
 * @lock: protects @work
 * @work: parts of commands waiting for an engine (&struct rbln_par)
 * @wake: engines sleep here while @work is empty
 * @done: callers of rbln_engines_parallel() wait here for their parts
 */
struct rbln_engines {
	unsigned int count;
	struct task_struct **tasks;
	spinlock_t lock; /* see above */
	struct list_head work;
	wait_queue_head_t wake;
	wait_queue_head_t done;
};

int rbln_engines_init(struct rbln_device *rdev, unsigned int count);
void rbln_engines_fini(struct rbln_device *rdev);
int rbln_engine_execute(struct rbln_job *job);

#endif /* RBLN_ENGINE_H */
