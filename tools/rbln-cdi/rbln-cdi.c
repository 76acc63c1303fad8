// SPDX-License-Identifier: MIT
/*
 * rbln-cdi - writes the CDI (Container Device Interface) spec that gives
 * the rbln NPUs to containers: podman --device rebellions.ai/npu=all,
 * Docker with CDI enabled, containerd and CRI-O.
 *
 *   rbln-cdi generate --output /etc/cdi/rbln.yaml
 *   rbln-cdi list
 *
 * The devices are found through libnpu, so the spec covers rbln.ko's NPUs
 * when the module is loaded and libnpu's emulated ones otherwise (or as
 * --backend says). It always covers every device: RBLN_DEVICES and the
 * RBLN_DEVICE_N variables of the environment are ignored.
 *
 * Exit status: 0 done; 1 no device found, or the spec cannot be written;
 * 2 usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libnpu.h>

#include "cdi_spec.h"
#include "cdi_yaml.h"

#define RBLN_CDI_VERSION	RBLN_VERSION

extern char **environ;

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: rbln-cdi [generate] [-o FILE] [--format yaml|json] [--kind VENDOR/CLASS]\n"
		"                [--cdi-version V] [--backend kernel|emul]\n"
		"       rbln-cdi list [--kind VENDOR/CLASS] [--backend kernel|emul]\n"
		"Write the CDI spec that gives the rbln NPUs to containers: one CDI device per\n"
		"NPU, named by its index N (/dev/rblnN), and \"all\".\n"
		"\n"
		"  generate             write the spec (the default command)\n"
		"  list                 print the CDI names of the devices, one a line\n"
		"  -o, --output FILE    write the spec to FILE, replaced atomically (for example\n"
		"                       /etc/cdi/rbln.yaml); default: standard output\n"
		"      --format FORMAT  yaml or json; default: json for a FILE ending in .json,\n"
		"                       else yaml\n"
		"      --kind KIND      the devices' kind, default " RBLN_CDI_DEFAULT_KIND "\n"
		"      --cdi-version V  0.5.0, 0.6.0 (default), 0.7.0 or 0.8.0; 0.6.0 and later\n"
		"                       add annotations. Debian 12's podman 4.3 reads specs up to\n"
		"                       0.5.0\n"
		"      --backend B      kernel: rbln.ko's devices (their accel nodes, /dev/rblnN\n"
		"                       and sysfs); emul: libnpu's emulated devices (selected in\n"
		"                       the container by RBLN_DEVICE_N variables); default: kernel\n"
		"                       when rbln.ko's devices exist, else emul\n"
		"  -h, --help           this text\n"
		"  -V, --version        the version\n"
		"\n"
		"Exit status: 0 done, 1 no device found or the spec cannot be written, 2 usage\n"
		"error.\n");
}

static int fail_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "rbln-cdi: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'rbln-cdi --help'.\n");
	return 2;
}

/* The spec covers every device, whatever selection the caller's shell has. */
static void forget_device_selection(void)
{
	char name[64];

	unsetenv("RBLN_DEVICES");
	for (size_t i = 0; environ[i];) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);

		if (len < sizeof(name) && strncmp(environ[i], "RBLN_DEVICE_", 12) == 0) {
			memcpy(name, environ[i], len);
			name[len] = '\0';
			unsetenv(name);
			continue;	/* environ shifted down */
		}
		i++;
	}
}

/* The NPUs of @backend (NPU_BACKEND_AUTO: libnpu's choice); count or -1. */
static int find_npus(enum npu_backend backend, struct rbln_cdi_npu **out, bool *emulated)
{
	struct npu_context_options opt = { .struct_size = sizeof(opt), .backend = backend };
	struct rbln_cdi_npu *npus;
	npu_context *ctx;
	int err = npu_context_create(&opt, &ctx);
	unsigned int n;

	if (err) {
		fprintf(stderr, "rbln-cdi: cannot list the devices: %s (%s)\n", npu_strerror(err),
			npu_error_detail());
		return -1;
	}
	*emulated = npu_context_backend(ctx) == NPU_BACKEND_EMUL;
	n = npu_device_count(ctx);
	npus = calloc(n ? n : 1, sizeof(*npus));
	if (!npus) {
		fprintf(stderr, "rbln-cdi: out of memory\n");
		exit(2);
	}
	for (unsigned int i = 0; i < n; i++) {
		struct npu_device_info info;
		char link[PATH_MAX];

		err = npu_device_info_get(ctx, i, &info);
		if (err) {
			fprintf(stderr, "rbln-cdi: device %u: %s (%s)\n", i, npu_strerror(err),
				npu_error_detail());
			npu_context_destroy(ctx);
			free(npus);
			return -1;
		}
		npus[i].hw_index = info.hw_index;
		if (*emulated)
			continue;
		snprintf(npus[i].node, sizeof(npus[i].node), "%s", info.path);
		const char *base = strrchr(info.path, '/');

		snprintf(link, sizeof(link), "/sys/class/accel/%s/device", base ? base + 1 : "");
		if (!realpath(link, npus[i].sysfs_dir))
			npus[i].sysfs_dir[0] = '\0';	/* a container with nodes only */
	}
	npu_context_destroy(ctx);
	*out = npus;
	return (int)n;
}

static int write_spec(FILE *out, struct json_object *spec, bool yaml)
{
	const char *err = NULL;

	if (yaml)
		return rbln_cdi_write_yaml(out, spec, &err) ? (fprintf(stderr,
			"rbln-cdi: cannot write YAML: %s\n", err), -1) : 0;
	fprintf(out, "%s\n", json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
	return 0;
}

/* Writes the spec to @path through a temporary file renamed over it. */
static int write_file(const char *path, struct json_object *spec, bool yaml)
{
	char tmp[PATH_MAX];
	int fd, rc;
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
		fprintf(stderr, "rbln-cdi: %s: path too long\n", path);
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "rbln-cdi: cannot create %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		fprintf(stderr, "rbln-cdi: %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	rc = write_spec(f, spec, yaml);
	if (fchmod(fd, 0644) || fflush(f) || fsync(fd))
		rc = rc ? rc : (fprintf(stderr, "rbln-cdi: %s: %s\n", tmp, strerror(errno)), -1);
	if (fclose(f) && !rc)
		rc = (fprintf(stderr, "rbln-cdi: %s: %s\n", tmp, strerror(errno)), -1);
	if (!rc && rename(tmp, path))
		rc = (fprintf(stderr, "rbln-cdi: cannot replace %s: %s\n", path, strerror(errno)), -1);
	if (rc)
		unlink(tmp);
	return rc;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "kind", required_argument, NULL, 'k' },
		{ "cdi-version", required_argument, NULL, 'c' },
		{ "backend", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct rbln_cdi_options opt = {
		.kind = RBLN_CDI_DEFAULT_KIND,
		.version = "0.6.0",
		.generator = "rbln-cdi " RBLN_CDI_VERSION,
	};
	enum npu_backend backend = NPU_BACKEND_AUTO;
	const char *output = NULL, *format = NULL, *why;
	bool list = false, yaml;
	struct rbln_cdi_npu *npus;
	int c, n, rc;

	while ((c = getopt_long(argc, argv, "o:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "yaml") && strcmp(optarg, "json"))
				return fail_usage("--format must be yaml or json, not '%s'", optarg);
			format = optarg;
			break;
		case 'k':
			why = rbln_cdi_check_kind(optarg);
			if (why) {
				fprintf(stderr, "rbln-cdi: --kind '%s': %s\n", optarg, why);
				return 2;
			}
			opt.kind = optarg;
			break;
		case 'c':
			why = rbln_cdi_check_version(optarg);
			if (why) {
				fprintf(stderr, "rbln-cdi: --cdi-version '%s': %s\n", optarg, why);
				return 2;
			}
			opt.version = optarg;
			break;
		case 'b':
			if (strcmp(optarg, "kernel") == 0)
				backend = NPU_BACKEND_KERNEL;
			else if (strcmp(optarg, "emul") == 0)
				backend = NPU_BACKEND_EMUL;
			else
				return fail_usage("--backend must be kernel or emul, not '%s'", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("rbln-cdi %s\n", RBLN_CDI_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try 'rbln-cdi --help'.\n");
			return 2;
		}
	}
	if (optind < argc) {
		if (strcmp(argv[optind], "list") == 0)
			list = true;
		else if (strcmp(argv[optind], "generate") != 0)
			return fail_usage("unknown command '%s' (generate or list)", argv[optind]);
		if (++optind < argc)
			return fail_usage("unexpected argument '%s'", argv[optind]);
	}
	if (list && (output || format))
		return fail_usage("%s", "list takes no --output or --format");

	forget_device_selection();
	n = find_npus(backend, &npus, &opt.emulated);
	if (n < 0)
		return 1;
	if (n == 0) {
		fprintf(stderr, "rbln-cdi: no rbln device found%s\n", backend == NPU_BACKEND_KERNEL
			? " (is rbln.ko loaded?)" : "");
		free(npus);
		return 1;
	}
	if (list) {
		for (int i = 0; i < n; i++)
			printf("%s=%u\n", opt.kind, npus[i].hw_index);
		printf("%s=all\n", opt.kind);
		free(npus);
		return 0;
	}
	struct json_object *spec = rbln_cdi_spec_build(&opt, npus, (unsigned int)n);

	yaml = format ? strcmp(format, "yaml") == 0 : !(output && ends_with(output, ".json"));
	rc = output ? write_file(output, spec, yaml) : write_spec(stdout, spec, yaml);
	if (!rc && output)
		fprintf(stderr, "rbln-cdi: wrote %s: %d %s device%s and \"all\" as %s=...\n", output,
			n, opt.emulated ? "emulated" : "rbln.ko", n == 1 ? "" : "s", opt.kind);
	json_object_put(spec);
	free(npus);
	return rc ? 1 : 0;
}
