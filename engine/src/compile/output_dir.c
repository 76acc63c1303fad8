// SPDX-License-Identifier: MIT
#include "compile/output_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rbln_compile.h"
#include "util/file.h"

int rbln_output_create(const char *path, struct rbln_error *err)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0)
		return rbln_error_set(err, -errno, "%s: cannot create: %s", path, strerror(errno));
	return fd;
}

/* "dir/.base.rbln-partial-" for out_dir "dir/base", in a heap buffer. */
static char *stage_prefix(const char *out_dir)
{
	char *a = strdup(out_dir), *b = strdup(out_dir), *p = NULL;

	if (a && b) {
		/* dirname/basename may modify their argument: one copy each. */
		size_t n;

		while ((n = strlen(b)) > 1 && b[n - 1] == '/')
			b[n - 1] = '\0';
		strcpy(a, b);
		if (asprintf(&p, "%s/.%s%s", dirname(a), basename(b), RBLN_COMPILE_PARTIAL_TAG) < 0)
			p = NULL;
	}
	free(a);
	free(b);
	return p;
}

/* Removes staging directories of the same output whose compile is gone. */
static void remove_dead_stages(const char *prefix)
{
	char *dir = strdup(prefix), *slash;
	const char *base;
	struct dirent *e;
	DIR *d;

	if (!dir)
		return;
	slash = strrchr(dir, '/');
	*slash = '\0';
	base = slash + 1;
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		char *path;
		int fd;

		if (strncmp(e->d_name, base, strlen(base)) ||
		    asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			continue;
		fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* A running compile holds its lock; a killed one released it. */
		if (fd >= 0 && !flock(fd, LOCK_EX | LOCK_NB))
			rbln_remove_tree(path);
		if (fd >= 0)
			close(fd);
		free(path);
	}
	if (d)
		closedir(d);
	free(dir);
}

/* 0 when out_dir may be replaced by a new build. */
static int check_replaceable(const char *out_dir, struct rbln_error *err)
{
	struct stat st;
	struct dirent *e;
	bool empty = true, compiled;
	char *cfg;
	DIR *d;

	if (lstat(out_dir, &st)) {
		if (errno == ENOENT)
			return 0;
		return rbln_error_set(err, -errno, "%s: %s", out_dir, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return rbln_error_set(err, -ENOTDIR, "%s: exists and is not a directory", out_dir);
	cfg = rbln_path_join(out_dir, "rbln_config.json");
	compiled = cfg && !lstat(cfg, &st) && S_ISREG(st.st_mode);
	free(cfg);
	if (compiled)
		return 0;
	d = opendir(out_dir);
	if (!d)
		return rbln_error_set(err, -errno, "%s: %s", out_dir, strerror(errno));
	while ((e = readdir(d)) && empty)
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	if (!empty)
		return rbln_error_set(err, -EEXIST,
				      "%s: exists and is neither empty nor a compiled model "
				      "(no rbln_config.json); not replacing it: remove it or "
				      "choose another output", out_dir);
	return 0;
}

int rbln_output_stage_begin(struct output_stage *st, const char *out_dir, struct rbln_error *err)
{
	char *prefix;
	int rc;

	memset(st, 0, sizeof(*st));
	st->lock_fd = -1;
	rc = check_replaceable(out_dir, err);
	if (rc)
		return rc;
	prefix = stage_prefix(out_dir);
	st->out_dir = strdup(out_dir);
	if (!prefix || !st->out_dir || asprintf(&st->path, "%sXXXXXX", prefix) < 0) {
		st->path = NULL;
		free(prefix);
		rbln_output_stage_abort(st);
		return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	remove_dead_stages(prefix);
	free(prefix);
	if (!mkdtemp(st->path)) {
		rc = rbln_error_set(err, -errno, "%s: cannot create the compile's staging "
				    "directory: %s", st->path, strerror(errno));
		free(st->path);
		st->path = NULL;
		rbln_output_stage_abort(st);
		return rc;
	}
	st->lock_fd = open(st->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (st->lock_fd < 0 || flock(st->lock_fd, LOCK_EX | LOCK_NB)) {
		rc = rbln_error_set(err, -errno, "%s: cannot lock: %s", st->path, strerror(errno));
		rbln_output_stage_abort(st);
		return rc;
	}
	return 0;
}

/* Swaps a complete build for the one at out_dir; returns where the old one is now. */
static int swap_in(struct output_stage *st, char **old, struct rbln_error *err)
{
	*old = NULL;
	if (!rename(st->path, st->out_dir))
		return 0;
	if (errno != EEXIST && errno != ENOTEMPTY)
		return rbln_error_set(err, -errno, "%s: cannot move the build into place: %s",
				      st->out_dir, strerror(errno));
	/* out_dir holds a build (checked at the start): exchange atomically. */
	if (!renameat2(AT_FDCWD, st->path, AT_FDCWD, st->out_dir, RENAME_EXCHANGE)) {
		*old = st->path;
		st->path = NULL;
		return 0;
	}
	if (errno != EINVAL && errno != ENOSYS)
		return rbln_error_set(err, -errno, "%s: cannot exchange with the new build: %s",
				      st->out_dir, strerror(errno));
	/* No RENAME_EXCHANGE on this file system: old aside, new in. */
	if (asprintf(old, "%s.old", st->path) < 0) {
		*old = NULL;
		return rbln_error_set(err, -ENOMEM, "out of memory");
	}
	if (rename(st->out_dir, *old) || rename(st->path, st->out_dir)) {
		int e = errno;

		free(*old);
		*old = NULL;
		return rbln_error_set(err, -e, "%s: cannot replace the old build: %s",
				      st->out_dir, strerror(e));
	}
	return 0;
}

int rbln_output_stage_commit(struct output_stage *st, struct rbln_error *err)
{
	char *old;
	int rc;

	/* mkdtemp made it 0700; the build is as readable as any compiled model. */
	if (chmod(st->path, 0755))
		return rbln_error_set(err, -errno, "%s: %s", st->path, strerror(errno));
	rc = check_replaceable(st->out_dir, err);
	if (!rc)
		rc = swap_in(st, &old, err);
	if (rc)
		return rc;
	if (old) {
		rbln_remove_tree(old);
		free(old);
	}
	free(st->path);
	st->path = NULL;
	rbln_output_stage_abort(st);
	return 0;
}

void rbln_output_stage_abort(struct output_stage *st)
{
	if (st->path)
		rbln_remove_tree(st->path);
	if (st->lock_fd >= 0)
		close(st->lock_fd);
	free(st->path);
	free(st->out_dir);
	st->path = NULL;
	st->out_dir = NULL;
	st->lock_fd = -1;
}
