#!/usr/bin/python3
"""rbln-diag on libnpu's emulated devices: healthy devices pass every check,
JSON and table agree on what ran, a device short of memory fails its memory
check (exit 1), and bad command lines are refused (exit 2). The failing checks
under injected device faults are in the VM test (tests/vm/guest.sh).

Usage: test_rbln_diag.py RBLN_DIAG   (TAP output)
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import done, ok  # noqa: E402


DIAG = sys.argv[1]


def run(*args, env=None):
    e = dict(os.environ, RBLN_BACKEND="emul")
    e.pop("RBLN_DEVICES", None)
    e.update(env or {})
    return subprocess.run([DIAG, *args], capture_output=True, text=True, env=e, timeout=600)


PER_DEVICE = ["memory", "dma_h2d", "dma_d2h", "compute"]

r = run("-r", "quick", "-j")
ok(r.returncode == 0, "quick level on 8 healthy devices: exit 0", r.stdout + r.stderr)
d = json.loads(r.stdout)
checks = [(c["npu"], c["check"]) for c in d["checks"]]
want = [(n, c) for n in range(8) for c in PER_DEVICE] + [(None, "p2p"), (None, "collective")]
ok(checks == want, "every device's memory, DMA and compute, then p2p and collective", checks)
ok(all(c["pass"] for c in d["checks"]) and d["result"] == "PASS" and d["failed"] == 0,
   "every check passes", [c for c in d["checks"] if not c["pass"]])
ok(all(c["value"] > 0 for c in d["checks"] if c["unit"] == "GB/s"), "bandwidths are measured")
m = d["p2p_gbps"]
ok(len(m) == 8 and all(len(row) == 8 for row in m) and
   all((m[a][b] is None) == (a == b) for a in range(8) for b in range(8)),
   "the device -> device matrix has every pair", m)
ok("all 16 opcodes against golden results" in [c for c in d["checks"] if c["check"] == "compute"][0]["detail"],
   "the compute check covers all 16 opcodes")

r = run("-d", "2,5", "--checks", "memory,compute")
ok(r.returncode == 0 and "level quick, 2 devices, emul backend" in r.stdout and
   "4 of 4 checks passed: PASS" in r.stdout, "-d 2,5 --checks memory,compute", r.stdout)
rows = [l.split()[0] for l in r.stdout.splitlines() if l.endswith("golden results, 1 round")]
ok(rows == ["2", "5"], "the table names the hw indices of the devices checked", rows)

r = run("-r", "medium", "-d", "0,1", "--mem-size", "32M", "-j")
d = json.loads(r.stdout) if r.stdout else {}
ok(r.returncode == 0 and d.get("level") == "medium" and d.get("passed") == 10,
   "medium level on two devices with --mem-size 32M", r.stdout[-2000:] + r.stderr)

r = run("--checks", "memory", "--mem-size", "64M", "-j", env={"RBLN_EMUL_MEM_SIZE": "32M",
                                                              "RBLN_EMUL_DEVICES": "2"})
d = json.loads(r.stdout) if r.stdout else {"checks": []}
ok(r.returncode == 1 and d.get("result") == "FAIL" and
   all(not c["pass"] and "Cannot allocate memory" in c["detail"] for c in d["checks"]),
   "a memory test larger than the devices' memory fails, naming why, exit 1", r.stdout)

r = run("-r", "long", "--checks", "memory", "--mem-size", "8M", "-d", "0")
ok(r.returncode == 0 and "68 fill patterns" in r.stdout,
   "long level adds the walking-one and walking-zero patterns", r.stdout)

for args, says in ((["-r", "fast"], "--level must be quick, medium or long"),
                   (["--checks", "memory,gpu"], "unknown check 'gpu'"),
                   (["--mem-size", "12Q"], "--mem-size '12Q'"),
                   (["--mem-size", "100"], "--mem-size '100'"),
                   (["--backend", "gpu"], "--backend must be kernel or emul"),
                   (["-d", "0,9"], "device 9 out of range"),
                   (["extra"], "unexpected argument 'extra'")):
    r = run(*args)
    ok(r.returncode == 2 and says in r.stderr, f"rejects {' '.join(args)}", r.stderr)
r = run("--version")
ok(r.returncode == 0 and r.stdout.startswith("rbln-diag "), "--version")

done()
