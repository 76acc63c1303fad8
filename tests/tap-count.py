#!/usr/bin/env python3
"""Count test cases in a meson testlog.json: every TAP 'ok'/'not ok' line of
a test's output is one case; a test program that failed without reporting a
failing case (crash, sanitizer report after the last case, timeout) counts as
one more failure. Prints 'PASSED FAILED SKIPPED'."""
import json
import re
import sys

passed = failed = skipped = 0
case = re.compile(r'^(not ok|ok)\b(.*)$')
with open(sys.argv[1], encoding='utf-8', errors='replace') as log:
    for line in log:
        test = json.loads(line)
        p = f = s = 0
        for out in (test.get('stdout') or test.get('stdo') or '').splitlines():
            m = case.match(out.strip())
            if not m:
                continue
            if '# SKIP' in m.group(2).upper():
                s += 1
            elif m.group(1) == 'ok':
                p += 1
            else:
                f += 1
        if p + f + s == 0:
            # Not a TAP test, or it died before its first case.
            if test['result'] in ('OK', 'EXPECTEDFAIL'):
                p = 1
            elif test['result'] == 'SKIP':
                s = 1
            else:
                f = 1
        elif test['result'] not in ('OK', 'EXPECTEDFAIL', 'SKIP') and f == 0:
            f = 1
        if f:
            print(f"FAILED: {test['name']} ({test['result']})", file=sys.stderr)
        passed += p
        failed += f
        skipped += s
print(passed, failed, skipped)
