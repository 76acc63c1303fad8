# SPDX-License-Identifier: MIT
"""The real tritonclient, assembled for a test run as upstream's wheel is.

tests/third_party/tritonclient holds Triton's Python client library and the
.proto files of Triton's common repository, unmodified.  Upstream's
build_wheel.py copies the library, generates the gRPC modules from those
.proto files (protoc: grpc_service.proto -> service_pb2.py and
service_pb2_grpc.py, model_config.proto -> model_config_pb2.py, placed in
tritonclient/grpc/) and rewrites their imports into package imports.
assemble() does the same with Debian's grpc_tools into a directory of the
build tree, so that the client under test speaks exactly Triton's protocol
and not the copy of it in engine/src/serve/grpc/proto.

Run with Debian's /usr/bin/python3 (python3-grpcio, python3-grpc-tools,
python3-geventhttpclient, python3-aiohttp, python3-numpy, python3-rapidjson);
nothing from PyPI.
"""
import importlib
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VENDOR = os.path.normpath(os.path.join(HERE, "..", "..", "third_party", "tritonclient"))
PROTO_DIR = os.path.join(VENDOR, "protobuf")

# protoc's output name -> the module name in tritonclient.grpc (build_wheel.py's).
GENERATED = {
    "grpc_service_pb2.py": "service_pb2.py",
    "grpc_service_pb2_grpc.py": "service_pb2_grpc.py",
    "model_config_pb2.py": "model_config_pb2.py",
}
# build_wheel.py's sed expressions: protoc writes top-level imports of the
# sibling modules; the package needs them as tritonclient.grpc's.
PB2_IMPORT = re.compile(r"^import ([^ ]*)_pb2 as ([^ ]*)$", re.M)
GRPC_IMPORT = re.compile(r"^import grpc_([^ ]*)_pb2 as ([^ ]*)$", re.M)


def _rewrite(path, pattern):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(pattern.sub(r"from tritonclient.grpc import \1_pb2 as \2", text))


def assemble(dest):
    """Builds dest/tritonclient (the vendored package plus the generated gRPC
    modules); returns dest, to go first on sys.path / PYTHONPATH.  Raises
    RuntimeError naming what failed."""
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    shutil.copytree(os.path.join(VENDOR, "tritonclient"), os.path.join(dest, "tritonclient"))
    gen = os.path.join(dest, "protoc-out")
    os.makedirs(gen)
    cmd = [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_DIR}", f"--python_out={gen}",
           f"--grpc_python_out={gen}", "grpc_service.proto", "model_config.proto"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    pkg = os.path.join(dest, "tritonclient", "grpc")
    for produced, module in GENERATED.items():
        src = os.path.join(gen, produced)
        if not os.path.isfile(src):
            raise RuntimeError(f"grpc_tools.protoc did not write {produced} in {gen}")
        shutil.move(src, os.path.join(pkg, module))
    for module in ("model_config_pb2.py", "service_pb2.py"):
        _rewrite(os.path.join(pkg, module), PB2_IMPORT)
    _rewrite(os.path.join(pkg, "service_pb2_grpc.py"), GRPC_IMPORT)
    shutil.rmtree(gen)
    return dest


def build_dir():
    """Where the test assembles the client: $TRITONCLIENT_BUILD_DIR (meson sets it)."""
    d = os.environ.get("TRITONCLIENT_BUILD_DIR")
    if not d:
        raise SystemExit("Bail out! TRITONCLIENT_BUILD_DIR is not set (run the test through meson)")
    return d


def load(tap):
    """Assembles the client in the build tree and imports it; bails out naming
    what is missing (a Debian package, the generated modules)."""
    try:
        dest = assemble(build_dir())
    except (OSError, RuntimeError) as e:
        tap.ok(False, "tritonclient assembled with service_pb2 generated from Triton's .proto", e)
        tap.bail("cannot assemble tritonclient")
    sys.path.insert(0, dest)
    try:
        for module in ("tritonclient.grpc", "tritonclient.grpc.aio", "tritonclient.http",
                       "tritonclient.http.aio"):
            importlib.import_module(module)
    except (ImportError, RuntimeError) as e:
        tap.ok(False, "tritonclient.http, .http.aio, .grpc and .grpc.aio import", e)
        tap.bail("tritonclient does not import: run tools/install-deps.sh")
    tap.ok(True, "tritonclient (http, http.aio, grpc, grpc.aio) assembled from the vendored "
                 "source and Triton's .proto")
    return dest


def vllm_inputs(client, prompt, stream=False, sampling=None, exclude=None, **data_kw):
    """The inputs of Triton's vLLM backend model as its tutorials build them
    with `client` (tritonclient.http or tritonclient.grpc): text_input and
    sampling_parameters as BYTES, stream and exclude_input_in_output as BOOL.
    data_kw goes to set_data_from_numpy (binary_data= over HTTP)."""
    import numpy as np

    def tensor(name, dtype, value):
        t = client.InferInput(name, [1], dtype)
        t.set_data_from_numpy(np.array([value], dtype=object if dtype == "BYTES" else bool),
                              **data_kw)
        return t

    out = [tensor("text_input", "BYTES", prompt.encode("utf-8")),
           tensor("stream", "BOOL", stream)]
    if sampling is not None:
        out.append(tensor("sampling_parameters", "BYTES", json.dumps(sampling).encode("utf-8")))
    if exclude is not None:
        out.append(tensor("exclude_input_in_output", "BOOL", exclude))
    return out


def text_output(result):
    """The one text_output element of an InferResult (http or grpc), as str:
    binary BYTES come back as bytes, JSON ones (HTTP binary_data=False) as str."""
    arr = result.as_numpy("text_output")
    if arr is None or arr.size != 1:
        return None
    v = arr.reshape(-1)[0]
    return v.decode("utf-8") if isinstance(v, bytes) else v
