// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln-smi - state of the rbln NPUs: a device table (NPU, name, device,
 * bus id, temperature, power, performance state, memory, utilization) and
 * the processes using each device, as text, JSON or CSV; chosen fields
 * for scripts (--query); a watch mode (--loop).
 *
 * Devices are rbln.ko's (smi_devices.c) or, with no module loaded,
 * libnpu's emulated ones as this process would get them.
 *
 * Exit status: 0 devices listed; 1 no rbln device found (the message says
 * so; JSON and CSV output is still well-formed, with no devices); 2 usage
 * error or out of memory.
 */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "smi.h"

enum format { TEXT, JSON, CSV, QUERY };

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: rbln-smi [-j | --csv | -q FIELDS | --query-processes FIELDS]\n"
		"                [--format csv[,noheader][,nounits]] [-l SECONDS [--count N]]\n"
		"Show the state of the rbln NPUs and the processes using them.\n"
		"  -j, --json                 JSON output\n"
		"      --csv                  CSV output (devices, then contexts)\n"
		"  -q, --query FIELDS         the chosen fields of each device, comma-separated,\n"
		"                             as CSV (rbln-smi --help-query lists the fields)\n"
		"      --query-processes FIELDS  the chosen fields of each process's context\n"
		"      --format LIST          for --query: csv, plus noheader (no header line)\n"
		"                             and nounits (bare numbers)\n"
		"  -l, --loop SECONDS         print again every SECONDS (0.1 or more) until\n"
		"                             interrupted; the text table redraws the screen\n"
		"      --count N              with --loop: stop after N prints\n"
		"      --help-query           list the --query fields\n"
		"  -h, --help                 this text\n"
		"  -v, --version              the version\n"
		"Without rbln.ko, the devices are libnpu's emulated ones (RBLN_BACKEND=kernel\n"
		"lists rbln.ko's alone).\n"
		"Exit status: 0 devices found, 1 no rbln device, 2 usage error.\n");
}

static int bad_usage(const char *what, const char *arg)
{
	fprintf(stderr, "rbln-smi: %s '%s'\nTry 'rbln-smi --help'.\n", what, arg);
	return 2;
}

static int parse_format(const char *list, struct smi_query *q)
{
	char buf[64];
	bool csv = false;

	if (strlen(list) >= sizeof(buf))
		return -1;
	strcpy(buf, list);
	q->header = true;
	q->units = true;
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		if (!strcmp(tok, "csv"))
			csv = true;
		else if (!strcmp(tok, "noheader"))
			q->header = false;
		else if (!strcmp(tok, "nounits"))
			q->units = false;
		else
			return -1;
	}
	return csv ? 0 : -1;
}

static void snapshot(struct smi *s)
{
	const char *backend = getenv("RBLN_BACKEND");

	smi_kernel_devices(s);
	if (!s->nnpus && !(backend && !strcmp(backend, "kernel")))
		smi_emulated_devices(s);
	smi_contexts(s);
}

static void print(const struct smi *s, enum format format, const struct smi_query *q,
		  bool looping, unsigned int round)
{
	switch (format) {
	case JSON:
		smi_print_json(s, looping);
		break;
	case CSV:
		smi_print_csv(s);
		break;
	case QUERY:
		smi_query_print(s, q, round == 0);
		break;
	default:
		if (looping && isatty(STDOUT_FILENO))
			fputs("\033[H\033[2J", stdout);
		if (looping) {
			time_t now = time(NULL);
			char when[64];

			strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", localtime(&now));
			printf("%s\n", when);
		}
		if (!s->nnpus) {
			printf("No RBLN devices found: no accel device is bound to the rbln driver\n"
			       "(is rbln.ko loaded? see Documentation/ for installing it).\n");
			break;
		}
		smi_print_table(s);
		break;
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "csv", no_argument, NULL, 'c' },
		{ "query", required_argument, NULL, 'q' },
		{ "query-processes", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "loop", required_argument, NULL, 'l' },
		{ "count", required_argument, NULL, 'n' },
		{ "help-query", no_argument, NULL, 'Q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct smi_query q = { .header = true, .units = true };
	enum format format = TEXT;
	const char *fmt = NULL;
	double loop = 0;
	long count = 0;
	bool found = false;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "jq:l:hv", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			format = JSON;
			break;
		case 'c':
			format = CSV;
			break;
		case 'q':
		case 'p':
			if (smi_query_parse(&q, optarg, c == 'p'))
				return 2;
			format = QUERY;
			break;
		case 'f':
			fmt = optarg;
			break;
		case 'l':
			loop = strtod(optarg, &end);
			if (*end || !(loop >= 0.1 && loop <= 86400))
				return bad_usage("--loop takes seconds from 0.1 to 86400, not", optarg);
			break;
		case 'n':
			count = strtol(optarg, &end, 10);
			if (*end || count < 1)
				return bad_usage("--count takes a positive number, not", optarg);
			break;
		case 'Q':
			smi_query_list_fields(stdout);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		case 'v':
			printf("rbln-smi %s\n", RBLN_SMI_VERSION);
			return 0;
		default:
			fprintf(stderr, "Try 'rbln-smi --help'.\n");
			return 2;
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument", argv[optind]);
	if (fmt && (format != QUERY || parse_format(fmt, &q)))
		return bad_usage(format != QUERY ? "--format goes with --query, not alone:" :
				 "--format takes csv[,noheader][,nounits], not", fmt);
	if (count && !loop)
		return bad_usage("--count needs --loop:", "--count");

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (unsigned int round = 0; !stop; round++) {
		struct smi s = { 0 };

		snapshot(&s);
		found = s.nnpus > 0;
		print(&s, format, &q, loop > 0, round);
		if (!found && format != TEXT && round == 0)
			fprintf(stderr, "rbln-smi: no RBLN devices found\n");
		smi_free(&s);
		if (!loop || (count && round + 1 >= (unsigned long)count))
			break;
		struct timespec ts = { (time_t)loop, (long)((loop - floor(loop)) * 1e9) };

		while (nanosleep(&ts, &ts) && !stop)
			;
	}
	return found ? 0 : 1;
}
