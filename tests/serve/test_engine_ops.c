// SPDX-License-Identifier: MIT
/*
 * rbln_serving_bridge_ops against the real engine (tiny-llama3 on the
 * emulated devices), below HTTP: the contract of rbln_serving.h.  Events
 * come in order with exactly one final event; greedy ids equal
 * transformers'; stop ids, a callback's RBLN_GEN_STOP, cancel() and
 * deadlines end requests with the right reason and free their KV blocks;
 * submit() refuses bad requests and a full queue without any event;
 * close() ends what is still queued or running with -ESHUTDOWN before it
 * returns; release() works from inside the final event; bad words and
 * log-probabilities reach the events; a model compiled with
 * --matmul-precision bf16 serves as any other.
 */
#include "serve_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rbln_compile.h"
#include "rbln_serving.h"

#define MAX_IDS 4096

static const struct rbln_serving_ops *ops = &rbln_serving_bridge_ops;
static char *work;
static char *compiled;		/* batch 4, buckets 4,2,1, max_seq_len 256 */
static int32_t ref_prompt[64];
static size_t ref_n_prompt;
static int32_t ref_greedy[64];
static size_t ref_n_greedy;

/* What the callback saw of one request. */
struct rec {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int32_t ids[MAX_IDS];
	size_t n_ids;
	size_t n_token_events;
	size_t n_final;
	bool token_after_final;
	struct rbln_gen_event last;	/* the final event (pointers cleared) */
	int stop_after;			/* return RBLN_GEN_STOP once this many ids came */
	bool release_in_final;
	struct rbln_gen_handle *h;
	float logprob0;			/* of the first id, when asked */
	struct rbln_token_logprob top0[4];
	size_t n_top0;
	bool had_logprobs;
};

static void rec_init(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->stop_after = -1;
}

static void rec_destroy(struct rec *r)
{
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
}

static int on_event(void *user, const struct rbln_gen_event *ev)
{
	struct rec *r = user;
	int ret = RBLN_GEN_CONTINUE;
	size_t i;

	pthread_mutex_lock(&r->lock);
	if (r->n_final && ev->n_ids)
		r->token_after_final = true;
	if (ev->n_ids && ev->logprobs && !r->had_logprobs) {
		r->had_logprobs = true;
		r->logprob0 = ev->logprobs[0];
		r->n_top0 = ev->n_top < 4 ? ev->n_top : 4;
		for (i = 0; i < r->n_top0; i++)
			r->top0[i] = ev->top_logprobs[i];
	}
	for (i = 0; i < ev->n_ids && r->n_ids < MAX_IDS; i++)
		r->ids[r->n_ids++] = ev->ids[i];
	if (!ev->final) {
		r->n_token_events++;
		if (r->stop_after >= 0 && r->n_ids >= (size_t)r->stop_after)
			ret = RBLN_GEN_STOP;
	} else {
		r->n_final++;
		r->last = *ev;
		r->last.ids = NULL;
		r->last.logprobs = NULL;
		r->last.top_logprobs = NULL;
		r->last.error_msg = NULL;
		/* the exception to "no calls into the engine from a callback" */
		if (r->release_in_final)
			ops->release(r->h);
		pthread_cond_broadcast(&r->cond);
	}
	pthread_mutex_unlock(&r->lock);
	return ret;
}

static void rec_wait_final(struct rec *r)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 120;
	pthread_mutex_lock(&r->lock);
	while (!r->n_final)
		if (pthread_cond_timedwait(&r->cond, &r->lock, &until)) {
			pthread_mutex_unlock(&r->lock);
			fail_msg("no final event within 120 s");
		}
	pthread_mutex_unlock(&r->lock);
}

static void rec_wait_ids(struct rec *r, size_t n)
{
	for (int i = 0; i < 12000; i++) {
		size_t have;

		pthread_mutex_lock(&r->lock);
		have = r->n_ids;
		pthread_mutex_unlock(&r->lock);
		if (have >= n)
			return;
		struct timespec ts = { 0, 10000000 };

		nanosleep(&ts, NULL);
	}
	fail_msg("fewer than %zu ids within 120 s", n);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct rbln_serving_model *open_engine(uint32_t max_waiting)
{
	struct rbln_serving_model_spec spec = {
		.name = "tl3", .model_dir = compiled, .max_num_seqs = 4,
		.max_num_batched_tokens = 256, .max_model_len = 200, .max_waiting = max_waiting,
	};
	struct rbln_serving_model *e = NULL;
	struct rbln_error err = { 0 };

	if (ops->open(&spec, &e, &err))
		fail_msg("open: %s", err.msg);
	return e;
}

static void greedy_req(struct rbln_gen_request *r, int64_t max_tokens)
{
	memset(r, 0, sizeof(*r));
	r->prompt_ids = ref_prompt;
	r->n_prompt_ids = ref_n_prompt;
	rbln_sampling_params_init(&r->params);
	r->params.temperature = 0;
	r->params.ignore_eos = true;
	r->params.max_tokens = max_tokens;
}

static struct rbln_gen_handle *submit(struct rbln_serving_model *e,
				      const struct rbln_gen_request *req, struct rec *r)
{
	struct rbln_error err = { 0 };
	struct rbln_gen_handle *h = NULL;

	if (ops->submit(e, req, on_event, r, &h, &err))
		fail_msg("submit: %s", err.msg);
	r->h = h;
	return h;
}

static void expect_kv_zero(struct rbln_serving_model *e)
{
	struct rbln_serving_stats st;

	ops->stats(e, &st);
	assert_int_equal(st.kv_blocks_used, 0);
	assert_int_equal(st.num_running, 0);
	assert_int_equal(st.num_waiting, 0);
}

static int setup(void **state)
{
	json_object *ref = NULL, *g, *a;
	struct rbln_compile_spec cs = { 0 };
	struct rbln_error err = { 0 };
	char *path;
	size_t i, n, len;
	const char *p;

	(void)state;
	work = tmpdir_new();
	compiled = path_join(work, "tl3");
	/* the binding's own compile(): buckets 4, 2, 1 from max_num_seqs 4 */
	cs.hf_dir = model_path("tiny-llama3");
	cs.out_dir = compiled;
	cs.batch_size = 4;
	cs.max_seq_len = 256;
	cs.tensor_parallel_size = 1;
	cs.kvcache_partition_len = 256;
	if (ops->compile(&cs, &err))
		fail_msg("compile: %s", err.msg);
	path = path_join(model_path("tiny-llama3"), "reference.json");
	p = read_text(path, &len);
	ref = parse_json(p, len);
	free((void *)p);
	free(path);
	g = json_object_array_get_idx(jpath(ref, "generate"), 0);
	a = jpath(g, "input_ids");
	n = json_object_array_length(a);
	for (i = 0; i < n; i++)
		ref_prompt[i] = (int32_t)json_object_get_int(json_object_array_get_idx(a, i));
	ref_n_prompt = n;
	a = jpath(g, "greedy_ids");
	n = json_object_array_length(a);
	for (i = 0; i < n && i < 64; i++)
		ref_greedy[i] = (int32_t)json_object_get_int(json_object_array_get_idx(a, i));
	ref_n_greedy = i;
	json_object_put(ref);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tmpdir_remove(work);
	free(work);
	free(compiled);
	return 0;
}

static void test_info_and_buckets(void **state)
{
	struct rbln_serving_model *e = open_engine(0);
	struct rbln_serving_model_info info;
	struct rbln_serving_stats st;

	(void)state;
	ops->info(e, &info);
	assert_int_equal(info.max_model_len, 200);
	assert_int_equal(info.max_num_seqs, 4);
	assert_int_equal(info.block_size, 256);
	assert_int_equal(info.n_decoder_batch_sizes, 3);
	assert_int_equal(info.decoder_batch_sizes[0], 4);
	assert_int_equal(info.decoder_batch_sizes[1], 2);
	assert_int_equal(info.decoder_batch_sizes[2], 1);
	assert_int_equal(info.n_devices, 1);
	ops->stats(e, &st);
	assert_int_equal(st.n_buckets, 3);
	assert_int_equal(st.buckets[2].batch_size, 1);
	assert_int_equal(st.kv_blocks_total, info.kv_blocks_total);
	ops->close(e);
}

/* Greedy ids equal transformers'; one final event, after every token event. */
static void test_greedy_events(void **state)
{
	struct rbln_serving_model *e = open_engine(0);
	struct rbln_gen_request req;
	struct rbln_serving_stats st;
	struct rec r;

	(void)state;
	rec_init(&r);
	greedy_req(&req, 24);
	submit(e, &req, &r);
	rec_wait_final(&r);
	assert_int_equal(r.n_final, 1);
	assert_false(r.token_after_final);
	assert_int_equal(r.n_ids, 24);
	assert_memory_equal(r.ids, ref_greedy, 24 * sizeof(int32_t));
	assert_int_equal(r.last.reason, RBLN_FINISH_LENGTH);
	assert_int_equal(r.last.n_output_tokens, 24);
	assert_int_equal(r.last.n_prompt_tokens, ref_n_prompt);
	assert_int_equal(r.last.stop_token_id, -1);
	assert_true(r.last.t_scheduled_ns > 0 && r.last.t_first_token_ns >= r.last.t_scheduled_ns);
	ops->release(r.h);
	ops->stats(e, &st);
	assert_true(st.generation_tokens_total >= 24);
	assert_int_equal(st.prompt_tokens_total, ref_n_prompt);
	/* one request: every decode step in bucket 1 */
	assert_int_equal(st.buckets[2].steps_total, 23);
	expect_kv_zero(e);
	rec_destroy(&r);
	ops->close(e);
}

/* A stop id ends the sequence: not delivered, counted, reported. */
static void test_stop_token(void **state)
{
	struct rbln_serving_model *e = open_engine(0);
	struct rbln_gen_request req;
	int32_t stop;
	struct rec r;

	(void)state;
	rec_init(&r);
	greedy_req(&req, 24);
	stop = ref_greedy[5];
	req.params.stop_token_ids = &stop;
	req.params.n_stop_token_ids = 1;
	submit(e, &req, &r);
	rec_wait_final(&r);
	assert_int_equal(r.last.reason, RBLN_FINISH_STOP);
	assert_int_equal(r.last.stop_token_id, stop);
	/* the first occurrence of the stop id ends it */
	for (size_t i = 0; i < r.n_ids; i++)
		assert_int_not_equal(r.ids[i], stop);
	assert_int_equal(r.last.n_output_tokens, r.n_ids + 1);
	ops->release(r.h);
	expect_kv_zero(e);
	rec_destroy(&r);
	ops->close(e);
}

/* The callback's RBLN_GEN_STOP (a stop string): nothing more, reason STOP. */
static void test_callback_stop(void **state)
{
	struct rbln_serving_model *e = open_engine(0);
	struct rbln_gen_request req;
	struct rec r;

	(void)state;
	rec_init(&r);
	r.stop_after = 3;
	greedy_req(&req, 100);
	submit(e, &req, &r);
	rec_wait_final(&r);
	assert_int_equal(r.n_ids, 3);
	assert_int_equal(r.last.reason, RBLN_FINISH_STOP);
	assert_int_equal(r.last.stop_token_id, -1);
	ops->release(r.h);
	expect_kv_zero(e);
	rec_destroy(&r);
	ops->close(e);
}

/* cancel() of a running request: ABORT, -ECANCELED, blocks freed; then a no-op. */
static void test_cancel(void **state)
{
	struct rbln_serving_model *e = open_engine(0);
	struct rbln_gen_request req;
	struct rec r;

	(void)state;
	rec_init(&r);
	greedy_req(&req, 190);
	submit(e, &req, &r);
	rec_wait_ids(&r, 2);
	ops->cancel(r.h);
	rec_wait_final(&r);
	assert_int_equal(r.last.reason, RBLN_FINISH_ABORT);
	assert_int_equal(r.last.error_code, -ECANCELED);
	assert_true(r.n_ids < 190);
	ops->cancel(r.h);	/* after the final event: nothing happens */
	ops->release(r.h);
	expect_kv_zero(e);
	rec_destroy(&r);
	ops->close(e);
}

static void test_deadline(void **state)
{
	struct rbln_serving_model *e = open_engine(0);
	struct rbln_gen_request req;
	struct rec r;

	(void)state;
	rec_init(&r);
	greedy_req(&req, 190);
	req.deadline_ns = now_ns() + 10 * 1000000LL;
	submit(e, &req, &r);
	rec_wait_final(&r);
	assert_int_equal(r.last.reason, RBLN_FINISH_ABORT);
	assert_int_equal(r.last.error_code, -ETIMEDOUT);
	ops->release(r.h);
	expect_kv_zero(e);
	rec_destroy(&r);
	ops->close(e);
}

/* Refused requests get an error and never an event. */
static void test_submit_errors(void **state)
{
	struct rbln_serving_model *e = open_engine(0);
	struct rbln_gen_handle *h = NULL;
	struct rbln_error err = { 0 };
	struct rbln_gen_request req;
	static int32_t many[300];
	int32_t bad_id = 1 << 20, stops[65] = { 0 };
	struct rec r;

	(void)state;
	rec_init(&r);
	greedy_req(&req, 4);
	req.prompt_ids = many;
	req.n_prompt_ids = 200;	/* = max_model_len: no room for a token */
	assert_int_equal(ops->submit(e, &req, on_event, &r, &h, &err), -E2BIG);
	assert_contains_all(err.msg, "200", "max_model_len", NULL);
	greedy_req(&req, 4);
	req.prompt_ids = &bad_id;
	req.n_prompt_ids = 1;
	assert_int_equal(ops->submit(e, &req, on_event, &r, &h, &err), -EINVAL);
	assert_contains_all(err.msg, "vocabulary", NULL);
	greedy_req(&req, 4);
	req.params.stop_token_ids = stops;
	req.params.n_stop_token_ids = 65;
	assert_int_equal(ops->submit(e, &req, on_event, &r, &h, &err), -EINVAL);
	assert_contains_all(err.msg, "stop_token_ids", NULL);
	greedy_req(&req, 4);
	req.params.logprobs = 21;
	assert_int_equal(ops->submit(e, &req, on_event, &r, &h, &err), -EINVAL);
	assert_contains_all(err.msg, "logprobs", NULL);
	greedy_req(&req, 4);
	req.params.top_p = 0;
	assert_int_equal(ops->submit(e, &req, on_event, &r, &h, &err), -EINVAL);
	assert_contains_all(err.msg, "top_p", NULL);
	ops->close(e);
	assert_int_equal(r.n_final + r.n_token_events, 0);
	rec_destroy(&r);
}

/* max_waiting counts requests beyond the running batch: -EBUSY past it. */
static void test_queue_bound(void **state)
{
	struct rbln_serving_model *e = open_engine(2);
	struct rbln_gen_handle *h = NULL;
	struct rbln_error err = { 0 };
	struct rbln_gen_request req;
	struct rec r[7];
	int i;

	(void)state;
	for (i = 0; i < 7; i++)
		rec_init(&r[i]);
	greedy_req(&req, 190);
	/* a burst of four fits the batch, whatever the queue bound */
	for (i = 0; i < 4; i++)
		submit(e, &req, &r[i]);
	for (i = 0; i < 4; i++)
		rec_wait_ids(&r[i], 1);
	submit(e, &req, &r[4]);
	submit(e, &req, &r[5]);
	assert_int_equal(ops->submit(e, &req, on_event, &r[6], &h, &err), -EBUSY);
	assert_contains_all(err.msg, "queue", NULL);
	for (i = 0; i < 6; i++)
		ops->cancel(r[i].h);
	for (i = 0; i < 6; i++) {
		rec_wait_final(&r[i]);
		assert_int_equal(r[i].last.reason, RBLN_FINISH_ABORT);
		ops->release(r[i].h);
	}
	assert_int_equal(r[6].n_final, 0);
	expect_kv_zero(e);
	for (i = 0; i < 7; i++)
		rec_destroy(&r[i]);
	ops->close(e);
}

/* close() with requests running and queued: each ends with -ESHUTDOWN before it returns. */
static void test_close_in_flight(void **state)
{
	struct rbln_serving_model *e = open_engine(0);
	struct rbln_gen_request req;
	struct rec r[6];
	int i;

	(void)state;
	greedy_req(&req, 190);
	for (i = 0; i < 6; i++) {
		rec_init(&r[i]);
		r[i].release_in_final = i % 2;	/* some give the handle back from the callback */
		submit(e, &req, &r[i]);
	}
	rec_wait_ids(&r[0], 1);
	ops->close(e);
	for (i = 0; i < 6; i++) {
		assert_int_equal(r[i].n_final, 1);
		assert_int_equal(r[i].last.reason, RBLN_FINISH_ABORT);
		assert_int_equal(r[i].last.error_code, -ESHUTDOWN);
		if (!r[i].release_in_final)
			ops->release(r[i].h);
		rec_destroy(&r[i]);
	}
}

/* Log-probabilities of greedy tokens: the sampled id is the best, <= 0. */
static void test_logprobs(void **state)
{
	struct rbln_serving_model *e = open_engine(0);
	struct rbln_gen_request req;
	struct rec r;

	(void)state;
	rec_init(&r);
	greedy_req(&req, 6);
	req.params.logprobs = 3;
	submit(e, &req, &r);
	rec_wait_final(&r);
	assert_true(r.had_logprobs);
	assert_int_equal(r.n_top0, 3);
	assert_int_equal(r.top0[0].id, r.ids[0]);
	assert_true(r.logprob0 <= 0 && r.logprob0 == r.top0[0].logprob);
	assert_true(r.top0[1].logprob <= r.top0[0].logprob);
	/* reading the logits changes nothing in the choice */
	assert_memory_equal(r.ids, ref_greedy, 6 * sizeof(int32_t));
	ops->release(r.h);
	rec_destroy(&r);
	ops->close(e);
}

/* A bad word is never sampled: the greedy path moves around it. */
static void test_bad_words(void **state)
{
	struct rbln_serving_model *e = open_engine(0);
	struct rbln_gen_request req;
	struct rbln_token_seq bad = { .ids = &ref_greedy[0], .len = 1 };
	struct rec r;

	(void)state;
	rec_init(&r);
	greedy_req(&req, 8);
	req.params.bad_words = &bad;
	req.params.n_bad_words = 1;
	submit(e, &req, &r);
	rec_wait_final(&r);
	assert_int_equal(r.n_ids, 8);
	for (size_t i = 0; i < r.n_ids; i++)
		assert_int_not_equal(r.ids[i], ref_greedy[0]);
	ops->release(r.h);
	rec_destroy(&r);
	ops->close(e);
}

/* Four at once: the same greedy ids as alone, decoded in bucket 4. */
static void test_batched_equals_alone(void **state)
{
	struct rbln_serving_model *e = open_engine(0);
	struct rbln_serving_stats st;
	struct rbln_gen_request req;
	struct rec r[4];
	int i;

	(void)state;
	greedy_req(&req, 32);
	for (i = 0; i < 4; i++) {
		rec_init(&r[i]);
		submit(e, &req, &r[i]);
	}
	for (i = 0; i < 4; i++) {
		rec_wait_final(&r[i]);
		assert_int_equal(r[i].n_ids, 32);
		assert_memory_equal(r[i].ids, ref_greedy, 32 * sizeof(int32_t));
		ops->release(r[i].h);
		rec_destroy(&r[i]);
	}
	ops->stats(e, &st);
	assert_true(st.buckets[0].steps_total > 0);	/* bucket 4 */
	expect_kv_zero(e);
	ops->close(e);
}

/*
 * A directory compiled with --matmul-precision bf16 (its MATMULs may round
 * their activations to bfloat16) opens and serves with nothing asked of
 * the server. Its tokens may part from transformers' at a near tie, so
 * only the request's course is checked.
 */
static void test_matmul_precision_bf16(void **state)
{
	struct rbln_compile_options co = {
		.tensor_parallel_size = 1, .batch_size = 4, .max_seq_len = 256,
		.decoder_batch_sizes = { 4, 2, 1 },
		.n_decoder_batch_sizes = 3, .matmul_precision = RBLN_MATMUL_BF16,
	};
	struct rbln_serving_model_spec spec = {
		.name = "tl3-bf16a", .max_num_seqs = 4, .max_num_batched_tokens = 256,
		.max_model_len = 200,
	};
	struct rbln_serving_model *e = NULL;
	struct rbln_error err = { 0 };
	struct rbln_gen_request req;
	char *dir = path_join(work, "tl3-bf16a");
	struct rec r;

	(void)state;
	if (rbln_compile(model_path("tiny-llama3"), dir, &co, &err))
		fail_msg("compile: %s", err.msg);
	spec.model_dir = dir;
	if (ops->open(&spec, &e, &err))
		fail_msg("open: %s", err.msg);
	rec_init(&r);
	greedy_req(&req, 16);
	submit(e, &req, &r);
	rec_wait_final(&r);
	assert_int_equal(r.n_final, 1);
	assert_int_equal(r.n_ids, 16);
	assert_int_equal(r.last.reason, RBLN_FINISH_LENGTH);
	ops->release(r.h);
	expect_kv_zero(e);
	rec_destroy(&r);
	ops->close(e);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_info_and_buckets),
		cmocka_unit_test(test_greedy_events),
		cmocka_unit_test(test_stop_token),
		cmocka_unit_test(test_callback_stop),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_submit_errors),
		cmocka_unit_test(test_queue_bound),
		cmocka_unit_test(test_close_in_flight),
		cmocka_unit_test(test_logprobs),
		cmocka_unit_test(test_bad_words),
		cmocka_unit_test(test_batched_equals_alone),
		cmocka_unit_test(test_matmul_precision_bf16),
	};

	return cmocka_run_group_tests_name("serve-engine-ops", tests, setup, teardown);
}
