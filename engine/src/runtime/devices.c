// SPDX-License-Identifier: MIT
/*
 * The devices of a loaded model: rank r runs on visible device r (after
 * RBLN_DEVICES or the devices option), with a queue and one buffer per
 * program slot.  Each rank's comm buffer is shared with every other rank
 * (PRIME import), so the devices' all-reduces read each other's partial
 * sums and semaphores directly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rbln_accel.h"
#include "runtime/runtime_internal.h"

static int npu_err(struct rbln_error *err, int rc, const char *what, uint32_t rank)
{
	const char *detail = npu_error_detail();

	return rbln_error_set(err, rc, "rank %u: %s: %s%s%s", rank, what, npu_strerror(rc),
			      detail[0] ? ": " : "", detail);
}

/*
 * The emulated devices split the machine's cores among all eight of them
 * by default; a model on fewer devices gets the cores of the idle ones.
 */
static unsigned int emul_engines(uint32_t tp)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (getenv("RBLN_EMUL_ENGINES") || cpus < 1)
		return 0;
	return (unsigned int)(cpus / tp > 0 ? cpus / tp : 1);
}

static int open_context(struct rbln_runtime *e, const char *devices, struct rbln_error *err)
{
	struct npu_context_options o = {
		.struct_size = sizeof(o),
		.devices = devices,
		.emul_engines = emul_engines(e->tp),
		.emul_devices = e->tp > 8 && !getenv("RBLN_EMUL_DEVICES") ? e->tp : 0,
	};
	unsigned int n;
	int rc;

	rc = npu_context_create(&o, &e->ctx);
	if (rc)
		return rbln_error_set(err, rc, "cannot open the devices: %s: %s", npu_strerror(rc),
				      npu_error_detail());
	e->backend = npu_backend_name(npu_context_backend(e->ctx));
	n = npu_device_count(e->ctx);
	if (n < e->tp)
		return rbln_error_set(err, -ENODEV, "the model is compiled for %u devices "
				      "(tensor_parallel_size) but %u %s visible (%s backend%s%s)",
				      e->tp, n, n == 1 ? "is" : "are", e->backend,
				      getenv("RBLN_DEVICES") ? ", RBLN_DEVICES=" : "",
				      getenv("RBLN_DEVICES") ? getenv("RBLN_DEVICES") : "");
	return 0;
}

static int alloc_slot(struct rank *rk, uint32_t slot, uint32_t flags, uint32_t r,
		      struct rbln_error *err)
{
	int rc = npu_buffer_alloc(rk->dev, rk->bufs.size[slot], flags, &rk->buf[slot]);

	if (rc) {
		char what[96];

		snprintf(what, sizeof(what), "allocating %llu bytes for slot %u",
			 (unsigned long long)rk->bufs.size[slot], slot);
		return npu_err(err, rc, what, r);
	}
	return 0;
}

int rbln_runtime_check_isa(const struct rbln_compiled_config *cc, uint32_t rank,
			   const char *device, unsigned int major, unsigned int minor,
			   struct rbln_error *err)
{
	unsigned int need = rbln_compiled_isa_minor(cc);
	bool bf16 = cc->matmul_precision == RBLN_MATMUL_BF16 && minor < 3;
	bool spaced = cc->weight_layout == RBLN_WEIGHTS_SPACED && minor < 4;

	if (major == 1 && minor >= need)
		return 0;
	/*
	 * 1.1: the compute opcodes; 1.2: the head-major KV cache the programs
	 * use; 1.3: MATMUL's bfloat16 activations (--matmul-precision bf16);
	 * 1.4: spaced weight panels (--weight-layout spaced). What a 1.2
	 * device lacks of the last two, a recompile can leave out.
	 */
	if (major != 1 || minor < 2 || (!bf16 && !spaced))
		return rbln_error_set(err, -ENOTSUP, "rank %u: device %s runs ISA %u.%u; the "
				      "compiled programs need 1.%u (compute opcodes, head-major KV "
				      "cache%s%s)", rank, device, major, minor, need,
				      cc->matmul_precision == RBLN_MATMUL_BF16 ?
				      ", bfloat16 activations" : "",
				      cc->weight_layout == RBLN_WEIGHTS_SPACED ?
				      ", spaced weight panels" : "");
	return rbln_error_set(err, -ENOTSUP, "rank %u: device %s runs ISA %u.%u; the model was "
			      "compiled with %s%s%s, whose matrix products need ISA 1.%u: compile "
			      "it with %s%s%s for this device", rank, device, major, minor,
			      bf16 ? "--matmul-precision bf16" : "", bf16 && spaced ? " and " : "",
			      spaced ? "--weight-layout spaced" : "", need,
			      bf16 ? "--matmul-precision float32" : "",
			      bf16 && spaced ? " and " : "",
			      spaced ? "--weight-layout packed16" : "");
}

static int open_rank(struct rbln_runtime *e, uint32_t r, struct rbln_error *err)
{
	struct rank *rk = &e->ranks[r];
	struct npu_device_info info;
	void *map;
	int rc;

	rc = npu_device_open(e->ctx, r, &rk->dev);
	if (rc)
		return npu_err(err, rc, "opening the device", r);
	rc = npu_device_query(rk->dev, &info);
	if (rc)
		return npu_err(err, rc, "querying the device", r);
	rc = rbln_runtime_check_isa(&e->cc, r, info.path, info.isa_major, info.isa_minor, err);
	if (rc)
		return rc;
	rc = npu_queue_create(rk->dev, NPU_PRIORITY_NORMAL, &rk->queue);
	if (rc)
		return npu_err(err, rc, "creating a queue", r);
	rc = rbln_layout_shape(&e->cc, r, &rk->shape, err);
	if (rc)
		return rc;
	if (rbln_layout_buffers(&e->cc, &rk->shape, &rk->bufs))
		return rbln_error_set(err, -ENOMEM, "out of memory");
	/*
	 * Weights, KV cache and scratch never leave this device handle:
	 * private memory, which the emulated devices back with huge pages.
	 */
	if ((rc = alloc_slot(rk, SLOT_WEIGHTS, NPU_BUFFER_PRIVATE, r, err)) ||
	    (rc = alloc_slot(rk, SLOT_KV, NPU_BUFFER_PRIVATE, r, err)) ||
	    (rc = alloc_slot(rk, SLOT_SCRATCH, NPU_BUFFER_PRIVATE, r, err)) ||
	    /* Arguments and logits: host memory the CPU writes and reads each step. */
	    (rc = alloc_slot(rk, SLOT_IO, NPU_BUFFER_HOST, r, err)))
		return rc;
	rc = npu_buffer_map(rk->buf[SLOT_IO], &map);
	if (rc)
		return npu_err(err, rc, "mapping the argument buffer", r);
	rk->io = map;
	if (e->tp > 1) {
		rc = alloc_slot(rk, SLOT_COMM + r, 0, r, err);
		if (rc)
			return rc;
		rc = npu_buffer_map(rk->buf[SLOT_COMM + r], &map);
		if (rc)
			return npu_err(err, rc, "mapping the comm buffer", r);
		rk->comm = map;
	}
	return 0;
}

/* Every rank imports every other rank's comm buffer. */
static int share_comm(struct rbln_runtime *e, struct rbln_error *err)
{
	uint32_t r, p;
	int rc;

	for (r = 0; r < e->tp; r++) {
		for (p = 0; p < e->tp; p++) {
			if (p == r)
				continue;
			rc = npu_buffer_share(e->ranks[p].buf[SLOT_COMM + p], e->ranks[r].dev,
					      &e->ranks[r].buf[SLOT_COMM + p]);
			if (rc)
				return npu_err(err, rc, "importing a peer's comm buffer", r);
		}
	}
	return 0;
}

static void fill_uses(struct rank *rk)
{
	uint32_t i;

	for (i = 0; i < rk->bufs.n_slots; i++) {
		rk->uses[i].buffer = rk->buf[i];
		rk->uses[i].access = (rk->bufs.access[i] & DRM_RBLN_BO_READ ? NPU_ACCESS_READ : 0) |
				     (rk->bufs.access[i] & DRM_RBLN_BO_WRITE ? NPU_ACCESS_WRITE : 0);
	}
}

int rbln_ranks_open(struct rbln_runtime *e, const char *devices, struct rbln_error *err)
{
	uint32_t r;
	int rc;

	e->tp = e->cc.tensor_parallel_size;
	e->ranks = calloc(e->tp, sizeof(*e->ranks));
	if (!e->ranks)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rc = open_context(e, devices, err);
	for (r = 0; r < e->tp && !rc; r++)
		rc = open_rank(e, r, err);
	if (!rc && e->tp > 1)
		rc = share_comm(e, err);
	for (r = 0; r < e->tp && !rc; r++)
		fill_uses(&e->ranks[r]);
	return rc;
}

void rbln_ranks_close(struct rbln_runtime *e)
{
	uint32_t r, i;

	for (r = 0; e->ranks && r < e->tp; r++) {
		struct rank *rk = &e->ranks[r];

		if (rk->fence) {
			npu_fence_wait(rk->fence, NPU_TIMEOUT_INFINITE);
			npu_fence_release(rk->fence);
		}
	}
	for (r = 0; e->ranks && r < e->tp; r++) {
		struct rank *rk = &e->ranks[r];

		/* Imported handles first: they refer to the peers' buffers. */
		for (i = 0; i < LAYOUT_MAX_SLOTS; i++)
			if (rk->buf[i] && i >= SLOT_COMM && i != SLOT_COMM + r)
				npu_buffer_free(rk->buf[i]);
	}
	for (r = 0; e->ranks && r < e->tp; r++) {
		struct rank *rk = &e->ranks[r];

		for (i = 0; i < LAYOUT_MAX_SLOTS; i++)
			if (rk->buf[i] && (i < SLOT_COMM || i == SLOT_COMM + r))
				npu_buffer_free(rk->buf[i]);
		if (rk->cmd)
			npu_buffer_free(rk->cmd);
		if (rk->queue)
			npu_queue_destroy(rk->queue);
		if (rk->dev)
			npu_device_close(rk->dev);
	}
	free(e->ranks);
	e->ranks = NULL;
	if (e->ctx)
		npu_context_destroy(e->ctx);
	e->ctx = NULL;
}
