#!/usr/bin/env bash
# Installs the Debian packages the project needs. Idempotent, and quick when
# everything is present; needs root otherwise.
#
#   tools/install-deps.sh            userspace build and its tests
#   tools/install-deps.sh --kernel   also the module build and the VM test:
#                                    Debian's 6.12 kernel image and headers
#                                    (bookworm-backports, enabled here from
#                                    the same mirror as bookworm), QEMU,
#                                    busybox-static, cpio, xz-utils and
#                                    linux-source-6.12 (for checkpatch.pl)
set -euo pipefail

kernel=0
for arg in "$@"; do
	case $arg in
	--kernel) kernel=1 ;;
	*) echo "usage: $0 [--kernel]" >&2; exit 2 ;;
	esac
done

pkgs=(build-essential meson ninja-build pkg-config python3
      libdrm-dev libudev-dev libnuma-dev libcmocka-dev
      libpcre2-dev libjson-c-dev libmicrohttpd-dev
      clang libclang-rt-dev curl
      libyaml-dev python3-jsonschema python3-yaml podman busybox-static)
kernel_pkgs=(qemu-system-x86 busybox-static cpio xz-utils linux-source-6.12)
backports_pkgs=(linux-image-amd64 linux-headers-amd64)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: missing packages: $* (run as root)" >&2
		exit 1
	fi
}

# bookworm-backports from the mirror the bookworm entry uses.
add_backports() {
	local mirror=""
	grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		mirror=$(awk '/^URIs:/ { uri = $2 } /^Suites:/ && / bookworm( |$)/ { print uri; exit }' \
			/etc/apt/sources.list.d/debian.sources)
	fi
	if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
		mirror=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list)
	fi
	mirror=${mirror:-http://deb.debian.org/debian}
	cat >/etc/apt/sources.list.d/bookworm-backports.sources <<-EOF
	Types: deb
	URIs: $mirror
	Suites: bookworm-backports
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
}

export DEBIAN_FRONTEND=noninteractive
updated=0
apt_install() { # [-t suite] packages...
	[ $updated = 1 ] || { apt-get update -q; updated=1; }
	apt-get install -y -q --no-install-recommends "$@"
}

missing=()
list=("${pkgs[@]}")
[ $kernel = 1 ] && list+=("${kernel_pkgs[@]}")
for p in "${list[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
	need_root "${missing[@]}"
	apt_install "${missing[@]}"
fi

# node and npm for the OpenAI Node SDK test: Debian's, unless the machine
# already has them (another node distribution ships npm inside nodejs).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	need_root nodejs npm
	apt_install nodejs npm
fi

if [ $kernel = 1 ] && ! { ls -d /usr/src/linux-headers-6.12*-amd64 && ls /boot/vmlinuz-6.12*; } >/dev/null 2>&1; then
	need_root "${backports_pkgs[@]}"
	add_backports
	updated=0
	apt_install -t bookworm-backports "${backports_pkgs[@]}"
fi
exit 0
