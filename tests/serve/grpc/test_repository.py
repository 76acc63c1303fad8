#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""--model-control-mode and the model repository API over HTTP and gRPC (issue 11).

A repository of two models (the tutorial's vllm_model and a second one on
the same compiled weights):
- explicit mode with --load-model vllm_model: the index (HTTP and gRPC)
  shows vllm_model READY and the other UNAVAILABLE "unloaded"; requests to
  it are refused; HTTP load makes it READY and it answers as vllm_model
  does; gRPC unload and load do the same round; bad load bodies and unknown
  models are refused, naming what is wrong;
- unload with a request in flight answers at once, the model is UNLOADING
  and refuses new requests (and a load) while the request in flight
  finishes with its full answer; then it is UNAVAILABLE "unloaded", loads
  again and serves;
- mode none (the default): load and unload are refused on both protocols
  with tritonserver's message; the flags are checked.
"""
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grpclib as gl  # noqa: E402
from grpclib import sl  # noqa: E402

tap = sl.Tap()
TL3, REF, PROMPTS, (pb, pb_grpc, grpc) = gl.setup(tap)
OTHER = "second_model"
GREEDY = {"temperature": 0, "max_tokens": 48, "ignore_eos": True}


def make_repo(root):
    repo = gl.make_repo(root, TL3)
    d = os.path.join(repo, OTHER)
    os.makedirs(os.path.join(d, "1"))
    os.symlink(os.path.join(repo, "vllm_model", "1", "tiny-llama3"),
               os.path.join(d, "1", "tiny-llama3"))
    sl.write(os.path.join(d, "config.pbtxt"),
             sl.RBLN_CONFIG_PBTXT.replace('"vllm_model"', f'"{OTHER}"'))
    with open(os.path.join(repo, "vllm_model", "1", "model.json"), encoding="utf-8") as f:
        sl.write(os.path.join(d, "1", "model.json"), f.read())
    return repo


def http_index(srv):
    st, hd, data = srv.request("POST", "/v2/repository/index", b"{}",
                               {"Content-Type": "application/json"})
    return {m["name"]: (m.get("state"), m.get("reason", "")) for m in sl.parse_json(data)}


def grpc_index(stub):
    r = stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=30)
    return {m.name: (m.state, m.reason) for m in r.models}


def http_control(srv, model, verb, body=b""):
    st, hd, data = srv.request("POST", f"/v2/repository/models/{model}/{verb}", body,
                               {"Content-Type": "application/json"})
    return st, sl.parse_json(data) if data else {}


def grpc_error(fn, rq):
    try:
        fn(rq, timeout=120)
        return None, ""
    except grpc.RpcError as e:
        return e.code(), e.details() or ""


def generate(srv, model, prompt):
    st, b = srv.post_json(f"/v2/models/{model}/generate", {
        "text_input": prompt, "stream": False, "exclude_input_in_output": True,
        "parameters": GREEDY})
    return st, b


def wait_state(srv, model, state, timeout=30):
    deadline = time.time() + timeout
    while True:
        got = http_index(srv).get(model)
        if (got and got[0] == state) or time.time() > deadline:
            return got
        time.sleep(0.05)


def check_explicit(srv, stub):
    tap.eq(http_index(srv), {"vllm_model": ("READY", ""), OTHER: ("UNAVAILABLE", "unloaded")},
           "HTTP index: the --load-model model READY, the other UNAVAILABLE 'unloaded'")
    tap.eq(grpc_index(stub), {"vllm_model": ("READY", ""), OTHER: ("UNAVAILABLE", "unloaded")},
           "gRPC RepositoryIndex: the same")
    st, hd, data = srv.request("POST", "/v2/repository/index", b'{"ready": true}',
                               {"Content-Type": "application/json"})
    tap.eq([m["name"] for m in sl.parse_json(data)], ["vllm_model"],
           "HTTP index {\"ready\": true}: the READY model only")
    r = stub.RepositoryIndex(pb.RepositoryIndexRequest(ready=True), timeout=30)
    tap.eq([m.name for m in r.models], ["vllm_model"], "gRPC RepositoryIndex ready: the same")
    st, hd, data = srv.request("POST", "/v2/repository/index", b'{"ready": 1}',
                               {"Content-Type": "application/json"})
    tap.ok(st == 400 and "'ready'" in sl.parse_json(data).get("error", ""),
           "HTTP index with a 'ready' that is not a boolean: 400 naming it", (st, data))
    st, hd, data = srv.request("GET", "/v2/health/ready")
    tap.eq(st, 200, "the server is ready: a model unloaded on purpose does not count (Triton)")
    tap.eq(stub.ServerReady(pb.ServerReadyRequest(), timeout=30).ready, True,
           "gRPC ServerReady: true")
    st, b = generate(srv, OTHER, PROMPTS[0])
    tap.ok(st == 503 and "unloaded" in b.get("error", ""),
           "a request for the model not loaded: 503 saying it is unloaded", (st, b))
    st, want = generate(srv, "vllm_model", PROMPTS[0])
    tap.eq(st, 200, "vllm_model answers")
    t0 = time.monotonic()
    st, b = http_control(srv, OTHER, "load")
    tap.ok(st == 200, f"HTTP load: 200 ({time.monotonic() - t0:.2f} s)", (st, b))
    tap.eq(http_index(srv).get(OTHER), ("READY", ""), "the loaded model is READY in the index")
    st, b = generate(srv, OTHER, PROMPTS[0])
    tap.ok(st == 200 and b.get("text_output") == want.get("text_output"),
           "it answers as vllm_model (the same weights)", (st, b, want))
    st, b = http_control(srv, OTHER, "load")
    tap.eq(st, 200, "loading a READY model again: 200")
    r = stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name=OTHER),
                                   timeout=60)
    tap.ok(r is not None, "gRPC RepositoryModelUnload: OK")
    tap.eq(wait_state(srv, OTHER, "UNAVAILABLE"), ("UNAVAILABLE", "unloaded"),
           "unloaded: UNAVAILABLE 'unloaded'")
    code, det = grpc_error(stub.ModelInfer, gl.infer_request(pb, "hi", model=OTHER))
    tap.ok(code == grpc.StatusCode.UNAVAILABLE and "unloaded" in det,
           "gRPC inference on the unloaded model: UNAVAILABLE saying so", (code, det))
    r = stub.ModelReady(pb.ModelReadyRequest(name=OTHER), timeout=30)
    tap.eq(r.ready, False, "gRPC ModelReady: false")
    stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=OTHER), timeout=120)
    r = stub.ModelReady(pb.ModelReadyRequest(name=OTHER), timeout=30)
    tap.eq(r.ready, True, "gRPC RepositoryModelLoad: the model is ready again")
    tap.eq(grpc_index(stub).get(OTHER), ("READY", ""), "and READY in the gRPC index")
    r = stub.ModelInfer(gl.infer_request(pb, PROMPTS[0], sampling=GREEDY, exclude=True,
                                         model=OTHER), timeout=120)
    tap.eq(gl.text_of(r), want.get("text_output"), "and answers over gRPC")


def check_bad(srv, stub):
    st, b = http_control(srv, "nomodel", "load")
    tap.ok(st == 404 and "nomodel" in b.get("error", ""), "HTTP load of an unknown model: 404 "
           "naming it", (st, b))
    st, b = http_control(srv, OTHER, "load", b'{"parameters": {"config": "{}"}}')
    tap.ok(st == 400 and "'config'" in b.get("error", ""),
           "HTTP load with a config override: 400 naming the parameter", (st, b))
    st, b = http_control(srv, OTHER, "load", b'{"parameters": ')
    tap.ok(st == 400 and "JSON object" in b.get("error", ""), "HTTP load, malformed body: 400",
           (st, b))
    st, b = http_control(srv, OTHER, "unload", b'{"params": {}}')
    tap.ok(st == 400 and "'params'" in b.get("error", ""),
           "HTTP unload, unknown field: 400 naming it", (st, b))
    st, b = http_control(srv, OTHER, "unload", b'{"parameters": {"unload_dependents": "yes"}}')
    tap.ok(st == 400 and "unload_dependents" in b.get("error", ""),
           "HTTP unload, unload_dependents not a boolean: 400", (st, b))
    st, hd, data = srv.request("GET", f"/v2/repository/models/{OTHER}/load")
    tap.eq(st, 405, "GET on load: 405")
    code, det = grpc_error(stub.RepositoryModelLoad,
                           pb.RepositoryModelLoadRequest(model_name="nomodel"))
    tap.ok(code == grpc.StatusCode.NOT_FOUND and "nomodel" in det,
           "gRPC load of an unknown model: NOT_FOUND naming it", (code, det))
    rq = pb.RepositoryModelLoadRequest(model_name=OTHER)
    rq.parameters["config"].string_param = "{}"
    code, det = grpc_error(stub.RepositoryModelLoad, rq)
    tap.ok(code == grpc.StatusCode.INVALID_ARGUMENT and "'config'" in det,
           "gRPC load with a config override: INVALID_ARGUMENT naming it", (code, det))
    rq = pb.RepositoryModelUnloadRequest(model_name=OTHER)
    rq.parameters["unload_dependents"].bool_param = True
    code, det = grpc_error(stub.RepositoryModelUnload, rq)
    tap.ok(code is None and wait_state(srv, OTHER, "UNAVAILABLE") == ("UNAVAILABLE", "unloaded"),
           "gRPC unload with unload_dependents true: OK, unloaded", (code, det))
    code, det = grpc_error(stub.RepositoryModelUnload, pb.RepositoryModelUnloadRequest())
    tap.ok(code == grpc.StatusCode.INVALID_ARGUMENT and "model_name" in det,
           "gRPC unload without a model name: INVALID_ARGUMENT", (code, det))


def check_unload_in_flight(srv):
    want = sl.generate_text(srv, "vllm_model", PROMPTS[1], max_tokens=400, ignore_eos=True)
    out = {}

    def long_request():
        out["st"], out["b"] = srv.post_json("/v2/models/vllm_model/generate", {
            "text_input": PROMPTS[1], "exclude_input_in_output": True, "stream": False,
            "parameters": {"temperature": 0, "max_tokens": 400, "ignore_eos": True}})

    t = threading.Thread(target=long_request)
    t.start()
    m, ok = sl.wait_metric(srv, lambda m: sl.gauge(m, "vllm:num_requests_running") >= 1, 30)
    tap.ok(ok, "a request runs on vllm_model", m)
    t0 = time.monotonic()
    st, b = http_control(srv, "vllm_model", "unload")
    took = time.monotonic() - t0
    tap.ok(st == 200 and t.is_alive(), f"unload with a request in flight: 200 at once "
           f"({took:.2f} s), the request still runs", (st, b))
    tap.eq(http_index(srv).get("vllm_model"), ("UNLOADING", ""),
           "the index says UNLOADING while it finishes")
    st, b = generate(srv, "vllm_model", PROMPTS[0])
    tap.ok(st == 503 and "unloading" in b.get("error", ""),
           "a new request while unloading: 503 saying so", (st, b))
    st, b = http_control(srv, "vllm_model", "load")
    tap.ok(st == 503 and "still unloading" in b.get("error", ""),
           "a load while unloading: 503 saying so", (st, b))
    t.join(120)
    tap.ok(out.get("st") == 200 and out["b"].get("text_output") == want,
           "the request in flight finished with its full answer", out)
    tap.eq(wait_state(srv, "vllm_model", "UNAVAILABLE"), ("UNAVAILABLE", "unloaded"),
           "then the model is UNAVAILABLE 'unloaded'")
    st, b = http_control(srv, "vllm_model", "unload")
    tap.eq(st, 200, "unloading it again: 200 (nothing to do)")
    st, b = http_control(srv, "vllm_model", "load")
    tap.eq(st, 200, "it loads again")
    st, b = generate(srv, "vllm_model", PROMPTS[0])
    tap.eq(st, 200, "and serves")
    m, ok = sl.wait_metric(srv, sl.idle, 30)
    tap.ok(ok, "nothing runs, no KV block used", m)


def check_mode_none(repo, root):
    srv = gl.start_server(tap, repo, root)
    try:
        stub = pb_grpc.GRPCInferenceServiceStub(
            grpc.insecure_channel(f"127.0.0.1:{srv.grpc_port}"))
        tap.eq(http_index(srv), {"vllm_model": ("READY", ""), OTHER: ("READY", "")},
               "mode none: every model is loaded at start")
        for verb in ("load", "unload"):
            st, b = http_control(srv, OTHER, verb)
            tap.ok(st == 503 and "explicit model load / unload is not allowed" in
                   b.get("error", ""), f"mode none: HTTP {verb} refused with Triton's message",
                   (st, b))
        code, det = grpc_error(stub.RepositoryModelUnload,
                               pb.RepositoryModelUnloadRequest(model_name=OTHER))
        tap.ok(code == grpc.StatusCode.UNAVAILABLE and "not allowed" in det,
               "mode none: gRPC unload refused", (code, det))
        tap.eq(http_index(srv).get(OTHER), ("READY", ""), "the model is still READY")
        tap.eq(srv.stop(), 0, "mode none server: SIGTERM exits 0")
    finally:
        srv.stop()


def check_flags(repo):
    for args, words in ((["--load-model", "vllm_model"], "needs --model-control-mode explicit"),
                        (["--model-control-mode", "poll"], "'poll' is not"),
                        (["--model-control-mode", "explicit", "--load-model", "*",
                          "--load-model", "vllm_model"], "must be the only --load-model"),
                        (["--model-control-mode", "explicit", "--load-model", "nomodel"],
                         "--load-model nomodel")):
        r = subprocess.run([sl.serve_bin(), "--model-repository", repo, "--check", *args],
                           capture_output=True, text=True, env=sl.test_env(), timeout=120)
        tap.ok(r.returncode == 2 and words in r.stderr, f"rbln-serve {' '.join(args)}: exit 2 "
               f"saying {words!r}", (r.returncode, r.stderr))


def main():
    with sl.Harness(tap, "repository") as h:
        root = h.root
        repo = make_repo(root)
        check_flags(repo)
        srv = h.track(gl.start_server(tap, repo, root, "--model-control-mode", "explicit",
                                      "--load-model", "vllm_model"))
        channel = grpc.insecure_channel(f"127.0.0.1:{srv.grpc_port}")
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        check_explicit(srv, stub)
        check_bad(srv, stub)
        check_unload_in_flight(srv)
        channel.close()
        tap.eq(h.stop(), 0, "explicit server: SIGTERM exits 0")
        check_mode_none(repo, root)
    tap.done()


if __name__ == "__main__":
    main()
