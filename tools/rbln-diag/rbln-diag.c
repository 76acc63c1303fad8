// SPDX-License-Identifier: MIT
/*
 * rbln-diag - health check of the rbln NPUs: per device a memory pattern
 * test, host<->device DMA bandwidth and a compute self-test of every
 * opcode against golden results; across devices the device->device copy
 * matrix and an all-reduce. Levels quick, medium and long set the sizes.
 * Works on rbln.ko's devices and on libnpu's emulated ones alike.
 *
 * Exit status: 0 every check passed; 1 a check failed or no device was
 * found; 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

#define RBLN_DIAG_VERSION	RBLN_VERSION
#define MiB			(1ull << 20)

static const struct diag_level levels[] = {
	{ "quick", 16 * MiB, false, 16 * MiB, 2, 4 * MiB, 1, 4 * MiB, 2 },
	{ "medium", 256 * MiB, false, 64 * MiB, 3, 16 * MiB, 3, 16 * MiB, 3 },
	{ "long", 1024 * MiB, true, 256 * MiB, 5, 64 * MiB, 20, 64 * MiB, 5 },
};

enum { CHECK_MEMORY = 1, CHECK_DMA = 2, CHECK_P2P = 4, CHECK_COMPUTE = 8, CHECK_COLL = 16,
       CHECK_ALL = 31 };

static const char *const check_names[] = { "memory", "dma", "p2p", "compute", "collective" };

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: rbln-diag [-r LEVEL] [-d DEVICES] [--checks LIST] [--mem-size SIZE]\n"
		"                 [--backend kernel|emul] [-j]\n"
		"Run health checks on the rbln NPUs and say PASS or FAIL.\n"
		"\n"
		"Per device: memory (device FILL patterns read back by the host, and an\n"
		"address pattern copied across the buffer), dma (host -> device and\n"
		"device -> host bandwidth, content checked), compute (every opcode against\n"
		"golden results). Across devices: p2p (the device -> device copy matrix)\n"
		"and collective (an all-reduce over all devices, its bus bandwidth).\n"
		"\n"
		"  -r, --level LEVEL    quick (1, default), medium (2) or long (3):\n"
		"                       quick  16 MiB memory, 16 MiB DMA, 4 MiB pairs and all-reduce\n"
		"                       medium 256 MiB memory, 64 MiB DMA, 16 MiB pairs and all-reduce\n"
		"                       long   1 GiB memory with walking bits, 256 MiB DMA, 64 MiB\n"
		"                              pairs and all-reduce, 20 compute rounds\n"
		"  -d, --devices LIST   devices to check, as RBLN_DEVICES (0-3, 0,2,5); default all\n"
		"      --checks LIST    some of memory,dma,p2p,compute,collective (default all)\n"
		"      --mem-size SIZE  bytes the memory test covers per device (K, M, G suffixes)\n"
		"      --backend B      kernel (rbln.ko) or emul; default: as libnpu chooses\n"
		"  -j, --json           JSON output\n"
		"  -h, --help           this text\n"
		"  -V, --version        the version\n"
		"\n"
		"Exit status: 0 every check passed, 1 a check failed or no device was found,\n"
		"2 usage error.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "rbln-diag: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'rbln-diag --help'.\n");
	return 2;
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	default: break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	if (*end || v < 4096 || v > (1ull << 40))
		return -1;
	*out = v & ~4095ull;
	return 0;
}

static int parse_checks(char *list, unsigned int *out)
{
	*out = 0;
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		unsigned int k;

		for (k = 0; k < 5 && strcmp(tok, check_names[k]); k++)
			;
		if (k == 5)
			return usage_error("unknown check '%s' (memory, dma, p2p, compute, "
					   "collective)", tok);
		*out |= 1u << k;
	}
	return *out ? 0 : usage_error("%s", "--checks names no check");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "level", required_argument, NULL, 'r' },
		{ "devices", required_argument, NULL, 'd' },
		{ "checks", required_argument, NULL, 'c' },
		{ "mem-size", required_argument, NULL, 'm' },
		{ "backend", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct npu_context_options opt = { .struct_size = sizeof(opt) };
	struct diag_level level = levels[0];
	unsigned int checks = CHECK_ALL;
	uint64_t mem_size = 0;
	bool json = false;
	struct diag d = { 0 };
	unsigned int failed = 0;
	int c, err;

	while ((c = getopt_long(argc, argv, "r:d:jhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': {
			unsigned int k;

			for (k = 0; k < 3; k++)
				if (!strcmp(optarg, levels[k].name) ||
				    (optarg[0] == (char)('1' + k) && !optarg[1]))
					break;
			if (k == 3)
				return usage_error("--level must be quick, medium or long (1-3), "
						   "not '%s'", optarg);
			level = levels[k];
			break;
		}
		case 'd':
			opt.devices = optarg;
			break;
		case 'c':
			if (parse_checks(optarg, &checks))
				return 2;
			break;
		case 'm':
			if (parse_size(optarg, &mem_size))
				return usage_error("--mem-size '%s': a size from 4K to 1T, such as "
						   "512M", optarg);
			break;
		case 'b':
			if (!strcmp(optarg, "kernel"))
				opt.backend = NPU_BACKEND_KERNEL;
			else if (!strcmp(optarg, "emul"))
				opt.backend = NPU_BACKEND_EMUL;
			else
				return usage_error("--backend must be kernel or emul, not '%s'", optarg);
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("rbln-diag %s\n", RBLN_DIAG_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try 'rbln-diag --help'.\n");
			return 2;
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (mem_size)
		level.mem_bytes = mem_size;
	d.level = &level;

	err = npu_context_create(&opt, &d.ctx);
	if (err) {
		fprintf(stderr, "rbln-diag: %s (%s)\n", npu_strerror(err), npu_error_detail());
		return err == -EINVAL ? 2 : 1;
	}
	d.n = npu_device_count(d.ctx);
	if (d.n == 0 || d.n > DIAG_MAX_DEVICES) {
		fprintf(stderr, "rbln-diag: %u devices found\n", d.n);
		npu_context_destroy(d.ctx);
		return 1;
	}
	d.p2p_gbps = calloc(DIAG_MAX_DEVICES, sizeof(*d.p2p_gbps));
	if (!d.p2p_gbps) {
		fprintf(stderr, "rbln-diag: out of memory\n");
		return 2;
	}
	for (unsigned int i = 0; i < d.n; i++) {
		struct npu_device_info info;

		err = npu_device_open(d.ctx, i, &d.dev[i]);
		if (!err)
			err = npu_queue_create(d.dev[i], NPU_PRIORITY_NORMAL, &d.queue[i]);
		if (!err)
			err = npu_device_query(d.dev[i], &info);
		if (err) {
			fprintf(stderr, "rbln-diag: device %u: %s (%s)\n", i, npu_strerror(err),
				npu_error_detail());
			return 1;
		}
		d.hw[i] = info.hw_index;
		for (unsigned int b = 0; b < DIAG_MAX_DEVICES; b++)
			d.p2p_gbps[i][b] = NAN;
	}
	for (unsigned int i = 0; i < d.n; i++) {
		if (checks & CHECK_MEMORY)
			diag_memory(&d, i);
		if (checks & CHECK_DMA)
			diag_dma(&d, i);
		if (checks & CHECK_COMPUTE)
			diag_compute(&d, i);
	}
	if (checks & CHECK_P2P)
		diag_p2p(&d);
	if (checks & CHECK_COLL)
		diag_collective(&d);

	const char *backend = npu_backend_name(npu_context_backend(d.ctx));

	if (json)
		diag_print_json(&d, backend);
	else
		diag_print_table(&d, backend);
	for (unsigned int i = 0; i < d.num_results; i++)
		failed += !d.results[i].pass;
	for (unsigned int i = 0; i < d.n; i++) {
		npu_queue_destroy(d.queue[i]);
		npu_device_close(d.dev[i]);
	}
	npu_context_destroy(d.ctx);
	free(d.results);
	free(d.p2p_gbps);
	return failed ? 1 : 0;
}
