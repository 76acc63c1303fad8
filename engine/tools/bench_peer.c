// SPDX-License-Identifier: MIT
/*
 * bench_peer.c - running llama.cpp's benchmarks for rbln-bench and reading
 * their JSON-lines output (llama-bench -o jsonl, llama-batched-bench
 * --output-format jsonl). Their other output (model loading) goes to
 * stderr, which is left to the terminal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bench_peer.h"

int bench_peer_check(const struct bench_peer *p, struct rbln_error *err)
{
	if (access(p->llama_bench, X_OK))
		return rbln_error_set(err, -EINVAL, "--peer-llama-bench %s: %s",
				      p->llama_bench, strerror(errno));
	if (p->batched_bench && access(p->batched_bench, X_OK))
		return rbln_error_set(err, -EINVAL, "--peer-batched-bench %s: %s",
				      p->batched_bench, strerror(errno));
	if (access(p->gguf, R_OK))
		return rbln_error_set(err, -EINVAL, "--peer-model %s: %s", p->gguf,
				      strerror(errno));
	return 0;
}

/* Runs @argv; its stdout in a malloc'd string (NUL-terminated) at *@out. */
static int run_capture(char *const argv[], char **out, struct rbln_error *err)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	int fd[2], status;
	ssize_t n;
	pid_t pid;

	if (!buf || pipe(fd)) {
		free(buf);
		return rbln_error_set(err, -ENOMEM, "%s: cannot start", argv[0]);
	}
	pid = fork();
	if (pid < 0) {
		free(buf);
		close(fd[0]);
		close(fd[1]);
		return rbln_error_set(err, -errno, "%s: fork: %s", argv[0], strerror(errno));
	}
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	for (;;) {
		if (len + 1 == cap) {
			char *grown = realloc(buf, cap * 2);

			if (!grown)
				break;
			buf = grown;
			cap *= 2;
		}
		n = read(fd[0], buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		free(buf);
		return rbln_error_set(err, -EIO, "%s failed (exit status %d)", argv[0],
				      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	*out = buf;
	return 0;
}

/* A number field of a JSON object; -1 when absent or not a number. */
static double field(struct json_object *o, const char *name)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, name, &v) ||
	    !(json_object_is_type(v, json_type_int) ||
	      json_object_is_type(v, json_type_double)))
		return -1;
	return json_object_get_double(v);
}

/*
 * Each line of @text that is a JSON object, passed to @fn with @arg; how
 * many were.
 */
static int each_object(char *text, void (*fn)(struct json_object *, void *),
		       void *arg)
{
	char *line, *save = NULL;
	int n = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct json_object *o;

		if (line[0] != '{')
			continue;
		o = json_tokener_parse(line);
		if (o && json_object_is_type(o, json_type_object)) {
			fn(o, arg);
			n++;
		}
		json_object_put(o);
	}
	return n;
}

struct llama_bench_ctx {
	const struct bench_peer *p;
	struct bench_peer_row *row;
};

/*
 * The fastest of a result's repetitions (samples_ts, tok/s), as our rows
 * show the best of theirs; avg_ts where a llama-bench lists no samples.
 */
static double best_sample(struct json_object *o)
{
	struct json_object *a, *v;
	double best = -1, x;
	size_t i;

	if (!json_object_object_get_ex(o, "samples_ts", &a) ||
	    !json_object_is_type(a, json_type_array) || !json_object_array_length(a))
		return field(o, "avg_ts");
	for (i = 0; i < json_object_array_length(a); i++) {
		v = json_object_array_get_idx(a, i);
		if (!json_object_is_type(v, json_type_int) &&
		    !json_object_is_type(v, json_type_double))
			continue;
		x = json_object_get_double(v);
		if (x > best)
			best = x;
	}
	return best;
}

/* llama-bench: pp<N> has n_gen 0, tg<N> has n_prompt 0. */
static void llama_bench_line(struct json_object *o, void *arg)
{
	struct llama_bench_ctx *c = arg;
	double np = field(o, "n_prompt"), ng = field(o, "n_gen"), ts = best_sample(o);

	if (ts <= 0)
		return;
	if (np == c->p->prompt_len && ng == 0)
		c->row->prefill = ts;
	else if (np == 0 && ng == c->p->decode_steps)
		c->row->decode[0] = ts;
}

/*
 * batched-bench: one line per parallel count pl; speed_tg is tok/s. The
 * best of the runs is kept.
 */
static void batched_line(struct json_object *o, void *arg)
{
	struct bench_peer_row *row = arg;
	double pl = field(o, "pl"), tg = field(o, "speed_tg");

	if (tg <= 0)
		return;
	if (pl == 4 && tg > row->decode[1])
		row->decode[1] = tg;
	else if (pl == 8 && tg > row->decode[2])
		row->decode[2] = tg;
}

int bench_peer_run(const struct bench_peer *p, struct bench_peer_row *row,
		   struct rbln_error *err)
{
	char t[16], pp[16], tg[16], rep[16], ctx[16];
	struct llama_bench_ctx c = { p, row };
	char *out = NULL;
	int rc;

	memset(row, 0, sizeof(*row));
	snprintf(t, sizeof(t), "%u", p->threads);
	snprintf(pp, sizeof(pp), "%u", p->prompt_len);
	snprintf(tg, sizeof(tg), "%u", p->decode_steps);
	snprintf(rep, sizeof(rep), "%u", p->repeat);
	{
		char *const argv[] = { (char *)p->llama_bench, "-m", (char *)p->gguf,
				       "-t", t, "-p", pp, "-n", tg, "-r", rep,
				       "-o", "jsonl", NULL };

		fprintf(stderr, "rbln-bench: running %s -m %s -t %s -p %s -n %s -r %s\n",
			p->llama_bench, p->gguf, t, pp, tg, rep);
		rc = run_capture(argv, &out, err);
	}
	if (rc)
		return rc;
	each_object(out, llama_bench_line, &c);
	free(out);
	if (row->prefill <= 0 || row->decode[0] <= 0)
		return rbln_error_set(err, -EIO, "%s printed no pp%u and tg%u results",
				      p->llama_bench, p->prompt_len, p->decode_steps);
	if (!p->batched_bench)
		return 0;
	/* 8 sequences of 64 + steps tokens, as the engine's decode measurement. */
	snprintf(ctx, sizeof(ctx), "%u", 8 * (64 + p->decode_steps) + 64);
	/* It has no repetitions of its own: run it p->repeat times. */
	for (unsigned int r = 0; r < p->repeat; r++) {
		char *const argv[] = { (char *)p->batched_bench, "-m", (char *)p->gguf,
				       "-t", t, "-tb", t, "-c", ctx, "-b", ctx,
				       "-npp", "64", "-ntg", tg, "-npl", "4,8",
				       "--output-format", "jsonl", NULL };

		fprintf(stderr, "rbln-bench: running %s -m %s -t %s -c %s -npp 64 -ntg %s -npl 4,8\n",
			p->batched_bench, p->gguf, t, ctx, tg);
		rc = run_capture(argv, &out, err);
		if (rc)
			return rc;
		each_object(out, batched_line, row);
		free(out);
		out = NULL;
	}
	if (row->decode[1] <= 0 || row->decode[2] <= 0)
		return rbln_error_set(err, -EIO, "%s printed no results for 4 and 8 sequences",
				      p->batched_bench);
	return 0;
}
