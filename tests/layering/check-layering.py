#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the include layering of the tree against its rule.

The rule is the table "Static libraries and what each may include" of
Documentation/architecture.md: each layer's files (globs), the meson library
that compiles its .c files, the layers it may include and whether it may
include system headers. This script reads that table and checks

  - that every source and header under uapi/, driver/, libnpu/,
    engine/include/ and engine/src/ belongs to exactly one layer;
  - every #include of those files: an include that names a file of the tree
    must name one of a layer the including layer may include; one that
    names none is a system header, which a layer marked "none" may not use;
  - with --targets (the build's meson-info/intro-targets.json), that each
    meson library compiles exactly the .c files of its layers.

  check-layering.py ROOT [--targets INTRO_TARGETS_JSON]
  check-layering.py --self-test

Standard library only. Prints one line per violation and a summary; exits
1 on any violation or on a table it cannot read.
"""
import fnmatch
import json
import os
import re
import sys
import tempfile

DOC = 'Documentation/architecture.md'
TABLE_TITLE = '## Static libraries and what each may include'
CHECKED_DIRS = ('uapi', 'driver', 'libnpu', 'engine/include', 'engine/src')
SOURCE_EXT = ('.c', '.h')
# Where a quoted include is looked for after the including file's folder:
# the include directories its build gives it (Kbuild for driver/, meson's
# include_directories for the rest), by the folder the file is in.
INCLUDE_ROOTS = (
    ('driver/', ('driver', 'driver/model', 'uapi')),
    ('libnpu/', ('libnpu', 'libnpu/include', 'libnpu/isa', 'libnpu/emul', 'driver/model',
                 'uapi')),
    ('engine/', ('engine/include', 'engine/src', 'libnpu/include', 'libnpu/isa',
                 'driver/model', 'uapi')),
    ('', ('uapi',)),
)
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


class Layer:
    def __init__(self, name, library, globs, may_include, system):
        self.name = name
        self.library = library
        self.globs = globs
        self.may_include = set(may_include) | {name}
        self.system = system


def fail(msg):
    print(f'FAIL: {msg}')
    return 1


def read_table(root):
    """The layers of the rule table, or raises ValueError saying why not."""
    path = os.path.join(root, DOC)
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    try:
        start = lines.index(TABLE_TITLE)
    except ValueError:
        raise ValueError(f'{DOC}: no section "{TABLE_TITLE}"') from None
    rows = []
    for line in lines[start + 1:]:
        if line.startswith('## '):
            break
        if line.startswith('|'):
            rows.append([c.strip() for c in line.strip().strip('|').split('|')])
    if len(rows) < 3 or rows[0] != ['layer', 'meson library', 'files', 'may include',
                                    'system headers']:
        raise ValueError(f'{DOC}: the rule table must have the columns layer, meson library, '
                         'files, may include, system headers')
    layers = {}
    for row in rows[2:]:
        if len(row) != 5:
            raise ValueError(f'{DOC}: rule row with {len(row)} columns: {row}')
        name, library, files, may, system = row
        globs = re.findall(r'`([^`]+)`', files)
        if not name or not globs or system not in ('any', 'none'):
            raise ValueError(f'{DOC}: rule row "{name}": needs a name, `file globs` and '
                             'system headers "any" or "none"')
        if name in layers:
            raise ValueError(f'{DOC}: layer "{name}" listed twice')
        layers[name] = Layer(name, library, globs, may.split(), system)
    for layer in layers.values():
        for other in layer.may_include:
            if other not in layers:
                raise ValueError(f'{DOC}: layer "{layer.name}" may include unknown layer '
                                 f'"{other}"')
    return layers


def tree_files(root):
    out = []
    for top in CHECKED_DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith(SOURCE_EXT):
                    out.append(os.path.relpath(os.path.join(dirpath, n), root))
    return sorted(out)


def owners(layers, path):
    # A file named exactly (no wildcard) belongs to that row even where a
    # folder's glob also matches it: a leaf module inside a folder (the
    # serving layer's reply.c) is a layer of its own.
    exact = [l.name for l in layers.values() if path in l.globs]
    if exact:
        return exact
    # fnmatch's * crosses '/', so a glob names files of its own folder only
    # when the rest of the path has no further '/'.
    return [l.name for l in layers.values()
            if any(fnmatch.fnmatch(path, g) and path.count('/') == g.count('/')
                   for g in l.globs)]


def resolve(root, including, name):
    """The tree file an include names, or None for a system header."""
    roots = next(r for prefix, r in INCLUDE_ROOTS if including.startswith(prefix))
    candidates = [os.path.join(os.path.dirname(including), name)]
    candidates += [os.path.join(r, name) for r in roots]
    # Then any folder of the tree: a header of another area included by a
    # file whose build has no path to it is still that area's header.
    candidates += [os.path.join(r, name) for _, rs in INCLUDE_ROOTS for r in rs]
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    return None


def check_includes(root, layers, files, owner_of):
    bad = 0
    for path in files:
        layer = layers[owner_of[path]]
        with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                target = resolve(root, path, m.group(2))
                if target is None:
                    if layer.system == 'none':
                        bad += fail(f'{path}:{number}: layer {layer.name} includes no system '
                                    f'header, but includes {m.group(1)}{m.group(2)}'
                                    f'{">" if m.group(1) == "<" else chr(34)}')
                    continue
                other = owner_of.get(target)
                if other is None:
                    bad += fail(f'{path}:{number}: includes {target}, which is in no layer')
                elif other not in layer.may_include:
                    bad += fail(f'{path}:{number}: layer {layer.name} may not include '
                                f'{target} (layer {other}); it may include: '
                                f'{" ".join(sorted(layer.may_include))}')
    return bad


def check_targets(root, layers, files, owner_of, targets_json):
    with open(targets_json, encoding='utf-8') as f:
        targets = json.load(f)
    bad = 0
    libraries = {l.library for l in layers.values() if l.library}
    for library in sorted(libraries):
        want = {p for p in files if p.endswith('.c') and p in owner_of and
                layers[owner_of[p]].library == library}
        found = [t for t in targets if t['name'] == library and
                 t['type'] in ('static library', 'shared library')]
        if len(found) != 1:
            bad += fail(f'meson library {library}: {len(found)} targets of that name in '
                        f'{targets_json}')
            continue
        have = set()
        for group in found[0]['target_sources']:
            for s in group.get('sources', []):
                rel = os.path.relpath(s, root)
                if rel.endswith('.c') and not rel.startswith('..'):
                    have.add(rel)
        for p in sorted(want - have):
            bad += fail(f'{p}: in a layer of meson library {library}, which does not compile it')
        for p in sorted(have - want):
            layer = owner_of.get(p)
            bad += fail(f'{p}: compiled by meson library {library} but in layer {layer}, '
                        f'not one of that library\'s')
    return bad


def check(root, targets_json=None):
    try:
        layers = read_table(root)
    except (OSError, ValueError) as e:
        return fail(str(e)), 0
    files = tree_files(root)
    owner_of = {}
    bad = 0
    for p in files:
        o = owners(layers, p)
        if len(o) != 1:
            bad += fail(f'{p}: in {len(o)} layers ({" ".join(o) or "none"}); every file needs '
                        f'exactly one row of {DOC}\'s rule table')
        else:
            owner_of[p] = o[0]
    bad += check_includes(root, layers, [p for p in files if p in owner_of], owner_of)
    if targets_json:
        bad += check_targets(root, layers, files, owner_of, targets_json)
    return bad, len(files)


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, 'w', encoding='utf-8') as f:
        f.write(text)


def self_test(real_root):
    """The checker on a small tree with known violations finds each of them."""
    with open(os.path.join(real_root, DOC), encoding='utf-8') as f:
        doc = f.read()
    with tempfile.TemporaryDirectory() as root:
        write(root, DOC, doc)
        write(root, 'uapi/rbln_isa.h', '#include <linux/types.h>\n')
        write(root, 'driver/model/rbln_model.h', '#include "rbln_isa.h"\n')
        write(root, 'driver/model/rbln_model_exec.c', '#include <string.h>\n'
              '#include "rbln_model.h"\n')
        write(root, 'libnpu/isa/isa_encode.h', '#include "rbln_isa.h"\n')
        write(root, 'libnpu/stream.c', '#include "isa_encode.h"\n#include "rbln_runtime.h"\n')
        write(root, 'engine/include/rbln_runtime.h', '#include <stddef.h>\n')
        write(root, 'engine/src/util/file.c', '#include "libnpu.h"\n')
        write(root, 'libnpu/include/libnpu.h', '#include <stdint.h>\n')
        write(root, 'engine/src/newdir/x.c', '\n')
        write(root, 'engine/src/serve/http/server.h', '\n')
        write(root, 'engine/src/serve/http/reply.c', '#include "server.h"\n')
        def target(name, kind, *sources):
            return {'name': name, 'type': kind + ' library', 'target_sources': [
                {'sources': [os.path.join(root, s) for s in sources]}]}
        write(root, 'meson-info/intro-targets.json', json.dumps([
            target('rbln_model', 'static', 'driver/model/rbln_model_exec.c'),
            target('npu', 'shared', 'engine/src/util/file.c'),
            target('rbln_engine_front', 'static', 'engine/src/util/file.c'),
            target('rbln_serve_http', 'static', 'engine/src/serve/http/reply.c'),
        ] + [target(n, 'static') for n in sorted(
            {l.library for l in read_table(root).values() if l.library} -
            {'rbln_model', 'npu', 'rbln_engine_front', 'rbln_serve_http'})]))
        import io
        import contextlib
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            bad, _ = check(root, os.path.join(root, 'meson-info/intro-targets.json'))
        text = out.getvalue()
    expected = [
        'rbln_model_exec.c:1: layer model includes no system header',
        'libnpu/stream.c:2: layer libnpu may not include engine/include/rbln_runtime.h',
        'engine/src/util/file.c:1: layer front may not include libnpu/include/libnpu.h',
        'engine/src/newdir/x.c: in 0 layers',
        'engine/src/serve/http/reply.c:1: layer serve-reply may not include '
        'engine/src/serve/http/server.h',
        'libnpu/stream.c: in a layer of meson library npu, which does not compile it',
        'engine/src/util/file.c: compiled by meson library npu but in layer front',
    ]
    missing = [e for e in expected if e not in text]
    for e in missing:
        print(f'FAIL: self-test: the checker did not report "{e}"')
    if bad != len(expected):
        print(f'FAIL: self-test: {bad} violations reported, {len(expected)} expected:\n{text}')
        return 1
    if missing:
        return 1
    print(f'self-test: all {len(expected)} planted violations reported')
    return 0


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    if argv[1:] == ['--self-test']:
        return self_test(os.path.normpath(os.path.join(here, '..', '..')))
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != '--targets'):
        print(__doc__.strip().split('\n\n')[2], file=sys.stderr)
        return 2
    root = argv[1]
    bad, n = check(root, argv[3] if len(argv) == 4 else None)
    if bad:
        print(f'{bad} layering violations in {n} files (the rule: {DOC})')
        return 1
    print(f'{n} files of uapi/, driver/, libnpu/ and engine/ follow the layering of {DOC}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
