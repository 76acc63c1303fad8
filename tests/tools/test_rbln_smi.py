#!/usr/bin/python3
"""rbln-smi on libnpu's emulated devices (no rbln.ko here): the table, JSON and
CSV list them; --query gives chosen fields as CSV with and without header and
units; --loop prints again (the query header once, JSON one object a line) and
stops on --count or SIGINT; the devices a CDI spec gives a container
(RBLN_DEVICE_N) are the ones listed; bad command lines exit 2. rbln.ko's
devices and their processes are checked in the VM test (tests/vm/guest.sh).

Usage: test_rbln_smi.py RBLN_SMI   (TAP output)
"""
import json
import os
import signal
import subprocess
import sys

import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import done, ok  # noqa: E402

SMI = sys.argv[1]


def env(extra=None):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("RBLN_DEVICE") and k != "RBLN_BACKEND"}
    e.update(extra or {})
    return e


def run(*args, extra=None):
    return subprocess.run([SMI, *args], capture_output=True, text=True, env=env(extra),
                          timeout=60)


r = run()
ok(r.returncode == 0 and "emulated devices of libnpu" in r.stdout and
   sum(1 for l in r.stdout.splitlines() if l.startswith("| ") and "| rbln" in l) == 8,
   "the table lists the 8 emulated devices", r.stdout)
r = run("-j")
d = json.loads(r.stdout)
ok([x["npu"] for x in d["devices"]] == list(range(8)) and d["contexts"] == [] and
   all(x["status"] == "READY" and x["memory"]["total"] == 16 << 30 and x["node"] == f"emul:{x['npu']}"
       for x in d["devices"]), "JSON: 8 devices, READY, 16 GiB, no contexts", r.stdout[:500])
r = run("--csv")
ok(r.stdout.splitlines()[0].startswith("npu,name,") and len(r.stdout.splitlines()) == 9, "CSV")

r = run("-q", "index,name,memory.used,memory.total,memory.free,utilization,pstate")
lines = r.stdout.splitlines()
ok(lines[0] == "index, name, memory.used [MiB], memory.total [MiB], memory.free [MiB], "
   "utilization [%], pstate", "--query header names fields with units", lines[:1])
ok(lines[1] == "0, RBLN-CA12, 0 MiB, 16384 MiB, 16384 MiB, 0 %, P14" and len(lines) == 9,
   "--query: one line per device with units", lines[:2])
r = run("-q", "index,memory.total", "--format", "csv,noheader,nounits")
ok(r.stdout.splitlines() == [f"{i}, 16384" for i in range(8)],
   "--format csv,noheader,nounits: bare values", r.stdout)
r = run("--query-processes", "npu,pid,process,device_memory")
ok(r.returncode == 0 and r.stdout.splitlines() == ["npu, pid, process, device_memory [MiB]"],
   "--query-processes: the header, and no contexts on emulated devices", r.stdout)
r = run("-q", "index,node", "--format", "csv,noheader",
        extra={"RBLN_DEVICE_2": "1", "RBLN_DEVICE_5": "1"})
ok(r.stdout.splitlines() == ["2, emul:2", "5, emul:5"],
   "RBLN_DEVICE_2 and _5 (a CDI spec's edits): those two devices", r.stdout)
r = run("-q", "index,cpu_variant", "--format", "csv,noheader", extra={"RBLN_CPU_VARIANT": "baseline"})
ok(r.stdout.splitlines() == [f"{i}, baseline" for i in range(8)],
   "cpu_variant: the variant RBLN_CPU_VARIANT forces", r.stdout)
r = run("-q", "cpu_variant", "--format", "csv,noheader", extra={"RBLN_CPU_VARIANT": "auto"})
ok(r.returncode == 0 and len(set(r.stdout.split())) == 1 and
   r.stdout.split()[0] in ("baseline", "avx2", "avx512", "avx512+amx"),
   "cpu_variant: auto shows what it resolved to on this CPU", r.stdout)
r = run("--help-query")
ok(r.returncode == 0 and "memory.used" in r.stdout and "cpu_variant" in r.stdout and
   "device_memory" in r.stdout, "--help-query lists the fields")

t0 = time.monotonic()
r = run("-q", "index", "--format", "csv", "-l", "0.2", "--count", "3")
lines = r.stdout.splitlines()
ok(r.returncode == 0 and lines.count("index") == 1 and len(lines) == 1 + 3 * 8 and
   time.monotonic() - t0 >= 0.4, "--loop 0.2 --count 3: three prints, the header once",
   r.stdout)
r = run("-j", "-l", "0.1", "--count", "2")
objs = [json.loads(l) for l in r.stdout.splitlines()]
ok(len(objs) == 2 and all(len(o["devices"]) == 8 for o in objs),
   "JSON in a loop: one object a line", r.stdout[:300])
p = subprocess.Popen([SMI, "-l", "0.2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True, env=env())
time.sleep(1.0)
p.send_signal(signal.SIGINT)
out, _ = p.communicate(timeout=10)
ok(p.returncode == 0 and out.count("Device Information") >= 3,
   "the watch mode redraws until SIGINT, then exits 0", f"rc {p.returncode}")

r = run(extra={"RBLN_BACKEND": "kernel"})
ok(r.returncode == 1 and "No RBLN devices found" in r.stdout,
   "RBLN_BACKEND=kernel without rbln.ko: no devices, exit 1", r.stdout)
r = run("-j", extra={"RBLN_BACKEND": "kernel"})
ok(r.returncode == 1 and json.loads(r.stdout)["devices"] == [],
   "... and JSON stays well-formed")
for args, says in ((["-q", "index,bogus"], "unknown field 'bogus'"),
                   (["-q", "index", "--format", "xml"], "--format takes csv"),
                   (["--format", "csv"], "--format goes with --query"),
                   (["-l", "0"], "--loop takes seconds"),
                   (["-l", "x"], "--loop takes seconds"),
                   (["--count", "2"], "--count needs --loop"),
                   (["extra"], "unexpected argument 'extra'")):
    r = run(*args)
    ok(r.returncode == 2 and says in r.stderr, f"rejects {' '.join(args)}", r.stderr)

done()
