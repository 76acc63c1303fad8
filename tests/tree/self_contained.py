#!/usr/bin/env python3
"""The tree names no path outside itself.

Users clone this repository and have nothing beside it, so no file may
point at a sibling directory (../shared and the like), at a developer's
home or scratch directories, or at files a document's author had in /tmp.
Walks the source tree (a git checkout or a `git archive` copy alike),
skipping build directories, and prints every offending line.

Usage: self_contained.py SOURCE_ROOT   (exit 0: clean, 1: offenders found)
"""
import fnmatch
import os
import re
import sys

# Paths that exist only on the machine where a file was written.
OUTSIDE = [
    (re.compile(r"\.\./shared\b"), "the sibling directory ../shared"),
    (re.compile(r"(?<![\w.~-])/(?:work|home/[\w.-]+|root|scratch|workspace)/"),
     "an absolute home or scratch path"),
    (re.compile(r"(?<![\w.~-])/tmp/wt\b"), "a scratch work tree"),
]
# Documents show commands users run: no file of the author's /tmp either.
DOC_ONLY = [
    (re.compile(r"(?<![\w.~-])/tmp/[\w.-]"), "a file in the author's /tmp"),
]
DOC_SUFFIXES = (".md", ".txt", ".rst")
# Data files written by other tools (weights, tokenizers, transformers'
# reference outputs) are not ours to rewrite and are skipped whole.
DATA_SUFFIXES = (".safetensors", ".model", ".bin", ".gguf")
SKIP_NAMES = {".git"}  # a checkout's directory, or a worktree's file
MAX_TEXT = 4 << 20


def is_build_dir(path, names):
    return "meson-private" in names or "build.ninja" in names or "CMakeCache.txt" in names


def ignore_patterns(root):
    """The tree's .gitignore: what builds leave in the tree (Kbuild's .cmd files...)."""
    try:
        with open(os.path.join(root, ".gitignore"), encoding="utf-8") as f:
            lines = [l.strip() for l in f]
    except OSError:
        return []
    return [l for l in lines if l and not l.startswith("#") and not l.startswith("!")]


def ignored(rel, is_dir, patterns):
    for p in patterns:
        dir_only = p.endswith("/")
        p = p.rstrip("/")
        if dir_only and not is_dir:
            continue
        if p.startswith("/"):
            if fnmatch.fnmatch(rel, p[1:]):
                return True
        elif fnmatch.fnmatch(os.path.basename(rel), p):
            return True
    return False


def offenders(root):
    self_path = os.path.realpath(__file__)
    patterns = ignore_patterns(root)
    for dirpath, dirnames, filenames in os.walk(root):
        if is_build_dir(dirpath, set(dirnames) | set(filenames)):
            dirnames[:] = []
            continue
        reldir = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_NAMES and not ignored(
            os.path.normpath(os.path.join(reldir, d)), True, patterns))
        for name in sorted(filenames):
            if name in SKIP_NAMES or ignored(os.path.normpath(os.path.join(reldir, name)),
                                              False, patterns):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            if os.path.realpath(path) == self_path or name.endswith(DATA_SUFFIXES):
                continue
            if os.path.getsize(path) > MAX_TEXT:
                continue
            with open(path, "rb") as f:
                data = f.read()
            if b"\0" in data:
                continue
            text = data.decode("utf-8", errors="replace")
            rules = OUTSIDE + (DOC_ONLY if name.endswith(DOC_SUFFIXES) else [])
            for lineno, line in enumerate(text.splitlines(), 1):
                for pattern, what in rules:
                    m = pattern.search(line)
                    if m:
                        yield rel, lineno, what, line.strip()[:160]


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = sys.argv[1]
    found = list(offenders(root))
    print("1..1")
    for rel, lineno, what, line in found:
        print(f"# {rel}:{lineno}: names {what}: {line}")
    print(f"{'not ok' if found else 'ok'} 1 - no file names a path outside the tree"
          f" ({len(found)} offending lines)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
