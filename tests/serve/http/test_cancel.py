#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Robustness of rbln-serve against the engine: clients that disconnect
(mid-stream, while waiting for a whole answer, while queued), KV blocks back
to zero in /metrics afterwards, the bounded waiting queue (503), request
deadlines, and preemption when the KV cache runs out (recompute: the same
greedy text as without it)."""
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servelib as sl  # noqa: E402

tap = sl.Tap()
MODELS = sl.models_dir(tap)
TL3 = os.path.join(MODELS, "tiny-llama3")
REF3 = json.load(open(os.path.join(TL3, "reference.json"), encoding="utf-8"))
PROMPTS = [g["prompt"] for g in REF3["generate"] if g["prompt"]]


class RawClient:
    """A client on a raw socket, so that it can vanish at a chosen moment."""

    def __init__(self, port, path, body):
        data = json.dumps(body).encode()
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.sock.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                          f"\r\n".encode() + data)
        self.buf = b""

    def read_until(self, marker, timeout=60):
        self.sock.settimeout(timeout)
        while marker not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                return False
            self.buf += chunk
        return True

    def first_event(self):
        """Reads the headers and the first SSE event."""
        if not self.read_until(b"\r\n\r\n"):
            return False
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        self.buf = rest
        return b" 200 " in head.split(b"\r\n")[0] and self.read_until(b"\n\n")

    def vanish(self):
        self.sock.close()


wait_metric, gauge, idle = sl.wait_metric, sl.gauge, sl.idle


def canceled(m):
    return sl.metric_value(m, "nv_inference_request_failure", reason="CANCELED") or 0


def check_cancel_stream(srv):
    m0 = srv.metrics()
    gen0 = gauge(m0, "vllm:generation_tokens_total")
    c = RawClient(srv.http_port, "/v2/models/tl3/generate_stream",
                  {"text_input": PROMPTS[0], "stream": True, "parameters": sl.HOLD})
    got = c.first_event()
    m = srv.metrics()
    tap.ok(got and gauge(m, "vllm:kv_cache_usage_perc") > 0 and
           gauge(m, "vllm:num_requests_running") == 1,
           "a stream runs: first event received, KV blocks in use", c.buf[:200])
    c.vanish()
    m, ok = wait_metric(srv, idle)
    tap.ok(ok, "client gone mid-stream: KV usage and running requests back to zero", m)
    tap.eq(canceled(m) - canceled(m0), 1, "the request counts as CANCELED")
    gen = gauge(m, "vllm:generation_tokens_total") - gen0
    tap.ok(0 < gen < sl.HOLD["max_tokens"], f"generation stopped early ({gen:.0f} of "
           f"{sl.HOLD['max_tokens']} tokens)", gen)


def check_cancel_whole(srv):
    m0 = srv.metrics()
    c = RawClient(srv.http_port, "/v2/models/tl3/generate",
                  {"text_input": PROMPTS[1], "parameters": sl.HOLD})
    m, ok = wait_metric(srv, lambda m: gauge(m, "vllm:num_requests_running") == 1 and
                        gauge(m, "vllm:generation_tokens_total") >
                        gauge(m0, "vllm:generation_tokens_total"))
    tap.ok(ok, "a whole-answer request runs", m)
    c.vanish()
    m, ok = wait_metric(srv, idle)
    tap.ok(ok and canceled(m) - canceled(m0) == 1,
           "client gone while waiting for a whole answer: cancelled, KV back to zero", m)


def check_cancel_many(srv):
    """Four streams vanish at once while a fifth request runs to its end untouched."""
    want = sl.generate_text(srv, "tl3", PROMPTS[2], max_tokens=120, ignore_eos=True)
    m0 = srv.metrics()
    out = {}

    def survivor():
        out["text"] = sl.generate_text(srv, "tl3", PROMPTS[2], max_tokens=120, ignore_eos=True)

    t = threading.Thread(target=survivor)
    t.start()
    clients = [RawClient(srv.http_port, "/v2/models/tl3/generate_stream",
                         {"text_input": PROMPTS[3 + i], "stream": True, "parameters": sl.HOLD})
               for i in range(4)]
    got = [c.first_event() for c in clients]
    for c in clients:
        c.vanish()
    t.join(120)
    m, ok = wait_metric(srv, idle)
    tap.ok(all(got) and ok and canceled(m) - canceled(m0) == 4,
           "four streams gone at once: all cancelled, KV back to zero", (got, m))
    tap.eq(out.get("text"), want, "the request running beside them finished with its greedy text")


def check_queue(srv, max_queue):
    """batch 4 + queue bound: the next request is 503; queued ones can be cancelled."""
    m0 = srv.metrics()
    running = [RawClient(srv.http_port, "/v2/models/tl3/generate_stream",
                         {"text_input": PROMPTS[i], "stream": True, "parameters": sl.HOLD})
               for i in range(4)]
    got = [c.first_event() for c in running]
    queued = [RawClient(srv.http_port, "/v2/models/tl3/generate",
                        {"text_input": PROMPTS[4 + i], "parameters": sl.HOLD})
              for i in range(max_queue)]
    # Both at once: while the first four still wait for their prefill, the
    # waiting count alone reaches max_queue before the queued clients arrive.
    m, ok = wait_metric(srv, lambda m: gauge(m, "vllm:num_requests_waiting") == max_queue and
                        gauge(m, "vllm:num_requests_running") == 4)
    tap.ok(all(got) and ok,
           f"4 running (max_num_seqs) and {max_queue} waiting (the queue bound)", m)
    st, b = sl.generate(srv, "tl3", "one too many", max_tokens=4)
    tap.ok(st == 503 and "queue" in (b.get("error") or ""),
           "the queue is full: 503 saying so", (st, b))
    m = srv.metrics()
    tap.ok((sl.metric_value(m, "nv_inference_request_failure", reason="REJECTED") or 0) -
           (sl.metric_value(m0, "nv_inference_request_failure", reason="REJECTED") or 0) == 1,
           "the 503 counts as REJECTED")
    for c in queued:
        c.vanish()
    m, ok = wait_metric(srv, lambda m: gauge(m, "vllm:num_requests_waiting") == 0)
    tap.ok(ok and gauge(m, "vllm:num_requests_running") == 4,
           "queued clients gone: they leave the queue, the running ones go on", m)
    for c in running:
        c.vanish()
    m, ok = wait_metric(srv, idle)
    tap.ok(ok and canceled(m) - canceled(m0) == 4 + max_queue,
           "everything cancelled, KV back to zero", m)


def check_deadline(srv):
    m0 = srv.metrics()
    t0 = time.time()
    st, b = srv.post_json("/v2/models/tl3/generate", {
        "text_input": PROMPTS[0], "parameters": dict(sl.HOLD, max_tokens=1000, timeout=100000)})
    took = time.time() - t0
    tap.ok(st == 503 and "timeout" in (b.get("error") or "").lower() and took < 5,
           f"parameters.timeout 100 ms: 503 'Request timeout expired' after {took:.2f} s",
           (st, b))
    m, ok = wait_metric(srv, idle)
    tap.ok(ok and (sl.metric_value(m, "nv_inference_request_failure", reason="BACKEND") or 0) -
           (sl.metric_value(m0, "nv_inference_request_failure", reason="BACKEND") or 0) == 1,
           "the expired request freed its blocks and counts as a failure", m)
    st, b = sl.generate(srv, "tl3", PROMPTS[0], max_tokens=4, temperature=0, timeout=60000000)
    tap.ok(st == 200 and b.get("text_output"), "a generous timeout does not interfere", b)


def check_preemption(root):
    """KV cache of 6 blocks of 128 tokens, 4 sequences of ~490 tokens (4 blocks
    each): any two that overlap need 8 blocks, so preemption happens however
    the four arrivals are spread (with ~250-token sequences all four had to
    overlap, which a loaded machine does not guarantee)."""
    model = sl.compile_model(TL3, os.path.join(root, "small-kv"), "--batch-size", "4",
                             "--max-seq-len", "768", "--kvcache-partition-len", "128",
                             "--kvcache-num-blocks", "6", "--decoder-batch-sizes", "4,2,1")
    srv = sl.Server(["--model", model, "--served-model-name", "tl3"], root,
                    env={"RBLN_SERVE_LOG_STEPS": "1"})
    try:
        params = {"max_tokens": 470, "ignore_eos": True}
        alone = [sl.generate_text(srv, "tl3", p, **params) for p in PROMPTS[:4]]
        res = [None] * 4

        def go(i):
            res[i] = sl.generate_text(srv, "tl3", PROMPTS[i], **params)

        ths = [threading.Thread(target=go, args=(i,)) for i in range(4)]
        for t in ths:
            t.start()
        for t in ths:
            t.join(300)
        m, ok = wait_metric(srv, idle)
        pre = gauge(m, "vllm:num_preemptions_total")
        tap.ok(pre >= 1, f"the KV cache ran out: {pre:.0f} preemptions", m)
        tap.eq(res, alone, "preempted sequences recomputed: greedy texts as when run alone")
        tap.ok(ok, "KV usage back to zero after preemptions", m)
    finally:
        tap.eq(srv.stop(), 0, "preemption server: SIGTERM, exit 0")


def main():
    max_queue = 3
    with sl.Harness(tap, "cancel") as h:
        root = h.root
        model = sl.compile_model(TL3, os.path.join(root, "tl3"), "--batch-size", "4",
                                 "--max-seq-len", "2048", "--decoder-batch-sizes", "4,1")
        srv = h.start(["--model", model, "--served-model-name", "tl3",
                      "--max-queue-size", str(max_queue)])
        check_cancel_stream(srv)
        check_cancel_whole(srv)
        check_cancel_many(srv)
        check_queue(srv, max_queue)
        check_deadline(srv)
        tap.eq(h.stop(), 0, "SIGTERM: exit 0")
        check_preemption(root)
    tap.done()


if __name__ == "__main__":
    main()
