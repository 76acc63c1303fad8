// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln_drv.c - module entry of rbln.ko: parameters, the DRM driver, the
 * platform devices that stand for the modeled NPUs, open and close.
 *
 * Copyright (C) 2026 The RBLN NPU model authors
 */

#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/nodemask.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_print.h>

#include "rbln_accel.h"
#include "rbln_budget.h"
#include "rbln_client.h"
#include "rbln_compat.h"
#include "rbln_device.h"
#include "rbln_drv.h"
#include "rbln_gem.h"
#include "rbln_job.h"
#include "rbln_queue.h"

#define RBLN_DRIVER_MAJOR	1
#define RBLN_DRIVER_MINOR	0

struct rbln_params rbln_params = {
	.num_devices = 8,
	.mem_size = 0,
	.numa_node = NUMA_NO_NODE,
	.engines = 2,
	.job_timeout_ms = 10000,
	.hw_queues = 16,
	.max_queues = 64,
	.max_jobs = 1024,
};

module_param_named(num_devices, rbln_params.num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Number of modeled NPUs, 1-64 (default 8)");

static int rbln_param_set_size(const char *val, const struct kernel_param *kp)
{
	u64 *size = kp->arg;
	char *end;
	u64 v;

	v = memparse(val, &end);
	if (*end == '\n')
		end++;
	/* 0 asks for the default that rbln_budget_init() derives. */
	if (*end || (v && v < PAGE_SIZE) || v > RBLN_MAX_MEM_SIZE)
		return -EINVAL;
	*size = v;
	return 0;
}

static int rbln_param_get_size(char *buffer, const struct kernel_param *kp)
{
	return sysfs_emit(buffer, "%llu\n", *(u64 *)kp->arg);
}

static const struct kernel_param_ops rbln_param_size_ops = {
	.set = rbln_param_set_size,
	.get = rbln_param_get_size,
};

module_param_cb(mem_size, &rbln_param_size_ops, &rbln_params.mem_size, 0444);
MODULE_PARM_DESC(mem_size,
		 "Device memory per NPU in bytes, K/M/G/T suffixes, 4K-64T, capped so that all NPUs together take at most half of RAM (default 0: min(16G, half of RAM / num_devices))");

module_param_named(numa_node, rbln_params.numa_node, int, 0444);
MODULE_PARM_DESC(numa_node,
		 "NUMA node of every NPU, -1 spreads them over online nodes (default -1)");

module_param_named(engines, rbln_params.engines, uint, 0444);
MODULE_PARM_DESC(engines, "Neural engines (kthreads) per NPU, 1-16 (default 2)");

module_param_named(job_timeout_ms, rbln_params.job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms,
		 "A job without progress for this long is reset, 100-600000 (default 10000)");

/*
 * The CPU variant of the model's compute kernels: "auto" (the best this
 * CPU runs), "baseline", "avx2" or "avx512" ("amx" and "avx512+amx" are
 * refused: only the emulated backend has them). Global to the model, like the emulated
 * backend's RBLN_CPU_VARIANT; applies to commands that start afterwards.
 */
static int rbln_param_set_cpu(const char *val, const struct kernel_param *kp)
{
	int cpu = rbln_model_cpu_parse(val);

	if (cpu < 0 || rbln_model_set_cpu(cpu))
		return -EINVAL;
	return 0;
}

static int rbln_param_get_cpu(char *buffer, const struct kernel_param *kp)
{
	return sysfs_emit(buffer, "%s\n", rbln_model_cpu_name(rbln_model_cpu()));
}

static const struct kernel_param_ops rbln_param_cpu_ops = {
	.set = rbln_param_set_cpu,
	.get = rbln_param_get_cpu,
};

module_param_cb(cpu_variant, &rbln_param_cpu_ops, NULL, 0644);
MODULE_PARM_DESC(cpu_variant,
		 "CPU variant of the compute kernels: auto, baseline, avx2 or avx512 (default auto)");

module_param_named(hw_queues, rbln_params.hw_queues, uint, 0444);
MODULE_PARM_DESC(hw_queues,
		 "Jobs one NPU executes at the same time, 1-64 (default 16)");

module_param_named(max_queues, rbln_params.max_queues, uint, 0444);
MODULE_PARM_DESC(max_queues,
		 "Queues one open file may create on its NPU, 1-1024 (default 64)");

module_param_named(max_jobs, rbln_params.max_jobs, uint, 0444);
MODULE_PARM_DESC(max_jobs,
		 "Jobs one open file may have in flight before submission fails with EBUSY, 1-65536 (default 1024)");

static int rbln_open(struct drm_device *dev, struct drm_file *file)
{
	struct rbln_file *rfile;

	rfile = kzalloc(sizeof(*rfile), GFP_KERNEL_ACCOUNT);
	if (!rfile)
		return -ENOMEM;
	rfile->client = rbln_client_create();
	if (!rfile->client) {
		kfree(rfile);
		return -ENOMEM;
	}

	rfile->rdev = to_rbln_device(dev);
	rfile->file = file;
	mutex_init(&rfile->lock);
	xa_init_flags(&rfile->queues, XA_FLAGS_ALLOC1);
	file->driver_priv = rfile;
	return 0;
}

static void rbln_postclose(struct drm_device *dev, struct drm_file *file)
{
	struct rbln_file *rfile = file->driver_priv;

	rbln_file_queues_fini(rfile);
	xa_destroy(&rfile->queues);
	mutex_destroy(&rfile->lock);
	rbln_client_put(rfile->client);
	kfree(rfile);
}

static const struct drm_ioctl_desc rbln_ioctls[] = {
	DRM_IOCTL_DEF_DRV(RBLN_QUERY, rbln_ioctl_query, 0),
	DRM_IOCTL_DEF_DRV(RBLN_BO_CREATE, rbln_ioctl_bo_create, 0),
	DRM_IOCTL_DEF_DRV(RBLN_BO_MMAP_OFFSET, rbln_ioctl_bo_mmap_offset, 0),
	DRM_IOCTL_DEF_DRV(RBLN_BO_INFO, rbln_ioctl_bo_info, 0),
	DRM_IOCTL_DEF_DRV(RBLN_QUEUE_CREATE, rbln_ioctl_queue_create, 0),
	DRM_IOCTL_DEF_DRV(RBLN_QUEUE_DESTROY, rbln_ioctl_queue_destroy, 0),
	DRM_IOCTL_DEF_DRV(RBLN_SUBMIT, rbln_ioctl_submit, 0),
	DRM_IOCTL_DEF_DRV(RBLN_WAIT, rbln_ioctl_wait, 0),
};

static const struct file_operations rbln_fops = {
	.owner = THIS_MODULE,
	.open = accel_open,
	.release = drm_release,
	.unlocked_ioctl = drm_ioctl,
	.compat_ioctl = drm_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = drm_gem_mmap,
	.show_fdinfo = drm_show_fdinfo,
	.fop_flags = FOP_UNSIGNED_OFFSET,
};

static const struct drm_driver rbln_drm_driver = {
	.driver_features = DRIVER_COMPUTE_ACCEL | DRIVER_GEM |
			   DRIVER_SYNCOBJ | DRIVER_SYNCOBJ_TIMELINE,
	.open = rbln_open,
	.postclose = rbln_postclose,
	.show_fdinfo = rbln_client_show_fdinfo,
	.gem_prime_import_sg_table = rbln_gem_prime_import_sg_table,
	.ioctls = rbln_ioctls,
	.num_ioctls = ARRAY_SIZE(rbln_ioctls),
	.fops = &rbln_fops,
	.name = RBLN_DRIVER_NAME,
	.desc = RBLN_DRIVER_DESC,
#ifdef RBLN_HAVE_DRIVER_DATE
	.date = "20260101",
#endif
	.major = RBLN_DRIVER_MAJOR,
	.minor = RBLN_DRIVER_MINOR,
};

static int rbln_probe(struct platform_device *pdev)
{
	struct rbln_device *rdev;
	int ret;

	rdev = devm_drm_dev_alloc(&pdev->dev, &rbln_drm_driver,
				  struct rbln_device, drm);
	if (IS_ERR(rdev))
		return PTR_ERR(rdev);

	rdev->pdev = pdev;
	rdev->index = pdev->id;
	platform_set_drvdata(pdev, rdev);

	ret = rbln_device_init(rdev);
	if (ret)
		return ret;

	ret = drm_dev_register(&rdev->drm, 0);
	if (ret)
		return ret;

	rbln_debugfs_init(rdev);
	WRITE_ONCE(rdev->ready, true);
	drm_dbg_driver(&rdev->drm, "rbln%u ready on node %d\n", rdev->index,
		       rdev->numa_node);
	return 0;
}

static void rbln_remove(struct platform_device *pdev)
{
	struct rbln_device *rdev = platform_get_drvdata(pdev);

	rbln_device_unplug(rdev);
}

static struct platform_driver rbln_platform_driver = {
	.probe = rbln_probe,
	.remove = rbln_remove,
	.driver = {
		.name = RBLN_DRIVER_NAME,
		.dev_groups = rbln_dev_groups,
	},
};

static struct platform_device *rbln_pdevs[RBLN_MAX_DEVICES];

static int rbln_check_range(const char *name, unsigned int value,
			    unsigned int min, unsigned int max)
{
	if (value >= min && value <= max)
		return 0;
	pr_err("rbln: %s must be %u-%u\n", name, min, max);
	return -EINVAL;
}

static int rbln_check_params(void)
{
	struct rbln_params *p = &rbln_params;

	if (rbln_check_range("num_devices", p->num_devices, 1, RBLN_MAX_DEVICES) ||
	    rbln_check_range("engines", p->engines, 1, RBLN_MAX_ENGINES) ||
	    rbln_check_range("job_timeout_ms", p->job_timeout_ms, 100, 600000) ||
	    rbln_check_range("hw_queues", p->hw_queues, 1, 64) ||
	    rbln_check_range("max_queues", p->max_queues, 1, RBLN_MAX_QUEUES) ||
	    rbln_check_range("max_jobs", p->max_jobs, 1, RBLN_MAX_JOBS))
		return -EINVAL;
	if (p->numa_node != NUMA_NO_NODE &&
	    (p->numa_node < 0 || p->numa_node >= MAX_NUMNODES ||
	     !node_online(p->numa_node))) {
		pr_err("rbln: numa_node %d is not online\n", p->numa_node);
		return -EINVAL;
	}
	return 0;
}

static void rbln_unregister_devices(void)
{
	int i;

	for (i = RBLN_MAX_DEVICES - 1; i >= 0; i--) {
		if (rbln_pdevs[i]) {
			platform_device_unregister(rbln_pdevs[i]);
			rbln_pdevs[i] = NULL;
		}
	}
}

static int __init rbln_init(void)
{
	struct platform_device_info info = {
		.name = RBLN_DRIVER_NAME,
		.dma_mask = DMA_BIT_MASK(64),
	};
	unsigned int i;
	int ret;

	ret = rbln_check_params();
	if (ret)
		return ret;
	ret = rbln_budget_init();
	if (ret)
		return ret;

	ret = rbln_job_cache_init();
	if (ret)
		return ret;

	ret = platform_driver_register(&rbln_platform_driver);
	if (ret) {
		rbln_job_cache_fini();
		return ret;
	}

	for (i = 0; i < rbln_params.num_devices; i++) {
		struct platform_device *pdev;

		info.id = i;
		pdev = platform_device_register_full(&info);
		if (IS_ERR(pdev)) {
			ret = PTR_ERR(pdev);
			goto err;
		}
		rbln_pdevs[i] = pdev;
		if (!platform_get_drvdata(pdev)) {
			pr_err("rbln: device %u failed to probe\n", i);
			ret = -ENODEV;
			goto err;
		}
	}

	pr_info("rbln: %u NPUs, %llu MiB each, %u engines each; host budget %llu MiB\n",
		rbln_params.num_devices, rbln_params.mem_size >> 20,
		rbln_params.engines, rbln_budget_total() >> 20);
	return 0;

err:
	rbln_unregister_devices();
	platform_driver_unregister(&rbln_platform_driver);
	rbln_job_cache_fini();
	return ret;
}

static void __exit rbln_exit(void)
{
	rbln_unregister_devices();
	platform_driver_unregister(&rbln_platform_driver);
	/* Nothing can hold a buffer object once the devices are gone. */
	if (rbln_gem_live())
		pr_err("rbln: leak: %d buffer objects alive at unload\n",
		       rbln_gem_live());
	if (rbln_budget_used())
		pr_err("rbln: leak: %llu bytes of the host budget charged at unload\n",
		       rbln_budget_used());
	rbln_job_cache_fini();
}

module_init(rbln_init);
module_exit(rbln_exit);

MODULE_AUTHOR("The RBLN NPU model authors");
MODULE_DESCRIPTION(RBLN_DRIVER_DESC);
MODULE_LICENSE("GPL");
RBLN_MODULE_IMPORT_NS_DMA_BUF;
MODULE_VERSION("1.0.0");
