// SPDX-License-Identifier: MIT
/*
 * Device handles of the emulated backend. Several handles may open the
 * same modelled device (as several processes open one device node); the
 * device's engines run while any is open.
 */
#include <errno.h>
#include <pthread.h>

#include "emul.h"

int emul_device_open(npu_device *dev)
{
	struct emul_dev *d = emul_dev(dev);
	struct emul_hw *hw = &emul_ctx(dev->ctx)->hw[dev->hw_index];
	int err = 0;

	pthread_mutex_lock(&hw->lifecycle);
	if (hw->open_handles == 0)
		err = emul_engines_start(hw);
	if (!err)
		hw->open_handles++;
	pthread_mutex_unlock(&hw->lifecycle);
	if (err)
		return err;

	d->hw = hw;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->idle, NULL);
	return 0;
}

void emul_dev_job_done(struct emul_dev *d)
{
	pthread_mutex_lock(&d->lock);
	if (--d->jobs == 0)
		pthread_cond_broadcast(&d->idle);
	pthread_mutex_unlock(&d->lock);
}

void emul_device_close(npu_device *dev)
{
	struct emul_dev *d = emul_dev(dev);
	struct emul_hw *hw = d->hw;

	/* Closing waits for the handle's jobs, as closing a DRM file does. */
	pthread_mutex_lock(&d->lock);
	while (d->jobs)
		pthread_cond_wait(&d->idle, &d->lock);
	pthread_mutex_unlock(&d->lock);

	pthread_mutex_lock(&hw->lifecycle);
	if (--hw->open_handles == 0)
		emul_engines_stop(hw);
	pthread_mutex_unlock(&hw->lifecycle);

	pthread_cond_destroy(&d->idle);
	pthread_mutex_destroy(&d->lock);
}

int emul_device_query(npu_device *dev, struct npu_device_info *info)
{
	return emul_device_info(dev->ctx, dev->hw_index, info);
}
