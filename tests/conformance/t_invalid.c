// SPDX-License-Identifier: MIT
/*
 * Rejections: malformed command streams (each class of uapi/rbln_isa.h's
 * enum rbln_isa_error) and bad arguments. A rejected stream runs no
 * command at all, and the detail message says what was wrong where.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"

/* Builds a stream by hand, header included, so every field can be wrong. */
struct raw_stream {
	uint8_t bytes[1024];
	size_t size;
};

static void raw_begin(struct raw_stream *r)
{
	struct rbln_isa_stream_header hdr = {
		.magic = RBLN_ISA_MAGIC,
		.version_major = RBLN_ISA_VERSION_MAJOR,
		.version_minor = RBLN_ISA_VERSION_MINOR,
	};

	memcpy(r->bytes, &hdr, sizeof(hdr));
	r->size = sizeof(hdr);
}

static void raw_add(struct raw_stream *r, const void *cmd, size_t size)
{
	assert_true(r->size + size <= sizeof(r->bytes));
	memcpy(r->bytes + r->size, cmd, size);
	r->size += size;
}

static struct rbln_isa_stream_header *raw_header(struct raw_stream *r)
{
	return (struct rbln_isa_stream_header *)r->bytes;
}

/* Buffer-list indices the cases use. */
enum { SENTINEL, DATA, READ_ONLY, NUM_USES };

struct invalid_env {
	struct fixture *fx;
	npu_buffer *cmd;
	npu_buffer *uses[NUM_USES];
};

/*
 * Submit a stream that starts with a valid FILL of the sentinel and then
 * has @bad; expect -EINVAL with @reason in the detail, and the sentinel
 * untouched once a later job of the same queue has finished.
 */
static void expect_rejected(struct invalid_env *env, struct raw_stream *r,
			    const char *reason, const char *where)
{
	struct npu_buffer_use list[NUM_USES] = {
		{ env->uses[SENTINEL], NPU_ACCESS_RW },
		{ env->uses[DATA], NPU_ACCESS_RW },
		{ env->uses[READ_ONLY], NPU_ACCESS_READ },
	};
	if (raw_header(r)->size == 0)
		raw_header(r)->size = (uint32_t)r->size;
	memcpy(conf_map(env->cmd), r->bytes, r->size);
	struct npu_submit_info info = {
		.cmd = env->cmd, .cmd_size = r->size,
		.buffers = list, .num_buffers = NUM_USES,
	};
	npu_fence *f = NULL;

	assert_npu(npu_submit(env->fx->queue[0], &info, &f), -EINVAL);
	assert_null(f);
	assert_detail_contains(reason);
	if (where)
		assert_detail_contains(where);

	npu_stream_nop(env->fx->stream[0]);
	conf_run(env->fx->stream[0], env->fx->queue[0]);
	assert_int_equal(*(uint32_t *)conf_map(env->uses[SENTINEL]), 0);
}

static void begin_with_sentinel_fill(struct raw_stream *r)
{
	struct rbln_isa_fill fill = {
		.hdr = { .opcode = RBLN_OP_FILL, .size = sizeof(fill) },
		.dst = { .bo = SENTINEL, .offset = 0, .size = 4096 },
		.value = 0xffffffff,
	};

	raw_begin(r);
	raw_add(r, &fill, sizeof(fill));
}

static struct rbln_isa_fill fill_cmd(uint32_t bo, uint64_t offset, uint64_t size)
{
	return (struct rbln_isa_fill){
		.hdr = { .opcode = RBLN_OP_FILL, .size = sizeof(struct rbln_isa_fill) },
		.dst = { .bo = bo, .offset = offset, .size = size },
		.value = 1,
	};
}

static struct rbln_isa_copy copy_cmd(uint64_t dst_off, uint64_t src_off,
				     uint64_t dst_size, uint64_t src_size)
{
	return (struct rbln_isa_copy){
		.hdr = { .opcode = RBLN_OP_COPY, .size = sizeof(struct rbln_isa_copy) },
		.dst = { .bo = DATA, .offset = dst_off, .size = dst_size },
		.src = { .bo = DATA, .offset = src_off, .size = src_size },
	};
}

static void test_malformed_streams(void **state)
{
	struct fixture *fx = *state;
	struct invalid_env env = { .fx = fx };
	struct raw_stream r;

	env.cmd = conf_alloc(fx->dev[0], 4096, NPU_BUFFER_HOST);
	for (int i = 0; i < NUM_USES; i++)
		env.uses[i] = conf_alloc(fx->dev[0], 4096, 0);

	/* The header. */
	begin_with_sentinel_fill(&r);
	raw_header(&r)->magic = 0x4e4c4253;
	expect_rejected(&env, &r, "magic", "header");
	begin_with_sentinel_fill(&r);
	raw_header(&r)->version_major = RBLN_ISA_VERSION_MAJOR + 1;
	expect_rejected(&env, &r, "version", NULL);
	begin_with_sentinel_fill(&r);
	raw_header(&r)->size = 4096;
	expect_rejected(&env, &r, "header size", NULL);

	/* Commands as such. */
	begin_with_sentinel_fill(&r);
	struct rbln_isa_cmd unknown = { .opcode = 0x7e, .size = 8 };

	raw_add(&r, &unknown, sizeof(unknown));
	expect_rejected(&env, &r, "unknown opcode", "command 1");

	begin_with_sentinel_fill(&r);
	struct rbln_isa_fill fill = fill_cmd(DATA, 0, 8);

	raw_add(&r, &fill, 24);		/* the stream ends mid-command */
	expect_rejected(&env, &r, "past the end of the stream", "command 1");

	begin_with_sentinel_fill(&r);
	uint64_t big[6] = { 0 };

	fill.hdr.size = 48;
	memcpy(big, &fill, sizeof(fill));
	raw_add(&r, big, sizeof(big));
	expect_rejected(&env, &r, "command size", "FILL");

	begin_with_sentinel_fill(&r);
	fill = fill_cmd(DATA, 0, 8);
	fill.hdr.flags = 1;
	raw_add(&r, &fill, sizeof(fill));
	expect_rejected(&env, &r, "reserved", "command 1 (FILL)");

	/* Operands. */
	begin_with_sentinel_fill(&r);
	fill = fill_cmd(NUM_USES, 0, 8);
	raw_add(&r, &fill, sizeof(fill));
	expect_rejected(&env, &r, "buffer index", "operand 0");

	begin_with_sentinel_fill(&r);
	struct rbln_isa_copy copy = copy_cmd(0, 4000, 200, 200);

	raw_add(&r, &copy, sizeof(copy));
	expect_rejected(&env, &r, "past the end of its buffer",
			"command 1 (COPY) at byte 56, operand 1");

	begin_with_sentinel_fill(&r);
	copy = copy_cmd(UINT64_MAX - 3, 0, 8, 8);
	raw_add(&r, &copy, sizeof(copy));
	expect_rejected(&env, &r, "overflows", "operand 0");

	begin_with_sentinel_fill(&r);
	fill = fill_cmd(DATA, 2, 8);
	raw_add(&r, &fill, sizeof(fill));
	expect_rejected(&env, &r, "misaligned", "FILL");

	begin_with_sentinel_fill(&r);
	copy = copy_cmd(0, 512, 64, 128);
	raw_add(&r, &copy, sizeof(copy));
	expect_rejected(&env, &r, "sizes differ", "COPY");

	begin_with_sentinel_fill(&r);
	fill = fill_cmd(READ_ONLY, 0, 8);
	raw_add(&r, &fill, sizeof(fill));
	expect_rejected(&env, &r, "forbid", "operand 0");

	begin_with_sentinel_fill(&r);
	struct rbln_isa_sem_signal sig = {
		.hdr = { .opcode = RBLN_OP_SEM_SIGNAL, .size = sizeof(sig) },
		.sem = { .bo = DATA, .offset = 0, .size = 8 },
		.op = 9,
	};

	raw_add(&r, &sig, sizeof(sig));
	expect_rejected(&env, &r, "out of range", "SEM_SIGNAL");

	begin_with_sentinel_fill(&r);
	struct rbln_isa_sem_wait wait = {
		.hdr = { .opcode = RBLN_OP_SEM_WAIT, .size = sizeof(wait) },
		.sem = { .bo = DATA, .offset = 0, .size = 8 },
		.cond = RBLN_SEM_GEQ,
		.timeout_ns = 0,
	};

	raw_add(&r, &wait, sizeof(wait));
	expect_rejected(&env, &r, "timeout", "SEM_WAIT");

	begin_with_sentinel_fill(&r);
	struct rbln_isa_add add = {
		.hdr = { .opcode = RBLN_OP_ADD, .size = sizeof(add) },
		.dst = { .bo = DATA, .offset = 0, .size = 64 },
		.a = { .bo = DATA, .offset = 32, .size = 64 },
		.b = { .bo = SENTINEL, .offset = 0, .size = 64 },
	};

	raw_add(&r, &add, sizeof(add));
	expect_rejected(&env, &r, "overlap", "ADD");

	/* Builder streams are checked the same way. */
	npu_stream *s = fx->stream[0];
	npu_fence *f = NULL;

	npu_stream_fill(s, env.uses[SENTINEL], 0, 4096, 1);
	npu_stream_copy(s, env.uses[DATA], 1, env.uses[DATA], 0, 4096);
	assert_npu(npu_stream_submit(s, fx->queue[0], NULL, 0, &f), -EINVAL);
	assert_null(f);
	assert_detail_contains("command 1 (COPY)");
	npu_stream_reset(s);
	npu_stream_nop(s);
	conf_run(s, fx->queue[0]);
	assert_int_equal(*(uint32_t *)conf_map(env.uses[SENTINEL]), 0);

	for (int i = 0; i < NUM_USES; i++)
		npu_buffer_free(env.uses[i]);
	npu_buffer_free(env.cmd);
}

static void test_bad_submit_arguments(void **state)
{
	struct fixture *fx = *state;
	npu_queue *q = fx->queue[0];
	npu_buffer *cmd = conf_alloc(fx->dev[0], 4096, NPU_BUFFER_HOST);
	npu_buffer *data = conf_alloc(fx->dev[0], 4096, 0);
	struct rbln_isa_stream_header hdr = {
		.magic = RBLN_ISA_MAGIC, .version_major = RBLN_ISA_VERSION_MAJOR,
		.size = sizeof(hdr),
	};

	memcpy(conf_map(cmd), &hdr, sizeof(hdr));
	struct npu_buffer_use use = { data, NPU_ACCESS_RW };
	struct npu_submit_info good = {
		.cmd = cmd, .cmd_size = sizeof(hdr), .buffers = &use,
		.num_buffers = 1,
	};
	struct npu_submit_info info;
	npu_fence *f = NULL;

	/* The baseline is fine: an empty stream. */
	assert_ok(npu_submit(q, &good, &f));
	assert_ok(npu_fence_wait(f, CONF_WAIT_NS));
	npu_fence_release(f);
	assert_ok(npu_submit(q, &good, NULL));

	assert_npu(npu_submit(NULL, &good, &f), -EINVAL);
	assert_npu(npu_submit(q, NULL, &f), -EINVAL);
	info = good, info.cmd = NULL;
	assert_npu(npu_submit(q, &info, &f), -EINVAL);
	info = good, info.cmd_offset = 4;
	assert_npu(npu_submit(q, &info, &f), -EINVAL);
	info = good, info.cmd_size = 0;
	assert_npu(npu_submit(q, &info, &f), -EINVAL);
	info = good, info.cmd_size = 12;
	assert_npu(npu_submit(q, &info, &f), -EINVAL);
	info = good, info.cmd_offset = 4096, info.cmd_size = 16;
	assert_npu(npu_submit(q, &info, &f), -EINVAL);
	info = good, info.buffers = NULL;
	assert_npu(npu_submit(q, &info, &f), -EINVAL);

	struct npu_buffer_use two[2] = { { data, NPU_ACCESS_RW },
					 { data, NPU_ACCESS_READ } };

	info = good, info.buffers = two, info.num_buffers = 2;
	assert_npu(npu_submit(q, &info, &f), -EINVAL);
	two[1].buffer = NULL;
	assert_npu(npu_submit(q, &info, &f), -EINVAL);
	use.access = 0;
	assert_npu(npu_submit(q, &good, &f), -EINVAL);
	use.access = 1u << 5;
	assert_npu(npu_submit(q, &good, &f), -EINVAL);
	use.access = NPU_ACCESS_RW;

	struct npu_device_info dinfo;

	assert_ok(npu_device_query(fx->dev[0], &dinfo));
	struct npu_buffer_use *many = calloc(dinfo.max_submit_buffers + 1,
					     sizeof(*many));

	assert_non_null(many);
	for (unsigned int i = 0; i <= dinfo.max_submit_buffers; i++)
		many[i] = (struct npu_buffer_use){ data, NPU_ACCESS_READ };
	info = good, info.buffers = many;
	info.num_buffers = dinfo.max_submit_buffers + 1;
	assert_npu(npu_submit(q, &info, &f), -EINVAL);
	free(many);

	info = good, info.num_wait = 1;
	assert_npu(npu_submit(q, &info, &f), -EINVAL);
	npu_fence *null_fence = NULL;

	info.wait = &null_fence;
	assert_npu(npu_submit(q, &info, &f), -EINVAL);

	if (fx->count > 1) {
		npu_buffer *other = conf_alloc(fx->dev[1], 4096, 0);
		struct npu_buffer_use foreign = { other, NPU_ACCESS_RW };

		info = good, info.buffers = &foreign;
		assert_npu(npu_submit(q, &info, &f), -EINVAL);
		info = good;
		assert_npu(npu_submit(fx->queue[1], &info, &f), -EINVAL);
		npu_buffer_free(other);
	}
	assert_null(f);
	assert_ok(npu_buffer_wait_idle(data, CONF_WAIT_NS));
	npu_buffer_free(data);
	npu_buffer_free(cmd);
}

static void test_bad_object_arguments(void **state)
{
	struct fixture *fx = *state;
	npu_device *dev = fx->dev[0];
	npu_buffer *buf = (npu_buffer *)1;
	npu_queue *q = (npu_queue *)1;
	npu_stream *s = (npu_stream *)1;
	npu_device *d = (npu_device *)1;
	struct npu_device_info info;
	void *ptr;
	int fd;

	assert_npu(npu_device_open(NULL, 0, &d), -EINVAL);
	assert_npu(npu_device_open(fx->ctx, 0, NULL), -EINVAL);
	assert_npu(npu_device_query(NULL, &info), -EINVAL);
	assert_npu(npu_device_query(dev, NULL), -EINVAL);
	assert_npu(npu_device_info_get(fx->ctx, 0, NULL), -EINVAL);
	assert_null(npu_device_context(NULL));
	npu_device_close(NULL);

	assert_npu(npu_buffer_alloc(NULL, 4096, 0, &buf), -EINVAL);
	assert_npu(npu_buffer_alloc(dev, 4096, 0, NULL), -EINVAL);
	assert_npu(npu_buffer_alloc(dev, 0, 0, &buf), -EINVAL);
	assert_null(buf);
	assert_npu(npu_buffer_alloc(dev, 4096, 1u << 7, &buf), -EINVAL);
	assert_detail_contains("flags");
	assert_npu(npu_buffer_map(NULL, &ptr), -EINVAL);
	assert_npu(npu_buffer_export(NULL, &fd), -EINVAL);
	assert_npu(npu_buffer_import(dev, 0, NULL), -EINVAL);
	assert_npu(npu_buffer_share(NULL, dev, &buf), -EINVAL);
	assert_npu(npu_buffer_wait_idle(NULL, 0), -EINVAL);
	assert_int_equal(npu_buffer_size(NULL), 0);
	assert_null(npu_buffer_device(NULL));
	npu_buffer_free(NULL);

	assert_npu(npu_queue_create(NULL, NPU_PRIORITY_NORMAL, &q), -EINVAL);
	assert_npu(npu_queue_create(dev, (enum npu_priority)9, &q), -EINVAL);
	assert_null(q);
	assert_npu(npu_queue_create(dev, NPU_PRIORITY_NORMAL, NULL), -EINVAL);
	npu_queue_destroy(NULL);

	assert_npu(npu_fence_wait(NULL, 0), -EINVAL);
	assert_npu(npu_fence_poll(NULL), -EINVAL);
	assert_npu(npu_fence_wait_all(NULL, 1, 0), -EINVAL);
	assert_ok(npu_fence_wait_all(NULL, 0, 0));
	assert_null(npu_fence_ref(NULL));

	assert_npu(npu_stream_create(NULL, &s), -EINVAL);
	assert_npu(npu_stream_create(dev, NULL), -EINVAL);
	npu_stream_destroy(NULL);

	assert_true(strlen(npu_strerror(-ENOMEM)) > 0);
	assert_true(strlen(npu_strerror(ENOMEM)) > 0);
	assert_string_not_equal(npu_strerror(-ETIME), npu_strerror(-ETIMEDOUT));
}

/* Builder errors stick until reset and are what submit returns. */
static void test_stream_sticky_errors(void **state)
{
	struct fixture *fx = *state;
	npu_stream *s = fx->stream[0];
	npu_buffer *buf = conf_alloc(fx->dev[0], 4096, 0);
	npu_fence *f = NULL;

	npu_stream_fill(s, buf, 0, 4, 3);
	assert_ok(npu_stream_error(s));
	uint64_t size = npu_stream_size(s);

	npu_stream_fill(s, NULL, 0, 4, 1);
	assert_int_equal(npu_stream_error(s), -EINVAL);
	npu_stream_nop(s);
	npu_stream_fill(s, buf, 0, 4, 1);
	assert_int_equal(npu_stream_size(s), size);
	assert_int_equal(npu_stream_buffer_index(s, buf, NPU_ACCESS_READ),
			 UINT32_MAX);
	assert_npu(npu_stream_submit(s, fx->queue[0], NULL, 0, &f), -EINVAL);
	assert_detail_contains("NULL");
	assert_null(f);
	npu_stream_reset(s);
	assert_ok(npu_stream_error(s));

	npu_stream_raw(s, "12345678", 12);
	assert_int_equal(npu_stream_error(s), -EINVAL);
	npu_stream_reset(s);
	npu_stream_raw(s, NULL, 8);
	assert_int_equal(npu_stream_error(s), -EINVAL);
	npu_stream_reset(s);
	assert_int_equal(npu_stream_buffer_index(s, buf, 0), UINT32_MAX);
	assert_int_equal(npu_stream_error(s), -EINVAL);
	npu_stream_reset(s);

	if (fx->count > 1) {
		npu_buffer *other = conf_alloc(fx->dev[1], 4096, 0);

		npu_stream_copy(s, buf, 0, other, 0, 4);
		assert_int_equal(npu_stream_error(s), -EINVAL);
		npu_stream_reset(s);
		npu_stream_nop(s);
		assert_npu(npu_stream_submit(s, fx->queue[1], NULL, 0, &f), -EINVAL);
		npu_stream_reset(s);
		npu_buffer_free(other);
	}

	/* After all that, the stream works. */
	npu_stream_fill(s, buf, 4, 4, 5);
	conf_run(s, fx->queue[0]);
	assert_int_equal(((uint32_t *)conf_map(buf))[1], 5);
	assert_int_equal(((uint32_t *)conf_map(buf))[0], 0);
	npu_buffer_free(buf);
}

const struct CMUnitTest conf_invalid_tests[] = {
	cmocka_unit_test_setup_teardown(test_malformed_streams, fixture_setup,
					fixture_teardown),
	cmocka_unit_test_setup_teardown(test_bad_submit_arguments,
					fixture_setup, fixture_teardown),
	cmocka_unit_test_setup_teardown(test_bad_object_arguments,
					fixture_setup, fixture_teardown),
	cmocka_unit_test_setup_teardown(test_stream_sticky_errors,
					fixture_setup, fixture_teardown),
};
const size_t conf_invalid_count = sizeof(conf_invalid_tests) / sizeof(conf_invalid_tests[0]);
