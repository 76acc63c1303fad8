// SPDX-License-Identifier: MIT
/*
 * Finding rbln.ko's device nodes. /dev/accel/accelN is shared by every
 * DRM accel driver, so a node counts only when sysfs names rbln as its
 * driver. Containers are often given just /dev/rblnN (the udev links, or
 * device nodes made by a runtime from the CDI spec) and no sysfs; those
 * are used when no accel node of rbln is visible.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npu_backend.h"

static bool accel_node_is_rbln(unsigned int minor)
{
	char link[96];
	char target[PATH_MAX];

	snprintf(link, sizeof(link), "/sys/class/accel/accel%u/device/driver",
		 minor);
	ssize_t len = readlink(link, target, sizeof(target) - 1);

	if (len < 0)
		return false;
	target[len] = '\0';
	const char *base = strrchr(target, '/');

	return strcmp(base ? base + 1 : target, "rbln") == 0;
}

static bool parse_node_name(const char *name, const char *prefix,
			    unsigned int *minor)
{
	size_t len = strlen(prefix);
	char *end;

	if (strncmp(name, prefix, len) != 0 || name[len] < '0' || name[len] > '9')
		return false;
	unsigned long n = strtoul(name + len, &end, 10);

	if (*end != '\0' || n > UINT_MAX)
		return false;
	*minor = (unsigned int)n;
	return true;
}

static int append_node(struct npu_rbln_node **nodes, int *count,
		       const char *path, unsigned int minor)
{
	struct npu_rbln_node *grown = realloc(*nodes, (size_t)(*count + 1) *
					      sizeof(**nodes));

	if (!grown)
		return -ENOMEM;
	if (strlen(path) >= sizeof(grown->path))
		return 0;	/* not a name rbln.ko or udev would make */
	*nodes = grown;
	snprintf(grown[*count].path, sizeof(grown[*count].path), "%s", path);
	grown[*count].minor = minor;
	(*count)++;
	return 0;
}

static int scan_dir(const char *dir, const char *prefix, bool check_driver,
		    struct npu_rbln_node **nodes, int *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		unsigned int minor;
		char path[PATH_MAX];
		struct stat st;

		if (!parse_node_name(e->d_name, prefix, &minor))
			continue;
		if (check_driver && !accel_node_is_rbln(minor))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) != 0 || !S_ISCHR(st.st_mode))
			continue;
		if (append_node(nodes, count, path, minor)) {
			closedir(d);
			return -ENOMEM;
		}
	}
	closedir(d);
	return 0;
}

static int by_minor(const void *a, const void *b)
{
	const struct npu_rbln_node *x = a, *y = b;

	return (x->minor > y->minor) - (x->minor < y->minor);
}

int npu_rbln_nodes(struct npu_rbln_node **nodes)
{
	int count = 0;
	int err;

	*nodes = NULL;
	err = scan_dir("/dev/accel", "accel", true, nodes, &count);
	if (!err && count == 0)
		err = scan_dir("/dev", "rbln", false, nodes, &count);
	if (err) {
		free(*nodes);
		*nodes = NULL;
		return npu_fail(err, "listing rbln device nodes");
	}
	if (count > 1)
		qsort(*nodes, (size_t)count, sizeof(**nodes), by_minor);
	return count;
}
