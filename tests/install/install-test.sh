#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# tests/install/install-test.sh - `meson install` gives a usable stack.
#
# Installs the build into a scratch DESTDIR, then, as a user of the
# installed files would: builds npu-hello.c out of tree with
# `pkg-config --cflags --libs libnpu` and runs it on the emulated devices,
# runs every installed command's --version and --help, and checks that each
# has its man page, that libnpu(3), the headers, the soname and the udev
# rule are where they belong. TAP output, one case per check.
#
# Usage: install-test.sh BUILD_DIR SOURCE_DIR VERSION LIBNPU_VERSION PREFIX
#        BINDIR LIBDIR INCLUDEDIR MANDIR SANITIZE CC...
set -uo pipefail

[ $# -ge 11 ] || { echo "usage: $0 BUILD SRC VERSION LIBNPU_VERSION PREFIX BINDIR LIBDIR INCLUDEDIR MANDIR SANITIZE CC..." >&2; exit 2; }
build=$1 src=$2 version=$3 libnpu_version=$4 prefix=$5
bindir=$6 libdir=$7 includedir=$8 mandir=$9 sanitize=${10}
shift 10
cc=("$@")

case $bindir in /*) ;; *) bindir=$prefix/$bindir ;; esac
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac
case $includedir in /*) ;; *) includedir=$prefix/$includedir ;; esac
case $mandir in /*) ;; *) mandir=$prefix/$mandir ;; esac

dest=$(mktemp -d "${TMPDIR:-/tmp}/rbln-install.XXXXXX") || exit 1
trap 'rm -rf "$dest"' EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
check() { # description, command...
	local what=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$what"; else not_ok "$what"; printf '# %s\n' "${out//$'\n'/$'\n'# }"; fi
}
# The files are checked after the install, whatever else went wrong.
has() { check "installed: ${1#"$dest"}" test -e "$1"; }

check "meson install --destdir" meson install -C "$build" --no-rebuild --quiet --destdir "$dest"

# ---------------------------------------------------------------- files
has "$dest$libdir/libnpu.so.1"
has "$dest$libdir/libnpu.so"
has "$dest$libdir/pkgconfig/libnpu.pc"
has "$dest$includedir/libnpu.h"
has "$dest$includedir/rbln/rbln_accel.h"
has "$dest$includedir/rbln/rbln_isa.h"
has "$dest$mandir/man3/libnpu.3"
udevdir=$(pkg-config --variable=udevdir udev)
has "$dest$udevdir/rules.d/70-rbln.rules"
check "libnpu.so.1 has soname libnpu.so.1" \
	bash -c "readelf -d '$dest$libdir/libnpu.so.1' | grep -q 'SONAME.*\[libnpu\.so\.1\]'"

# ---------------------------------------------------------------- pkg-config
# The DESTDIR stands in for a sysroot. A real sysroot also holds libdrm's
# headers, which rbln/rbln_accel.h includes ("drm.h"): link the system's in.
drm_inc=$(pkg-config --variable=includedir libdrm)/libdrm
mkdir -p "$dest$(dirname "$drm_inc")"
[ -e "$dest$drm_inc" ] || ln -s "$drm_inc" "$dest$drm_inc"
export PKG_CONFIG_SYSROOT_DIR=$dest
export PKG_CONFIG_PATH=$dest$libdir/pkgconfig
check "pkg-config --modversion libnpu is $libnpu_version" \
	test "$(pkg-config --modversion libnpu 2>&1)" = "$libnpu_version"
check "libnpu.pc requires libdrm (for drm.h)" \
	bash -c 'pkg-config --print-requires libnpu | grep -qx "libdrm.*"'
cflags=$(pkg-config --cflags libnpu) libs=$(pkg-config --libs libnpu)

# ---------------------------------------------------------------- a program
# Built from a copy outside the source tree; -MD shows which headers it saw.
work=$dest/work
mkdir -p "$work" && cp "$src/tests/install/npu-hello.c" "$work/"
san=()
[ "$sanitize" = none ] || san=(-fsanitize="$sanitize")
# shellcheck disable=SC2086 # pkg-config's output is a word list
check "npu-hello builds with pkg-config --cflags --libs libnpu" \
	"${cc[@]}" -std=c11 -Wall -Wextra -Werror "${san[@]}" -MD -MF "$work/npu-hello.d" \
	-o "$work/npu-hello" "$work/npu-hello.c" $cflags $libs
for h in libnpu.h rbln/rbln_accel.h rbln/rbln_isa.h; do
	check "npu-hello used the installed $h" grep -q "$dest$includedir/$h" "$work/npu-hello.d"
done
check "npu-hello found drm.h through libnpu.pc" grep -q "/drm.h" "$work/npu-hello.d"

export LD_LIBRARY_PATH=$dest$libdir
check "npu-hello loads the installed libnpu.so.1" \
	bash -c "ldd '$work/npu-hello' | grep -q '$dest$libdir/libnpu.so.1'"
out=$(RBLN_BACKEND=emul RBLN_EMUL_DEVICES=2 RBLN_EMUL_MEM_SIZE=64M "$work/npu-hello" 2>&1)
rc=$?
printf '# %s\n' "${out//$'\n'/$'\n'# }"
check "npu-hello runs on the emulated devices" \
	test "$rc.$out" = "0.npu-hello: 2 devices (emul backend) ok"

# ---------------------------------------------------------------- commands
commands=$(cd "$dest$bindir" 2>/dev/null && ls)
check "commands are installed" test -n "$commands"
for c in $commands; do
	check "$c has its man page" test -s "$dest$mandir/man1/$c.1"
	check "$c --version says $c $version" \
		test "$("$dest$bindir/$c" --version 2>&1 | head -n 1)" = "$c $version"
	check "$c --help" bash -c "'$dest$bindir/$c' --help | grep -qi 'usage'"
done

echo "1..$n"
[ "$failed" -eq 0 ]
