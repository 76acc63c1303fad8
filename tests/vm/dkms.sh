#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tests/vm/dkms.sh - the VM test on the module DKMS builds.
#
# Installs the module source as the rbln-dkms package does
# (dkms/install-source.sh), has dkms build it against Debian's 6.12 headers
# in a scratch DKMS tree (--sourcetree/--dkmstree: nothing of the system's
# /var/lib/dkms or /usr/src changes), checks its vermagic names that kernel,
# then runs tests/vm/run.sh with RBLN_KO set to that module, as dkms left
# it, and checks that the module the guest loaded is that file (its sha256)
# with the srcversion modinfo reads from it. run.sh's checks (the
# conformance suite on rbln.ko, ...) then prove the DKMS build.
#
# Environment: as run.sh (BUILD_DIR, VM_WORK, ...). dkms signs the module
# with its MOK key, creating /var/lib/dkms/mok.key on first use, as any
# dkms build does on Debian.
# The last line is "vm: N passed, N failed", run.sh's counts and this
# script's checks together.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
say() { printf 'vm-dkms: %s\n' "$*"; }
COUNTS_PREFIX=vm COUNTS_TAG=VM-
. "$top/tests/lib/counts.sh"

[ "${VM_NO_INSTALL:-0}" = 1 ] || bash "$top/tools/install-deps.sh" --kernel --package >/dev/null ||
	{ say "tools/install-deps.sh --kernel --package failed"; failed=1; finish; }
kver=$(ls -d /usr/src/linux-headers-6.12*-amd64 2>/dev/null | sort -V | tail -n 1 |
	sed 's|.*/linux-headers-||')
[ -n "$kver" ] || { say "no linux-headers-6.12*-amd64 in /usr/src"; failed=1; finish; }

work=$(mktemp -d /tmp/rbln-dkms.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
version=$("$top/dkms/install-source.sh" --version)
check "dkms source tree (dkms/install-source.sh)" \
	"$top/dkms/install-source.sh" "$work/src/rbln-$version"

say "dkms build rbln/$version for $kver"
mkdir -p "$work/tree"
dkms build -m rbln -v "$version" -k "$kver" --sourcetree "$work/src" \
	--dkmstree "$work/tree" >"$work/dkms.log" 2>&1
rc=$?
check "dkms build rbln/$version -k $kver" test $rc -eq 0
[ $rc -eq 0 ] || { cat "$work/dkms.log"; finish; }

# dkms leaves the module as the kernel's modules are: xz-compressed here.
built=$(find "$work/tree/rbln/$version/$kver" -name 'rbln.ko*' | head -n 1)
case $built in
*.xz) xz -dc "$built" >"$work/rbln.ko" ;;
*.zst) zstd -qdc "$built" >"$work/rbln.ko" ;;
*.gz) gzip -dc "$built" >"$work/rbln.ko" ;;
*) cp "$built" "$work/rbln.ko" ;;
esac
check "dkms made rbln.ko ($built)" test -s "$work/rbln.ko"
vermagic=$(modinfo -F vermagic "$work/rbln.ko")
srcversion=$(modinfo -F srcversion "$work/rbln.ko")
sha=$(sha256sum "$work/rbln.ko" | cut -d' ' -f1)
say "built: vermagic '$vermagic', srcversion $srcversion, sha256 $sha"
check "vermagic of the DKMS build is $kver" test "${vermagic%% *}" = "$kver"

RBLN_KO=$work/rbln.ko bash "$top/tests/vm/run.sh" 2>&1 | tee "$work/vm.log"
vmrc=${PIPESTATUS[0]}
line=$(grep -E '^vm: [0-9]+ passed, [0-9]+ failed' "$work/vm.log" | tail -n 1)
if [ -n "$line" ]; then
	read -r p f < <(sed -E 's/^vm: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/' <<<"$line")
	[ "$vmrc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	passed=$((passed + p)) failed=$((failed + f))
else
	failed=$((failed + 1)); echo "VM-FAIL: run.sh printed no summary (exit $vmrc)"
fi
loaded=$(sed -n 's/^VM-INFO: loaded rbln //p' "$work/vm.log" | tail -n 1)
say "loaded in the VM: $loaded"
check "the VM loaded the DKMS-built rbln.ko" \
	test "$loaded" = "srcversion $srcversion sha256 $sha"
finish
