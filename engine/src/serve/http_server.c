// SPDX-License-Identifier: MIT
/*
 * The HTTP service on libmicrohttpd: an internal thread pool polling with
 * epoll, suspend/resume so that a request waiting for the engine holds no
 * thread, request bodies gathered up to --http-max-input-size, dispatch
 * by route, and the life cycle (start, drain, stop) of both services.
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "job.h"
#include "responses.h"
#include "watch.h"

void serve_options_default(struct serve_options *o)
{
	memset(o, 0, sizeof(*o));
	o->host = "0.0.0.0";
	o->http_port = 8000;
	o->metrics_port = 8002;
	o->allow_metrics = true;
	o->http_threads = 4;
	o->max_input_size = SERVE_DEFAULT_MAX_INPUT;
	o->max_queue_size = SERVE_DEFAULT_MAX_QUEUE;
}

unsigned serve_http_status(int err)
{
	switch (err) {
	case -EINVAL:
	case -E2BIG:
	case -ERANGE:
		return MHD_HTTP_BAD_REQUEST;
	case -ENOENT:
		return MHD_HTTP_NOT_FOUND;
	case -EBUSY:
	case -EAGAIN:
	case -ESHUTDOWN:
	case -ETIMEDOUT:
	case -ENOSYS:
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	default:
		return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
}

enum MHD_Result serve_http_reply(struct MHD_Connection *c, unsigned status,
				 const char *content_type, const void *data, size_t len,
				 const char *extra_header, const char *extra_value)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)data,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	if (content_type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	if (extra_header)
		MHD_add_response_header(r, extra_header, extra_value);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result serve_http_json(struct MHD_Connection *c, unsigned status, json_object *o)
{
	struct rbln_strbuf sb = { 0 };
	enum MHD_Result ret;

	if (!o || serve_json_append(&sb, o)) {
		json_object_put(o);
		rbln_strbuf_free(&sb);
		return MHD_NO;
	}
	json_object_put(o);
	ret = serve_http_reply(c, status, "application/json", sb.data, sb.len, NULL, NULL);
	rbln_strbuf_free(&sb);
	return ret;
}

enum MHD_Result serve_http_error(struct MHD_Connection *c, unsigned status, const char *msg,
				 bool openai)
{
	return serve_http_json(c, status, openai ? serve_openai_error_json(msg, (int)status)
						 : serve_error_json(msg));
}

static bool is_openai(enum serve_route_kind k)
{
	return k == SERVE_R_V1_MODELS || k == SERVE_R_V1_COMPLETIONS || k == SERVE_R_V1_CHAT;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *c, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_data_size,
				      void **con_cls)
{
	struct serve_server *s = cls;
	struct serve_conn *cx = *con_cls;

	(void)version;
	if (!cx) {
		cx = calloc(1, sizeof(*cx));
		if (!cx)
			return MHD_NO;
		cx->srv = s;
		serve_route(url, &cx->route);
		cx->method_ok = !strcmp(method, serve_route_method(cx->route.kind));
		*con_cls = cx;
		return MHD_YES;
	}
	if (*upload_data_size) {
		/* Keep counting past the limit to report the size, but keep nothing. */
		cx->body_total += *upload_data_size;
		if (cx->method_ok && cx->body_total <= s->opt.max_input_size &&
		    rbln_strbuf_append(&cx->body, upload_data, *upload_data_size))
			return MHD_NO;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (cx->route.kind == SERVE_R_NOT_FOUND)
		return serve_http_error(c, MHD_HTTP_NOT_FOUND, "Not Found", !strncmp(url, "/v1/", 4));
	if (!cx->method_ok)
		return serve_http_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "Method Not Allowed",
					is_openai(cx->route.kind));
	if (cx->body_total > s->opt.max_input_size && !cx->job) {
		char msg[200];

		snprintf(msg, sizeof(msg), "request size of %zu bytes exceeds the maximum allowed "
			 "input size of %zu. Use --http-max-input-size to increase the limit.",
			 cx->body_total, s->opt.max_input_size);
		return serve_http_error(c, MHD_HTTP_BAD_REQUEST, msg, is_openai(cx->route.kind));
	}
	if (serve_route_generates(cx->route.kind))
		return serve_handle_generate(cx, c);
	return serve_handle_info(cx, c);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct serve_conn *cx = *con_cls;

	(void)cls;
	(void)c;
	if (!cx)
		return;
	if (cx->job)
		serve_job_detach(cx->job, toe != MHD_REQUEST_TERMINATED_COMPLETED_OK);
	rbln_strbuf_free(&cx->body);
	free(cx);
	*con_cls = NULL;
}

/* A watched socket hung up: cancel its job, if it still runs. */
static void hangup(void *ctx, uint64_t id)
{
	serve_jobs_cancel(ctx, id);
}

void serve_server_cancel_all(struct serve_server *s)
{
	serve_jobs_cancel(s, 0);
}

static int bind_addr(const char *host, unsigned port, struct sockaddr_storage *ss,
		     bool *v6, struct rbln_error *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *res = NULL;
	char ps[16];
	int rc;

	snprintf(ps, sizeof(ps), "%u", port);
	rc = getaddrinfo(host, ps, &hints, &res);
	if (rc || !res)
		return rbln_error_set(err, -EINVAL, "--host %s: %s", host,
				      rc ? gai_strerror(rc) : "no address");
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*v6 = res->ai_family == AF_INET6;
	freeaddrinfo(res);
	return 0;
}

static struct MHD_Daemon *start_daemon(const char *what, const char *host, unsigned port,
				       unsigned threads, bool suspend, MHD_AccessHandlerCallback h,
				       void *cls, MHD_RequestCompletedCallback done,
				       unsigned *bound, struct rbln_error *err)
{
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC;
	bool v6 = false;

	if (bind_addr(host, port, &ss, &v6, err))
		return NULL;
	if (suspend)
		flags |= MHD_ALLOW_SUSPEND_RESUME;
	if (v6)
		flags |= MHD_USE_IPv6;
	d = MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, h, cls,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
			     MHD_OPTION_THREAD_POOL_SIZE, threads ? threads : 1u,
			     MHD_OPTION_LISTENING_ADDRESS_REUSE, 1u,
			     MHD_OPTION_NOTIFY_COMPLETED, done, cls,
			     MHD_OPTION_END);
	if (!d) {
		rbln_error_set(err, errno ? -errno : -EADDRINUSE, "cannot start the %s on %s:%u "
			       "(%s)", what, host, port, errno ? strerror(errno) : "port in use?");
		return NULL;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	*bound = info && info->port ? info->port : port;
	return d;
}

static void metrics_done(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	free(*con_cls);
	*con_cls = NULL;
}

int serve_server_start(struct serve_server *s, const struct serve_options *o,
		       struct serve_model *models, size_t n_models, struct rbln_error *err)
{
	memset(s, 0, sizeof(*s));
	s->opt = *o;
	s->models = models;
	s->n_models = n_models;
	s->quiesced_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	atomic_init(&s->draining, false);
	atomic_init(&s->next_id, 0);
	s->watch = serve_watch_start(hangup, s);
	if (!s->watch)
		return rbln_error_set(err, -ENOMEM, "cannot start the hang-up watcher");
	s->http = start_daemon("HTTP service", o->host, o->http_port, o->http_threads, true,
			       access_handler, s, completed, &s->http_port, err);
	if (!s->http)
		goto fail;
	if (o->allow_metrics) {
		s->metrics = start_daemon("metrics service", o->host, o->metrics_port, 1, false,
					  serve_metrics_handler, s, metrics_done, &s->metrics_port,
					  err);
		if (!s->metrics)
			goto fail;
	}
	return 0;
fail:
	if (s->http)
		MHD_stop_daemon(s->http);
	serve_watch_stop(s->watch);
	s->http = NULL;
	s->watch = NULL;
	return err ? err->code : -EIO;
}

size_t serve_server_drain(struct serve_server *s, long timeout_ms)
{
	struct timespec until;
	size_t left;

	atomic_store(&s->draining, true);
	if (s->http && s->quiesced_fd < 0) {
		/*
		 * MHD stops accepting but leaves the socket listening, so new
		 * clients would wait in the backlog until we exit; shutting the
		 * socket down makes the kernel refuse them now.  It is closed only
		 * after MHD_stop_daemon (MHD's threads may still look at it).
		 */
		s->quiesced_fd = MHD_quiesce_daemon(s->http);
		if (s->quiesced_fd >= 0)
			shutdown(s->quiesced_fd, SHUT_RDWR);
	}
	clock_gettime(CLOCK_REALTIME, &until);
	if (timeout_ms >= 0) {
		until.tv_sec += timeout_ms / 1000;
		until.tv_nsec += (timeout_ms % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
	}
	pthread_mutex_lock(&s->lock);
	while (s->n_jobs) {
		if (timeout_ms < 0)
			pthread_cond_wait(&s->idle, &s->lock);
		else if (pthread_cond_timedwait(&s->idle, &s->lock, &until) == ETIMEDOUT)
			break;
	}
	left = s->n_jobs;
	pthread_mutex_unlock(&s->lock);
	return left;
}

void serve_server_stop(struct serve_server *s)
{
	if (s->http)
		MHD_stop_daemon(s->http);
	if (s->quiesced_fd >= 0)
		close(s->quiesced_fd);
	s->quiesced_fd = -1;
	if (s->metrics)
		MHD_stop_daemon(s->metrics);
	serve_watch_stop(s->watch);
	pthread_cond_destroy(&s->idle);
	pthread_mutex_destroy(&s->lock);
	s->http = s->metrics = NULL;
	s->watch = NULL;
}

struct serve_model *serve_server_model(struct serve_server *s, const char *name,
				       const char *version)
{
	size_t i;

	for (i = 0; i < s->n_models; i++) {
		struct serve_model *m = &s->models[i];

		if (strcmp(m->name, name))
			continue;
		if (version && *version && strcmp(m->version, version))
			return NULL;
		return m;
	}
	return NULL;
}
