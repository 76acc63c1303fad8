#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""SIGTERM drain: rbln-serve stops accepting, finishes every request in
flight (running and queued, whole answers and streams), answers each exactly
once, and exits 0.  A second signal cancels what still runs, and the server
still exits 0 with every client answered."""
import json
import os
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servelib as sl  # noqa: E402

tap = sl.Tap()
MODELS = sl.models_dir(tap)
TL3 = os.path.join(MODELS, "tiny-llama3")
REF3 = json.load(open(os.path.join(TL3, "reference.json"), encoding="utf-8"))
PROMPTS = [g["prompt"] for g in REF3["generate"] if g["prompt"]]
N = 12   # 3x max_num_seqs: some run, the rest wait when SIGTERM comes


def job(i, long=False):
    stream = i % 2 == 1
    # Long enough that the queue is seen full however fast the engine
    # decodes (40 tokens each went by between two looks at the metrics).
    params = {"temperature": 0, "max_tokens": (400 if long else 150) + 10 * (i % 5),
              "ignore_eos": True}
    return stream, PROMPTS[i % len(PROMPTS)], params


def send(srv, i, results, long):
    """One request on its own connection; records every response it gets."""
    stream, prompt, params = job(i, long)
    path = "/v2/models/tl3/generate_stream" if stream else "/v2/models/tl3/generate"
    body = {"text_input": prompt, "exclude_input_in_output": True, "parameters": params}
    if stream:
        body["stream"] = True
    try:
        st, hd, data = srv.request("POST", path, json.dumps(body).encode(), timeout=300)
        if stream and st == 200:
            ev = [json.loads(e) for e in sl.parse_sse(data)]
            results[i] = (st, "".join(e.get("text_output", "") for e in ev), len(ev))
        else:
            results[i] = (st, sl.parse_json(data).get("text_output"), 1)
    except Exception as e:
        results[i] = ("error", f"{type(e).__name__}: {e}", 0)


def start_batch(srv, long=False):
    results = [None] * N
    ths = [threading.Thread(target=send, args=(srv, i, results, long)) for i in range(N)]
    for t in ths:
        t.start()
    return results, ths


def wait_busy(srv, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        m = srv.metrics()
        if (sl.metric_value(m, "vllm:num_requests_running") == 4 and
                (sl.metric_value(m, "vllm:num_requests_waiting") or 0) >= 1):
            return True
        time.sleep(0.01)
    return False


def refused(port):
    """A new client after SIGTERM: refused, or answered 503; never served."""
    try:
        st, hd, data = sl.request(port, "POST", "/v2/models/tl3/generate",
                                  json.dumps({"text_input": "late", "parameters":
                                              {"max_tokens": 2}}).encode(), timeout=10)
        return st == 503, st
    except (ConnectionError, socket.timeout, OSError) as e:
        return True, type(e).__name__


def main():
    with sl.Harness(tap, "drain", cleanup_signal=signal.SIGKILL) as h:
        root = h.root
        model = sl.compile_model(TL3, os.path.join(root, "tl3"), "--batch-size", "4",
                                 "--max-seq-len", "256", "--decoder-batch-sizes", "4,2,1")
        args = ["--model", model, "--served-model-name", "tl3"]
        srv = h.start(args)
        want = []
        for i in range(N):
            stream, prompt, params = job(i)
            want.append(sl.generate_text(srv, "tl3", prompt, **params))

        # 1. SIGTERM with requests running and queued: all finish, then exit 0.
        results, ths = start_batch(srv)
        tap.ok(wait_busy(srv), "4 requests running and more waiting when SIGTERM comes")
        srv.proc.send_signal(signal.SIGTERM)
        tap.ok(srv.wait_line(r"SIGTERM: no new requests", 10),
               "the server says it drains", srv.stdout())
        ok, how = refused(srv.http_port)
        tap.ok(ok, f"a new request after SIGTERM is not served ({how})")
        for t in ths:
            t.join(300)
        tap.ok(all(r and r[0] == 200 for r in results),
               f"all {N} in-flight requests answered 200", results)
        tap.eq([r[1] if r else None for r in results], want,
               "each answered with its full greedy text (nothing cut, nothing lost)")
        tap.ok(all(r and (r[2] >= 1 if job(i)[0] else r[2] == 1) for i, r in enumerate(results)),
               "each client got exactly one answer (streams: one stream)", results)
        rc = h.stop(signal.SIGTERM, timeout=60)
        tap.eq(rc, 0, "exit status 0 after the drain")
        tap.ok("rbln-serve: stopped" in srv.stdout(), "the server says it stopped", srv.stdout())

        # 2. A second signal cancels the rest: still one answer each, exit 0.
        srv = h.start(args)
        want = [sl.generate_text(srv, "tl3", job(i, True)[1], **job(i, True)[2])
                for i in range(N)]
        results, ths = start_batch(srv, long=True)
        tap.ok(wait_busy(srv), "second run: busy when the signals come")
        srv.proc.send_signal(signal.SIGTERM)
        srv.wait_line(r"SIGTERM: no new requests", 10)
        srv.proc.send_signal(signal.SIGINT)
        tap.ok(srv.wait_line(r"cancelling the requests still running", 10),
               "a second signal cancels the requests still running", srv.stdout())
        for t in ths:
            t.join(120)
        tap.ok(all(r and (r[0] in (200, 400, 503)) for r in results),
               "every client answered (finished, or told it was cancelled)", results)
        tap.ok(any(r[0] != 200 or r[1] != want[i] for i, r in enumerate(results) if r),
               "some requests were cut short by the second signal", results)
        done = [r for r in results if r and r[0] == 200]
        tap.ok(all(r[1] == want[i][:len(r[1])] for i, r in enumerate(results)
                   if r and r[0] == 200 and isinstance(r[1], str)),
               f"what was answered 200 is a prefix of the greedy text ({len(done)} of {N})",
               results)
        rc = h.stop(signal.SIGTERM, timeout=60)
        tap.eq(rc, 0, "exit status 0 after cancelling")
    tap.done()


if __name__ == "__main__":
    main()
