// SPDX-License-Identifier: MIT
/*
 * The kernels, run as an application runs them: command streams through
 * libnpu on emulated devices (the device model on the device's engine
 * threads). Data that a real step would stream from memory is made to
 * come from memory here too: MATMUL of up to 16 rows rotates over copies of its
 * weights, ATTENTION over KV caches, that together are four times the
 * last-level cache.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kbench.h"

/* When sysfs does not say: the test machine's 32 MiB. */
#define LLC_DEFAULT	(32ULL << 20)

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* Random values in [-1, 1) as float32, or bfloat16 bits. */
static void fill_f32(float *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		p[i] = (float)(rnd() % 65536) / 32768.0f - 1.0f;
}

static void fill_bf16(uint16_t *p, uint64_t n)
{
	float f;
	uint32_t u;

	for (uint64_t i = 0; i < n; i++) {
		f = (float)(rnd() % 65536) / 32768.0f - 1.0f;
		memcpy(&u, &f, 4);
		p[i] = (uint16_t)(u >> 16);
	}
}

/*
 * The last-level cache's size, from sysfs (the largest "size" of cpu0's
 * caches): the data a bandwidth-bound kernel streams must be several
 * times larger, or the figure measures the cache.
 */
static uint64_t llc_bytes(void)
{
	uint64_t best = 0, v;
	char path[96], unit;
	FILE *f;

	for (int i = 0; i < 8; i++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		f = fopen(path, "r");
		if (!f)
			continue;
		unit = 'K';
		if (fscanf(f, "%llu%c", (unsigned long long *)&v, &unit) >= 1) {
			v <<= unit == 'M' ? 20 : unit == 'K' ? 10 : 0;
			if (v > best)
				best = v;
		}
		fclose(f);
	}
	return best ? best : LLC_DEFAULT;
}

/*
 * Bytes a bandwidth-bound kernel streams through per measurement: four
 * times the last-level cache, and no less than the read sweeps cover. A
 * guest may report less cache than its host gives it: on the 2-core Zen 5
 * guest (sysfs: 32 MiB of L3), a GEMV cycling through 128 MiB of weights
 * read up to 138% of the best sweep of 1 GiB.
 */
static uint64_t stream_bytes(void)
{
	uint64_t llc = 4 * llc_bytes();

	return llc > KB_SWEEP_BYTES ? llc : KB_SWEEP_BYTES;
}

/*
 * Copies of a streaming MATMUL's weights, or pairs of KV caches, up to
 * stream_bytes(): 128 of a 2048 x 2048 product's 8 MiB. They lie one after
 * another in one buffer (a stream may name only so many buffers), each
 * at a page boundary, as separate buffers would.
 */
#define KB_COPIES_MAX	1024U
#define KB_PAGE		4096ULL

/* How many copies of @bytes make stream_bytes(), 2 to KB_COPIES_MAX. */
static unsigned int stream_copies(uint64_t bytes)
{
	uint64_t copies = (stream_bytes() + bytes - 1) / bytes;

	if (copies < 2)
		return 2;
	return copies < KB_COPIES_MAX ? (unsigned int)copies : KB_COPIES_MAX;
}

static uint64_t page_align(uint64_t bytes)
{
	return (bytes + KB_PAGE - 1) & ~(KB_PAGE - 1);
}

/* Private device memory, as the engine's weights, KV caches and scratch. */
static npu_buffer *alloc_map(npu_device *dev, uint64_t size, void **map)
{
	npu_buffer *b;

	kb_check(npu_buffer_alloc(dev, size, NPU_BUFFER_PRIVATE, &b),
		 "npu_buffer_alloc");
	kb_check(npu_buffer_map(b, map), "npu_buffer_map");
	return b;
}

/* Seconds of one submission of @s on @q, to its fence. */
static double time_once(npu_stream *s, npu_queue *q)
{
	double t = kb_now();
	npu_fence *f;

	kb_check(npu_stream_submit(s, q, NULL, 0, &f), "submit");
	kb_check(npu_fence_wait(f, NPU_TIMEOUT_INFINITE), "job");
	t = kb_now() - t;
	npu_fence_release(f);
	return t;
}

static void (*between_runs)(const void *mem, uint64_t bytes);

void kb_between_runs(void (*fn)(const void *mem, uint64_t bytes))
{
	between_runs = fn;
}

/* kb_between_runs()' function on @bytes at @mem, where there is one. */
static void sample(const void *mem, uint64_t bytes)
{
	if (between_runs)
		between_runs(mem, bytes);
}

/*
 * Runs @s on @q once to warm up, then @reps times, each followed by a
 * sample() of the @bytes at @mem it reads (none where @mem is NULL); best
 * seconds.
 */
static double time_stream(npu_stream *s, npu_queue *q, int reps,
			  const void *mem, uint64_t bytes)
{
	double best = 1e30, t;

	for (int r = 0; r <= reps; r++) {
		t = time_once(s, q);
		if (r && t < best)
			best = t;
		if (r && mem)
			sample(mem, bytes);
	}
	return best;
}

/*
 * Packed weights of @dtype (bfloat16 or int8), @bytes of them: int8 ones
 * are random bytes followed by their scales (the last 16 * 4 * panels).
 */
static void fill_weights(void *p, uint64_t bytes, enum npu_dtype dtype,
			 uint32_t n)
{
	uint64_t scales = ((uint64_t)n + 15) / 16 * 16;
	uint8_t *b = p;

	if (dtype == NPU_DTYPE_BF16) {
		fill_bf16(p, bytes / 2);
		return;
	}
	for (uint64_t i = 0; i < bytes - scales * 4; i++)
		b[i] = (uint8_t)rnd();
	fill_f32((float *)(b + bytes - scales * 4), scales);
}

void kb_matmul(npu_device *dev, uint32_t m, uint32_t k, uint32_t n,
	       enum npu_dtype dtype, enum npu_layout layout, int a_bf16,
	       double bw, double peak, struct kb_result *out)
{
	/* What the product reads: the panels (and int8's scales), no gaps. */
	uint64_t rbytes = npu_packed_weights_size(dtype, n, k);
	uint64_t wbytes = npu_weights_size(dtype, layout, n, k);
	uint64_t stride = page_align(wbytes);
	/* A few rows stream their weights: make them come from memory. */
	unsigned int copies = m <= 16 ? stream_copies(wbytes) : 1, i;
	npu_buffer *w, *a, *c;
	npu_stream *s;
	npu_queue *q;
	uint8_t *wp;
	void *p;
	double t;

	w = alloc_map(dev, copies * stride, (void **)&wp);
	for (i = 0; i < copies; i++)
		fill_weights(wp + i * stride, wbytes, dtype, n);
	a = alloc_map(dev, (uint64_t)m * k * 4, &p);
	fill_f32(p, (uint64_t)m * k);
	c = alloc_map(dev, (uint64_t)m * n * 4, &p);
	kb_check(npu_queue_create(dev, NPU_PRIORITY_NORMAL, &q), "queue");
	kb_check(npu_stream_create(dev, &s), "stream");
	for (i = 0; i < copies; i++)
		npu_stream_matmul(s, &(struct npu_matmul){
			.dst = { c, 0 }, .a = { a, 0 }, .w = { w, i * stride },
			.m = m, .k = k, .n = n, .dtype = dtype,
			.layout = layout, .a_bf16 = a_bf16 });
	t = time_stream(s, q, KB_KERNEL_REPS, m == 1 ? wp : NULL,
			copies * stride) / copies;
	snprintf(out->name, sizeof(out->name),
		 "MATMUL M=%u K=%u N=%u %s %s%s", m, k, n,
		 dtype == NPU_DTYPE_I8 ? "int8" : "bf16",
		 layout == NPU_LAYOUT_PACKED16_SPACED ? "spaced" : "packed",
		 a_bf16 ? ", bf16 activations" : "");
	/* int8: the bytes read are the int8 weights and their scales. */
	if (m == 1) {
		out->value = (double)rbytes / t / 1e9;
		out->unit = "GB/s";
		out->limit = bw / 1e9;
	} else {
		out->value = 2.0 * m * n * k / t / 1e9;
		out->unit = "GFLOP/s";
		out->limit = peak / 1e9;
	}
	npu_stream_destroy(s);
	npu_queue_destroy(q);
	npu_buffer_free(w);
	npu_buffer_free(a);
	npu_buffer_free(c);
}

/*
 * The decode step measured: Llama-3.2-1B's shape, as
 * engine/bench/llama-3.2-1b-shape/config.json gives it (the model
 * rbln-bench measures). Its products are the compiled model's: per layer
 * q/k/v fused, o, gate/up fused and down, then the lm_head.
 */
#define KB_STEP_LAYERS		16U
#define KB_STEP_PER_LAYER	4U
#define KB_STEP_PRODUCTS	(KB_STEP_PER_LAYER * KB_STEP_LAYERS + 1U)

static const struct {
	uint32_t hidden, intermediate, q_heads, kv_heads, head_dim, layers, vocab;
} kb_step_model = {
	.hidden = 2048, .intermediate = 8192, .q_heads = 32, .kv_heads = 8,
	.head_dim = 64, .layers = KB_STEP_LAYERS, .vocab = 128256,
};

/* Product @i of the step: K (input width) and N (output rows). */
static void step_shape(unsigned int i, uint32_t *k, uint32_t *n)
{
	const uint32_t h = kb_step_model.hidden;
	const uint32_t kv = kb_step_model.kv_heads * kb_step_model.head_dim;

	*k = h;
	if (i == KB_STEP_PER_LAYER * kb_step_model.layers) {
		*n = kb_step_model.vocab;
		return;
	}
	switch (i % KB_STEP_PER_LAYER) {
	case 0:
		*n = kb_step_model.q_heads * kb_step_model.head_dim + 2 * kv;
		break;
	case 1:
		*k = kb_step_model.q_heads * kb_step_model.head_dim;
		*n = h;
		break;
	case 2:
		*n = 2 * kb_step_model.intermediate;
		break;
	default:
		*k = kb_step_model.intermediate;
		*n = h;
		break;
	}
}

/*
 * The step's stream on weights in @layout, in a private buffer (huge
 * pages) @w mapped at *@map.
 */
static npu_stream *step_stream(npu_device *dev, enum npu_layout layout,
			       npu_buffer *a, npu_buffer *c, npu_buffer **w,
			       void **map)
{
	uint64_t off[KB_STEP_PRODUCTS], total = 0;
	uint32_t k, n;
	npu_stream *s;
	void *p;

	for (unsigned int i = 0; i < KB_STEP_PRODUCTS; i++) {
		step_shape(i, &k, &n);
		off[i] = total;
		total += page_align(npu_weights_size(NPU_DTYPE_BF16, layout, n, k));
	}
	kb_check(npu_buffer_alloc(dev, total, NPU_BUFFER_PRIVATE, w), "step weights");
	kb_check(npu_buffer_map(*w, &p), "mapping the step weights");
	fill_bf16(p, total / 2);
	*map = p;
	kb_check(npu_stream_create(dev, &s), "stream");
	for (unsigned int i = 0; i < KB_STEP_PRODUCTS; i++) {
		step_shape(i, &k, &n);
		npu_stream_matmul(s, &(struct npu_matmul){
			.dst = { c, 0 }, .a = { a, 0 }, .w = { *w, off[i] },
			.m = 1, .k = k, .n = n, .dtype = NPU_DTYPE_BF16,
			.layout = layout });
	}
	return s;
}

void kb_decode_step(npu_device *dev, unsigned int rounds, double bw,
		    struct kb_result out[2], double *ratio)
{
	static const enum npu_layout layouts[2] = { NPU_LAYOUT_PACKED16_SPACED,
						    NPU_LAYOUT_PACKED16 };
	double bytes = 0, sum[2] = { 0 }, t[2];
	npu_buffer *a, *c, *w[2];
	npu_stream *s[2];
	void *pw[2];
	npu_queue *q;
	uint32_t k, n;
	void *p;

	for (unsigned int i = 0; i < KB_STEP_PRODUCTS; i++) {
		step_shape(i, &k, &n);
		bytes += (double)k * n * 2;
	}
	a = alloc_map(dev, (uint64_t)kb_step_model.intermediate * 4, &p);
	fill_f32(p, kb_step_model.intermediate);
	c = alloc_map(dev, (uint64_t)kb_step_model.vocab * 4, &p);
	kb_check(npu_queue_create(dev, NPU_PRIORITY_NORMAL, &q), "queue");
	for (unsigned int l = 0; l < 2; l++)
		s[l] = step_stream(dev, layouts[l], a, c, &w[l], &pw[l]);
	*ratio = 0;
	/* One round of each first, unmeasured: both layouts' pages touched. */
	for (unsigned int r = 0; r <= rounds; r++) {
		for (unsigned int l = 0; l < 2; l++) {
			t[l] = time_once(s[l], q);
			if (r)
				sum[l] += bytes / t[l];
		}
		if (r) {
			*ratio += t[0] / t[1];
			sample(pw[r % 2], KB_SWEEP_BYTES);
		}
	}
	*ratio /= rounds;
	for (unsigned int l = 0; l < 2; l++) {
		snprintf(out[l].name, sizeof(out[l].name),
			 "decode step, 1B shape (65 GEMVs, M=1) bf16 %s, %u rounds alternating",
			 l ? "packed" : "spaced", rounds);
		out[l].value = sum[l] / rounds / 1e9;
		out[l].unit = "GB/s";
		out[l].limit = bw / 1e9;
		npu_stream_destroy(s[l]);
		npu_buffer_free(w[l]);
	}
	npu_queue_destroy(q);
	npu_buffer_free(a);
	npu_buffer_free(c);
}

void kb_attention(npu_device *dev, uint32_t batch, uint32_t ctx,
		  uint32_t q_heads, uint32_t kv_heads, uint32_t head_dim,
		  uint32_t partition, enum npu_kv_layout layout, double bw,
		  struct kb_result *out)
{
	const uint32_t bs = partition, max_blocks = (ctx + bs - 1) / bs;
	const uint64_t blocks = (uint64_t)batch * max_blocks;
	const uint64_t cbytes = blocks * bs * kv_heads * head_dim * 2;
	const uint64_t stride = page_align(cbytes);
	const unsigned int sets = stream_copies(2 * cbytes);
	npu_buffer *kc, *vc, *qb, *ob, *sb, *tb, *wb;
	struct npu_attention at;
	int32_t *seqs, *tab;
	npu_stream *s;
	npu_queue *q;
	uint8_t *kp, *vp;
	void *p;
	double t, tv;

	kc = alloc_map(dev, sets * stride, (void **)&kp);
	vc = alloc_map(dev, sets * stride, (void **)&vp);
	for (unsigned int i = 0; i < sets; i++) {
		fill_bf16((void *)(kp + i * stride), cbytes / 2);
		fill_bf16((void *)(vp + i * stride), cbytes / 2);
	}
	qb = alloc_map(dev, (uint64_t)batch * q_heads * head_dim * 4, &p);
	fill_f32(p, (uint64_t)batch * q_heads * head_dim);
	ob = alloc_map(dev, (uint64_t)batch * q_heads * head_dim * 4, &p);
	sb = alloc_map(dev, (uint64_t)batch * 16, (void **)&seqs);
	tb = alloc_map(dev, blocks * 4, (void **)&tab);
	for (uint32_t i = 0; i < batch; i++) {
		seqs[4 * i] = (int32_t)i;
		seqs[4 * i + 1] = 1;
		seqs[4 * i + 2] = (int32_t)ctx;
		seqs[4 * i + 3] = (int32_t)i;
	}
	for (uint64_t i = 0; i < blocks; i++)
		tab[i] = (int32_t)i;
	at = (struct npu_attention){
		.out = { ob, 0 }, .q = { qb, 0 }, .seqs = { sb, 0 },
		.block_tables = { tb, 0 }, .rows = batch, .num_seqs = batch,
		.num_blocks = blocks, .table_rows = batch, .q_heads = q_heads,
		.kv_heads = kv_heads, .head_dim = head_dim, .block_size = bs,
		.max_blocks = max_blocks, .partition_len = partition,
		.dtype = NPU_DTYPE_BF16, .scale = 0.125f, .layout = layout,
	};
	kb_check(npu_buffer_alloc(dev, npu_attention_work_size(&at), 0, &wb),
		 "work");
	at.work = (struct npu_tensor){ wb, 0 };
	kb_check(npu_queue_create(dev, NPU_PRIORITY_NORMAL, &q), "queue");
	kb_check(npu_stream_create(dev, &s), "stream");
	for (unsigned int i = 0; i < sets; i++) {
		at.k_cache = (struct npu_tensor){ kc, i * stride };
		at.v_cache = (struct npu_tensor){ vc, i * stride };
		npu_stream_attention(s, &at);
	}
	/* The keys' and the values' memory, sampled in turn. */
	t = time_stream(s, q, KB_KERNEL_REPS / 2, kp, sets * stride);
	tv = time_stream(s, q, KB_KERNEL_REPS / 2, vp, sets * stride);
	t = (t < tv ? t : tv) / sets;
	snprintf(out->name, sizeof(out->name),
		 "ATTENTION decode b=%u ctx=%u kvh=%u qh=%u hd=%u part=%u bf16 %s",
		 batch, ctx, kv_heads, q_heads, head_dim, partition,
		 layout == NPU_KV_HEAD_MAJOR ? "head-major" : "token-major");
	out->value = 2.0 * (double)cbytes / t / 1e9;
	out->unit = "GB/s";
	out->limit = bw / 1e9;
	npu_stream_destroy(s);
	npu_queue_destroy(q);
	npu_buffer_free(kc);
	npu_buffer_free(vc);
	npu_buffer_free(qb);
	npu_buffer_free(ob);
	npu_buffer_free(sb);
	npu_buffer_free(tb);
	npu_buffer_free(wb);
}

void kb_allreduce(npu_device *const *devs, unsigned int n, uint64_t bytes,
		  struct kb_result *out)
{
	const struct npu_collective_options opts = {
		.struct_size = sizeof(opts),
		.scratch_bytes = bytes < (4ULL << 20) ? 4ULL << 20 : bytes,
	};
	unsigned int reps = bytes <= 65536 ? 200 : 20;
	npu_buffer *buf[64];
	npu_stream *s[64];
	npu_queue *q[64];
	npu_fence *f[64];
	npu_collective_group *g;
	double best = 1e30, t;
	void *p;

	kb_check(npu_collective_group_create(devs, n, &opts, &g), "group");
	for (unsigned int i = 0; i < n; i++) {
		buf[i] = alloc_map(devs[i], bytes, &p);
		fill_f32(p, bytes / 4);
		kb_check(npu_queue_create(devs[i], NPU_PRIORITY_NORMAL, &q[i]),
			 "queue");
		kb_check(npu_stream_create(devs[i], &s[i]), "stream");
	}
	for (unsigned int r = 0; r < reps; r++)
		kb_check(npu_stream_allreduce_f32(g, s, buf, 0, bytes / 4),
			 "allreduce");
	for (int round = 0; round < 4; round++) {
		t = kb_now();
		for (unsigned int i = 0; i < n; i++)
			kb_check(npu_stream_submit(s[i], q[i], NULL, 0, &f[i]),
				 "submit");
		kb_check(npu_fence_wait_all(f, n, NPU_TIMEOUT_INFINITE),
			 "allreduce jobs");
		t = (kb_now() - t) / reps;
		for (unsigned int i = 0; i < n; i++)
			npu_fence_release(f[i]);
		if (round && t < best)
			best = t;
	}
	snprintf(out->name, sizeof(out->name),
		 "ALLREDUCE %llu KiB f32 over %u devices (latency)",
		 (unsigned long long)bytes / 1024, n);
	out->value = best * 1e6;
	out->unit = "us";
	out->limit = 0;
	for (unsigned int i = 0; i < n; i++) {
		npu_stream_destroy(s[i]);
		npu_queue_destroy(q[i]);
		npu_buffer_free(buf[i]);
	}
	npu_collective_group_destroy(g);
}
