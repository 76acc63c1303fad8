# SPDX-License-Identifier: MIT
"""tritonclient.grpc (sync, the start_stream/async_stream_infer stream, and
aio's stream_infer) against rbln-serve's GRPCInferenceService.

Each function takes the test's Case (test_tritonclient.py).
"""
import asyncio
import queue

import tclib
import tritonclient.grpc as grpcclient
import tritonclient.grpc.aio as aiogrpcclient
from tritonclient.utils import InferenceServerException

MODEL = "vllm_model"
STREAM_TIMEOUT = 120


def _is_final(result):
    p = result.get_response().parameters.get("triton_final_response")
    return p is not None and p.bool_param


def _success(stats):
    for m in stats.model_stats:
        if m.name == MODEL:
            return m.inference_stats.success.count
    return None


def check_sync(case):
    tap = case.tap
    with grpcclient.InferenceServerClient(url=case.grpc_url) as c:
        tap.ok(c.is_server_live() and c.is_server_ready() and c.is_model_ready(MODEL),
               "grpc: is_server_live, is_server_ready, is_model_ready")
        md = c.get_server_metadata()
        tap.ok(md.name and md.version and "statistics" in md.extensions,
               "grpc: get_server_metadata", md)
        mm = c.get_model_metadata(MODEL, as_json=True)
        names = {i["name"]: i["datatype"] for i in mm.get("inputs", [])}
        tap.ok(mm.get("name") == MODEL and names.get("text_input") == "BYTES" and
               names.get("stream") == "BOOL" and
               "text_output" in [o["name"] for o in mm.get("outputs", [])],
               "grpc: get_model_metadata: text_input BYTES, stream BOOL -> text_output", mm)
        cfg = c.get_model_config(MODEL).config
        tap.ok(cfg.name == MODEL and cfg.backend == "vllm" and
               cfg.model_transaction_policy.decoupled,
               "grpc: get_model_config (model_config.proto's ModelConfig): decoupled vllm", cfg)
        before = _success(c.get_inference_statistics(MODEL))
        out = [grpcclient.InferRequestedOutput("text_output")]
        r = c.infer(MODEL, tclib.vllm_inputs(grpcclient, case.prompt, sampling=case.sampling),
                    outputs=out, request_id="g-1")
        tap.ok(tclib.text_output(r) == case.prompt + case.want and
               r.get_response().id == "g-1" and r.get_response().model_name == MODEL,
               "grpc infer: the prompt and the greedy reference answer, the id echoed",
               (tclib.text_output(r), r.get_response().id))
        for alg in ("gzip", "deflate"):
            r = c.infer(MODEL, tclib.vllm_inputs(grpcclient, case.prompt, sampling=case.sampling,
                                                 exclude=True), compression_algorithm=alg)
            tap.eq(tclib.text_output(r), case.want,
                   f"grpc infer, compression_algorithm={alg!r}, exclude_input_in_output")
        after = _success(c.get_inference_statistics(MODEL))
        tap.ok(before is not None and after == before + 3,
               "grpc: get_inference_statistics counts the 3 successes", (before, after))
        idx = c.get_model_repository_index().models
        tap.ok(any(m.name == MODEL and m.state == "READY" for m in idx),
               "grpc: get_model_repository_index lists the model READY", idx)
        try:
            c.infer("no_such_model", tclib.vllm_inputs(grpcclient, case.prompt))
            err = None
        except InferenceServerException as e:
            err = e
        tap.ok(err is not None and err.status() == "StatusCode.NOT_FOUND" and
               "no_such_model" in err.message(),
               "grpc infer of an unknown model: NOT_FOUND naming it", err)


def _stream_round(c, case, requests, empty_final):
    """Sends requests ((request_id, inputs) pairs) on one stream; returns
    {request_id: (texts, finals)} once every request has had its final response."""
    responses = queue.Queue()
    c.start_stream(callback=lambda result, error: responses.put((result, error)),
                   stream_timeout=STREAM_TIMEOUT)
    try:
        for rid, inputs in requests:
            c.async_stream_infer(MODEL, inputs, request_id=rid,
                                 enable_empty_final_response=empty_final)
        out = {rid: ([], []) for rid, _ in requests}
        open_ids = set(out)
        while open_ids:
            result, error = responses.get(timeout=STREAM_TIMEOUT)
            if error is not None:
                raise error
            rid = result.get_response().id
            texts, finals = out[rid]
            text = tclib.text_output(result)
            if text is not None:
                texts.append(text)
            finals.append(_is_final(result))
            if finals[-1]:
                open_ids.discard(rid)
        return out
    finally:
        c.stop_stream()


def check_stream(case):
    """The tutorial's stream_infer flow with the sync client: one response per
    chunk, the last flagged triton_final_response; two requests interleaved."""
    tap = case.tap
    with grpcclient.InferenceServerClient(url=case.grpc_url) as c:
        long = tclib.vllm_inputs(grpcclient, case.prompt, stream=True,
                                 sampling=case.long_sampling)
        got = _stream_round(c, case, [("s-1", long)], empty_final=True)
        texts, finals = got["s-1"]
        tap.ok(len(texts) > 1 and "".join(texts) == case.want_long and
               case.want_long.startswith(case.want),
               "grpc async_stream_infer (stream true): several chunks that make the answer",
               (len(texts), texts[:3]))
        tap.ok(finals and finals[-1] and not any(finals[:-1]) and len(finals) == len(texts) + 1,
               "grpc stream: enable_empty_final_response gives an empty last response "
               "flagged triton_final_response", finals)
        inputs = tclib.vllm_inputs(grpcclient, case.prompt, stream=True, sampling=case.sampling)
        other = tclib.vllm_inputs(grpcclient, case.prompt2, stream=True, sampling=case.sampling)
        got = _stream_round(c, case, [("a", inputs), ("b", other)], empty_final=False)
        tap.ok("".join(got["a"][0]) == case.want and "".join(got["b"][0]) == case.want2 and
               all(f[-1] and not any(f[:-1]) for _, f in got.values()),
               "grpc stream: two requests interleaved on one stream, each its own answer, "
               "final flag on its last response", got)
        whole = tclib.vllm_inputs(grpcclient, case.prompt, stream=False, sampling=case.sampling,
                                  exclude=True)
        got = _stream_round(c, case, [("w", whole)], empty_final=False)
        tap.ok(got["w"] == ([case.want], [True]),
               "grpc stream, stream false: one response with the whole answer, final", got)


async def _aio(case):
    tap = case.tap
    c = aiogrpcclient.InferenceServerClient(url=case.grpc_url)
    try:
        tap.ok(await c.is_server_live() and await c.is_server_ready() and
               await c.is_model_ready(MODEL), "grpc aio: live, ready, model ready")
        cfg = await c.get_model_config(MODEL)
        mm = await c.get_model_metadata(MODEL)
        tap.ok(cfg.config.name == MODEL and mm.name == MODEL,
               "grpc aio: get_model_config, get_model_metadata")
        r = await c.infer(MODEL, tclib.vllm_inputs(aiogrpcclient, case.prompt,
                                                   sampling=case.sampling, exclude=True))
        tap.eq(tclib.text_output(r), case.want, "grpc aio infer: the greedy answer")

        async def requests():
            for rid, prompt in (("x", case.prompt), ("y", case.prompt2)):
                yield {"model_name": MODEL, "request_id": rid,
                       "inputs": tclib.vllm_inputs(aiogrpcclient, prompt, stream=True,
                                                   sampling=case.sampling),
                       "outputs": [aiogrpcclient.InferRequestedOutput("text_output")]}

        texts, finals, errors = {"x": [], "y": []}, {"x": [], "y": []}, []
        async for result, error in c.stream_infer(requests(), stream_timeout=STREAM_TIMEOUT):
            if error is not None:
                errors.append(error)
                break
            rid = result.get_response().id
            text = tclib.text_output(result)
            if text is not None:
                texts[rid].append(text)
            finals[rid].append(_is_final(result))
            if all(f and f[-1] for f in finals.values()):
                break
        tap.ok(not errors and "".join(texts["x"]) == case.want and
               "".join(texts["y"]) == case.want2 and all(f[-1] for f in finals.values()),
               "grpc aio stream_infer: two streamed requests, each its answer, then final",
               (errors, texts, finals))
        st = await c.get_inference_statistics(MODEL)
        tap.ok(_success(st), "grpc aio: get_inference_statistics", st)
    finally:
        await c.close()


def check_aio(case):
    asyncio.run(_aio(case))
