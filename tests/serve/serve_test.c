// SPDX-License-Identifier: MIT
#include "serve_test.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *rotate(const char *a, const char *b)
{
	static char slots[8][4096];
	static unsigned next;
	char *s = slots[next++ % 8];

	snprintf(s, sizeof(slots[0]), "%s/%s", a, b);
	return s;
}

const char *fixture(const char *rel)
{
	const char *dir = getenv("SERVE_FIXTURES_DIR");

	return rotate(dir ? dir : SERVE_FIXTURES_DIR, rel);
}

const char *models_dir(void)
{
	const char *dir = getenv("RBLN_MODELS_DIR");
	struct stat st;

	if (!dir)
		dir = RBLN_DEFAULT_MODELS_DIR;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		fail_msg("reference models not found at %s (set RBLN_MODELS_DIR)", dir);
	return dir;
}

const char *model_path(const char *name)
{
	return rotate(models_dir(), name);
}

char *tmpdir_new(void)
{
	char tmpl[] = "/tmp/rbln-serve-test.XXXXXX";
	char *d = mkdtemp(tmpl);

	assert_non_null(d);
	return strdup(d);
}

void tmpdir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *p;
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		p = path_join(dir, e->d_name);
		if (!lstat(p, &st) && S_ISDIR(st.st_mode))
			tmpdir_remove(p);
		else
			unlink(p);
		free(p);
	}
	closedir(d);
	rmdir(dir);
}

char *path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	assert_non_null(p);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		fail_msg("cannot write %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

void make_dir(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", path, strerror(errno));
}

char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		fail_msg("cannot read %s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

void assert_contains_all(const char *msg, ...)
{
	va_list ap;
	const char *s;

	va_start(ap, msg);
	while ((s = va_arg(ap, const char *))) {
		if (!msg || !strstr(msg, s)) {
			va_end(ap);
			fail_msg("expected \"%s\" in: %s", s, msg ? msg : "(null)");
		}
	}
	va_end(ap);
}

json_object *parse_json(const char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o;

	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, text, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		json_tokener_free(tok);
		fail_msg("not one JSON document: %.*s", (int)len, text);
	}
	json_tokener_free(tok);
	return o;
}

static json_object *walk(json_object *o, const char *path, bool must)
{
	char buf[256], *save = NULL, *part;

	snprintf(buf, sizeof(buf), "%s", path);
	for (part = strtok_r(buf, ".", &save); part && o; part = strtok_r(NULL, ".", &save)) {
		if (json_object_is_type(o, json_type_array)) {
			char *end;
			long i = strtol(part, &end, 10);

			o = *end ? NULL : json_object_array_get_idx(o, (size_t)i);
		} else if (json_object_is_type(o, json_type_object)) {
			json_object *next = NULL;

			if (!json_object_object_get_ex(o, part, &next))
				next = NULL;
			o = next;
			if (!o && !must)
				return NULL;
			if (!o)
				fail_msg("no member '%s' in path '%s'", part, path);
		} else {
			o = NULL;
		}
	}
	if (!o && must)
		fail_msg("path '%s' not found", path);
	return o;
}

json_object *jpath(json_object *o, const char *path)
{
	return walk(o, path, true);
}

const char *jpath_str(json_object *o, const char *path)
{
	json_object *v = jpath(o, path);

	if (!json_object_is_type(v, json_type_string))
		fail_msg("'%s' is not a string: %s", path, json_object_to_json_string(v));
	return json_object_get_string(v);
}

int64_t jpath_int(json_object *o, const char *path)
{
	json_object *v = jpath(o, path);

	if (!json_object_is_type(v, json_type_int))
		fail_msg("'%s' is not an integer: %s", path, json_object_to_json_string(v));
	return json_object_get_int64(v);
}

bool jpath_has(json_object *o, const char *path)
{
	return walk(o, path, false) != NULL;
}

bool jpath_null(json_object *o, const char *path)
{
	char parent[256];
	const char *dot = strrchr(path, '.');
	json_object *p = o, *v = NULL;

	if (dot) {
		snprintf(parent, sizeof(parent), "%.*s", (int)(dot - path), path);
		p = jpath(o, parent);
	}
	return json_object_is_type(p, json_type_object) &&
	       json_object_object_get_ex(p, dot ? dot + 1 : path, &v) && !v;
}
