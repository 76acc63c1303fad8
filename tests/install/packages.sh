#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/install/packages.sh - the Debian packages build, and lintian passes.
#
# Copies the checkout (without build directories) to a scratch directory,
# runs `dpkg-buildpackage -b -us -uc` there (with nocheck: run-all.sh's
# first stage ran the tests), checks that the five packages were made and
# runs lintian on them: any error fails, warnings are printed.
#
#   bash tests/install/packages.sh [OUT_DIR]   OUT_DIR keeps the .deb files
#
# Last line: "packages: N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-}
COUNTS_PREFIX=packages COUNTS_TAG=''
. "$top/tests/lib/counts.sh"

bash "$top/tools/install-deps.sh" --package >/dev/null ||
	{ echo "FAIL: tools/install-deps.sh --package"; failed=1; finish; }
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
work=$(mktemp -d /tmp/rbln-deb.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
src=$work/rbln-$version

# The tree as git sees it (tracked and new files, nothing ignored); a tree
# without git (an archive) is copied without its build directories.
mkdir -p "$src"
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		cpio -0 -pdm --quiet "$src")
else
	(cd "$top" && tar -c --exclude='./build*' --exclude='./obj-*' . | tar -x -C "$src")
fi
check "source copied to $src" test -f "$src/debian/control"

echo "dpkg-buildpackage -b -us -uc (log: $work/build.log)"
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
	dpkg-buildpackage -b -us -uc) >"$work/build.log" 2>&1
rc=$?
check "dpkg-buildpackage -b -us -uc" test $rc -eq 0
[ $rc -eq 0 ] || { tail -n 60 "$work/build.log"; finish; }

built() { compgen -G "$work/${1}_${version}_*.deb" >/dev/null; }
for p in rbln-dkms libnpu1 libnpu-dev rbln-tools rbln-engine; do
	check "package $p built" built "$p"
done
changes=$(ls "$work"/rbln_"$version"_*.changes)
lintian --fail-on error --info "$changes" >"$work/lintian.log" 2>&1
rc=$?
sed 's/^/lintian: /' "$work/lintian.log"
check "lintian: no errors" test $rc -eq 0

if [ -n "$out" ]; then
	mkdir -p "$out" && cp "$work"/*.deb "$work"/*.changes "$out"/ &&
		echo "packages in $out"
fi
finish
