// SPDX-License-Identifier: MIT
/*
 * The gRPC service's transport: a grpc_server with one completion queue
 * polled by one thread, every incoming call requested through
 * grpc_server_request_call (so an unknown method is seen, and answered
 * UNIMPLEMENTED), and each call's operations driven by tags.  A call
 * first receives its message and, in a batch of its own, waits for
 * RECV_CLOSE_ON_SERVER: that completes with "cancelled" when the client
 * goes away or the deadline (grpc-timeout) passes, and cancels the call's
 * inference requests at once.  Sends are serialized per call: one
 * SEND_MESSAGE in flight, the rest queued; the status goes last.
 */
#include "grpc_internal.h"

#include "serve/http/auth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>

#define METHOD_PREFIX "/inference.GRPCInferenceService/"

void serve_grpc_options_default(struct serve_grpc_options *o)
{
	memset(o, 0, sizeof(*o));
	o->port = 8001;
	o->keepalive_time_ms = 7200000;
	o->keepalive_timeout_ms = 20000;
	o->http2_max_pings_without_data = 2;
	o->http2_min_recv_ping_interval_ms = 300000;
}

grpc_status_code serve_grpc_status_of(int err)
{
	switch (err) {
	case -EINVAL:
	case -E2BIG:
	case -ERANGE:
		return GRPC_STATUS_INVALID_ARGUMENT;
	case -ENOENT:
		return GRPC_STATUS_NOT_FOUND;
	case -EBUSY:
	case -EAGAIN:
	case -ESHUTDOWN:
	case -ENOSYS:
		return GRPC_STATUS_UNAVAILABLE;
	case -ETIMEDOUT:
		return GRPC_STATUS_DEADLINE_EXCEEDED;
	case -ECANCELED:
		return GRPC_STATUS_CANCELLED;
	default:
		return GRPC_STATUS_INTERNAL;
	}
}

grpc_byte_buffer *serve_grpc_pack(const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	grpc_slice s = grpc_slice_malloc(len);
	grpc_byte_buffer *b;

	protobuf_c_message_pack(m, GRPC_SLICE_START_PTR(s));
	b = grpc_raw_byte_buffer_create(&s, 1);
	grpc_slice_unref(s);
	return b;
}

uint8_t *serve_grpc_read_all(const grpc_byte_buffer *b, size_t *len)
{
	grpc_byte_buffer_reader r;
	grpc_slice s;
	uint8_t *p;

	*len = 0;
	if (!grpc_byte_buffer_reader_init(&r, (grpc_byte_buffer *)b))
		return NULL;
	s = grpc_byte_buffer_reader_readall(&r);
	grpc_byte_buffer_reader_destroy(&r);
	*len = GRPC_SLICE_LENGTH(s);
	p = malloc(*len ? *len : 1);
	if (p)
		memcpy(p, GRPC_SLICE_START_PTR(s), *len);
	grpc_slice_unref(s);
	return p;
}

/* ---- call life ---- */

#define CALL_OF(t, member) \
	((struct grpc_callctx *)((char *)(t) - offsetof(struct grpc_callctx, member)))

static void request_next_call(struct serve_grpc *g);

void serve_grpc_callctx_ref(struct grpc_callctx *c)
{
	pthread_mutex_lock(&c->lock);
	c->refs++;
	pthread_mutex_unlock(&c->lock);
}

void serve_grpc_callctx_unref(struct grpc_callctx *c)
{
	struct serve_grpc *g = c->g;
	struct grpc_out *o;
	unsigned left;

	pthread_mutex_lock(&c->lock);
	left = --c->refs;
	pthread_mutex_unlock(&c->lock);
	if (left)
		return;
	while ((o = c->out_head)) {
		c->out_head = o->next;
		grpc_byte_buffer_destroy(o->buf);
		free(o);
	}
	if (c->recv_buf)
		grpc_byte_buffer_destroy(c->recv_buf);
	if (c->call)
		grpc_call_unref(c->call);
	grpc_call_details_destroy(&c->details);
	grpc_metadata_array_destroy(&c->md);
	free(c->status_msg);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_lock(&g->lock);
	if (c->prev)
		c->prev->next = c->next;
	else if (g->calls == c)
		g->calls = c->next;
	if (c->next)
		c->next->prev = c->prev;
	g->n_calls--;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	free(c);
}

static void start(struct grpc_callctx *c, const grpc_op *ops, size_t n, struct grpc_tag *t)
{
	grpc_call_error e;

	serve_grpc_callctx_ref(c);	/* the batch's */
	e = grpc_call_start_batch(c->call, ops, n, t, NULL);
	if (e != GRPC_CALL_OK) {
		fprintf(stderr, "rbln-serve: gRPC: cannot start an operation (%d)\n", (int)e);
		serve_grpc_callctx_unref(c);
	}
}

/* Sends the next queued message, or the status when nothing is left (c locked). */
static void pump(struct grpc_callctx *c)
{
	grpc_op op[2];
	grpc_slice detail;

	if (c->sending || c->status_sent)
		return;
	if (c->out_head) {
		memset(op, 0, sizeof(op));
		op[0].op = GRPC_OP_SEND_MESSAGE;
		op[0].data.send_message.send_message = c->out_head->buf;
		c->sending = true;
		c->refs++;
		if (grpc_call_start_batch(c->call, op, 1, &c->t_send, NULL) != GRPC_CALL_OK) {
			c->sending = false;
			c->refs--;
		}
		return;
	}
	if (!c->status_ready)
		return;
	memset(op, 0, sizeof(op));
	detail = grpc_slice_from_copied_string(c->status_msg ? c->status_msg : "");
	op[0].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	op[0].data.send_status_from_server.status = c->status;
	op[0].data.send_status_from_server.status_details = &detail;
	c->status_sent = true;
	c->refs++;
	if (grpc_call_start_batch(c->call, op, 1, &c->t_status, NULL) != GRPC_CALL_OK)
		c->refs--;
	grpc_slice_unref(detail);
}

void serve_grpc_call_send(struct grpc_callctx *c, grpc_byte_buffer *buf)
{
	struct grpc_out *o = calloc(1, sizeof(*o));

	if (!o) {
		grpc_byte_buffer_destroy(buf);
		return;
	}
	o->buf = buf;
	pthread_mutex_lock(&c->lock);
	if (c->status_sent || c->closed) {
		/* the call is over: nobody reads this any more */
		pthread_mutex_unlock(&c->lock);
		grpc_byte_buffer_destroy(buf);
		free(o);
		return;
	}
	if (c->out_tail)
		c->out_tail->next = o;
	else
		c->out_head = o;
	c->out_tail = o;
	pump(c);
	pthread_mutex_unlock(&c->lock);
}

void serve_grpc_call_finish(struct grpc_callctx *c, grpc_status_code code, const char *msg)
{
	pthread_mutex_lock(&c->lock);
	if (!c->status_ready) {
		c->status_ready = true;
		c->status = code;
		c->status_msg = msg ? strdup(msg) : NULL;
	}
	pump(c);
	pthread_mutex_unlock(&c->lock);
}

void serve_grpc_call_maybe_end(struct grpc_callctx *c)
{
	bool end;

	pthread_mutex_lock(&c->lock);
	end = c->kind == GRPC_CALL_STREAM && c->half_closed && !c->reqs;
	pthread_mutex_unlock(&c->lock);
	if (end)
		serve_grpc_call_finish(c, GRPC_STATUS_OK, NULL);
}

static void on_send(struct grpc_tag *t, bool ok)
{
	struct grpc_callctx *c = CALL_OF(t, t_send);
	struct grpc_out *o;

	pthread_mutex_lock(&c->lock);
	o = c->out_head;
	c->out_head = o->next;
	if (!c->out_head)
		c->out_tail = NULL;
	c->sending = false;
	grpc_byte_buffer_destroy(o->buf);
	free(o);
	if (ok) {
		pump(c);
	} else {
		/* the stream is broken: what is queued cannot go either */
		while ((o = c->out_head)) {
			c->out_head = o->next;
			grpc_byte_buffer_destroy(o->buf);
			free(o);
		}
		c->out_tail = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	serve_grpc_callctx_unref(c);
}

static void on_status(struct grpc_tag *t, bool ok)
{
	(void)ok;
	serve_grpc_callctx_unref(CALL_OF(t, t_status));
}

static void on_close(struct grpc_tag *t, bool ok)
{
	struct grpc_callctx *c = CALL_OF(t, t_close);

	(void)ok;
	pthread_mutex_lock(&c->lock);
	c->closed = true;
	pthread_mutex_unlock(&c->lock);
	if (c->cancelled)
		serve_grpc_call_cancel_requests(c);
	serve_grpc_callctx_unref(c);
}

static void receive(struct grpc_callctx *c)
{
	grpc_op op;

	memset(&op, 0, sizeof(op));
	op.op = GRPC_OP_RECV_MESSAGE;
	op.data.recv_message.recv_message = &c->recv_buf;
	start(c, &op, 1, &c->t_recv);
}

static void unary(struct grpc_callctx *c, const grpc_byte_buffer *in)
{
	grpc_byte_buffer *out = NULL;
	grpc_status_code code = GRPC_STATUS_OK;
	char msg[512] = "";

	if (!in) {
		serve_grpc_call_finish(c, GRPC_STATUS_INVALID_ARGUMENT, "the call carried no request");
		return;
	}
	serve_grpc_unary_handle(c->g, c->method, in, &out, &code, msg, sizeof(msg));
	if (out)
		serve_grpc_call_send(c, out);
	serve_grpc_call_finish(c, code, *msg ? msg : NULL);
}

static void on_recv(struct grpc_tag *t, bool ok)
{
	struct grpc_callctx *c = CALL_OF(t, t_recv);
	grpc_byte_buffer *msg = ok ? c->recv_buf : NULL;

	c->recv_buf = NULL;
	switch (c->kind) {
	case GRPC_CALL_UNARY:
		if (serve_grpc_repo_method(c->method))
			serve_grpc_repo_call(c, msg);
		else
			unary(c, msg);
		break;
	case GRPC_CALL_INFER:
		if (msg)
			serve_grpc_infer_request(c, msg);
		else
			serve_grpc_call_finish(c, GRPC_STATUS_INVALID_ARGUMENT,
					 "the call carried no request");
		break;
	case GRPC_CALL_STREAM:
		if (msg) {
			serve_grpc_infer_request(c, msg);
			receive(c);
		} else {
			pthread_mutex_lock(&c->lock);
			c->half_closed = true;
			pthread_mutex_unlock(&c->lock);
			serve_grpc_call_maybe_end(c);
		}
		break;
	}
	if (msg)
		grpc_byte_buffer_destroy(msg);
	serve_grpc_callctx_unref(c);
}

/*
 * --api-key, as on the HTTP port: every method but the health ones needs
 * the metadata "authorization: Bearer KEY" (tritonclient: headers=...).
 */
static bool authorized(const struct serve_grpc *g, const struct grpc_callctx *c)
{
	static const char *const open_methods[] = { "ServerLive", "ServerReady", "ModelReady" };
	const char *key = g->srv->opt.api_key;

	if (!key)
		return true;
	for (size_t i = 0; i < sizeof(open_methods) / sizeof(open_methods[0]); i++)
		if (!strcmp(c->method, open_methods[i]))
			return true;
	for (size_t i = 0; i < c->md.count; i++) {
		const grpc_metadata *m = &c->md.metadata[i];

		if (GRPC_SLICE_LENGTH(m->key) == 13 &&
		    !memcmp(GRPC_SLICE_START_PTR(m->key), "authorization", 13))
			return serve_bearer_matches((const char *)GRPC_SLICE_START_PTR(m->value),
						    GRPC_SLICE_LENGTH(m->value), key);
	}
	return false;
}

static void on_new(struct grpc_tag *t, bool ok)
{
	struct grpc_callctx *c = CALL_OF(t, t_new);
	struct serve_grpc *g = c->g;
	size_t plen = strlen(METHOD_PREFIX), mlen = GRPC_SLICE_LENGTH(c->details.method);
	const char *path = (const char *)GRPC_SLICE_START_PTR(c->details.method);
	grpc_op ops[2];

	if (!ok) {
		/* the server is shutting down: this request will not be served */
		serve_grpc_callctx_unref(c);
		return;
	}
	if (!atomic_load(&g->shutting))
		request_next_call(g);
	if (mlen > plen && mlen - plen < sizeof(c->method) && !memcmp(path, METHOD_PREFIX, plen))
		memcpy(c->method, path + plen, mlen - plen);
	memset(ops, 0, sizeof(ops));
	ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	start(c, ops, 1, &c->t_status);
	/* the close batch's completion is how a cancelled call is noticed */
	ops[0].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	ops[0].data.recv_close_on_server.cancelled = &c->cancelled;
	start(c, ops, 1, &c->t_close);
	if (!authorized(g, c)) {
		serve_grpc_call_finish(c, GRPC_STATUS_UNAUTHENTICATED, "this server needs its API key: "
				 "send the metadata 'authorization: Bearer KEY'");
		serve_grpc_callctx_unref(c);
		return;
	}
	if (!strcmp(c->method, "ModelInfer")) {
		c->kind = GRPC_CALL_INFER;
	} else if (!strcmp(c->method, "ModelStreamInfer")) {
		c->kind = GRPC_CALL_STREAM;
	} else if (!serve_grpc_unary_known(c->method) && !serve_grpc_repo_method(c->method)) {
		char msg[160];

		snprintf(msg, sizeof(msg), "unknown method %.*s: rbln-serve does not implement it",
			 (int)(mlen < 100 ? mlen : 100), path);
		serve_grpc_call_finish(c, GRPC_STATUS_UNIMPLEMENTED, msg);
		serve_grpc_callctx_unref(c);
		return;
	}
	receive(c);
	serve_grpc_callctx_unref(c);	/* request_call's reference */
}

static void request_next_call(struct serve_grpc *g)
{
	struct grpc_callctx *c = calloc(1, sizeof(*c));

	if (!c) {
		fprintf(stderr, "rbln-serve: gRPC: out of memory: no longer accepting calls\n");
		return;
	}
	c->g = g;
	c->refs = 1;
	pthread_mutex_init(&c->lock, NULL);
	grpc_call_details_init(&c->details);
	grpc_metadata_array_init(&c->md);
	c->t_new.done = on_new;
	c->t_recv.done = on_recv;
	c->t_send.done = on_send;
	c->t_close.done = on_close;
	c->t_status.done = on_status;
	pthread_mutex_lock(&g->lock);
	c->next = g->calls;
	if (g->calls)
		g->calls->prev = c;
	g->calls = c;
	g->n_calls++;
	pthread_mutex_unlock(&g->lock);
	if (grpc_server_request_call(g->server, &c->call, &c->details, &c->md, g->cq, g->cq,
				     &c->t_new) != GRPC_CALL_OK)
		serve_grpc_callctx_unref(c);
}

/* ---- the server ---- */

static void on_shutdown(struct grpc_tag *t, bool ok)
{
	struct serve_grpc *g = (struct serve_grpc *)((char *)t -
						     offsetof(struct serve_grpc, t_shutdown));

	(void)ok;
	pthread_mutex_lock(&g->lock);
	g->shutdown_done = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

static void *cq_main(void *arg)
{
	struct serve_grpc *g = arg;

	for (;;) {
		grpc_event ev = grpc_completion_queue_next(g->cq,
							   gpr_inf_future(GPR_CLOCK_REALTIME), NULL);

		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.type == GRPC_OP_COMPLETE)
			((struct grpc_tag *)ev.tag)->done(ev.tag, ev.success != 0);
	}
	return NULL;
}

static grpc_arg int_arg(const char *key, int v)
{
	grpc_arg a;

	memset(&a, 0, sizeof(a));
	a.type = GRPC_ARG_INTEGER;
	a.key = (char *)key;
	a.value.integer = v;
	return a;
}

int serve_grpc_start(struct serve_server *s, const struct serve_grpc_options *o,
		     struct serve_grpc **out, struct rbln_error *err)
{
	struct serve_grpc *g = calloc(1, sizeof(*g));
	size_t max_msg = s->opt.max_input_size;
	grpc_arg args[7];
	grpc_channel_args ca = { .num_args = 7, .args = args };
	grpc_server_credentials *creds;
	char addr[300];
	int port;

	*out = NULL;
	if (!g)
		return rbln_error_set(err, -ENOMEM, "out of memory");
	grpc_init();
	g->srv = s;
	g->opt = *o;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	g->t_shutdown.done = on_shutdown;
	args[0] = int_arg(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
			  max_msg > 0x7fffffff ? 0x7fffffff : (int)max_msg);
	args[1] = int_arg(GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, -1);
	args[2] = int_arg(GRPC_ARG_KEEPALIVE_TIME_MS, o->keepalive_time_ms);
	args[3] = int_arg(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, o->keepalive_timeout_ms);
	args[4] = int_arg(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS,
			  o->keepalive_permit_without_calls);
	args[5] = int_arg(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, o->http2_max_pings_without_data);
	args[6] = int_arg(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
			  o->http2_min_recv_ping_interval_ms);
	g->cq = grpc_completion_queue_create_for_next(NULL);
	g->server = grpc_server_create(&ca, NULL);
	grpc_server_register_completion_queue(g->server, g->cq, NULL);
	snprintf(addr, sizeof(addr), strchr(s->opt.host, ':') ? "[%s]:%u" : "%s:%u",
		 s->opt.host, o->port);
	if (s->tls_cert && s->tls_key) {
		/* --ssl-certfile/--ssl-keyfile: TLS on the gRPC port too */
		grpc_ssl_pem_key_cert_pair pair = { .private_key = s->tls_key,
						    .cert_chain = s->tls_cert };

		creds = grpc_ssl_server_credentials_create(NULL, &pair, 1, 0, NULL);
	} else {
		creds = grpc_insecure_server_credentials_create();
	}
	port = grpc_server_add_http2_port(g->server, addr, creds);
	grpc_server_credentials_release(creds);
	if (port <= 0) {
		rbln_error_set(err, -EADDRINUSE, "cannot start the gRPC service on %s (port in "
			       "use, or a bad --host?)", addr);
		grpc_server_destroy(g->server);
		grpc_completion_queue_shutdown(g->cq);
		grpc_completion_queue_destroy(g->cq);
		pthread_cond_destroy(&g->cond);
		pthread_mutex_destroy(&g->lock);
		free(g);
		grpc_shutdown();
		return err ? err->code : -EADDRINUSE;
	}
	g->port = (unsigned)port;
	grpc_server_start(g->server);
	pthread_create(&g->cq_thread, NULL, cq_main, g);
	pthread_create(&g->sender, NULL, serve_grpc_sender_main, g);
	g->threads_started = true;
	request_next_call(g);
	*out = g;
	return 0;
}

unsigned serve_grpc_port(const struct serve_grpc *g)
{
	return g->port;
}

void serve_grpc_shutdown(struct serve_grpc *g)
{
	if (!g || atomic_exchange(&g->shutting, true))
		return;
	grpc_server_shutdown_and_notify(g->server, g->cq, &g->t_shutdown);
}

void serve_grpc_stop(struct serve_grpc *g, long grace_ms)
{
	struct timespec until;

	if (!g)
		return;
	serve_grpc_shutdown(g);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += grace_ms / 1000;
	until.tv_nsec += (grace_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&g->lock);
	while (!g->shutdown_done &&
	       pthread_cond_timedwait(&g->cond, &g->lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&g->lock);
	/* calls still open (idle streams, clients that do not read) end here */
	grpc_server_cancel_all_calls(g->server);
	pthread_mutex_lock(&g->lock);
	while (!g->shutdown_done || g->n_calls)
		pthread_cond_wait(&g->cond, &g->lock);
	g->stop_sender = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->sender, NULL);
	grpc_server_destroy(g->server);
	grpc_completion_queue_shutdown(g->cq);
	pthread_join(g->cq_thread, NULL);
	grpc_completion_queue_destroy(g->cq);
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
	free(g);
	grpc_shutdown();
}
