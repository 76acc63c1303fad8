#!/usr/bin/env bash
# Kernel code quality gates, each one case of the suite:
#   checkpatch   scripts/checkpatch.pl --strict on every driver/ source
#                (from Debian's linux-source-6.12 tarball): no errors,
#                warnings or checks
#   kernel-doc   scripts/kernel-doc -Wall on the uapi headers: no warnings
#   W=1 build    rbln.ko against the 6.12 headers with W=1: no warnings
# Prints "PASS: name" / "FAIL: name" lines; exits non-zero on any failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
work=${KSTYLE_WORK:-/tmp/rbln-kstyle}
tarball=$(ls /usr/src/linux-source-6.12*.tar.xz 2>/dev/null | sort -V | tail -n 1)
kdir=$(ls -d /usr/src/linux-headers-6.12*-amd64 2>/dev/null | sort -V | tail -n 1)
fail=0
pass() { echo "PASS: $1"; }
flunk() { echo "FAIL: $1"; fail=1; }

if [ -z "$tarball" ]; then
	flunk "checkpatch (no /usr/src/linux-source-6.12*.tar.xz: tools/install-deps.sh --kernel)"
	flunk "kernel-doc (no kernel source)"
else
	if [ ! -x "$work/scripts/checkpatch.pl" ] || [ "$tarball" -nt "$work/scripts/checkpatch.pl" ]; then
		rm -rf "$work" && mkdir -p "$work"
		tar -xJf "$tarball" -C "$work" --strip-components=1 --wildcards \
			'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch' '*/scripts/kernel-doc' ||
			flunk "extracting scripts from $tarball"
	fi
	# Every C file of the driver (find, not git: a `git archive` copy has no .git).
	mapfile -t srcs < <(find driver -name '*.[ch]' -type f | sort)
	[ ${#srcs[@]} -gt 0 ] || flunk "no driver sources found"
	out=$(cd "$work" && perl scripts/checkpatch.pl --no-tree --strict --terse --show-types \
		-f "${srcs[@]/#/$top/}" 2>&1)
	rm -f "$work"/.checkpatch-camelcase.* "$top"/.checkpatch-camelcase.*
	if grep -qE ': (ERROR|WARNING|CHECK):' <<<"$out"; then
		grep -E ': (ERROR|WARNING|CHECK):' <<<"$out"
		flunk "checkpatch --strict on ${#srcs[@]} driver files"
	else
		pass "checkpatch --strict on ${#srcs[@]} driver files"
	fi
	out=$(perl "$work/scripts/kernel-doc" -Wall -none uapi/rbln_accel.h uapi/rbln_isa.h 2>&1)
	if [ -n "$out" ]; then echo "$out"; flunk "kernel-doc -Wall on uapi/"; else pass "kernel-doc -Wall on uapi/"; fi
fi

if [ -z "$kdir" ]; then
	flunk "W=1 module build (no 6.12 headers: tools/install-deps.sh --kernel)"
else
	log=$(mktemp)
	make -s -C "$kdir" M="$top" W=1 clean >/dev/null 2>&1
	if make -C "$kdir" M="$top" W=1 modules >"$log" 2>&1 && ! grep -q 'warning:' "$log" &&
	   [ -f "$top/rbln.ko" ]; then
		pass "W=1 module build against $(basename "$kdir")"
	else
		grep -E 'warning:|error:' "$log" | head -n 40
		flunk "W=1 module build against $(basename "$kdir")"
	fi
	rm -f "$log"
fi
exit $fail
