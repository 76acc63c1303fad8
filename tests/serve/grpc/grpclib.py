# SPDX-License-Identifier: MIT
"""Helpers of rbln-serve's gRPC tests: the Python client generated from
engine/src/serve/grpc/proto with Debian's grpc_tools (python3-grpc-tools) into a
temporary directory, the model repository of the RBLN tutorial, and
tritonclient-style request builders (raw_input_contents, as
tritonclient.grpc sends tensors).

Run with Debian's /usr/bin/python3 (python3-grpcio); nothing from PyPI.
"""
import atexit
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "http"))
import servelib as sl  # noqa: E402,F401

PROTO_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "..", "engine", "src", "serve", "grpc",
                                          "proto"))


def generate_client(tap):
    """Generates the Python modules from our .proto files; returns (pb, pb_grpc, grpc)."""
    out = tempfile.mkdtemp(prefix="rbln-grpc-py.")
    atexit.register(shutil.rmtree, out, True)
    cmd = [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_DIR}", f"--python_out={out}",
           f"--grpc_python_out={out}", "grpc_service.proto", "model_config.proto"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if not tap.ok(r.returncode == 0, "Python client generated from our .proto by grpc_tools",
                  r.stderr):
        tap.bail("cannot generate the gRPC client")
    sys.path.insert(0, out)
    import grpc  # noqa: E402
    import grpc_service_pb2 as pb  # noqa: E402
    import grpc_service_pb2_grpc as pb_grpc  # noqa: E402
    return pb, pb_grpc, grpc


def setup(tap):
    """The reference model, its reference outputs and prompts, and the generated client."""
    tl3 = os.path.join(sl.models_dir(tap), "tiny-llama3")
    with open(os.path.join(tl3, "reference.json"), encoding="utf-8") as f:
        ref = json.load(f)
    prompts = [g["prompt"] for g in ref["generate"] if g["prompt"]]
    return tl3, ref, prompts, generate_client(tap)


def make_repo(root, tl3):
    """The RBLN tutorial's repository: vllm_model with its config.pbtxt, tiny-llama3."""
    repo = os.path.join(root, "model_repository")
    compiled = os.path.join(repo, "vllm_model", "1", "tiny-llama3")
    os.makedirs(os.path.dirname(compiled))
    sl.compile_model(tl3, compiled, "--batch-size", "4", "--max-seq-len", "2048",
                     "--decoder-batch-sizes", "4,2,1")
    sl.write(os.path.join(repo, "vllm_model", "config.pbtxt"), sl.RBLN_CONFIG_PBTXT)
    sl.write(os.path.join(repo, "vllm_model", "1", "model.json"),
             sl.model_json("tiny-llama3", max_num_seqs=4, max_num_batched_tokens=2048,
                           max_model_len=2048))
    return repo


def bytes_raw(*items):
    """BYTES elements as tritonclient lays them out: 4-byte little-endian length, data."""
    out = b""
    for s in items:
        b = s.encode() if isinstance(s, str) else s
        out += struct.pack("<I", len(b)) + b
    return out


def infer_request(pb, prompt, stream=False, sampling=None, exclude=None, request_id="",
                  model="vllm_model", extra_inputs=(), params=None):
    """A ModelInferRequest as tritonclient.grpc builds it for the tutorial's client."""
    rq = pb.ModelInferRequest(model_name=model, id=request_id)
    tensors = [("text_input", "BYTES", [1], bytes_raw(prompt)),
               ("stream", "BOOL", [1], b"\x01" if stream else b"\x00")]
    if sampling is not None:
        tensors.append(("sampling_parameters", "BYTES", [1], bytes_raw(json.dumps(sampling))))
    if exclude is not None:
        tensors.append(("exclude_input_in_output", "BOOL", [1], b"\x01" if exclude else b"\x00"))
    tensors.extend(extra_inputs)
    for name, dtype, shape, raw in tensors:
        t = rq.inputs.add()
        t.name, t.datatype = name, dtype
        t.shape.extend(shape)
        rq.raw_input_contents.append(raw)
    rq.outputs.add().name = "text_output"
    for k, v in (params or {}).items():
        p = rq.parameters[k]
        if isinstance(v, bool):
            p.bool_param = v
        elif isinstance(v, int):
            p.int64_param = v
        elif isinstance(v, float):
            p.double_param = v
        else:
            p.string_param = v
    return rq


def text_of(resp):
    """The text_output element of a ModelInferResponse (raw BYTES), or None."""
    for i, o in enumerate(resp.outputs):
        if o.name == "text_output":
            raw = resp.raw_output_contents[i]
            n = struct.unpack("<I", raw[:4])[0]
            return raw[4:4 + n].decode("utf-8")
    return None


def is_final(resp):
    p = resp.parameters.get("triton_final_response")
    return p is not None and p.bool_param


def start_server(tap, repo, workdir, *args):
    srv = sl.Server(["--model-repository", repo, *args], workdir)
    if not tap.ok(srv.grpc_port, "rbln-serve names its gRPC port at start-up", srv.stdout()):
        tap.bail("no gRPC port")
    return srv
