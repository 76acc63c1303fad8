#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compressed request bodies and responses of rbln-serve's HTTP service (issue 11).

What tritonclient's HTTP client does with request_compression_algorithm and
response_compression_algorithm, done here with http.client and zlib/gzip
(tritonclient is not packaged by Debian), plus curl --compressed:

- gzip and deflate request bodies (JSON, and the binary tensor form with
  Inference-Header-Content-Length) answer as the same body sent plain;
  several gzip members are one body;
- Accept-Encoding gzip/deflate compresses whole inference answers
  (Content-Encoding, Vary), q=0 and identity do not; as tritonserver, other
  answers (config, metadata, statistics) and errors are sent as they are;
  event streams stay uncompressed;
- an unknown coding is 415 with the codings taken in Accept-Encoding;
- corrupt, truncated and trailing-garbage streams, a gzip trailer claiming
  2 GB, and a zip bomb (64 MB of zeros in 64 kB, against a 1 MB
  --http-max-input-size) are 400s naming the problem, and the bomb does not
  grow the server's memory past the bound.
"""
import gzip
import json
import os
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servelib as sl  # noqa: E402

tap = sl.Tap()
MODELS = sl.models_dir(tap)
TL3 = os.path.join(MODELS, "tiny-llama3")
MAX_INPUT = 1 << 20
GEN = {"text_input": "The capital of France is", "exclude_input_in_output": True,
       "parameters": {"max_tokens": 6, "temperature": 0}}
JSON = {"Content-Type": "application/json"}


def error_of(data):
    return sl.parse_json(data).get("error", "")


def post(srv, path, body, headers):
    return srv.request("POST", path, body, {**JSON, **headers})


def check_request_bodies(srv):
    plain = json.dumps(GEN).encode()
    st, hd, want = post(srv, "/v2/models/tl3/generate", plain, {})
    tap.eq(st, 200, "plain generate: 200")
    want = sl.parse_json(want).get("text_output")
    for name, data in (("gzip", gzip.compress(plain)), ("deflate", zlib.compress(plain)),
                       ("x-gzip", gzip.compress(plain)), ("GZip", gzip.compress(plain))):
        st, hd, b = post(srv, "/v2/models/tl3/generate", data, {"Content-Encoding": name})
        tap.ok(st == 200 and sl.parse_json(b).get("text_output") == want,
               f"Content-Encoding {name}: the same answer as the plain body", (st, b, want))
    half = len(plain) // 2
    two = gzip.compress(plain[:half]) + gzip.compress(plain[half:])
    st, hd, b = post(srv, "/v2/models/tl3/generate", two, {"Content-Encoding": "gzip"})
    tap.ok(st == 200 and sl.parse_json(b).get("text_output") == want,
           "gzip body of two members: read as one body (RFC 1952)", (st, b))
    st, hd, b = post(srv, "/v2/models/tl3/generate", plain, {"Content-Encoding": "identity"})
    tap.eq(st, 200, "Content-Encoding identity: taken as it is")
    # OpenAI route, gzip
    chat = {"model": "tl3", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
    st, hd, b = post(srv, "/v1/chat/completions", gzip.compress(json.dumps(chat).encode()),
                     {"Content-Encoding": "gzip"})
    tap.ok(st == 200 and sl.parse_json(b).get("object") == "chat.completion",
           "/v1/chat/completions with a gzip body: 200", (st, b))


def binary_infer_body(text):
    """tritonclient's binary form: JSON header, then a BYTES element (length, bytes)."""
    raw = text.encode()
    elem = struct.pack("<I", len(raw)) + raw
    head = json.dumps({"inputs": [{"name": "text_input", "shape": [1], "datatype": "BYTES",
                                   "parameters": {"binary_data_size": len(elem)}}],
                       "parameters": {"max_tokens": 4, "temperature": 0}}).encode()
    return head + elem, len(head)


def check_binary_infer(srv):
    body, jlen = binary_infer_body("Hello")
    hdr = {"Inference-Header-Content-Length": str(jlen)}
    st, hd, want = post(srv, "/v2/models/tl3/infer", body, hdr)
    tap.eq(st, 200, "binary infer, plain: 200")
    for name, pack in (("gzip", gzip.compress), ("deflate", zlib.compress)):
        st, hd, b = post(srv, "/v2/models/tl3/infer", pack(body),
                         {**hdr, "Content-Encoding": name})
        tap.ok(st == 200 and b == want,
               f"binary infer with a {name} body (header length of the inflated JSON): same "
               "answer", (st, b, want))
        # the answer compressed too, as response_compression_algorithm asks
        st, hd, b = post(srv, "/v2/models/tl3/infer", pack(body),
                         {**hdr, "Content-Encoding": name, "Accept-Encoding": name})
        got = b
        if hd.get("Content-Encoding") == "gzip":
            got = gzip.decompress(b)
        elif hd.get("Content-Encoding") == "deflate":
            got = zlib.decompress(b)
        tap.ok(st == 200 and hd.get("Content-Encoding") == name and got == want,
               f"infer, {name} both ways: the answer inflates to the plain one",
               (st, hd, got, want))


def check_responses(srv):
    gen = json.dumps(GEN).encode()
    st, hd, plain = post(srv, "/v2/models/tl3/generate", gen, {})
    tap.eq(st, 200, "generate, plain: 200")
    for accept, coding, unpack in (("gzip", "gzip", gzip.decompress),
                                   ("deflate", "deflate", zlib.decompress),
                                   ("deflate;q=0.5, gzip;q=0.9", "gzip", gzip.decompress),
                                   ("gzip;q=0.1, deflate", "deflate", zlib.decompress),
                                   ("br, *", "gzip", gzip.decompress)):
        st, hd, b = post(srv, "/v2/models/tl3/generate", gen, {"Accept-Encoding": accept})
        ok = st == 200 and hd.get("Content-Encoding") == coding
        tap.ok(ok and unpack(b) == plain and "Accept-Encoding" in hd.get("Vary", ""),
               f"Accept-Encoding {accept!r}: {coding}, inflates to the plain answer, Vary",
               (st, hd))
    for accept in ("identity", "gzip;q=0, deflate;q=0", "br"):
        st, hd, b = post(srv, "/v2/models/tl3/generate", gen, {"Accept-Encoding": accept})
        tap.ok(st == 200 and "Content-Encoding" not in hd and b == plain,
               f"Accept-Encoding {accept!r}: sent as it is", (st, hd))
    # tritonserver compresses inference answers only; tritonclient.http.aio
    # asks for gzip on every call and reads the other answers as they come
    st, hd, plain = srv.request("GET", "/v2/models/tl3/config")
    for path in ("/v2/models/tl3/config", "/v2", "/v2/models/tl3/stats"):
        st, hd, b = srv.request("GET", path, None, {"Accept-Encoding": "gzip, deflate"})
        tap.ok(st == 200 and "Content-Encoding" not in hd and json.loads(b),
               f"GET {path} with Accept-Encoding gzip: sent as it is, as tritonserver does",
               (st, hd))
    st, hd, b = post(srv, "/v2/models/tl3/generate", b"{", {"Accept-Encoding": "gzip"})
    tap.ok(st == 400 and "Content-Encoding" not in hd and "error" in json.loads(b),
           "errors are sent as they are, as tritonserver's", (st, hd))
    body = dict(GEN, stream=True)
    st, hd, b = post(srv, "/v2/models/tl3/generate_stream", json.dumps(body).encode(),
                     {"Accept-Encoding": "gzip"})
    tap.ok(st == 200 and "Content-Encoding" not in hd and len(sl.parse_sse(b)) >= 1,
           "generate_stream with Accept-Encoding gzip: events sent uncompressed", (st, hd, b))
    # curl --compressed, as the tutorials' curl commands could be run
    st, hd, plain = post(srv, "/v2/models/tl3/generate", gen, {})
    r = subprocess.run(["curl", "-sS", "--compressed", "-D", "-", "-o", "/dev/stdout",
                        "-H", "Content-Type: application/json", "--data-binary", "@-",
                        f"http://127.0.0.1:{srv.http_port}/v2/models/tl3/generate"],
                       input=gen, capture_output=True, timeout=60)
    head, _, data = r.stdout.partition(b"\r\n\r\n")
    tap.ok(r.returncode == 0 and b"content-encoding:" in head.lower() and data == plain,
           "curl --compressed: a compressed answer that curl inflates to the plain one",
           (r.returncode, head, r.stderr))
    r = subprocess.run(["curl", "-sS", "-H", "Content-Type: application/json",
                        "-H", "Content-Encoding: gzip", "--data-binary", "@-",
                        f"http://127.0.0.1:{srv.http_port}/v2/models/tl3/generate"],
                       input=gzip.compress(json.dumps(GEN).encode()), capture_output=True,
                       timeout=120)
    tap.ok(r.returncode == 0 and "text_output" in sl.parse_json(r.stdout),
           "curl posting a gzip body: answered", (r.returncode, r.stdout, r.stderr))


def vm_hwm_kb(pid):
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def check_bad_streams(srv):
    plain = json.dumps(GEN).encode()
    gz = gzip.compress(plain)
    path = "/v2/models/tl3/generate"

    def bad(desc, data, coding, status, words):
        st, hd, b = post(srv, path, data, {"Content-Encoding": coding})
        err = error_of(b)
        tap.ok(st == status and all(w in err for w in words), desc, (st, hd, b))
        return hd

    hd = bad("Content-Encoding br: 415 naming it", plain, "br", 415, ["Unsupported", "br"])
    tap.eq(hd.get("Accept-Encoding"), "gzip, deflate", "415 says which codings are taken")
    bad("two codings in turn (gzip, deflate): 415", gz, "gzip, deflate", 415, ["Unsupported"])
    bad("truncated gzip: 400 'truncated'", gz[:len(gz) // 2], "gzip", 400,
        ["gzip", "truncated"])
    bad("gzip without its trailer: 400 'truncated'", gz[:-8], "gzip", 400, ["truncated"])
    bad("gzip then garbage: 400 naming the trailing bytes", gz + b"garbage!", "gzip", 400,
        ["8 bytes of trailing data"])
    bad("deflate then garbage: 400", zlib.compress(plain) + b"xx", "deflate", 400,
        ["2 bytes of trailing data"])
    bad("a plain body labelled gzip: 400 'corrupt'", plain, "gzip", 400,
        ["gzip request body is corrupt"])
    bad("gzip sent as deflate: 400 'corrupt'", gz, "deflate", 400, ["deflate", "corrupt"])
    flipped = bytearray(gz)
    flipped[len(gz) // 2] ^= 0xff
    bad("a flipped byte in the gzip data: 400", bytes(flipped), "gzip", 400, ["corrupt"])
    claims = gz[:-4] + struct.pack("<I", 2 << 30)
    bad("gzip trailer claiming 2 GB: 400 (length check), nothing allocated for it", claims,
        "gzip", 400, ["corrupt", "length"])
    pid = srv.proc.pid
    before = vm_hwm_kb(pid)
    bomb = gzip.compress(b"\0" * (64 << 20), compresslevel=9)
    tap.ok(len(bomb) < MAX_INPUT, f"the bomb is {len(bomb)} bytes, under the 1 MB bound")
    bad("zip bomb (64 MB of zeros): 400 naming --http-max-input-size", bomb, "gzip", 400,
        ["exceeds the maximum allowed input size of 1048576", "--http-max-input-size"])
    grown = vm_hwm_kb(pid) - before
    tap.ok(grown < 8 * 1024, f"the bomb grew the server's peak memory by {grown} kB (< 8 MB)")
    st, hd, b = post(srv, path, gz, {"Content-Encoding": "gzip"})
    tap.eq(st, 200, "after all that, a good gzip body is answered")


def main():
    with sl.Harness(tap, "encoding") as h:
        root = h.root
        model = sl.compile_model(TL3, os.path.join(root, "tl3"), "--batch-size", "2",
                                 "--max-seq-len", "512")
        srv = h.start(["--model", model, "--served-model-name", "tl3",
                      "--http-max-input-size", str(MAX_INPUT)])
        check_request_bodies(srv)
        check_binary_infer(srv)
        check_responses(srv)
        check_bad_streams(srv)
        tap.eq(h.stop(), 0, "SIGTERM: exit 0")
    tap.done()


if __name__ == "__main__":
    main()
