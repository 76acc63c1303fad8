// SPDX-License-Identifier: MIT
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * O_NONBLOCK keeps open() from waiting forever on a FIFO with no writer (or
 * a device) put where a model file belongs; such files are then rejected by
 * type, and the flag is cleared for the reads of a regular file.
 */
int rbln_file_open_regular(const char *path, struct stat *st, struct rbln_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	int flags;

	if (fd < 0)
		return rbln_error_set(err, -errno, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, st) < 0) {
		int e = errno;

		close(fd);
		return rbln_error_set(err, -e, "%s: cannot stat: %s", path, strerror(e));
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return rbln_error_set(err, -EINVAL, "%s: not a regular file (%s)", path,
				      S_ISFIFO(st->st_mode) ? "a FIFO" :
				      S_ISDIR(st->st_mode) ? "a directory" :
				      S_ISSOCK(st->st_mode) ? "a socket" :
				      S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ? "a device" :
				      "a special file");
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		int e = errno;

		close(fd);
		return rbln_error_set(err, -e, "%s: cannot set blocking reads: %s", path, strerror(e));
	}
	return fd;
}

int rbln_file_read(const char *path, char **data, size_t *len, struct rbln_error *err)
{
	return rbln_file_read_max(path, RBLN_FILE_READ_MAX, data, len, err);
}

int rbln_file_read_max(const char *path, size_t max, char **data, size_t *len,
		       struct rbln_error *err)
{
	struct stat st;
	size_t size, got = 0;
	char *buf;
	int fd;

	fd = rbln_file_open_regular(path, &st, err);
	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return rbln_error_set(err, -EFBIG,
				      "%s: %llu bytes is more than this file may have (%zu bytes)",
				      path, (unsigned long long)st.st_size, max);
	}
	size = (size_t)st.st_size;
	buf = malloc(size + 1);
	if (!buf) {
		close(fd);
		return rbln_error_set(err, -ENOMEM, "%s: out of memory reading %zu bytes", path, size);
	}
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;

			free(buf);
			close(fd);
			return rbln_error_set(err, -e, "%s: read failed: %s", path,
					      n < 0 ? strerror(e) : "file shrank while reading");
		}
		got += (size_t)n;
	}
	close(fd);
	buf[size] = '\0';
	*data = buf;
	*len = size;
	return 0;
}

int rbln_file_map(const char *path, struct rbln_mapping *map, struct rbln_error *err)
{
	struct stat st;
	void *addr;
	int fd;

	map->addr = NULL;
	map->len = 0;
	fd = rbln_file_open_regular(path, &st, err);
	if (fd < 0)
		return fd;
	if (st.st_size == 0) {
		close(fd);
		return 0;
	}
	addr = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (addr == MAP_FAILED)
		return rbln_error_set(err, -errno, "%s: mmap failed: %s", path, strerror(errno));
	map->addr = addr;
	map->len = (size_t)st.st_size;
	return 0;
}

void rbln_file_unmap(struct rbln_mapping *map)
{
	if (map->addr)
		munmap((void *)map->addr, map->len);
	map->addr = NULL;
	map->len = 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void rbln_remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

bool rbln_dir_has(const char *dir, const char *name)
{
	char *p = rbln_path_join(dir, name);
	bool ok = p && rbln_file_exists(p);

	free(p);
	return ok;
}

bool rbln_file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

char *rbln_path_join(const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	bool slash = dl && dir[dl - 1] != '/';
	char *p = malloc(dl + slash + nl + 1);

	if (!p)
		return NULL;
	memcpy(p, dir, dl);
	if (slash)
		p[dl] = '/';
	memcpy(p + dl + slash, name, nl + 1);
	return p;
}

int rbln_fd_read_at(int fd, void *buf, size_t n, uint64_t off)
{
	char *p = buf;

	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!r)
			return -ENODATA;
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

int rbln_fd_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}
