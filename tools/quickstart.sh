#!/usr/bin/env bash
# The main job on its defaults, from a fresh Debian 12 machine: installs the
# build dependencies, builds userspace and runs the demo on the devices
# libnpu finds (the emulated backend when rbln.ko is not loaded).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
BUILD=${BUILD:-build}
[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null
ninja -C "$BUILD" >/dev/null
exec "$BUILD/tools/rbln-demo/rbln-demo" "$@"
