#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Load: 64 concurrent clients x 200 requests each against one model, every
response checked.  The requests are greedy, so each must come back exactly
as when it ran alone (before the load): text, finish reason and token counts,
whatever else shared its steps, its decoder bucket or its prefill chunk.
Requests mix the endpoints: generate, generate_stream (SSE), /v1/completions
and /v1/chat/completions.  Short prompts and few tokens keep it quick (the
emulated devices compute every row; under ASan that is most of the time).

LOAD_CLIENTS and LOAD_REQUESTS override the sizes (for exploring, not CI).
"""
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servelib as sl  # noqa: E402

CLIENTS = int(os.environ.get("LOAD_CLIENTS", 64))
PER_CLIENT = int(os.environ.get("LOAD_REQUESTS", 200))

tap = sl.Tap()
MODELS = sl.models_dir(tap)
TL3 = os.path.join(MODELS, "tiny-llama3")

WORDS = ["import", "def", "class", "for", "while", "return", "if", "with", "try", "from",
         "print", "self", "yield", "lambda", "assert", "raise"]


def variants():
    """48 distinct greedy requests over the four endpoints, 1 to 4 tokens each.

    The cost of the test is the rows the model computes (prompt and output
    tokens), so prompts are one word (two tokens with BOS) and outputs short;
    chat prompts carry the template's dozen tokens and are one in eight.
    """
    out = []
    for i in range(48):
        prompt = ("{}", " {}", "{}:")[i // 16].format(WORDS[i % 16])
        mt = 1 + (i * 3) % 4
        kind = "chat" if i % 8 == 7 else ("generate", "stream", "completions")[i % 3]
        out.append((kind, prompt, mt))
    return out


def body_of(kind, prompt, mt):
    if kind == "generate":
        return "/v2/models/tl3/generate", {"text_input": prompt, "parameters": {
            "max_tokens": mt, "temperature": 0, "return_finish_reason": True,
            "return_num_output_tokens": True}}
    if kind == "stream":
        return "/v2/models/tl3/generate_stream", {"text_input": prompt, "stream": True,
                                                  "parameters": {"max_tokens": mt,
                                                                 "temperature": 0,
                                                                 "return_finish_reason": True}}
    if kind == "completions":
        return "/v1/completions", {"model": "tl3", "prompt": prompt, "max_tokens": mt,
                                   "temperature": 0}
    return "/v1/chat/completions", {"model": "tl3", "max_tokens": mt, "temperature": 0,
                                    "messages": [{"role": "user", "content": prompt}]}


def outcome(kind, status, data):
    """What a response says, in a form to compare: (status, text, finish, tokens)."""
    if status != 200:
        return (status, data[:200])
    if kind == "stream":
        ev = [json.loads(e) for e in sl.parse_sse(data)]
        finals = [e for e in ev if e.get("finish_reason") not in (None, "None")]
        return (200, "".join(e.get("text_output", "") for e in ev),
                [e.get("finish_reason") for e in finals])
    b = json.loads(data)
    if kind == "generate":
        return (200, b["text_output"], b.get("finish_reason"), b.get("num_output_tokens"))
    ch = b["choices"][0]
    text = ch["text"] if kind == "completions" else ch["message"]["content"]
    return (200, text, ch["finish_reason"], b["usage"]["completion_tokens"],
            b["usage"]["prompt_tokens"])


def run_one(conn, v):
    path, body = body_of(*v)
    conn.request("POST", path, body=json.dumps(body).encode(),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    return outcome(v[0], r.status, r.read())


def main():
    with sl.Harness(tap, "load") as h:
        root = h.root
        model = sl.compile_model(TL3, os.path.join(root, "tl3"), "--batch-size", "32",
                                 "--max-seq-len", "128", "--prefill-chunk-size", "64",
                                 "--decoder-batch-sizes", "32,16,8,4,1")
        srv = h.start(["--model", model, "--served-model-name", "tl3"])
        vs = variants()
        c = srv.conn()
        alone = {v: run_one(c, v) for v in vs}
        c.close()
        tap.ok(all(o[0] == 200 for o in alone.values()),
               f"{len(vs)} distinct greedy requests answered one at a time",
               [o for o in alone.values() if o[0] != 200][:3])
        m0 = srv.metrics()
        bad, errors, done = [], [], [0]
        lock = threading.Lock()

        def client(k):
            conn = srv.conn(timeout=300)
            try:
                for i in range(PER_CLIENT):
                    v = vs[(k * 13 + i * 7) % len(vs)]
                    got = run_one(conn, v)
                    with lock:
                        done[0] += 1
                        if got != alone[v]:
                            bad.append((v, got, alone[v]))
            except Exception as e:  # the client's failure is reported, not swallowed
                with lock:
                    errors.append(f"client {k}: {type(e).__name__}: {e}")
            finally:
                conn.close()

        t0 = time.time()
        ths = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        took = time.time() - t0
        total = CLIENTS * PER_CLIENT
        tap.note(f"{total} requests from {CLIENTS} clients in {took:.1f} s "
                 f"({total / took:.0f} requests/s)")
        tap.ok(not errors and done[0] == total, f"every one of the {total} requests answered",
               errors[:5])
        tap.ok(not bad, f"every response equal to the same request run alone "
               f"({len(bad)} differ)", bad[:3])
        m = srv.metrics()

        def delta(name, **labels):
            return (sl.metric_value(m, name, **labels) or 0) - \
                   (sl.metric_value(m0, name, **labels) or 0)

        tap.eq(delta("nv_inference_request_success"), total,
               "nv_inference_request_success counts each request once")
        tap.eq(delta("nv_inference_request_failure"), 0, "no request failed")
        tap.ok(sl.metric_value(m, "vllm:kv_cache_usage_perc") == 0 and
               sl.metric_value(m, "vllm:num_requests_running") == 0,
               "afterwards: no KV blocks in use, nothing running")
        buckets = {bs: delta("rbln:decoder_bucket_steps_total", batch_size=bs)
                   for bs in ("32", "16", "8", "4", "1")}
        tap.note(f"decode steps per bucket under load: {buckets}")
        tap.ok(sum(1 for v in buckets.values() if v > 0) >= 2,
               "decodes ran in more than one compiled bucket", buckets)
        tap.ok(delta("vllm:generation_tokens_total") > 0 and
               delta("nv_inference_exec_count") < delta("vllm:generation_tokens_total"),
               "steps were shared: fewer model executions than generated tokens",
               (delta("nv_inference_exec_count"), delta("vllm:generation_tokens_total")))
        tap.eq(h.stop(), 0, "SIGTERM after the load: exit 0")
    tap.done()


if __name__ == "__main__":
    main()
