#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""--api-key and --ssl-certfile/--ssl-keyfile on the gRPC port, as on HTTP:
every method but the health ones (ServerLive, ServerReady, ModelReady) needs
the metadata "authorization: Bearer KEY" (UNAUTHENTICATED otherwise), and
with TLS the gRPC port speaks TLS with the same certificate."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grpclib as gl  # noqa: E402

sl = gl.sl
tap = sl.Tap()
TL3, REF3, PROMPTS, (pb, pb_grpc, grpc) = gl.setup(tap)
KEY = "sk-grpc-0123456789abcdef"


def code_of(fn):
    try:
        fn()
        return grpc.StatusCode.OK
    except grpc.RpcError as e:
        return e.code()


def check_api_key(port):
    st = pb_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(f"127.0.0.1:{port}"))
    good = [("authorization", f"Bearer {KEY}")]
    for name, md in [("no key", None), ("a wrong key", [("authorization", f"Bearer {KEY}x")]),
                     ("a key prefix", [("authorization", f"Bearer {KEY[:-1]}")]),
                     ("no Bearer", [("authorization", KEY)])]:
        tap.eq(code_of(lambda: st.ModelMetadata(pb.ModelMetadataRequest(name="vllm_model"),
                                                metadata=md, timeout=60)),
               grpc.StatusCode.UNAUTHENTICATED, f"ModelMetadata with {name}: UNAUTHENTICATED")
    tap.eq(code_of(lambda: st.ModelInfer(gl.infer_request(pb, PROMPTS[0]), timeout=60)),
           grpc.StatusCode.UNAUTHENTICATED, "ModelInfer without the key: UNAUTHENTICATED")
    tap.eq(code_of(lambda: list(st.ModelStreamInfer(iter([gl.infer_request(
        pb, PROMPTS[0], stream=True)]), timeout=60))),
           grpc.StatusCode.UNAUTHENTICATED, "ModelStreamInfer without the key: UNAUTHENTICATED")
    for m, req in [("ServerLive", pb.ServerLiveRequest()), ("ServerReady", pb.ServerReadyRequest()),
                   ("ModelReady", pb.ModelReadyRequest(name="vllm_model"))]:
        tap.eq(code_of(lambda: getattr(st, m)(req, timeout=60)), grpc.StatusCode.OK,
               f"{m} needs no key")
    r = st.ModelInfer(gl.infer_request(pb, PROMPTS[0], sampling={"max_tokens": 4,
                                                                 "temperature": 0}),
                      metadata=good, timeout=120)
    tap.ok(len(gl.text_of(r)) > 0, "ModelInfer with the key: answered")
    # That a stream comes in pieces is test_grpc's: a late sender may coalesce 4 tokens.
    res = list(st.ModelStreamInfer(iter([gl.infer_request(
        pb, PROMPTS[0], stream=True, sampling={"max_tokens": 4, "temperature": 0})]),
        metadata=good, timeout=120))
    tap.ok(res and not any(r.error_message for r in res) and
           gl.is_final(res[-1].infer_response) and
           "".join(gl.text_of(r.infer_response) for r in res),
           "ModelStreamInfer with the key: streamed, to a final response", res)


def check_tls(port, cert):
    with open(cert, "rb") as f:
        creds = grpc.ssl_channel_credentials(root_certificates=f.read())
    st = pb_grpc.GRPCInferenceServiceStub(grpc.secure_channel(f"localhost:{port}", creds))
    r = st.ServerLive(pb.ServerLiveRequest(), timeout=60)
    tap.ok(r.live, "TLS: a client that trusts the certificate is served")
    r = st.ModelInfer(gl.infer_request(pb, PROMPTS[0], sampling={"max_tokens": 4,
                                                                 "temperature": 0}),
                      timeout=120)
    tap.ok(len(gl.text_of(r)) > 0, "TLS: ModelInfer answered")
    plain = pb_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(f"127.0.0.1:{port}"))
    tap.eq(code_of(lambda: plain.ServerLive(pb.ServerLiveRequest(), timeout=10)),
           grpc.StatusCode.UNAVAILABLE, "TLS: a plaintext client is not served")


def main():
    root = sl.tmpdir("grpc-security")
    srv = None
    try:
        repo = gl.make_repo(root, TL3)
        srv = gl.start_server(tap, repo, root, "--api-key", KEY)
        check_api_key(srv.grpc_port)
        tap.eq(srv.stop(), 0, "--api-key server: SIGTERM exits 0")
        cert, key = os.path.join(root, "cert.pem"), os.path.join(root, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                       check=True, capture_output=True)
        srv = gl.start_server(tap, repo, root, "--ssl-certfile", cert, "--ssl-keyfile", key)
        check_tls(srv.grpc_port, cert)
        tap.eq(srv.stop(), 0, "TLS server: SIGTERM exits 0")
        srv = None
    finally:
        if srv:
            srv.stop()
    tap.done()


if __name__ == "__main__":
    main()
