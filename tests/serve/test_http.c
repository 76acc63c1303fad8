// SPDX-License-Identifier: MIT
/*
 * The HTTP and metrics services over real sockets, with a model that is
 * loaded up to its tokenizer but has no engine (the state rbln-serve is in
 * while the engine loads, or when it cannot).  Everything that does not
 * need generation is answered: metadata, health, config, routing, 404,
 * 405, 400s naming the field, 503 for not ready, metrics.  Generation
 * itself is tested with the engine runtime.
 */
#include "serve_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "serve/http/http.h"
#include "serve/http/reply.h"
#include "serve/http/server.h"

static struct serve_repository repo;
static struct serve_model model;
static struct serve_server srv;

struct reply {
	int status;
	char *headers;
	char *body;
	size_t body_len;
};

static int setup(void **state)
{
	struct serve_model_json mj = { 0 };
	struct serve_options o;
	struct rbln_error err = { 0 };

	(void)state;
	mj.file = strdup("test");
	mj.model = strdup(model_path("tiny-llama3"));
	mj.max_model_len = 16;
	if (serve_repository_single("tiny", &mj, &repo, &err) ||
	    serve_model_prepare(&model, &repo.models[0], &err))
		fail_msg("%s", err.msg);
	serve_model_json_free(&mj);
	serve_model_set_unavailable(&model, "engine runtime not built");
	serve_options_default(&o);
	o.host = "127.0.0.1";
	o.http_port = 0;
	o.metrics_port = 0;
	o.http_threads = 2;
	o.max_input_size = 4096;
	if (serve_server_start(&srv, &o, &model, 1, &err))
		fail_msg("%s", err.msg);
	assert_true(srv.http_port > 0 && srv.metrics_port > 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(serve_server_drain(&srv, 1000), 0);
	serve_server_stop(&srv);
	serve_model_free(&model);
	serve_repository_free(&repo);
	return 0;
}

/* One request on a fresh connection; reads until the server closes it. */
static struct reply http(unsigned port, const char *method, const char *path,
			 const char *extra_headers, const char *body, size_t body_len)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct reply r = { 0 };
	char head[1024], *buf = NULL, *sep;
	size_t len = 0, cap = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t n;

	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	n = snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		     "Content-Length: %zu\r\n%s\r\n", method, path, body_len,
		     extra_headers ? extra_headers : "");
	assert_int_equal(write(fd, head, (size_t)n), n);
	if (body_len)
		assert_int_equal(write(fd, body, body_len), (ssize_t)body_len);
	while (1) {
		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap + 1);
		}
		n = read(fd, buf + len, cap - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	assert_non_null(buf);
	buf[len] = '\0';
	assert_int_equal(sscanf(buf, "HTTP/1.1 %d", &r.status), 1);
	sep = strstr(buf, "\r\n\r\n");
	assert_non_null(sep);
	*sep = '\0';
	r.headers = strdup(buf);
	r.body_len = len - (size_t)(sep + 4 - buf);
	r.body = malloc(r.body_len + 1);
	memcpy(r.body, sep + 4, r.body_len);
	r.body[r.body_len] = '\0';
	free(buf);
	return r;
}

static struct reply get(const char *path)
{
	return http(srv.http_port, "GET", path, NULL, NULL, 0);
}

static struct reply post(const char *path, const char *body)
{
	return http(srv.http_port, "POST", path, "Content-Type: application/json\r\n", body,
		    strlen(body));
}

static json_object *body_json(const struct reply *r)
{
	if (!strcasestr(r->headers, "Content-Type: application/json"))
		fail_msg("not JSON: %s", r->headers);
	return parse_json(r->body, r->body_len);
}

static void reply_free(struct reply *r)
{
	free(r->headers);
	free(r->body);
}

/* Status and the {"error": ...} message of a reply. */
static void expect_error(struct reply r, int status, const char *part)
{
	json_object *o;

	if (r.status != status)
		fail_msg("status %d, expected %d: %s", r.status, status, r.body);
	o = body_json(&r);
	assert_contains_all(jpath_str(o, "error"), part, NULL);
	json_object_put(o);
	reply_free(&r);
}

static void expect_openai_error(struct reply r, int status, const char *part)
{
	json_object *o;

	if (r.status != status)
		fail_msg("status %d, expected %d: %s", r.status, status, r.body);
	o = body_json(&r);
	assert_contains_all(jpath_str(o, "error.message"), part, NULL);
	assert_int_equal(jpath_int(o, "error.code"), status);
	json_object_put(o);
	reply_free(&r);
}

static void test_server_and_health(void **state)
{
	struct reply r;
	json_object *o;

	(void)state;
	r = get("/v2");
	assert_int_equal(r.status, 200);
	o = body_json(&r);
	assert_string_equal(jpath_str(o, "name"), "rbln-serve");
	assert_true(json_object_array_length(jpath(o, "extensions")) >= 3);
	json_object_put(o);
	reply_free(&r);
	r = get("/v2/health/live");
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, 0);
	reply_free(&r);
	/* the model has no engine: not ready, as Triton's strict readiness says */
	r = get("/v2/health/ready");
	assert_int_equal(r.status, 400);
	reply_free(&r);
}

static void test_model_endpoints(void **state)
{
	struct reply r;
	json_object *o;

	(void)state;
	r = get("/v2/models/tiny");
	assert_int_equal(r.status, 200);
	o = body_json(&r);
	assert_string_equal(jpath_str(o, "name"), "tiny");
	assert_string_equal(jpath_str(o, "versions.0"), "1");
	assert_string_equal(jpath_str(o, "platform"), "vllm");
	assert_string_equal(jpath_str(o, "inputs.0.name"), "text_input");
	assert_string_equal(jpath_str(o, "inputs.0.datatype"), "BYTES");
	assert_int_equal(jpath_int(o, "inputs.0.shape.0"), 1);
	assert_string_equal(jpath_str(o, "outputs.0.name"), "text_output");
	json_object_put(o);
	reply_free(&r);

	r = get("/v2/models/tiny/versions/1/config");
	assert_int_equal(r.status, 200);
	o = body_json(&r);
	assert_string_equal(jpath_str(o, "name"), "tiny");
	assert_string_equal(jpath_str(o, "backend"), "vllm");
	assert_true(json_object_get_boolean(jpath(o, "model_transaction_policy.decoupled")));
	json_object_put(o);
	reply_free(&r);

	expect_error(get("/v2/models/tiny/ready"), 400, "Model version not ready");
	expect_error(get("/v2/models/nope"), 404, "Request for unknown model: 'nope' is not found");
	expect_error(get("/v2/models/tiny/versions/2"), 404,
		     "Request for unknown model: 'tiny' version 2 is not found");
	expect_error(get("/v2/models/tiny/versions/x/ready"), 404, "Not Found");
	expect_error(get("/v2/nothing"), 404, "Not Found");
	expect_error(get("/v2/models/tiny/generate"), 405, "Method Not Allowed");
	expect_error(http(srv.http_port, "DELETE", "/v2", NULL, NULL, 0), 405,
		     "Method Not Allowed");

	r = post("/v2/repository/index", "");
	assert_int_equal(r.status, 200);
	o = body_json(&r);
	assert_string_equal(jpath_str(o, "0.name"), "tiny");
	assert_string_equal(jpath_str(o, "0.state"), "UNAVAILABLE");
	assert_string_equal(jpath_str(o, "0.reason"), "engine runtime not built");
	json_object_put(o);
	reply_free(&r);

	r = get("/v1/models");
	assert_int_equal(r.status, 200);
	o = body_json(&r);
	assert_string_equal(jpath_str(o, "object"), "list");
	assert_string_equal(jpath_str(o, "data.0.id"), "tiny");
	assert_int_equal(jpath_int(o, "data.0.max_model_len"), 16);
	json_object_put(o);
	reply_free(&r);
}

/* Requests are checked before readiness: 400s name the field, then 503. */
static void test_generate_errors(void **state)
{
	(void)state;
	expect_error(post("/v2/models/tiny/generate",
			  "{\"text_input\": \"How do I count to nine in French?\", \"parameters\": "
			  "{\"max_tokens\": 5, \"bad_words\": [\"\"], \"stop_words\": [\"\"]}}"),
		     503, "model 'tiny' is not ready: engine runtime not built");
	expect_error(post("/v2/models/tiny/generate", "{\"text_input\": \"x\", \"parameters\": "
			  "{\"temperature\": -1}}"),
		     400, "field 'temperature' must be a number >= 0");
	expect_error(post("/v2/models/tiny/generate", "{\"text_input\": \"x\", \"stream\": true}"),
		     400, "generate expects model to produce exactly 1 response");
	expect_error(post("/v2/models/tiny/generate_stream", "{\"text_input\": "), 400,
		     "request body: malformed JSON");
	expect_error(post("/v2/models/tiny/generate",
			  "{\"text_input\": \"def main(): return some + long * prompt - that / "
			  "exceeds % sixteen ** tokens\"}"),
		     400, "longer than max_model_len 16 of model 'tiny'");
	expect_error(post("/v2/models/nope/generate", "{\"text_input\": \"x\"}"), 404,
		     "Request for unknown model: 'nope' is not found");
	{
		char big[5000];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		expect_error(post("/v2/models/tiny/generate", big), 400,
			     "exceeds the maximum allowed input size of 4096");
	}
	expect_error(post("/v2/models/tiny/infer", "{\"inputs\": [{\"name\": \"text_input\", "
			  "\"shape\": [1], \"datatype\": \"INT32\", \"data\": [1]}]}"),
		     400, "data-type is 'INT32', but model 'tiny' expects 'BYTES'");
}

static void test_infer_binary_reaches_the_model(void **state)
{
	char body[256], hdr[96];
	size_t jlen, total;
	uint32_t n = 3;
	struct reply r;

	(void)state;
	jlen = (size_t)snprintf(body, sizeof(body), "{\"inputs\":[{\"name\":\"text_input\","
				"\"shape\":[1],\"datatype\":\"BYTES\",\"parameters\":"
				"{\"binary_data_size\":7}}]}");
	memcpy(body + jlen, &n, 4);
	memcpy(body + jlen + 4, "Olá", 3);
	total = jlen + 7;
	snprintf(hdr, sizeof(hdr), "Inference-Header-Content-Length: %zu\r\n", jlen);
	r = http(srv.http_port, "POST", "/v2/models/tiny/infer", hdr, body, total);
	/* "Ol\xc3" is cut mid-character: the parser sees the binary element */
	expect_error(r, 400, "element 0 is not valid UTF-8");
	memcpy(body + jlen, &(uint32_t){ 4 }, 4);
	memcpy(body + jlen + 4, "Olá", 4);
	jlen = (size_t)snprintf(body, sizeof(body), "{\"inputs\":[{\"name\":\"text_input\","
				"\"shape\":[1],\"datatype\":\"BYTES\",\"parameters\":"
				"{\"binary_data_size\":8}}]}");
	memcpy(body + jlen, &(uint32_t){ 4 }, 4);
	memcpy(body + jlen + 4, "Olá", 4);
	snprintf(hdr, sizeof(hdr), "Inference-Header-Content-Length: %zu\r\n", jlen);
	expect_error(http(srv.http_port, "POST", "/v2/models/tiny/infer", hdr, body, jlen + 8),
		     503, "not ready");
}

static void test_openai_errors(void **state)
{
	(void)state;
	expect_openai_error(post("/v1/completions", "{\"model\": \"gpt-4\", \"prompt\": \"x\"}"),
			    404, "The model `gpt-4` does not exist.");
	expect_openai_error(post("/v1/completions", "{\"model\": \"tiny\"}"), 400,
			    "field 'prompt' is required");
	expect_openai_error(post("/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", "
				 "\"content\": \"hi\"}], \"top_p\": 2}"),
			    400, "field 'top_p' must be in (0, 1], got 2");
	expect_openai_error(post("/v1/chat/completions", "{\"model\": \"tiny\", \"messages\": "
				 "[{\"role\": \"user\", \"content\": \"hi\"}]}"),
			    503, "model 'tiny' is not ready");
	expect_openai_error(post("/v1/completions", "{\"prompt\": \"x\", \"max_tokens\": 20}"), 400,
			    "maximum context length is 16 tokens");
	expect_openai_error(http(srv.http_port, "GET", "/v1/chat/completions", NULL, NULL, 0), 405,
			    "Method Not Allowed");
}

static void test_metrics_service(void **state)
{
	struct reply r;

	(void)state;
	r = http(srv.metrics_port, "GET", "/metrics", NULL, NULL, 0);
	assert_int_equal(r.status, 200);
	assert_non_null(strcasestr(r.headers, "Content-Type: text/plain; version=0.0.4"));
	assert_non_null(strstr(r.body, "# TYPE nv_inference_request_success counter\n"));
	assert_non_null(strstr(r.body, "nv_inference_request_success{model=\"tiny\",version=\"1\"} 0\n"));
	/* the 503s for "not ready" counted as rejected */
	assert_null(strstr(r.body, "reason=\"REJECTED\"} 0\n"));
	assert_non_null(strstr(r.body, "nv_inference_request_failure{model=\"tiny\",version=\"1\","
			       "reason=\"REJECTED\"}"));
	assert_non_null(strstr(r.body, "nv_inference_pending_request_count{model=\"tiny\","
			       "version=\"1\"} 0\n"));
	assert_non_null(strstr(r.body, "# TYPE vllm:time_to_first_token_seconds histogram\n"));
	/* no engine: no engine families */
	assert_null(strstr(r.body, "vllm:num_requests_running"));
	reply_free(&r);
	r = http(srv.metrics_port, "GET", "/v2", NULL, NULL, 0);
	assert_int_equal(r.status, 404);
	reply_free(&r);
	r = http(srv.metrics_port, "POST", "/metrics", NULL, "x", 1);
	assert_int_equal(r.status, 405);
	reply_free(&r);
}

/* Last: after a drain starts, readiness drops and generation is refused. */
static void expect_redacted(const char *in, const char *want)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", in);
	serve_redact_paths(buf);
	assert_string_equal(buf, want);
}

/* Errors keep what a file is, not where the server keeps it; routes stay. */
static void test_redact_paths(void **state)
{
	(void)state;
	expect_redacted("/srv/models/tl2/chat_template.jinja line 3: roles must alternate",
			"chat_template.jinja line 3: roles must alternate");
	expect_redacted("field 'x': '/a/b/c.json': bad, and /d/e too",
			"field 'x': 'c.json': bad, and e too");
	expect_redacted("model has no chat template; use /v1/completions",
			"model has no chat template; use /v1/completions");
	expect_redacted("GET /v2/models/m/config", "GET /v2/models/m/config");
	expect_redacted("top_p 1/2 and a/b/c stay", "top_p 1/2 and a/b/c stay");
	expect_redacted("/", "/");
	expect_redacted("(/x/)", "()");
}

static void test_drain(void **state)
{
	struct reply r;

	(void)state;
	assert_int_equal(serve_server_drain(&srv, 0), 0);
	/* the listening socket is closed: a new connection is refused */
	{
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_port = htons((uint16_t)srv.http_port) };
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
		assert_int_not_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
		close(fd);
	}
	r = http(srv.metrics_port, "GET", "/metrics", NULL, NULL, 0);
	assert_int_equal(r.status, 200);
	reply_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server_and_health),
		cmocka_unit_test(test_model_endpoints),
		cmocka_unit_test(test_generate_errors),
		cmocka_unit_test(test_infer_binary_reaches_the_model),
		cmocka_unit_test(test_openai_errors),
		cmocka_unit_test(test_metrics_service),
		cmocka_unit_test(test_redact_paths),
		cmocka_unit_test(test_drain),
	};

	return cmocka_run_group_tests_name("serve-http", tests, setup, teardown);
}
