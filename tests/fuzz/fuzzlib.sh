# SPDX-License-Identifier: MIT
# Shared by the engine's and the serving layer's run-fuzz.sh (POSIX sh,
# sourced after they set $here, their own directory, and $fuzz_tag): where
# the targets are built, how the engine's sources are compiled for them, and
# how each target is run and its rate reported.
#
# Environment: RBLN_FUZZ_DIR (build and corpus directory, default a new
# temporary directory), RBLN_MODELS_DIR (reference models, default
# engine/models in the tree), CC (default clang).

src=$(cd "$here/../../.." && pwd)
work=${RBLN_FUZZ_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/rbln-$fuzz_tag-fuzz.XXXXXX")}
models=${RBLN_MODELS_DIR:-$src/engine/models}
cc=${CC:-clang}
export RBLN_MODELS_DIR="$models"

case "$work" in
"$src"/*) echo "run-fuzz.sh: RBLN_FUZZ_DIR must be outside the source tree" >&2; exit 2 ;;
esac
[ -d "$models/tiny-llama3" ] || { echo "run-fuzz.sh: no models at $models" >&2; exit 1; }
mkdir -p "$work/obj"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
objs=""

# fuzz_object FILE: compiles one source for linking into the fuzzers ($cflags).
fuzz_object() {
	o="$work/obj/$(echo "${1#$src/}" | tr / _).o"
	$cc $cflags -fsanitize=fuzzer-no-link -c "$1" -o "$o"
	objs="$objs $o"
}

# fuzz_sources DIR...: every .c below engine/src/DIR.
fuzz_sources() {
	for d in "$@"; do
		for f in $(find "$src/engine/src/$d" -name '*.c' | sort); do
			fuzz_object "$f"
		done
	done
}

# fuzz_targets NAME...: links fuzz_NAME.c of $here with the objects ($libs).
fuzz_targets() {
	for t in "$@"; do
		$cc $cflags -fsanitize=fuzzer "$here/fuzz_$t.c" $objs $libs -o "$work/fuzz_$t"
		mkdir -p "$work/corpus-$t"
	done
}

# fuzz_run "NAME..." LIBFUZZER-OPTION...: runs each target for $seconds with
# its dictionary ($here/NAME.dict) if any; stops at the first failure, with
# the log's tail; prints the runs and executions per second of each.
fuzz_run() {
	targets=$1
	shift
	summary=""
	for t in $targets; do
		echo "== fuzz_$t for ${seconds}s"
		log="$work/fuzz_$t.log"
		dict=""
		[ -f "$here/$t.dict" ] && dict="-dict=$here/$t.dict"
		(cd "$work" && ./fuzz_$t -max_total_time="$seconds" -rss_limit_mb=2048 "$@" \
			-print_final_stats=1 $dict "corpus-$t" > "$log" 2>&1) || {
			tail -40 "$log"
			echo "fuzz_$t FAILED; log and crash input in $work" >&2
			exit 1
		}
		rate=$(grep -o 'exec/s: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
		runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
		summary="$summary
fuzz_$t: $runs runs in ${seconds}s, $rate exec/s"
	done
	echo "$summary"
}
