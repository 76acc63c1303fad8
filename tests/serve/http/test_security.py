#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rbln-serve's security switches (issue 12).

- --api-key (and RBLN_API_KEY): every route but health and metrics needs
  "Authorization: Bearer KEY" (KServe routes too), 401 otherwise, before any
  body is read; the metrics port needs none.
- --ssl-certfile/--ssl-keyfile: HTTPS with a certificate made here by
  openssl; a client that trusts it is served, plain HTTP to that port gets
  no answer, a half-sent ClientHello is closed by the header deadline, and
  bad or missing files stop the start-up naming the flag.
- The start-up warns when the listen address is reachable from other
  machines without an API key.
"""
import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servelib as sl  # noqa: E402

tap = sl.Tap()
MODELS = sl.models_dir(tap)
TL3 = os.path.join(MODELS, "tiny-llama3")
KEY = "sk-test-0123456789abcdef"
GEN = {"text_input": "Hello", "parameters": {"max_tokens": 1, "temperature": 0}}


def auth(key):
    return {"Authorization": f"Bearer {key}"} if key is not None else {}


def check_api_key(srv, key):
    routes = [("GET", "/v2", None), ("GET", "/v2/models/tl3", None),
              ("GET", "/v2/models/tl3/config", None), ("GET", "/v1/models", None),
              ("POST", "/v2/models/tl3/generate", json.dumps(GEN).encode()),
              ("POST", "/v1/completions", json.dumps({"prompt": "Hi", "max_tokens": 1}).encode()),
              ("POST", "/v2/repository/index", b"{}"), ("GET", "/no/such/route", None)]
    for method, path, body in routes:
        for name, hdrs in [("no key", {}), ("a wrong key", auth(KEY + "x")),
                           ("a key prefix", auth(KEY[:-1])), ("Basic", {"Authorization": KEY})]:
            st, hd, data = srv.request(method, path, body, hdrs)
            tap.ok(st == 401 and "Bearer" in hd.get("WWW-Authenticate", ""),
                   f"{method} {path} with {name}: 401", (st, data[:200]))
        st, hd, data = srv.request(method, path, body, auth(KEY))
        want = 404 if path == "/no/such/route" else 200
        tap.eq(st, want, f"{method} {path} with the key: {want}")
    st, hd, data = srv.request("POST", "/v1/completions", b"{}", {})
    err = sl.parse_json(data).get("error")
    tap.ok(isinstance(err, dict) and err.get("code") == 401,
           "/v1 routes: 401 as OpenAI's error object", data[:200])
    for path in ("/v2/health/live", "/v2/health/ready"):
        st, hd, data = srv.request("GET", path)
        tap.eq(st, 200, f"{path} needs no key")
    st, hd, data = sl.request(srv.metrics_port, "GET", "/metrics")
    tap.eq(st, 200, "/metrics needs no key")
    # A large body without the key is refused before it is read: the answer
    # comes while the client is still sending.
    s = socket.create_connection(("127.0.0.1", srv.http_port), timeout=10)
    try:
        s.sendall(b"POST /v2/models/tl3/generate HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Length: 100000000\r\n\r\n")
        r = s.recv(4096)
    finally:
        s.close()
    tap.ok(r.startswith(b"HTTP/1.1 401"), "a 100 MB body without the key: 401 before the body",
           r[:200])


def make_cert(root):
    cert, key = os.path.join(root, "cert.pem"), os.path.join(root, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)
    return cert, key


def check_tls(root, model, cert, key):
    srv = sl.Server(["--model", model, "--served-model-name", "tl3", "--ssl-certfile", cert,
                     "--ssl-keyfile", key, "--http-header-timeout", "2"], root)
    try:
        tap.ok(srv.wait_line(r"HTTPS"), "start-up says the HTTP port speaks TLS", srv.stdout())
        ctx = ssl.create_default_context(cafile=cert)
        c = http.client.HTTPSConnection("127.0.0.1", srv.http_port, context=ctx, timeout=30)
        try:
            c.request("POST", "/v2/models/tl3/generate", json.dumps(GEN).encode(),
                      {"Content-Type": "application/json"})
            r = c.getresponse()
            body = sl.parse_json(r.read())
            tap.ok(r.status == 200 and "text_output" in body, "HTTPS generate: 200", body)
        finally:
            c.close()
        try:
            st = sl.request(srv.http_port, "GET", "/v2/health/ready", timeout=5)[0]
        except (OSError, http.client.HTTPException) as e:
            st = type(e).__name__
        tap.ok(st != 200, "plain HTTP to the TLS port is not served", st)
        s = socket.create_connection(("127.0.0.1", srv.http_port), timeout=10)
        t0 = time.monotonic()
        try:
            s.sendall(bytes.fromhex("160301020001000200fe"))  # a ClientHello, cut short
            s.settimeout(10)
            try:
                closed = s.recv(4096) == b""
            except ConnectionResetError:
                closed = True
            except socket.timeout:
                closed = False
        finally:
            s.close()
        tap.ok(closed, "a half-sent TLS ClientHello is closed by the header deadline",
               f"{time.monotonic() - t0:.1f}s")
        st, hd, data = sl.request(srv.metrics_port, "GET", "/metrics")
        tap.eq(st, 200, "metrics stay plain HTTP")
    finally:
        tap.eq(srv.stop(), 0, "TLS server: SIGTERM exits 0")


def start_fails(args, root, want, desc):
    r = subprocess.run([sl.serve_bin(), "--host", "127.0.0.1", "--http-port", "0",
                        "--metrics-port", "0", *args], capture_output=True, text=True,
                       env=sl.test_env(), cwd=root, timeout=120)
    tap.ok(r.returncode != 0 and want in r.stderr, desc, (r.returncode, r.stderr[-400:]))


def main():
    with sl.Harness(tap, "security") as h:
        root = h.root
        model = sl.compile_model(TL3, os.path.join(root, "tl3"), "--batch-size", "4",
                                 "--max-seq-len", "256", "--decoder-batch-sizes", "4,1")
        base = ["--model", model, "--served-model-name", "tl3"]
        srv = h.start(base + ["--api-key", KEY])
        check_api_key(srv, KEY)
        tap.eq(h.stop(), 0, "--api-key server: SIGTERM exits 0")
        srv = h.start(base, env={"RBLN_API_KEY": KEY})
        st = srv.request("GET", "/v2/models/tl3")[0]
        st_key = srv.request("GET", "/v2/models/tl3", headers=auth(KEY))[0]
        tap.eq((st, st_key), (401, 200), "RBLN_API_KEY works as --api-key")
        tap.eq(h.stop(), 0, "RBLN_API_KEY server: SIGTERM exits 0")
        start_fails(base + ["--api-key", ""], root, "--api-key", "an empty --api-key is refused")
        cert, key = make_cert(root)
        check_tls(root, model, cert, key)
        start_fails(base + ["--ssl-certfile", cert], root, "--ssl-keyfile",
                    "--ssl-certfile without --ssl-keyfile is refused")
        start_fails(base + ["--ssl-certfile", cert, "--ssl-keyfile",
                            os.path.join(root, "missing.pem")], root, "--ssl-keyfile",
                    "a missing key file is refused, naming the flag")
        start_fails(base + ["--ssl-certfile", key, "--ssl-keyfile", cert], root, "TLS",
                    "a certificate and key swapped: start-up fails")
        r = subprocess.run([sl.serve_bin(), "--help"], capture_output=True, text=True)
        tap.ok("0.0.0.0" in r.stdout and "--api-key" in r.stdout and "reachable" in r.stdout,
               "--help documents the default listen address and its risk", r.stdout[-600:])
        srv = h.start(base + ["--host", "0.0.0.0"])
        tap.ok(srv.wait_line(r"no --api-key.*reachable"),
               "listening on 0.0.0.0 without a key: start-up warns", srv.stdout())
        tap.eq(h.stop(), 0, "0.0.0.0 server: SIGTERM exits 0")
    tap.done()


if __name__ == "__main__":
    main()
