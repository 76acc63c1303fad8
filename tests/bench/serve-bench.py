#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rbln-serve under open-loop load: throughput, TTFT and inter-token latency.

For each model: compile it, start rbln-serve on it alone, and run
rbln-loadgen (Poisson arrivals at several rates, fixed prompt and output
lengths, greedy, ignore_eos) against it.  Models:

  tiny-llama3   the reference checkpoint (engine/models), TP 1, batch 8,
                decoder buckets 8/4/1
  llama-1b      engine/bench/llama-3.2-1b-shape/config.json with random bf16
                weights (rbln-compile --dummy-weights), TP 1, batch 8,
                buckets 8/4/1, prefill chunk 64.  It has no tokenizer: it is
                served with tiny-llama3's, its vocabulary padded to 128,256
                entries so every id the random model samples decodes.

A benchmark, not a test: it prints figures, never pass/fail.

  tests/bench/serve-bench.py [--build build] [--work DIR] [--models tiny,1b]
"""
import argparse
import json
import os
import platform
import shutil
import signal
import string
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests", "serve", "http"))
import servelib as sl  # noqa: E402

CONFIGS = {
    "tiny": {
        "name": "tiny-llama3",
        "compile": ["--batch-size", "8", "--max-seq-len", "512", "--decoder-batch-sizes", "8,4,1"],
        "rates": "10,40,80,160,320", "duration": 10, "prompt": 32, "output": 32,
    },
    "1b": {
        "name": "llama-1b",
        "compile": ["--dummy-weights", "--batch-size", "8", "--max-seq-len", "256",
                    "--prefill-chunk-size", "64", "--decoder-batch-sizes", "8,4,1"],
        "rates": "0.25,0.5,1,2", "duration": 60, "prompt": 16, "output": 16,
    },
}


def padded_tokenizer(src_dir, out_dir, vocab_size):
    """tiny-llama3's tokenizer with vocabulary entries added up to vocab_size."""
    with open(os.path.join(src_dir, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    vocab = tok["model"]["vocab"]
    taken = set(vocab.values()) | {a["id"] for a in tok["added_tokens"]}
    next_id, k = 0, 0
    while len(taken) < vocab_size:
        while next_id in taken:
            next_id += 1
        word, n = "", k
        while True:
            word = string.ascii_lowercase[n % 26] + word
            n //= 26
            if not n:
                break
        k += 1
        if "Ġ" + word in vocab:
            continue
        vocab["Ġ" + word] = next_id  # "Ġ" is the byte-level space
        taken.add(next_id)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    shutil.copy(os.path.join(src_dir, "tokenizer_config.json"), out_dir)
    return out_dir


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{platform.node()}: {os.cpu_count()} CPUs ({cpu}), "
            f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
            f"Linux {platform.release()}, load average {os.getloadavg()[0]:.2f} at start")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--work", default=None, help="keeps compiled models between runs")
    ap.add_argument("--models", default="tiny,1b")
    ap.add_argument("--duration", type=float, default=0,
                    help="seconds of arrivals per rate (default: per model)")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    os.environ["RBLN_SERVE_BIN"] = os.path.join(args.build, "engine", "rbln-serve")
    os.environ["RBLN_COMPILE_BIN"] = os.path.join(args.build, "engine", "rbln-compile")
    loadgen = os.path.join(TOP, "engine", "tools", "rbln-loadgen")
    models = os.environ.get("RBLN_MODELS_DIR", os.path.join(TOP, "engine", "models"))
    tl3 = os.path.join(models, "tiny-llama3")
    work = args.work or tempfile.mkdtemp(prefix="rbln-serve-bench.")
    os.makedirs(work, exist_ok=True)
    print(machine(), flush=True)
    print(f"backend: {os.environ.get('RBLN_BACKEND', 'emul (default without devices)')}",
          flush=True)
    for key in args.models.split(","):
        cfg = CONFIGS[key]
        out = os.path.join(work, cfg["name"])
        serve_args = ["--model", out, "--served-model-name", cfg["name"]]
        if key == "1b":
            src = os.path.join(TOP, "engine", "bench", "llama-3.2-1b-shape")
            tok = padded_tokenizer(tl3, os.path.join(work, "tokenizer-128k"), 128256)
            serve_args += ["--tokenizer", tok]
        else:
            src = tl3
        if not os.path.isfile(os.path.join(out, "rbln_config.json")):
            sl.compile_model(src, out, *cfg["compile"])
        srv = sl.Server(serve_args, work, timeout=600)
        try:
            print(flush=True)
            print(f"## {cfg['name']} (rbln-compile {' '.join(cfg['compile'])})", flush=True)
            duration = args.duration or cfg["duration"]
            subprocess.run([sys.executable, loadgen, "--port", str(srv.http_port),
                            "--metrics-port", str(srv.metrics_port), "--model", cfg["name"],
                            "--rates", cfg["rates"], "--duration", str(duration),
                            "--prompt-tokens", str(cfg["prompt"]),
                            "--output-tokens", str(cfg["output"])], check=False)
        finally:
            srv.stop(signal.SIGTERM)
    print()
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
