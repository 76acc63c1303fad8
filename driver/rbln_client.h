/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rbln_client.h - what one open file (a DRM client) uses and may use.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */
#ifndef RBLN_CLIENT_H
#define RBLN_CLIENT_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/types.h>

struct drm_file;
struct drm_printer;

/**
 * struct rbln_client - usage of one open file, kept while its jobs live
 * @refcount: the file's reference plus one per queue
 * @busy_ns: execution time of the client's jobs that ended; protected by
 *	the device's &rbln_device.run_lock, so that fdinfo sees a job's time
 *	either here or as a running job, never twice or not at all
 * @jobs: jobs submitted and not yet ended, at most rbln_params.max_jobs
 */
struct rbln_client {
	struct kref refcount;
	u64 busy_ns;
	atomic_t jobs;
};

struct rbln_client *rbln_client_create(void);
void rbln_client_get(struct rbln_client *client);
void rbln_client_put(struct rbln_client *client);
int rbln_client_job_begin(struct rbln_client *client);
void rbln_client_job_end(struct rbln_client *client);
void rbln_client_show_fdinfo(struct drm_printer *p, struct drm_file *file);

#endif /* RBLN_CLIENT_H */
