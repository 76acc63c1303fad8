#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rbln-serve against the official OpenAI Node SDK (npm package openai, the
version pinned below, installed by this test into the build directory).

Compiles tiny-llama3, starts rbln-serve on it and runs client.mjs, whose TAP
lines are this test's. Needs node and npm (tools/install-deps.sh) and the npm
registry on the first run.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "http"))
import servelib as sl  # noqa: E402

OPENAI_NODE = "openai@6.49.0"
HERE = os.path.dirname(os.path.abspath(__file__))


def install_sdk(prefix):
    """The SDK in PREFIX/node_modules; a second run finds it there."""
    pkg = os.path.join(prefix, "node_modules", "openai", "package.json")
    if os.path.isfile(pkg):
        return None
    npm = shutil.which("npm")
    if not npm:
        return "npm is not installed (tools/install-deps.sh installs it)"
    os.makedirs(prefix, exist_ok=True)
    r = subprocess.run([npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix",
                        prefix, OPENAI_NODE], capture_output=True, text=True, timeout=600)
    return None if r.returncode == 0 else f"npm install {OPENAI_NODE}: {r.stderr[-2000:]}"


def main():
    prefix = sl.env_path("OPENAI_NODE_PREFIX")
    why = install_sdk(prefix)
    if why:
        print("1..1")
        print(f"not ok 1 - the OpenAI Node SDK is installed\n#   {why}")
        sys.exit(1)
    root = sl.tmpdir("openai-node")
    srv = None
    try:
        model = sl.compile_model(os.path.join(sl.models_dir(sl.Tap()), "tiny-llama3"),
                                 os.path.join(root, "tiny-llama3"), "--batch-size", "4",
                                 "--max-seq-len", "512")
        srv = sl.Server(["--model", model, "--served-model-name", "tiny"], root)
        # ES modules resolve packages from the script's own directory up.
        shutil.copy(os.path.join(HERE, "client.mjs"), os.path.join(prefix, "client.mjs"))
        r = subprocess.run(["node", os.path.join(prefix, "client.mjs"),
                            f"http://127.0.0.1:{srv.http_port}/v1", "tiny",
                            f"http://127.0.0.1:{srv.metrics_port}/metrics"],
                           capture_output=True, text=True, timeout=600, cwd=prefix)
        sys.stdout.write(r.stdout)
        if r.stderr.strip():
            print("\n".join("# " + l for l in r.stderr.strip().splitlines()[-20:]))
        rc = r.returncode
    finally:
        if srv:
            srv.stop()
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(rc)


if __name__ == "__main__":
    main()
