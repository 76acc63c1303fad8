// SPDX-License-Identifier: MIT
/*
 * Opening and closing an engine: a compiled directory as is, or a Hugging
 * Face directory compiled first (into the given directory or a temporary
 * one), then devices, weights, programs and the KV block pool.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rbln_fingerprint.h"
#include "runtime/runtime_internal.h"
#include "util/file.h"

static bool has_file(const char *dir, const char *name)
{
	char *p = rbln_path_join(dir, name);
	bool ok = p && rbln_file_exists(p);

	free(p);
	return ok;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int resolve_dir(struct rbln_runtime *e, const char *model_dir,
		       const struct rbln_runtime_options *opt, struct rbln_error *err)
{
	struct rbln_compile_options defaults = { 0 };
	const char *out;
	int rc;

	if (has_file(model_dir, "rbln_config.json")) {
		e->dir = strdup(model_dir);
		return e->dir ? 0 : rbln_error_set(err, -ENOMEM, "out of memory");
	}
	rc = rbln_compiled_dir_explain(model_dir, err);
	if (rc)
		return rc;
	if (!has_file(model_dir, "config.json"))
		return rbln_error_set(err, -ENOENT, "%s: neither a compiled model (rbln_config.json) "
				      "nor a Hugging Face checkpoint (config.json)", model_dir);
	if (opt && opt->compile_dir) {
		out = opt->compile_dir;
	} else {
		const char *tmp = getenv("TMPDIR");

		if (asprintf(&e->tmp_dir, "%s/rbln-compiled-XXXXXX", tmp ? tmp : "/tmp") < 0) {
			e->tmp_dir = NULL;
			return rbln_error_set(err, -ENOMEM, "out of memory");
		}
		if (!mkdtemp(e->tmp_dir))
			return rbln_error_set(err, -errno, "%s: %s", e->tmp_dir, strerror(errno));
		out = e->tmp_dir;
	}
	rc = rbln_compile(model_dir, out, opt && opt->compile ? opt->compile : &defaults, err);
	if (rc)
		return rc;
	e->dir = strdup(out);
	return e->dir ? 0 : rbln_error_set(err, -ENOMEM, "out of memory");
}

/* generation_config.json's EOS ids win over config.json's, as in transformers. */
static int load_eos(struct rbln_runtime *e, struct rbln_error *err)
{
	struct rbln_generation_config gen;
	size_t i;
	int rc = rbln_generation_config_load(e->dir, &gen, err);

	if (rc)
		return rc;
	if (gen.present && gen.n_eos_token_ids) {
		for (i = 0; i < gen.n_eos_token_ids; i++)
			e->eos_ids[i] = gen.eos_token_ids[i];
		e->n_eos_ids = gen.n_eos_token_ids;
	} else {
		for (i = 0; i < e->cc.model.n_eos_token_ids; i++)
			e->eos_ids[i] = e->cc.model.eos_token_ids[i];
		e->n_eos_ids = e->cc.model.n_eos_token_ids;
	}
	return 0;
}

int rbln_runtime_open(const char *model_dir, const struct rbln_runtime_options *opt,
		     struct rbln_runtime **out, struct rbln_error *err)
{
	struct rbln_runtime *e = calloc(1, sizeof(*e));
	struct rbln_layout_shape s0;
	uint32_t p;
	int rc;

	if (!e)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rc = resolve_dir(e, model_dir, opt, err);
	if (!rc)
		rc = rbln_compiled_config_load(e->dir, &e->cc, err);
	if (!rc)
		rc = load_eos(e, err);
	if (rc)
		goto fail;
	e->vocab = (uint32_t)e->cc.model.vocab_size;
	e->logits = malloc((size_t)e->vocab * sizeof(float));
	rc = rbln_layout_shape(&e->cc, 0, &s0, err);
	if (!rc && (!e->logits || rbln_kv_pool_init(&e->kv, e->cc.kvcache_num_blocks,
						    e->cc.kvcache_block_size)))
		rc = rbln_error_set(err, -ENOMEM, "out of memory");
	if (rc)
		goto fail;
	e->n_progs = rbln_layout_programs(&e->cc, e->progs);
	rbln_planner_init(e);
	for (p = 0; p < e->n_progs; p++)
		rbln_layout_io(&e->cc, &s0, e->progs[p].tokens, e->progs[p].seqs, &e->io[p]);
	rc = rbln_ranks_open(e, opt ? opt->devices : NULL, err);
	if (!rc)
		rc = rbln_ranks_upload_weights(e, err);
	if (!rc)
		rc = rbln_ranks_load_programs(e, err);
	if (rc)
		goto fail;
	*out = e;
	return 0;
fail:
	rbln_runtime_close(e);
	return rc;
}

void rbln_runtime_close(struct rbln_runtime *e)
{
	if (!e)
		return;
	while (e->head)
		rbln_seq_release(e->head);
	rbln_ranks_close(e);
	rbln_kv_pool_free(&e->kv);
	if (e->tmp_dir)
		nftw(e->tmp_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(e->tmp_dir);
	free(e->dir);
	free(e->logits);
	free(e);
}

void rbln_runtime_get_info(const struct rbln_runtime *e, struct rbln_runtime_info *info)
{
	const struct rbln_seq *s;
	size_t i;

	memset(info, 0, sizeof(*info));
	info->config = &e->cc;
	info->dir = e->dir;
	info->backend = e->backend;
	info->n_devices = e->tp;
	for (i = 0; i < e->n_eos_ids; i++)
		info->eos_ids[i] = e->eos_ids[i];
	info->n_eos_ids = e->n_eos_ids;
	info->kv_blocks_total = e->kv.total;
	info->kv_blocks_free = e->kv.n_free;
	for (s = e->head; s; s = s->next) {
		info->n_waiting += rbln_seq_pending(s) > 0;
		info->n_running += s->n_blocks > 0;
	}
	info->steps = e->steps;
	for (i = 0; i < RBLN_MAX_DECODER_BATCHES; i++)
		info->decode_steps[i] = e->decode_steps[i];
}
