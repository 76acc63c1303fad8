// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fuzz_replay.c - runs the fuzz target on files, without libFuzzer: the
 * seed corpus (and any crash reproducer) becomes a regression test in the
 * ordinary and the sanitizer builds. Output is TAP, one case per file.
 *
 *   fuzz_replay FILE|DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char **files;
static size_t nfiles;

static void add_file(const char *path)
{
	files = realloc(files, (nfiles + 1) * sizeof(*files));
	if (!files || !(files[nfiles] = strdup(path))) {
		perror("fuzz_replay");
		exit(2);
	}
	nfiles++;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_path(const char *path)
{
	struct dirent *e;
	struct stat st;
	char sub[4096];
	DIR *dir;

	if (stat(path, &st)) {
		perror(path);
		exit(2);
	}
	if (!S_ISDIR(st.st_mode)) {
		add_file(path);
		return;
	}
	dir = opendir(path);
	if (!dir) {
		perror(path);
		exit(2);
	}
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		add_path(sub);
	}
	closedir(dir);
}

int main(int argc, char **argv)
{
	uint8_t *buf;
	size_t i, len;
	long n;
	FILE *f;

	for (int a = 1; a < argc; a++)
		add_path(argv[a]);
	if (!nfiles) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	qsort(files, nfiles, sizeof(*files), by_name);
	printf("1..%zu\n", nfiles);
	for (i = 0; i < nfiles; i++) {
		f = fopen(files[i], "rb");
		n = -1;
		if (f && !fseek(f, 0, SEEK_END))
			n = ftell(f);
		len = n > 0 ? (size_t)n : 0;
		/* An exact-size copy, as libFuzzer hands it over. */
		buf = malloc(len ? len : 1);
		if (!f || n < 0 || !buf || fseek(f, 0, SEEK_SET) ||
		    fread(buf, 1, len, f) != len) {
			printf("not ok %zu - %s: cannot read\n", i + 1,
			       files[i]);
			if (f)
				fclose(f);
			free(buf);
			free(files[i]);
			continue;
		}
		fclose(f);
		/* A failure aborts the whole run, with a sanitizer report. */
		fflush(stdout);
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		printf("ok %zu - %s\n", i + 1, strrchr(files[i], '/') ?
		       strrchr(files[i], '/') + 1 : files[i]);
		free(files[i]);
	}
	free(files);
	return 0;
}
