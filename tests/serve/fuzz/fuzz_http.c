// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: raw bytes to rbln-serve's HTTP port.  The whole
 * transport runs as in rbln-serve (libmicrohttpd with its bounds, the
 * arrival deadlines, the API key, framing checks, routing, the preparation
 * workers that parse, render and tokenize), with the tiny-llama3 model
 * loaded up to its tokenizer and chat template but without an engine, so
 * every generating request is prepared and then refused with 503.
 *
 * Each input is sent on a new connection whose sending side is then shut;
 * the answer is what comes until the server closes or pauses.  Failures:
 * no answer and no close within 10 s (a hang; the server's deadlines are
 * 1 s here), an answer that is not HTTP, or an error that names a server
 * path (the models directory).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "serve/http/server.h"
#include "serve/model/served_model.h"
#include "serve/repository/repository.h"

#define FUZZ_API_KEY "fuzz-key"
/* The deadlines below are 1 s: an input left unanswered longer is a hang. */
#define HANG_MS 10000
#define ANSWER_PAUSE_MS 100

static struct serve_repository repo;
static struct serve_model model;
static struct serve_server srv;
static const char *models_dir;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct serve_model_json mj = { 0 };
	struct serve_options o;
	struct rbln_error err = { 0 };
	char dir[4096];

	(void)argc;
	(void)argv;
	models_dir = getenv("RBLN_MODELS_DIR");
	if (!models_dir) {
		fprintf(stderr, "fuzz_http: set RBLN_MODELS_DIR\n");
		exit(1);
	}
	snprintf(dir, sizeof(dir), "%s/tiny-llama3", models_dir);
	mj.file = strdup("fuzz");
	mj.model = strdup(dir);
	mj.max_model_len = 64;
	if (serve_repository_single("tiny", &mj, &repo, &err) ||
	    serve_model_prepare(&model, &repo.models[0], &err)) {
		fprintf(stderr, "fuzz_http: %s\n", err.msg);
		exit(1);
	}
	serve_model_json_free(&mj);
	serve_model_set_unavailable(&model, "no engine in the fuzzer");
	serve_options_default(&o);
	o.host = "127.0.0.1";
	o.http_port = 0;
	o.metrics_port = 0;
	o.http_threads = 2;
	o.max_input_size = 1 << 16;
	o.max_connections = 64;
	/*
	 * Short deadlines: libmicrohttpd leaves some half-closed connections
	 * open (a pipelined request after an answered one) until a timeout.
	 */
	o.idle_timeout_s = 1;
	o.header_timeout_s = 1;
	o.body_timeout_s = 1;
	o.api_key = FUZZ_API_KEY;
	if (serve_server_start(&srv, &o, &model, 1, &err)) {
		fprintf(stderr, "fuzz_http: %s\n", err.msg);
		exit(1);
	}
	return 0;
}

static int connect_server(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)srv.http_port) };
	struct timeval tv = { .tv_sec = HANG_MS / 1000 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char reply[1 << 20];
	size_t got = 0, off = 0;
	ssize_t n;
	int fd = connect_server();

	if (fd < 0)
		__builtin_trap();	/* the server stopped accepting */
	while (off < size) {
		n = send(fd, data + off, size - off, MSG_NOSIGNAL);
		if (n <= 0)
			break;	/* the server answered early and closed */
		off += (size_t)n;
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		/* once an answer came, a pause ends it: libmicrohttpd may keep the socket */
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int ready = poll(&p, 1, got ? ANSWER_PAUSE_MS : HANG_MS);

		if (ready == 0 && got)
			break;
		if (ready == 0)
			__builtin_trap();	/* no answer and not closed: a hang */
		n = recv(fd, reply + got, sizeof(reply) - 1 - got, 0);
		if (n <= 0)
			break;		/* closed (or reset) by the server */
		got += (size_t)n;
		if (got == sizeof(reply) - 1)
			break;
	}
	close(fd);
	reply[got] = '\0';
	if (got && strncmp(reply, "HTTP/1.", 7))
		__builtin_trap();	/* an answer that is not HTTP */
	/* "HTTP/1.1 NNN": errors name what is wrong, never a server path */
	if (got > 12 && reply[9] >= '4' && memmem(reply, got, models_dir, strlen(models_dir)))
		__builtin_trap();
	return 0;
}
