// SPDX-License-Identifier: MIT
/*
 * rbln_compile(): the whole compile of a checkpoint directory, written into
 * a staging directory (output_dir.c) that replaces the output only when
 * complete.
 */
#include "rbln_compile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compile/program_build.h"
#include "compile/output_dir.h"
#include "compile/progress.h"
#include "compile/weights_build.h"
#include "config/compiled_config.h"
#include "rbln_fingerprint.h"
#include "rbln_weights.h"
#include "util/file.h"

/* The files of a checkpoint the runtime and the tools read besides the weights. */
static const char *const model_files[] = {
	"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
	"special_tokens_map.json", "chat_template.jinja", "tokenizer.model",
};

static int make_dir(const char *path, struct rbln_error *err)
{
	if (!mkdir(path, 0755))
		return 0;
	return rbln_error_set(err, -errno, "%s: cannot create directory: %s", path,
			      strerror(errno));
}

static int copy_file(const char *src, const char *dst, struct rbln_error *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc = rbln_file_read(src, &data, &len, err), fd;

	if (rc)
		return rc;
	fd = rbln_output_create(dst, err);
	if (fd < 0) {
		free(data);
		return fd;
	}
	rc = rbln_fd_write_all(fd, data, len);
	if (close(fd) && !rc)
		rc = -errno;
	if (rc)
		rbln_error_set(err, rc, "%s: cannot write: %s", dst, strerror(-rc));
	free(data);
	return rc;
}

static int copy_model_files(const char *hf_dir, const char *out_dir, struct rbln_error *err)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < sizeof(model_files) / sizeof(model_files[0]) && !rc; i++) {
		char *src = rbln_path_join(hf_dir, model_files[i]);
		char *dst = rbln_path_join(out_dir, model_files[i]);

		if (!src || !dst)
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
		else if (rbln_file_exists(src))
			rc = copy_file(src, dst, err);
		free(src);
		free(dst);
	}
	return rc;
}

/* What the build was compiled from, for caches that must not serve a stale one. */
static int write_fingerprint(const char *hf_dir, const char *out_dir, struct rbln_error *err)
{
	char fp[RBLN_FINGERPRINT_LEN + 2], *path;
	int rc = rbln_checkpoint_fingerprint(hf_dir, fp, err), fd;

	if (rc)
		return rc;
	path = rbln_path_join(out_dir, RBLN_FINGERPRINT_FILE);
	if (!path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	fd = rbln_output_create(path, err);
	if (fd >= 0) {
		strcat(fp, "\n");
		rc = rbln_fd_write_all(fd, fp, strlen(fp));
		if (close(fd) && !rc)
			rc = -errno;
		if (rc)
			rbln_error_set(err, rc, "%s: cannot write: %s", path, strerror(-rc));
	} else {
		rc = fd;
	}
	free(path);
	return rc;
}

static uint64_t new_compile_id(void)
{
	uint64_t id = 0;

	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	return id;
}

static int compile_rank(const struct rbln_compiled_config *cc, uint32_t rank,
			const struct weight_source *src, const char *out_dir,
			struct progress *pg, struct rbln_error *err)
{
	struct layout_program progs[RBLN_MAX_DECODER_BATCHES + 1];
	struct rbln_layout_shape s;
	struct rbln_layout_buffers bufs;
	char *dir = NULL, *path = NULL;
	uint32_t i, n;
	int rc;

	rc = rbln_layout_shape(cc, rank, &s, err);
	if (rc)
		return rc;
	if (rbln_layout_buffers(cc, &s, &bufs) || asprintf(&dir, "%s/rank_%u", out_dir, rank) < 0)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rc = make_dir(dir, err);
	if (rc)
		goto out;
	rbln_progress_label(pg, "rank %u/%u: weights", rank + 1, cc->tensor_parallel_size);
	if (asprintf(&path, "%s/weights.bin", dir) < 0) {
		path = NULL;
		rc = rbln_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	rc = rbln_weights_build(cc, &s, src, path, pg, err);
	n = rbln_layout_programs(cc, progs);
	for (i = 0; i < n && !rc; i++) {
		struct program_image img;

		rbln_progress_label(pg, "rank %u/%u: %s", rank + 1, cc->tensor_parallel_size,
			       progs[i].name);
		rc = rbln_program_build(cc, &s, &bufs, progs[i].tokens, progs[i].seqs, &img, err);
		if (rc) {
			rbln_error_prefix(err, "rank %u %s: ", rank, progs[i].name);
			break;
		}
		free(path);
		if (asprintf(&path, "%s/%s.rbln", dir, progs[i].name) < 0) {
			path = NULL;
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
		} else {
			rc = rbln_program_file_write(path, &img, err);
		}
		rbln_program_image_free(&img);
	}
out:
	free(path);
	free(dir);
	return rc;
}

int rbln_compile(const char *hf_dir, const char *out_dir,
		 const struct rbln_compile_options *opt, struct rbln_error *err)
{
	struct rbln_weights *ckpt = NULL;
	struct rbln_llama_config model;
	struct rbln_generation_config gen;
	struct rbln_compiled_config cc;
	struct weight_source src;
	struct rbln_layout_shape s;
	struct output_stage stage;
	struct progress pg;
	uint64_t total = 0;
	uint32_t r;
	int rc;

	rc = rbln_llama_config_load(hf_dir, &model, err);
	if (rc)
		return rc;
	rc = rbln_generation_config_load(hf_dir, &gen, err);
	if (rc)
		return rc;
	rc = rbln_compile_resolve(&model, opt, &cc, err);
	if (rc)
		return rc;
	if (!opt->dummy_weights) {
		rc = rbln_weights_open(hf_dir, &ckpt, err);
		if (!rc)
			rc = rbln_weights_check_llama(ckpt, &model, err);
		if (!rc)
			rc = rbln_weights_check_finite(ckpt, err);
		if (rc)
			goto out;
	}
	cc.compile_id = new_compile_id();
	src = (struct weight_source){ .ckpt = ckpt, .seed = opt->dummy_seed, .cfg = &model };

	rc = rbln_output_stage_begin(&stage, out_dir, err);
	if (rc)
		goto out;
	rc = copy_model_files(hf_dir, stage.path, err);
	if (!rc)
		rc = write_fingerprint(hf_dir, stage.path, err);
	for (r = 0; r < cc.tensor_parallel_size; r++)
		if (!rbln_layout_shape(&cc, r, &s, NULL))
			total += rbln_weights_build_size(&s);
	rbln_progress_init(&pg, opt->progress ? stdout : NULL, total);
	for (r = 0; r < cc.tensor_parallel_size && !rc; r++)
		rc = compile_rank(&cc, r, &src, stage.path, &pg, err);
	if (!rc)
		rc = rbln_compiled_config_write(stage.path, &cc, err);
	if (!rc)
		rc = rbln_output_stage_commit(&stage, err);
	if (!rc)
		rbln_progress_end(&pg);
	else if (pg.out)
		fputc('\n', pg.out);
	rbln_output_stage_abort(&stage);
out:
	rbln_weights_close(ckpt);
	return rc;
}
