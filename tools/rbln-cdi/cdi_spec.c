// SPDX-License-Identifier: MIT
/*
 * The CDI spec of the rbln NPUs (CDI specification, cdiVersion 0.5.0 and
 * later; see Documentation/admin-guide.md, "Containers through CDI").
 *
 * Every NPU is one CDI device named by its index N (as /dev/rblnN), and
 * "all" gives every NPU. A device's edits:
 *  - kernel devices: its accel node at the host path and as /dev/rblnN
 *    (the name users and images know; hostPath needs cdiVersion 0.5.0),
 *    and a read-only bind of its sysfs device directory, which libnpu and
 *    rbln-smi read;
 *  - emulated devices: RBLN_DEVICE_N=1, which libnpu's emulated backend
 *    takes as "device N is given to this container" (one variable per
 *    device, so that the edits of several devices merge without conflict).
 * The spec-wide edits set RBLN_BACKEND, so that an image never falls back
 * to other devices than the ones it was given.
 * Annotations (the generator, each device's host node) need 0.6.0 and are
 * left out of older versions.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdi_spec.h"

static const char *const known_versions[] = {
	"0.5.0", "0.6.0", "0.7.0", "0.8.0",
};

const char *rbln_cdi_check_version(const char *version)
{
	for (size_t i = 0; i < sizeof(known_versions) / sizeof(known_versions[0]); i++)
		if (strcmp(version, known_versions[i]) == 0)
			return NULL;
	return "must be one of 0.5.0, 0.6.0, 0.7.0, 0.8.0 (hostPath of device nodes needs 0.5.0)";
}

/* As the CDI specification defines a kind: vendor (a domain) "/" class. */
const char *rbln_cdi_check_kind(const char *kind)
{
	const char *slash = strchr(kind, '/');

	if (!slash || slash == kind || !slash[1] || strchr(slash + 1, '/'))
		return "must be 'vendor/class', for example rebellions.ai/npu";
	if (!isalnum((unsigned char)kind[0]) || !isalnum((unsigned char)slash[-1]))
		return "the vendor must start and end with a letter or digit";
	for (const char *p = kind; p < slash; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != '_')
			return "the vendor may hold only letters, digits, '.', '-' and '_'";
	if (!isalnum((unsigned char)slash[1]) || !isalnum((unsigned char)kind[strlen(kind) - 1]))
		return "the class must start and end with a letter or digit";
	for (const char *p = slash + 1; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
			return "the class may hold only letters, digits, '-' and '_'";
	return NULL;
}

static bool has_annotations(const char *version)
{
	return strcmp(version, "0.6.0") >= 0;
}

/* json-c fails only when memory runs out: the tool then stops. */
static struct json_object *must(struct json_object *obj)
{
	if (!obj) {
		fprintf(stderr, "rbln-cdi: out of memory\n");
		exit(2);
	}
	return obj;
}

static struct json_object *new_object(void)
{
	return must(json_object_new_object());
}

static struct json_object *new_array(void)
{
	return must(json_object_new_array());
}

static void add(struct json_object *obj, const char *key, struct json_object *val)
{
	if (json_object_object_add(obj, key, must(val)))
		must(NULL);
}

static void add_str(struct json_object *obj, const char *key, const char *val)
{
	add(obj, key, json_object_new_string(val));
}

static void append(struct json_object *arr, struct json_object *val)
{
	if (json_object_array_add(arr, must(val)))
		must(NULL);
}

static struct json_object *device_node(const char *path, const char *host_path)
{
	struct json_object *n = new_object();

	add_str(n, "path", path);
	if (host_path)
		add_str(n, "hostPath", host_path);
	add_str(n, "permissions", "rw");
	return n;
}

static struct json_object *sysfs_mount(const char *dir)
{
	static const char *const options[] = { "ro", "nosuid", "nodev", "noexec", "bind" };
	struct json_object *m = new_object(), *o = new_array();

	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		append(o, json_object_new_string(options[i]));
	add_str(m, "hostPath", dir);
	add_str(m, "containerPath", dir);
	add(m, "options", o);
	return m;
}

/* The edits that give @npu to a container, appended to the arrays. */
static void npu_edits(const struct rbln_cdi_options *opt, const struct rbln_cdi_npu *npu,
		      struct json_object *nodes, struct json_object *mounts,
		      struct json_object *env)
{
	char name[32], var[48];

	if (opt->emulated) {
		snprintf(var, sizeof(var), "RBLN_DEVICE_%u=1", npu->hw_index);
		append(env, json_object_new_string(var));
		return;
	}
	snprintf(name, sizeof(name), "/dev/rbln%u", npu->hw_index);
	append(nodes, device_node(npu->node, NULL));
	append(nodes, device_node(name, npu->node));
	if (npu->sysfs_dir[0])
		append(mounts, sysfs_mount(npu->sysfs_dir));
}

/* containerEdits from the arrays, leaving out the empty ones. */
static struct json_object *edits_object(struct json_object *env, struct json_object *nodes,
					struct json_object *mounts)
{
	struct json_object *e = new_object();
	struct json_object *parts[] = { env, nodes, mounts };
	static const char *const keys[] = { "env", "deviceNodes", "mounts" };

	for (size_t i = 0; i < 3; i++) {
		if (json_object_array_length(parts[i]))
			add(e, keys[i], parts[i]);
		else
			json_object_put(parts[i]);
	}
	return e;
}

static struct json_object *device(const struct rbln_cdi_options *opt, const char *name,
				  const struct rbln_cdi_npu *npus, unsigned int n)
{
	struct json_object *d = new_object(), *ann;
	struct json_object *nodes = new_array(), *mounts = new_array(), *env = new_array();

	for (unsigned int i = 0; i < n; i++)
		npu_edits(opt, &npus[i], nodes, mounts, env);
	add_str(d, "name", name);
	if (has_annotations(opt->version) && n == 1 && npus[0].node[0]) {
		ann = new_object();
		add_str(ann, "rebellions.ai/host-node", npus[0].node);
		add(d, "annotations", ann);
	}
	add(d, "containerEdits", edits_object(env, nodes, mounts));
	return d;
}

struct json_object *rbln_cdi_spec_build(const struct rbln_cdi_options *opt,
					const struct rbln_cdi_npu *npus, unsigned int n)
{
	struct json_object *spec = new_object(), *devices = new_array(), *env = new_array();
	char name[16];

	add_str(spec, "cdiVersion", opt->version);
	add_str(spec, "kind", opt->kind);
	if (has_annotations(opt->version)) {
		struct json_object *ann = new_object();

		add_str(ann, "rebellions.ai/generator", opt->generator);
		add_str(ann, "rebellions.ai/backend", opt->emulated ? "emul" : "kernel");
		add(spec, "annotations", ann);
	}
	for (unsigned int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%u", npus[i].hw_index);
		append(devices, device(opt, name, &npus[i], 1));
	}
	if (n)
		append(devices, device(opt, "all", npus, n));
	add(spec, "devices", devices);
	append(env, json_object_new_string(opt->emulated ? "RBLN_BACKEND=emul"
					   : "RBLN_BACKEND=kernel"));
	add(spec, "containerEdits", edits_object(env, new_array(), new_array()));
	return spec;
}
