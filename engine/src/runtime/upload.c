// SPDX-License-Identifier: MIT
/*
 * Putting a compiled model on its devices, once: each rank's weight file
 * goes through a staging buffer on the device's NUMA node into the
 * device's weight buffer, and each program is checked (header against the
 * configuration, stream against the rank's buffers with the device
 * model's validator) and copied into the rank's command buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "program/files.h"
#include "program/isa_validate.h"
#include "runtime/runtime_internal.h"
#include "util/file.h"

#define STAGING_BYTES (16u << 20)

static int upload_rank(struct rbln_runtime *e, uint32_t r, struct rbln_error *err)
{
	struct rank *rk = &e->ranks[r];
	uint64_t size = rk->bufs.size[SLOT_WEIGHTS], off;
	struct weight_file_header hdr;
	unsigned char *staging = NULL, *dst;
	char *path = NULL;
	struct stat st;
	void *map;
	int fd = -1, rc;

	if (asprintf(&path, "%s/rank_%u/weights.bin", e->dir, r) < 0)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	fd = rbln_file_open_regular(path, &st, err);
	if (fd < 0) {
		rc = fd;
		goto out;
	}
	memset(&hdr, 0, sizeof(hdr));
	if ((uint64_t)st.st_size >= sizeof(hdr) && rbln_fd_read_at(fd, &hdr, sizeof(hdr), 0)) {
		rc = rbln_error_set(err, -EIO, "%s: cannot read the header", path);
		goto out;
	}
	rc = rbln_weight_file_check(path, &hdr, (uint64_t)st.st_size, e->cc.compile_id, r, e->tp,
			       (uint32_t)e->cc.dtype, size, err);
	if (rc)
		goto out;
	rc = npu_buffer_map(rk->buf[SLOT_WEIGHTS], &map);
	if (rc) {
		rc = rbln_error_set(err, rc, "rank %u: mapping the weight buffer: %s", r,
				    npu_strerror(rc));
		goto out;
	}
	dst = map;
	staging = npu_host_alloc(rk->dev, STAGING_BYTES);
	if (!staging) {
		rc = rbln_error_set(err, -ENOMEM, "rank %u: staging memory: %s", r,
				    npu_error_detail());
		goto out;
	}
	for (off = 0; off < size; off += STAGING_BYTES) {
		size_t n = size - off < STAGING_BYTES ? (size_t)(size - off) : STAGING_BYTES;

		rc = rbln_fd_read_at(fd, staging, n, off);
		if (rc) {
			rc = rbln_error_set(err, rc, "%s: read failed at %llu: %s", path,
					    (unsigned long long)off, strerror(-rc));
			goto out;
		}
		memcpy(dst + off, staging, n);
	}
out:
	if (staging)
		npu_host_free(staging, STAGING_BYTES);
	if (fd >= 0)
		close(fd);
	free(path);
	return rc;
}

int rbln_ranks_upload_weights(struct rbln_runtime *e, struct rbln_error *err)
{
	uint32_t r;
	int rc = 0;

	for (r = 0; r < e->tp && !rc; r++)
		rc = upload_rank(e, r, err);
	return rc;
}

/* Header and slot table against what this configuration and rank need. */
static int check_program(const struct rbln_runtime *e, const struct rank *rk, uint32_t r,
			 const struct layout_program *lp, const struct program_image *img,
			 const char *path, struct rbln_error *err)
{
	const struct program_file_header *h = &img->hdr;
	uint32_t i;

	if (h->compile_id != e->cc.compile_id)
		return rbln_error_set(err, -EINVAL, "%s: from another compile (id %016llx, "
				      "rbln_config.json says %016llx)", path,
				      (unsigned long long)h->compile_id,
				      (unsigned long long)e->cc.compile_id);
	if (h->rank != r || h->tp != e->tp)
		return rbln_error_set(err, -EINVAL, "%s: holds rank %u of %u, expected rank %u of "
				      "%u", path, h->rank, h->tp, r, e->tp);
	if (h->tokens != lp->tokens || h->seqs != lp->seqs)
		return rbln_error_set(err, -EINVAL, "%s: shape %u tokens x %u sequences, the "
				      "configuration says %u x %u", path, h->tokens, h->seqs,
				      lp->tokens, lp->seqs);
	if (h->n_slots != rk->bufs.n_slots)
		return rbln_error_set(err, -EINVAL, "%s: %u buffer slots, expected %u", path,
				      h->n_slots, rk->bufs.n_slots);
	for (i = 0; i < h->n_slots; i++)
		if (img->slots[i].size != rk->bufs.size[i] ||
		    img->slots[i].access != rk->bufs.access[i])
			return rbln_error_set(err, -EINVAL, "%s: slot %u is %llu bytes with access "
					      "%u, expected %llu bytes with access %u", path, i,
					      (unsigned long long)img->slots[i].size,
					      img->slots[i].access,
					      (unsigned long long)rk->bufs.size[i],
					      rk->bufs.access[i]);
	return 0;
}

static int load_rank_programs(struct rbln_runtime *e, uint32_t r, struct rbln_error *err)
{
	struct rank *rk = &e->ranks[r];
	struct program_image img[ENGINE_MAX_PROGRAMS];
	uint64_t total = 0, sizes[LAYOUT_MAX_SLOTS];
	unsigned char *cmd;
	char *path = NULL;
	uint32_t p, i;
	void *map;
	int rc = 0;

	memset(img, 0, sizeof(img));
	for (i = 0; i < rk->bufs.n_slots; i++)
		sizes[i] = npu_buffer_size(rk->buf[i]);
	for (p = 0; p < e->n_progs && !rc; p++) {
		if (asprintf(&path, "%s/rank_%u/%s.rbln", e->dir, r, e->progs[p].name) < 0) {
			path = NULL;
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
			break;
		}
		rc = rbln_program_file_read(path, &img[p], err);
		if (!rc)
			rc = check_program(e, rk, r, &e->progs[p], &img[p], path, err);
		if (!rc)
			rc = rbln_program_validate_stream(img[p].stream, img[p].hdr.stream_size,
						     sizes, rk->bufs.access, rk->bufs.n_slots,
						     path, err);
		rk->prog_offset[p] = total;
		rk->prog_size[p] = img[p].hdr.stream_size;
		total += (img[p].hdr.stream_size + 63) / 64 * 64;
		free(path);
		path = NULL;
	}
	if (!rc) {
		rc = npu_buffer_alloc(rk->dev, total, NPU_BUFFER_HOST, &rk->cmd);
		if (!rc)
			rc = npu_buffer_map(rk->cmd, &map);
		if (rc) {
			rbln_error_set(err, rc, "rank %u: command buffer: %s", r, npu_strerror(rc));
		} else {
			cmd = map;
			for (p = 0; p < e->n_progs; p++)
				memcpy(cmd + rk->prog_offset[p], img[p].stream, rk->prog_size[p]);
		}
	}
	for (p = 0; p < e->n_progs; p++)
		rbln_program_image_free(&img[p]);
	return rc;
}

int rbln_ranks_load_programs(struct rbln_runtime *e, struct rbln_error *err)
{
	uint32_t r;
	int rc = 0;

	for (r = 0; r < e->tp && !rc; r++)
		rc = load_rank_programs(e, r, err);
	return rc;
}
