#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile and careless clients of rbln-serve's HTTP transport (issue 12).

- Lock-out: a thousand idle connections from one address, hundreds of idle
  and trickling ones from many addresses, on the HTTP and the metrics port,
  while real requests (health, metadata, generate, /metrics) must each be
  answered within a second; tricklers are then ended by the header and body
  deadlines (408), silent ones by the deadlines and the inactivity timeout,
  and a TLS ClientHello sent to the plain port is closed too.  The global
  connection bound holds, and those over it are served once others leave.
  Requests that wait for the engine longer than the idle timeout (a whole
  answer, a stream) are not cut off.
- Huge prompts (30 MB) are refused before tokenizing, naming the byte
  bound, while a small request is answered within a second.
- NUL: %00 in a URL and "\\u0000" in JSON text are not truncated; two
  Content-Length headers (or one with chunked coding) are refused; errors
  name no server path (10 MB of spaces); a half-closed client is told why
  its request was cancelled.
"""
import json
import os
import resource
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servelib as sl  # noqa: E402

tap = sl.Tap()
MODELS = sl.models_dir(tap)
TL3 = os.path.join(MODELS, "tiny-llama3")

HEADER_S, BODY_S, IDLE_S = 2, 3, 1
# What "answered at once" means while the server is under attack.
PROMPT_S = 1.0
GEN = {"text_input": "Hello", "parameters": {"max_tokens": 1, "temperature": 0}}


def raise_fd_limit(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))


def connect(port, src, timeout=10):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((src, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


def open_many(port, n, sources, first=b""):
    """n connections spread over the source addresses; returns those connected."""
    out = []
    for i in range(n):
        try:
            s = connect(port, sources[i % len(sources)])
            if first:
                s.sendall(first)
            out.append(s)
        except OSError:
            pass
    return out


def closed_by_server(s, timeout, deadline=None):
    """Reads until the server ends the connection; returns what it sent, or None if it did not.

    With a deadline (time.monotonic()), waits no later than it, whatever timeout says.
    """
    data = b""
    try:
        while True:
            left = timeout if deadline is None else deadline - time.monotonic()
            s.settimeout(max(0.01, left))
            chunk = s.recv(4096)
            if not chunk:
                return data
            data += chunk
    except socket.timeout:
        return None
    except OSError:
        return data


def all_closed(socks, timeout):
    """What each socket got before the server closed it (None: still open) within timeout."""
    deadline = time.monotonic() + timeout
    return [closed_by_server(s, timeout, deadline) for s in socks]


class Trickler(threading.Thread):
    """Sends one byte every quarter second on each socket until stopped or closed.

    Four times within the server's idle timeout (IDLE_S), which ends a connection that
    sends nothing: with one byte every half second, a CI run under AddressSanitizer
    beside other tests saw the tricklers closed by it, without the 408 of the deadlines.
    """

    def __init__(self, socks, payload):
        super().__init__(daemon=True)
        self.socks, self.payload, self.stop = list(socks), payload, threading.Event()

    def run(self):
        pos = 0
        while not self.stop.is_set() and self.socks:
            for s in list(self.socks):
                try:
                    s.send(self.payload[pos % len(self.payload):pos % len(self.payload) + 1],
                           socket.MSG_DONTWAIT)
                except OSError:
                    self.socks.remove(s)
            pos += 1
            self.stop.wait(0.25)


def timed(fn):
    t0 = time.monotonic()
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - any failure is the answer "not served"
        r = f"{type(e).__name__}: {e}"
    return r, time.monotonic() - t0


def generate_baseline(srv):
    """The quickest of three 1-token generates on an idle server, in seconds."""
    return min(timed(lambda: srv.request("POST", "/v2/models/tl3/generate",
                                         json.dumps(GEN).encode(), timeout=30))[1]
               for _ in range(3))


def served_quickly(srv, what):
    """Real requests, each on a new connection from 127.0.0.1, each within PROMPT_S.

    A generate also computes a token: it gets PROMPT_S on top of what it
    takes on the idle server (slow under sanitizers on a loaded machine).
    """
    checks = [
        ("GET /v2/health/ready", lambda: srv.request("GET", "/v2/health/ready",
                                                     timeout=10)[0]),
        ("GET /v2/models/tl3", lambda: srv.request("GET", "/v2/models/tl3", timeout=10)[0]),
        ("POST generate", lambda: srv.request("POST", "/v2/models/tl3/generate",
                                              json.dumps(GEN).encode(), timeout=10)[0]),
        ("GET /metrics", lambda: sl.request(srv.metrics_port, "GET", "/metrics",
                                            timeout=10)[0]),
    ]
    for name, fn in checks:
        bound = PROMPT_S + (2 * srv.gen_s if name == "POST generate" else 0)
        st, dt = timed(fn)
        tap.ok(st == 200 and dt < bound, f"{what}: {name} answered 200 at once",
               (st, f"{dt:.3f}s, bound {bound:.3f}s"))


def close_all(socks):
    for s in socks:
        try:
            s.close()
        except OSError:
            pass


def check_lockout(srv):
    """The issue's attack, on both ports, and the deadlines that end it."""
    raise_fd_limit(8192)
    hold = []
    tricklers = []
    try:
        # 1,000 idle connections from one address per port: the per-client
        # bound (128) keeps all but a few of them out.
        one = open_many(srv.http_port, 1000, ["127.0.0.2"])
        one_m = open_many(srv.metrics_port, 1000, ["127.0.0.2"])
        hold += one + one_m
        refused = [d for d in all_closed(one[200:], 2) if d is not None]
        tap.ok(len(refused) == len(one[200:]),
               "1,000 connections from one address: those over the per-client bound are "
               "closed at once", f"{len(refused)} of {len(one[200:])} closed")
        # Hundreds from many addresses: idle, half-sent headers, half-sent bodies, and
        # a TLS ClientHello on the plain port.
        many = [f"127.0.0.{i}" for i in range(10, 60)]
        idle = open_many(srv.http_port, 300, many)
        idle_m = open_many(srv.metrics_port, 100, many)
        heads = open_many(srv.http_port, 100, many, b"POST /v2/models/tl3/generate HTTP/1.1\r\n")
        bodies = open_many(srv.http_port, 50, many,
                           b"POST /v2/models/tl3/generate HTTP/1.1\r\nHost: x\r\n"
                           b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
        hellos = open_many(srv.http_port, 20, many,
                           bytes.fromhex("160301020001000200fe"))
        hold += idle + idle_m + heads + bodies + hellos
        tap.eq((len(idle), len(idle_m), len(heads), len(bodies), len(hellos)),
               (300, 100, 100, 50, 20), "570 slow connections from 50 addresses accepted")
        tricklers = [Trickler(heads, b"X-Slow: " + b"a" * 64), Trickler(bodies, b'"' * 64)]
        for t in tricklers:
            t.start()
        served_quickly(srv, f"{len(hold) - len(refused)} hostile connections held")
        # The deadlines: header tricklers after HEADER_S, body tricklers BODY_S after
        # their headers, silent ones by the header deadline too; all told 408.
        t0 = time.monotonic()
        got_heads = all_closed(heads, HEADER_S + 4)
        tap.ok(all(d is not None and d.startswith(b"HTTP/1.1 408") and b"header" in d
                   for d in got_heads),
               f"trickled headers: 408 and closed by the {HEADER_S}s header deadline",
               [d[:60] if d else d for d in got_heads[:3]])
        got_bodies = all_closed(bodies, BODY_S + 4)
        tap.ok(all(d is not None and d.startswith(b"HTTP/1.1 408") and b"body" in d
                   for d in got_bodies),
               f"trickled body: 408 and closed by the {BODY_S}s body deadline",
               [d[:60] if d else d for d in got_bodies[:3]])
        tap.ok(all(d is not None for d in all_closed(hellos, HEADER_S + 4)),
               "a TLS ClientHello on the plain port is closed, not held for ever")
        tap.ok(all(d is not None for d in all_closed(idle + idle_m, HEADER_S + 4)),
               "silent connections on both ports are closed", f"{time.monotonic() - t0:.1f}s")
        served_quickly(srv, "after the deadlines")
    finally:
        for t in tricklers:
            t.stop.set()
        close_all(hold)


def check_idle_keepalive(srv):
    """A kept-alive connection that goes quiet is closed by the inactivity timeout."""
    s = connect(srv.http_port, "127.0.0.1")
    try:
        s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        first = s.recv(4096)
        data = closed_by_server(s, IDLE_S + HEADER_S + 4)
        tap.ok(first.startswith(b"HTTP/1.1 200") and data is not None,
               "a quiet kept-alive connection is closed after the idle and header time",
               (first[:40], data))
    finally:
        s.close()


def answered(socks, timeout):
    """The sockets that got an answer to the request they sent within timeout."""
    out = []
    deadline = time.monotonic() + timeout
    for s in socks:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            if s.recv(4096).startswith(b"HTTP/1.1 200"):
                out.append(s)
        except OSError:
            pass
    return out


def check_long_requests(srv):
    """Waiting for the engine longer than the idle timeout is not idleness: a whole
    answer and a stream that take seconds are served, with the same greedy text."""
    params = {"max_tokens": 1900, "ignore_eos": True, "temperature": 0}
    body = {"text_input": "Hello", "exclude_input_in_output": True, "parameters": params}
    (st, hd, data), dt = timed(lambda: srv.request(
        "POST", "/v2/models/tl3/generate", json.dumps(body).encode(), timeout=300))
    whole = sl.parse_json(data).get("text_output") or ""
    tap.ok(st == 200 and whole, f"a whole answer of 1900 tokens ({dt:.1f}s, idle timeout "
           f"{IDLE_S}s): 200", st)
    body["stream"] = True
    (st, hd, data), dt = timed(lambda: srv.request(
        "POST", "/v2/models/tl3/generate_stream", json.dumps(body).encode(), timeout=300))
    text = "".join(json.loads(e).get("text_output", "") for e in sl.parse_sse(data)) \
        if st == 200 else ""
    tap.ok(st == 200 and text == whole, f"the same as a stream ({dt:.1f}s): the same text",
           (st, len(text), len(whole)))


def check_connection_limit(srv):
    """--http-max-connections: no more are served at once; the others wait, then are served."""
    hold = []
    try:
        hold = open_many(srv.http_port, 60, [f"127.0.0.{i}" for i in range(100, 160)],
                         b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        first = answered(hold, 2)
        tap.eq(len(first), 40, "60 kept-alive clients with --http-max-connections 40: 40 served")
        close_all(first)
        rest = [s for s in hold if s not in first]
        later = answered(rest, 2)
        tap.eq(len(later), 20, "the other 20 waited, and are served once those left")
    finally:
        close_all(hold)


def check_huge_prompts(srv):
    """Six 30 MB prompts at once (more than the HTTP threads): refused without
    tokenizing; others served meanwhile."""
    big = json.dumps({"text_input": "word " * (6 << 20),
                      "parameters": {"max_tokens": 1}}).encode()
    results = [None] * 6

    def send(i):
        try:
            results[i] = srv.request("POST", "/v2/models/tl3/generate", big, timeout=300)
        except OSError as e:
            results[i] = (type(e).__name__, {}, str(e).encode())

    ths = [threading.Thread(target=send, args=(i,)) for i in range(len(results))]
    for t in ths:
        t.start()
    time.sleep(0.2)
    st, dt = timed(lambda: srv.request("POST", "/v2/models/tl3/generate",
                                       json.dumps(GEN).encode(), timeout=30)[0])
    # The huge bodies take CPU time to receive and parse (a core's worth under
    # sanitizers): the small request may slow down, but not wait for them.
    bound = PROMPT_S + 4 * srv.gen_s
    tap.ok(st == 200 and dt < bound,
           "a small generate is answered at once while 30 MB prompts arrive",
           (st, f"{dt:.3f}s, bound {bound:.3f}s"))
    for t in ths:
        t.join()
    msgs = [sl.parse_json(r[2]).get("error", "") if r else "" for r in results]
    tap.ok(all(r and r[0] == 400 for r in results) and
           all("bytes" in m and "max_model_len" in m for m in msgs),
           "30 MB prompts: 400 naming the byte bound of max_model_len",
           [(r[0] if r else r, m[:160]) for r, m in zip(results, msgs)])


def no_path(text):
    return MODELS not in text and "/tmp/" not in text and "/engine/" not in text


def check_paths(srv):
    """Errors name what is wrong with the request, never a server file."""
    spaces = json.dumps({"text_input": " " * (10 << 20),
                         "parameters": {"max_tokens": 1}}).encode()
    st, hd, data = srv.request("POST", "/v2/models/tl3/generate", spaces, timeout=60)
    err = sl.parse_json(data).get("error", "")
    tap.ok(st == 400 and err and no_path(err), "10 MB of spaces: 400 naming no server path",
           (st, err[:200]))
    bad_utf8 = b'{"text_input": "\xff\xfe", "parameters": {"max_tokens": 1}}'
    st, hd, data = srv.request("POST", "/v2/models/tl3/generate", bad_utf8)
    err = sl.parse_json(data).get("error", "")
    tap.ok(st == 400 and err and no_path(err), "invalid UTF-8: 400 naming no server path",
           (st, err[:200]))


def check_template_error_paths(root):
    """tiny-llama2's chat_template.jinja raises on roles that do not alternate: the
    error says so, and names the template file, but not the directory it is in."""
    model = sl.compile_model(os.path.join(MODELS, "tiny-llama2"), os.path.join(root, "tl2"),
                             "--batch-size", "4", "--max-seq-len", "256",
                             "--decoder-batch-sizes", "4,1")
    srv = sl.Server(["--model", model, "--served-model-name", "tl2"], root)
    try:
        st, b = srv.post_json("/v1/chat/completions", {"messages": [
            {"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
            "max_tokens": 1})
        err = json.dumps(b)
        tap.ok(st == 400 and "alternate" in err and "chat_template.jinja" in err and
               no_path(err) and root not in err,
               "a chat template's error: 400 naming the template file, not its directory",
               (st, err[:300]))
    finally:
        tap.eq(srv.stop(), 0, "tiny-llama2 server: SIGTERM exits 0")


def check_nul(srv):
    st, hd, data = srv.request("GET", "/v2/models/tl3%00x/config")
    err = sl.parse_json(data).get("error", "")
    tap.ok(st == 404 and "tl3%00x" in err, "/v2/models/tl3%00x/config: 404 for that name, "
           "not tl3's config", (st, err))
    st, hd, data = srv.request("GET", "/v2/models/tl3/config")
    tap.eq(st, 200, "/v2/models/tl3/config itself: 200")
    for path, body in [
        ("/v2/models/tl3/generate", b'{"text_input": "a\\u0000b", "parameters": {"max_tokens": 1}}'),
        ("/v2/models/tl3/generate", b'{"text_input": "a", "parameters": {"max_tokens": 1, '
                                    b'"stop\\u0000x": ["b"]}}'),
        ("/v1/completions", b'{"prompt": "a\\u0000b", "max_tokens": 1}'),
        ("/v1/chat/completions", b'{"messages": [{"role": "user", "content": "a\\u0000b"}], '
                                 b'"max_tokens": 1}'),
    ]:
        st, hd, data = srv.request("POST", path, body)
        err = json.dumps(sl.parse_json(data))
        tap.ok(st == 400 and "NUL" in err, f"{path} with \\u0000 in text: 400 saying NUL",
               (st, err[:200]))
    body = b'{"text_input": "a\\\\u0000b", "parameters": {"max_tokens": 1}}'
    st, hd, data = srv.request("POST", "/v2/models/tl3/generate", body)
    tap.eq(st, 200, "an escaped backslash before u0000 is text, not NUL: 200")
    st, hd, data = srv.request("POST", "/v2/models/tl3/generate", b'{"text_input": "a\x00b"}')
    tap.ok(st == 400, "a raw NUL byte in the body: 400", (st, data[:200]))


def raw_request(port, data, timeout=10):
    s = connect(port, "127.0.0.1", timeout)
    try:
        s.sendall(data)
        return closed_by_server(s, timeout) or b""
    finally:
        s.close()


def check_framing(srv):
    body = json.dumps(GEN).encode()
    head = (b"POST /v2/models/tl3/generate HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\nConnection: close\r\n")
    two = head + b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (len(body), len(body))
    r = raw_request(srv.http_port, two + body)
    tap.ok(r.startswith(b"HTTP/1.1 400") and b"Content-Length" in r,
           "two Content-Length headers: 400 naming them", r[:300])
    te = head + b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n" % len(body)
    r = raw_request(srv.http_port, te + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")
    tap.ok(r.startswith(b"HTTP/1.1 400") and b"Transfer-Encoding" in r,
           "Content-Length with chunked coding: 400 naming both", r[:300])
    one = head + b"Content-Length: %d\r\n\r\n" % len(body)
    r = raw_request(srv.http_port, one + body)
    tap.ok(r.startswith(b"HTTP/1.1 200"), "one Content-Length: 200", r[:200])


def check_half_close(srv):
    """A client that shuts its sending side: told why its request was cancelled."""
    # The shutdown once the request runs: a fixed pause could outlast a
    # greedy request on a fast machine.
    body = json.dumps({"text_input": "Hello", "parameters": sl.HOLD}).encode()
    s = connect(srv.http_port, "127.0.0.1", 60)
    try:
        s.sendall(b"POST /v2/models/tl3/generate HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        sl.wait_metric(srv, lambda m: sl.gauge(m, "vllm:num_requests_running") >= 1, 30)
        s.shutdown(socket.SHUT_WR)
        r = closed_by_server(s, 60) or b""
    finally:
        s.close()
    tap.ok(r.startswith(b"HTTP/1.1 400") and b"half-close" in r,
           "a half-closed client is answered 400 saying why it was cancelled", r[:400])


def main():
    with sl.Harness(tap, "hostile") as h:
        root = h.root
        model = sl.compile_model(TL3, os.path.join(root, "tl3"), "--batch-size", "4",
                                 "--max-seq-len", "2048", "--decoder-batch-sizes", "4,1")
        srv = h.start(["--model", model, "--served-model-name", "tl3",
                      "--http-header-timeout", str(HEADER_S),
                      "--http-body-timeout", str(BODY_S),
                      "--http-idle-timeout", str(IDLE_S)])
        srv.gen_s = generate_baseline(srv)
        tap.note(f"a 1-token generate takes {srv.gen_s:.3f}s on the idle server")
        check_lockout(srv)
        check_idle_keepalive(srv)
        check_long_requests(srv)
        check_nul(srv)
        check_framing(srv)
        check_half_close(srv)
        tap.eq(h.stop(), 0, "SIGTERM: exit 0")
        # The default deadlines (huge bodies take a while to send under sanitizers).
        srv = h.start(["--model", model, "--served-model-name", "tl3",
                      "--http-max-connections", "40"])
        srv.gen_s = generate_baseline(srv)
        check_connection_limit(srv)
        check_huge_prompts(srv)
        check_paths(srv)
        tap.eq(h.stop(), 0, "--http-max-connections server: SIGTERM exits 0")
        check_template_error_paths(root)
    tap.done()


if __name__ == "__main__":
    main()
