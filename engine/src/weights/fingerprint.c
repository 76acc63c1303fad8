// SPDX-License-Identifier: MIT
#include "rbln_fingerprint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/sha2.h>

#include "rbln_compiled_config.h"
#include "rbln_safetensors.h"
#include "util/file.h"
#include "util/json.h"

/* Files hashed by content (absent ones are hashed as absent). */
static const char *const content_files[] = {
	"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
	"special_tokens_map.json", "chat_template.jinja", "tokenizer.model",
	"model.safetensors.index.json",
};

/* Hashes a length-prefixed field, so that no two sequences hash alike. */
static void hash_field(struct sha256_ctx *h, const void *data, size_t len)
{
	uint8_t n[8];
	size_t i;

	for (i = 0; i < 8; i++)
		n[i] = (uint8_t)((uint64_t)len >> (8 * i));
	sha256_update(h, sizeof(n), n);
	sha256_update(h, len, data);
}

static void hash_str(struct sha256_ctx *h, const char *s)
{
	hash_field(h, s, strlen(s));
}

static int hash_content_file(struct sha256_ctx *h, const char *dir, const char *name,
			     struct rbln_error *err)
{
	char *path = rbln_path_join(dir, name), *data = NULL;
	size_t len;
	int rc = 0;

	if (!path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	hash_str(h, name);
	if (rbln_file_exists(path)) {
		rc = rbln_file_read(path, &data, &len, err);
		if (!rc)
			hash_field(h, data, len);
	} else {
		hash_str(h, "(absent)");
	}
	free(data);
	free(path);
	return rc;
}

/* Name, size, mtime and header of one safetensors file (not its data). */
static int hash_shard(struct sha256_ctx *h, const char *dir, const char *name,
		      struct rbln_error *err)
{
	char *path = rbln_path_join(dir, name), *header = NULL;
	uint8_t len8[8];
	uint64_t hlen = 0;
	struct stat st;
	char meta[64];
	int fd, rc = 0;
	size_t i;

	if (!path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st)) {
		rc = rbln_error_set(err, -errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = rbln_error_set(err, -EINVAL, "%s: not a regular file", path);
		goto out;
	}
	if (rbln_fd_read_at(fd, len8, sizeof(len8), 0) == 0) {
		for (i = 0; i < 8; i++)
			hlen |= (uint64_t)len8[i] << (8 * i);
		/* A bad header is the loader's to report; hash what is there. */
		if (hlen > RBLN_SAFETENSORS_MAX_HEADER || hlen > (uint64_t)st.st_size - 8)
			hlen = 0;
	}
	header = malloc(hlen + 1);
	if (!header) {
		rc = rbln_error_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (hlen && rbln_fd_read_at(fd, header, hlen, 8))
		hlen = 0;
	snprintf(meta, sizeof(meta), "%lld %lld.%09ld", (long long)st.st_size,
		 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	hash_str(h, name);
	hash_str(h, meta);
	hash_field(h, header, hlen);
out:
	if (fd >= 0)
		close(fd);
	free(header);
	free(path);
	return rc;
}

static int is_shard(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return n > 12 && !strcmp(e->d_name + n - 12, ".safetensors");
}

int rbln_checkpoint_fingerprint(const char *hf_dir, char out[RBLN_FINGERPRINT_LEN + 1],
				struct rbln_error *err)
{
	static const char hex[] = "0123456789abcdef";
	struct dirent **shards = NULL;
	uint8_t digest[SHA256_DIGEST_SIZE];
	struct sha256_ctx h;
	int n, i, rc = 0;
	size_t k;

	sha256_init(&h);
	hash_str(&h, RBLN_COMPILER_VERSION);
	for (k = 0; k < sizeof(content_files) / sizeof(content_files[0]) && !rc; k++)
		rc = hash_content_file(&h, hf_dir, content_files[k], err);
	n = scandir(hf_dir, &shards, is_shard, alphasort);
	if (n < 0 && !rc)
		rc = rbln_error_set(err, -errno, "%s: cannot list: %s", hf_dir, strerror(errno));
	for (i = 0; i < n; i++) {
		if (!rc)
			rc = hash_shard(&h, hf_dir, shards[i]->d_name, err);
		free(shards[i]);
	}
	free(shards);
	if (rc)
		return rc;
	sha256_digest(&h, sizeof(digest), digest);
	for (k = 0; k < sizeof(digest); k++) {
		out[2 * k] = hex[digest[k] >> 4];
		out[2 * k + 1] = hex[digest[k] & 15];
	}
	out[RBLN_FINGERPRINT_LEN] = '\0';
	return 0;
}

int rbln_compiled_dir_explain(const char *dir, struct rbln_error *err)
{
	char *copy = strdup(dir);
	bool staging;

	if (!copy)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	staging = strstr(basename(copy), RBLN_COMPILE_PARTIAL_TAG) != NULL;
	free(copy);
	if (staging)
		return rbln_error_set(err, -EINVAL,
				      "%s: the unfinished output of a compile (killed, failed or "
				      "still running), not a model: compile again (the next "
				      "compile of the same output removes it)", dir);
	if (!rbln_dir_has(dir, "rbln_config.json") && rbln_dir_has(dir, "rank_0"))
		return rbln_error_set(err, -EINVAL,
				      "%s: an incomplete compiled model (rank_0/ but no "
				      "rbln_config.json): an interrupted compile? remove it and "
				      "compile again", dir);
	return 0;
}

int rbln_compiled_dir_check(const char *compiled_dir, const char *want,
			    struct rbln_error *err)
{
	char *path, *text = NULL;
	size_t len;
	int rc;

	if (!rbln_file_exists(compiled_dir))
		return 0;
	rc = rbln_compiled_dir_explain(compiled_dir, err);
	if (rc)
		return rc;
	if (!rbln_dir_has(compiled_dir, "rbln_config.json"))
		return rbln_error_set(err, -EINVAL, "%s: not a compiled model (no "
				      "rbln_config.json)", compiled_dir);
	path = rbln_path_join(compiled_dir, RBLN_FINGERPRINT_FILE);
	if (!path)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	if (!rbln_file_exists(path)) {
		rc = rbln_error_set(err, -ESTALE, "%s: a compiled model with no record of its "
				    "checkpoint (%s): compiled by an older rbln-compile?",
				    compiled_dir, RBLN_FINGERPRINT_FILE);
	} else {
		rc = rbln_file_read_max(path, 4096, &text, &len, err);
		if (!rc && (len < RBLN_FINGERPRINT_LEN ||
			    memcmp(text, want, RBLN_FINGERPRINT_LEN)))
			rc = rbln_error_set(err, -ESTALE, "%s: compiled from another checkpoint "
					    "or compiler (fingerprint %.16s..., this checkpoint "
					    "%.16s...)", compiled_dir, text, want);
	}
	free(text);
	free(path);
	return rc ? rc : 1;
}
