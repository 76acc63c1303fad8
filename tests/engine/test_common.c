// SPDX-License-Identifier: MIT
#include "test_common.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *test_models_dir(void)
{
	const char *dir = getenv("RBLN_MODELS_DIR");
	struct stat st;

	if (!dir || !*dir)
		dir = RBLN_DEFAULT_MODELS_DIR;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		fail_msg("reference models not found at %s (set RBLN_MODELS_DIR)", dir);
	return dir;
}

const char *test_model_path(const char *name)
{
	static char slots[4][4096];
	static int next;
	char *buf = slots[next++ % 4];
	struct stat st;

	snprintf(buf, sizeof(slots[0]), "%s/%s", test_models_dir(), name);
	if (stat(buf, &st) != 0)
		fail_msg("reference model %s is missing", buf);
	return buf;
}

json_object *test_reference(const char *name)
{
	char path[4096];
	json_object *ref;

	snprintf(path, sizeof(path), "%s/reference.json", test_model_path(name));
	ref = json_object_from_file(path);
	if (!ref)
		fail_msg("cannot parse %s", path);
	return ref;
}

char *test_mkdtemp(void)
{
	const char *base = getenv("TMPDIR");
	char *tmpl = malloc(4096);

	assert_non_null(tmpl);
	snprintf(tmpl, 4096, "%s/rbln-engine-test-XXXXXX", base && *base ? base : "/tmp");
	assert_non_null(mkdtemp(tmpl));
	return tmpl;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void test_rmtree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

char *test_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	assert_non_null(p);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

void test_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

void test_write_text(const char *path, const char *text)
{
	test_write_file(path, text, strlen(text));
}

char *test_read_file(const char *path, size_t *len)
{
	/* Until EOF: /proc files report a size of 0. */
	FILE *f = fopen(path, "rb");
	size_t n = 0, cap = 4096, got;
	char *buf = malloc(cap + 1), *grown;

	assert_non_null(f);
	assert_non_null(buf);
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n < cap)
			continue;
		cap *= 2;
		grown = realloc(buf, cap + 1);
		assert_non_null(grown);
		buf = grown;
	}
	assert_int_equal(ferror(f), 0);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

void test_link_dir(const char *src, const char *dst, const char *const *except)
{
	DIR *d = opendir(src);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d))) {
		const char *const *x;
		char *from, *to;
		bool skip = e->d_name[0] == '.';

		for (x = except; x && *x && !skip; x++)
			skip = strcmp(*x, e->d_name) == 0;
		if (skip)
			continue;
		from = test_join(src, e->d_name);
		to = test_join(dst, e->d_name);
		assert_int_equal(symlink(from, to), 0);
		free(from);
		free(to);
	}
	closedir(d);
}

void test_st_init(struct test_st_builder *b)
{
	b->header = json_object_new_object();
	b->data = NULL;
	b->len = 0;
}

static size_t dtype_size(const char *dtype)
{
	if (!strcmp(dtype, "F32") || !strcmp(dtype, "I32"))
		return 4;
	if (!strcmp(dtype, "I64") || !strcmp(dtype, "F64"))
		return 8;
	if (!strcmp(dtype, "U8") || !strcmp(dtype, "I8") || !strcmp(dtype, "BOOL"))
		return 1;
	return 2;
}

void test_st_add(struct test_st_builder *b, const char *name, const char *dtype,
		 const int64_t *shape)
{
	json_object *e = json_object_new_object(), *sh = json_object_new_array();
	json_object *off = json_object_new_array();
	size_t elems = 1, bytes, i;

	for (i = 0; shape[i] >= 0; i++) {
		json_object_array_add(sh, json_object_new_int64(shape[i]));
		elems *= (size_t)shape[i];
	}
	bytes = elems * dtype_size(dtype);
	json_object_object_add(e, "dtype", json_object_new_string(dtype));
	json_object_object_add(e, "shape", sh);
	json_object_array_add(off, json_object_new_int64((int64_t)b->len));
	json_object_array_add(off, json_object_new_int64((int64_t)(b->len + bytes)));
	json_object_object_add(e, "data_offsets", off);
	json_object_object_add(b->header, name, e);
	b->data = realloc(b->data, b->len + bytes + 1);
	assert_non_null(b->data);
	/* A small, finite, deterministic pattern: 0x3C00 is 1.0 in F16. */
	for (i = 0; i < bytes; i++)
		b->data[b->len + i] = (unsigned char)(i % 2 ? 0x3C : 0x00);
	b->len += bytes;
}

void test_st_add_raw(struct test_st_builder *b, const char *name, const char *entry_json)
{
	json_object *e = json_tokener_parse(entry_json);

	assert_non_null(e);
	json_object_object_add(b->header, name, e);
}

void test_write_safetensors_raw(const char *path, uint64_t header_len, const char *header,
				size_t data_len)
{
	size_t hl = strlen(header), i;
	unsigned char *buf = calloc(1, 8 + hl + data_len + 1);

	assert_non_null(buf);
	for (i = 0; i < 8; i++)
		buf[i] = (unsigned char)(header_len >> (8 * i));
	memcpy(buf + 8, header, hl);
	test_write_file(path, buf, 8 + hl + data_len);
	free(buf);
}

void test_st_write(struct test_st_builder *b, const char *path)
{
	const char *h = json_object_to_json_string_ext(b->header, JSON_C_TO_STRING_PLAIN);
	size_t hl = strlen(h), i;
	unsigned char *buf = malloc(8 + hl + b->len + 1);

	assert_non_null(buf);
	for (i = 0; i < 8; i++)
		buf[i] = (unsigned char)((uint64_t)hl >> (8 * i));
	memcpy(buf + 8, h, hl);
	if (b->len)
		memcpy(buf + 8 + hl, b->data, b->len);
	test_write_file(path, buf, 8 + hl + b->len);
	free(buf);
}

void test_st_free(struct test_st_builder *b)
{
	json_object_put(b->header);
	free(b->data);
	b->header = NULL;
	b->data = NULL;
}

void test_assert_contains_all(const char *msg, ...)
{
	va_list ap;
	const char *s;

	va_start(ap, msg);
	while ((s = va_arg(ap, const char *)))
		if (!strstr(msg, s))
			fail_msg("message \"%s\" does not mention \"%s\"", msg, s);
	va_end(ap);
}

const char *test_host_weight_layout(void)
{
	/* The engine chooses by the vendor (cpuid), which cpuinfo names. */
	char *text = test_read_file("/proc/cpuinfo", NULL);
	char *vendor = strstr(text, "vendor_id");
	char *eol = vendor ? strchr(vendor, '\n') : NULL;
	bool intel;

	assert_non_null(vendor);
	if (eol)
		*eol = '\0';
	intel = strstr(vendor, "GenuineIntel") != NULL;
	free(text);
	return intel ? "spaced" : "packed16";
}
