#!/usr/bin/env bash
# The main job on its defaults, from a fresh Debian 12 machine: installs the
# build dependencies, builds userspace, shows the devices libnpu finds (the
# emulated backend when rbln.ko is not loaded) with a cross-device stream,
# compiles the bundled tiny-llama3 for all eight devices (tensor parallel 8,
# flash-attention KV partitions, decoder buckets 4 and 1) and generates.
#
#   bash tools/quickstart.sh                  default prompt
#   bash tools/quickstart.sh --prompt "import os"  any rbln-generate flags
#
# Environment: BUILD (default build), TP (default 8).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
BUILD=${BUILD:-build}
TP=${TP:-8}
# Quiet when the build succeeds; its whole output when it does not.
quiet() {
	local log rc=0
	log=$(mktemp)
	"$@" >"$log" 2>&1 || rc=$?
	if [ $rc -ne 0 ]; then
		cat "$log" >&2
		echo "quickstart: '$*' failed (exit $rc)" >&2
	fi
	rm -f "$log"
	return $rc
}
[ -f "$BUILD/build.ninja" ] || quiet meson setup "$BUILD"
quiet ninja -C "$BUILD"

"$BUILD/tools/rbln-demo/rbln-demo"

model=engine/models/tiny-llama3
compiled=$BUILD/models/tiny-llama3-tp$TP
# Recompile when the checkpoint or the compiler is newer than the output.
if [ ! -f "$compiled/rbln_config.json" ] ||
   [ -n "$(find "$model" "$BUILD/engine/rbln-compile" -newer "$compiled/rbln_config.json")" ]; then
	rm -rf "$compiled"
	mkdir -p "$(dirname "$compiled")"
	"$BUILD/engine/rbln-compile" "$model" -o "$compiled" --tensor-parallel-size "$TP" \
		--batch-size 4 --max-seq-len 2048 --kvcache-partition-len 512 \
		--decoder-batch-sizes 4,1
fi

if [ $# -eq 0 ]; then
	set -- --prompt 'def fibonacci(n):' --max-tokens 64 --temperature 0
fi
echo
echo "rbln-generate --model $compiled $*"
exec "$BUILD/engine/rbln-generate" --model "$compiled" "$@"
