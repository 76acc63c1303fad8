// SPDX-License-Identifier: MIT
/*
 * rbln-generate: generate text with a compiled model (or a Hugging Face
 * directory, compiled on the fly with the compile flags given).
 *
 * One prompt streams its text to standard output as it is generated;
 * several prompts (repeat --prompt, --input-ids or --chat) run together,
 * batched by the engine's scheduler, and print one result each at the end.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "cli/compile_cli.h"
#include "cli/sample_cli.h"
#include "rbln_chat.h"
#include "rbln_runtime.h"
#include "rbln_stop.h"
#include "rbln_tokenizer.h"
#include "util/file.h"
#include "util/strbuf.h"

#define MAX_INPUTS 256
#define MAX_STOPS 16
#define DEFAULT_MAX_TOKENS 64

enum input_kind { IN_PROMPT, IN_IDS, IN_CHAT };

struct input {
	enum input_kind kind;
	const char *arg;
};

struct options {
	const char *model;
	const char *devices;
	struct input inputs[MAX_INPUTS];
	size_t n_inputs;
	const char *stops[MAX_STOPS];
	size_t n_stops;
	bool include_stop;
	bool json;
	bool no_special;
	bool keep_special;
	bool verbose;
	const char *dump_logits;
	const char *template_name;
	struct rbln_compile_options compile;
	struct rbln_sample_cli sample;
};

/* One sequence and its text: detokenizer, stop strings, what was shown. */
struct gen {
	int32_t *prompt;
	size_t n_prompt;
	struct rbln_seq *seq;
	struct rbln_detokenizer *detok;
	struct rbln_stop_matcher *stop;
	struct rbln_strbuf text;
	size_t n_seen;		/* output ids pushed to the detokenizer */
	bool stop_string;	/* ended by a stop string */
	bool text_done;
};

enum {
	OPT_PROMPT = 2000, OPT_IDS, OPT_CHAT, OPT_STOP, OPT_INCLUDE_STOP, OPT_JSON,
	OPT_DUMP, OPT_NO_SPECIAL, OPT_KEEP_SPECIAL, OPT_DEVICES, OPT_TEMPLATE_NAME,
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rbln-generate --model DIR (--prompt TEXT | --input-ids L | --chat FILE)...\n"
		"\n"
		"DIR is a compiled model (rbln-compile) or a Hugging Face directory, compiled\n"
		"to a temporary directory with the compile flags below.\n"
		"\n"
		"  --prompt TEXT              a prompt (tokenized with BOS, as transformers)\n"
		"  --input-ids L              a prompt as token ids\n"
		"  --chat FILE                a JSON list of {\"role\", \"content\"} messages,\n"
		"                             rendered with the model's chat template (- reads\n"
		"                             standard input)\n"
		"  --chat-template-name N     the chat template of that name when\n"
		"                             tokenizer_config.json lists several (default\n"
		"                             $RBLN_CHAT_TEMPLATE_NAME, else \"default\")\n"
		"  --no-special               --prompt: do not add BOS\n"
		"  --stop STR                 stop string (repeatable); cut from the text\n"
		"  --include-stop-str         keep the stop string in the text\n"
		"  --keep-special             keep special tokens in the text\n"
		"  --json                     print {\"input_ids\", \"output_ids\", \"text\",\n"
		"                             \"finish_reason\"} per prompt instead of streaming\n"
		"  --dump-logits FILE         the logits after the (first) prompt, float32 LE\n"
		"  --devices L                devices to use, e.g. 0,1 (default RBLN_DEVICES)\n"
		"  -v, --verbose              timing on standard error\n"
		"%s%s"
		"  -h, --help                 this help\n"
		"      --version              the version\n",
		rbln_sample_cli_usage, rbln_compile_cli_usage);
}

static int parse_args(int argc, char **argv, struct options *o, struct rbln_error *err)
{
	static const struct option longopts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "prompt", required_argument, NULL, OPT_PROMPT },
		{ "input-ids", required_argument, NULL, OPT_IDS },
		{ "chat", required_argument, NULL, OPT_CHAT },
		{ "stop", required_argument, NULL, OPT_STOP },
		{ "include-stop-str", no_argument, NULL, OPT_INCLUDE_STOP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "dump-logits", required_argument, NULL, OPT_DUMP },
		{ "no-special", no_argument, NULL, OPT_NO_SPECIAL },
		{ "keep-special", no_argument, NULL, OPT_KEEP_SPECIAL },
		{ "devices", required_argument, NULL, OPT_DEVICES },
		{ "chat-template-name", required_argument, NULL, OPT_TEMPLATE_NAME },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		RBLN_SAMPLE_LONG_OPTIONS,
		RBLN_COMPILE_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "m:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			o->model = optarg;
			break;
		case OPT_PROMPT:
		case OPT_IDS:
		case OPT_CHAT:
			if (c == OPT_IDS) {
				int32_t *ids;
				size_t n;

				/* Checked now: a malformed list is a usage error. */
				if (rbln_cli_parse_ids("input-ids", optarg, &ids, &n, err))
					return -EINVAL;
				free(ids);
			}
			if (o->n_inputs == MAX_INPUTS)
				return rbln_error_set(err, -EINVAL, "at most %d prompts", MAX_INPUTS);
			o->inputs[o->n_inputs].kind = c == OPT_PROMPT ? IN_PROMPT :
						      c == OPT_IDS ? IN_IDS : IN_CHAT;
			o->inputs[o->n_inputs++].arg = optarg;
			break;
		case OPT_STOP:
			if (!optarg[0])
				return rbln_error_set(err, -EINVAL, "--stop: empty string");
			if (o->n_stops == MAX_STOPS)
				return rbln_error_set(err, -EINVAL, "--stop: at most %d", MAX_STOPS);
			o->stops[o->n_stops++] = optarg;
			break;
		case OPT_INCLUDE_STOP:
			o->include_stop = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_DUMP:
			o->dump_logits = optarg;
			break;
		case OPT_NO_SPECIAL:
			o->no_special = true;
			break;
		case OPT_KEEP_SPECIAL:
			o->keep_special = true;
			break;
		case OPT_DEVICES:
			o->devices = optarg;
			break;
		case OPT_TEMPLATE_NAME:
			o->template_name = optarg;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("rbln-generate %s\n", RBLN_VERSION);
			exit(0);
		case '?':
			return rbln_error_set(err, -EINVAL, "bad option (see --help)");
		default:
			if (c >= CLI_TEMPERATURE && c < CLI_SAMPLE_LAST) {
				if (rbln_sample_cli_apply(c, optarg, &o->sample, err))
					return -EINVAL;
			} else if (rbln_compile_cli_apply(c, optarg, &o->compile, err)) {
				return -EINVAL;
			}
		}
	}
	if (optind < argc)
		return rbln_error_set(err, -EINVAL, "unexpected argument '%s'", argv[optind]);
	if (!o->model)
		return rbln_error_set(err, -EINVAL, "--model DIR is required");
	if (!o->n_inputs)
		return rbln_error_set(err, -EINVAL, "give --prompt, --input-ids or --chat");
	return 0;
}

/* FILE, or standard input for "-". */
static int read_input(const char *file, char **data, size_t *len, struct rbln_error *err)
{
	struct rbln_strbuf sb = { 0 };
	char buf[4096];
	size_t n;

	if (strcmp(file, "-"))
		return rbln_file_read(file, data, len, err);
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		if (rbln_strbuf_append(&sb, buf, n)) {
			rbln_strbuf_free(&sb);
			return rbln_error_set(err, -ENOMEM, "out of memory");
		}
	if (ferror(stdin)) {
		rbln_strbuf_free(&sb);
		return rbln_error_set(err, -EIO, "standard input: read error");
	}
	*data = rbln_strbuf_steal(&sb, len);
	return *data ? 0 : rbln_error_set(err, -ENOMEM, "out of memory");
}

static int chat_ids(const char *dir, const char *template_name, const struct rbln_tokenizer *tok,
		    const char *file, struct rbln_ids *ids, struct rbln_error *err)
{
	struct rbln_chat_options copt = { .add_generation_prompt = true };
	struct rbln_chat_template *t = NULL;
	char *json = NULL, *text = NULL;
	size_t len, tlen;
	int rc;

	rc = read_input(file, &json, &len, err);
	if (!rc)
		rc = template_name ? rbln_chat_template_load_named(dir, template_name, &t, err) :
				     rbln_chat_template_load(dir, &t, err);
	if (!rc)
		rc = rbln_chat_render_json(t, json, len, &copt, &text, &tlen, err);
	/* The rendered text has its special tokens spelled out: add none. */
	if (!rc)
		rc = rbln_tokenizer_encode(tok, text, tlen, 0, ids, err);
	rbln_chat_template_free(t);
	free(json);
	free(text);
	return rc;
}

static int prompt_ids(const struct options *o, const char *dir, const struct rbln_tokenizer *tok,
		      const struct input *in, struct gen *g, struct rbln_error *err)
{
	struct rbln_ids ids = { 0 };
	int rc;

	if (in->kind == IN_IDS)
		return rbln_cli_parse_ids("input-ids", in->arg, &g->prompt, &g->n_prompt, err);
	if (!tok)
		return rbln_error_set(err, -ENOENT, "%s has no tokenizer.json: use --input-ids",
				      dir);
	if (in->kind == IN_CHAT)
		rc = chat_ids(dir, o->template_name, tok, in->arg, &ids, err);
	else
		rc = rbln_tokenizer_encode(tok, in->arg, strlen(in->arg),
					   o->no_special ? 0 : RBLN_ENCODE_ADD_SPECIAL, &ids, err);
	if (rc) {
		rbln_ids_free(&ids);
		return rc;
	}
	g->prompt = ids.ids;
	g->n_prompt = ids.len;
	return 0;
}

/* Feeds text to the stop matcher; shows what is final when streaming. */
static int add_text(struct gen *g, const char *text, size_t len, bool stream, bool last)
{
	const char *out;
	size_t n;
	int hit;

	hit = rbln_stop_push(g->stop, text, len, &out, &n);
	if (hit < 0)
		return hit;
	if (rbln_strbuf_append(&g->text, out, n))
		return -ENOMEM;
	if (stream && n)
		fwrite(out, 1, n, stdout);
	if (hit) {
		g->stop_string = true;
		g->text_done = true;
	} else if (last) {
		rbln_stop_finish(g->stop, &out, &n);
		if (rbln_strbuf_append(&g->text, out, n))
			return -ENOMEM;
		if (stream && n)
			fwrite(out, 1, n, stdout);
		g->text_done = true;
	}
	if (stream)
		fflush(stdout);
	return 0;
}

/* New output ids of a sequence through the detokenizer and the stop strings. */
static int advance_text(struct gen *g, bool stream, struct rbln_error *err)
{
	const int32_t *out;
	const char *piece;
	size_t n, len;
	int rc;

	if (g->text_done)
		return 0;
	out = rbln_seq_output(g->seq, &n);
	for (; g->n_seen < n && !g->text_done; g->n_seen++) {
		if (g->detok) {
			rc = rbln_detokenizer_push(g->detok, out[g->n_seen], &piece, &len, err);
			if (!rc)
				rc = add_text(g, piece, len, stream, false);
			if (rc)
				return rc;
		}
	}
	if (g->stop_string) {
		rbln_seq_abort(g->seq);
		return 0;
	}
	if (rbln_seq_end(g->seq) != RBLN_SEQ_RUNNING && !g->text_done) {
		if (!g->detok) {
			g->text_done = true;
			return 0;
		}
		rc = rbln_detokenizer_finish(g->detok, &piece, &len, err);
		if (!rc)
			rc = add_text(g, piece, len, stream, true);
		return rc;
	}
	return 0;
}

static const char *finish_reason(const struct gen *g)
{
	if (g->stop_string)
		return "stop";
	switch (rbln_seq_end(g->seq)) {
	case RBLN_SEQ_END_STOP:
		return "stop";
	case RBLN_SEQ_END_LENGTH:
		return "length";
	case RBLN_SEQ_END_ABORT:
		return "abort";
	default:
		return "none";
	}
}

static json_object *id_array(const int32_t *ids, size_t n)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; a && i < n; i++)
		json_object_array_add(a, json_object_new_int(ids[i]));
	return a;
}

static void print_json(const struct gen *g)
{
	json_object *o = json_object_new_object();
	const int32_t *out;
	size_t n;

	out = rbln_seq_output(g->seq, &n);
	json_object_object_add(o, "input_ids", id_array(g->prompt, g->n_prompt));
	json_object_object_add(o, "output_ids", id_array(out, n));
	json_object_object_add(o, "text", g->detok ? json_object_new_string_len(
				       g->text.data ? g->text.data : "", (int)g->text.len) : NULL);
	json_object_object_add(o, "finish_reason", json_object_new_string(finish_reason(g)));
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static int dump_logits(const char *path, const struct gen *g, struct rbln_error *err)
{
	size_t vocab, i;
	const float *l = rbln_seq_prompt_logits(g->seq, &vocab);
	FILE *f;

	if (!l)
		return rbln_error_set(err, -ENODATA, "no logits: the prompt was not computed");
	f = fopen(path, "wb");
	if (!f)
		return rbln_error_set(err, -errno, "%s: %s", path, strerror(errno));
	for (i = 0; i < vocab; i++) {
		uint32_t u;
		unsigned char b[4];

		memcpy(&u, &l[i], 4);
		b[0] = (unsigned char)u;
		b[1] = (unsigned char)(u >> 8);
		b[2] = (unsigned char)(u >> 16);
		b[3] = (unsigned char)(u >> 24);
		fwrite(b, 1, 4, f);
	}
	if (fclose(f))
		return rbln_error_set(err, -errno, "%s: %s", path, strerror(errno));
	return 0;
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int run(struct options *o, struct rbln_error *err)
{
	struct rbln_runtime_options eo = { .devices = o->devices, .compile = &o->compile };
	struct rbln_generation_config gen;
	struct rbln_tokenizer *tok = NULL;
	struct rbln_runtime_info info;
	struct rbln_runtime *e = NULL;
	struct gen *g = calloc(o->n_inputs, sizeof(*g));
	struct rbln_step_stats st;
	bool stream = !o->json && o->n_inputs == 1;
	double t0, prefill_s = 0, decode_s = 0;
	uint64_t prefill_tok = 0, decode_tok = 0;
	size_t i;
	int rc;

	if (!g)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	rc = rbln_runtime_open(o->model, &eo, &e, err);
	if (rc)
		goto out;
	rbln_runtime_get_info(e, &info);
	rc = rbln_generation_config_load(info.dir, &gen, err);
	if (rc)
		goto out;
	rbln_sample_cli_defaults(&o->sample, &gen, DEFAULT_MAX_TOKENS);
	if (rbln_tokenizer_load(info.dir, &tok, NULL))
		tok = NULL;	/* --input-ids still works; text needs the tokenizer */
	for (i = 0; i < o->n_inputs && !rc; i++) {
		rc = prompt_ids(o, info.dir, tok, &o->inputs[i], &g[i], err);
		if (!rc)
			rc = rbln_runtime_add(e, g[i].prompt, g[i].n_prompt, &o->sample.p,
					     i == 0 && o->dump_logits ?
					     RBLN_SEQ_KEEP_PROMPT_LOGITS : 0, &g[i].seq, err);
		if (!rc && rbln_stop_new(o->stops, o->n_stops, o->include_stop, &g[i].stop))
			rc = rbln_error_set(err, -ENOMEM, "out of memory");
		if (!rc && tok) {
			g[i].detok = rbln_detokenizer_new(tok, o->keep_special ? 0 :
							  RBLN_DECODE_SKIP_SPECIAL);
			if (!g[i].detok)
				rc = rbln_error_set(err, -ENOMEM, "out of memory");
		}
	}
	while (!rc) {
		t0 = seconds();
		rc = rbln_runtime_step(e, &st, err);
		if (rc <= 0)
			break;
		if (st.prefill) {
			prefill_s += seconds() - t0;
			prefill_tok += st.tokens;
		} else {
			decode_s += seconds() - t0;
			decode_tok += st.tokens;
		}
		rc = 0;
		for (i = 0; i < o->n_inputs && !rc; i++)
			rc = advance_text(&g[i], stream, err);
	}
	for (i = 0; i < o->n_inputs && !rc; i++)
		rc = advance_text(&g[i], stream, err);
	if (rc)
		goto out;
	if (stream && g[0].detok)
		putchar('\n');
	for (i = 0; i < o->n_inputs; i++) {
		if (o->json) {
			print_json(&g[i]);
		} else if (!stream) {
			printf("%s\n", g[i].detok ? (g[i].text.data ? g[i].text.data : "") : "");
		} else if (!g[i].detok) {
			size_t n, j;
			const int32_t *out = rbln_seq_output(g[i].seq, &n);

			for (j = 0; j < n; j++)
				printf("%s%d", j ? "," : "", out[j]);
			putchar('\n');
		}
	}
	if (o->dump_logits)
		rc = dump_logits(o->dump_logits, &g[0], err);
	if (o->verbose)
		fprintf(stderr, "rbln-generate: %s backend, %u device(s); prefill %llu tokens in "
			"%.3f s (%.1f tok/s), decode %llu tokens in %.3f s (%.1f tok/s)\n",
			info.backend, info.n_devices, (unsigned long long)prefill_tok, prefill_s,
			prefill_s > 0 ? prefill_tok / prefill_s : 0.0,
			(unsigned long long)decode_tok, decode_s,
			decode_s > 0 ? decode_tok / decode_s : 0.0);
out:
	for (i = 0; i < o->n_inputs; i++) {
		rbln_detokenizer_free(g[i].detok);
		rbln_stop_free(g[i].stop);
		rbln_strbuf_free(&g[i].text);
		free(g[i].prompt);
	}
	free(g);
	rbln_runtime_close(e);
	rbln_tokenizer_free(tok);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o;
	struct rbln_error err = { 0 };

	memset(&o, 0, sizeof(o));
	rbln_sample_cli_init(&o.sample);
	if (parse_args(argc, argv, &o, &err)) {
		fprintf(stderr, "rbln-generate: %s\n", err.msg);
		return 2;
	}
	if (run(&o, &err)) {
		fflush(stdout);
		fprintf(stderr, "rbln-generate: %s\n", err.msg);
		return 1;
	}
	return 0;
}
