// SPDX-License-Identifier: MIT
/*
 * The metrics service (port 8002): GET /metrics in the Prometheus text
 * format.  Engine statistics are read from each running model at scrape
 * time; everything else was counted as requests went by.
 */
#include "handlers.h"
#include "http_guard.h"
#include "reply.h"

#include <stdlib.h>
#include <string.h>

enum MHD_Result serve_metrics_handler(void *cls, struct MHD_Connection *c, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_data_size,
				      void **con_cls)
{
	struct serve_server *s = cls;
	struct serve_metrics_source *src;
	struct rbln_serving_stats *stats;
	struct rbln_strbuf sb = { 0 };
	enum MHD_Result ret;
	size_t i;

	(void)version;
	(void)upload_data;
	if (!*con_cls) {
		/* a marker, so the request is answered once its body (if any) is read */
		*con_cls = malloc(1);
		serve_guard_headers_done(c);
		return *con_cls ? MHD_YES : MHD_NO;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	serve_guard_body_done(c);
	if (strcmp(url, "/metrics"))
		return serve_http_reply(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8",
					"Not Found\n", 10, NULL, NULL);
	if (strcmp(method, "GET"))
		return serve_http_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
					"Method Not Allowed\n", 19, NULL, NULL);
	src = calloc(s->n_models ? s->n_models : 1, sizeof(*src));
	stats = calloc(s->n_models ? s->n_models : 1, sizeof(*stats));
	if (!src || !stats) {
		free(src);
		free(stats);
		return MHD_NO;
	}
	for (i = 0; i < s->n_models; i++) {
		struct serve_model *m = &s->models[i];

		src[i].model = m->name;
		src[i].version = m->version;
		src[i].m = &m->metrics;
		if (serve_model_state(m) == SERVE_MODEL_READY && m->engine) {
			m->ops->stats(m->engine, &stats[i]);
			src[i].stats = &stats[i];
		}
	}
	if (serve_metrics_render(&sb, src, s->n_models)) {
		ret = MHD_NO;
	} else {
		/* Prometheus asks for gzip and inflates it */
		ret = serve_http_reply_encoded(c, MHD_HTTP_OK, PROM_CONTENT_TYPE,
					       sb.data ? sb.data : "", sb.len, NULL, NULL);
	}
	rbln_strbuf_free(&sb);
	free(src);
	free(stats);
	return ret;
}
