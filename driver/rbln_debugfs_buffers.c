// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_debugfs_buffers.c - debugfs "buffers" of a device: where the pages
 * of its clients' buffers are.
 *
 * One line per buffer handle of every open file of the device:
 *
 *   ctx handle kind size pages_per_node
 *   12 1 device 2097152 0:512
 *   12 2 host 262144 -
 *
 * ctx is the file's DRM client id (fdinfo's drm-client-id), kind is
 * device, host or imported, size in bytes; pages_per_node lists
 * NODE:PAGES for each NUMA node that holds pages of the buffer, or "-" when
 * none are present yet (and for imports, whose pages are the exporter's:
 * its own line shows them). It proves that buffers live on the device's
 * node (tests/vm: rbln-vm-numa).
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/debugfs.h>
#include <linux/idr.h>
#include <linux/nodemask.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include "rbln_device.h"
#include "rbln_drv.h"
#include "rbln_gem.h"

static void rbln_buffer_show(struct seq_file *m, u64 ctx, int handle,
			     struct drm_gem_object *obj,
			     unsigned long *counts)
{
	const char *kind = "device";
	bool any = false;
	int node;

	if (obj->import_attach)
		kind = "imported";
	else if (!to_rbln_bo(obj)->charged)
		kind = "host";
	seq_printf(m, "%llu %d %s %zu", ctx, handle, kind, obj->size);

	if (!obj->import_attach) {
		memset(counts, 0, nr_node_ids * sizeof(*counts));
		rbln_bo_pages_per_node(to_rbln_bo(obj), counts);
		for_each_node(node) {
			if (!counts[node])
				continue;
			seq_printf(m, " %d:%lu", node, counts[node]);
			any = true;
		}
	}
	seq_puts(m, any ? "\n" : " -\n");
}

/*
 * Each object is looked up under the file's table lock and examined
 * outside it with a reference held: counting the pages of a large buffer
 * takes a while and may reschedule.
 */
static void rbln_file_buffers_show(struct seq_file *m, struct drm_file *file,
				   unsigned long *counts)
{
	struct drm_gem_object *obj;
	int id;

	for (id = 0; ; id++) {
		spin_lock(&file->table_lock);
		obj = idr_get_next(&file->object_idr, &id);
		if (obj)
			drm_gem_object_get(obj);
		spin_unlock(&file->table_lock);
		if (!obj)
			break;
		if (rbln_gem_is_rbln(obj))
			rbln_buffer_show(m, file->client_id, id, obj, counts);
		drm_gem_object_put(obj);
	}
}

static int rbln_buffers_show(struct seq_file *m, void *unused)
{
	struct rbln_device *rdev = m->private;
	struct drm_device *dev = &rdev->drm;
	struct drm_file *file;
	unsigned long *counts;

	counts = kcalloc(nr_node_ids, sizeof(*counts), GFP_KERNEL);
	if (!counts)
		return -ENOMEM;

	seq_puts(m, "ctx handle kind size pages_per_node\n");
	mutex_lock(&dev->filelist_mutex);
	list_for_each_entry_reverse(file, &dev->filelist, lhead)
		rbln_file_buffers_show(m, file, counts);
	mutex_unlock(&dev->filelist_mutex);
	kfree(counts);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rbln_buffers);

/**
 * rbln_debugfs_buffers_init() - create the device's "buffers" file
 * @rdev: the device
 * @root: its debugfs directory
 */
void rbln_debugfs_buffers_init(struct rbln_device *rdev, struct dentry *root)
{
	debugfs_create_file("buffers", 0444, root, rdev, &rbln_buffers_fops);
}
