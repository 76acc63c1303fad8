// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_client.c - per-client accounting: the jobs one open file has in
 * flight (bounded by the max_jobs parameter, so that a client gets -EBUSY
 * instead of growing kernel memory without end), the time its jobs spent
 * executing, and the DRM client usage keys of its fdinfo.
 *
 * The accounting lives in its own reference-counted object because jobs
 * outlive the file that submitted them: a closed file's queues drain, and
 * their jobs still end and count.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/slab.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>

#include "rbln_client.h"
#include "rbln_device.h"
#include "rbln_drv.h"
#include "rbln_job.h"
#include "rbln_queue.h"

/* drm-engine-<name> key of the neural engines (Documentation/driver.md). */
#define RBLN_ENGINE_KEY		"npu"

/**
 * rbln_client_create() - accounting for a new open file
 *
 * Return: the client with one reference, or NULL.
 */
struct rbln_client *rbln_client_create(void)
{
	struct rbln_client *client;

	client = kzalloc(sizeof(*client), GFP_KERNEL_ACCOUNT);
	if (client)
		kref_init(&client->refcount);
	return client;
}

/**
 * rbln_client_get() - take a reference
 * @client: the client
 */
void rbln_client_get(struct rbln_client *client)
{
	kref_get(&client->refcount);
}

static void rbln_client_release(struct kref *kref)
{
	kfree(container_of(kref, struct rbln_client, refcount));
}

/**
 * rbln_client_put() - drop a reference
 * @client: the client, may be NULL
 */
void rbln_client_put(struct rbln_client *client)
{
	if (client)
		kref_put(&client->refcount, rbln_client_release);
}

/**
 * rbln_client_job_begin() - count a new job in flight
 * @client: the submitting client
 *
 * Return: 0, or -EBUSY when the client has rbln_params.max_jobs jobs in
 * flight already.
 */
int rbln_client_job_begin(struct rbln_client *client)
{
	if (atomic_inc_return(&client->jobs) > rbln_params.max_jobs) {
		atomic_dec(&client->jobs);
		return -EBUSY;
	}
	return 0;
}

/**
 * rbln_client_job_end() - a job counted by rbln_client_job_begin() ended
 * @client: its client
 */
void rbln_client_job_end(struct rbln_client *client)
{
	atomic_dec(&client->jobs);
}

/*
 * Busy time of the client on its device: the jobs that ended plus the
 * running part of those executing now. Jobs of one client run on several
 * hardware contexts at once, so this grows up to drm-engine-capacity times
 * faster than the clock.
 */
static u64 rbln_client_busy_ns(struct rbln_device *rdev,
			       struct rbln_client *client)
{
	u64 now = ktime_get_ns();
	struct rbln_job *job;
	u64 busy;

	spin_lock(&rdev->run_lock);
	busy = client->busy_ns;
	list_for_each_entry(job, &rdev->running, link) {
		if (job->queue->client == client && job->started &&
		    now > job->start_ns)
			busy += now - job->start_ns;
	}
	spin_unlock(&rdev->run_lock);
	return busy;
}

/**
 * rbln_client_show_fdinfo() - &drm_driver.show_fdinfo
 * @p: where to print
 * @file: the DRM file
 *
 * The DRM core has printed drm-driver and drm-client-id. Memory is the
 * standard drm-total/shared/active/resident/purgeable-memory set of every
 * buffer the file has a handle of (device and host buffers alike, all host
 * RAM); the engines are one group, "npu", of hw_queues hardware contexts.
 */
void rbln_client_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct rbln_file *rfile = file->driver_priv;

	drm_show_memory_stats(p, file);
	drm_printf(p, "drm-engine-" RBLN_ENGINE_KEY ":\t%llu ns\n",
		   rbln_client_busy_ns(rfile->rdev, rfile->client));
	drm_printf(p, "drm-engine-capacity-" RBLN_ENGINE_KEY ":\t%u\n",
		   rbln_params.hw_queues);
}
