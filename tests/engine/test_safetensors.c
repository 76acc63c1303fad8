// SPDX-License-Identifier: MIT
/*
 * safetensors loading: the sharded tiny-llama3 and single-file tiny-llama2
 * checkpoints, and malformed files that must be rejected with an error
 * naming the file and the tensor.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rbln_safetensors.h"
#include "rbln_weights.h"
#include "test_common.h"

/* Decodes one stored element to float (little-endian, as the format is). */
static float element(const struct rbln_tensor *t, size_t i)
{
	const unsigned char *p = (const unsigned char *)t->data + i * rbln_dtype_size(t->dtype);
	uint32_t bits;
	float f;

	if (t->dtype == RBLN_TENSOR_F32) {
		bits = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
	} else if (t->dtype == RBLN_TENSOR_BF16) {
		bits = (uint32_t)(p[0] | p[1] << 8) << 16;
	} else {
		uint16_t h = (uint16_t)(p[0] | p[1] << 8);
		int e = (h >> 10) & 0x1F, m = h & 0x3FF;
		float v = e == 0 ? ldexpf((float)m, -24) :
			  e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 0x400), e - 25);

		return (h & 0x8000) ? -v : v;
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

static void check_checkpoint(const char *name, size_t n_tensors, size_t n_files,
			     enum rbln_dtype dtype)
{
	struct rbln_llama_config cfg;
	struct rbln_error err = { 0 };
	struct rbln_weights *w;
	const struct rbln_tensor *t;
	size_t i, j, elems;

	assert_int_equal(rbln_llama_config_load(test_model_path(name), &cfg, &err), 0);
	assert_int_equal(rbln_weights_open(test_model_path(name), &w, &err), 0);
	assert_int_equal(rbln_weights_count(w), n_tensors);
	assert_int_equal(rbln_weights_file_count(w), n_files);
	assert_int_equal(rbln_weights_check_llama(w, &cfg, &err), 0);

	t = rbln_weights_find(w, "model.embed_tokens.weight");
	assert_non_null(t);
	assert_int_equal(t->dtype, dtype);
	assert_int_equal(t->ndim, 2);
	assert_int_equal(t->shape[0], cfg.vocab_size);
	assert_int_equal(t->shape[1], cfg.hidden_size);
	assert_int_equal(t->nbytes, (size_t)(cfg.vocab_size * cfg.hidden_size) * 2);
	t = rbln_weights_find(w, "model.layers.0.self_attn.k_proj.weight");
	assert_non_null(t);
	assert_int_equal(t->shape[0], cfg.num_key_value_heads * cfg.head_dim);
	assert_null(rbln_weights_find(w, "model.layers.99.mlp.up_proj.weight"));

	/* Trained weights: finite, and not all zero. */
	for (i = 0; i < rbln_weights_count(w); i++) {
		bool nonzero = false;

		t = rbln_weights_at(w, i);
		for (j = 0, elems = 1; j < t->ndim; j++)
			elems *= (size_t)t->shape[j];
		assert_int_equal(t->nbytes, elems * rbln_dtype_size(t->dtype));
		for (j = 0; j < elems; j++) {
			float v = element(t, j);

			if (!isfinite(v))
				fail_msg("%s: tensor %s element %zu is not finite", t->file, t->name, j);
			nonzero |= v != 0.0f;
		}
		assert_true(nonzero);
	}
	rbln_weights_close(w);
}

static void test_sharded_tiny_llama3(void **state)
{
	(void)state;
	/* 6 layers x 9, embedding, final norm, untied lm_head. */
	check_checkpoint("tiny-llama3", 6 * 9 + 3, 3, RBLN_TENSOR_BF16);
}

static void test_single_tiny_llama2(void **state)
{
	(void)state;
	/* 4 layers x 9, embedding, final norm; lm_head tied. */
	check_checkpoint("tiny-llama2", 4 * 9 + 2, 1, RBLN_TENSOR_F16);
}

/* ---- malformed files ---- */

static char *scratch;

static int setup(void **state)
{
	(void)state;
	scratch = test_mkdtemp();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	test_rmtree(scratch);
	free(scratch);
	return 0;
}

/* Opens path, expecting failure with every listed word in the message. */
static void expect_open_error(const char *path, ...)
{
	struct rbln_error err = { 0 };
	struct rbln_safetensors *st = NULL;
	va_list ap;
	const char *s;

	assert_true(rbln_safetensors_open(path, &st, &err) < 0);
	assert_null(st);
	assert_non_null(strstr(err.msg, path));
	va_start(ap, path);
	while ((s = va_arg(ap, const char *)))
		if (!strstr(err.msg, s))
			fail_msg("message \"%s\" does not mention \"%s\"", err.msg, s);
	va_end(ap);
}

static const int64_t shape_4x4[] = { 4, 4, -1 };

static void test_wrong_dtype(void **state)
{
	struct test_st_builder b;
	char *p = test_join(scratch, "dtype.safetensors");

	(void)state;
	test_st_init(&b);
	test_st_add(&b, "a", "F16", shape_4x4);
	test_st_add(&b, "ids", "I64", shape_4x4);
	test_st_write(&b, p);
	expect_open_error(p, "'ids'", "I64", "not supported", NULL);
	test_st_free(&b);
	test_st_init(&b);
	test_st_add(&b, "weird", "Q4", shape_4x4);
	test_st_write(&b, p);
	expect_open_error(p, "'weird'", "unknown dtype", NULL);
	test_st_free(&b);
	free(p);
}

/* A NUL inside the dtype must not truncate it to a valid name. */
static void test_dtype_with_nul(void **state)
{
	char *p = test_join(scratch, "nul.safetensors");
	const char *h = "{\"a\": {\"dtype\": \"F16\\u0000x\", \"shape\": [2], "
			"\"data_offsets\": [0, 4]}}";

	(void)state;
	test_write_safetensors_raw(p, strlen(h), h, 4);
	expect_open_error(p, "'a'", "NUL byte", NULL);
	free(p);
}

/* A FIFO in place of a shard is refused at once instead of blocking in open(). */
static void test_fifo_shard(void **state)
{
	char *p = test_join(scratch, "fifo.safetensors");

	(void)state;
	assert_int_equal(mkfifo(p, 0600), 0);
	expect_open_error(p, "not a regular file", "FIFO", NULL);
	unlink(p);
	free(p);
}

static void test_header_length_past_eof(void **state)
{
	char *p = test_join(scratch, "hlen.safetensors");

	(void)state;
	test_write_safetensors_raw(p, 1000, "{}", 0);
	expect_open_error(p, "header length 1000", "truncated", NULL);
	test_write_safetensors_raw(p, (uint64_t)1 << 40, "{}", 0);
	expect_open_error(p, "exceeds", NULL);
	test_write_file(p, "\x02\x00\x00", 3);
	expect_open_error(p, "too short", NULL);
	free(p);
}

static void test_bad_json_header(void **state)
{
	char *p = test_join(scratch, "json.safetensors");
	const char *h = "{\"a\": {\"dtype\": \"F16\", \"shape\": [2], \"data_offsets\": [0, 4]";

	(void)state;
	test_write_safetensors_raw(p, strlen(h), h, 4);
	expect_open_error(p, "malformed JSON", NULL);
	h = "[1, 2, 3]";
	test_write_safetensors_raw(p, strlen(h), h, 0);
	expect_open_error(p, "JSON object", NULL);
	free(p);
}

static void raw_entry_error(const char *name, const char *entry, size_t data, const char *w1,
			    const char *w2)
{
	char header[1024];
	char *p = test_join(scratch, "entry.safetensors");

	snprintf(header, sizeof(header), "{\"%s\": %s}", name, entry);
	test_write_safetensors_raw(p, strlen(header), header, data);
	expect_open_error(p, name, w1, w2, NULL);
	free(p);
}

static void test_inconsistent_entries(void **state)
{
	(void)state;
	raw_entry_error("t", "{\"dtype\": \"F16\", \"shape\": [2, 3], \"data_offsets\": [0, 10]}", 10,
			"need 12", "hold 10");
	raw_entry_error("t", "{\"dtype\": \"F16\", \"shape\": [2, -3], \"data_offsets\": [0, 12]}", 12,
			"shape[1]", "non-negative");
	raw_entry_error("t", "{\"dtype\": \"F16\", \"shape\": [2], \"data_offsets\": [4, 0]}", 4,
			"end before", "[4, 0]");
	raw_entry_error("t", "{\"dtype\": \"F16\", \"shape\": [2]}", 4, "missing field",
			"data_offsets");
	raw_entry_error("t", "{\"dtype\": \"F16\", \"shape\": [2], \"data_offsets\": [0, 4], "
			     "\"extra\": 1}", 4, "unexpected field", "extra");
	raw_entry_error("t", "{\"dtype\": \"F16\", \"shape\": 2, \"data_offsets\": [0, 4]}", 4,
			"shape", "array");
	raw_entry_error("t", "{\"dtype\": 16, \"shape\": [2], \"data_offsets\": [0, 4]}", 4,
			"dtype", "string");
	raw_entry_error("t", "{\"dtype\": \"F16\", \"shape\": [2], \"data_offsets\": [0]}", 4,
			"data_offsets", "[begin, end]");
	raw_entry_error("t", "{\"dtype\": \"F16\", \"shape\": [9223372036854775807, 4], "
			     "\"data_offsets\": [0, 4]}", 4, "overflows", "t");
	raw_entry_error("t", "[1]", 0, "entry", "object");
	/* Offsets beyond the data: the classic truncated download. */
	raw_entry_error("t", "{\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}", 8,
			"past the end", "truncated");
}

static void test_overlapping_and_gaps(void **state)
{
	char *p = test_join(scratch, "overlap.safetensors");
	const char *h = "{\"first\": {\"dtype\": \"F16\", \"shape\": [4], \"data_offsets\": [0, 8]}, "
			"\"second\": {\"dtype\": \"F16\", \"shape\": [4], \"data_offsets\": [4, 12]}}";

	(void)state;
	test_write_safetensors_raw(p, strlen(h), h, 12);
	expect_open_error(p, "'second'", "overlap", "'first'", NULL);
	h = "{\"first\": {\"dtype\": \"F16\", \"shape\": [2], \"data_offsets\": [0, 4]}, "
	    "\"second\": {\"dtype\": \"F16\", \"shape\": [2], \"data_offsets\": [8, 12]}}";
	test_write_safetensors_raw(p, strlen(h), h, 12);
	expect_open_error(p, "'second'", "unused bytes", NULL);
	h = "{\"only\": {\"dtype\": \"F16\", \"shape\": [2], \"data_offsets\": [0, 4]}}";
	test_write_safetensors_raw(p, strlen(h), h, 9);
	expect_open_error(p, "5 bytes", "follow", "'only'", NULL);
	free(p);
}

static void test_metadata_and_empty(void **state)
{
	struct rbln_error err = { 0 };
	struct rbln_safetensors *st;
	char *p = test_join(scratch, "meta.safetensors");
	const char *h = "{\"__metadata__\": {\"format\": \"pt\"}, "
			"\"z\": {\"dtype\": \"F32\", \"shape\": [], \"data_offsets\": [0, 4]}, "
			"\"e\": {\"dtype\": \"BF16\", \"shape\": [0, 5], \"data_offsets\": [0, 0]}}  ";

	(void)state;
	test_write_safetensors_raw(p, strlen(h), h, 4);
	assert_int_equal(rbln_safetensors_open(p, &st, &err), 0);
	assert_string_equal(rbln_safetensors_metadata(st, "format"), "pt");
	assert_null(rbln_safetensors_metadata(st, "missing"));
	assert_int_equal(rbln_safetensors_count(st), 2);
	assert_int_equal(rbln_safetensors_find(st, "z")->ndim, 0);	/* a scalar */
	assert_int_equal(rbln_safetensors_find(st, "z")->nbytes, 4);
	assert_int_equal(rbln_safetensors_find(st, "e")->nbytes, 0);
	rbln_safetensors_close(st);
	h = "{\"__metadata__\": {\"format\": 1}}";
	test_write_safetensors_raw(p, strlen(h), h, 0);
	expect_open_error(p, "__metadata__", "format", "string", NULL);
	free(p);
}

/* A copy of tiny-llama3 whose second shard lost its tail. */
static void test_truncated_shard(void **state)
{
	static const char *const except[] = { "model-00002-of-00003.safetensors", NULL };
	const char *src = test_model_path("tiny-llama3");
	char *dir = test_join(scratch, "trunc3"), *from, *to, *data;
	struct rbln_error err = { 0 };
	struct rbln_weights *w = NULL;
	size_t len;

	(void)state;
	assert_int_equal(mkdir(dir, 0700), 0);
	test_link_dir(src, dir, except);
	from = test_join(src, "model-00002-of-00003.safetensors");
	to = test_join(dir, "model-00002-of-00003.safetensors");
	data = test_read_file(from, &len);
	test_write_file(to, data, len - 1000);
	assert_true(rbln_weights_open(dir, &w, &err) < 0);
	assert_null(w);
	test_assert_contains_all(err.msg, "model-00002-of-00003.safetensors", "tensor '",
				 "truncated", NULL);
	/* Cut inside the header, the length field itself is what is wrong. */
	test_write_file(to, data, 100);
	assert_true(rbln_weights_open(dir, &w, &err) < 0);
	test_assert_contains_all(err.msg, "model-00002-of-00003.safetensors", "header length", NULL);
	free(data);
	free(from);
	free(to);
	free(dir);
}

static void sharded_dir(const char *name, const char *index_json, char **dir_out)
{
	static const char *const except[] = { "model.safetensors.index.json", NULL };
	char *dir = test_join(scratch, name), *idx;

	assert_int_equal(mkdir(dir, 0700), 0);
	test_link_dir(test_model_path("tiny-llama3"), dir, except);
	idx = test_join(dir, "model.safetensors.index.json");
	test_write_text(idx, index_json);
	free(idx);
	*dir_out = dir;
}

/* Index problems: wrong shard, missing shard file, total_size, bad JSON. */
static void test_index_inconsistencies(void **state)
{
	char *orig_path = test_join(test_model_path("tiny-llama3"), "model.safetensors.index.json");
	json_object *orig = json_object_from_file(orig_path), *map, *meta;
	struct rbln_error err = { 0 };
	struct rbln_weights *w;
	char *dir;

	(void)state;
	assert_non_null(orig);
	assert_true(json_object_object_get_ex(orig, "weight_map", &map));
	assert_true(json_object_object_get_ex(orig, "metadata", &meta));

	json_object_object_add(map, "lm_head.weight",
			       json_object_new_string("model-00001-of-00003.safetensors"));
	sharded_dir("idx1", json_object_to_json_string(orig), &dir);
	assert_true(rbln_weights_open(dir, &w, &err) < 0);
	test_assert_contains_all(err.msg, "'lm_head.weight'", "model-00001-of-00003", NULL);
	free(dir);

	json_object_object_add(map, "lm_head.weight",
			       json_object_new_string("model-00004-of-00003.safetensors"));
	sharded_dir("idx2", json_object_to_json_string(orig), &dir);
	assert_true(rbln_weights_open(dir, &w, &err) < 0);
	test_assert_contains_all(err.msg, "model-00004-of-00003.safetensors", "cannot open", NULL);
	free(dir);

	json_object_object_add(map, "lm_head.weight",
			       json_object_new_string("model-00003-of-00003.safetensors"));
	json_object_object_add(meta, "total_size", json_object_new_int64(12));
	sharded_dir("idx3", json_object_to_json_string(orig), &dir);
	assert_true(rbln_weights_open(dir, &w, &err) < 0);
	test_assert_contains_all(err.msg, "metadata.total_size", "12", NULL);
	free(dir);

	json_object_object_del(map, "model.norm.weight");
	json_object_object_del(meta, "total_size");
	sharded_dir("idx4", json_object_to_json_string(orig), &dir);
	assert_true(rbln_weights_open(dir, &w, &err) < 0);
	test_assert_contains_all(err.msg, "'model.norm.weight'", "not listed", NULL);
	free(dir);

	sharded_dir("idx5", "{\"weight_map\": {\"a\": \"../x\"}}", &dir);
	assert_true(rbln_weights_open(dir, &w, &err) < 0);
	test_assert_contains_all(err.msg, "weight_map", "'a'", "file name", NULL);
	free(dir);

	sharded_dir("idx6", "{\"weight_map\": {", &dir);
	assert_true(rbln_weights_open(dir, &w, &err) < 0);
	test_assert_contains_all(err.msg, "model.safetensors.index.json", "malformed JSON", NULL);
	free(dir);

	json_object_put(orig);
	free(orig_path);
}

static void write_config(const char *dir, int layers)
{
	char *p = test_join(dir, "config.json");
	char text[512];

	snprintf(text, sizeof(text),
		 "{\"model_type\": \"llama\", \"vocab_size\": 16, \"hidden_size\": 8, "
		 "\"intermediate_size\": 12, \"num_hidden_layers\": %d, \"num_attention_heads\": 2, "
		 "\"num_key_value_heads\": 1, \"max_position_embeddings\": 64, "
		 "\"tie_word_embeddings\": true}", layers);
	test_write_text(p, text);
	free(p);
}

/* A complete two-layer model, minus the tensor named `skip`. */
static void build_model(const char *dir, const char *skip, const char *extra)
{
	static const struct { const char *suffix; int64_t shape[3]; } layer[] = {
		{ "input_layernorm.weight", { 8, -1 } },
		{ "post_attention_layernorm.weight", { 8, -1 } },
		{ "self_attn.q_proj.weight", { 8, 8, -1 } },
		{ "self_attn.k_proj.weight", { 4, 8, -1 } },
		{ "self_attn.v_proj.weight", { 4, 8, -1 } },
		{ "self_attn.o_proj.weight", { 8, 8, -1 } },
		{ "mlp.gate_proj.weight", { 12, 8, -1 } },
		{ "mlp.up_proj.weight", { 12, 8, -1 } },
		{ "mlp.down_proj.weight", { 8, 12, -1 } },
	};
	static const int64_t embed[] = { 16, 8, -1 }, norm[] = { 8, -1 };
	struct test_st_builder b;
	char name[128], *p;
	size_t i;
	int l;

	test_st_init(&b);
	test_st_add(&b, "model.embed_tokens.weight", "F16", embed);
	test_st_add(&b, "model.norm.weight", "F16", norm);
	for (l = 0; l < 2; l++) {
		for (i = 0; i < sizeof(layer) / sizeof(layer[0]); i++) {
			snprintf(name, sizeof(name), "model.layers.%d.%s", l, layer[i].suffix);
			if (!skip || strcmp(skip, name))
				test_st_add(&b, name, "F16", layer[i].shape);
		}
	}
	if (extra)
		test_st_add(&b, extra, "F16", norm);
	p = test_join(dir, "model.safetensors");
	test_st_write(&b, p);
	test_st_free(&b);
	free(p);
}

static int check_model(const char *dir, struct rbln_error *err)
{
	struct rbln_llama_config cfg;
	struct rbln_weights *w;
	int rc = rbln_llama_config_load(dir, &cfg, err);

	if (!rc)
		rc = rbln_weights_open(dir, &w, err);
	if (!rc) {
		rc = rbln_weights_check_llama(w, &cfg, err);
		rbln_weights_close(w);
	}
	return rc;
}

static void test_missing_and_unexpected_tensors(void **state)
{
	char *dir = test_join(scratch, "synthetic");
	struct rbln_error err = { 0 };

	(void)state;
	assert_int_equal(mkdir(dir, 0700), 0);
	write_config(dir, 2);
	build_model(dir, NULL, NULL);
	assert_int_equal(check_model(dir, &err), 0);

	build_model(dir, "model.layers.1.mlp.up_proj.weight", NULL);
	assert_true(check_model(dir, &err) < 0);
	test_assert_contains_all(err.msg, "'model.layers.1.mlp.up_proj.weight'", "missing", NULL);

	build_model(dir, NULL, "model.layers.2.input_layernorm.weight");
	assert_true(check_model(dir, &err) < 0);
	test_assert_contains_all(err.msg, "unexpected tensor", "model.layers.2.input_layernorm",
				 "2 layers", NULL);

	/* Config says three layers: layer 2 is missing. */
	write_config(dir, 3);
	build_model(dir, NULL, NULL);
	assert_true(check_model(dir, &err) < 0);
	test_assert_contains_all(err.msg, "model.layers.2.", "missing", NULL);
	free(dir);
}

static void test_shape_mismatch(void **state)
{
	char *dir = test_join(scratch, "shape");
	char *cfg;
	struct rbln_error err = { 0 };

	(void)state;
	assert_int_equal(mkdir(dir, 0700), 0);
	build_model(dir, NULL, NULL);
	/* Two KV heads instead of one: k_proj should be [8, 8]. */
	cfg = test_join(dir, "config.json");
	test_write_text(cfg, "{\"model_type\": \"llama\", \"vocab_size\": 16, \"hidden_size\": 8, "
			     "\"intermediate_size\": 12, \"num_hidden_layers\": 2, "
			     "\"num_attention_heads\": 2, \"num_key_value_heads\": 2, "
			     "\"max_position_embeddings\": 64, \"tie_word_embeddings\": true}");
	assert_true(check_model(dir, &err) < 0);
	test_assert_contains_all(err.msg, "model.safetensors", "self_attn.k_proj.weight", "[4, 8]",
				 "[8, 8]", NULL);
	/* Untied without lm_head. */
	test_write_text(cfg, "{\"model_type\": \"llama\", \"vocab_size\": 16, \"hidden_size\": 8, "
			     "\"intermediate_size\": 12, \"num_hidden_layers\": 2, "
			     "\"num_attention_heads\": 2, \"num_key_value_heads\": 1, "
			     "\"max_position_embeddings\": 64}");
	assert_true(check_model(dir, &err) < 0);
	test_assert_contains_all(err.msg, "'lm_head.weight'", "missing", NULL);
	free(cfg);
	free(dir);
}

static void test_no_weights(void **state)
{
	struct rbln_error err = { 0 };
	struct rbln_weights *w;

	(void)state;
	assert_true(rbln_weights_open(scratch, &w, &err) < 0);
	test_assert_contains_all(err.msg, "model.safetensors", "index.json", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sharded_tiny_llama3),
		cmocka_unit_test(test_single_tiny_llama2),
		cmocka_unit_test(test_wrong_dtype),
		cmocka_unit_test(test_dtype_with_nul),
		cmocka_unit_test(test_fifo_shard),
		cmocka_unit_test(test_header_length_past_eof),
		cmocka_unit_test(test_bad_json_header),
		cmocka_unit_test(test_inconsistent_entries),
		cmocka_unit_test(test_overlapping_and_gaps),
		cmocka_unit_test(test_metadata_and_empty),
		cmocka_unit_test(test_truncated_shard),
		cmocka_unit_test(test_index_inconsistencies),
		cmocka_unit_test(test_missing_and_unexpected_tensors),
		cmocka_unit_test(test_shape_mismatch),
		cmocka_unit_test(test_no_weights),
	};

	return cmocka_run_group_tests_name("engine safetensors", tests, setup, teardown);
}
