// SPDX-License-Identifier: MIT
/*
 * Compiling a Hugging Face checkpoint on its first load: the one place
 * rbln-serve calls the engine's compiler.  The output directory is named
 * by the compile arguments (model_source.c), so a second start reuses it
 * and a changed model.json compiles afresh instead of serving a stale build.
 */
#include "model_source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/file.h"

static int make_parents(const char *path, struct rbln_error *err)
{
	char *p = strdup(path), *s;

	if (!p)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	for (s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST) {
			int e = errno;

			rbln_error_set(err, -e, "cannot create %s: %s", p, strerror(e));
			free(p);
			return -e;
		}
		*s = '/';
	}
	free(p);
	return 0;
}

int serve_compile_on_first_load(const struct rbln_serving_ops *ops,
				const struct serve_model_json *mj, struct serve_model_plan *plan,
				struct rbln_error *err)
{
	struct rbln_compile_spec spec;
	bool have;
	int rc;

	if (plan->kind != SERVE_SRC_HF)
		return 0;
	rc = rbln_compiled_dir_check(plan->compiled_dir, plan->fingerprint, err);
	if (rc < 0) {
		/* A cache entry that is not this checkpoint's build is rebuilt. */
		fprintf(stderr, "rbln-serve: %s; compiling it again\n", err ? err->msg : "");
	}
	have = rc > 0;
	if (!have) {
		if (!ops || !ops->compile)
			return rbln_error_set(err, -ENOSYS, "%s is a Hugging Face checkpoint and "
					      "the engine compiler is not built into rbln-serve: "
					      "compile it with rbln-compile and point model.json's "
					      "'model' at the output", plan->source_dir);
		rc = make_parents(plan->compiled_dir, err);
		if (rc)
			return rc;
		memset(&spec, 0, sizeof(spec));
		spec.hf_dir = plan->source_dir;
		spec.out_dir = plan->compiled_dir;
		spec.batch_size = plan->max_num_seqs;
		spec.max_seq_len = plan->max_model_len;
		spec.tensor_parallel_size = plan->tensor_parallel_size;
		spec.kvcache_partition_len = plan->block_size;
		fprintf(stderr, "rbln-serve: compiling %s into %s\n", plan->source_dir,
			plan->compiled_dir);
		rc = ops->compile(&spec, err);
		if (rc) {
			rbln_error_prefix(err, "compiling %s: ", plan->source_dir);
			return rc;
		}
	}
	return serve_model_plan_compiled(mj, plan, err);
}
