# SPDX-License-Identifier: MIT
"""tritonclient.http (sync, with compression, and aio) against rbln-serve.

Each function takes the test's Case (test_tritonclient.py): the TAP
producer, the server's addresses and the greedy reference answer the
outputs must equal.
"""
import asyncio

import tclib
import tritonclient.http as httpclient
import tritonclient.http.aio as aiohttpclient
from tritonclient.utils import InferenceServerException

MODEL = "vllm_model"


def _stats_success(stats):
    """The model's success count in a statistics answer (Triton's JSON)."""
    for m in stats.get("model_stats", []):
        if m.get("name") == MODEL:
            return m.get("inference_stats", {}).get("success", {}).get("count")
    return None


def _infer_text(client, case, **kw):
    """One greedy request; the text_output it answers."""
    binary = kw.pop("binary_data", True)
    inputs = tclib.vllm_inputs(httpclient, case.prompt, sampling=case.sampling,
                               binary_data=binary, exclude=kw.pop("exclude", None))
    outputs = [httpclient.InferRequestedOutput("text_output", binary_data=binary)]
    return tclib.text_output(client.infer(MODEL, inputs, outputs=outputs, **kw))


def check_sync(case):
    tap = case.tap
    with httpclient.InferenceServerClient(url=case.http_url) as c:
        tap.ok(c.is_server_live() and c.is_server_ready() and c.is_model_ready(MODEL),
               "http: is_server_live, is_server_ready, is_model_ready")
        tap.ok(not c.is_model_ready("no_such_model"), "http: is_model_ready of an unknown model "
               "is False")
        md = c.get_server_metadata()
        tap.ok(md.get("name") and md.get("version") and "statistics" in md.get("extensions", []),
               "http: get_server_metadata names the server, its version and extensions", md)
        mm = c.get_model_metadata(MODEL)
        names = {i["name"]: i["datatype"] for i in mm.get("inputs", [])}
        tap.ok(mm.get("name") == MODEL and names.get("text_input") == "BYTES" and
               names.get("stream") == "BOOL" and
               "text_output" in [o["name"] for o in mm.get("outputs", [])],
               "http: get_model_metadata: text_input BYTES, stream BOOL -> text_output", mm)
        cfg = c.get_model_config(MODEL)
        tap.ok(cfg.get("name") == MODEL and cfg.get("backend") == "vllm" and
               cfg.get("model_transaction_policy", {}).get("decoupled") is True,
               "http: get_model_config: the vllm backend's decoupled model", cfg)
        before = _stats_success(c.get_inference_statistics(MODEL))
        tap.eq(_infer_text(c, case), case.prompt + case.want,
               "http infer (binary tensors): the prompt and the greedy reference answer")
        tap.eq(_infer_text(c, case, binary_data=False, exclude=True), case.want,
               "http infer (JSON tensors), exclude_input_in_output: the answer only")
        tap.eq(_infer_text(c, case, request_id="tc-1", exclude=True), case.want,
               "http infer with a request_id")
        after = _stats_success(c.get_inference_statistics(MODEL))
        tap.ok(before is not None and after == before + 3,
               "http: get_inference_statistics counts the 3 successes", (before, after))
        idx = c.get_model_repository_index()
        tap.ok(any(m.get("name") == MODEL and m.get("state") == "READY" for m in idx),
               "http: get_model_repository_index lists the model READY", idx)
        try:
            c.get_model_metadata("no_such_model")
            err = None
        except InferenceServerException as e:
            err = e
        tap.ok(err is not None and "no_such_model" in str(err),
               "http: an unknown model raises InferenceServerException naming it", err)


def check_async_infer(case):
    """async_infer on the client's gevent pool, as the Llama 2 tutorial's client does."""
    with httpclient.InferenceServerClient(url=case.http_url, concurrency=4) as c:
        pending = [c.async_infer(MODEL, tclib.vllm_inputs(httpclient, case.prompt,
                                                          sampling=case.sampling, exclude=True))
                   for _ in range(4)]
        texts = [tclib.text_output(p.get_result()) for p in pending]
    case.tap.eq(texts, [case.want] * 4, "http async_infer x4 (concurrency 4): each answer equal")


def check_compression(case):
    tap = case.tap
    with httpclient.InferenceServerClient(url=case.http_url) as c:
        for alg in ("gzip", "deflate"):
            tap.eq(_infer_text(c, case, exclude=True, request_compression_algorithm=alg),
                   case.want, f"http infer, request_compression_algorithm={alg!r}")
            tap.eq(_infer_text(c, case, exclude=True, binary_data=False,
                               request_compression_algorithm=alg,
                               response_compression_algorithm="gzip"),
                   case.want, f"http infer (JSON), request {alg!r}, "
                              "response_compression_algorithm='gzip'")
        tap.eq(_infer_text(c, case, exclude=True, response_compression_algorithm="gzip"),
               case.want, "http infer (binary), response_compression_algorithm='gzip'")
        tap.eq(_infer_text(c, case, exclude=True, response_compression_algorithm="deflate"),
               case.want, "http infer (binary), response_compression_algorithm='deflate'")


async def _aio(case):
    tap = case.tap
    c = aiohttpclient.InferenceServerClient(url=case.http_url)
    try:
        tap.ok(await c.is_server_live() and await c.is_server_ready() and
               await c.is_model_ready(MODEL), "http aio: live, ready, model ready")
        md = await c.get_server_metadata()
        mm = await c.get_model_metadata(MODEL)
        cfg = await c.get_model_config(MODEL)
        tap.ok(md.get("name") and mm.get("name") == MODEL and cfg.get("name") == MODEL,
               "http aio: server metadata, model metadata, model config", (md, mm, cfg))
        inputs = tclib.vllm_inputs(aiohttpclient, case.prompt, sampling=case.sampling,
                                   exclude=True)
        rs = await asyncio.gather(*(c.infer(MODEL, inputs) for _ in range(3)))
        tap.eq([tclib.text_output(r) for r in rs], [case.want] * 3,
               "http aio: 3 concurrent infer calls, each the greedy answer")
        r = await c.infer(MODEL, inputs, request_compression_algorithm="gzip",
                          response_compression_algorithm="gzip")
        tap.eq(tclib.text_output(r), case.want, "http aio infer, gzip both ways")
        st = await c.get_inference_statistics(MODEL)
        tap.ok((_stats_success(st) or 0) > 0, "http aio: get_inference_statistics", st)
    finally:
        await c.close()


def check_aio(case):
    asyncio.run(_aio(case))
