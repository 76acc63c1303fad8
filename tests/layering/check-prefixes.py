#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that every external symbol of the project's static libraries has a prefix.

A static library's externs share one namespace with everything it is linked
with (libc, libgrpc, libmicrohttpd, the next library of the stack), so each
one carries its library's prefix: rbln_ for the device model and the engine,
isa_ for the ISA encoder (libnpu/isa, its established prefix), serve_ for
rbln-serve's libraries (the serving layer's established prefix).  The
protobuf-c code generated from src/serve/grpc/proto keeps protoc-c's
names (inference__...).

  check-prefixes.py NM ARCHIVE...
  check-prefixes.py --self-test NM

Runs NM -g --defined-only on each archive; prints each unprefixed symbol
and exits 1 if there is one (or an archive with no rule, or none at all).
Names that begin with two underscores are the implementation's (C11 7.1.3),
for example the __odr_asan.* globals AddressSanitizer adds: they are not
the project's and are not checked.
"""
import os
import subprocess
import sys
import tempfile

# Library (archive name without lib and .a) -> the prefixes its externs may have.
PREFIXES = {
    'rbln_model': ('rbln_',),
    'rbln_isa_encode': ('isa_',),
    'rbln_engine_front': ('rbln_',),
    'rbln_engine': ('rbln_',),
    'rbln_serving_bridge': ('rbln_',),
    'rbln_serve_repository': ('rbln_', 'serve_'),
    'rbln_serve_api': ('rbln_', 'serve_'),
    'rbln_serve_metrics': ('rbln_', 'serve_'),
    'rbln_serve_model': ('rbln_', 'serve_'),
    'rbln_serve_http': ('rbln_', 'serve_'),
    'rbln_serve_grpc': ('rbln_', 'serve_', 'inference__'),
}


def library_name(archive):
    base = os.path.basename(archive)
    if not (base.startswith('lib') and base.endswith('.a')):
        return None
    return base[3:-2]


def externs(nm, archive):
    out = subprocess.run([nm, '-g', '--defined-only', archive], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3:
            yield parts[2]


def check(nm, archives):
    bad = 0
    count = 0
    for archive in archives:
        lib = library_name(archive)
        if lib not in PREFIXES:
            print(f'FAIL: {archive}: no prefix rule for library {lib!r} in {__file__}')
            bad += 1
            continue
        for sym in externs(nm, archive):
            if sym.startswith('__'):
                continue
            count += 1
            if not sym.startswith(PREFIXES[lib]):
                print(f'FAIL: {os.path.basename(archive)}: extern {sym} has none of the '
                      f'prefixes {" ".join(PREFIXES[lib])}')
                bad += 1
    if count == 0:
        print('FAIL: no external symbols found: wrong archives or nm?')
        bad += 1
    return bad, count


def self_test(nm):
    """An archive with one prefixed and one unprefixed extern is reported once."""
    cc = os.environ.get('CC', 'cc')
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, 'x.c')
        with open(src, 'w', encoding='utf-8') as f:
            f.write('int rbln_good(void) { return 1; }\n'
                    'int pack16(void) { return 2; }\n'
                    'static int hidden(void) { return 3; }\n'
                    'int rbln_uses_hidden(void) { return hidden(); }\n')
        obj = os.path.join(d, 'x.o')
        archive = os.path.join(d, 'librbln_engine.a')
        subprocess.run([cc, '-c', src, '-o', obj], check=True)
        subprocess.run(['ar', 'rcs', archive, obj], check=True)
        bad, count = check(nm, [archive])
    if bad != 1 or count != 3:
        print(f'FAIL: self-test: {bad} violations in {count} externs, expected 1 in 3')
        return 1
    print('self-test: the planted unprefixed extern was reported')
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == '--self-test':
        return self_test(argv[2])
    if len(argv) < 3:
        print(__doc__.strip().split('\n\n')[2], file=sys.stderr)
        return 2
    bad, count = check(argv[1], argv[2:])
    if bad:
        print(f'{bad} unprefixed externs among {count} of {len(argv) - 2} libraries')
        return 1
    print(f'{count} externs of {len(argv) - 2} static libraries carry their library\'s prefix')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
