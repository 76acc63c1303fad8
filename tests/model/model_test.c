// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * model_test.c - helpers of the device-model unit tests (model_test.h).
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "model_test.h"

/* ------------------------------------------------------------ streams */

static void sb_reserve(struct sb *sb, size_t more)
{
	if (sb->len + more <= sb->cap)
		return;
	while (sb->len + more > sb->cap)
		sb->cap = sb->cap ? sb->cap * 2 : 256;
	sb->buf = realloc(sb->buf, sb->cap);
	assert_non_null(sb->buf);
}

void sb_init(struct sb *sb)
{
	struct rbln_isa_stream_header hdr = {
		.magic = RBLN_ISA_MAGIC,
		.version_major = RBLN_ISA_VERSION_MAJOR,
		.version_minor = RBLN_ISA_VERSION_MINOR,
	};

	memset(sb, 0, sizeof(*sb));
	sb_reserve(sb, sizeof(hdr));
	memcpy(sb->buf, &hdr, sizeof(hdr));
	sb->len = sizeof(hdr);
	sb_seal(sb);
}

void sb_free(struct sb *sb)
{
	free(sb->buf);
	sb->buf = NULL;
}

void sb_seal(struct sb *sb)
{
	struct rbln_isa_stream_header *hdr = (void *)sb->buf;

	hdr->size = (uint32_t)sb->len;
}

uint32_t sb_raw(struct sb *sb, const void *cmd, size_t size)
{
	assert_true(sb->ncmds < sizeof(sb->offsets) / sizeof(sb->offsets[0]));
	sb_reserve(sb, size);
	memcpy(sb->buf + sb->len, cmd, size);
	sb->offsets[sb->ncmds] = (uint32_t)sb->len;
	sb->len += size;
	sb_seal(sb);
	return sb->ncmds++;
}

uint32_t sb_nop(struct sb *sb, uint16_t size)
{
	uint8_t cmd[RBLN_ISA_CMD_MAX_SIZE] = { 0 };
	struct rbln_isa_cmd hdr = { .opcode = RBLN_OP_NOP, .size = size };

	assert_true(size >= sizeof(hdr) && size <= sizeof(cmd));
	memcpy(cmd, &hdr, sizeof(hdr));
	return sb_raw(sb, cmd, size);
}

uint32_t sb_barrier(struct sb *sb)
{
	struct rbln_isa_cmd hdr = { .opcode = RBLN_OP_BARRIER, .size = 8 };

	return sb_raw(sb, &hdr, sizeof(hdr));
}

uint32_t sb_fill(struct sb *sb, struct rbln_isa_operand dst, uint32_t value)
{
	struct rbln_isa_fill c = {
		.hdr = { .opcode = RBLN_OP_FILL, .size = sizeof(c) },
		.dst = dst,
		.value = value,
	};

	return sb_raw(sb, &c, sizeof(c));
}

uint32_t sb_copy(struct sb *sb, struct rbln_isa_operand dst,
		 struct rbln_isa_operand src)
{
	struct rbln_isa_copy c = {
		.hdr = { .opcode = RBLN_OP_COPY, .size = sizeof(c) },
		.dst = dst,
		.src = src,
	};

	return sb_raw(sb, &c, sizeof(c));
}

uint32_t sb_signal(struct sb *sb, struct rbln_isa_operand sem, uint32_t op,
		   uint64_t value)
{
	struct rbln_isa_sem_signal c = {
		.hdr = { .opcode = RBLN_OP_SEM_SIGNAL, .size = sizeof(c) },
		.sem = sem,
		.op = op,
		.value = value,
	};

	return sb_raw(sb, &c, sizeof(c));
}

uint32_t sb_wait(struct sb *sb, struct rbln_isa_operand sem, uint32_t cond,
		 uint64_t value, uint64_t timeout_ns)
{
	struct rbln_isa_sem_wait c = {
		.hdr = { .opcode = RBLN_OP_SEM_WAIT, .size = sizeof(c) },
		.sem = sem,
		.cond = cond,
		.value = value,
		.timeout_ns = timeout_ns,
	};

	return sb_raw(sb, &c, sizeof(c));
}

uint32_t sb_add(struct sb *sb, struct rbln_isa_operand dst,
		struct rbln_isa_operand a, struct rbln_isa_operand b)
{
	struct rbln_isa_add c = {
		.hdr = { .opcode = RBLN_OP_ADD, .size = sizeof(c) },
		.dst = dst,
		.a = a,
		.b = b,
	};

	return sb_raw(sb, &c, sizeof(c));
}

void *sb_cmd(struct sb *sb, uint32_t index)
{
	assert_true(index < sb->ncmds);
	return sb->buf + sb->offsets[index];
}

/* ------------------------------------------------------------ random */

static uint64_t rng_state;

void rng_seed_from_env(void)
{
	const char *env = getenv("RBLN_TEST_SEED");
	struct timespec ts;
	uint64_t seed;

	if (env && *env) {
		seed = strtoull(env, NULL, 0);
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000000007ULL ^
		       (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
	}
	/* TAP comment: meson keeps it in the log. */
	printf("# seed %llu (RBLN_TEST_SEED=%llu repeats this run)\n",
	       (unsigned long long)seed, (unsigned long long)seed);
	fflush(stdout);
	rng_state = seed ? seed : 1;
}

/* xorshift64*: fast, and plenty for test data. */
uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

uint64_t rng_range(uint64_t lo, uint64_t hi)
{
	if (hi - lo == UINT64_MAX)
		return rng_next();
	return lo + rng_next() % (hi - lo + 1);
}

void rng_bytes(void *p, size_t n)
{
	uint8_t *b = p;
	uint64_t r;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		r = rng_next();
		memcpy(b + i, &r, 8);
	}
	for (r = rng_next(); i < n; i++, r >>= 8)
		b[i] = (uint8_t)r;
}

void rng_floats(void *p, size_t n)
{
	static const uint32_t special[] = {
		0x00000000, 0x80000000,	/* +0, -0 */
		0x7f800000, 0xff800000,	/* +inf, -inf */
		0x7fc00000, 0xffc00000,	/* quiet NaNs */
		0x7f800001, 0xff812345,	/* signalling NaNs with payload */
		0x7fd23456,		/* quiet NaN with payload */
		0x00000001, 0x807fffff,	/* smallest and largest denormal */
		0x00800000, 0x7f7fffff,	/* smallest normal, largest finite */
		0x3f800000, 0xbf800000,	/* 1, -1 */
	};
	uint32_t *f = p;
	uint32_t nspecial = sizeof(special) / sizeof(special[0]);
	size_t i;
	uint64_t r;
	float x;

	for (i = 0; i < n; i++) {
		r = rng_next();
		switch (r % 6) {
		case 0:
			f[i] = special[(r >> 8) % nspecial];
			break;
		case 1:
			/* Denormals: their sums must not be flushed. */
			f[i] = (uint32_t)(r >> 32) & 0x807fffff;
			break;
		case 2:
		case 3:
			/* Ordinary values of similar magnitude: rounding. */
			x = (float)((int64_t)(r >> 11) % 2000001 - 1000000) /
			    1024.0f;
			memcpy(&f[i], &x, 4);
			break;
		default:
			f[i] = (uint32_t)(r >> 32);
			break;
		}
	}
}

float rng_uniform(float lo, float hi)
{
	return lo + (hi - lo) * (float)((rng_next() >> 40) / 16777216.0);
}

void rng_fill(float *p, size_t n, float lo, float hi)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = rng_uniform(lo, hi);
}

/* ------------------------------------------------------------ compute */

uint32_t f32_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, 4);
	return u;
}

float bits_f32(uint32_t x)
{
	float f;

	memcpy(&f, &x, 4);
	return f;
}

uint16_t test_f32_to_bf16(float x)
{
	uint32_t u = f32_bits(x);

	if ((u & 0x7fffffff) > 0x7f800000)
		return (uint16_t)((u >> 16) | 0x40);
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

float test_bf16_to_f32(uint16_t h)
{
	return bits_f32((uint32_t)h << 16);
}

/* The compiler's _Float16 conversions: IEEE, independent of the model. */
uint16_t test_f32_to_f16(float x)
{
	_Float16 h = (_Float16)x;
	uint16_t u;

	memcpy(&u, &h, 2);
	return u;
}

float test_f16_to_f32(uint16_t u)
{
	_Float16 h;

	memcpy(&h, &u, 2);
	return (float)h;
}

uint32_t test_dtype_size(uint32_t dtype)
{
	if (dtype == RBLN_DTYPE_I8)
		return 1;
	return dtype == RBLN_DTYPE_F32 ? 4 : 2;
}

void test_store(void *dst, uint32_t dtype, float *vals, size_t n)
{
	uint16_t h;
	size_t i;

	for (i = 0; i < n; i++) {
		if (dtype == RBLN_DTYPE_F32) {
			memcpy((uint8_t *)dst + 4 * i, &vals[i], 4);
			continue;
		}
		if (dtype == RBLN_DTYPE_BF16)
			h = test_f32_to_bf16(vals[i]);
		else
			h = test_f32_to_f16(vals[i]);
		memcpy((uint8_t *)dst + 2 * i, &h, 2);
		vals[i] = test_load(dst, dtype, i);
	}
}

float test_load(const void *src, uint32_t dtype, size_t i)
{
	uint16_t h;
	float f;

	if (dtype == RBLN_DTYPE_F32) {
		memcpy(&f, (const uint8_t *)src + 4 * i, 4);
		return f;
	}
	memcpy(&h, (const uint8_t *)src + 2 * i, 2);
	return dtype == RBLN_DTYPE_BF16 ? test_bf16_to_f32(h) :
					  test_f16_to_f32(h);
}

uint8_t *poisoned(size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	assert_non_null(p);
	memset(p, 0xff, n);
	return p;
}

uint32_t test_variants(uint32_t *v)
{
	uint32_t n = 0;

	v[n++] = RBLN_MODEL_CPU_BASELINE;
#if defined(__x86_64__)
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		v[n++] = RBLN_MODEL_CPU_AVX2;
	else
		printf("# no AVX2+FMA on this CPU: avx2 variant not tested\n");
	if (n == 2 && __builtin_cpu_supports("avx512f"))
		v[n++] = RBLN_MODEL_CPU_AVX512;
	else
		printf("# no AVX-512F on this CPU: avx512 variant not tested\n");
	/* The CPU's AMX and the OS's grant of the tile state. */
	if (n == 3 && rbln_model_set_cpu(RBLN_MODEL_CPU_AMX) == 0) {
		v[n++] = RBLN_MODEL_CPU_AMX;
		v[n++] = RBLN_MODEL_CPU_AVX512_AMX;
	} else
		printf("# no AMX-BF16 tiles here: amx, avx512+amx not tested\n");
	rbln_model_set_cpu(RBLN_MODEL_CPU_AUTO);
#endif
	return n;
}

void test_set_variant(uint32_t v)
{
	assert_int_equal(rbln_model_set_cpu(v), 0);
	assert_int_equal(rbln_model_cpu(), v);
}

/* ------------------------------------------------------------ reference */

void ref_fill(uint8_t *dst, uint64_t size, uint32_t value)
{
	uint64_t i;

	for (i = 0; i < size; i++)
		dst[i] = (uint8_t)(value >> (8 * (i % 4)));
}

void ref_copy(uint8_t *dst, const uint8_t *src, uint64_t size)
{
	uint8_t *tmp = malloc(size);
	uint64_t i;

	assert_non_null(tmp);
	for (i = 0; i < size; i++)
		tmp[i] = src[i];
	for (i = 0; i < size; i++)
		dst[i] = tmp[i];
	free(tmp);
}

static int f32_is_nan(uint32_t x)
{
	return (x & 0x7fffffff) > 0x7f800000;
}

uint32_t ref_add1(uint32_t a, uint32_t b)
{
	volatile float fa, fb, fs;
	uint32_t s;

	if (f32_is_nan(a))
		return a | 0x00400000;
	if (f32_is_nan(b))
		return b | 0x00400000;
	memcpy((void *)&fa, &a, 4);
	memcpy((void *)&fb, &b, 4);
	fs = fa + fb;
	memcpy(&s, (const void *)&fs, 4);
	if (f32_is_nan(s))
		return 0xffc00000;
	return s;
}

void ref_add(uint8_t *dst, const uint8_t *a, const uint8_t *b, uint64_t n)
{
	uint32_t x, y, r;
	uint64_t i;

	for (i = 0; i < n; i++) {
		memcpy(&x, a + 4 * i, 4);
		memcpy(&y, b + 4 * i, 4);
		r = ref_add1(x, y);
		memcpy(dst + 4 * i, &r, 4);
	}
}

/* ------------------------------------------------------------ fake home */

static uint64_t fake_now(void *priv)
{
	struct fake_env *f = priv;

	f->now_calls++;
	f->now += f->tick;
	return f->now;
}

static void fake_relax(void *priv, uint32_t spins)
{
	struct fake_env *f = priv;

	f->relax_calls++;
	if (spins != f->last_spins + 1)
		f->spins_monotonic = 0;
	f->last_spins = spins;
	if (f->set_sem && f->relax_calls == f->set_at)
		__atomic_store_n(f->set_sem, f->set_value, __ATOMIC_RELEASE);
}

static bool fake_cancelled(void *priv)
{
	struct fake_env *f = priv;
	uint64_t calls = __atomic_add_fetch(&f->cancel_calls, 1,
					    __ATOMIC_RELAXED);

	return f->cancel_after && calls >= f->cancel_after;
}

static void fake_parallel(void *priv, void (*fn)(void *, uint32_t, uint32_t),
			  void *arg, uint32_t nparts)
{
	struct fake_env *f = priv;
	uint32_t i;

	f->parallel_calls++;
	f->parallel_parts = nparts;
	assert_true(nparts >= 2 && nparts <= f->env.engines);
	for (i = 0; i < nparts; i++)
		fn(arg, f->reverse ? nparts - 1 - i : i, nparts);
}

void fake_env_init(struct fake_env *f, uint32_t engines)
{
	memset(f, 0, sizeof(*f));
	f->env.now_ns = fake_now;
	f->env.relax = fake_relax;
	f->env.cancelled = fake_cancelled;
	f->env.parallel = engines > 1 ? fake_parallel : NULL;
	f->env.engines = engines;
	f->env.priv = f;
	f->tick = 1;
	f->spins_monotonic = 1;
}

static uint64_t real_now(void *priv)
{
	struct timespec ts;

	(void)priv;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void real_relax(void *priv, uint32_t spins)
{
	(void)priv;
	(void)spins;
	sched_yield();
}

static bool real_cancelled(void *priv)
{
	(void)priv;
	return false;
}

struct real_part {
	pthread_t thread;
	void (*fn)(void *, uint32_t, uint32_t);
	void *arg;
	uint32_t part;
	uint32_t nparts;
};

static void *real_part_main(void *p)
{
	struct real_part *rp = p;

	rp->fn(rp->arg, rp->part, rp->nparts);
	return NULL;
}

static void real_parallel(void *priv, void (*fn)(void *, uint32_t, uint32_t),
			  void *arg, uint32_t nparts)
{
	struct real_part parts[64];
	uint32_t i;

	(void)priv;
	assert_true(nparts <= 64);
	for (i = 0; i < nparts; i++) {
		parts[i] = (struct real_part){ .fn = fn, .arg = arg,
					       .part = i, .nparts = nparts };
		assert_int_equal(pthread_create(&parts[i].thread, NULL,
						real_part_main, &parts[i]), 0);
	}
	for (i = 0; i < nparts; i++)
		assert_int_equal(pthread_join(parts[i].thread, NULL), 0);
}

static struct rbln_model_env real_envs[65];
static pthread_once_t real_envs_once = PTHREAD_ONCE_INIT;

static void real_envs_init(void)
{
	uint32_t i;

	for (i = 1; i < 65; i++)
		real_envs[i] = (struct rbln_model_env){
			.now_ns = real_now,
			.relax = real_relax,
			.cancelled = real_cancelled,
			.parallel = real_parallel,
			.engines = i,
		};
}

/* Several threads use these at once: built once, then only read. */
struct rbln_model_env *real_env(uint32_t engines)
{
	assert_true(engines >= 1 && engines <= 64);
	pthread_once(&real_envs_once, real_envs_init);
	return &real_envs[engines];
}

/* ------------------------------------------------------------ running */

int validate_copy(const void *s, size_t len, const struct rbln_model_bo *bos,
		  uint32_t nbos, struct rbln_model_diag *diag, int misalign)
{
	/* The copy ends exactly where its heap block ends. */
	uint8_t *raw = malloc(len + (misalign ? 1 : 0) + (len ? 0 : 1));
	uint8_t *copy = misalign ? raw + 1 : raw;
	int ret;

	assert_non_null(raw);
	if (len)
		memcpy(copy, s, len);
	ret = rbln_model_validate(copy, len, bos, nbos, diag);
	free(raw);
	return ret;
}

void run_ok(struct sb *sb, const struct rbln_model_bo *bos, uint32_t nbos,
	    const struct rbln_model_env *env)
{
	struct rbln_model_diag diag;
	int ret;

	memset(&diag, 0xff, sizeof(diag));
	ret = rbln_model_validate(sb->buf, sb->len, bos, nbos, &diag);
	if (ret)
		fail_msg("validation: %s at command %u operand %u",
			 rbln_model_error_str(diag.reason), diag.cmd_index,
			 diag.operand);
	ret = rbln_model_execute(sb->buf, sb->len, bos, nbos, env, &diag);
	assert_int_equal(ret, 0);
	assert_int_equal(diag.reason, RBLN_ISA_OK);
}

int run_ret(struct sb *sb, const struct rbln_model_bo *bos, uint32_t nbos,
	    const struct rbln_model_env *env)
{
	struct rbln_model_diag diag;
	int ret;

	ret = rbln_model_validate(sb->buf, sb->len, bos, nbos, &diag);
	if (ret)
		fail_msg("validation: %s at command %u operand %u",
			 rbln_model_error_str(diag.reason), diag.cmd_index,
			 diag.operand);
	return rbln_model_execute(sb->buf, sb->len, bos, nbos, env, &diag);
}

void expect_reject_at(struct sb *sb, const struct rbln_model_bo *bos,
		      uint32_t nbos, uint32_t reason, uint32_t index,
		      uint16_t opcode, uint16_t operand, const char *file,
		      int line)
{
	struct rbln_model_diag diag;
	uint32_t offset = 0;
	int misalign;
	int ret;

	if (index == HDR_ERR)
		index = 0;
	else
		offset = sb->offsets[index];
	for (misalign = 0; misalign < 2; misalign++) {
		memset(&diag, 0xa5, sizeof(diag));
		ret = validate_copy(sb->buf, sb->len, bos, nbos, &diag,
				    misalign);
		if (ret != -RBLN_EINVAL || diag.reason != reason ||
		    diag.cmd_index != index || diag.cmd_offset != offset ||
		    diag.opcode != opcode || diag.operand != operand)
			fail_msg("%s:%d: got ret %d reason %u (%s) cmd %u off %u "
				 "op 0x%x operand 0x%x; want reason %u (%s) cmd %u "
				 "off %u op 0x%x operand 0x%x", file, line, ret,
				 diag.reason, rbln_model_error_str(diag.reason),
				 diag.cmd_index, diag.cmd_offset, diag.opcode,
				 diag.operand, reason,
				 rbln_model_error_str(reason), index, offset,
				 opcode, operand);
	}
}
