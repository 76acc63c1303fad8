// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: encoding and decoding with the reference tokenizers.
 * The first input byte picks the model and the mode; the rest is text (or
 * token ids).  Checked properties:
 *  - byte-level BPE (Llama 3) round-trips any valid UTF-8 text exactly;
 *  - streaming decoding yields whole UTF-8 pieces and, for ids that came
 *    from encoding, exactly the text of whole-sequence decoding;
 *  - arbitrary ids decode without crashing;
 *  - with mode bit 8, the input is a tokenizer.json's "normalizer" and
 *    "pre_tokenizer" fields, a NUL, then a text: any pipeline either fails
 *    to load or encodes with a message on failure, within the growth cap
 *    (chained Replace, long replacements) and the regex limits.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbln_tokenizer.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rbln_tokenizer *toks[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const names[2] = { "tiny-llama3", "tiny-llama2" };
	const char *dir = getenv("RBLN_MODELS_DIR");
	struct rbln_error err = { 0 };
	char path[4096];
	int i;

	(void)argc;
	(void)argv;
	if (!dir) {
		fprintf(stderr, "fuzz_tokenizer: set RBLN_MODELS_DIR\n");
		exit(1);
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (rbln_tokenizer_load(path, &toks[i], &err)) {
			fprintf(stderr, "fuzz_tokenizer: %s\n", err.msg);
			exit(1);
		}
	}
	return 0;
}

static bool whole_utf8(const char *s, size_t n)
{
	size_t i = 0, k, j;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];

		k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
		if (!k || i + k > n)
			return false;
		for (j = 1; j < k; j++)
			if (((unsigned char)s[i + j] >> 6) != 2)
				return false;
		i += k;
	}
	return true;
}

/* Streams ids; returns the concatenated text (malloc'd). */
static char *stream(const struct rbln_tokenizer *tok, const int32_t *ids, size_t n, size_t *len)
{
	struct rbln_detokenizer *d = rbln_detokenizer_new(tok, 0);
	struct rbln_error err = { 0 };
	size_t cap = 64, i, plen;
	char *out = malloc(cap);
	const char *p;

	*len = 0;
	for (i = 0; i <= n; i++) {
		int rc = i < n ? rbln_detokenizer_push(d, ids[i], &p, &plen, &err) :
				 rbln_detokenizer_finish(d, &p, &plen, &err);

		if (rc || !whole_utf8(p, plen))
			abort();
		while (*len + plen + 1 > cap)
			out = realloc(out, cap *= 2);
		memcpy(out + *len, p, plen);
		*len += plen;
	}
	rbln_detokenizer_free(d);
	return out;
}

static void check_text(const struct rbln_tokenizer *tok, bool byte_level, const char *text,
		       size_t n, unsigned flags)
{
	struct rbln_error err = { 0 };
	struct rbln_ids ids = { 0 };
	char *decoded, *streamed;
	size_t dlen, slen;

	if (rbln_tokenizer_encode(tok, text, n, flags, &ids, &err)) {
		if (!err.msg[0])
			abort();
		return;	/* invalid UTF-8 is rejected with a message */
	}
	if (rbln_tokenizer_decode(tok, ids.ids, ids.len, 0, &decoded, &dlen, &err))
		abort();
	if (byte_level && !(flags & RBLN_ENCODE_ADD_SPECIAL) &&
	    (dlen != n || memcmp(decoded, text, n)))
		abort();
	streamed = stream(tok, ids.ids, ids.len, &slen);
	if (slen != dlen || memcmp(streamed, decoded, dlen))
		abort();
	free(streamed);
	free(decoded);
	rbln_ids_free(&ids);
}

static void check_ids(const struct rbln_tokenizer *tok, const uint8_t *data, size_t size)
{
	size_t n = size / 2, i, len, slen;
	int32_t *ids = malloc((n ? n : 1) * sizeof(*ids));
	struct rbln_error err = { 0 };
	char *text, *streamed;

	for (i = 0; i < n; i++)
		ids[i] = (int32_t)((data[2 * i] | data[2 * i + 1] << 8) %
				   rbln_tokenizer_vocab_size(tok));
	if (rbln_tokenizer_decode(tok, ids, n, 0, &text, &len, &err) == 0) {
		if (!whole_utf8(text, len))
			abort();
		free(text);
		streamed = stream(tok, ids, n, &slen);
		free(streamed);
	}
	free(ids);
}

/* A small BPE model around the fuzzed pipeline fields (data: "...fields...\0text"). */
static void check_pipeline(const uint8_t *data, size_t size)
{
	static const char head[] =
		"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"_\": 2, "
		"\"\\u2581\": 3, \"\\u0120\": 4, \"<unk>\": 5}, \"merges\": [], "
		"\"unk_token\": \"<unk>\"}, ";
	const uint8_t *sep = memchr(data, 0, size);
	struct rbln_tokenizer *tok = NULL;
	struct rbln_error err = { 0 };
	struct rbln_ids ids = { 0 };
	size_t flen, tlen;
	char *json;

	if (!sep)
		return;
	flen = (size_t)(sep - data);
	tlen = size - flen - 1;
	json = malloc(sizeof(head) + flen + 2);
	if (!json)
		abort();
	memcpy(json, head, sizeof(head) - 1);
	memcpy(json + sizeof(head) - 1, data, flen);
	memcpy(json + sizeof(head) - 1 + flen, "}", 2);
	if (rbln_tokenizer_load_json(json, strlen(json), "tokenizer.json", NULL, &tok, &err)) {
		if (!err.msg[0])
			abort();
	} else {
		if (rbln_tokenizer_encode(tok, (const char *)sep + 1, tlen, 0, &ids, &err) &&
		    !err.msg[0])
			abort();
		rbln_ids_free(&ids);
		rbln_tokenizer_free(tok);
	}
	free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode;

	if (!size || size > 8192)
		return 0;
	mode = data[0];
	if (mode & 8)
		check_pipeline(data + 1, size - 1);
	else if (mode & 4)
		check_ids(toks[mode & 1], data + 1, size - 1);
	else
		check_text(toks[mode & 1], (mode & 1) == 0, (const char *)data + 1, size - 1,
			   mode & 2 ? RBLN_ENCODE_ADD_SPECIAL : 0);
	return 0;
}
