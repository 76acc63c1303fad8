#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# dkms/install-source.sh - install rbln.ko's source as a DKMS source tree.
#
#   dkms/install-source.sh DIR     e.g. /usr/src/rbln-0.1.0 (then
#                                  dkms install rbln/0.1.0)
#   dkms/install-source.sh --version   print the version DKMS knows it by
#
# DIR gets what Kbuild builds the module from (Kbuild, driver/ with the
# device model, uapi/) and dkms/dkms.conf with its version filled in: the
# project's version from meson.build. Used by debian/rules (rbln-dkms), by
# the VM test's DKMS build and by hand.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$top/meson.build" | head -n 1)
[ -n "$version" ] || { echo "install-source: no version in $top/meson.build" >&2; exit 1; }

case ${1:-} in
--version) echo "$version"; exit 0 ;;
""|-*) echo "usage: $0 DIR | --version" >&2; exit 2 ;;
esac
dest=$1
[ $# -eq 1 ] || { echo "usage: $0 DIR | --version" >&2; exit 2; }

mkdir -p "$dest/driver/model" "$dest/uapi"
install -m 0644 "$top/Kbuild" "$dest/Kbuild"
install -m 0644 "$top"/driver/*.[ch] "$dest/driver/"
install -m 0644 "$top"/driver/model/*.[ch] "$top/driver/model/Kbuild.model" "$dest/driver/model/"
install -m 0644 "$top"/uapi/*.h "$dest/uapi/"
sed "s/#MODULE_VERSION#/$version/" "$top/dkms/dkms.conf" >"$dest/dkms.conf"
chmod 0644 "$dest/dkms.conf"
