// SPDX-License-Identifier: MIT
/*
 * Engine threads ("neural engines") of an emulated device. Engine 0 takes
 * runnable jobs from the scheduler and runs their streams; engines 1..n-1
 * help with the parts of one command when the model splits it
 * (env->parallel). Threads run on the device's NUMA node and with signals
 * blocked, as library threads should, so the application's signal
 * handlers never run on them.
 */
#include <errno.h>
#include <numa.h>
#include <signal.h>
#include <stdlib.h>

#include "emul.h"

static void run_on_device_node(struct emul_hw *hw)
{
	if (hw->numa_node >= 0 && numa_available() >= 0)
		numa_run_on_node(hw->numa_node);
}

/*
 * Poll @counter for up to @spin_ns while it still reads @seen. Returns
 * whether it moved.
 */
static bool poll_for_change(atomic_uint *counter, unsigned int seen,
			    int64_t spin_ns)
{
	int64_t stop = npu_now_ns() + spin_ns;

	for (unsigned int step = 0;
	     atomic_load(counter) == seen && spin_ns > 0 &&
	     npu_now_ns() < stop; step++)
		emul_poll_step(step);
	return atomic_load(counter) != seen;
}

/*
 * After a job, poll briefly for the next one before sleeping: a submitter
 * waiting for each job's fence then finds the engine awake. Called and
 * returns with hw->lock held.
 */
static void spin_for_work(struct emul_hw *hw)
{
	unsigned int seen = atomic_load(&hw->kicks);

	if (hw->ctx->spin_ns <= 0)
		return;
	pthread_mutex_unlock(&hw->lock);
	poll_for_change(&hw->kicks, seen, hw->ctx->spin_ns);
	pthread_mutex_lock(&hw->lock);
}

static void *stream_engine(void *arg)
{
	struct emul_hw *hw = arg;
	bool spun = true;

	run_on_device_node(hw);
	pthread_mutex_lock(&hw->lock);
	for (;;) {
		struct emul_job *job = emul_sched_pick(hw);

		if (job) {
			pthread_mutex_unlock(&hw->lock);
			emul_job_run(hw, job);
			pthread_mutex_lock(&hw->lock);
			spun = false;
			continue;
		}
		if (hw->stopping)
			break;
		if (!spun) {
			spin_for_work(hw);
			spun = true;
			continue;
		}
		pthread_cond_wait(&hw->work, &hw->lock);
	}
	pthread_mutex_unlock(&hw->lock);
	return NULL;
}

static void run_parts(struct emul_parallel *w)
{
	unsigned int part;

	while ((part = atomic_fetch_add(&w->next, 1)) < w->nparts)
		w->fn(w->arg, part, w->nparts);
}

/*
 * Take parts of the split now published, if any. Announcing ourselves in
 * split_busy before reading split_work pairs with engine 0 clearing
 * split_work before it reads split_busy (both sequentially consistent):
 * either engine 0 sees us and waits, or we see NULL and never touch its
 * split, which lives on its stack.
 */
static void join_split(struct emul_hw *hw)
{
	struct emul_parallel *w;

	atomic_fetch_add(&hw->split_busy, 1);
	w = atomic_load(&hw->split_work);
	if (w)
		run_parts(w);
	if (atomic_fetch_sub(&hw->split_busy, 1) == 1 &&
	    atomic_load(&hw->split_waiting)) {
		pthread_mutex_lock(&hw->lock);
		pthread_cond_signal(&hw->split_done);
		pthread_mutex_unlock(&hw->lock);
	}
}

/*
 * A helper polls for the next split before it sleeps: a decode step is a
 * few hundred commands of tens of microseconds each, and a futex wake-up
 * per helper per command (engine 0 waking them one by one) cost as much as
 * the commands' own work on a 16-engine device.
 */
static void *helper_engine(void *arg)
{
	struct emul_hw *hw = arg;
	unsigned int seen = atomic_load(&hw->split_gen);

	run_on_device_node(hw);
	for (;;) {
		bool stopping;

		if (poll_for_change(&hw->split_gen, seen,
				    hw->ctx->split_spin_ns)) {
			seen = atomic_load(&hw->split_gen);
			join_split(hw);
			continue;
		}
		pthread_mutex_lock(&hw->lock);
		atomic_fetch_add(&hw->split_sleepers, 1);
		while (!hw->stopping && atomic_load(&hw->split_gen) == seen)
			pthread_cond_wait(&hw->split, &hw->lock);
		atomic_fetch_sub(&hw->split_sleepers, 1);
		stopping = hw->stopping;
		pthread_mutex_unlock(&hw->lock);
		if (stopping)
			break;
	}
	return NULL;
}

/* Wait until no helper can be inside the split just finished. */
static void wait_for_helpers(struct emul_hw *hw)
{
	int64_t stop = npu_now_ns() + hw->ctx->spin_ns;
	unsigned int step = 0;

	while (atomic_load(&hw->split_busy) && hw->ctx->spin_ns > 0 &&
	       npu_now_ns() < stop)
		emul_poll_step(step++);
	if (!atomic_load(&hw->split_busy))
		return;
	pthread_mutex_lock(&hw->lock);
	atomic_store(&hw->split_waiting, true);
	while (atomic_load(&hw->split_busy))
		pthread_cond_wait(&hw->split_done, &hw->lock);
	atomic_store(&hw->split_waiting, false);
	pthread_mutex_unlock(&hw->lock);
}

void emul_engines_parallel(struct emul_hw *hw,
			   void (*fn)(void *arg, u32 part, u32 nparts),
			   void *arg, u32 nparts)
{
	struct emul_parallel w = { .fn = fn, .arg = arg, .nparts = nparts };
	unsigned int sleepers;

	atomic_init(&w.next, 0);
	atomic_store(&hw->split_work, &w);
	atomic_fetch_add(&hw->split_gen, 1);
	/*
	 * Helpers still polling take parts by themselves. Of those asleep,
	 * wake only as many as the parts need (the caller takes one): a small
	 * command split in two must not wake every engine of a large device,
	 * whose wake-ups then cost more than the work.
	 */
	sleepers = atomic_load(&hw->split_sleepers);
	if (sleepers) {
		pthread_mutex_lock(&hw->lock);
		for (u32 i = 1; i < nparts && i <= sleepers; i++)
			pthread_cond_signal(&hw->split);
		pthread_mutex_unlock(&hw->lock);
	}

	run_parts(&w);

	/* Every part is claimed; wait for helpers still inside theirs. */
	atomic_store(&hw->split_work, NULL);
	wait_for_helpers(hw);
}

static void join_engines(struct emul_hw *hw, unsigned int count)
{
	pthread_mutex_lock(&hw->lock);
	hw->stopping = true;
	atomic_store(&hw->cancel, true);
	atomic_fetch_add(&hw->split_gen, 1);
	pthread_cond_broadcast(&hw->work);
	pthread_cond_broadcast(&hw->split);
	pthread_mutex_unlock(&hw->lock);
	for (unsigned int i = 0; i < count; i++)
		pthread_join(hw->engines[i], NULL);
	free(hw->engines);
	hw->engines = NULL;
	/* Ready for the next first open. */
	hw->stopping = false;
	atomic_store(&hw->cancel, false);
}

/*
 * Engine threads get the default stack, but at least twice what the model
 * may take (RBLN_MODEL_EMUL_STACK): an application may have made the
 * default small (pthread_setattr_default_np, a low RLIMIT_STACK).
 */
static int engine_attr(pthread_attr_t *attr)
{
	size_t size = 0;
	int err = pthread_attr_init(attr);

	if (err)
		return err;
	pthread_attr_getstacksize(attr, &size);
	if (size < 2 * (size_t)RBLN_MODEL_EMUL_STACK)
		err = pthread_attr_setstacksize(attr,
						2 * (size_t)RBLN_MODEL_EMUL_STACK);
	if (err)
		pthread_attr_destroy(attr);
	return err;
}

int emul_engines_start(struct emul_hw *hw)
{
	sigset_t all, old;
	pthread_attr_t attr;
	int err = 0;
	unsigned int started;

	hw->engines = calloc(hw->num_engines, sizeof(*hw->engines));
	if (!hw->engines)
		return npu_fail(-ENOMEM, NULL);
	err = engine_attr(&attr);
	if (err) {
		free(hw->engines);
		hw->engines = NULL;
		return npu_fail(-err, "device %u: engine thread attributes: %s",
				hw->index, npu_strerror(err));
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (started = 0; started < hw->num_engines; started++) {
		err = pthread_create(&hw->engines[started], &attr,
				     started ? helper_engine : stream_engine, hw);
		if (err)
			break;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		join_engines(hw, started);
		return npu_fail(-err, "device %u: starting engine thread %u: %s",
				hw->index, started, npu_strerror(err));
	}
	return 0;
}

void emul_engines_stop(struct emul_hw *hw)
{
	join_engines(hw, hw->num_engines);
	if (hw->ctx->profile)
		emul_profile_report(hw);
}

void emul_engines_kick(struct emul_hw *hw)
{
	atomic_fetch_add(&hw->kicks, 1);
	pthread_mutex_lock(&hw->lock);
	pthread_cond_signal(&hw->work);
	pthread_mutex_unlock(&hw->lock);
}
