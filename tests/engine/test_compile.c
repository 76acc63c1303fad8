// SPDX-License-Identifier: MIT
/*
 * rbln-compile's rules (each refusal names the parameter and the reason),
 * rbln_config.json as written and as re-checked when read, damaged
 * checkpoints and damaged compiled directories (errors naming the file,
 * never a crash), and --dummy-weights.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine_helpers.h"
#include "program/files.h"
#include "rbln_config.h"
#include "rbln_isa.h"
#include "runtime/runtime_internal.h"

static struct rbln_llama_config llama3_config(void)
{
	struct rbln_llama_config c;
	struct rbln_error err = { 0 };

	if (rbln_llama_config_load(test_model_path("tiny-llama3"), &c, &err))
		fail_msg("%s", err.msg);
	return c;
}

/* Resolving opt must fail with every given substring in the message. */
#define REFUSED(cfg, opt, ...) refused(cfg, opt, __VA_ARGS__, NULL)

static void refused(const struct rbln_llama_config *cfg, const struct rbln_compile_options *opt,
		    ...)
{
	struct rbln_compiled_config cc;
	struct rbln_error err = { 0 };
	va_list ap;
	const char *s;

	if (!rbln_compile_resolve(cfg, opt, &cc, &err))
		fail_msg("options were accepted");
	assert_true(err.code < 0);
	va_start(ap, opt);
	while ((s = va_arg(ap, const char *)))
		if (!strstr(err.msg, s))
			fail_msg("'%s' not in the message: %s", s, err.msg);
	va_end(ap);
}

static void test_tp_rules(void **state)
{
	struct rbln_llama_config c = llama3_config(), m;
	struct rbln_compile_options o = { .tensor_parallel_size = 3 };

	(void)state;
	REFUSED(&c, &o, "--tensor-parallel-size 3", "num_attention_heads (8)");
	m = c;
	m.num_attention_heads = 6;
	m.num_key_value_heads = 3;
	o.tensor_parallel_size = 2;
	REFUSED(&m, &o, "num_key_value_heads (3)");
	m = c;
	m.intermediate_size = 770;
	o.tensor_parallel_size = 4;
	REFUSED(&m, &o, "intermediate_size (770)");
	m = c;
	m.vocab_size = 4097;
	o.tensor_parallel_size = 2;
	REFUSED(&m, &o, "vocab_size (4097)");
	o.tensor_parallel_size = 128;
	REFUSED(&c, &o, "--tensor-parallel-size must be 1 to 64");
	m = c;
	m.head_dim = 12;
	o.tensor_parallel_size = 1;
	REFUSED(&m, &o, "head_dim 12");
}

static void test_attention_rules(void **state)
{
	struct rbln_llama_config c = llama3_config();
	struct rbln_compile_options o = { .max_seq_len = 2048, .kvcache_partition_len = 300 };
	struct rbln_compiled_config cc;
	struct rbln_error err = { 0 };

	(void)state;
	REFUSED(&c, &o, "--max-seq-len 2048", "multiple of --kvcache-partition-len 300");
	o.kvcache_partition_len = 2048;
	REFUSED(&c, &o, "at least twice");
	o.kvcache_partition_len = 512;
	o.kvcache_block_size = 256;
	REFUSED(&c, &o, "--kvcache-block-size 256 must equal --kvcache-partition-len 512");
	o.kvcache_partition_len = 0;
	REFUSED(&c, &o, "--kvcache-block-size 256 must equal --max-seq-len 2048", "eager");
	o.kvcache_block_size = 0;
	o.max_seq_len = 4096;
	REFUSED(&c, &o, "--max-seq-len 4096", "max_position_embeddings (2048)");
	o = (struct rbln_compile_options){ .max_seq_len = 2048, .kvcache_partition_len = 512,
					   .kvcache_num_blocks = 3 };
	REFUSED(&c, &o, "--kvcache-num-blocks 3", "cannot hold one sequence");
	/* Defaults: block = partition, blocks for batch_size full sequences. */
	o.kvcache_num_blocks = 0;
	o.batch_size = 2;
	assert_int_equal(rbln_compile_resolve(&c, &o, &cc, &err), 0);
	assert_int_equal(cc.attn_impl, RBLN_ATTN_FLASH);
	assert_int_equal(cc.kvcache_block_size, 512);
	assert_int_equal(cc.kvcache_num_blocks, 8);
	o.kvcache_partition_len = 0;
	assert_int_equal(rbln_compile_resolve(&c, &o, &cc, &err), 0);
	assert_int_equal(cc.attn_impl, RBLN_ATTN_EAGER);
	assert_int_equal(cc.kvcache_block_size, 2048);
	assert_int_equal(cc.kvcache_partition_len, 2048);
}

static void test_batch_rules(void **state)
{
	struct rbln_llama_config c = llama3_config();
	struct rbln_compile_options o = { .batch_size = 4, .decoder_batch_sizes = { 8 },
					  .n_decoder_batch_sizes = 1 };
	struct rbln_compiled_config cc;
	struct rbln_error err = { 0 };

	(void)state;
	REFUSED(&c, &o, "--decoder-batch-sizes: 8 must be 1 to --batch-size (4)");
	o.decoder_batch_sizes[0] = 2;
	o.decoder_batch_sizes[1] = 2;
	o.n_decoder_batch_sizes = 2;
	REFUSED(&c, &o, "2 is listed twice");
	/* Sorted descending, batch_size appended, as the SDK does. */
	o = (struct rbln_compile_options){ .batch_size = 8 };
	assert_int_equal(rbln_compile_parse_batch_sizes("1, 4", &o, &err), 0);
	assert_int_equal(rbln_compile_resolve(&c, &o, &cc, &err), 0);
	assert_int_equal(cc.n_decoder_batch_sizes, 3);
	assert_int_equal(cc.decoder_batch_sizes[0], 8);
	assert_int_equal(cc.decoder_batch_sizes[1], 4);
	assert_int_equal(cc.decoder_batch_sizes[2], 1);
	assert_int_not_equal(rbln_compile_parse_batch_sizes("8,x", &o, &err), 0);
	test_assert_contains_all(err.msg, "--decoder-batch-sizes", "8,x", NULL);
	assert_int_not_equal(rbln_compile_parse_batch_sizes("0", &o, &err), 0);
	assert_int_not_equal(rbln_compile_parse_batch_sizes("", &o, &err), 0);
	o = (struct rbln_compile_options){ .prefill_chunk_size = 100 };
	REFUSED(&c, &o, "--prefill-chunk-size 100", "multiple of 64");
	o = (struct rbln_compile_options){ .prefill_chunk_size = 64, .batch_size = 128 };
	REFUSED(&c, &o, "below --batch-size 128");
	o = (struct rbln_compile_options){ .prefill_chunk_size = 4096, .max_seq_len = 1024 };
	REFUSED(&c, &o, "above --max-seq-len 1024");
}

static char *compiled_llama2(struct rbln_compile_options *o)
{
	return eh_compile("tiny-llama2", o);
}

/* A compiled directory opens only while rbln_config.json keeps the rules. */
static void test_config_json_checked(void **state)
{
	struct rbln_compile_options o = { .batch_size = 4, .decoder_batch_sizes = { 1 },
					  .n_decoder_batch_sizes = 1 };
	struct rbln_compiled_config cc;
	struct rbln_error err = { 0 };
	char *dir = compiled_llama2(&o), *path = test_join(dir, "rbln_config.json"), *text, *p;
	size_t len;

	(void)state;
	assert_int_equal(rbln_compiled_config_load(dir, &cc, &err), 0);
	assert_int_equal(cc.batch_size, 4);
	assert_int_equal(cc.n_decoder_batch_sizes, 2);
	assert_int_equal(cc.decoder_batch_sizes[0], 4);
	text = test_read_file(path, &len);
	/* Reordered buckets are not the compiled form. */
	p = strstr(text, "\"decoder_batch_sizes\"");
	assert_non_null(p);
	p = strchr(p, '4');
	*p = '1';
	p = strchr(p + 1, '1');
	*p = '4';
	test_write_text(path, text);
	assert_int_not_equal(rbln_compiled_config_load(dir, &cc, &err), 0);
	test_assert_contains_all(err.msg, "rbln_config.json", "decoder_batch_sizes", NULL);
	test_write_text(path, "{\"format\": 1}");
	assert_int_not_equal(rbln_compiled_config_load(dir, &cc, &err), 0);
	test_assert_contains_all(err.msg, "rbln_config.json", "model_type", NULL);
	test_write_text(path, "{\"format\": 7}");
	assert_int_not_equal(rbln_compiled_config_load(dir, &cc, &err), 0);
	test_assert_contains_all(err.msg, "format", "recompile", NULL);
	test_write_text(path, "{not json");
	assert_int_not_equal(rbln_compiled_config_load(dir, &cc, &err), 0);
	test_assert_contains_all(err.msg, "rbln_config.json", NULL);
	/*
	 * The one reader, as rbln-serve uses it on a directory of the RBLN SDK:
	 * the keys present are read and checked, absent ones are 0.
	 */
	test_write_text(path, "{\"batch_size\": 2, \"max_seq_len\": 4096, "
			"\"kvcache_partition_len\": 1024, \"decoder_batch_sizes\": [2, 1]}");
	assert_int_equal(rbln_compiled_config_read(dir, RBLN_COMPILED_KEYS_PRESENT, &cc, &err), 0);
	assert_int_equal(cc.batch_size, 2);
	assert_int_equal(cc.max_seq_len, 4096);
	assert_int_equal(cc.kvcache_partition_len, 1024);
	assert_int_equal(cc.attn_impl, RBLN_ATTN_FLASH);
	assert_int_equal(cc.kvcache_block_size, 0);
	assert_int_equal(cc.tensor_parallel_size, 0);
	assert_int_equal(cc.n_decoder_batch_sizes, 2);
	assert_int_equal(cc.decoder_batch_sizes[1], 1);
	assert_int_not_equal(rbln_compiled_config_read(dir, RBLN_COMPILED_ALL_KEYS, &cc, &err), 0);
	test_assert_contains_all(err.msg, "rbln_config.json", "format", NULL);
	test_write_text(path, "{\"batch_size\": 0}");
	assert_int_equal(rbln_compiled_config_read(dir, RBLN_COMPILED_KEYS_PRESENT, &cc, &err),
			 -EINVAL);
	test_assert_contains_all(err.msg, "batch_size", "got 0", NULL);
	test_write_text(path, "{\"decoder_batch_sizes\": [4, \"2\"]}");
	assert_int_equal(rbln_compiled_config_read(dir, RBLN_COMPILED_KEYS_PRESENT, &cc, &err),
			 -EINVAL);
	test_assert_contains_all(err.msg, "decoder_batch_sizes", "entry 1", NULL);
	free(text);
	free(path);
	test_rmtree(dir);
	free(dir);
}

static void expect_open_error(const char *dir, const char *a, const char *b)
{
	struct rbln_runtime *e = NULL;
	struct rbln_error err = { 0 };

	if (!rbln_runtime_open(dir, NULL, &e, &err)) {
		rbln_runtime_close(e);
		fail_msg("a damaged directory opened");
	}
	test_assert_contains_all(err.msg, a, b, NULL);
}

/* Replaces the first @from in @path's text by @to (no longer than a line). */
static void edit_file(const char *path, const char *from, const char *to)
{
	size_t len;
	char *text = test_read_file(path, &len), *p = strstr(text, from), *out;

	assert_non_null(p);
	out = malloc(len + strlen(to) + 1);
	assert_non_null(out);
	sprintf(out, "%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
	test_write_text(path, out);
	free(out);
	free(text);
}

/*
 * --quantize w8a16 is recorded in rbln_config.json and checked when read:
 * an unknown value is refused naming the key, and a hand edit to "none"
 * no longer matches the weight file the compile wrote.
 */
static void test_quantize_recorded(void **state)
{
	/* Without the spaced layout's gaps, a large share of tiny matrices. */
	struct rbln_compile_options o = { .quantize = RBLN_QUANT_W8A16,
					  .weight_layout = RBLN_WEIGHTS_PACKED16 };
	struct rbln_compile_options plain = { .weight_layout = RBLN_WEIGHTS_PACKED16 };
	char *dir = compiled_llama2(&o), *path = test_join(dir, "rbln_config.json");
	char *pdir = compiled_llama2(&plain), *w = test_join(dir, "rank_0/weights.bin");
	char *pw = test_join(pdir, "rank_0/weights.bin");
	struct rbln_compiled_config cc;
	struct rbln_error err = { 0 };
	struct stat qs, ps;
	size_t len;
	char *text;

	(void)state;
	assert_int_equal(rbln_compiled_config_load(dir, &cc, &err), 0);
	assert_int_equal(cc.quantize, RBLN_QUANT_W8A16);
	assert_int_equal(rbln_compiled_config_load(pdir, &cc, &err), 0);
	assert_int_equal(cc.quantize, RBLN_QUANT_NONE);
	text = test_read_file(path, &len);
	assert_non_null(strstr(text, "\"quantize\": \"w8a16\""));
	free(text);
	/*
	 * The matrices are int8 instead of float16 (the embedding stays
	 * float16): under two thirds of the unquantised file (measured 59%).
	 */
	assert_int_equal(stat(w, &qs), 0);
	assert_int_equal(stat(pw, &ps), 0);
	assert_true(qs.st_size * 3 < ps.st_size * 2);

	edit_file(path, "\"w8a16\"", "\"w4a16\"");
	assert_int_equal(rbln_compiled_config_load(dir, &cc, &err), -EINVAL);
	test_assert_contains_all(err.msg, "quantize", "\"w4a16\"", NULL);
	test_assert_contains_all(err.msg, "expected none or w8a16", NULL, NULL);
	edit_file(path, "\"w4a16\"", "8");
	assert_int_not_equal(rbln_compiled_config_load(dir, &cc, &err), 0);
	test_assert_contains_all(err.msg, "quantize", NULL, NULL);
	edit_file(path, "\"quantize\": 8", "\"quantize\": \"none\"");
	expect_open_error(dir, "weights.bin", "truncated");
	test_rmtree(dir);
	test_rmtree(pdir);
	free(dir);
	free(pdir);
	free(path);
	free(w);
	free(pw);
}

/* MATMUL commands of a program file, and how many carry each flag. */
struct matmul_count {
	unsigned int matmuls, a_bf16, int8, spaced;
	unsigned int minor;	/* the stream header's ISA minor version */
};

static void count_matmuls(const char *path, struct matmul_count *c)
{
	struct program_image img;
	struct rbln_error err = { 0 };
	const uint8_t *p;
	uint64_t at;

	if (rbln_program_file_read(path, &img, &err))
		fail_msg("%s", err.msg);
	p = img.stream;
	c->minor = ((const struct rbln_isa_stream_header *)img.stream)->version_minor;
	for (at = sizeof(struct rbln_isa_stream_header); at < img.hdr.stream_size;) {
		struct rbln_isa_matmul mm;
		struct rbln_isa_cmd hdr;

		memcpy(&hdr, p + at, sizeof(hdr));
		assert_true(hdr.size >= sizeof(hdr) && hdr.size <= img.hdr.stream_size - at);
		if (hdr.opcode == RBLN_OP_MATMUL) {
			assert_int_equal(hdr.size, sizeof(mm));
			memcpy(&mm, p + at, sizeof(mm));
			c->matmuls++;
			c->a_bf16 += !!(hdr.flags & RBLN_MATMUL_A_BF16);
			c->int8 += mm.dtype == RBLN_DTYPE_I8;
			c->spaced += mm.layout == RBLN_LAYOUT_PACKED16_SPACED;
		}
		at += hdr.size;
	}
	rbln_program_image_free(&img);
}

/*
 * Every MATMUL of every program of every rank carries RBLN_MATMUL_A_BF16
 * exactly when the model was compiled with --matmul-precision bf16, and
 * has spaced panels exactly when it was compiled with them; the programs
 * claim ISA 1.4 with spaced panels, else 1.3 with bf16 activations (else
 * 1.2, so an ISA 1.2 device runs them). Returns the MATMULs seen.
 */
static unsigned int check_programs(const char *dir, bool bf16, bool int8)
{
	struct rbln_compiled_config cc;
	struct rbln_error err = { 0 };
	unsigned int total = 0;
	uint32_t r;
	size_t i;

	if (rbln_compiled_config_load(dir, &cc, &err))
		fail_msg("%s", err.msg);
	for (r = 0; r < cc.tensor_parallel_size; r++)
		for (i = 0; i <= cc.n_decoder_batch_sizes; i++) {
			struct matmul_count c = { 0 };
			char name[64], *path;

			if (i < cc.n_decoder_batch_sizes)
				snprintf(name, sizeof(name), "rank_%u/decoder_batch_%u.rbln", r,
					 cc.decoder_batch_sizes[i]);
			else
				snprintf(name, sizeof(name), "rank_%u/prefill.rbln", r);
			path = test_join(dir, name);
			count_matmuls(path, &c);
			/* q/k/v, o, gate/up, down per layer, and the lm_head. */
			assert_int_equal(c.matmuls, 4 * cc.model.num_hidden_layers + 1);
			if (c.a_bf16 != (bf16 ? c.matmuls : 0))
				fail_msg("%s: %u of %u MATMULs have RBLN_MATMUL_A_BF16", name,
					 c.a_bf16, c.matmuls);
			assert_int_equal(c.int8, int8 ? c.matmuls : 0);
			assert_int_equal(c.spaced, cc.weight_layout == RBLN_WEIGHTS_SPACED ?
					 c.matmuls : 0);
			assert_int_equal(c.minor, cc.weight_layout == RBLN_WEIGHTS_SPACED ? 4 :
					 bf16 ? 3 : 2);
			total += c.matmuls;
			free(path);
		}
	return total;
}

/*
 * --matmul-precision bf16 is recorded in rbln_config.json, set on every
 * MATMUL of the programs (with w8a16 too), and checked when read: an
 * unknown value is refused naming the key, a directory without the key
 * (compiled before it existed) is float32. The runtime refuses bf16
 * programs on a device older than ISA 1.3, float32 ones need 1.2.
 */
static void test_matmul_precision(void **state)
{
	/* Without the spaced panels, which need 1.4 whatever the precision. */
	struct rbln_compile_options o = { .tensor_parallel_size = 2,
					  .matmul_precision = RBLN_MATMUL_BF16,
					  .weight_layout = RBLN_WEIGHTS_PACKED16 };
	struct rbln_compile_options q = { .quantize = RBLN_QUANT_W8A16,
					  .matmul_precision = RBLN_MATMUL_BF16,
					  .weight_layout = RBLN_WEIGHTS_PACKED16 };
	struct rbln_compile_options plain = { .tensor_parallel_size = 2,
					      .weight_layout = RBLN_WEIGHTS_PACKED16 };
	char *dir = compiled_llama2(&o), *path = test_join(dir, "rbln_config.json");
	char *qdir = compiled_llama2(&q), *pdir = compiled_llama2(&plain);
	char *ppath = test_join(pdir, "rbln_config.json");
	struct rbln_compiled_config cc;
	struct rbln_error err = { 0 };
	struct rbln_runtime *e = NULL;
	size_t len;
	char *text;

	(void)state;
	assert_int_equal(rbln_compiled_config_load(dir, &cc, &err), 0);
	assert_int_equal(cc.matmul_precision, RBLN_MATMUL_BF16);
	assert_int_equal(rbln_compiled_isa_minor(&cc), 3);
	text = test_read_file(path, &len);
	assert_non_null(strstr(text, "\"matmul_precision\": \"bf16\""));
	free(text);
	assert_true(check_programs(dir, true, false) > 0);
	check_programs(qdir, true, true);
	assert_int_equal(rbln_compiled_config_load(pdir, &cc, &err), 0);
	assert_int_equal(cc.matmul_precision, RBLN_MATMUL_F32);
	assert_int_equal(rbln_compiled_isa_minor(&cc), 2);
	text = test_read_file(ppath, &len);
	assert_non_null(strstr(text, "\"matmul_precision\": \"float32\""));
	free(text);
	check_programs(pdir, false, false);

	/* The device check, with the device's version as libnpu reports it. */
	assert_int_equal(rbln_runtime_check_isa(&cc, 1, "/dev/accel/accel1", 1, 2, &err), 0);
	assert_int_equal(rbln_runtime_check_isa(&cc, 1, "/dev/accel/accel1", 1, 1, &err),
			 -ENOTSUP);
	test_assert_contains_all(err.msg, "rank 1", "ISA 1.1", "need 1.2", NULL);
	cc.matmul_precision = RBLN_MATMUL_BF16;
	assert_int_equal(rbln_runtime_check_isa(&cc, 0, "emul0", 1, 3, &err), 0);
	assert_int_equal(rbln_runtime_check_isa(&cc, 0, "emul0", 1, 4, &err), 0);
	assert_int_equal(rbln_runtime_check_isa(&cc, 0, "emul0", 1, 2, &err), -ENOTSUP);
	test_assert_contains_all(err.msg, "rank 0: device emul0 runs ISA 1.2",
				 "--matmul-precision bf16", "need ISA 1.3", NULL);
	test_assert_contains_all(err.msg, "--matmul-precision float32", NULL, NULL);
	assert_int_equal(rbln_runtime_check_isa(&cc, 0, "emul0", 2, 3, &err), -ENOTSUP);
	test_assert_contains_all(err.msg, "ISA 2.3", NULL, NULL);

	/* A bf16 model loads and generates (on the emulated ISA 1.3 devices). */
	if (rbln_runtime_open(dir, NULL, &e, &err))
		fail_msg("%s", err.msg);
	rbln_runtime_close(e);

	edit_file(path, "\"bf16\"", "\"fp8\"");
	assert_int_equal(rbln_compiled_config_load(dir, &cc, &err), -EINVAL);
	test_assert_contains_all(err.msg, "matmul_precision", "\"fp8\"",
				 "expected float32 or bf16", NULL);
	edit_file(path, "\"fp8\"", "true");
	assert_int_not_equal(rbln_compiled_config_load(dir, &cc, &err), 0);
	test_assert_contains_all(err.msg, "matmul_precision", "must be a string", NULL);
	/* Compiled before the key existed: float32, and it runs. */
	edit_file(ppath, "\"matmul_precision\": \"float32\",", "");
	text = test_read_file(ppath, &len);
	assert_null(strstr(text, "matmul_precision"));
	free(text);
	assert_int_equal(rbln_compiled_config_load(pdir, &cc, &err), 0);
	assert_int_equal(cc.matmul_precision, RBLN_MATMUL_F32);
	if (rbln_runtime_open(pdir, NULL, &e, &err))
		fail_msg("%s", err.msg);
	rbln_runtime_close(e);

	/* Only the two values come through the options. */
	o.matmul_precision = (enum rbln_matmul_precision)7;
	o.tensor_parallel_size = 1;
	{
		struct rbln_llama_config c = llama3_config();

		REFUSED(&c, &o, "--matmul-precision");
	}
	test_rmtree(dir);
	test_rmtree(qdir);
	test_rmtree(pdir);
	free(dir);
	free(qdir);
	free(pdir);
	free(path);
	free(ppath);
}

static void truncate_file(const char *path, off_t len)
{
	assert_int_equal(truncate(path, len), 0);
}

/*
 * --weight-layout: spaced is recorded in rbln_config.json, on every MATMUL
 * of the programs (ISA 1.4), and costs a gap of RBLN_ISA_PANEL_GAP bytes
 * per panel in weights.bin; packed16 has none. Both give the same logits,
 * bit for bit. auto (the default) compiles this host's layout, spaced on
 * Intel CPUs and packed16 elsewhere, and records that layout: "auto" is
 * no layout a compiled directory may name. A directory without the key
 * (compiled before it existed) is packed16 and runs; an unknown value is
 * refused naming the key; a device of ISA 1.3 is told which flag to
 * compile with.
 */
static void test_weight_layout(void **state)
{
	struct rbln_compile_options sp = { .quantize = RBLN_QUANT_W8A16,
					   .weight_layout = RBLN_WEIGHTS_SPACED };
	struct rbln_compile_options pk = { .quantize = RBLN_QUANT_W8A16,
					   .weight_layout = RBLN_WEIGHTS_PACKED16 };
	char *sdir = compiled_llama2(&sp), *pdir = compiled_llama2(&pk);
	char *spath = test_join(sdir, "rbln_config.json");
	char *ppath = test_join(pdir, "rbln_config.json");
	char *sw = test_join(sdir, "rank_0/weights.bin"), *pw = test_join(pdir, "rank_0/weights.bin");
	const int32_t prompt[] = { 1, 1543, 292, 920 };
	struct rbln_compiled_config cc;
	struct rbln_error err = { 0 };
	struct stat ss, ps;
	float *logits[2];
	int32_t out[2][8];
	size_t len, vocab = 0;
	char *text;

	(void)state;
	assert_int_equal(rbln_compiled_config_load(sdir, &cc, &err), 0);
	assert_int_equal(cc.weight_layout, RBLN_WEIGHTS_SPACED);
	assert_int_equal(rbln_compiled_isa_minor(&cc), 4);
	text = test_read_file(spath, &len);
	assert_non_null(strstr(text, "\"weight_layout\": \"spaced\""));
	free(text);
	check_programs(sdir, false, true);
	assert_int_equal(rbln_compiled_config_load(pdir, &cc, &err), 0);
	assert_int_equal(cc.weight_layout, RBLN_WEIGHTS_PACKED16);
	assert_int_equal(rbln_compiled_isa_minor(&cc), 2);
	check_programs(pdir, false, true);
	/* The gaps: 7 matrices a layer and the lm_head, a gap per panel. */
	assert_int_equal(stat(sw, &ss), 0);
	assert_int_equal(stat(pw, &ps), 0);
	assert_true(ss.st_size > ps.st_size);

	/* The same logits and greedy tokens from both (prefill and decode). */
	for (int i = 0; i < 2; i++) {
		struct rbln_runtime *e = eh_open(i ? pdir : sdir);
		struct rbln_sampling_params p;
		struct rbln_seq *seq;
		const int32_t *ids;
		const float *row;

		eh_greedy(&p, 8);
		if (rbln_runtime_add(e, prompt, sizeof(prompt) / sizeof(prompt[0]), &p,
				     RBLN_SEQ_KEEP_PROMPT_LOGITS, &seq, &err))
			fail_msg("%s", err.msg);
		eh_run_all(e);
		row = rbln_seq_prompt_logits(seq, &vocab);
		ids = rbln_seq_output(seq, &len);
		assert_non_null(row);
		assert_int_equal(len, 8);
		logits[i] = malloc(vocab * sizeof(float));
		assert_non_null(logits[i]);
		memcpy(logits[i], row, vocab * sizeof(float));
		memcpy(out[i], ids, sizeof(out[i]));
		rbln_seq_release(seq);
		rbln_runtime_close(e);
	}
	assert_memory_equal(logits[0], logits[1], vocab * sizeof(float));
	assert_memory_equal(out[0], out[1], sizeof(out[0]));
	free(logits[0]);
	free(logits[1]);

	/* An ISA 1.3 device: compile without the gaps. */
	assert_int_equal(rbln_compiled_config_load(sdir, &cc, &err), 0);
	assert_int_equal(rbln_runtime_check_isa(&cc, 0, "emul0", 1, 3, &err), -ENOTSUP);
	test_assert_contains_all(err.msg, "runs ISA 1.3", "--weight-layout spaced",
				 "--weight-layout packed16", NULL);
	cc.matmul_precision = RBLN_MATMUL_BF16;
	assert_int_equal(rbln_runtime_check_isa(&cc, 0, "emul0", 1, 2, &err), -ENOTSUP);
	test_assert_contains_all(err.msg, "--matmul-precision float32", "--weight-layout packed16",
				 "need ISA 1.4", NULL);

	edit_file(spath, "\"spaced\"", "\"sparse\"");
	assert_int_equal(rbln_compiled_config_load(sdir, &cc, &err), -EINVAL);
	test_assert_contains_all(err.msg, "weight_layout", "\"sparse\"",
				 "expected spaced or packed16", NULL);
	edit_file(spath, "\"sparse\"", "\"auto\"");
	assert_int_equal(rbln_compiled_config_load(sdir, &cc, &err), -EINVAL);
	test_assert_contains_all(err.msg, "weight_layout", "\"auto\"",
				 "expected spaced or packed16", NULL);
	/* Compiled before the key existed: packed16, and it runs. */
	edit_file(ppath, "\"weight_layout\": \"packed16\",", "");
	text = test_read_file(ppath, &len);
	assert_null(strstr(text, "weight_layout"));
	free(text);
	assert_int_equal(rbln_compiled_config_load(pdir, &cc, &err), 0);
	assert_int_equal(cc.weight_layout, RBLN_WEIGHTS_PACKED16);
	rbln_runtime_close(eh_open(pdir));

	/* The default, auto, resolves to this host's layout. */
	{
		struct rbln_llama_config c = llama3_config();
		struct rbln_compile_options def = { 0 };

		assert_int_equal(rbln_compile_resolve(&c, &def, &cc, &err), 0);
		assert_string_equal(rbln_weight_layout_name(cc.weight_layout),
				    test_host_weight_layout());
		/* Only the three values come through the options. */
		sp.weight_layout = (enum rbln_weight_layout)5;
		REFUSED(&c, &sp, "--weight-layout");
	}
	test_rmtree(sdir);
	test_rmtree(pdir);
	free(sdir);
	free(pdir);
	free(spath);
	free(ppath);
	free(sw);
	free(pw);
}

static void test_damaged_compiled_dir(void **state)
{
	struct rbln_compile_options o = { .tensor_parallel_size = 2 };
	char *dir = compiled_llama2(&o), *other = compiled_llama2(&o);
	char *w1 = test_join(dir, "rank_1/weights.bin");
	char *w1_other = test_join(other, "rank_1/weights.bin");
	char *prog = test_join(dir, "rank_0/prefill.rbln");
	char *text, *copy;
	size_t len;
	uint64_t huge = 1ull << 40;
	struct stat st;

	(void)state;
	/* Weights of another compile. */
	assert_int_equal(rename(w1_other, w1), 0);
	expect_open_error(dir, "rank_1/weights.bin", "another compile");
	/* Truncated weights. */
	assert_int_equal(stat(w1, &st), 0);
	truncate_file(w1, 10);
	expect_open_error(dir, "weights.bin", "bad magic");
	test_rmtree(dir);
	free(dir);

	dir = compiled_llama2(&o);
	free(w1);
	w1 = test_join(dir, "rank_1/weights.bin");
	assert_int_equal(stat(w1, &st), 0);
	copy = test_read_file(w1, &len);
	test_write_file(w1, copy, len - 4096);
	free(copy);
	expect_open_error(dir, "weights.bin", "truncated");
	test_rmtree(dir);
	free(dir);

	/* A program operand pointing past its buffer: the validator names it. */
	dir = compiled_llama2(&o);
	free(prog);
	prog = test_join(dir, "rank_0/prefill.rbln");
	text = test_read_file(prog, &len);
	{
		uint32_t n_slots;

		memcpy(&n_slots, text + 40, 4);
		/* header 56, slots, stream header 16, EMBED header 8, dst.bo/flags 8 */
		memcpy(text + 56 + 16 * n_slots + 16 + 8 + 8, &huge, 8);
	}
	test_write_file(prog, text, len);
	expect_open_error(dir, "prefill.rbln", "command 0 (EMBED");
	test_write_file(prog, text, len / 2);
	expect_open_error(dir, "prefill.rbln", "truncated");
	free(text);
	/* A missing program (the good prefill back in place). */
	test_rmtree(dir);
	free(dir);
	dir = compiled_llama2(&o);
	free(w1);
	w1 = test_join(dir, "rank_1/decoder_batch_1.rbln");
	assert_int_equal(unlink(w1), 0);
	expect_open_error(dir, "rank_1/decoder_batch_1.rbln", "cannot open");
	/* A FIFO in place of a program, then of the weights: refused, not waited on. */
	assert_int_equal(mkfifo(w1, 0600), 0);
	expect_open_error(dir, "rank_1/decoder_batch_1.rbln", "not a regular file (a FIFO)");
	test_rmtree(dir);
	free(dir);
	dir = compiled_llama2(&o);
	free(w1);
	w1 = test_join(dir, "rank_1/weights.bin");
	assert_int_equal(unlink(w1), 0);
	assert_int_equal(mkfifo(w1, 0600), 0);
	expect_open_error(dir, "rank_1/weights.bin", "not a regular file (a FIFO)");
	test_rmtree(dir);
	test_rmtree(other);
	free(dir);
	free(other);
	free(w1);
	free(w1_other);
	free(prog);
}

/* A checkpoint directory with tiny-llama2's files except those listed. */
static char *llama2_copy(const char *const *except)
{
	char *dir = test_mkdtemp();

	test_link_dir(test_model_path("tiny-llama2"), dir, except);
	return dir;
}

static void expect_compile_error(const char *hf, const char *a, const char *b)
{
	struct rbln_compile_options o = { 0 };
	struct rbln_error err = { 0 };
	char *out = test_mkdtemp();

	if (!rbln_compile(hf, out, &o, &err))
		fail_msg("a damaged checkpoint compiled");
	test_assert_contains_all(err.msg, a, b, NULL);
	test_rmtree(out);
	free(out);
}

static void test_damaged_checkpoints(void **state)
{
	static const char *const no_weights[] = { "model.safetensors", NULL };
	static const char *const no_config[] = { "config.json", NULL };
	char *src = test_join(test_model_path("tiny-llama2"), "model.safetensors");
	char *hf = llama2_copy(no_weights), *path = test_join(hf, "model.safetensors");
	char *data;
	size_t len;

	(void)state;
	data = test_read_file(src, &len);
	test_write_file(path, data, len - 1000);
	expect_compile_error(hf, "model.safetensors", "truncated");
	free(data);
	unlink(path);
	expect_compile_error(hf, "model.safetensors", NULL);
	{
		/* A checkpoint missing a tensor. */
		struct test_st_builder b;
		int64_t shape[] = { 2048, 192, -1 };

		test_st_init(&b);
		test_st_add(&b, "model.embed_tokens.weight", "F16", shape);
		test_st_write(&b, path);
		test_st_free(&b);
		expect_compile_error(hf, "tensor '", "is missing");
	}
	test_rmtree(hf);
	free(hf);
	hf = llama2_copy(no_config);
	free(path);
	path = test_join(hf, "config.json");
	test_write_text(path, "{\"hidden_size\": 192,");
	expect_compile_error(hf, "config.json", NULL);
	test_rmtree(hf);
	free(hf);
	free(path);
	free(src);
}

/* --dummy-weights compiles from config.json alone; the seed fixes the weights. */
static void test_dummy_weights(void **state)
{
	static const char *const only_config[] = {
		"model.safetensors", "tokenizer.json", "tokenizer.model", "tokenizer_config.json",
		"chat_template.jinja", "generation_config.json", "reference.json", NULL,
	};
	struct rbln_compile_options o = { .dummy_weights = true, .dummy_seed = 5,
					  .max_seq_len = 256 };
	struct rbln_sampling_params sp;
	struct rbln_error err = { 0 };
	int32_t prompt[] = { 1, 100, 200, 300 };
	const int32_t *out[2];
	struct rbln_runtime *e[2];
	struct rbln_seq *s[2];
	char *hf = llama2_copy(only_config), *dir[2];
	size_t n[2];
	int i;

	(void)state;
	eh_greedy(&sp, 8);
	for (i = 0; i < 2; i++) {
		dir[i] = test_mkdtemp();
		if (rbln_compile(hf, dir[i], &o, &err))
			fail_msg("%s", err.msg);
		e[i] = eh_open(dir[i]);
		assert_int_equal(rbln_runtime_add(e[i], prompt, 4, &sp, 0, &s[i], &err), 0);
		eh_run_all(e[i]);
		out[i] = rbln_seq_output(s[i], &n[i]);
	}
	assert_int_equal(n[0], 8);
	assert_int_equal(n[1], 8);
	assert_memory_equal(out[0], out[1], 8 * sizeof(int32_t));
	for (i = 0; i < 2; i++) {
		rbln_runtime_close(e[i]);
		test_rmtree(dir[i]);
		free(dir[i]);
	}
	test_rmtree(hf);
	free(hf);
}

/* Ranks run on the devices RBLN_DEVICES (or opt.devices) selects, in that order. */
static void test_device_selection(void **state)
{
	struct rbln_compile_options o = { .tensor_parallel_size = 2 };
	char *dir = compiled_llama2(&o);
	struct rbln_runtime_options eo = { .devices = "0" };
	struct rbln_runtime_info info;
	struct rbln_sampling_params sp;
	struct rbln_error err = { 0 };
	struct rbln_runtime *e = NULL;
	int32_t prompt[] = { 1, 450, 996, 1735 };
	const int32_t *out;
	int32_t first[6];
	struct rbln_seq *s;
	size_t n;
	int i;

	(void)state;
	assert_int_equal(rbln_runtime_open(dir, &eo, &e, &err), -ENODEV);
	test_assert_contains_all(err.msg, "compiled for 2 devices", "1 is visible", NULL);
	eh_greedy(&sp, 6);
	for (i = 0; i < 2; i++) {
		eo.devices = i ? "6,3" : NULL;
		if (rbln_runtime_open(dir, &eo, &e, &err))
			fail_msg("%s", err.msg);
		rbln_runtime_get_info(e, &info);
		assert_int_equal(info.n_devices, 2);
		assert_int_equal(rbln_runtime_add(e, prompt, 4, &sp, 0, &s, &err), 0);
		eh_run_all(e);
		out = rbln_seq_output(s, &n);
		assert_int_equal(n, 6);
		if (!i)
			memcpy(first, out, sizeof(first));
		else
			assert_memory_equal(first, out, sizeof(first));
		rbln_runtime_close(e);
	}
	test_rmtree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_selection),
		cmocka_unit_test(test_tp_rules),
		cmocka_unit_test(test_attention_rules),
		cmocka_unit_test(test_batch_rules),
		cmocka_unit_test(test_config_json_checked),
		cmocka_unit_test(test_quantize_recorded),
		cmocka_unit_test(test_matmul_precision),
		cmocka_unit_test(test_weight_layout),
		cmocka_unit_test(test_damaged_compiled_dir),
		cmocka_unit_test(test_damaged_checkpoints),
		cmocka_unit_test(test_dummy_weights),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
