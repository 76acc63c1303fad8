/* SPDX-License-Identifier: MIT */
/*
 * What the gRPC service's files share.  One completion-queue thread runs
 * every call's state machine (grpc_server.c); a sender thread turns the
 * engine's output into messages (grpc_stream.c), because the engine's
 * callback, which wakes it, must not block.  A call is reference counted:
 * each operation batch in flight and each inference request holds one.
 */
#ifndef RBLN_SERVE_GRPC_INTERNAL_H
#define RBLN_SERVE_GRPC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <grpc/grpc.h>
#include <json-c/json.h>
#include <protobuf-c/protobuf-c.h>

#include "grpc_server.h"
#include "serve/http/job.h"

/* A completion: the tag of an operation batch. */
struct grpc_tag {
	void (*done)(struct grpc_tag *t, bool ok);
};

struct grpc_req;

/* A serialized message waiting for its turn to be sent. */
struct grpc_out {
	struct grpc_out *next;
	grpc_byte_buffer *buf;
};

enum grpc_call_kind {
	GRPC_CALL_UNARY,	/* everything but inference */
	GRPC_CALL_INFER,	/* ModelInfer: one request, one response */
	GRPC_CALL_STREAM,	/* ModelStreamInfer: decoupled */
};

struct grpc_callctx {
	struct serve_grpc *g;
	grpc_call *call;
	grpc_call_details details;
	grpc_metadata_array md;
	enum grpc_call_kind kind;
	char method[64];		/* the method's short name */
	struct grpc_tag t_new, t_recv, t_send, t_close, t_status;
	grpc_byte_buffer *recv_buf;
	int cancelled;			/* RECV_CLOSE_ON_SERVER's answer */

	pthread_mutex_t lock;		/* what follows */
	unsigned refs;
	bool half_closed;		/* the client sends no more requests */
	bool closed;			/* RECV_CLOSE_ON_SERVER completed */
	bool sending;			/* a SEND_MESSAGE is in flight */
	bool status_sent;
	struct grpc_out *out_head, *out_tail;
	grpc_status_code status;	/* sent once out is empty (unary and infer) */
	char *status_msg;
	bool status_ready;
	struct grpc_req *reqs;		/* inference requests in flight */
	struct grpc_callctx *prev, *next;	/* in g->calls */
};

/* One inference request (of ModelInfer or of a stream) and its job. */
struct grpc_req {
	struct grpc_callctx *c;
	struct serve_job *job;
	struct serve_model *model;
	bool empty_final;		/* an extra, empty, final response */
	bool queued;			/* in g's pending list (g->lock) */
	struct grpc_req *next_pending;
	struct grpc_req *prev, *next;	/* in c->reqs */
};

struct serve_grpc {
	struct serve_server *srv;
	struct serve_grpc_options opt;
	grpc_server *server;
	grpc_completion_queue *cq;
	unsigned port;
	pthread_t cq_thread, sender;
	bool threads_started;
	atomic_bool shutting;
	struct grpc_tag t_shutdown;
	pthread_mutex_t lock;		/* what follows */
	pthread_cond_t cond;
	struct grpc_req *pending_head, *pending_tail;	/* have output to take */
	bool stop_sender;
	bool shutdown_done;
	struct grpc_callctx *calls;
	size_t n_calls;
};

/* grpc_server.c: calls */
void serve_grpc_callctx_ref(struct grpc_callctx *c);
void serve_grpc_callctx_unref(struct grpc_callctx *c);
/* Queues a message (taken over) for sending; sends it now if the line is free. */
void serve_grpc_call_send(struct grpc_callctx *c, grpc_byte_buffer *buf);
/* Ends the call with this status once every queued message is sent. */
void serve_grpc_call_finish(struct grpc_callctx *c, grpc_status_code code, const char *msg);
/* A stream whose client half-closed and whose requests are done: end it OK. */
void serve_grpc_call_maybe_end(struct grpc_callctx *c);
/* Packs a protobuf-c message into a byte buffer (NULL: out of memory). */
grpc_byte_buffer *serve_grpc_pack(const ProtobufCMessage *m);
/* The gRPC status of a negative errno. */
grpc_status_code serve_grpc_status_of(int err);

/* grpc_unary.c: every method but inference; 0 if method is not one of them. */
int serve_grpc_unary_handle(struct serve_grpc *g, const char *method, const grpc_byte_buffer *in,
		      grpc_byte_buffer **out, grpc_status_code *code, char *msg, size_t msg_len);
bool serve_grpc_unary_known(const char *method);
/* RepositoryModelLoad and RepositoryModelUnload (grpc_repo.c): answered from a thread. */
bool serve_grpc_repo_method(const char *method);
void serve_grpc_repo_call(struct grpc_callctx *c, const grpc_byte_buffer *in);
/* Reads a whole byte buffer (malloc'd; *len its size). */
uint8_t *serve_grpc_read_all(const grpc_byte_buffer *b, size_t *len);

/* grpc_stream.c: inference requests */
void *serve_grpc_sender_main(void *arg);
/*
 * One ModelInferRequest received on c: parsed, checked and submitted, or
 * answered with an error (status for ModelInfer, error_message on a stream).
 */
void serve_grpc_infer_request(struct grpc_callctx *c, const grpc_byte_buffer *msg);
/* The client went away: cancel c's requests (their KV blocks are freed). */
void serve_grpc_call_cancel_requests(struct grpc_callctx *c);

/* grpc_config.c: a model's configuration (proto3 JSON) as inference.ModelConfig. */
int serve_grpc_config_from_json(json_object *json, ProtobufCMessage **out, struct rbln_error *err);
void serve_grpc_config_free(ProtobufCMessage *m);

#endif
