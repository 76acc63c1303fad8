#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rbln-serve's KServe v2 gRPC service end to end, with a client generated
from our .proto by Debian's grpc_tools, against the real engine on the
emulated devices:

- every unary method (health, metadata, config, index, statistics) and
  UNIMPLEMENTED for the others;
- the RBLN tutorial's streaming client (its chat-template prompt, its
  sampling parameters as a JSON string input, its stream_infer loop);
- ModelInfer, exclude_input_in_output, the decoupled final-response flag
  (and triton_enable_empty_final_response);
- several requests interleaved on one stream, one of them failing with an
  error_message while the others go on;
- client cancellation (KV blocks freed, counted CANCELED), deadlines
  (grpc-timeout), both at random from four clients at once, bad inputs,
  the message size limit;
- 64 concurrent streams whose outputs equal the same requests run alone;
- gRPC requests counted in the same metrics as HTTP.
"""
import json
import os
import random
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grpclib as gl  # noqa: E402

sl = gl.sl
tap = sl.Tap()
TL3, REF3, PROMPTS, (pb, pb_grpc, grpc) = gl.setup(tap)
GREEDY = {"temperature": 0.0, "max_tokens": 24}


def stub(srv):
    return pb_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(f"127.0.0.1:{srv.grpc_port}"))


def rpc_error(fn, *args, **kw):
    """The RpcError a call raises, or None."""
    try:
        fn(*args, **kw)
    except grpc.RpcError as e:
        return e
    return None


def stream_texts(st, requests, timeout=120):
    """Sends requests on one ModelStreamInfer; returns the responses in arrival order."""
    return list(st.ModelStreamInfer(iter(requests), timeout=timeout))


def by_id(responses):
    """id -> (texts, finals, errors) of a stream's responses."""
    out = {}
    for r in responses:
        texts, finals, errors = out.setdefault(r.infer_response.id, ([], [], []))
        if r.error_message:
            errors.append(r.error_message)
            continue
        texts.append(gl.text_of(r.infer_response))
        finals.append(gl.is_final(r.infer_response))
    return out


def alone(st, prompt, params=GREEDY):
    """The same request run alone, whole (ModelInfer, prompt excluded)."""
    r = st.ModelInfer(gl.infer_request(pb, prompt, sampling=params, exclude=True), timeout=120)
    return gl.text_of(r)


def check_unary(srv, st):
    tap.ok(st.ServerLive(pb.ServerLiveRequest()).live, "ServerLive: live")
    tap.ok(st.ServerReady(pb.ServerReadyRequest()).ready, "ServerReady: ready")
    tap.ok(st.ModelReady(pb.ModelReadyRequest(name="vllm_model")).ready, "ModelReady: ready")
    tap.ok(not st.ModelReady(pb.ModelReadyRequest(name="nope")).ready,
           "ModelReady of an unknown model: not ready")
    md = st.ServerMetadata(pb.ServerMetadataRequest())
    tap.ok(md.name == "rbln-serve" and md.version and "statistics" in md.extensions,
           "ServerMetadata: name, version, extensions", md)
    mm = st.ModelMetadata(pb.ModelMetadataRequest(name="vllm_model"))
    ins = [i.name for i in mm.inputs]
    tap.ok(mm.name == "vllm_model" and list(mm.versions) == ["1"] and
           ins[:2] == ["text_input", "stream"] and "sampling_parameters" in ins and
           mm.outputs[0].name == "text_output" and mm.outputs[0].datatype == "BYTES",
           "ModelMetadata: the tutorial's tensors (+ the vLLM backend's)", mm)
    _, hd, data = srv.request("GET", "/v2/models/vllm_model/config")
    http_cfg = json.loads(data)
    cfg = st.ModelConfig(pb.ModelConfigRequest(name="vllm_model")).config
    tap.ok(cfg.name == "vllm_model" and cfg.backend == "vllm" and
           [i.name for i in cfg.input] == [i["name"] for i in http_cfg["input"]] and
           cfg.input[0].data_type == 13 and list(cfg.input[0].dims) == [1] and
           cfg.instance_group[0].kind == 3 and cfg.model_transaction_policy.decoupled,
           "ModelConfig: the same configuration as HTTP's /config, as a message", cfg)
    e = rpc_error(st.ModelConfig, pb.ModelConfigRequest(name="nope"))
    tap.ok(e and e.code() == grpc.StatusCode.NOT_FOUND and "nope" in e.details(),
           "ModelConfig of an unknown model: NOT_FOUND naming it", e)
    idx = st.RepositoryIndex(pb.RepositoryIndexRequest())
    tap.ok([(m.name, m.version, m.state) for m in idx.models] == [("vllm_model", "1", "READY")],
           "RepositoryIndex: vllm_model READY", idx)
    ch = grpc.insecure_channel(f"127.0.0.1:{srv.grpc_port}")
    e = rpc_error(ch.unary_unary("/inference.GRPCInferenceService/Trace"), b"", timeout=10)
    tap.ok(e and e.code() == grpc.StatusCode.UNIMPLEMENTED, "an unknown method: UNIMPLEMENTED",
           e)


def apply_chat_template(messages):
    """The tutorial's simple chat template."""
    lines = []
    for role, content in [("system", "You are a helpful assistant."), *messages,
                          ("assistant", "")]:
        lines.append(f"[{role.capitalize()}]\n{content}")
    return "\n".join(lines)


def check_tutorial_stream(st):
    """simple_vllm_client.py's flow: stream_infer, a response per piece, prompt stripped.

    The server coalesces the pieces its sender has not taken yet (serving.md), and on a
    loaded machine its sender may not run for tens of milliseconds: the answer is made
    long enough (400 tokens, about half a second) that it still arrives in pieces.
    """
    prompt = apply_chat_template([("user", "What is the first letter of English alphabets?")])
    sampling = {"temperature": 0.0, "stop": ["[User]", "[System]", "[Assistant]"],
                "max_tokens": 400}
    rq = gl.infer_request(pb, prompt, stream=True, sampling=sampling, request_id="req-0")
    responses = stream_texts(st, [rq])
    out, first = "", True
    for r in responses:
        if r.error_message:
            break
        decoded = gl.text_of(r.infer_response)
        if first:
            if decoded.startswith(prompt):
                decoded = decoded[len(prompt):]
            first = False
        out += decoded
    tap.ok(responses and not any(r.error_message for r in responses) and
           all(r.infer_response.id == "req-0" for r in responses),
           "tutorial client: every response is for req-0, none an error", responses[:2])
    tap.ok(len(responses) > 3, f"tutorial client: the answer in several responses "
           f"({len(responses)})")
    finals = [gl.is_final(r.infer_response) for r in responses]
    tap.ok(finals[-1] and not any(finals[:-1]),
           "triton_final_response: true on the last response only", finals)
    want = alone(st, prompt, sampling)
    tap.eq(out, want, "tutorial client: the streamed text equals the whole answer")
    tap.ok(not any(s in out for s in sampling["stop"]), "stop strings are not in the output",
           out)


def check_infer(st):
    prompt = PROMPTS[0]
    r = st.ModelInfer(gl.infer_request(pb, prompt, sampling=GREEDY, request_id="abc"))
    whole = gl.text_of(r)
    excl = alone(st, prompt)
    tap.ok(r.id == "abc" and r.model_name == "vllm_model" and r.model_version == "1",
           "ModelInfer: id, model name and version echoed", r)
    tap.eq(whole, prompt + excl, "ModelInfer: the prompt prepended by default (vLLM backend)")
    ref = next(g for g in REF3["generate"] if g["prompt"] == prompt)
    n = min(len(excl), len(ref["greedy_text"]))
    tap.ok(n > 0 and excl[:n] == ref["greedy_text"][:n],
           "greedy text agrees with transformers' reference", (excl, ref["greedy_text"]))
    r = st.ModelInfer(gl.infer_request(pb, prompt, sampling=GREEDY, exclude=True))
    tap.eq(gl.text_of(r), excl, "exclude_input_in_output true: the completion only")
    for algo in (grpc.Compression.Gzip, grpc.Compression.Deflate):
        r = st.ModelInfer(gl.infer_request(pb, prompt, sampling=GREEDY, exclude=True),
                          compression=algo)
        tap.eq(gl.text_of(r), excl, f"a {algo.name}-compressed request: the same answer "
               "(tritonclient's compression_algorithm)")
    # not streaming on ModelStreamInfer: one response with the whole text, final
    res = stream_texts(st, [gl.infer_request(pb, prompt, sampling=GREEDY, exclude=True,
                                             request_id="w")])
    tap.ok(len(res) == 1 and gl.text_of(res[0].infer_response) == excl and
           gl.is_final(res[0].infer_response),
           "stream false on ModelStreamInfer: one final response, the whole text", res)
    res = stream_texts(st, [gl.infer_request(pb, prompt, stream=True, sampling=GREEDY,
                                             request_id="e",
                                             params={"triton_enable_empty_final_response":
                                                     True})])
    last = res[-1].infer_response
    tap.ok(len(res) >= 2 and gl.is_final(last) and not last.outputs and
           not any(gl.is_final(r.infer_response) for r in res[:-1]) and
           "".join(gl.text_of(r.infer_response) for r in res[:-1]) == excl,
           "triton_enable_empty_final_response: the final flag on an extra empty response",
           res[-2:])


# Long enough that a request cannot finish before the server has read the
# next one off the stream, even on a loaded CI machine: with GREEDY's 24
# tokens, one CI run had the three requests run one after another, and 400
# tokens take 0.6 s under ASan on an idle Zen 5 since decode got faster.
INTERLEAVED = dict(GREEDY, max_tokens=1000, ignore_eos=True)


def check_interleaved(st):
    prompts = PROMPTS[:3]
    want = {f"i{k}": alone(st, p, INTERLEAVED) for k, p in enumerate(prompts)}
    reqs = [gl.infer_request(pb, p, stream=True, sampling=INTERLEAVED, request_id=f"i{k}")
            for k, p in enumerate(prompts)]
    # a bad request in the middle: its error must not end the stream
    bad = gl.infer_request(pb, "x", stream=True, sampling={"top_p": 1.5}, request_id="bad")
    reqs.insert(1, bad)
    res = stream_texts(st, reqs)
    got = by_id(res)
    tap.ok(set(got) == {"i0", "i1", "i2", "bad"}, "interleaved: responses for every request",
           sorted(got))
    tap.ok(got.get("bad", ([], [], []))[2] and "top_p" in got["bad"][2][0] and
           not got["bad"][0], "interleaved: the bad request gets an error_message naming the "
           "parameter, and nothing else", got.get("bad"))
    for k in want:
        texts, finals, errors = got.get(k, ([], [], ["missing"]))
        tap.ok(not errors and "".join(texts) == want[k] and finals and finals[-1] and
               finals.count(True) == 1, f"interleaved: {k} complete, equal to it alone, one "
               "final response", (texts, want[k], finals, errors))
    order = [r.infer_response.id for r in res if not r.error_message]
    first_final = min(order.index(k) for k in want)
    switches = sum(1 for a, b in zip(order, order[1:]) if a != b)
    tap.ok(switches >= 3 and first_final < len(order) - 3,
           "interleaved: the requests' responses alternate on the stream", order)


def check_bad_input(srv, st):
    m0 = srv.metrics()

    def code_and_details(rq):
        e = rpc_error(st.ModelInfer, rq, timeout=30)
        return (e.code(), e.details()) if e else (None, None)

    rq = gl.infer_request(pb, "hi", sampling=GREEDY)
    rq.inputs[0].datatype = "INT32"
    code, det = code_and_details(rq)
    tap.ok(code == grpc.StatusCode.INVALID_ARGUMENT and "text_input" in det,
           "a wrong datatype: INVALID_ARGUMENT naming the input", det)
    code, det = code_and_details(gl.infer_request(pb, "hi", model="nope"))
    tap.ok(code == grpc.StatusCode.NOT_FOUND and "'nope'" in det,
           "an unknown model: NOT_FOUND naming it", det)
    code, det = code_and_details(gl.infer_request(pb, "hi", stream=True))
    tap.ok(code == grpc.StatusCode.INVALID_ARGUMENT and "ModelStreamInfer" in det,
           "stream true on ModelInfer: INVALID_ARGUMENT pointing to ModelStreamInfer", det)
    rq = gl.infer_request(pb, "hi", extra_inputs=[("typo_input", "BOOL", [1], b"\x01")])
    code, det = code_and_details(rq)
    tap.ok(code == grpc.StatusCode.INVALID_ARGUMENT and "typo_input" in det,
           "an unknown input: INVALID_ARGUMENT naming it", det)
    rq = gl.infer_request(pb, "hi")
    rq.raw_input_contents[0] = b"\x09\x00\x00\x00ab"
    code, det = code_and_details(rq)
    tap.ok(code == grpc.StatusCode.INVALID_ARGUMENT and "text_input" in det,
           "a truncated BYTES element: INVALID_ARGUMENT", det)
    rq = gl.infer_request(pb, "hi", sampling={"max_tokens": 4, "temprature": 0})
    code, det = code_and_details(rq)
    tap.ok(code == grpc.StatusCode.INVALID_ARGUMENT and "temprature" in det,
           "a misspelt sampling parameter: INVALID_ARGUMENT naming it", det)
    # typed contents instead of raw bytes (another client's way): accepted
    rq = pb.ModelInferRequest(model_name="vllm_model")
    t = rq.inputs.add(name="text_input", datatype="BYTES", shape=[1])
    t.contents.bytes_contents.append(PROMPTS[1].encode())
    t = rq.inputs.add(name="sampling_parameters", datatype="BYTES", shape=[1])
    t.contents.bytes_contents.append(json.dumps(GREEDY).encode())
    t = rq.inputs.add(name="exclude_input_in_output", datatype="BOOL", shape=[1])
    t.contents.bool_contents.append(True)
    t = rq.inputs.add(name="stream", datatype="BOOL", shape=[1])
    t.contents.bool_contents.append(False)
    r = st.ModelInfer(rq, timeout=60)
    tap.eq(gl.text_of(r), alone(st, PROMPTS[1]), "tensors in typed contents: the same answer")
    m = srv.metrics()
    tap.eq(gauge(m, "nv_inference_request_failure", model="vllm_model", reason="OTHER") -
           gauge(m0, "nv_inference_request_failure", model="vllm_model", reason="OTHER"), 5,
           "the five bad requests for vllm_model count as failures (OTHER)")
    big = gl.infer_request(pb, "x" * (2 << 20), sampling=GREEDY)
    code, det = code_and_details(big)
    tap.ok(code == grpc.StatusCode.RESOURCE_EXHAUSTED,
           "a message over --http-max-input-size: RESOURCE_EXHAUSTED", (code, det))


wait_metric, gauge, idle = sl.wait_metric, sl.gauge, sl.idle


def check_cancel(srv, st):
    m0 = srv.metrics()
    call = st.ModelStreamInfer(iter([gl.infer_request(pb, PROMPTS[0], stream=True,
                                                      sampling=sl.HOLD, request_id="c")]))
    first = next(call)
    m, ok = wait_metric(srv, lambda m: gauge(m, "vllm:kv_cache_usage_perc") > 0 and
                        gauge(m, "vllm:num_requests_running") == 1)
    tap.ok(gl.text_of(first.infer_response) is not None and ok,
           "a long stream runs: first response in, KV blocks in use",
           [(k, v) for k, v in m.items() if k[0].startswith("vllm:num_req") or
            k[0].startswith("vllm:kv")])
    call.cancel()
    m, ok = wait_metric(srv, idle)
    tap.ok(ok, "client cancels the call: KV usage and running requests back to zero", m)
    tap.eq(gauge(m, "nv_inference_request_failure", reason="CANCELED") -
           gauge(m0, "nv_inference_request_failure", reason="CANCELED"), 1,
           "the request counts as CANCELED")
    tap.ok(gauge(m, "vllm:generation_tokens_total") - gauge(m0, "vllm:generation_tokens_total")
           < sl.HOLD["max_tokens"], "generation stopped early")


def check_deadline(srv, st):
    m0 = srv.metrics()
    t0 = time.monotonic()
    e = rpc_error(st.ModelInfer, gl.infer_request(pb, PROMPTS[0], sampling=sl.HOLD), timeout=0.3)
    took = time.monotonic() - t0
    tap.ok(e and e.code() == grpc.StatusCode.DEADLINE_EXCEEDED and took < 5,
           "grpc-timeout 0.3 s on a long request: DEADLINE_EXCEEDED", (e, took))
    m, ok = wait_metric(srv, idle)
    tap.ok(ok, "after the deadline: nothing runs, KV blocks free", m)
    # REJECTED where the deadline passed before the scheduler took the
    # request (Triton's reason for a timeout in the queue; a loaded machine),
    # BACKEND or CANCELED once it ran.
    fails = sum(gauge(m, "nv_inference_request_failure", reason=r) -
                gauge(m0, "nv_inference_request_failure", reason=r)
                for r in ("REJECTED", "BACKEND", "CANCELED"))
    tap.eq(fails, 1, "the request counts as failed")
    r = st.ModelInfer(gl.infer_request(pb, PROMPTS[2], sampling=GREEDY, exclude=True),
                      timeout=60)
    tap.eq(gl.text_of(r), alone(st, PROMPTS[2]), "a generous deadline: answered in full")


def check_concurrent(st):
    prompts = [PROMPTS[i % len(PROMPTS)] for i in range(64)]
    params = [dict(GREEDY, max_tokens=8 + (i % 5) * 4) for i in range(64)]
    want = {}
    for p, q in zip(prompts, params):
        key = (p, q["max_tokens"])
        if key not in want:
            want[key] = alone(st, p, q)
    results = [None] * 64

    def one(i):
        try:
            res = stream_texts(st, [gl.infer_request(pb, prompts[i], stream=True,
                                                     sampling=params[i], request_id=f"c{i}")],
                               timeout=600)
            results[i] = ("".join(gl.text_of(r.infer_response) or "" for r in res),
                          [r.error_message for r in res if r.error_message])
        except Exception as e:  # reported below
            results[i] = (None, [repr(e)])
    ths = [threading.Thread(target=one, args=(i,)) for i in range(64)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    bad = [(i, results[i], want[(prompts[i], params[i]["max_tokens"])]) for i in range(64)
           if results[i][1] or results[i][0] != want[(prompts[i], params[i]["max_tokens"])]]
    tap.ok(not bad, "64 concurrent streams: every output equals the same request alone",
           bad[:3])


def check_cancel_storm(srv):
    """Clients that cancel their calls and let deadlines pass at random, four
    at once for a few seconds: the deadline ends a request and cancels its
    call at the same moment (a use-after-free once). The server then still
    answers, nothing is left running or holding KV blocks, and no request
    counts twice."""
    m0 = srv.metrics()
    stop = time.monotonic() + 4
    sent, unexpected = [0] * 4, []

    def client(i):
        rnd = random.Random(i)
        st = stub(srv)
        while time.monotonic() < stop:
            sent[i] += 1
            try:
                if i % 2:
                    st.ModelInfer(gl.infer_request(pb, PROMPTS[i], sampling=sl.HOLD),
                                  timeout=rnd.uniform(0.01, 0.4))
                    continue
                call = st.ModelStreamInfer(iter([gl.infer_request(
                    pb, PROMPTS[i], stream=True, sampling=sl.HOLD, request_id=f"s{i}")]),
                    timeout=rnd.uniform(0.05, 0.8))
                for _ in zip(range(rnd.randrange(1, 20)), call):
                    pass
                call.cancel()
            except grpc.RpcError as e:
                if e.code() not in (grpc.StatusCode.DEADLINE_EXCEEDED,
                                    grpc.StatusCode.CANCELLED):
                    unexpected.append((e.code(), e.details()))
    ths = [threading.Thread(target=client, args=(i,)) for i in range(4)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(120)
    tap.ok(not unexpected, f"{sum(sent)} calls cancelled or past their deadline: "
           "each ends CANCELLED or DEADLINE_EXCEEDED", unexpected[:5])
    m, ok = wait_metric(srv, idle)
    tap.ok(ok, "after them: nothing runs or waits, KV blocks free", m)
    counted = gauge(m, "nv_inference_request_success", model="vllm_model") - \
        gauge(m0, "nv_inference_request_success", model="vllm_model") + \
        sum(gauge(m, "nv_inference_request_failure", model="vllm_model", reason=r) -
            gauge(m0, "nv_inference_request_failure", model="vllm_model", reason=r)
            for r in ("REJECTED", "CANCELED", "BACKEND", "OTHER"))
    # A call whose deadline passes before the server reads its request is
    # never a request of the model's (Triton's counters likewise).
    tap.ok(0 < counted <= sum(sent), f"counted at most once each ({counted:.0f} of "
           f"{sum(sent)} reached the model)", (counted, sum(sent)))
    st = stub(srv)
    r = st.ModelInfer(gl.infer_request(pb, PROMPTS[2], sampling=GREEDY, exclude=True),
                      timeout=60)
    tap.eq(gl.text_of(r), alone(st, PROMPTS[2]), "and the server still answers")


def check_metrics(srv, st):
    m0 = srv.metrics()
    st.ModelInfer(gl.infer_request(pb, PROMPTS[0], sampling=GREEDY))
    m = srv.metrics()
    tap.eq(gauge(m, "nv_inference_request_success", model="vllm_model") -
           gauge(m0, "nv_inference_request_success", model="vllm_model"), 1,
           "a gRPC request counts in nv_inference_request_success")
    s = st.ModelStatistics(pb.ModelStatisticsRequest(name="vllm_model")).model_stats[0]
    tap.ok(s.name == "vllm_model" and s.inference_stats.success.count ==
           gauge(m, "nv_inference_request_success", model="vllm_model") and
           s.inference_count > 0 and s.execution_count > 0 and
           s.last_inference > 1.7e12,
           "ModelStatistics: the counters behind /metrics", s)
    e = rpc_error(st.ModelStatistics, pb.ModelStatisticsRequest(name="nope"))
    tap.ok(e and e.code() == grpc.StatusCode.NOT_FOUND, "ModelStatistics of an unknown model: "
           "NOT_FOUND", e)


def main():
    root = sl.tmpdir("grpc")
    try:
        repo = gl.make_repo(root, TL3)
        srv = gl.start_server(tap, repo, root, "--http-max-input-size", str(1 << 20))
        try:
            st = stub(srv)
            check_unary(srv, st)
            check_tutorial_stream(st)
            check_infer(st)
            check_interleaved(st)
            check_bad_input(srv, st)
            check_cancel(srv, st)
            check_deadline(srv, st)
            check_cancel_storm(srv)
            check_concurrent(st)
            check_metrics(srv, st)
        except Exception:  # an RPC error no check expected: why, and the server's log
            tap.ok(False, "the checks ran to their end", traceback.format_exc())
            tap.note("rbln-serve's standard error, its end:\n" + srv.stderr()[-6000:])
        finally:
            rc = srv.stop()
        tap.eq(rc, 0, "rbln-serve exits 0 on SIGTERM")
        err = srv.stderr()
        tap.ok("AddressSanitizer" not in err and "runtime error" not in err,
               "no sanitizer report", err[-2000:])
    finally:
        sl.rmtree(root)
    tap.done()


main()
