# SPDX-License-Identifier: MIT
"""The model repository extension through tritonclient's load_model and
unload_model (http and grpc) on a server started with
--model-control-mode explicit and no --load-model: the model starts
unloaded, and each load makes it serve the greedy answer again.

check() takes the test's Case and the explicit-mode server's addresses.
"""
import time

import tclib
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

MODEL = "vllm_model"


def _state(index, name):
    for m in index:
        m = m if isinstance(m, dict) else {"name": m.name, "state": m.state}
        if m.get("name") == name:
            return m.get("state")
    return None


def _settled_state(client, name, deadline_s=30.0):
    """The model's state once it has left UNLOADING. Unload answers at once
    (Documentation/serving.md): a request whose response the client already
    has may still hold the engine for a moment, and the engine closes after
    it."""
    end = time.monotonic() + deadline_s
    while True:
        state = _state(client.get_model_repository_index(), name)
        if state != "UNLOADING" or time.monotonic() > end:
            return state
        time.sleep(0.05)


def _raises(fn, *args):
    try:
        fn(*args)
    except InferenceServerException as e:
        return e
    return None


def _answers(client, module, case):
    """The greedy answer through client (of module: tritonclient.http or .grpc)."""
    r = client.infer(MODEL, tclib.vllm_inputs(module, case.prompt, sampling=case.sampling,
                                              exclude=True))
    return tclib.text_output(r)


def check(case, http_url, grpc_url):
    tap = case.tap
    with httpclient.InferenceServerClient(url=http_url) as h, \
            grpcclient.InferenceServerClient(url=grpc_url) as g:
        tap.ok(not h.is_model_ready(MODEL) and not g.is_model_ready(MODEL) and
               _state(h.get_model_repository_index(), MODEL) == "UNAVAILABLE",
               "explicit mode, no --load-model: the model is listed UNAVAILABLE, not ready",
               h.get_model_repository_index())
        err = _raises(h.infer, MODEL, tclib.vllm_inputs(httpclient, case.prompt))
        tap.ok(err is not None, "explicit mode: infer on the unloaded model is refused", err)

        h.load_model(MODEL)
        tap.ok(h.is_model_ready(MODEL) and g.is_model_ready(MODEL) and
               _state(g.get_model_repository_index().models, MODEL) == "READY",
               "http load_model: the model is READY (seen over both protocols)")
        tap.eq(_answers(g, grpcclient, case), case.want,
               "after http load_model: grpc infer answers")

        g.unload_model(MODEL)
        tap.ok(not h.is_model_ready(MODEL) and _settled_state(h, MODEL) == "UNAVAILABLE",
               "grpc unload_model: the model is UNAVAILABLE again",
               h.get_model_repository_index())

        g.load_model(MODEL)
        tap.ok(g.is_model_ready(MODEL), "grpc load_model: the model is ready")
        tap.eq(_answers(h, httpclient, case), case.want,
               "after grpc load_model: http infer answers")

        h.unload_model(MODEL)
        tap.ok(not g.is_model_ready(MODEL), "http unload_model: the model is not ready")
        err = _raises(h.load_model, "no_such_model")
        tap.ok(err is not None and "no_such_model" in str(err),
               "http load_model of a model not in the repository raises, naming it", err)
        err = _raises(g.load_model, "no_such_model")
        tap.ok(err is not None and "no_such_model" in str(err),
               "grpc load_model of a model not in the repository raises, naming it", err)
