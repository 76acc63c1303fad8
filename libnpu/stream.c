// SPDX-License-Identifier: MIT
/*
 * The command-stream builder: the encoder's stream (isa_encode.h), the
 * buffer list (deduplicated, access widened), sticky errors, and
 * submission through a host command buffer of the device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream_internal.h"

/* The command buffer is a whole number of these, so it is rarely regrown. */
#define CMD_BUFFER_GRANULE (64 * 1024)

int npu_stream_set_error(npu_stream *s, int err)
{
	if (!s->error) {
		s->error = err;
		snprintf(s->error_detail, sizeof(s->error_detail), "%s",
			 npu_error_detail());
	}
	return err;
}

int npu_stream_create(npu_device *dev, npu_stream **out)
{
	if (!dev || !out)
		return npu_fail(-EINVAL, "npu_stream_create: %s is NULL",
				dev ? "out" : "device");
	*out = NULL;

	npu_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return npu_fail(-ENOMEM, NULL);
	if (isa_stream_init(&s->enc, dev->info.max_cmd_size)) {
		free(s);
		return npu_fail(-ENOMEM, NULL);
	}
	pthread_mutex_init(&s->lock, NULL);
	s->dev = dev;
	*out = s;
	return 0;
}

void npu_stream_destroy(npu_stream *s)
{
	if (!s)
		return;
	npu_buffer_free(s->cmd);
	pthread_mutex_destroy(&s->lock);
	free(s->uses);
	isa_stream_free(&s->enc);
	free(s);
}

void npu_stream_reset(npu_stream *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	isa_stream_reset(&s->enc);
	s->num_uses = 0;
	s->error = 0;
	s->error_detail[0] = '\0';
	pthread_mutex_unlock(&s->lock);
}

/* The getters take a const stream but must still serialise with writers. */
static pthread_mutex_t *lock_of(const npu_stream *s)
{
	return (pthread_mutex_t *)&s->lock;
}

int npu_stream_error(const npu_stream *s)
{
	if (!s)
		return -EINVAL;
	pthread_mutex_lock(lock_of(s));
	int err = s->error;

	pthread_mutex_unlock(lock_of(s));
	return err;
}

uint64_t npu_stream_size(const npu_stream *s)
{
	if (!s)
		return 0;
	pthread_mutex_lock(lock_of(s));
	uint64_t size = s->enc.size;

	pthread_mutex_unlock(lock_of(s));
	return size;
}

const void *npu_stream_data(const npu_stream *s)
{
	return s ? s->enc.data : NULL;
}

uint32_t npu_stream_use(npu_stream *s, npu_buffer *buf, uint32_t access,
			const char *what)
{
	if (!buf) {
		npu_stream_set_error(s, npu_fail(-EINVAL, "%s: buffer is NULL", what));
		return NPU_STREAM_NO_BUFFER;
	}
	if (buf->dev != s->dev) {
		npu_stream_set_error(s, npu_fail(-EINVAL,
			"%s: buffer belongs to another device handle (share it with npu_buffer_share())",
			what));
		return NPU_STREAM_NO_BUFFER;
	}
	if (!access || (access & ~NPU_ACCESS_RW)) {
		npu_stream_set_error(s, npu_fail(-EINVAL, "%s: access 0x%x", what,
						 access));
		return NPU_STREAM_NO_BUFFER;
	}
	for (uint32_t i = 0; i < s->num_uses; i++) {
		if (s->uses[i].buffer == buf) {
			s->uses[i].access |= access;
			return i;
		}
	}
	if (s->num_uses >= s->dev->info.max_submit_buffers) {
		npu_stream_set_error(s, npu_fail(-E2BIG,
			"%s: more than %u buffers in one stream", what,
			s->dev->info.max_submit_buffers));
		return NPU_STREAM_NO_BUFFER;
	}
	if (s->num_uses == s->uses_capacity) {
		uint32_t capacity = s->uses_capacity ? s->uses_capacity * 2 : 8;
		struct npu_buffer_use *grown = realloc(s->uses, capacity *
						       sizeof(*grown));

		if (!grown) {
			npu_stream_set_error(s, npu_fail(-ENOMEM, NULL));
			return NPU_STREAM_NO_BUFFER;
		}
		s->uses = grown;
		s->uses_capacity = capacity;
	}
	s->uses[s->num_uses] = (struct npu_buffer_use){ buf, access };
	return s->num_uses++;
}

uint32_t npu_stream_buffer_index(npu_stream *s, npu_buffer *buf,
				 uint32_t access)
{
	if (!s)
		return NPU_STREAM_NO_BUFFER;
	pthread_mutex_lock(&s->lock);
	uint32_t index = s->error ? NPU_STREAM_NO_BUFFER :
		npu_stream_use(s, buf, access, "npu_stream_buffer_index");

	pthread_mutex_unlock(&s->lock);
	return index;
}

/* Make the host command buffer at least @size bytes. */
static int reserve_cmd_buffer(npu_stream *s, uint64_t size)
{
	if (s->cmd && npu_buffer_size(s->cmd) >= size)
		return 0;
	npu_buffer_free(s->cmd);
	s->cmd = NULL;
	size = (size + CMD_BUFFER_GRANULE - 1) / CMD_BUFFER_GRANULE *
	       CMD_BUFFER_GRANULE;
	return npu_buffer_alloc(s->dev, size, NPU_BUFFER_HOST, &s->cmd);
}

int npu_stream_submit(npu_stream *s, npu_queue *q, npu_fence *const *wait,
		      unsigned int num_wait, npu_fence **fence)
{
	if (fence)
		*fence = NULL;
	if (!s || !q)
		return npu_fail(-EINVAL, "npu_stream_submit: %s is NULL",
				s ? "queue" : "stream");
	if (q->dev != s->dev)
		return npu_fail(-EINVAL,
				"npu_stream_submit: queue and stream belong to different device handles");

	pthread_mutex_lock(&s->lock);
	int err = s->error;
	void *map;

	if (err) {
		npu_fail(err, "%s", s->error_detail);
		goto out;
	}
	err = reserve_cmd_buffer(s, s->enc.size);
	if (!err)
		err = npu_buffer_map(s->cmd, &map);
	if (err)
		goto out;
	/*
	 * Both backends copy the stream out of the command buffer before
	 * npu_submit() returns, so the buffer is free for the next submission
	 * at once and one buffer per builder suffices.
	 */
	memcpy(map, s->enc.data, s->enc.size);

	struct npu_submit_info info = {
		.cmd = s->cmd,
		.cmd_offset = 0,
		.cmd_size = s->enc.size,
		.buffers = s->uses,
		.num_buffers = s->num_uses,
		.wait = wait,
		.num_wait = num_wait,
	};

	err = npu_submit(q, &info, fence);
out:
	pthread_mutex_unlock(&s->lock);
	return err;
}
