# SPDX-License-Identifier: MIT
"""rbln-serve's .proto files (engine/src/serve/grpc/proto) against Triton's
(tests/third_party/tritonclient/protobuf), compared as protoc reads them:
every message, field, enum value and service method of ours must be in
Triton's with the same number, type and label (ours may leave some of
Triton's out: the methods it answers UNIMPLEMENTED).  tritonclient then
talks to the server with Triton's; this says where a difference would be.
"""
import os
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2

import tclib

OURS = os.path.normpath(os.path.join(tclib.HERE, "..", "..", "..", "engine", "src", "serve",
                                     "grpc", "proto"))
FILES = ("grpc_service.proto", "model_config.proto")


def _descriptors(proto_dir):
    """{full name: descriptor} of the messages, enums and services in FILES."""
    with tempfile.TemporaryDirectory(prefix="rbln-protos.") as tmp:
        out = os.path.join(tmp, "set.pb")
        cmd = [sys.executable, "-m", "grpc_tools.protoc", f"-I{proto_dir}",
               f"--descriptor_set_out={out}", *FILES]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
        with open(out, "rb") as f:
            fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    found = {}

    def walk(prefix, messages, enums):
        for e in enums:
            found[f"{prefix}.{e.name}"] = e
        for m in messages:
            found[f"{prefix}.{m.name}"] = m
            walk(f"{prefix}.{m.name}", m.nested_type, m.enum_type)

    for fd in fds.file:
        walk(fd.package, fd.message_type, fd.enum_type)
        for s in fd.service:
            found[f"{fd.package}.{s.name}"] = s
    return found


def _differences(ours, theirs):
    """What of ours is missing from or different in theirs, one line each."""
    out = []
    for name, d in sorted(ours.items()):
        t = theirs.get(name)
        if t is None:
            out.append(f"{name}: not in Triton's .proto")
        elif isinstance(d, descriptor_pb2.DescriptorProto):
            tf = {f.name: f for f in t.field}
            for f in d.field:
                g = tf.get(f.name)
                if g is None or (f.number, f.type, f.label, f.type_name, f.oneof_index) != \
                        (g.number, g.type, g.label, g.type_name, g.oneof_index):
                    out.append(f"{name}.{f.name}: ours {f.number}/{f.type}/{f.type_name}, "
                               f"Triton's {g and (g.number, g.type, g.type_name)}")
        elif isinstance(d, descriptor_pb2.EnumDescriptorProto):
            tv = {v.name: v.number for v in t.value}
            out += [f"{name}.{v.name}: ours {v.number}, Triton's {tv.get(v.name)}"
                    for v in d.value if tv.get(v.name) != v.number]
        else:
            tm = {m.name: m for m in t.method}
            for m in d.method:
                g = tm.get(m.name)
                if g is None or (m.input_type, m.output_type, m.server_streaming,
                                 m.client_streaming) != (g.input_type, g.output_type,
                                                         g.server_streaming, g.client_streaming):
                    out.append(f"{name}/{m.name}: not as Triton's")
    return out


def check(case):
    ours, theirs = _descriptors(OURS), _descriptors(tclib.PROTO_DIR)
    diff = _differences(ours, theirs)
    case.tap.ok(not diff and len(ours) > 50,
                f"our .proto: its {len(ours)} messages, enums and services have Triton's "
                "field numbers, types and methods", "\n".join(diff))
    service = ours.get("inference.GRPCInferenceService")
    methods = sorted(m.name for m in service.method) if service else []
    case.tap.note("GRPCInferenceService methods in ours: " + ", ".join(methods))
