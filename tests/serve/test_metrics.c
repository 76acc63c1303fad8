// SPDX-License-Identifier: MIT
/*
 * The /metrics exposition: every line valid Prometheus text format 0.0.4,
 * families declared once before their samples, histograms cumulative, the
 * Triton, vLLM and RBLN families with the right labels and values.
 */
#include "serve_test.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "serve/metrics/metrics.h"

static bool valid_name(const char *s, size_t n)
{
	size_t i;

	if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == ':'))
		return false;
	for (i = 1; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == ':'))
			return false;
	return true;
}

struct fam {
	char name[96];
	char type[16];
};

/* Checks the whole text; returns the number of samples. */
static size_t check_exposition(const char *text)
{
	struct fam fams[128];
	size_t nf = 0, samples = 0, i;
	const char *line = text;

	assert_true(text[strlen(text) - 1] == '\n');
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = (size_t)(nl - line);
		char buf[1024];

		assert_non_null(nl);
		assert_true(len < sizeof(buf));
		memcpy(buf, line, len);
		buf[len] = '\0';
		if (!strncmp(buf, "# HELP ", 7)) {
			const char *sp = strchr(buf + 7, ' ');

			assert_non_null(sp);
			assert_true(valid_name(buf + 7, (size_t)(sp - buf - 7)));
		} else if (!strncmp(buf, "# TYPE ", 7)) {
			char name[96], type[16];

			assert_int_equal(sscanf(buf + 7, "%95s %15s", name, type), 2);
			assert_true(!strcmp(type, "counter") || !strcmp(type, "gauge") ||
				    !strcmp(type, "histogram"));
			for (i = 0; i < nf; i++)
				if (!strcmp(fams[i].name, name))
					fail_msg("family %s declared twice", name);
			assert_true(nf < 128);
			snprintf(fams[nf].name, sizeof(fams[nf].name), "%s", name);
			snprintf(fams[nf].type, sizeof(fams[nf].type), "%s", type);
			nf++;
		} else {
			const char *p = buf, *val;
			size_t nlen = strcspn(buf, "{ ");
			char *end;
			bool known = false;

			assert_true(valid_name(buf, nlen));
			/* the sample belongs to the family declared last */
			assert_true(nf > 0);
			{
				const struct fam *f = &fams[nf - 1];
				size_t fl = strlen(f->name);

				known = nlen == fl && !strncmp(buf, f->name, fl);
				if (!known && !strcmp(f->type, "histogram") && !strncmp(buf, f->name, fl))
					known = !strncmp(buf + fl, "_bucket", nlen - fl) ||
						!strncmp(buf + fl, "_sum", nlen - fl) ||
						!strncmp(buf + fl, "_count", nlen - fl);
				if (!known)
					fail_msg("sample %s outside its family (%s)", buf, f->name);
			}
			p += nlen;
			if (*p == '{') {
				p++;
				while (*p != '}') {
					size_t kl = strcspn(p, "=");

					assert_true(valid_name(p, kl));
					p += kl;
					assert_true(p[0] == '=' && p[1] == '"');
					p += 2;
					while (*p != '"') {
						assert_true(*p && *p != '\n');
						p += *p == '\\' ? 2 : 1;
					}
					p++;
					if (*p == ',')
						p++;
				}
				p++;
			}
			assert_int_equal(*p, ' ');
			val = p + 1;
			if (strcmp(val, "+Inf") && strcmp(val, "-Inf") && strcmp(val, "NaN")) {
				strtod(val, &end);
				assert_true(end != val && *end == '\0');
			}
			samples++;
		}
		line = nl + 1;
	}
	return samples;
}

static double sample(const char *text, const char *series)
{
	const char *p = text;
	size_t n = strlen(series);

	while ((p = strstr(p, series))) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p += n;
	}
	fail_msg("no sample %s in:\n%s", series, text);
	return 0;
}

static void test_number_format(void **state)
{
	char buf[40];

	(void)state;
	serve_prom_number(buf, sizeof(buf), 3);
	assert_string_equal(buf, "3");
	serve_prom_number(buf, sizeof(buf), 0.1);
	assert_string_equal(buf, "0.1");
	serve_prom_number(buf, sizeof(buf), INFINITY);
	assert_string_equal(buf, "+Inf");
	serve_prom_number(buf, sizeof(buf), -INFINITY);
	assert_string_equal(buf, "-Inf");
	serve_prom_number(buf, sizeof(buf), NAN);
	assert_string_equal(buf, "NaN");
	serve_prom_number(buf, sizeof(buf), 1.0 / 3);
	assert_true(strtod(buf, NULL) == 1.0 / 3);
}

static void test_escaping(void **state)
{
	struct rbln_strbuf sb = { 0 };
	struct prom_label l[1] = { { "model", "a\"b\\c\nd" } };

	(void)state;
	assert_int_equal(serve_prom_family(&sb, "x_total", "help with \\ and\nnewline", "counter"), 0);
	assert_int_equal(serve_prom_sample(&sb, "x_total", NULL, l, 1, 2), 0);
	assert_string_equal(sb.data, "# HELP x_total help with \\\\ and\\nnewline\n"
			    "# TYPE x_total counter\n"
			    "x_total{model=\"a\\\"b\\\\c\\nd\"} 2\n");
	check_exposition(sb.data);
	rbln_strbuf_free(&sb);
}

static void test_histogram(void **state)
{
	static const double bounds[] = { 0.1, 1, 10 };
	struct prom_histogram h;
	struct rbln_strbuf sb = { 0 };
	struct prom_label l[1] = { { "model", "m" } };

	(void)state;
	serve_prom_histogram_init(&h, bounds, 3);
	serve_prom_histogram_observe(&h, 0.05);
	serve_prom_histogram_observe(&h, 0.1);	/* le is inclusive */
	serve_prom_histogram_observe(&h, 5);
	serve_prom_histogram_observe(&h, 50);
	assert_int_equal(serve_prom_family(&sb, "lat_seconds", "latency", "histogram"), 0);
	assert_int_equal(serve_prom_histogram_samples(&sb, "lat_seconds", l, 1, &h), 0);
	check_exposition(sb.data);
	assert_true(sample(sb.data, "lat_seconds_bucket{model=\"m\",le=\"0.1\"}") == 2);
	assert_true(sample(sb.data, "lat_seconds_bucket{model=\"m\",le=\"1\"}") == 2);
	assert_true(sample(sb.data, "lat_seconds_bucket{model=\"m\",le=\"10\"}") == 3);
	assert_true(sample(sb.data, "lat_seconds_bucket{model=\"m\",le=\"+Inf\"}") == 4);
	assert_true(fabs(sample(sb.data, "lat_seconds_sum{model=\"m\"}") - 55.15) < 1e-9);
	assert_true(sample(sb.data, "lat_seconds_count{model=\"m\"}") == 4);
	rbln_strbuf_free(&sb);
}

static void test_render(void **state)
{
	struct serve_model_metrics a, b;
	struct rbln_serving_stats st;
	struct serve_metrics_source src[2];
	struct rbln_strbuf sb = { 0 };
	size_t n;

	(void)state;
	serve_model_metrics_init(&a, 2048);
	serve_model_metrics_init(&b, 131072);
	/* vLLM's 1-2-5 buckets up to max_model_len */
	assert_true(a.token_bounds[0] == 1 && a.token_bounds[2] == 5 && a.token_bounds[10] == 2000);
	assert_int_equal(a.prompt_tokens.n_bounds, 11);
	atomic_store(&a.success, 3);
	atomic_store(&a.failure[SERVE_FAIL_CANCELED], 1);
	atomic_store(&a.inference_count, 3);
	atomic_store(&a.request_duration_us, 1500000);
	atomic_store(&a.queue_duration_us, 2000);
	atomic_store(&a.finished[1], 2);
	serve_prom_histogram_observe(&a.ttft, 0.03);
	serve_prom_histogram_observe(&a.prompt_tokens, 30);
	memset(&st, 0, sizeof(st));
	st.num_running = 4;
	st.num_waiting = 2;
	st.kv_blocks_used = 3;
	st.kv_blocks_total = 12;
	st.prompt_tokens_total = 120;
	st.generation_tokens_total = 64;
	st.steps_total = 40;
	st.n_buckets = 3;
	st.buckets[0].batch_size = 8;
	st.buckets[0].steps_total = 5;
	st.buckets[1].batch_size = 4;
	st.buckets[1].steps_total = 7;
	st.buckets[2].batch_size = 1;
	st.buckets[2].steps_total = 9;
	st.n_devices = 2;
	st.devices[0].index = 0;
	st.devices[0].utilization = 0.5;
	st.devices[1].index = 1;
	st.devices[1].utilization = 0.25;
	st.devices[1].busy_ns_total = 2500000000ull;
	src[0] = (struct serve_metrics_source){ "vllm_model", "1", &a, &st };
	src[1] = (struct serve_metrics_source){ "llamav2", "1", &b, NULL };
	assert_int_equal(serve_metrics_render(&sb, src, 2), 0);
	n = check_exposition(sb.data);
	assert_true(n > 100);

#define S(series) sample(sb.data, series)
	assert_true(S("nv_inference_request_success{model=\"vllm_model\",version=\"1\"}") == 3);
	assert_true(S("nv_inference_request_success{model=\"llamav2\",version=\"1\"}") == 0);
	assert_true(S("nv_inference_request_failure{model=\"vllm_model\",version=\"1\","
		      "reason=\"CANCELED\"}") == 1);
	assert_true(S("nv_inference_count{model=\"vllm_model\",version=\"1\"}") == 3);
	assert_true(S("nv_inference_exec_count{model=\"vllm_model\",version=\"1\"}") == 40);
	assert_true(S("nv_inference_request_duration_us{model=\"vllm_model\",version=\"1\"}") ==
		    1500000);
	assert_true(S("nv_inference_queue_duration_us{model=\"vllm_model\",version=\"1\"}") == 2000);
	assert_true(S("nv_inference_pending_request_count{model=\"vllm_model\",version=\"1\"}") == 2);
	assert_true(S("nv_inference_pending_request_count{model=\"llamav2\",version=\"1\"}") == 0);
	assert_true(S("vllm:num_requests_running{model=\"vllm_model\",version=\"1\"}") == 4);
	assert_true(S("vllm:num_requests_waiting{model=\"vllm_model\",version=\"1\"}") == 2);
	assert_true(S("vllm:gpu_cache_usage_perc{model=\"vllm_model\",version=\"1\"}") == 0.25);
	assert_true(S("vllm:kv_cache_usage_perc{model=\"vllm_model\",version=\"1\"}") == 0.25);
	assert_true(S("vllm:prompt_tokens_total{model=\"vllm_model\",version=\"1\"}") == 120);
	assert_true(S("vllm:generation_tokens_total{model=\"vllm_model\",version=\"1\"}") == 64);
	assert_true(S("vllm:time_to_first_token_seconds_bucket{model=\"vllm_model\",version=\"1\","
		      "le=\"0.04\"}") == 1);
	assert_true(S("vllm:time_to_first_token_seconds_bucket{model=\"vllm_model\",version=\"1\","
		      "le=\"0.02\"}") == 0);
	assert_true(S("vllm:request_prompt_tokens_bucket{model=\"vllm_model\",version=\"1\","
		      "le=\"50\"}") == 1);
	assert_true(S("vllm:request_success_total{model=\"vllm_model\",version=\"1\","
		      "finished_reason=\"length\"}") == 2);
	assert_true(S("rbln:decoder_bucket_steps_total{model=\"vllm_model\",version=\"1\","
		      "batch_size=\"4\"}") == 7);
	assert_true(S("rbln:device_utilization{model=\"vllm_model\",version=\"1\",device=\"1\"}") ==
		    0.25);
	assert_true(S("rbln:device_busy_seconds_total{model=\"vllm_model\",version=\"1\","
		      "device=\"1\"}") == 2.5);
#undef S
	/* no engine, no engine samples for that model */
	assert_null(strstr(sb.data, "vllm:num_requests_running{model=\"llamav2\""));
	assert_null(strstr(sb.data, "nv_inference_exec_count{model=\"llamav2\""));
	assert_non_null(strstr(sb.data, "# TYPE nv_inference_request_duration_us counter\n"));
	assert_non_null(strstr(sb.data, "# TYPE vllm:e2e_request_latency_seconds histogram\n"));
	rbln_strbuf_free(&sb);

	/* without any engine, the engine families are absent altogether */
	src[0].stats = NULL;
	assert_int_equal(serve_metrics_render(&sb, src, 2), 0);
	check_exposition(sb.data);
	assert_null(strstr(sb.data, "vllm:num_requests_running"));
	assert_null(strstr(sb.data, "rbln:device_utilization"));
	rbln_strbuf_free(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_number_format),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_render),
	};

	return cmocka_run_group_tests_name("serve-metrics", tests, NULL, NULL);
}
