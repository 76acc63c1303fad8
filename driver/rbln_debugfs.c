// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_debugfs.c - debugfs files of a device, in
 * /sys/kernel/debug/accel/<minor>/:
 *
 *   contexts  one line per open file: pid, DRM client id, device, host and
 *             imported buffer bytes, queues, command name
 *   queues    one line per queue: client id, queue id, priority, jobs
 *             submitted, completed and failed
 *   jobs      jobs executing now: queue, job id, whether started, progress
 *             count, milliseconds since the watchdog saw progress, cancel
 *   live      what still exists: jobs and queues of the device (those of
 *             closed files too, until they drain), hardware fences and
 *             buffer objects of the whole module
 *   fault     write "hang" or "fail" to inject that fault into the next job
 *             the device runs, "none" to clear; reads the pending fault
 *   buffers   one line per buffer handle: its pages per NUMA node
 *             (rbln_debugfs_buffers.c)
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/debugfs.h>
#include <linux/idr.h>
#include <linux/ktime.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include "rbln_device.h"
#include "rbln_drv.h"
#include "rbln_gem.h"
#include "rbln_job.h"
#include "rbln_queue.h"

static void rbln_file_memory(struct drm_file *file, u64 *device, u64 *host,
			     u64 *imported)
{
	struct drm_gem_object *obj;
	int id;

	*device = 0;
	*host = 0;
	*imported = 0;
	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		if (obj->import_attach)
			*imported += obj->size;
		else if (rbln_gem_is_rbln(obj) && to_rbln_bo(obj)->charged)
			*device += obj->size;
		else
			*host += obj->size;
	}
	spin_unlock(&file->table_lock);
}

static int rbln_contexts_show(struct seq_file *m, void *unused)
{
	struct rbln_device *rdev = m->private;
	struct drm_device *dev = &rdev->drm;
	struct drm_file *file;

	seq_puts(m, "pid ctx device_mem host_mem imported_mem queues comm\n");
	mutex_lock(&dev->filelist_mutex);
	list_for_each_entry_reverse(file, &dev->filelist, lhead) {
		struct rbln_file *rfile = file->driver_priv;
		char comm[TASK_COMM_LEN] = "<unknown>";
		u64 device, host, imported;
		struct task_struct *task;
		unsigned int nqueues;
		struct pid *pid;
		pid_t nr;

		rbln_file_memory(file, &device, &host, &imported);
		mutex_lock(&rfile->lock);
		nqueues = rfile->nqueues;
		mutex_unlock(&rfile->lock);

		rcu_read_lock();
		pid = rcu_dereference(file->pid);
		nr = pid_nr(pid);
		task = pid_task(pid, PIDTYPE_TGID);
		if (task)
			strscpy(comm, task->comm, sizeof(comm));
		rcu_read_unlock();

		seq_printf(m, "%d %llu %llu %llu %llu %u %s\n", nr,
			   file->client_id, device, host, imported, nqueues,
			   comm);
	}
	mutex_unlock(&dev->filelist_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rbln_contexts);

static int rbln_queues_show(struct seq_file *m, void *unused)
{
	struct rbln_device *rdev = m->private;
	struct drm_device *dev = &rdev->drm;
	struct drm_file *file;

	seq_puts(m, "ctx queue priority submitted completed failed\n");
	mutex_lock(&dev->filelist_mutex);
	list_for_each_entry_reverse(file, &dev->filelist, lhead) {
		struct rbln_file *rfile = file->driver_priv;
		struct rbln_queue *queue;
		unsigned long id;

		mutex_lock(&rfile->lock);
		xa_for_each(&rfile->queues, id, queue) {
			u64 submitted;

			spin_lock(&queue->fence_lock);
			submitted = queue->last_job_id;
			spin_unlock(&queue->fence_lock);
			seq_printf(m, "%llu %u %u %llu %lld %lld\n",
				   file->client_id, queue->id, queue->priority,
				   submitted, atomic64_read(&queue->completed),
				   atomic64_read(&queue->failed));
		}
		mutex_unlock(&rfile->lock);
	}
	mutex_unlock(&dev->filelist_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rbln_queues);

static int rbln_jobs_show(struct seq_file *m, void *unused)
{
	struct rbln_device *rdev = m->private;
	u64 now = ktime_get_ns();
	struct rbln_job *job;

	seq_puts(m, "queue job started progress idle_ms cancel\n");
	spin_lock(&rdev->run_lock);
	list_for_each_entry(job, &rdev->running, link) {
		u64 idle = job->started ? now - job->wd_stamp : 0;

		seq_printf(m, "%u %llu %d %d %llu %d\n", job->queue->id,
			   job->job_id, job->started,
			   atomic_read(&job->progress),
			   idle / NSEC_PER_MSEC, job->cancel);
	}
	spin_unlock(&rdev->run_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rbln_jobs);

/*
 * What keeps the module loaded once no file is open: every hardware fence
 * holds a module reference until it is released, and jobs and queues hold
 * fences until they are freed. That happens after the fences signalled:
 * the scheduler frees finished jobs one per work item, in the order they
 * started, and a queue is released from a work item after its last job.
 */
static int rbln_live_show(struct seq_file *m, void *unused)
{
	struct rbln_device *rdev = m->private;

	seq_printf(m, "jobs %d\n", atomic_read(&rdev->live_jobs));
	seq_printf(m, "queues %d\n", atomic_read(&rdev->live_queues));
	seq_printf(m, "fences %d\n", rbln_fences_alive());
	seq_printf(m, "buffers %d\n", rbln_gem_live());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rbln_live);

static const char * const rbln_fault_names[] = {
	[RBLN_FAULT_NONE] = "none",
	[RBLN_FAULT_HANG] = "hang",
	[RBLN_FAULT_FAIL] = "fail",
};

static int rbln_fault_show(struct seq_file *m, void *unused)
{
	struct rbln_device *rdev = m->private;

	seq_printf(m, "%s\n", rbln_fault_names[atomic_read(&rdev->fault)]);
	return 0;
}

static int rbln_fault_open(struct inode *inode, struct file *file)
{
	return single_open(file, rbln_fault_show, inode->i_private);
}

static ssize_t rbln_fault_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *pos)
{
	struct rbln_device *rdev = file_inode(file)->i_private;
	char buf[16];
	int fault;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';

	fault = sysfs_match_string(rbln_fault_names, buf);
	if (fault < 0)
		return fault;
	atomic_set(&rdev->fault, fault);
	return len;
}

static const struct file_operations rbln_fault_fops = {
	.owner = THIS_MODULE,
	.open = rbln_fault_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = rbln_fault_write,
};

/**
 * rbln_debugfs_init() - create the device's debugfs files
 * @rdev: the device, registered
 *
 * The files go away with the DRM device's debugfs directory.
 */
void rbln_debugfs_init(struct rbln_device *rdev)
{
	struct dentry *root = rdev->drm.debugfs_root;

	if (IS_ERR_OR_NULL(root))
		return;

	debugfs_create_file("contexts", 0444, root, rdev, &rbln_contexts_fops);
	debugfs_create_file("queues", 0444, root, rdev, &rbln_queues_fops);
	debugfs_create_file("jobs", 0444, root, rdev, &rbln_jobs_fops);
	debugfs_create_file("live", 0444, root, rdev, &rbln_live_fops);
	debugfs_create_file("fault", 0600, root, rdev, &rbln_fault_fops);
	rbln_debugfs_buffers_init(rdev, root);
}
