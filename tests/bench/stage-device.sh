#!/usr/bin/env bash
# Stages a build's benchmarks for a machine without apt (the device machine:
# Ubuntu, no network): rbln-kbench, rbln-bench, rbln-compile and
# rbln-generate in OUT/bin, libnpu.so.1 and the shared libraries they load
# from this machine (libdrm, libnuma, libudev, json-c, nettle; not glibc) in
# OUT/lib, and each NAME=BUILD_DIR's libnpu.so.1 in OUT/NAME, so that one
# measurement can alternate libnpu builds (a variant is a build of a git
# worktree with its change). Everything is stripped; OUT is replaced.
#
#   tests/bench/stage-device.sh [-b BUILD] [-o OUT] [NAME=BUILD_DIR ...]
#
# BUILD defaults to build, OUT to build-dev/dev (/build*/ is ignored by git,
# so OUT travels only where named: run's carry ["build-dev"]). There:
#
#   LD_LIBRARY_PATH=OUT/lib OUT/bin/rbln-kbench -e 16 -t 16 -v
#   LD_LIBRARY_PATH=OUT/NAME:OUT/lib OUT/bin/rbln-kbench -e 16 -t 16 -m 1
#   PATH=$PWD/OUT/bin:$PATH LD_LIBRARY_PATH=OUT/lib OUT/bin/rbln-bench ...
set -euo pipefail

usage() {
	echo "usage: $0 [-b BUILD] [-o OUT] [NAME=BUILD_DIR ...]" >&2
	exit 2
}

build=build
out="build-dev/dev"
while getopts b:o: opt; do
	case $opt in
	b) build=$OPTARG ;;
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))

bins=(tests/bench/rbln-kbench engine/rbln-bench engine/rbln-compile engine/rbln-generate)
for b in "${bins[@]}" libnpu/libnpu.so.1; do
	[ -e "$build/$b" ] || { echo "$0: $build/$b: not built (ninja -C $build)" >&2; exit 1; }
done
for v in "$@"; do
	case $v in
	[A-Za-z0-9]*=*) ;;
	*) echo "$0: $v: not NAME=BUILD_DIR" >&2; usage ;;
	esac
	[ -e "${v#*=}/libnpu/libnpu.so.1" ] ||
		{ echo "$0: ${v#*=}/libnpu/libnpu.so.1: not built" >&2; exit 1; }
done

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
for b in "${bins[@]}"; do
	cp -L "$build/$b" "$out/bin/"
done
cp -L "$build/libnpu/libnpu.so.1" "$out/lib/"

# The libraries the binaries load from this machine, but not the C library
# (the other machine's is newer, and binaries built against an older glibc
# run on it) and not libnpu (staged above).
for f in "${bins[@]/#/$build/}" "$build/libnpu/libnpu.so.1"; do
	ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r name path; do
	case $name in
	libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | ld-linux* | libnpu.so.*) ;;
	*) cp -L "$path" "$out/lib/$name" ;;
	esac
done

for v in "$@"; do
	mkdir -p "$out/${v%%=*}"
	cp -L "${v#*=}/libnpu/libnpu.so.1" "$out/${v%%=*}/"
done
strip "$out"/bin/* "$out"/lib/libnpu.so.1
for v in "$@"; do
	strip "$out/${v%%=*}/libnpu.so.1"
done
echo "staged in $out ($(du -sh "$out" | cut -f1)): $(cd "$out" && echo bin/* lib/* "${@%%=*}")"
