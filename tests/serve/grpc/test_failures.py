#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""nv_inference_request_failure by reason, over HTTP and gRPC (issue 11).

Triton's reasons, on one server with one sequence slot (--max-num-seqs 1):
- OTHER: every bad request for a served model, on both protocols: bad JSON,
  bad parameters, an unknown input, a bad OpenAI body naming the model, a
  corrupt gzip body, a body over --http-max-input-size; gRPC's bad inputs;
- none: a request for a model that is not served (no model to count it on);
- REJECTED: a request whose timeout expires while it waits in the queue
  (Triton's "Request timeout expired"), over HTTP and over gRPC;
- CANCELED: the running request whose client went away.
Each check compares the counters before and after, for every reason.
"""
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grpclib as gl  # noqa: E402
from grpclib import sl  # noqa: E402

tap = sl.Tap()
TL3, REF, PROMPTS, (pb, pb_grpc, grpc) = gl.setup(tap)
REASONS = ("REJECTED", "CANCELED", "BACKEND", "OTHER")
MAX_INPUT = 1 << 20
MODEL = "vllm_model"


def failures(srv):
    m = srv.metrics()
    return {r: sl.metric_value(m, "nv_inference_request_failure", reason=r) or 0
            for r in REASONS}


def delta(before, after):
    return {r: after[r] - before[r] for r in REASONS}


def expect(srv, before, want, desc):
    """Counters move by want (reason -> n; the others by 0) within a few seconds."""
    full = {r: want.get(r, 0) for r in REASONS}
    deadline = time.time() + 10
    while True:
        got = delta(before, failures(srv))
        if got == full or time.time() > deadline:
            return tap.eq(got, full, desc)
        time.sleep(0.05)


def post(srv, path, body, headers=None):
    st, hd, data = srv.request("POST", path, body,
                               {"Content-Type": "application/json", **(headers or {})})
    return st, sl.parse_json(data)


def check_http_bad_requests(srv):
    before = failures(srv)
    gen = f"/v2/models/{MODEL}/generate"
    cases = [
        ("bad JSON", gen, b'{"text_input": ', None),
        ("temperature -1", gen, json.dumps({"text_input": "a",
                                            "parameters": {"temperature": -1}}).encode(), None),
        ("unknown infer input", f"/v2/models/{MODEL}/infer",
         json.dumps({"inputs": [{"name": "nope", "shape": [1], "datatype": "BYTES",
                                 "data": ["x"]}]}).encode(), None),
        ("OpenAI chat naming the model, top_p 2", "/v1/chat/completions",
         json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "hi"}],
                     "top_p": 2}).encode(), None),
        ("corrupt gzip body", gen, b"not gzip at all", {"Content-Encoding": "gzip"}),
        ("body over --http-max-input-size", gen,
         json.dumps({"text_input": "x" * (2 * MAX_INPUT)}).encode(), None),
    ]
    for desc, path, body, hdr in cases:
        st, b = post(srv, path, body, hdr)
        tap.eq(st, 400, f"HTTP {desc}: 400")
    expect(srv, before, {"OTHER": len(cases)},
           f"the {len(cases)} HTTP 400s count as OTHER, and nothing else")
    before = failures(srv)
    st, b = post(srv, "/v2/models/nomodel/generate", json.dumps({"text_input": "a"}).encode())
    tap.eq(st, 404, "a model not served: 404")
    st, b = post(srv, "/v1/completions", json.dumps({"model": "gpt-4", "prompt": "a"}).encode())
    tap.eq(st, 404, "OpenAI, a model not served: 404")
    expect(srv, before, {}, "requests for models not served count nowhere")


def check_grpc_bad_request(srv, stub):
    before = failures(srv)
    rq = gl.infer_request(pb, "hi", extra_inputs=[("nope", "BYTES", [1], gl.bytes_raw("x"))])
    try:
        stub.ModelInfer(rq, timeout=60)
        code = None
    except grpc.RpcError as e:
        code = e.code()
    tap.eq(code, grpc.StatusCode.INVALID_ARGUMENT, "gRPC unknown input: INVALID_ARGUMENT")
    expect(srv, before, {"OTHER": 1}, "the gRPC bad request counts as OTHER")


def start_long(srv):
    """servelib.HOLD on a raw socket, so that closing it cancels it; it holds the
    only sequence slot while one queued request times out (a new one per check)."""
    body = json.dumps({"text_input": PROMPTS[0], "parameters": sl.HOLD}).encode()
    s = socket.create_connection(("127.0.0.1", srv.http_port), timeout=30)
    s.sendall(f"POST /v2/models/{MODEL}/generate HTTP/1.1\r\nHost: x\r\n"
              f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
              .encode() + body)
    m, ok = sl.wait_metric(srv, lambda m: sl.gauge(m, "vllm:num_requests_running") == 1, 30)
    tap.ok(ok, "a long request holds the only sequence slot", m)
    return s


def stop_long(srv, s):
    """Closing the long request's socket cancels it; then all is idle."""
    before = failures(srv)
    s.close()
    expect(srv, before, {"CANCELED": 1}, "the long request whose client left: CANCELED")
    m, ok = sl.wait_metric(srv, sl.idle, 30)
    tap.ok(ok, "then nothing runs and no KV block is used", m)


def check_queue_timeouts(srv, stub):
    s = start_long(srv)
    before = failures(srv)
    st, b = post(srv, f"/v2/models/{MODEL}/generate", json.dumps({
        "text_input": PROMPTS[1], "parameters": {"max_tokens": 4, "timeout": 200000}}).encode())
    tap.ok(st == 503 and "timeout" in (b.get("error") or "").lower(),
           "HTTP: a 200 ms timeout spent in the queue: 503 'Request timeout expired'", (st, b))
    expect(srv, before, {"REJECTED": 1}, "it counts as REJECTED (Triton's queue timeout)")
    stop_long(srv, s)
    s = start_long(srv)
    before = failures(srv)
    rq = gl.infer_request(pb, PROMPTS[1], sampling={"max_tokens": 4},
                          params={"timeout": 200000})
    try:
        stub.ModelInfer(rq, timeout=60)
        err = None
    except grpc.RpcError as e:
        err = e
    tap.ok(err is not None and "timeout" in (err.details() or "").lower(),
           "gRPC: a 200 ms timeout parameter spent in the queue: an error saying so",
           err and (err.code(), err.details()))
    expect(srv, before, {"REJECTED": 1}, "it counts as REJECTED too")
    stop_long(srv, s)


def main():
    with sl.Harness(tap, "failures") as h:
        root = h.root
        model = sl.compile_model(TL3, os.path.join(root, "tl3"), "--batch-size", "1",
                                 "--max-seq-len", "2048")
        srv = h.start(["--model", model, "--served-model-name", MODEL, "--max-num-seqs", "1",
                      "--http-max-input-size", str(MAX_INPUT)])
        tap.ok(srv.grpc_port, "rbln-serve names its gRPC port", srv.stdout())
        channel = grpc.insecure_channel(f"127.0.0.1:{srv.grpc_port}")
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        check_http_bad_requests(srv)
        check_grpc_bad_request(srv, stub)
        check_queue_timeouts(srv, stub)
        channel.close()
        tap.eq(h.stop(), 0, "SIGTERM: exit 0")
    tap.done()


if __name__ == "__main__":
    main()
