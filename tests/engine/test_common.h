/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers of the engine front-end tests: where the reference models
 * are, scratch directories, small file writers and a safetensors writer
 * for building malformed checkpoints.
 */
#ifndef RBLN_ENGINE_TEST_COMMON_H
#define RBLN_ENGINE_TEST_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <json-c/json.h>

/*
 * The shared models directory: $RBLN_MODELS_DIR, else the path the build
 * recorded (the shared directory beside the source tree).  Fails the
 * calling test, never skips, when the models are missing.
 */
const char *test_models_dir(void);
/* "<models>/<name>" in a static buffer rotated between a few slots. */
const char *test_model_path(const char *name);
/* Parsed <models>/<name>/reference.json; the caller puts it. */
json_object *test_reference(const char *name);

/* A fresh scratch directory, removed with its contents by test_rmtree. */
char *test_mkdtemp(void);
void test_rmtree(const char *dir);
char *test_join(const char *dir, const char *name);	/* malloc'd */
void test_write_file(const char *path, const void *data, size_t len);
void test_write_text(const char *path, const char *text);
/* Links every file of src into dst, except the names in `except` (NULL-ended). */
void test_link_dir(const char *src, const char *dst, const char *const *except);
char *test_read_file(const char *path, size_t *len);

/* Builds a safetensors file tensor by tensor (data is generated). */
struct test_st_builder {
	json_object *header;
	unsigned char *data;
	size_t len;
};

void test_st_init(struct test_st_builder *b);
/* Adds a tensor; the shape list ends with -1. Data is a fixed finite pattern. */
void test_st_add(struct test_st_builder *b, const char *name, const char *dtype,
		 const int64_t *shape);
/* Adds a header entry given as JSON text, without data (for malformed entries). */
void test_st_add_raw(struct test_st_builder *b, const char *name, const char *entry_json);
void test_st_write(struct test_st_builder *b, const char *path);
void test_st_free(struct test_st_builder *b);

/* Raw safetensors bytes: the 8-byte length field, the header text, data_len zero bytes. */
void test_write_safetensors_raw(const char *path, uint64_t header_len, const char *header,
				size_t data_len);

/* Fails unless msg contains every given substring (list ends with NULL). */
void test_assert_contains_all(const char *msg, ...);

/*
 * The weight layout --weight-layout auto must choose here, told from
 * /proc/cpuinfo's vendor_id: "spaced" on Intel CPUs, else "packed16".
 */
const char *test_host_weight_layout(void);

#endif
