// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fuzz_model.c - libFuzzer target for the device model.
 *
 * Input: a buffer list, then a command stream.
 *
 *   byte 0        bits 0-3: number of buffers (values above 8 mean 8)
 *                 bit 4: place the stream at an odd address
 *                 bit 5: offer 4 engines (env->parallel, parts run in
 *                        reverse order)
 *   per buffer    4 bytes: size (u16, little-endian), access (bits 0-1:
 *                 RBLN_MODEL_READ/WRITE; bit 2: size in units of 64 bytes;
 *                 bit 3: leave the buffer unmapped), one ignored byte;
 *                 inputs asking for more than 5 MiB in all are skipped
 *   rest          the stream, validated as is
 *
 * Every buffer and the stream are exactly their size for AddressSanitizer
 * (the stream a heap block, a buffer the addressable start of a reused
 * slot), so it reports any access the validator should have refused.
 * A stream that validates is executed on those buffers with a home whose
 * clock jumps 2^40 ns per read, so that every SEM_WAIT times out at once.
 * The target also checks the model's own promises and aborts when one
 * breaks: the diagnostic is consistent with the return value, validation
 * is deterministic and does not depend on the mappings or the stream's
 * alignment, and execution of a validated stream never reports a
 * validation error. Index data of the compute opcodes comes from buffer
 * contents, so a stream may FILL it first (the seeds do) or let the
 * pattern fault the job: both paths stay inside the buffers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rbln_model.h"

#define FUZZ_MAX_BOS	8
#define FUZZ_MAX_TOTAL	(5ULL << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_home {
	uint64_t now;
	uint32_t engines_used;
};

static uint64_t fuzz_now(void *priv)
{
	struct fuzz_home *h = priv;

	h->now += 1ULL << 40;
	return h->now;
}

static void fuzz_relax(void *priv, uint32_t spins)
{
	(void)priv;
	(void)spins;
}

static bool fuzz_cancelled(void *priv)
{
	(void)priv;
	return false;
}

static void fuzz_parallel(void *priv, void (*fn)(void *, uint32_t, uint32_t),
			  void *arg, uint32_t nparts)
{
	struct fuzz_home *h = priv;
	uint32_t i;

	if (nparts < 2 || nparts > 4)
		abort();
	h->engines_used = nparts;
	for (i = nparts; i-- > 0;)
		fn(arg, i, nparts);
}

/*
 * Buffer contents: a 64-byte pattern, different per buffer, that holds
 * floats of every class (normal, denormal, infinite, NaN) and small
 * semaphore values, replicated by doubling copies: a byte loop over
 * megabytes would dominate the time of an execution.
 */
static void fill_pattern(uint8_t *p, uint64_t size, uint32_t index)
{
	static const uint32_t words[16] = {
		0x3f800000, 0x00000001, 0x7f800000, 0x7fc00001,
		0xff800000, 0x80000000, 0x00000003, 0x00000000,
		0x4b000001, 0x7f7fffff, 0x807fffff, 0xffa00000,
		0x00000002, 0xbf800000, 0x33800000, 0x00000000,
	};
	uint64_t done, n;

	if (!size)
		return;
	n = size < sizeof(words) ? size : sizeof(words);
	memcpy(p, words, n);
	p[0] ^= (uint8_t)index;
	for (done = n; done < size; done += n) {
		n = done < size - done ? done : size - done;
		memcpy(p + done, p, n);
	}
}

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif
#ifdef FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#endif

/*
 * Buffers live in one slot per buffer-list entry, allocated once at the
 * largest size: a fresh multi-megabyte heap block per run is a fresh
 * mmap(), and its page faults would cost more than the run. Only the first
 * @size bytes of a slot are addressable (ASan's manual poisoning, exact to
 * the byte at the end), so an access past a buffer is still caught.
 */
#define FUZZ_SLOT_SIZE	(65535ULL * 64)

struct fuzz_slot {
	uint8_t *base;
	uint64_t open;
};

static uint8_t *slot_get(uint32_t index, uint64_t size)
{
	static struct fuzz_slot slots[FUZZ_MAX_BOS];
	struct fuzz_slot *s = &slots[index];

	if (!s->base) {
		s->base = malloc(FUZZ_SLOT_SIZE);
		if (!s->base)
			abort();
		ASAN_POISON_MEMORY_REGION(s->base, FUZZ_SLOT_SIZE);
	}
	if (s->open > size)
		ASAN_POISON_MEMORY_REGION(s->base + size, s->open - size);
	ASAN_UNPOISON_MEMORY_REGION(s->base, size);
	s->open = size;
	return s->base;
}

static void check_diag(int ret, const struct rbln_model_diag *d, size_t len)
{
	if (ret != 0 && ret != -RBLN_EINVAL)
		abort();
	if ((ret == 0) != (d->reason == RBLN_ISA_OK))
		abort();
	if (d->reason >= RBLN_ISA_ERR_COUNT)
		abort();
	if (ret == 0 && (d->cmd_index || d->cmd_offset || d->opcode ||
			 d->operand))
		abort();
	if (ret && d->cmd_offset % 8)
		abort();
	if (ret && d->cmd_offset && d->cmd_offset >= len)
		abort();
	/* A command's error names a command that starts after the header. */
	if (ret && d->cmd_offset == 0 && d->cmd_index)
		abort();
	if (ret && d->operand != RBLN_ISA_NO_INDEX && d->operand > 6)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rbln_model_bo bos[FUZZ_MAX_BOS], plain[FUZZ_MAX_BOS];
	struct rbln_model_diag d1, d2, d3;
	struct fuzz_home home = { 0 };
	struct rbln_model_env env = {
		.now_ns = fuzz_now,
		.relax = fuzz_relax,
		.cancelled = fuzz_cancelled,
		.engines = 1,
		.priv = &home,
	};
	uint8_t *raw = NULL, *alt = NULL, *stream;
	uint32_t nbos, i;
	size_t pos, len;
	int misalign;
	int r1, r2, r3;
	uint64_t bsize, total;

	if (size < 1)
		return 0;
	nbos = data[0] & 0x0f;
	if (nbos > FUZZ_MAX_BOS)
		nbos = FUZZ_MAX_BOS;
	misalign = !!(data[0] & 0x10);
	if (data[0] & 0x20) {
		env.parallel = fuzz_parallel;
		env.engines = 4;
	}
	pos = 1;
	if (size < pos + 4 * (size_t)nbos)
		return 0;
	memset(bos, 0, sizeof(bos));
	total = 0;
	for (i = 0; i < nbos; i++) {
		bsize = (uint64_t)data[pos + 4 * i] |
			(uint64_t)data[pos + 4 * i + 1] << 8;
		if (data[pos + 4 * i + 2] & 4)
			bsize *= 64;
		total += bsize;
	}
	/*
	 * Large buffers exercise chunking and engine splits but cost page
	 * faults on every run: 5 MiB in all is enough for a 2-engine ADD.
	 */
	if (total > FUZZ_MAX_TOTAL)
		return 0;
	for (i = 0; i < nbos; i++, pos += 4) {
		bsize = (uint64_t)data[pos] | (uint64_t)data[pos + 1] << 8;
		if (data[pos + 2] & 4)
			bsize *= 64;
		bos[i].size = bsize;
		bos[i].access = data[pos + 2] & 3;
		plain[i] = bos[i];
		if (data[pos + 2] & 8)
			continue;
		bos[i].cpu = slot_get(i, bsize);
		fill_pattern(bos[i].cpu, bsize, i);
	}

	len = size - pos;
	raw = malloc(len + (size_t)misalign + 1);
	alt = malloc(len + 1);
	if (!raw || !alt)
		abort();
	stream = raw + misalign;
	memcpy(stream, data + pos, len);
	memcpy(alt, data + pos, len);

	/* Validation without mappings, at either alignment, is the same. */
	memset(&d1, 0xa5, sizeof(d1));
	memset(&d2, 0x5a, sizeof(d2));
	r1 = rbln_model_validate(stream, len, plain, nbos, &d1);
	check_diag(r1, &d1, len);
	r2 = rbln_model_validate(alt, len, bos, nbos, &d2);
	if (r1 != r2 || memcmp(&d1, &d2, sizeof(d1)))
		abort();
	if (rbln_model_validate(stream, len, bos, nbos, NULL) != r1)
		abort();

	if (r1 == 0) {
		memset(&d3, 0xa5, sizeof(d3));
		r3 = rbln_model_execute(stream, len, bos, nbos, &env, &d3);
		/*
		 * -RBLN_EIO: an unmapped buffer, or index data (ids, slots,
		 * block tables) out of range, which the kernels fault on.
		 */
		if (r3 != 0 && r3 != -RBLN_ETIMEDOUT && r3 != -RBLN_EIO)
			abort();
		if (d3.reason != RBLN_ISA_OK)
			abort();
		if (r3 == 0 && (d3.cmd_index || d3.cmd_offset))
			abort();
		if (r3 && (d3.cmd_offset < 16 || d3.cmd_offset >= len ||
			   d3.operand != RBLN_ISA_NO_INDEX ||
			   !rbln_model_opcode_name(d3.opcode)))
			abort();
	}
	if (rbln_model_error_str(d1.reason)[0] == '\0')
		abort();

	free(raw);
	free(alt);
	return 0;
}
