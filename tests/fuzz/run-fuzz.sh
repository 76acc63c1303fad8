#!/usr/bin/env bash
# Builds the device-model fuzzer (libFuzzer + ASan + UBSan, clang) and runs
# it for SECONDS. Exits non-zero when the fuzzer finds a crash, a leak or a
# broken invariant; the reproducer is left in the build directory.
#
#   tests/fuzz/run-fuzz.sh SECONDS
#
# Environment: BUILD_DIR (default build-fuzz, relative to the current
# directory), CC (default clang-14, else clang).
set -euo pipefail

secs=${1:?usage: $0 SECONDS}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-build-fuzz}
mkdir -p "$build"
build=$(cd "$build" && pwd)
if [ -z "${CC:-}" ]; then
	CC=$(command -v clang-14 || command -v clang || true)
fi
if [ -z "$CC" ]; then
	echo "run-fuzz.sh: clang not found" >&2
	exit 1
fi

# Everything instrumented: the model is what is being fuzzed. The same
# model flags as the userspace and kernel builds.
cflags=(-std=c11 -D_GNU_SOURCE -g -Wall -Wextra -Werror
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
	-fno-omit-frame-pointer -ffp-contract=off -fno-strict-aliasing
	-I"$src/uapi" -I"$src/driver/model")
echo "building $build/fuzz_model with $CC"
# -O1, but the compute kernels at -O0: their fully unrolled tiles took
# clang-14 over ten minutes for rbln_model_kern_avx512.c at -O1 with the
# sanitizers (3.6 s at -O0), and what the fuzzer finds is in validation
# and the kernels' bounds, which -O0 checks as well. One compiler per file,
# as many at once as there are CPUs.
srcs=("$src"/driver/model/*.c "$src/tests/fuzz/fuzz_model.c")
objs=()
for f in "${srcs[@]}"; do
	objs+=("$build/$(basename "$f" .c).o")
done
rm -f "${objs[@]}"
for f in "${srcs[@]}"; do
	case $f in */rbln_model_kern_*) opt=-O0 ;; *) opt=-O1 ;; esac
	printf '%s\0%s\0-o\0%s\0' "$opt" "$f" "$build/$(basename "$f" .c).o"
done | xargs -0 -n 4 -P "$(nproc)" sh -c '"$0" "$@"' "$CC" "${cflags[@]}" -c
"$CC" "${cflags[@]}" "${objs[@]}" -o "$build/fuzz_model"

# New inputs go to the build directory; the seeds stay read-only.
mkdir -p "$build/corpus"
log="$build/fuzz.log"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "fuzzing for ${secs}s (log: $log)"
set +e
"$build/fuzz_model" -max_total_time="$secs" -print_final_stats=1 \
	-max_len=8192 -timeout=10 -rss_limit_mb=4096 \
	-dict="$src/tests/fuzz/model.dict" \
	-artifact_prefix="$build/" \
	"$build/corpus" "$src/tests/fuzz/corpus" >"$log" 2>&1
rc=$?
set -e
tail -n 25 "$log"
# libFuzzer's final statistics; after a crash only its last status line.
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
if [ -z "$rate" ]; then
	rate=$(sed -n 's/.* exec\/s: \([0-9]*\) .*/\1/p' "$log" | tail -n 1)
	runs=$(sed -n 's/^#\([0-9]*\)[[:space:]].* exec\/s: .*/\1/p' "$log" | tail -n 1)
fi
echo "fuzz_model: ${runs:-?} executions, ${rate:-?} exec/s"
if [ "$rc" -ne 0 ]; then
	echo "fuzz_model: FAILED (exit $rc); reproducers:" $(ls "$build"/crash-* "$build"/leak-* "$build"/timeout-* "$build"/oom-* 2>/dev/null)
	exit "$rc"
fi
echo "fuzz_model: no crash in ${secs}s"
