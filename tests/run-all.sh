#!/usr/bin/env bash
# The whole test suite. Last line: "N passed, N failed" (", N skipped").
#
#   1. unit and conformance tests (meson, cmocka/TAP), plain build
#   2. the same under AddressSanitizer + UndefinedBehaviorSanitizer (+LSan)
#   3. kernel code gates: checkpatch --strict, kernel-doc, W=1 build
#   4. the fuzzers, each target for FUZZ_SECONDS (default 30)
#   5. the kernel driver in a QEMU VM (tests/vm/run.sh), on the module DKMS
#      builds (tests/vm/dkms.sh)
#   6. the Debian packages build and pass lintian (tests/install/packages.sh)
#
# Environment: FUZZ_SECONDS, SKIP_VM=1 (development only: the VM stage then
# counts as failed, never as passed), BUILD (default build).
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD
BUILD=${BUILD:-build}
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
passed=0 failed=0 skipped=0
started=$(date +%s)

stage() { printf '\n==== %s (%ds)\n' "$*" $(( $(date +%s) - started )); }
count() { passed=$((passed + $1)); failed=$((failed + $2)); skipped=$((skipped + ${3:-0})); }
check() { # name, command...: one case that passes when the command does
	local name=$1; shift
	if "$@"; then count 1 0; echo "PASS: $name"; else count 0 1; echo "FAIL: $name"; fi
}

meson_stage() { # build dir, setup args...
	local dir=$1; shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >/dev/null || { count 0 1; echo "FAIL: meson setup $dir"; return; }
	fi
	if ! ninja -C "$dir"; then count 0 1; echo "FAIL: build $dir"; return; fi
	meson test -C "$dir" --print-errorlogs --num-processes 2 --timeout-multiplier 3
	read -r p f s < <(python3 tests/tap-count.py "$dir/meson-logs/testlog.json")
	echo "$dir: $p passed, $f failed, $s skipped"
	count "$p" "$f" "$s"
}

stage "dependencies"
tools/install-deps.sh --kernel --package || { echo "dependency installation failed"; echo "0 passed, 1 failed"; exit 1; }

stage "unit + conformance tests ($BUILD)"
meson_stage "$BUILD"

stage "unit + conformance tests under ASan+UBSan (build-asan)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
meson_stage build-asan -Db_sanitize=address,undefined -Db_lundef=false
unset ASAN_OPTIONS UBSAN_OPTIONS

stage "kernel code gates (checkpatch --strict, kernel-doc, W=1)"
kslog=$(mktemp)
bash tests/kernel-style.sh 2>&1 | tee "$kslog"
count "$(grep -c '^PASS: ' "$kslog")" "$(grep -c '^FAIL: ' "$kslog")"
rm -f "$kslog"

for fuzz in $(find tests -name run-fuzz.sh -path '*/fuzz/*' | sort); do
	stage "fuzz: $fuzz for ${FUZZ_SECONDS}s"
	check "$fuzz" bash "$fuzz" "$FUZZ_SECONDS"
done

stage "kernel driver in a VM, built by DKMS (tests/vm/dkms.sh)"
if [ "${SKIP_VM:-0}" = 1 ]; then
	echo "FAIL: VM stage not run (SKIP_VM=1)"; count 0 1
else
	vmlog=$(mktemp)
	BUILD_DIR="$top/$BUILD" bash tests/vm/dkms.sh 2>&1 | tee "$vmlog"
	vmrc=${PIPESTATUS[0]}
	line=$(grep -E '^vm: [0-9]+ passed, [0-9]+ failed' "$vmlog" | tail -n 1)
	if [ -n "$line" ]; then
		read -r p f < <(sed -E 's/^vm: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/' <<<"$line")
		[ "$vmrc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
		count "$p" "$f"
	else
		echo "FAIL: VM run printed no summary (exit $vmrc)"; count 0 1
	fi
	rm -f "$vmlog"
fi

stage "Debian packages and lintian (tests/install/packages.sh)"
pkglog=$(mktemp)
bash tests/install/packages.sh 2>&1 | tee "$pkglog"
count "$(grep -c '^PASS: ' "$pkglog")" "$(grep -c '^FAIL: ' "$pkglog")"
grep -Eq '^packages: [0-9]+ passed' "$pkglog" || { echo "FAIL: packages.sh printed no summary"; count 0 1; }
rm -f "$pkglog"

stage "done"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
