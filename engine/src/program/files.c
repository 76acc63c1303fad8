// SPDX-License-Identifier: MIT
/* Reading and writing the weight and program files (see files.h). */
#include "program/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rbln_accel.h"
#include "util/file.h"

_Static_assert(sizeof(struct weight_file_header) == 48, "weight header layout");
_Static_assert(sizeof(struct program_file_header) == 56, "program header layout");
_Static_assert(sizeof(struct program_slot) == 16, "slot layout");

int rbln_program_file_write(const char *path, const struct program_image *img,
		       struct rbln_error *err)
{
	size_t plen = strlen(path) + 8;
	char *tmp = malloc(plen);
	int fd, rc;

	if (!tmp)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	snprintf(tmp, plen, "%s.tmp", path);
	/* Exclusive and no-follow: a planted file or symlink fails the write. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = rbln_error_set(err, -errno, "%s: cannot create: %s", tmp, strerror(errno));
		free(tmp);
		return rc;
	}
	rc = rbln_fd_write_all(fd, &img->hdr, sizeof(img->hdr));
	if (!rc)
		rc = rbln_fd_write_all(fd, img->slots, sizeof(*img->slots) * img->hdr.n_slots);
	if (!rc)
		rc = rbln_fd_write_all(fd, img->stream, img->hdr.stream_size);
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		unlink(tmp);
		rbln_error_set(err, rc, "%s: cannot write: %s", path, strerror(-rc));
	}
	free(tmp);
	return rc;
}

static int check_header(const char *path, const struct program_file_header *h,
			uint64_t file_size, struct rbln_error *err)
{
	uint64_t want;

	if (memcmp(h->magic, PROGRAM_FILE_MAGIC, sizeof(h->magic)))
		return rbln_error_set(err, -EINVAL, "%s: not a program file (bad magic)", path);
	if (h->version != RBLN_FILES_VERSION || h->header_size != sizeof(*h))
		return rbln_error_set(err, -EINVAL, "%s: program format version %u (header %u "
				      "bytes); this engine reads version %u: recompile the model",
				      path, h->version, h->header_size, RBLN_FILES_VERSION);
	if (!h->n_slots || h->n_slots > PROGRAM_MAX_SLOTS)
		return rbln_error_set(err, -EINVAL, "%s: %u buffer slots (1 to %u allowed)", path,
				      h->n_slots, PROGRAM_MAX_SLOTS);
	if (h->stream_size < 16 || h->stream_size % 8 || h->stream_size > (64u << 20))
		return rbln_error_set(err, -EINVAL, "%s: stream size %llu is not a multiple of 8 "
				      "from 16 bytes to 64 MiB", path,
				      (unsigned long long)h->stream_size);
	want = sizeof(*h) + (uint64_t)h->n_slots * sizeof(struct program_slot) + h->stream_size;
	if (file_size != want)
		return rbln_error_set(err, -EINVAL, "%s: file is %llu bytes, its header says %llu%s",
				      path, (unsigned long long)file_size,
				      (unsigned long long)want,
				      file_size < want ? " (truncated?)" : "");
	return 0;
}

int rbln_program_file_read(const char *path, struct program_image *img, struct rbln_error *err)
{
	struct stat st;
	int fd, rc;
	uint32_t i;

	memset(img, 0, sizeof(*img));
	fd = rbln_file_open_regular(path, &st, err);
	if (fd < 0)
		return fd;
	rc = rbln_fd_read_at(fd, &img->hdr, sizeof(img->hdr), 0);
	if (rc) {
		rc = rbln_error_set(err, -EINVAL, "%s: shorter than a program header", path);
		goto out;
	}
	rc = check_header(path, &img->hdr, (uint64_t)st.st_size, err);
	if (rc)
		goto out;
	img->slots = calloc(img->hdr.n_slots, sizeof(*img->slots));
	/* aligned_alloc: the stream is parsed in place as 8-aligned structures. */
	img->stream = aligned_alloc(8, img->hdr.stream_size);
	if (!img->slots || !img->stream) {
		rc = rbln_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	rc = rbln_fd_read_at(fd, img->slots, sizeof(*img->slots) * img->hdr.n_slots,
			     sizeof(img->hdr));
	if (!rc)
		rc = rbln_fd_read_at(fd, img->stream, img->hdr.stream_size,
				     sizeof(img->hdr) +
				     sizeof(*img->slots) * img->hdr.n_slots);
	if (rc) {
		rc = rbln_error_set(err, rc, "%s: read failed: %s", path, strerror(-rc));
		goto out;
	}
	for (i = 0; i < img->hdr.n_slots; i++) {
		const struct program_slot *s = &img->slots[i];

		if (!s->access || s->access & ~(DRM_RBLN_BO_READ | DRM_RBLN_BO_WRITE) ||
		    s->reserved) {
			rc = rbln_error_set(err, -EINVAL, "%s: slot %u has access bits 0x%x "
					    "(read 1, write 2)", path, i, s->access);
			goto out;
		}
	}
out:
	close(fd);
	if (rc)
		rbln_program_image_free(img);
	return rc;
}

void rbln_program_image_free(struct program_image *img)
{
	free(img->slots);
	free(img->stream);
	img->slots = NULL;
	img->stream = NULL;
}

int rbln_weight_file_check(const char *path, const struct weight_file_header *h, uint64_t file_size,
		      uint64_t compile_id, uint32_t rank, uint32_t tp, uint32_t dtype,
		      uint64_t expected_size, struct rbln_error *err)
{
	if (file_size < sizeof(*h) || memcmp(h->magic, WEIGHT_FILE_MAGIC, sizeof(h->magic)))
		return rbln_error_set(err, -EINVAL, "%s: not a weight file (bad magic)", path);
	if (h->version != RBLN_FILES_VERSION || h->header_size != sizeof(*h))
		return rbln_error_set(err, -EINVAL, "%s: weight format version %u; this engine "
				      "reads version %u: recompile the model", path, h->version,
				      RBLN_FILES_VERSION);
	if (h->compile_id != compile_id)
		return rbln_error_set(err, -EINVAL, "%s: from another compile (id %016llx, "
				      "rbln_config.json says %016llx)", path,
				      (unsigned long long)h->compile_id,
				      (unsigned long long)compile_id);
	if (h->rank != rank || h->tp != tp)
		return rbln_error_set(err, -EINVAL, "%s: holds rank %u of %u, expected rank %u of "
				      "%u", path, h->rank, h->tp, rank, tp);
	if (h->dtype != dtype)
		return rbln_error_set(err, -EINVAL, "%s: weight dtype %u differs from "
				      "rbln_config.json's", path, h->dtype);
	if (h->file_size != expected_size || file_size != expected_size)
		return rbln_error_set(err, -EINVAL, "%s: %llu bytes (header says %llu), the "
				      "model needs %llu%s", path, (unsigned long long)file_size,
				      (unsigned long long)h->file_size,
				      (unsigned long long)expected_size,
				      file_size < expected_size ? ": truncated?" : "");
	return 0;
}
