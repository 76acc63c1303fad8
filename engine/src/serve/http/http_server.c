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
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "auth.h"
#include "handlers.h"
#include "http_encoding.h"
#include "http_guard.h"
#include "job.h"
#include "reply.h"
#include "serve/api/responses.h"
#include "util/file.h"
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
	o->max_connections = SERVE_DEFAULT_MAX_CONNECTIONS;
	o->max_connections_per_client = SERVE_DEFAULT_MAX_PER_CLIENT;
	o->idle_timeout_s = SERVE_DEFAULT_IDLE_TIMEOUT_S;
	o->header_timeout_s = SERVE_DEFAULT_HEADER_TIMEOUT_S;
	o->body_timeout_s = SERVE_DEFAULT_BODY_TIMEOUT_S;
	o->prep_threads = SERVE_DEFAULT_PREP_THREADS;
}

static bool is_openai(enum serve_route_kind k)
{
	return k == SERVE_R_V1_MODELS || k == SERVE_R_V1_COMPLETIONS || k == SERVE_R_V1_CHAT;
}

/* A header's occurrences (names compare without case, as HTTP's do). */
struct header_count {
	const char *name;
	unsigned n;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	struct header_count *hc = cls;

	(void)kind;
	(void)value;
	if (!strcasecmp(key, hc->name))
		hc->n++;
	return MHD_YES;
}

static unsigned header_count(struct MHD_Connection *c, const char *name)
{
	struct header_count hc = { name, 0 };

	MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &hc);
	return hc.n;
}

/*
 * Framing a proxy in front of us might read differently (request
 * smuggling): several Content-Length headers, or one with chunked coding.
 * NULL when the framing is unambiguous.
 */
static const char *ambiguous_framing(struct MHD_Connection *c)
{
	unsigned n = header_count(c, MHD_HTTP_HEADER_CONTENT_LENGTH);

	if (n > 1)
		return "the request has more than one Content-Length header";
	if (n && header_count(c, MHD_HTTP_HEADER_TRANSFER_ENCODING))
		return "the request has both Content-Length and Transfer-Encoding headers";
	return NULL;
}

/* --api-key: "Authorization: Bearer KEY", as vLLM's server and OpenAI clients send it. */
static bool authorized(const struct serve_server *s, struct MHD_Connection *c,
		       enum serve_route_kind k)
{
	const char *h;

	if (!s->opt.api_key || k == SERVE_R_LIVE || k == SERVE_R_READY)
		return true;
	h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	return h && serve_bearer_matches(h, strlen(h), s->opt.api_key);
}

/*
 * A generating request whose body cannot be read (too large, badly
 * encoded) counts among its model's failures as any bad request does:
 * Triton's OTHER.
 */
static void count_unreadable_body(struct serve_server *s, const struct serve_conn *cx)
{
	struct serve_model *m;

	if (!serve_route_generates(cx->route.kind) || !cx->route.model[0])
		return;
	m = serve_server_model(s, cx->route.model, cx->route.version);
	if (m)
		atomic_fetch_add(&m->metrics.failure[SERVE_FAIL_OTHER], 1);
}

/* An answer before the body was read: the connection closes after it. */
static enum MHD_Result refuse_early(struct MHD_Connection *c, unsigned status, const char *msg,
				    bool openai, const char *extra_header,
				    const char *extra_value)
{
	struct rbln_strbuf sb = { 0 };
	json_object *o = openai ? serve_openai_error_json(msg, (int)status) : serve_error_json(msg);
	struct MHD_Response *r;
	enum MHD_Result ret = MHD_NO;

	if (o && !serve_json_append(&sb, o)) {
		r = MHD_create_response_from_buffer(sb.len, sb.data, MHD_RESPMEM_MUST_COPY);
		if (r) {
			MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
			MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
			if (extra_header)
				MHD_add_response_header(r, extra_header, extra_value);
			ret = MHD_queue_response(c, status, r);
			MHD_destroy_response(r);
		}
	}
	json_object_put(o);
	rbln_strbuf_free(&sb);
	return ret;
}

/* The request's headers are complete: checks that need no body. */
static enum MHD_Result headers_arrived(struct serve_server *s, struct MHD_Connection *c,
				       const char *url, const char *method, void **con_cls)
{
	struct serve_conn *cx = calloc(1, sizeof(*cx));
	const char *bad;

	if (!cx)
		return MHD_NO;
	cx->srv = s;
	cx->conn = c;
	serve_route(url, &cx->route);
	cx->method_ok = !strcmp(method, serve_route_method(cx->route.kind));
	*con_cls = cx;
	serve_guard_headers_done(c);
	bad = ambiguous_framing(c);
	if (bad)
		return refuse_early(c, MHD_HTTP_BAD_REQUEST, bad, is_openai(cx->route.kind), NULL,
				    NULL);
	if (!authorized(s, c, cx->route.kind))
		return refuse_early(c, MHD_HTTP_UNAUTHORIZED, "Unauthorized: this server needs "
				    "its API key as 'Authorization: Bearer <key>'",
				    is_openai(cx->route.kind), MHD_HTTP_HEADER_WWW_AUTHENTICATE,
				    "Bearer");
	return MHD_YES;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *c, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_data_size,
				      void **con_cls)
{
	struct serve_server *s = cls;
	struct serve_conn *cx = *con_cls;

	(void)version;
	if (!cx)
		return headers_arrived(s, c, url, method, con_cls);
	if (*upload_data_size) {
		/* Keep counting past the limit to report the size, but keep nothing. */
		cx->body_total += *upload_data_size;
		if (cx->method_ok && cx->body_total <= s->opt.max_input_size &&
		    rbln_strbuf_append(&cx->body, upload_data, *upload_data_size))
			return MHD_NO;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!cx->arrived) {
		cx->arrived = true;
		serve_guard_body_done(c);
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
		count_unreadable_body(s, cx);
		return serve_http_error(c, MHD_HTTP_BAD_REQUEST, msg, is_openai(cx->route.kind));
	}
	if (!cx->decoded) {
		char msg[RBLN_ERROR_MSG_MAX];
		unsigned st = serve_decode_request_body(c, &cx->body, s->opt.max_input_size, msg,
							sizeof(msg));

		cx->decoded = true;
		if (st)
			count_unreadable_body(s, cx);
		if (st == MHD_HTTP_UNSUPPORTED_MEDIA_TYPE)
			return refuse_early(c, st, msg, is_openai(cx->route.kind),
					    MHD_HTTP_HEADER_ACCEPT_ENCODING, SERVE_ACCEPTED_CODINGS);
		if (st)
			return serve_http_error(c, st, msg, is_openai(cx->route.kind));
	}
	if (serve_route_generates(cx->route.kind))
		return serve_handle_generate(cx, c);
	if (cx->route.kind == SERVE_R_REPO_LOAD || cx->route.kind == SERVE_R_REPO_UNLOAD)
		return serve_handle_repo(cx, c);
	return serve_handle_info(cx, c);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct serve_conn *cx = *con_cls;

	(void)cls;
	serve_guard_request_done(c);
	if (!cx)
		return;
	if (cx->job)
		serve_job_detach(cx->job, toe != MHD_REQUEST_TERMINATED_COMPLETED_OK);
	/*
	 * A preparation still running holds cx; the connection is suspended
	 * then, and libmicrohttpd ends suspended connections only when the
	 * daemon stops, after the workers stopped (serve_server_stop).
	 */
	serve_prepared_free(&cx->prep);
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

/*
 * Decodes %XX escapes of the URL as libmicrohttpd does, except %00: a NUL
 * would end the path early ("/v2/models/name%00x/config" would answer for
 * "name"), so the URL keeps it as written and matches no model.
 */
static size_t unescape_url(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls;
	(void)c;
	if (strstr(s, "%00"))
		return strlen(s);
	return MHD_http_unescape(s);
}

/* One port's daemon: what both ports share (bounds, timeouts, TLS). */
struct daemon_spec {
	const char *what;
	unsigned port;
	unsigned threads;
	bool suspend;
	MHD_AccessHandlerCallback handler;
	MHD_RequestCompletedCallback done;
	struct serve_guard *guard;
};

static struct MHD_Daemon *start_daemon(struct serve_server *s, const struct daemon_spec *sp,
				       unsigned *bound, struct rbln_error *err)
{
	const struct serve_options *o = &s->opt;
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_MEM_CERT, 0, s->tls_cert },
		{ MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls_key },
		{ MHD_OPTION_END, 0, NULL },
	};
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC;
	unsigned threads = sp->threads ? sp->threads : 1u;
	bool v6 = false;

	if (bind_addr(o->host, sp->port, &ss, &v6, err))
		return NULL;
	if (sp->suspend)
		flags |= MHD_ALLOW_SUSPEND_RESUME;
	if (v6)
		flags |= MHD_USE_IPv6;
	if (s->tls_cert)
		flags |= MHD_USE_TLS;
	else
		tls[0].option = MHD_OPTION_END;
	errno = 0;
	/*
	 * libmicrohttpd's default limit (FD_SETSIZE - 4) was all a thousand
	 * idle sockets needed to lock everyone out, with no timeout to free
	 * them: every resource a client can hold is bounded here.
	 */
	d = MHD_start_daemon(flags, (uint16_t)sp->port, NULL, NULL, sp->handler, s,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
			     MHD_OPTION_THREAD_POOL_SIZE, threads,
			     MHD_OPTION_LISTENING_ADDRESS_REUSE, 1u,
			     MHD_OPTION_NOTIFY_COMPLETED, sp->done, s,
			     MHD_OPTION_NOTIFY_CONNECTION, serve_guard_notify, sp->guard,
			     MHD_OPTION_CONNECTION_LIMIT, o->max_connections,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->max_connections_per_client,
			     MHD_OPTION_CONNECTION_TIMEOUT, o->idle_timeout_s,
			     MHD_OPTION_UNESCAPE_CALLBACK, unescape_url, NULL,
			     MHD_OPTION_ARRAY, tls,
			     MHD_OPTION_END);
	if (!d && s->tls_cert && !errno) {
		/* libmicrohttpd says no more than that GnuTLS refused the pair */
		rbln_error_set(err, -EINVAL, "cannot start the %s on %s:%u: TLS setup failed (is "
			       "--ssl-certfile a PEM certificate and --ssl-keyfile its private "
			       "key?)", sp->what, o->host, sp->port);
		return NULL;
	}
	if (!d) {
		rbln_error_set(err, errno ? -errno : -EADDRINUSE, "cannot start the %s on %s:%u "
			       "(%s)", sp->what, o->host, sp->port,
			       errno ? strerror(errno) : "port in use?");
		return NULL;
	}
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	*bound = info && info->port ? info->port : sp->port;
	return d;
}

static void metrics_done(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)toe;
	serve_guard_request_done(c);
	free(*con_cls);
	*con_cls = NULL;
}

/*
 * Each connection is a descriptor: the limits must fit in RLIMIT_NOFILE,
 * raised up to its hard limit if need be, with room for the models' files,
 * the devices and the engine.
 */
#define SERVE_RESERVED_FDS 256u

static int fit_fd_limit(struct serve_options *o, struct rbln_error *err)
{
	unsigned ports = o->allow_metrics ? 2u : 1u;
	struct rlimit rl;
	rlim_t need = (rlim_t)o->max_connections * ports + SERVE_RESERVED_FDS;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return rbln_error_set(err, -errno, "getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		unsigned fit = rl.rlim_max > SERVE_RESERVED_FDS + ports
			       ? (unsigned)((rl.rlim_max - SERVE_RESERVED_FDS) / ports) : 0;

		if (o->max_connections != SERVE_DEFAULT_MAX_CONNECTIONS || fit < o->http_threads)
			return rbln_error_set(err, -EMFILE, "--http-max-connections %u needs %llu "
					      "open files, more than the limit of %llu (ulimit "
					      "-Hn); lower it or raise the limit",
					      o->max_connections, (unsigned long long)need,
					      (unsigned long long)rl.rlim_max);
		/* the default is a default: what the system allows is the bound */
		fprintf(stderr, "rbln-serve: --http-max-connections lowered from %u to %u to fit "
			"the open-file limit (ulimit -Hn %llu)\n", o->max_connections, fit,
			(unsigned long long)rl.rlim_max);
		o->max_connections = fit;
		need = rl.rlim_max;
	}
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return rbln_error_set(err, -errno, "setrlimit(RLIMIT_NOFILE, %llu): %s",
				      (unsigned long long)need, strerror(errno));
	return 0;
}

/* --ssl-certfile/--ssl-keyfile: PEM text for libmicrohttpd (GnuTLS). */
static int load_tls(struct serve_server *s, const struct serve_options *o,
		    struct rbln_error *err)
{
	size_t len;

	if (!o->ssl_certfile && !o->ssl_keyfile)
		return 0;
	if (!o->ssl_certfile || !o->ssl_keyfile)
		return rbln_error_set(err, -EINVAL, "--ssl-certfile and --ssl-keyfile go together");
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
		return rbln_error_set(err, -ENOTSUP, "this libmicrohttpd was built without TLS");
	if (rbln_file_read(o->ssl_certfile, &s->tls_cert, &len, err)) {
		rbln_error_prefix(err, "--ssl-certfile: ");
		return err->code;
	}
	if (rbln_file_read(o->ssl_keyfile, &s->tls_key, &len, err)) {
		rbln_error_prefix(err, "--ssl-keyfile: ");
		return err->code;
	}
	return 0;
}

static void free_tls(struct serve_server *s)
{
	if (s->tls_key)
		explicit_bzero(s->tls_key, strlen(s->tls_key));
	free(s->tls_key);
	free(s->tls_cert);
	s->tls_key = s->tls_cert = NULL;
}

int serve_server_start(struct serve_server *s, const struct serve_options *o,
		       struct serve_model *models, size_t n_models, struct rbln_error *err)
{
	struct daemon_spec http = {
		.what = "HTTP service", .port = o->http_port, .threads = o->http_threads,
		.suspend = true, .handler = access_handler, .done = completed,
	};
	struct daemon_spec metrics = {
		.what = "metrics service", .port = o->metrics_port, .threads = 1,
		.handler = serve_metrics_handler, .done = metrics_done,
	};
	int rc;

	memset(s, 0, sizeof(*s));
	s->opt = *o;
	s->models = models;
	s->n_models = n_models;
	s->quiesced_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->prep_lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	atomic_init(&s->draining, false);
	atomic_init(&s->next_id, 0);
	rc = fit_fd_limit(&s->opt, err);
	if (!rc)
		rc = load_tls(s, o, err);
	if (rc)
		goto fail;
	s->watch = serve_watch_start(hangup, s);
	s->prep = serve_prep_start(o->prep_threads);
	s->prep_bulk = serve_prep_start(SERVE_PREP_BULK_THREADS);
	http.guard = s->http_guard = serve_guard_start(o->header_timeout_s, o->body_timeout_s,
						       o->idle_timeout_s, s->tls_cert != NULL);
	metrics.guard = s->metrics_guard = serve_guard_start(o->header_timeout_s,
							     o->body_timeout_s,
							     o->idle_timeout_s, false);
	if (!s->watch || !s->prep || !s->prep_bulk || !s->http_guard || !s->metrics_guard) {
		rc = rbln_error_set(err, -ENOMEM, "cannot start the server's threads");
		goto fail;
	}
	s->http = start_daemon(s, &http, &s->http_port, err);
	if (!s->http)
		goto fail;
	if (o->allow_metrics) {
		/* TLS is for the API port; metrics are scraped in the clear, as Triton's are */
		char *cert = s->tls_cert;

		s->tls_cert = NULL;
		s->metrics = start_daemon(s, &metrics, &s->metrics_port, err);
		s->tls_cert = cert;
		if (!s->metrics)
			goto fail;
	}
	return 0;
fail:
	if (s->http)
		MHD_stop_daemon(s->http);
	serve_prep_stop(s->prep);
	serve_prep_stop(s->prep_bulk);
	serve_guard_stop(s->http_guard);
	serve_guard_stop(s->metrics_guard);
	serve_watch_stop(s->watch);
	free_tls(s);
	s->http = NULL;
	s->prep = s->prep_bulk = NULL;
	s->http_guard = s->metrics_guard = NULL;
	s->watch = NULL;
	return err && err->code ? err->code : -EIO;
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
	/* the workers resume their connections: the daemon must still run */
	serve_prep_stop(s->prep);
	serve_prep_stop(s->prep_bulk);
	s->prep = s->prep_bulk = NULL;
	if (s->http)
		MHD_stop_daemon(s->http);
	if (s->quiesced_fd >= 0)
		close(s->quiesced_fd);
	s->quiesced_fd = -1;
	if (s->metrics)
		MHD_stop_daemon(s->metrics);
	serve_guard_stop(s->http_guard);
	serve_guard_stop(s->metrics_guard);
	s->http_guard = s->metrics_guard = NULL;
	free_tls(s);
	serve_watch_stop(s->watch);
	pthread_cond_destroy(&s->idle);
	pthread_mutex_destroy(&s->prep_lock);
	pthread_mutex_destroy(&s->lock);
	s->http = s->metrics = NULL;
	s->watch = NULL;
}
