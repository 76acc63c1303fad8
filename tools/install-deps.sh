#!/usr/bin/env bash
# Installs every Debian package the userspace build and the tests need.
# Idempotent and quick when everything is present; needs root otherwise.
# Usage: tools/install-deps.sh [--vm]   (--vm adds what tests/vm needs)
set -euo pipefail

pkgs=(build-essential meson ninja-build pkg-config python3
      libdrm-dev libudev-dev libnuma-dev libcmocka-dev
      libpcre2-dev libjson-c-dev libmicrohttpd-dev
      clang libclang-rt-dev curl)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: missing packages: ${missing[*]} (run as root)" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
