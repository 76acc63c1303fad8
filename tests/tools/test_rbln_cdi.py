#!/usr/bin/python3
"""rbln-cdi: its specs are valid CDI (checked against tests/tools/cdi-schema.json,
written from the CDI specification), in YAML and JSON, for emulated and kernel
devices and every cdiVersion it writes; its command line rejects bad input.

Usage: test_rbln_cdi.py RBLN_CDI CDI_SPEC_DUMP SCHEMA   (TAP output)
"""
import json
import os
import stat
import subprocess
import sys

import tempfile

import jsonschema
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import done, ok  # noqa: E402

RBLN_CDI, DUMP, SCHEMA = sys.argv[1:4]
schema = json.load(open(SCHEMA))
validator = jsonschema.Draft202012Validator(schema)


def run(*args, env=None):
    e = dict(os.environ, RBLN_BACKEND="emul")
    e.pop("RBLN_DEVICES", None)
    e.update(env or {})
    return subprocess.run([RBLN_CDI, *args], capture_output=True, text=True, env=e)


def errors(doc):
    return "\n".join(f"{list(e.path)}: {e.message}" for e in validator.iter_errors(doc))


def check_spec(doc, name, version, emulated, hw):
    ok(not errors(doc), f"{name}: valid CDI", errors(doc))
    ok(doc.get("cdiVersion") == version and doc.get("kind") == "rebellions.ai/npu",
       f"{name}: cdiVersion {version}, kind rebellions.ai/npu", doc.get("cdiVersion"))
    names = [d["name"] for d in doc.get("devices", [])]
    ok(names == [str(i) for i in hw] + ["all"], f"{name}: one device per NPU and all", names)
    with_ann = version >= "0.6.0"
    ok(("annotations" in doc) == with_ann, f"{name}: annotations only from 0.6.0")
    devs = {d["name"]: d["containerEdits"] for d in doc["devices"]}
    backend = doc["containerEdits"]["env"]
    ok(backend == [f"RBLN_BACKEND={'emul' if emulated else 'kernel'}"],
       f"{name}: RBLN_BACKEND set for the whole spec", backend)
    for i in hw:
        e = devs[str(i)]
        if emulated:
            good = e == {"env": [f"RBLN_DEVICE_{i}=1"]}
        else:
            nodes = e.get("deviceNodes", [])
            good = ([n["path"] for n in nodes] == [f"/dev/accel/accel{i + 1}", f"/dev/rbln{i}"]
                    and nodes[1].get("hostPath") == f"/dev/accel/accel{i + 1}"
                    and e.get("mounts", [{}])[0].get("options", [None])[0] == "ro"
                    and "env" not in e)
        ok(good, f"{name}: device {i} gets exactly its own edits", e)
    all_env = devs["all"].get("env", [])
    all_nodes = devs["all"].get("deviceNodes", [])
    ok(len(all_env) == (len(hw) if emulated else 0) and
       len(all_nodes) == (0 if emulated else 2 * len(hw)), f"{name}: all gives every NPU")


# The emulated devices, as rbln-cdi finds them through libnpu.
for version in ("0.5.0", "0.6.0", "0.8.0"):
    r = run("--cdi-version", version)
    ok(r.returncode == 0, f"generate --cdi-version {version} exits 0", r.stderr)
    check_spec(yaml.safe_load(r.stdout), f"emul yaml {version}", version, True, range(8))

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "rbln.json")
    open(out, "w").write("old")
    r = run("generate", "--output", out, env={"RBLN_DEVICES": "0,1", "RBLN_DEVICE_3": "1"})
    ok(r.returncode == 0 and "wrote" in r.stderr, "--output FILE.json writes the file", r.stderr)
    doc = json.load(open(out))
    check_spec(doc, "emul json ignoring RBLN_DEVICES", "0.6.0", True, range(8))
    ok(stat.S_IMODE(os.stat(out).st_mode) == 0o644, "the spec file is mode 0644")
    ok(os.listdir(tmp) == ["rbln.json"], "no temporary file left beside it", os.listdir(tmp))
    y = run("--output", os.path.join(tmp, "rbln.yaml"))
    ok(yaml.safe_load(open(os.path.join(tmp, "rbln.yaml"))) == doc,
       "the YAML and JSON forms are the same document")
    r = run("--output", os.path.join(tmp, "missing", "rbln.yaml"))
    ok(r.returncode == 1 and "cannot create" in r.stderr, "an unwritable output: exit 1", r.stderr)

r = run("list")
ok(r.returncode == 0 and r.stdout.split() ==
   [f"rebellions.ai/npu={i}" for i in range(8)] + ["rebellions.ai/npu=all"], "list", r.stdout)
r = run("list", "--kind", "example.com/accel")
ok(r.stdout.split()[-1] == "example.com/accel=all", "list --kind", r.stdout)
r = run("--backend", "emul", env={"RBLN_EMUL_DEVICES": "3"})
ok([d["name"] for d in yaml.safe_load(r.stdout)["devices"]] == ["0", "1", "2", "all"],
   "as many devices as the backend has")

# The kernel form, for NPUs 0-2 behind accel1-3 (another accel driver owns accel0).
args = [f"{i}:/dev/accel/accel{i + 1}:/sys/devices/platform/rbln.{i}" for i in range(3)]
for version, fmt in (("0.5.0", "yaml"), ("0.6.0", "json"), ("0.8.0", "yaml")):
    r = subprocess.run([DUMP, version, fmt, *args], capture_output=True, text=True)
    doc = yaml.safe_load(r.stdout) if fmt == "yaml" else json.loads(r.stdout)
    check_spec(doc, f"kernel {fmt} {version}", version, False, range(3))
    dev0 = [d for d in doc["devices"] if d["name"] == "0"][0]
    ok(("annotations" in dev0) == (version >= "0.6.0"), f"kernel {version}: node annotation")

# The schema itself rejects what the CDI specification does not allow.
bad = yaml.safe_load(run().stdout)
bad["devices"][0]["containerEdits"]["deviceNodes"] = [{"hostPath": "/dev/x"}]
ok(errors(bad), "the schema rejects a device node without a path")
bad = yaml.safe_load(run().stdout)
bad["devices"][0]["name"] = "bad name"
ok(errors(bad), "the schema rejects a malformed device name")

# Bad command lines: a message naming what is wrong, exit 2.
for args, says in ((["--kind", "npu"], "must be 'vendor/class'"),
                   (["--kind", "a.b/c/d"], "must be 'vendor/class'"),
                   (["--cdi-version", "0.4.0"], "must be one of"),
                   (["--format", "toml"], "--format must be yaml or json"),
                   (["--backend", "gpu"], "--backend must be kernel or emul"),
                   (["frobnicate"], "unknown command 'frobnicate'"),
                   (["list", "--output", "x"], "list takes no --output"),
                   (["--bogus"], "unrecognized option")):
    r = run(*args)
    ok(r.returncode == 2 and says in r.stderr, f"rejects {' '.join(args)}", r.stderr)
r = run("--backend", "kernel")
ok(r.returncode == 1 and "no rbln device found (is rbln.ko loaded?)" in r.stderr,
   "--backend kernel without rbln.ko: exit 1 and why", r.stderr)
r = run("--version")
ok(r.returncode == 0 and r.stdout.startswith("rbln-cdi "), "--version")

done()
