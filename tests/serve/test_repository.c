// SPDX-License-Identifier: MIT
/*
 * Model repositories: the RBLN tutorial's layout (compiled model inside the
 * version directory), model path resolution, compiled vs Hugging Face
 * directories, model.json checked against rbln_config.json, versions.
 */
#include "serve_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve/repository/repository.h"

struct fx {
	char *root;
	char *repo;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->root = tmpdir_new();
	f->repo = path_join(f->root, "model_repository");
	make_dir(f->repo);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	tmpdir_remove(f->root);
	free(f->root);
	free(f->repo);
	free(f);
	return 0;
}

/* A compiled model directory: rbln_config.json plus the tokenizer. */
static void make_compiled(const char *dir, const char *rbln_config)
{
	char *p, *tok;

	make_dir(dir);
	p = path_join(dir, "rbln_config.json");
	write_text(p, rbln_config);
	free(p);
	p = path_join(dir, "tokenizer.json");
	tok = path_join(model_path("tiny-llama3"), "tokenizer.json");
	assert_int_equal(symlink(tok, p), 0);
	free(tok);
	free(p);
}

static char *model_dir(struct fx *f, const char *name, const char *config)
{
	char *d = path_join(f->repo, name), *p;

	make_dir(d);
	p = path_join(d, "config.pbtxt");
	write_text(p, config);
	free(p);
	return d;
}

static void put(const char *dir, const char *name, const char *text)
{
	char *p = path_join(dir, name);

	write_text(p, text);
	free(p);
}

static const char *tutorial_rbln_config =
	"{\"batch_size\": 1, \"max_seq_len\": 131072, \"tensor_parallel_size\": 8, "
	"\"kvcache_partition_len\": 16384, \"kvcache_block_size\": 16384, "
	"\"decoder_batch_sizes\": [1]}";

/* The tutorial's layout and model.json verbatim, then with the path it needs. */
static void test_rbln_tutorial_layout(void **state)
{
	struct fx *f = *state;
	struct serve_repository repo;
	struct rbln_error err = { 0 };
	char *text = read_text(fixture("repo-rbln/vllm_model/config.pbtxt"), NULL);
	char *mj = read_text(fixture("repo-rbln/vllm_model/1/model.json"), NULL);
	char *d = model_dir(f, "vllm_model", text);
	char *v = path_join(d, "1"), *c = path_join(v, "Llama-3.1-8B-Instruct");
	const struct serve_model_entry *e;

	make_dir(v);
	make_compiled(c, tutorial_rbln_config);
	put(v, "model.json", mj);
	assert_int_equal(serve_repository_load(f->repo, &repo, &err), -ENOENT);
	assert_contains_all(err.msg, "model.json: field 'model': "
			    "/ABSOLUTE/PATH/TO/Llama-3.1-8B-Instruct does not exist",
			    "write \"model\": \"Llama-3.1-8B-Instruct\"", NULL);

	put(v, "model.json", "{\"model\": \"Llama-3.1-8B-Instruct\", \"max_num_seqs\": 1, "
	    "\"max_num_batched_tokens\": 131072, \"max_model_len\": 131072, "
	    "\"block_size\": 16384, \"device\": \"rbln\"}");
	if (serve_repository_load(f->repo, &repo, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(repo.n, 1);
	e = &repo.models[0];
	assert_string_equal(e->name, "vllm_model");
	assert_string_equal(e->version, "1");
	assert_int_equal(e->plan.kind, SERVE_SRC_COMPILED);
	assert_string_equal(e->plan.compiled_dir, c);
	assert_string_equal(e->plan.tokenizer_dir, c);
	assert_int_equal(e->plan.max_num_seqs, 1);
	assert_int_equal(e->plan.max_model_len, 131072);
	assert_int_equal(e->plan.max_num_batched_tokens, 131072);
	assert_int_equal(e->plan.block_size, 16384);
	assert_int_equal(e->plan.tensor_parallel_size, 8);
	assert_int_equal(e->plan.compiled.n_decoder_batch_sizes, 1);
	serve_repository_free(&repo);

	/* The absolute form the tutorial asks for works as well. */
	{
		char buf[4096];

		snprintf(buf, sizeof(buf), "{\"model\": \"%s\", \"max_num_seqs\": 1}", c);
		put(v, "model.json", buf);
		if (serve_repository_load(f->repo, &repo, &err))
			fail_msg("%s", err.msg);
		assert_int_equal(repo.models[0].plan.max_num_batched_tokens, 131072);
		serve_repository_free(&repo);
	}
	free(text);
	free(mj);
	free(d);
	free(v);
	free(c);
}

static void test_checks_against_compiled(void **state)
{
	struct fx *f = *state;
	struct serve_repository repo;
	struct rbln_error err = { 0 };
	char *d = model_dir(f, "m", "backend: \"vllm\"\n");
	char *v = path_join(d, "1"), *c = path_join(v, "compiled");
	static const struct {
		const char *mj;
		const char *expect;
	} cases[] = {
		{ "{\"model\": \"compiled\", \"max_num_seqs\": 2}",
		  "field 'max_num_seqs' (2) must equal the compiled batch_size (1)" },
		{ "{\"model\": \"compiled\", \"max_model_len\": 200000}",
		  "field 'max_model_len' (200000) exceeds the compiled max_seq_len (131072)" },
		{ "{\"model\": \"compiled\", \"block_size\": 4096}",
		  "field 'block_size' (4096) must equal the compiled KV block size (16384" },
		{ "{\"model\": \"compiled\", \"tensor_parallel_size\": 4}",
		  "field 'tensor_parallel_size' (4) must equal the compiled tensor_parallel_size (8)" },
		{ "{\"model\": \"nothere\"}",
		  "does not download from the Hugging Face Hub" },
		{ "{\"model\": \"compiled\", \"tokenizer\": \"nothere\"}",
		  "field 'tokenizer': no tokenizer.json in" },
	};
	size_t i;

	make_dir(v);
	make_compiled(c, tutorial_rbln_config);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		put(v, "model.json", cases[i].mj);
		assert_true(serve_repository_load(f->repo, &repo, &err) < 0);
		assert_contains_all(err.msg, "model.json", cases[i].expect, NULL);
	}
	/* Defaults come from the compiled model. */
	put(v, "model.json", "{\"model\": \"compiled\", \"max_model_len\": 4096}");
	if (serve_repository_load(f->repo, &repo, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(repo.models[0].plan.max_num_seqs, 1);
	assert_int_equal(repo.models[0].plan.max_model_len, 4096);
	assert_int_equal(repo.models[0].plan.max_num_batched_tokens, 4096);
	serve_repository_free(&repo);
	free(d);
	free(v);
	free(c);
}

/* A Hugging Face checkpoint: compiled on first load, by the engine's compiler. */
static void test_hf_checkpoint(void **state)
{
	struct fx *f = *state;
	struct serve_repository repo;
	struct rbln_error err = { 0 };
	char *d = model_dir(f, "tiny", "backend: \"vllm\"\n");
	char *v = path_join(d, "1");
	char buf[4096];
	const struct serve_model_entry *e;

	make_dir(v);
	snprintf(buf, sizeof(buf), "{\"model\": \"%s\", \"max_num_seqs\": 4, \"block_size\": 512}",
		 model_path("tiny-llama3"));
	put(v, "model.json", buf);
	if (serve_repository_load(f->repo, &repo, &err))
		fail_msg("%s", err.msg);
	e = &repo.models[0];
	assert_int_equal(e->plan.kind, SERVE_SRC_HF);
	assert_int_equal(e->plan.max_position_embeddings, 2048);
	assert_int_equal(e->plan.max_model_len, 2048);
	assert_int_equal(e->plan.max_num_seqs, 4);
	assert_int_equal(e->plan.tensor_parallel_size, 1);
	assert_string_equal(e->plan.tokenizer_dir, model_path("tiny-llama3"));
	assert_contains_all(e->plan.compiled_dir, "/1/.rbln-compiled/tiny-llama3-bs4-len2048-tp1-blk512",
			    NULL);
	/* Without the engine's compiler the load says what to do. */
	assert_int_equal(serve_compile_on_first_load(NULL, &repo.models[0].mj,
						     &repo.models[0].plan, &err), -ENOSYS);
	assert_contains_all(err.msg, "Hugging Face checkpoint", "rbln-compile", NULL);
	serve_repository_free(&repo);

	snprintf(buf, sizeof(buf), "{\"model\": \"%s\", \"max_model_len\": 4096}",
		 model_path("tiny-llama3"));
	put(v, "model.json", buf);
	assert_true(serve_repository_load(f->repo, &repo, &err) < 0);
	assert_contains_all(err.msg, "field 'max_model_len' (4096) exceeds the model's "
			    "max_position_embeddings (2048)", NULL);

	snprintf(buf, sizeof(buf), "{\"model\": \"%s\"}", f->root);
	put(v, "model.json", buf);
	assert_true(serve_repository_load(f->repo, &repo, &err) < 0);
	assert_contains_all(err.msg, "is neither a compiled model (rbln_config.json) nor a Hugging "
			    "Face checkpoint", NULL);

	/* The staging directory of a killed compile is named for what it is. */
	{
		char *stage = path_join(f->root, ".tiny.rbln-partial-Ab12Cd");

		make_dir(stage);
		snprintf(buf, sizeof(buf), "{\"model\": \"%s\"}", stage);
		put(v, "model.json", buf);
		assert_true(serve_repository_load(f->repo, &repo, &err) < 0);
		assert_contains_all(err.msg, "field 'model'", "unfinished output of a compile", NULL);
		free(stage);
	}
	free(d);
	free(v);
}

/* A checkpoint named `ckpt` under `parent`: the tiny model's files, config.json copied. */
static char *checkpoint_copy(const char *parent, const char *extra_space)
{
	static const char *const files[] = {
		"tokenizer.json", "tokenizer_config.json", "generation_config.json",
		"model.safetensors.index.json", "model-00001-of-00003.safetensors",
		"model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors",
	};
	char *dir = path_join(parent, "ckpt"), *src, *dst, *text;
	size_t i, len;
	FILE *f;

	make_dir(dir);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		src = path_join(model_path("tiny-llama3"), files[i]);
		dst = path_join(dir, files[i]);
		assert_int_equal(symlink(src, dst), 0);
		free(src);
		free(dst);
	}
	src = path_join(model_path("tiny-llama3"), "config.json");
	f = fopen(src, "rb");
	assert_non_null(f);
	text = malloc(1 << 16);
	len = fread(text, 1, 1 << 16, f);
	fclose(f);
	text[len] = '\0';
	dst = path_join(dir, "config.json");
	f = fopen(dst, "wb");
	fputs(text, f);
	fputs(extra_space, f);
	fclose(f);
	free(text);
	free(src);
	free(dst);
	return dir;
}

static char *plan_compiled_dir(struct fx *f, const char *ckpt, struct serve_repository *repo)
{
	struct rbln_error err = { 0 };
	char *d = path_join(f->repo, "tiny"), *v = path_join(d, "1"), *m = path_join(v, "model.json");
	char buf[4096], *dir;

	snprintf(buf, sizeof(buf), "{\"model\": \"%s\", \"max_num_seqs\": 4, "
		 "\"block_size\": 512}", ckpt);
	write_text(m, buf);
	if (serve_repository_load(f->repo, repo, &err))
		fail_msg("%s", err.msg);
	dir = strdup(repo->models[0].plan.compiled_dir);
	free(d);
	free(v);
	free(m);
	return dir;
}

/*
 * The compiled-model cache is keyed by the checkpoint's fingerprint: another
 * checkpoint of the same name, or the same one changed, never reuses a
 * build, and a build there that is not this checkpoint's is not served.
 */
static void test_cache_key_follows_checkpoint(void **state)
{
	struct fx *f = *state;
	struct serve_repository repo;
	struct rbln_error err = { 0 };
	char *a = path_join(f->root, "a"), *b = path_join(f->root, "b");
	char *ca, *cb, *ca2, *ckpt_a, *ckpt_b, *cfg, *fp;
	char *d = model_dir(f, "tiny", "backend: \"vllm\"\n"), *v = path_join(d, "1");

	make_dir(v);
	make_dir(a);
	make_dir(b);
	ckpt_a = checkpoint_copy(a, "");
	ckpt_b = checkpoint_copy(b, " ");
	ca = plan_compiled_dir(f, ckpt_a, &repo);
	serve_repository_free(&repo);
	cb = plan_compiled_dir(f, ckpt_b, &repo);
	serve_repository_free(&repo);
	assert_contains_all(ca, "/.rbln-compiled/ckpt-bs4-len2048-tp1-blk512-", NULL);
	assert_string_not_equal(ca, cb);

	/* A build of checkpoint b placed where a's belongs is not reused. */
	ca2 = plan_compiled_dir(f, ckpt_a, &repo);
	assert_string_equal(ca, ca2);
	cfg = path_join(v, ".rbln-compiled");
	make_dir(cfg);
	free(cfg);
	make_compiled(ca, "{\"batch_size\": 4, \"max_seq_len\": 2048, "
		      "\"tensor_parallel_size\": 1, \"kvcache_partition_len\": 512, "
		      "\"kvcache_block_size\": 512, \"decoder_batch_sizes\": [4]}");
	fp = path_join(ca, RBLN_FINGERPRINT_FILE);
	write_text(fp, "0000000000000000000000000000000000000000000000000000000000000000\n");
	/* Not reused: it goes to the compiler (absent here, hence ENOSYS). */
	assert_int_equal(serve_compile_on_first_load(NULL, &repo.models[0].mj,
						     &repo.models[0].plan, &err), -ENOSYS);
	/* With the right fingerprint it is reused. */
	cfg = malloc(RBLN_FINGERPRINT_LEN + 2);
	snprintf(cfg, RBLN_FINGERPRINT_LEN + 2, "%s\n", repo.models[0].plan.fingerprint);
	write_text(fp, cfg);
	if (serve_compile_on_first_load(NULL, &repo.models[0].mj, &repo.models[0].plan, &err))
		fail_msg("%s", err.msg);
	serve_repository_free(&repo);
	free(cfg);
	free(fp);
	free(ca);
	free(ca2);
	free(cb);
	free(ckpt_a);
	free(ckpt_b);
	free(a);
	free(b);
	free(d);
	free(v);
}

static void test_versions(void **state)
{
	struct fx *f = *state;
	struct serve_model_config cfg;
	struct rbln_error err = { 0 };
	char *d = path_join(f->repo, "m"), *version, *p;
	const char *const dirs[] = { "1", "2", "10", "notes", "-3" };
	size_t i;

	make_dir(d);
	assert_int_equal(serve_model_config_default("m", &cfg, &err), 0);
	assert_int_equal(serve_select_version(d, &cfg, &version, &err), -ENOENT);
	assert_contains_all(err.msg, "no version directory", NULL);
	for (i = 0; i < 5; i++) {
		p = path_join(d, dirs[i]);
		make_dir(p);
		free(p);
	}
	assert_int_equal(serve_select_version(d, &cfg, &version, &err), 0);
	assert_string_equal(version, "10");
	free(version);
	serve_model_config_free(&cfg);

	{
		const char *spec2 = "backend: \"vllm\" version_policy { specific { versions: [2] } }";
		const char *spec5 = "backend: \"vllm\" version_policy { specific { versions: [5] } }";
		const char *spec12 = "backend: \"vllm\" version_policy { specific { versions: [1, 2] } }";
		const char *all = "backend: \"vllm\" version_policy { all { } }";
		const char *latest2 = "backend: \"vllm\" version_policy { latest { num_versions: 2 } }";

		assert_int_equal(serve_model_config_parse(spec2, strlen(spec2), "c", "m", &cfg, &err), 0);
		assert_int_equal(serve_select_version(d, &cfg, &version, &err), 0);
		assert_string_equal(version, "2");
		free(version);
		serve_model_config_free(&cfg);
		assert_int_equal(serve_model_config_parse(spec5, strlen(spec5), "c", "m", &cfg, &err), 0);
		assert_int_equal(serve_select_version(d, &cfg, &version, &err), -ENOENT);
		assert_contains_all(err.msg, "selects version 5", NULL);
		serve_model_config_free(&cfg);
		assert_int_equal(serve_model_config_parse(spec12, strlen(spec12), "c", "m", &cfg, &err), 0);
		assert_int_equal(serve_select_version(d, &cfg, &version, &err), -EINVAL);
		assert_contains_all(err.msg, "selects 2 versions", "one version", NULL);
		serve_model_config_free(&cfg);
		assert_int_equal(serve_model_config_parse(all, strlen(all), "c", "m", &cfg, &err), 0);
		assert_int_equal(serve_select_version(d, &cfg, &version, &err), -EINVAL);
		assert_contains_all(err.msg, "version_policy all selects 3 versions", NULL);
		serve_model_config_free(&cfg);
		assert_int_equal(serve_model_config_parse(latest2, strlen(latest2), "c", "m", &cfg, &err), 0);
		assert_int_equal(serve_select_version(d, &cfg, &version, &err), -EINVAL);
		assert_contains_all(err.msg, "num_versions: 2", NULL);
		serve_model_config_free(&cfg);
	}
	free(d);
}

static void test_several_models_and_missing_files(void **state)
{
	struct fx *f = *state;
	struct serve_repository repo;
	struct rbln_error err = { 0 };
	const char *names[] = { "zeta", "alpha" };
	char buf[4096];
	size_t i;

	snprintf(buf, sizeof(buf), "{\"model\": \"%s\"}", model_path("tiny-llama2"));
	for (i = 0; i < 2; i++) {
		char *d = model_dir(f, names[i], "backend: \"vllm\"\n"), *v = path_join(d, "1");

		make_dir(v);
		put(v, "model.json", buf);
		free(d);
		free(v);
	}
	put(f->repo, "README", "not a model");
	if (serve_repository_load(f->repo, &repo, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(repo.n, 2);
	assert_string_equal(repo.models[0].name, "alpha");
	assert_string_equal(repo.models[1].name, "zeta");
	assert_int_equal(repo.models[1].plan.max_model_len, 1024);
	serve_repository_free(&repo);

	{
		char *d = path_join(f->repo, "nocfg");

		make_dir(d);
		assert_true(serve_repository_load(f->repo, &repo, &err) < 0);
		assert_contains_all(err.msg, "nocfg/config.pbtxt is missing", NULL);
		tmpdir_remove(d);
		free(d);
	}
	{
		char *d = model_dir(f, "py", "backend: \"python\"\ninput [ { name: \"prompt\" "
				    "data_type: TYPE_STRING dims: [1] } ]\noutput [ { name: "
				    "\"generated_text\" data_type: TYPE_STRING dims: [1] } ]\n");
		char *v = path_join(d, "1");

		make_dir(v);
		put(v, "model.py", "# Triton Python backend code\n");
		assert_true(serve_repository_load(f->repo, &repo, &err) < 0);
		assert_contains_all(err.msg, "py/1/model.json is missing",
				    "does not run model.py", NULL);
		tmpdir_remove(d);
		free(d);
		free(v);
	}
	{
		char *empty = path_join(f->root, "empty");

		make_dir(empty);
		assert_true(serve_repository_load(empty, &repo, &err) < 0);
		assert_contains_all(err.msg, "has no models", NULL);
		free(empty);
	}
	assert_true(serve_repository_load("/nonexistent/repo", &repo, &err) < 0);
	assert_contains_all(err.msg, "is not a directory", NULL);
}

static void test_single_model(void **state)
{
	struct serve_repository repo;
	struct serve_model_json mj = { 0 };
	struct rbln_error err = { 0 };

	(void)state;
	mj.file = strdup("command line");
	mj.model = strdup(model_path("tiny-llama3"));
	mj.max_num_seqs = 8;
	if (serve_repository_single("tiny-llama3", &mj, &repo, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(repo.n, 1);
	assert_string_equal(repo.models[0].config.name, "tiny-llama3");
	assert_string_equal(repo.models[0].version, "1");
	assert_int_equal(repo.models[0].plan.max_num_seqs, 8);
	serve_repository_free(&repo);
	serve_model_json_free(&mj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rbln_tutorial_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checks_against_compiled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hf_checkpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_key_follows_checkpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_versions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_several_models_and_missing_files, setup, teardown),
		cmocka_unit_test(test_single_model),
	};

	return cmocka_run_group_tests_name("serve-repository", tests, NULL, NULL);
}
