// SPDX-License-Identifier: MIT
/*
 * rbln-tokenize: the model's tokenizer and chat template from the command
 * line.  Ids are printed comma-separated on one line ("1,2,3"), the form
 * --decode and rbln-generate --input-ids accept, so outputs can be piped.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "rbln_chat.h"
#include "rbln_tokenizer.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: rbln-tokenize --model DIR [options] TEXT\n"
		"  or:  rbln-tokenize --model DIR --decode IDS\n"
		"  or:  rbln-tokenize --model DIR --chat FILE.json\n"
		"\n"
		"Encodes TEXT with DIR/tokenizer.json and prints the ids comma-separated\n"
		"on one line (e.g. 4085,39,603). TEXT \"-\" reads standard input.\n"
		"\n"
		"  --model DIR             Hugging Face model directory (required)\n"
		"  --add-special           add special tokens as the tokenizer's post-processor\n"
		"                          does (BOS for Llama)\n"
		"  --decode IDS            decode comma- or space-separated ids instead\n"
		"  --skip-special          with --decode: leave special tokens out\n"
		"  --chat FILE             render FILE, a JSON list of {\"role\", \"content\"}\n"
		"                          messages, with the model's chat template; prints the\n"
		"                          text, then its ids on the last line\n"
		"  --no-generation-prompt  with --chat: do not open an assistant turn\n"
		"  --chat-template-name N  with --chat: the template of that name when\n"
		"                          tokenizer_config.json lists several (default\n"
		"                          $RBLN_CHAT_TEMPLATE_NAME, else \"default\")\n"
		"  --json                  print {\"text\": ..., \"ids\": [...]} instead\n"
		"  -h, --help              this help\n"
		"      --version           the version\n");
}

struct options {
	const char *model;
	const char *decode;
	const char *chat;
	const char *text;
	const char *template_name;
	bool add_special;
	bool skip_special;
	bool no_gen_prompt;
	bool json;
};

static int read_stream(FILE *f, char **data, size_t *len)
{
	size_t cap = 4096, n = 0, got;
	char *buf = malloc(cap);

	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *p = realloc(buf, cap * 2);

			if (!p) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = p;
			cap *= 2;
		}
	}
	if (!buf || ferror(f)) {
		free(buf);
		return -1;
	}
	*data = buf;
	*len = n;
	return 0;
}

static int parse_ids(const char *s, struct rbln_ids *ids)
{
	while (*s) {
		char *end;
		long v;

		if (*s == ',' || *s == ' ' || *s == '\n' || *s == '\t') {
			s++;
			continue;
		}
		errno = 0;
		v = strtol(s, &end, 10);
		if (end == s || errno || v < 0 || v > INT32_MAX) {
			fprintf(stderr, "rbln-tokenize: bad token id near \"%.20s\"\n", s);
			return -1;
		}
		if (rbln_ids_push(ids, (int32_t)v))
			return -1;
		s = end;
	}
	return 0;
}

static void print_output(const struct options *o, const char *text, size_t text_len,
			 const struct rbln_ids *ids)
{
	size_t i;

	if (o->json) {
		json_object *obj = json_object_new_object(), *arr = json_object_new_array();

		if (text)
			json_object_object_add(obj, "text", json_object_new_string_len(text, (int)text_len));
		for (i = 0; ids && i < ids->len; i++)
			json_object_array_add(arr, json_object_new_int(ids->ids[i]));
		json_object_object_add(obj, "ids", arr);
		puts(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(obj);
		return;
	}
	if (text) {
		fwrite(text, 1, text_len, stdout);
		putchar('\n');
	}
	for (i = 0; ids && i < ids->len; i++)
		printf("%s%d", i ? "," : "", ids->ids[i]);
	if (ids)
		putchar('\n');
}

static int run_decode(const struct options *o, const struct rbln_tokenizer *tok)
{
	struct rbln_error err = { 0 };
	struct rbln_ids ids = { 0 };
	char *text = NULL;
	size_t len;
	int rc = parse_ids(o->decode, &ids);

	if (!rc)
		rc = rbln_tokenizer_decode(tok, ids.ids, ids.len,
					   o->skip_special ? RBLN_DECODE_SKIP_SPECIAL : 0, &text, &len,
					   &err);
	if (!rc)
		print_output(o, text, len, o->json ? &ids : NULL);
	else if (err.code)
		fprintf(stderr, "rbln-tokenize: %s\n", err.msg);
	free(text);
	rbln_ids_free(&ids);
	return rc ? 1 : 0;
}

static int run_chat(const struct options *o, const struct rbln_tokenizer *tok)
{
	struct rbln_chat_options copt = { .add_generation_prompt = !o->no_gen_prompt };
	struct rbln_error err = { 0 };
	struct rbln_chat_template *t = NULL;
	struct rbln_ids ids = { 0 };
	char *json = NULL, *text = NULL;
	size_t json_len, text_len;
	FILE *f = strcmp(o->chat, "-") ? fopen(o->chat, "rb") : stdin;
	int rc;

	if (!f || read_stream(f, &json, &json_len)) {
		fprintf(stderr, "rbln-tokenize: cannot read %s: %s\n", o->chat, strerror(errno));
		if (f && f != stdin)
			fclose(f);
		return 1;
	}
	if (f != stdin)
		fclose(f);
	rc = o->template_name ?
	     rbln_chat_template_load_named(o->model, o->template_name, &t, &err) :
	     rbln_chat_template_load(o->model, &t, &err);
	if (!rc)
		rc = rbln_chat_render_json(t, json, json_len, &copt, &text, &text_len, &err);
	/* Rendered chats are tokenized without adding special tokens, as
	 * apply_chat_template(tokenize=True) does: the template has them. */
	if (!rc)
		rc = rbln_tokenizer_encode(tok, text, text_len, 0, &ids, &err);
	if (!rc)
		print_output(o, text, text_len, &ids);
	else
		fprintf(stderr, "rbln-tokenize: %s\n", err.msg);
	free(text);
	free(json);
	rbln_ids_free(&ids);
	rbln_chat_template_free(t);
	return rc ? 1 : 0;
}

static int run_encode(const struct options *o, const struct rbln_tokenizer *tok)
{
	struct rbln_error err = { 0 };
	struct rbln_ids ids = { 0 };
	char *input = NULL;
	const char *text = o->text;
	size_t len = strlen(o->text);
	int rc;

	if (!strcmp(o->text, "-")) {
		if (read_stream(stdin, &input, &len)) {
			fprintf(stderr, "rbln-tokenize: cannot read standard input\n");
			return 1;
		}
		text = input;
	}
	rc = rbln_tokenizer_encode(tok, text, len, o->add_special ? RBLN_ENCODE_ADD_SPECIAL : 0,
				   &ids, &err);
	if (!rc)
		print_output(o, o->json ? text : NULL, len, &ids);
	else
		fprintf(stderr, "rbln-tokenize: %s\n", err.msg);
	free(input);
	rbln_ids_free(&ids);
	return rc ? 1 : 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "model", required_argument, NULL, 'm' },
		{ "add-special", no_argument, NULL, 'a' },
		{ "decode", required_argument, NULL, 'd' },
		{ "skip-special", no_argument, NULL, 's' },
		{ "chat", required_argument, NULL, 'c' },
		{ "no-generation-prompt", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "chat-template-name", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'm': o->model = optarg; break;
		case 'a': o->add_special = true; break;
		case 'd': o->decode = optarg; break;
		case 's': o->skip_special = true; break;
		case 'c': o->chat = optarg; break;
		case 'n': o->no_gen_prompt = true; break;
		case 'j': o->json = true; break;
		case 't': o->template_name = optarg; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("rbln-tokenize %s\n", RBLN_VERSION); exit(0);
		default: return -1;
		}
	}
	if (optind < argc)
		o->text = argv[optind++];
	if (!o->model || optind < argc || (!!o->decode + !!o->chat + !!o->text) != 1) {
		fprintf(stderr, "rbln-tokenize: need --model and exactly one of TEXT, --decode, --chat\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct rbln_error err = { 0 };
	struct rbln_tokenizer *tok;
	int rc;

	if (parse_args(argc, argv, &o)) {
		usage(stderr);
		return 2;
	}
	if (rbln_tokenizer_load(o.model, &tok, &err)) {
		fprintf(stderr, "rbln-tokenize: %s\n", err.msg);
		return 1;
	}
	if (o.decode)
		rc = run_decode(&o, tok);
	else if (o.chat)
		rc = run_chat(&o, tok);
	else
		rc = run_encode(&o, tok);
	rbln_tokenizer_free(tok);
	return rc;
}
