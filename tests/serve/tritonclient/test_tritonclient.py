#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rbln-serve against the real tritonclient (issue 11's "done when").

Triton's Python client, vendored unmodified in tests/third_party/tritonclient
with the .proto files of Triton's common repository, is assembled in the
build tree as its wheel is (tclib.py): the gRPC side speaks Triton's own
protocol definition, so any field our engine/src/serve/grpc/proto numbers
differently shows here.  Against rbln-serve serving the RBLN tutorial's
vllm_model (tiny-llama3, the emulated devices), every output is checked
against transformers' greedy reference text:

- tritonclient.http: live/ready, server and model metadata, model config,
  infer (binary and JSON tensors), statistics, repository index, an unknown
  model's error; async_infer on the gevent pool; gzip/deflate request
  bodies and gzip/deflate responses; tritonclient.http.aio;
- tritonclient.grpc: the same calls, compression; start_stream and
  async_stream_infer as the tutorial streams (chunks, triton_final_response,
  the empty final response, two requests interleaved); tritonclient.grpc.aio
  with stream_infer;
- load_model/unload_model over both protocols on a second server in
  --model-control-mode explicit;
- our .proto files against Triton's: the same numbers, types and methods.

TAP, one line per check; any failure fails the test; nothing is skipped.
Run by meson with Debian's /usr/bin/python3.
"""
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "grpc"))
# grpclib for the tutorial's repository and starting the server only: its
# client generated from our .proto must not load beside Triton's (one
# protobuf descriptor pool, same message names).
import grpclib as gl  # noqa: E402
import tclib  # noqa: E402

sl = gl.sl
tap = sl.Tap()
CLIENT_DIR = tclib.load(tap)
import check_grpc  # noqa: E402
import check_http  # noqa: E402
import check_protos  # noqa: E402
import check_repository  # noqa: E402



class Case:
    """What every check needs: the TAP producer, the server's addresses, two
    reference prompts and their greedy answers under `sampling`."""

    def __init__(self, srv, ref):
        self.tap = tap
        self.srv = srv
        self.http_url = f"127.0.0.1:{srv.http_port}"
        self.grpc_url = f"127.0.0.1:{srv.grpc_port}"
        self.sampling = {"temperature": 0, "max_tokens": 24, "ignore_eos": True}
        first, second = ref_entry(ref, "import os"), ref_entry(ref, "def fibonacci")
        self.prompt, self.prompt2 = first["prompt"], second["prompt"]
        self.want, self.want2 = answer(srv, first), answer(srv, second)
        # For "comes in several chunks": long enough (about half a second) that a
        # sender the machine's load kept waiting still sends pieces (serving.md:
        # pieces not yet taken are coalesced).
        self.long_sampling = dict(self.sampling, max_tokens=LONG_TOKENS)
        self.want_long = sl.generate_text(srv, "vllm_model", self.prompt,
                                          max_tokens=LONG_TOKENS, ignore_eos=True)


LONG_TOKENS = 400


def ref_entry(ref, prefix):
    return next(g for g in ref["generate"] if g["prompt"] and g["prompt"].startswith(prefix))


def answer(srv, entry):
    """24 greedy tokens from the server's own HTTP generate, checked against
    the reference so that every tritonclient check compares with the truth."""
    text = sl.generate_text(srv, "vllm_model", entry["prompt"], max_tokens=24, ignore_eos=True)
    n = min(len(text), len(entry["greedy_text"]))
    if not tap.ok(n > 0 and text[:n] == entry["greedy_text"][:n],
                  f"generate {entry['prompt'][:20]!r}: transformers' greedy reference text",
                  (text, entry["greedy_text"])):
        tap.bail("the server does not answer the reference text")
    return text


def guarded(check, *args):
    """Runs a group of checks; an exception the client raises where no check
    expected one fails the test as a check of its own, and the next group runs."""
    try:
        check(*args)
    except Exception:  # noqa: BLE001 - whatever tritonclient raises is a failure to report
        tap.ok(False, f"{check.__module__}.{check.__name__} ran without an exception",
               traceback.format_exc())


def main():
    tl3 = os.path.join(sl.models_dir(tap), "tiny-llama3")
    with open(os.path.join(tl3, "reference.json"), encoding="utf-8") as f:
        ref = json.load(f)
    root = sl.tmpdir("tritonclient")
    try:
        repo = gl.make_repo(root, tl3)
        # A request without max_tokens generates up to max_model_len: 512
        # rather than the tutorial's 2048 keeps the test quick.
        sl.write(os.path.join(repo, "vllm_model", "1", "model.json"),
                 sl.model_json("tiny-llama3", max_num_seqs=4, max_num_batched_tokens=512,
                               max_model_len=512))
        srv = gl.start_server(tap, repo, root)
        try:
            case = Case(srv, ref)
            guarded(check_protos.check, case)
            for check in (check_http.check_sync, check_http.check_async_infer,
                          check_http.check_compression, check_http.check_aio,
                          check_grpc.check_sync, check_grpc.check_stream, check_grpc.check_aio):
                guarded(check, case)
        finally:
            srv.stop()
        explicit_dir = os.path.join(root, "explicit")
        os.makedirs(explicit_dir)
        srv = gl.start_server(tap, repo, explicit_dir, "--model-control-mode", "explicit")
        try:
            guarded(check_repository.check, case, f"127.0.0.1:{srv.http_port}",
                    f"127.0.0.1:{srv.grpc_port}")
        finally:
            srv.stop()
    finally:
        sl.rmtree(root)
    tap.done()


if __name__ == "__main__":
    main()
