/* SPDX-License-Identifier: MIT */
/*
 * bench_peer.h - rbln-bench's peer: llama.cpp's own benchmarks, run by
 * rbln-bench in the same run on the same machine, so that the figures it
 * prints side by side were measured together (never a figure copied from
 * another machine or day).
 */
#ifndef RBLN_BENCH_PEER_H
#define RBLN_BENCH_PEER_H

#include <stdint.h>

#include "rbln_runtime.h"

/**
 * struct bench_peer - what to run
 * @llama_bench: path of llama.cpp's llama-bench (prefill, decode B=1)
 * @batched_bench: path of llama-batched-bench (decode B>1), or NULL
 * @gguf: the model, a GGUF of the same shape as the engine's model
 * @threads: llama.cpp threads
 * @prompt_len: prefill prompt length (as the engine's)
 * @decode_steps: generated tokens per decode measurement
 * @repeat: repetitions of llama-bench and of batched-bench; the best of
 *	them is reported, as for our rows
 */
struct bench_peer {
	const char *llama_bench;
	const char *batched_bench;
	const char *gguf;
	uint32_t threads;
	uint32_t prompt_len;
	uint32_t decode_steps;
	uint32_t repeat;
};

/**
 * struct bench_peer_row - llama.cpp's figures, tokens per second; 0 where
 *	not measured
 * @prefill: llama-bench's pp<prompt_len>
 * @decode: [0] llama-bench's tg<decode_steps>; [1], [2] batched-bench's
 *	S_TG for 4 and 8 sequences of 64-token prompts
 */
struct bench_peer_row {
	double prefill;
	double decode[3];
};

/*
 * Checks @p's paths (executables, a readable GGUF) before anything is
 * measured: an error naming the option and the path.
 */
int bench_peer_check(const struct bench_peer *p, struct rbln_error *err);

/* Runs the peer's benchmarks and fills @row. */
int bench_peer_run(const struct bench_peer *p, struct bench_peer_row *row,
		   struct rbln_error *err);

#endif /* RBLN_BENCH_PEER_H */
