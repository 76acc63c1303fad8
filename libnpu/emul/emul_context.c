// SPDX-License-Identifier: MIT
/*
 * The emulated backend's context: how many devices, how big, how many
 * engines (options, else RBLN_EMUL_* variables, else defaults), and where
 * they live (NUMA nodes round-robin, as the driver spreads its devices).
 */
#include <errno.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emul.h"

/* "16G", "512M", "4096": a size with an optional binary suffix. */
static int parse_size(const char *text, const char *name, uint64_t *out)
{
	char *end;
	unsigned long long value;

	errno = 0;
	value = strtoull(text, &end, 10);
	if (end == text || errno || text[0] == '-')
		goto bad;

	unsigned int shift = 0;

	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' && shift)
		end++;
	if (*end != '\0' || value > (UINT64_MAX >> shift))
		goto bad;
	*out = (uint64_t)value << shift;
	return 0;
bad:
	return npu_fail(-EINVAL, "%s=\"%s\": expected a size such as 16G",
			name, text);
}

static int parse_count(const char *text, const char *name, unsigned int max,
		       unsigned int *out)
{
	char *end;
	unsigned long value;

	errno = 0;
	value = strtoul(text, &end, 10);
	if (end == text || *end || errno || text[0] == '-' || value == 0 ||
	    value > max)
		return npu_fail(-EINVAL, "%s=\"%s\": expected a number from 1 to %u",
				name, text, max);
	*out = (unsigned int)value;
	return 0;
}

/*
 * RBLN_CPU_VARIANT forces the compute kernels' CPU variant, as rbln.ko's
 * module parameter does. The model's choice is global to the process: the
 * variable is read by every context, and unset leaves the choice as is.
 */
static int read_cpu_variant(void)
{
	const char *env = getenv("RBLN_CPU_VARIANT");
	int cpu;

	if (!env || !*env)
		return 0;
	cpu = rbln_model_cpu_parse(env);
	if (cpu < 0)
		return npu_fail(-EINVAL,
				"RBLN_CPU_VARIANT=\"%s\": auto, baseline, avx2, avx512, amx or avx512+amx",
				env);
	if (rbln_model_set_cpu((u32)cpu))
		return npu_fail(-EINVAL,
				"RBLN_CPU_VARIANT=%s: this CPU cannot run it",
				env);
	return 0;
}

/* Fill @e from @opts, the environment and the defaults, in that order. */
static int read_settings(const struct npu_context_options *opts,
			 struct emul_ctx *e)
{
	const char *env;
	int err;

	e->num_devices = opts->emul_devices;
	if (!e->num_devices && (env = getenv("RBLN_EMUL_DEVICES")) && *env) {
		err = parse_count(env, "RBLN_EMUL_DEVICES", EMUL_MAX_DEVICES,
				  &e->num_devices);
		if (err)
			return err;
	}
	if (!e->num_devices)
		e->num_devices = EMUL_DEFAULT_DEVICES;
	if (e->num_devices > EMUL_MAX_DEVICES)
		return npu_fail(-EINVAL, "emul_devices %u exceeds %u",
				e->num_devices, EMUL_MAX_DEVICES);

	e->mem_size = opts->emul_mem_size;
	if (!e->mem_size && (env = getenv("RBLN_EMUL_MEM_SIZE")) && *env) {
		err = parse_size(env, "RBLN_EMUL_MEM_SIZE", &e->mem_size);
		if (err)
			return err;
	}
	if (!e->mem_size)
		e->mem_size = EMUL_DEFAULT_MEM_SIZE;
	if (e->mem_size < npu_page_size())
		return npu_fail(-EINVAL,
				"device memory size %llu is smaller than a page",
				(unsigned long long)e->mem_size);

	e->engines_per_device = opts->emul_engines;
	if (!e->engines_per_device && (env = getenv("RBLN_EMUL_ENGINES")) &&
	    *env) {
		err = parse_count(env, "RBLN_EMUL_ENGINES", EMUL_MAX_ENGINES,
				  &e->engines_per_device);
		if (err)
			return err;
	}
	if (!e->engines_per_device) {
		/* Share the cores: 8 devices on 2 cores get one engine each. */
		long cores = sysconf(_SC_NPROCESSORS_ONLN);

		e->engines_per_device = cores > (long)e->num_devices ?
			(unsigned int)(cores / e->num_devices) : 1;
	}
	if (e->engines_per_device > EMUL_MAX_ENGINES)
		return npu_fail(-EINVAL, "emul_engines %u exceeds %u",
				e->engines_per_device, EMUL_MAX_ENGINES);
	return read_cpu_variant();
}

/*
 * libnuma fills its node-to-CPUs cache on first use without a lock, so
 * engine threads starting at once (numa_run_on_node()) would race on it
 * and leak. Fill it once, here, before any engine exists.
 */
static void warm_numa_cache(void)
{
	struct bitmask *cpus = numa_allocate_cpumask();

	if (!cpus)
		return;
	for (int n = 0; n <= numa_max_node(); n++)
		if (numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned int)n))
			numa_node_to_cpus(n, cpus);
	numa_free_cpumask(cpus);
}

static pthread_once_t numa_cache_once = PTHREAD_ONCE_INIT;

/*
 * Device i gets the i-th node this process may allocate on, wrapping
 * around; -1 without NUMA.
 */
static void assign_numa_nodes(struct emul_ctx *e)
{
	int nodes[1024];
	int count = 0;

	if (numa_available() >= 0) {
		pthread_once(&numa_cache_once, warm_numa_cache);
		int max = numa_max_node();

		for (int n = 0; n <= max && count < 1024; n++)
			if (numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned int)n))
				nodes[count++] = n;
	}
	for (unsigned int i = 0; i < e->num_devices; i++)
		e->hw[i].numa_node = count ? nodes[i % (unsigned int)count] : -1;
}

static void hw_init(struct emul_ctx *e, struct emul_hw *hw, unsigned int index)
{
	hw->ctx = e;
	hw->index = index;
	atomic_init(&hw->mem_used, 0);
	atomic_init(&hw->cancel, false);
	atomic_init(&hw->kicks, 0);
	atomic_init(&hw->split_work, NULL);
	atomic_init(&hw->split_gen, 0);
	atomic_init(&hw->split_busy, 0);
	atomic_init(&hw->split_sleepers, 0);
	atomic_init(&hw->split_waiting, false);
	pthread_mutex_init(&hw->lifecycle, NULL);
	pthread_mutex_init(&hw->lock, NULL);
	emul_cond_init(&hw->work);
	emul_cond_init(&hw->split);
	emul_cond_init(&hw->split_done);
	hw->num_engines = e->engines_per_device;
}

int emul_context_init(npu_context *ctx, const struct npu_context_options *opts)
{
	struct emul_ctx *e = calloc(1, sizeof(*e));
	int err;

	if (!e)
		return npu_fail(-ENOMEM, NULL);
	err = read_settings(opts, e);
	if (err)
		goto fail;
	e->hw = calloc(e->num_devices, sizeof(*e->hw));
	if (!e->hw) {
		err = npu_fail(-ENOMEM, NULL);
		goto fail;
	}
	for (unsigned int i = 0; i < e->num_devices; i++)
		hw_init(e, &e->hw[i], i);
	assign_numa_nodes(e);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	e->spin_ns = cpus > 1 ? EMUL_SPIN_NS : 0;
	e->split_spin_ns = cpus >= (long)e->engines_per_device ?
			   EMUL_SPLIT_SPIN_NS : e->spin_ns;
	e->profile = emul_profile_wanted();
	ctx->backend = e;
	ctx->hw_count = e->num_devices;
	return 0;
fail:
	free(e);
	return err;
}

void emul_context_fini(npu_context *ctx)
{
	struct emul_ctx *e = emul_ctx(ctx);

	for (unsigned int i = 0; i < e->num_devices; i++) {
		struct emul_hw *hw = &e->hw[i];

		pthread_cond_destroy(&hw->split_done);
		pthread_cond_destroy(&hw->split);
		pthread_cond_destroy(&hw->work);
		pthread_mutex_destroy(&hw->lock);
		pthread_mutex_destroy(&hw->lifecycle);
	}
	free(e->hw);
	free(e);
}

int emul_device_info(npu_context *ctx, unsigned int hw_index,
		     struct npu_device_info *info)
{
	struct emul_ctx *e = emul_ctx(ctx);
	struct emul_hw *hw = &e->hw[hw_index];

	memset(info, 0, sizeof(*info));
	info->hw_index = hw_index;
	info->device_count = e->num_devices;
	snprintf(info->name, sizeof(info->name), "%s", EMUL_DEVICE_NAME);
	snprintf(info->path, sizeof(info->path), "emul:%u", hw_index);
	info->mem_total = e->mem_size;
	info->mem_used = atomic_load(&hw->mem_used);
	info->num_engines = hw->num_engines;
	info->numa_node = hw->numa_node;
	info->isa_major = RBLN_ISA_VERSION_MAJOR;
	info->isa_minor = RBLN_ISA_VERSION_MINOR;
	info->capabilities = NPU_CAP_SEMAPHORES | NPU_CAP_PEER_BUFFERS |
			     NPU_CAP_TIMELINE | NPU_CAP_COMPUTE_F32;
	info->max_buffer_size = e->mem_size;
	info->max_submit_buffers = EMUL_MAX_SUBMIT_BUFFERS;
	info->max_cmd_size = EMUL_MAX_CMD_SIZE;
	return 0;
}

const char *npu_context_cpu_variant(const npu_context *ctx)
{
	if (!ctx || ctx->kind != NPU_BACKEND_EMUL)
		return NULL;
	return rbln_model_cpu_name(rbln_model_cpu());
}
