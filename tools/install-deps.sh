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
#   tools/install-deps.sh --package  also what building the Debian packages
#                                    (dpkg-buildpackage, debian/) and
#                                    checking them needs: debhelper, dh-dkms,
#                                    dkms, lintian
set -euo pipefail

kernel=0 package=0
for arg in "$@"; do
	case $arg in
	--kernel) kernel=1 ;;
	--package) package=1 ;;
	*) echo "usage: $0 [--kernel] [--package]" >&2; exit 2 ;;
	esac
done

pkgs=(build-essential meson ninja-build pkg-config python3
      libdrm-dev libudev-dev libnuma-dev libcmocka-dev
      libpcre2-dev libjson-c-dev libmicrohttpd-dev nettle-dev
      clang libclang-rt-dev curl openssl
      libyaml-dev python3-jsonschema python3-yaml podman busybox-static
      help2man udev)
kernel_pkgs=(qemu-system-x86 busybox-static cpio xz-utils linux-source-6.12)
backports_pkgs=(linux-image-amd64 linux-headers-amd64)
# debian/control's Build-Depends beyond pkgs, and the tools that check them.
package_pkgs=(debhelper dh-dkms dkms lintian)

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
[ $package = 1 ] && list+=("${package_pkgs[@]}")
for p in "${list[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
	need_root "${missing[@]}"
	apt_install "${missing[@]}"
fi

# udev.pc (where udev rules go) is in udev up to systemd 252 (bookworm) and
# in systemd-dev from 253 on (bookworm-backports, trixie).
if ! pkg-config --exists udev; then
	need_root systemd-dev
	apt_install systemd-dev
fi

if [ $kernel = 1 ] && ! { ls -d /usr/src/linux-headers-6.12*-amd64 && ls /boot/vmlinuz-6.12*; } >/dev/null 2>&1; then
	need_root "${backports_pkgs[@]}"
	add_backports
	updated=0
	apt_install -t bookworm-backports "${backports_pkgs[@]}"
fi
exit 0
