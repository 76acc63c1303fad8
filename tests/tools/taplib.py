# SPDX-License-Identifier: MIT
"""TAP output for the tools' tests: ok() per check, done() prints the plan
and exits with the verdict."""
import sys

_results = []


def ok(cond, name, detail=""):
    _results.append(bool(cond))
    print(f"{'ok' if cond else 'not ok'} {len(_results)} - {name}", flush=True)
    if not cond and detail:
        for line in str(detail).splitlines()[-20:]:
            print(f"#   {line}")
    return bool(cond)


def done():
    print(f"1..{len(_results)}")
    sys.exit(0 if _results and all(_results) else 1)
