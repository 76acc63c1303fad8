/* SPDX-License-Identifier: MIT */
/* Small file helpers: whole-file reads, read-only mappings, path joining. */
#ifndef RBLN_FILE_H
#define RBLN_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rbln_error.h"

/*
 * The most rbln_file_read() reads: above the largest tokenizer.json of
 * real checkpoints (tens of MB), far below what would exhaust memory.
 */
#define RBLN_FILE_READ_MAX ((size_t)128 << 20)

/*
 * Reads a regular file into a NUL-terminated heap buffer; errors name the
 * path.  Non-regular files (FIFOs, devices, directories) are refused
 * without blocking, and files over `max` bytes are refused with their size.
 */
int rbln_file_read_max(const char *path, size_t max, char **data, size_t *len,
		       struct rbln_error *err);
/* rbln_file_read_max() with RBLN_FILE_READ_MAX. */
int rbln_file_read(const char *path, char **data, size_t *len, struct rbln_error *err);

struct stat;

/*
 * Opens a regular file for reading and fstat()s it into *st: the fd, or a
 * negative errno with err naming the path. FIFOs, devices, sockets and
 * directories are refused without blocking.
 */
int rbln_file_open_regular(const char *path, struct stat *st, struct rbln_error *err);

struct rbln_mapping {
	const void *addr;	/* NULL for an empty file */
	size_t len;
};

/* Maps a whole file read-only (private, so later writers cannot change what
 * we validated, short of truncating it). */
int rbln_file_map(const char *path, struct rbln_mapping *map, struct rbln_error *err);
void rbln_file_unmap(struct rbln_mapping *map);

bool rbln_file_exists(const char *path);
/* Whether dir/name exists. */
bool rbln_dir_has(const char *dir, const char *name);
/* Removes a tree, never following symlinks (they are removed, not their targets). */
void rbln_remove_tree(const char *path);

/*
 * Reads exactly @n bytes at offset @off of @fd (retrying short reads and
 * EINTR): 0, -ENODATA when the file ends first, or -errno.
 */
int rbln_fd_read_at(int fd, void *buf, size_t n, uint64_t off);

/* Writes all @n bytes (retrying short writes and EINTR): 0 or -errno. */
int rbln_fd_write_all(int fd, const void *buf, size_t n);

/* Returns "dir/name" in a heap buffer, or NULL when out of memory. */
char *rbln_path_join(const char *dir, const char *name);

#endif
