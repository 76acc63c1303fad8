#!/usr/bin/env python3
"""Every relative link of the tree's Markdown documents resolves.

The guides point into each other by file and heading (engine-guide.md#benchmark,
benchmark-log.md#2026-11-29-...); when a section moves or is renamed, a link to
it must move too. For each Markdown file of the source tree (build directories
skipped) and each link in it that is neither a URL nor inside a code block or
span: the file it names exists, and its fragment, if any, is the anchor GitHub
gives one of that file's headings.

Usage: doc_links.py SOURCE_ROOT   (TAP: one test per Markdown file)
"""
import functools
import os
import re
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
from self_contained import is_build_dir  # noqa: E402 (the same build directories)

SKIP_DIRS = {".git", "node_modules", "debian"}
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"`[^`]*`")
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
URL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def markdown_files(root):
    for top, dirs, names in os.walk(root):
        if is_build_dir(top, names):
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build"))
        for n in sorted(names):
            if n.endswith(".md"):
                yield os.path.join(top, n)


def lines_outside_code(path):
    """(line number, text) of each line outside fenced blocks, code spans removed."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield no, CODE_SPAN.sub("", line)


def slug(text):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link's text only
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@functools.lru_cache(maxsize=None)
def anchors(path):
    found, seen = set(), {}
    fenced = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                fenced = not fenced
                continue
            m = None if fenced else HEADING.match(line)
            if m:
                s = slug(m.group(2))
                n = seen.get(s, 0)
                seen[s] = n + 1
                found.add(s if n == 0 else "%s-%d" % (s, n))
    return found


def broken_links(path):
    for no, line in lines_outside_code(path):
        for target in LINK.findall(line):
            if URL.match(target) or target.startswith("mailto:"):
                continue
            name, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), name)) if name else path
            if not os.path.exists(dest):
                yield "%d: %s: no such file" % (no, target)
            elif frag and dest.endswith(".md") and frag not in anchors(dest):
                yield "%d: %s: no heading with that anchor" % (no, target)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    files = list(markdown_files(root))
    print("1..%d" % len(files))
    failed = 0
    for i, path in enumerate(files, 1):
        bad = list(broken_links(path))
        rel = os.path.relpath(path, root)
        print("%s %d - %s" % ("not ok" if bad else "ok", i, rel))
        for b in bad:
            print("#   %s:%s" % (rel, b))
        failed += bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
