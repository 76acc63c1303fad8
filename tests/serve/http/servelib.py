# SPDX-License-Identifier: MIT
"""Helpers of rbln-serve's live HTTP tests: TAP output, the reference models,
compiling them, starting rbln-serve on free ports, HTTP/SSE/metrics clients.

Standard library only.  Every test runs rbln-serve for real (the engine on
the emulated devices) in a temporary directory of its own and binds port 0,
so tests can run in parallel.  The reference models come from
$RBLN_MODELS_DIR, else engine/models in the source tree; a test
fails (never skips) when they are missing.
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


class Tap:
    """TAP producer: each check is one 'ok'/'not ok' line; exit status says if any failed."""

    def __init__(self):
        self.n = 0
        self.failed = 0
        self.lock = threading.Lock()

    def ok(self, cond, desc, diag=None):
        with self.lock:
            self.n += 1
            print(f"{'ok' if cond else 'not ok'} {self.n} - {desc}", flush=True)
            if not cond:
                self.failed += 1
                if diag is not None:
                    for line in str(diag).splitlines()[:40]:
                        print(f"#   {line}", flush=True)
        return bool(cond)

    def eq(self, got, want, desc):
        return self.ok(got == want, desc, f"got:  {got!r}\nwant: {want!r}")

    def note(self, text):
        for line in str(text).splitlines():
            print(f"# {line}", flush=True)

    def bail(self, why):
        print(f"Bail out! {why}", flush=True)
        sys.exit(1)

    def done(self):
        print(f"1..{self.n}", flush=True)
        sys.exit(1 if self.failed or not self.n else 0)


def env_path(name, default=None):
    v = os.environ.get(name, default)
    if not v:
        raise SystemExit(f"Bail out! {name} is not set (run the test through meson)")
    return v


def models_dir(tap):
    d = os.environ.get("RBLN_MODELS_DIR") or os.environ.get("RBLN_DEFAULT_MODELS_DIR")
    if not d or not os.path.isdir(os.path.join(d, "tiny-llama3")):
        tap.ok(False, f"reference models found (RBLN_MODELS_DIR={d})")
        tap.bail("the reference models are missing: set RBLN_MODELS_DIR")
    return d


def serve_bin():
    return env_path("RBLN_SERVE_BIN")


def compile_bin():
    return env_path("RBLN_COMPILE_BIN")


def tmpdir(tag):
    return tempfile.mkdtemp(prefix=f"rbln-serve-{tag}.")


def compile_model(hf_dir, out_dir, *args):
    cmd = [compile_bin(), hf_dir, "-o", out_dir, "-q", *args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return out_dir


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def test_env(extra=None):
    env = dict(os.environ)
    env.setdefault("RBLN_BACKEND", "emul")
    if extra:
        env.update(extra)
    return env


class Server:
    """rbln-serve as a child process on ports it picked itself (port 0)."""

    STARTED = re.compile(r"^Started (HTTPService|Metrics Service|GRPCInferenceService) at "
                         r"([^:]+):(\d+)$")

    def __init__(self, args, workdir, env=None, timeout=120):
        self.log_path = os.path.join(workdir, "serve.stderr")
        self.lines = []
        self.cond = threading.Condition()
        self.http_port = self.metrics_port = self.grpc_port = None
        self.err = open(self.log_path, "w", encoding="utf-8")
        cmd = [serve_bin(), "--host", "127.0.0.1", "--http-port", "0", "--metrics-port", "0",
               "--grpc-port", "0", *args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.err, text=True,
                                     env=test_env(env), cwd=workdir)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        deadline = time.time() + timeout
        with self.cond:
            while self.http_port is None or self.metrics_port is None:
                if self.proc.poll() is not None:
                    break
                left = deadline - time.time()
                if left <= 0:
                    break
                self.cond.wait(min(left, 0.2))
        if self.http_port is None:
            self.stop(signal.SIGKILL)
            raise RuntimeError(f"rbln-serve did not start:\n{self.stdout()}\n{self.stderr()}")

    def _read(self):
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            with self.cond:
                self.lines.append(line)
                m = self.STARTED.match(line)
                if m:
                    if m.group(1) == "HTTPService":
                        self.http_port = int(m.group(3))
                    elif m.group(1) == "GRPCInferenceService":
                        self.grpc_port = int(m.group(3))
                    else:
                        self.metrics_port = int(m.group(3))
                self.cond.notify_all()

    def stdout(self):
        with self.cond:
            return "\n".join(self.lines)

    def stderr(self):
        if not self.err.closed:
            self.err.flush()
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def wait_line(self, pattern, timeout=30):
        rx = re.compile(pattern)
        deadline = time.time() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if rx.search(line):
                        return line
                left = deadline - time.time()
                if left <= 0 or self.proc.poll() is not None:
                    return None
                self.cond.wait(min(left, 0.2))

    def stop(self, sig=signal.SIGTERM, timeout=120):
        """Signals the server and waits; returns its exit status (None if it had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self.reader.join(5)
                self.err.close()
                return None
        self.reader.join(5)
        self.err.close()
        return self.proc.returncode

    # ---- clients ----

    def conn(self, timeout=120):
        return http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, timeout=120, port=None):
        return request(port or self.http_port, method, path, body, headers, timeout)

    def post_json(self, path, obj, timeout=120):
        st, hd, data = self.request("POST", path, json.dumps(obj).encode(),
                                    {"Content-Type": "application/json"}, timeout)
        return st, parse_json(data)

    def get_json(self, path):
        st, hd, data = self.request("GET", path)
        return st, parse_json(data)

    def metrics(self):
        st, hd, data = request(self.metrics_port, "GET", "/metrics")
        if st != 200:
            raise RuntimeError(f"/metrics answered {st}")
        return parse_metrics(data.decode())

    def metric(self, name, **labels):
        return metric_value(self.metrics(), name, **labels)


class Harness:
    """One test program's scratch directory and the rbln-serve it runs.

    with sl.Harness(tap, "name") as h:
        srv = h.start(args)          # a Server in h.root, stopped on the way out
        tap.eq(h.stop(), 0, "...")   # a clean stop is a test point of its own

    An exception inside the block is not lost: it becomes a failed test point
    naming it, with the running server's stderr, and the program goes on to
    tap.done().  Whatever happens, the server still running is stopped (with
    cleanup_signal) and the directory removed.
    """

    def __init__(self, tap, tag, cleanup_signal=signal.SIGTERM):
        self.tap = tap
        self.root = tmpdir(tag)
        self.srv = None
        self.cleanup_signal = cleanup_signal

    def start(self, args, **kwargs):
        return self.track(Server(args, self.root, **kwargs))

    def track(self, srv):
        """Takes charge of a server started elsewhere (grpclib.start_server)."""
        self.srv = srv
        return srv

    def stop(self, *args, **kwargs):
        """Stops the current server; returns its exit status (Server.stop)."""
        srv, self.srv = self.srv, None
        return srv.stop(*args, **kwargs)

    def __enter__(self):
        return self

    def __exit__(self, kind, err, tb):
        if isinstance(err, Exception):
            self.tap.ok(False, f"harness: {kind.__name__}",
                        f"{err}\n{self.srv.stderr() if self.srv else ''}")
        try:
            if self.srv:
                self.stop(self.cleanup_signal)
        finally:
            rmtree(self.root)
        return isinstance(err, Exception)


def request(port, method, path, body=None, headers=None, timeout=120):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        c.close()


def parse_json(data):
    try:
        return json.loads(data)
    except ValueError:
        return {"_raw": data.decode(errors="replace")}


def parse_sse(data):
    """SSE body -> list of event payloads (str).  Checks the framing strictly."""
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    if text and not text.endswith("\n\n"):
        raise ValueError(f"SSE body does not end with a blank line: {text[-40:]!r}")
    events = []
    for block in text.split("\n\n")[:-1]:
        lines = block.split("\n")
        payload = []
        for line in lines:
            if not line.startswith("data: "):
                raise ValueError(f"SSE line without 'data: ': {line!r}")
            payload.append(line[6:])
        events.append("\n".join(payload))
    return events


METRIC = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_metrics(text):
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = METRIC.match(line)
        if not m:
            raise ValueError(f"not a Prometheus sample: {line!r}")
        labels = tuple(sorted(LABEL.findall(m.group(3) or "")))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def metric_value(samples, name, **labels):
    want = set(labels.items())
    total, found = 0.0, False
    for (n, ls), v in samples.items():
        if n == name and want <= set(ls):
            total += v
            found = True
    return total if found else None


def wait_metric(srv, pred, timeout=10):
    """Polls /metrics until pred(samples) holds; returns the last samples and whether it did."""
    deadline = time.time() + timeout
    while True:
        m = srv.metrics()
        if pred(m):
            return m, True
        if time.time() > deadline:
            return m, False
        time.sleep(0.02)


def gauge(m, name, **labels):
    return metric_value(m, name, **labels) or 0


def idle(m):
    """Nothing runs or waits and no KV block is in use."""
    return (gauge(m, "vllm:kv_cache_usage_perc") == 0 and
            gauge(m, "vllm:num_requests_running") == 0 and
            gauge(m, "vllm:num_requests_waiting") == 0)


def generate(srv, model, text, timeout=120, **params):
    """KServe generate with params in 'parameters'; returns (status, body)."""
    return srv.post_json(f"/v2/models/{model}/generate",
                         {"text_input": text, "parameters": params}, timeout)


def generate_stream(srv, model, body, timeout=120):
    st, hd, data = srv.request("POST", f"/v2/models/{model}/generate_stream",
                               json.dumps(body).encode(), {"Content-Type": "application/json"},
                               timeout)
    return st, hd, data


def generate_text(srv, model, prompt, **params):
    """Greedy completion of a prompt (no prompt prepended), for comparisons."""
    params.setdefault("temperature", 0)
    st, b = srv.post_json(f"/v2/models/{model}/generate", {
        "text_input": prompt, "stream": False, "exclude_input_in_output": True,
        "parameters": params})
    if st != 200:
        raise RuntimeError(f"generate {prompt!r}: {st} {b}")
    return b["text_output"]


def stream_timed(srv, path, body, timeout=120):
    """POSTs a streaming request; returns status, headers, body and when each chunk came."""
    c = srv.conn(timeout)
    try:
        c.request("POST", path, body=json.dumps(body).encode(),
                  headers={"Content-Type": "application/json"})
        r = c.getresponse()
        data, times = b"", []
        while True:
            chunk = r.read1(65536)
            if not chunk:
                break
            data += chunk
            times.append(time.monotonic())
        return r.status, dict(r.getheaders()), data, times
    finally:
        c.close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rmtree(path):
    shutil.rmtree(path, ignore_errors=True)


# Sampling parameters of a request that holds its sequence slot for seconds
# even on a fast idle machine, so that a test can act while it runs (cancel
# it, queue behind it, close its connection) whatever the engine's speed:
# 1900 sampled tokens (nucleus sampling costs more per step than greedy; a
# greedy request of a few hundred tokens ended before the test acted once
# decode got faster).  The text is never checked.
HOLD = {"temperature": 1.0, "top_p": 0.99, "seed": 1, "max_tokens": 1900,
        "ignore_eos": True}


RBLN_CONFIG_PBTXT = """name: "vllm_model"
backend: "vllm"

input [
  {
    name: "text_input"
    data_type: TYPE_STRING
    dims: [ 1 ]
  },
  {
    name: "stream"
    data_type: TYPE_BOOL
    dims: [ 1 ]
  }
]

output [
  {
    name: "text_output"
    data_type: TYPE_STRING
    dims: [ 1 ]
  }
]

instance_group [
  {
    count: 1
    kind: KIND_MODEL
  }
]
"""


def model_json(model, **kw):
    obj = {"model": model}
    obj.update(kw)
    obj.setdefault("device", "rbln")
    return json.dumps(obj, indent=4) + "\n"
