#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tests/vm/run.sh - test rbln.ko in a QEMU virtual machine, in one command.
#
# On a fresh Debian 12 machine (as root) it installs what it needs, builds
# the module against Debian's 6.12 headers from bookworm-backports and the
# userspace programs with Meson, boots the 6.12 kernel under QEMU's TCG
# emulation (no KVM) with a small initramfs (busybox, the drm, gpu-sched
# and 9p modules, rbln.ko) and the host's root shared
# read-only over virtio-9p, and runs tests/vm/guest.sh inside: the libnpu
# conformance suite against the kernel backend, rbln-smi and the /dev/rbln
# links, ioctl negative tests, a stress run, fault injection and recovery,
# kernel-vs-emulated bit-identical results, hot unplug, and load/unload
# cycles. Output comes back over the serial console.
#
# The run fails on any failed check and on any BUG:, WARNING:, Oops,
# lockup, hung task or leak report in the guest's kernel log; the guest log
# is printed then. The last line is "vm: N passed, N failed".
#
# Environment:
#   BUILD_DIR    Meson build directory of the userspace (default: build)
#   VM_WORK      scratch directory (default: a new /tmp/rbln-vm.XXXXXX, removed
#                after a successful run)
#   VM_TIMEOUT   seconds before the VM is killed (default: 1800)
#   VM_CYCLES    load/use/unload cycles (default: 20)
#   VM_STRESS_SECONDS  length of the stress run (default: 20)
#   VM_FUZZ_SECONDS    length of the random-ioctl fuzz (default: 120)
#   VM_ONLY      run only these guest.sh check functions (for example
#                "t_engine_tp8"), after loading the module: for bisecting
#   VM_NO_INSTALL=1    do not call apt-get (everything must be there)
#   RBLN_MODELS_DIR    reference models (default: engine/models in
#                      the checkout), for the engine check on rbln.ko
#   RBLN_KO      load this rbln.ko as it is instead of building the
#                checkout's (tests/vm/dkms.sh: the DKMS-built module)
#
# Exit status: 0 when every check passed and the kernel log is clean.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-build}
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$top/$BUILD_DIR ;; esac
VM_WORK=${VM_WORK:-}
VM_TIMEOUT=${VM_TIMEOUT:-1800}
VM_CYCLES=${VM_CYCLES:-20}
VM_STRESS_SECONDS=${VM_STRESS_SECONDS:-20}
VM_ONLY=${VM_ONLY:-}
export DEBIAN_FRONTEND=noninteractive

# ------------------------------------------------------------- limits
# What one client may take from rbln.ko (issue 12), tests/vm/guest-limits.sh:
# its random-ioctl fuzz of several processes on all devices runs this long,
# with the module's default parameters in this VM's 3 GiB (set below, -m).
VM_FUZZ_SECONDS=${VM_FUZZ_SECONDS:-120}

say() { printf 'vm: %s\n' "$*"; }
die() {
	say "setup failed: $*"
	echo "vm: 0 passed, 1 failed"
	exit 1
}

# ------------------------------------------------------------- packages

newest_kver() {
	ls -d /usr/src/linux-headers-6.12*-amd64 2>/dev/null | sort -V | tail -n 1 |
		sed 's|.*/linux-headers-||'
}

# tools/install-deps.sh --kernel holds the one list of what the module build
# and this VM need (QEMU, busybox-static, cpio, xz, the 6.12 image and
# headers from bookworm-backports) besides the userspace build's packages.
install_packages() {
	[ "${VM_NO_INSTALL:-0}" = 1 ] && return 0
	bash "$top/tools/install-deps.sh" --kernel >/dev/null ||
		die "tools/install-deps.sh --kernel"
}

install_packages
if [ -z "$VM_WORK" ]; then
	VM_WORK=$(mktemp -d /tmp/rbln-vm.XXXXXX) || die "mktemp"
	auto_work=1
fi
KVER=$(newest_kver)
[ -n "$KVER" ] || die "no linux-headers-6.12*-amd64 in /usr/src"
KDIR=/usr/src/linux-headers-$KVER
KIMG=/boot/vmlinuz-$KVER
MODDIR=/lib/modules/$KVER
[ -r "$KIMG" ] || die "no kernel image $KIMG"
[ -d "$MODDIR" ] || die "no modules in $MODDIR"
say "kernel $KVER"

# ------------------------------------------------------------- builds

mkdir -p "$VM_WORK" || die "cannot create $VM_WORK"
# RBLN_KO names a module built elsewhere, loaded as it is (tests/vm/dkms.sh:
# the DKMS build); otherwise the checkout's is built here.
if [ -n "${RBLN_KO:-}" ]; then
	[ -r "$RBLN_KO" ] || die "RBLN_KO=$RBLN_KO: cannot read it"
	say "module $RBLN_KO (built elsewhere)"
else
	say "building rbln.ko"
	make -s -C "$KDIR" M="$top" W=1 modules >"$VM_WORK/build.log" 2>&1 ||
		{ cat "$VM_WORK/build.log"; die "module build failed"; }
fi

say "building userspace in $BUILD_DIR"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
	meson setup "$BUILD_DIR" "$top" >"$VM_WORK/meson.log" 2>&1 ||
		{ cat "$VM_WORK/meson.log"; die "meson setup failed"; }
fi
ninja -C "$BUILD_DIR" >"$VM_WORK/ninja.log" 2>&1 ||
	{ tail -n 50 "$VM_WORK/ninja.log"; die "userspace build failed"; }

# ------------------------------------------------------------- initramfs

root=$VM_WORK/root
rm -rf "$root"
mkdir -p "$root" || die "cannot create $root"
mkdir -p "$root"/{bin,dev,proc,sys,host,lib/modules,tmp}
cp /bin/busybox "$root/bin/busybox" || die "no /bin/busybox"
for app in sh mount umount insmod mkdir cat echo sleep poweroff mknod ls; do
	ln -s busybox "$root/bin/$app"
done

# Modules in load order: each after its dependencies (modules.dep).
declare -A seen=()
order=()
dep_path() { # module name -> path relative to MODDIR
	local name=${1//-/_}
	awk -F: -v n="$name" '{
		p = $1; b = p; sub(/.*\//, "", b); sub(/\.ko(\.xz|\.zst|\.gz)?$/, "", b)
		gsub(/-/, "_", b)
		if (b == n) { print p; exit }
	}' "$MODDIR/modules.dep"
}
add_module() { # path relative to MODDIR
	local path=$1 deps d
	[ -n "${seen[$path]:-}" ] && return
	seen[$path]=1
	deps=$(awk -F: -v p="$path" '$1 == p { print $2; exit }' "$MODDIR/modules.dep")
	for d in $deps; do add_module "$d"; done
	order+=("$path")
}
for m in drm gpu-sched 9pnet_virtio 9p; do
	p=$(dep_path "$m")
	[ -n "$p" ] || die "module $m not in $MODDIR/modules.dep"
	add_module "$p"
done
: >"$root/lib/modules/load-order"
for p in "${order[@]}"; do
	base=$(basename "$p")
	base=${base%.xz}
	case $p in
	*.xz) xz -dc "$MODDIR/$p" >"$root/lib/modules/$base" || die "xz $p" ;;
	*) cp "$MODDIR/$p" "$root/lib/modules/$base" || die "cp $p" ;;
	esac
	echo "$base" >>"$root/lib/modules/load-order"
done
# Without debug information the module loads faster under emulation.
if [ -n "${RBLN_KO:-}" ]; then
	cp "$RBLN_KO" "$root/lib/modules/rbln.ko" || die "cp $RBLN_KO"
else
	strip --strip-debug -o "$root/lib/modules/rbln.ko" "$top/rbln.ko" ||
		cp "$top/rbln.ko" "$root/lib/modules/rbln.ko"
fi

# The guest gets a fresh tmpfs on /tmp; a checkout or build directory that
# lives under the host's /tmp (CI clones may) is bound back into it from a
# second view of the host's /tmp kept at /mnt.
models_dir=$(cd "${RBLN_MODELS_DIR:-$top/engine/models}" 2>/dev/null && pwd -P) ||
	die "reference models not found at ${RBLN_MODELS_DIR:-$top/engine/models} (set RBLN_MODELS_DIR)"
tmp_binds=""
for path in "$top" "$BUILD_DIR" "$models_dir"; do
	case $path in
	/tmp/?*)
		first=${path#/tmp/}
		first=${first%%/*}
		case " $tmp_binds " in *" $first "*) ;; *) tmp_binds="$tmp_binds $first" ;; esac
		;;
	esac
done
[ -z "$tmp_binds" ] || [ -d /mnt ] || die "$top is under /tmp and the host has no /mnt to keep it visible"

cat >"$root/init" <<EOF
#!/bin/sh
# Guest init: load the modules, share the host's root, run the tests.
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in \$(cat /lib/modules/load-order); do
	insmod /lib/modules/\$m || echo "VM-FAIL: insmod \$m"
done
# Which rbln.ko the tests load (tests/vm/dkms.sh checks it is the DKMS
# build): load it once to read its srcversion from the kernel, then unload.
set -- \$(/bin/busybox sha256sum /lib/modules/rbln.ko)
if insmod /lib/modules/rbln.ko; then
	echo "VM-INFO: loaded rbln srcversion \$(cat /sys/module/rbln/srcversion) sha256 \$1"
	/bin/busybox rmmod rbln || echo "VM-FAIL: rmmod rbln after reading its srcversion"
else
	echo "VM-FAIL: insmod /lib/modules/rbln.ko"
fi
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /host ||
	echo "VM-FAIL: mount 9p host root"
mount -t proc proc /host/proc
mount -t sysfs sysfs /host/sys
mount -t devtmpfs devtmpfs /host/dev
mount -t devpts devpts /host/dev/pts 2>/dev/null
[ -z "$tmp_binds" ] || mount -o bind /host/tmp /host/mnt
mount -t tmpfs tmpfs /host/tmp
for d in $tmp_binds; do
	mkdir -p /host/tmp/\$d && mount -o bind /host/mnt/\$d /host/tmp/\$d ||
		echo "VM-FAIL: bind /tmp/\$d into the guest"
done
mount -t tmpfs tmpfs /host/run
mount -t debugfs debugfs /host/sys/kernel/debug
cp /lib/modules/rbln.ko /host/tmp/rbln.ko
echo "VM-BOOTED"
/bin/busybox chroot /host /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/tmp TMPDIR=/tmp TOP="$top" BUILD_DIR="$BUILD_DIR" RBLN_MODELS_DIR="$models_dir" \
	VM_CYCLES="$VM_CYCLES" VM_STRESS_SECONDS="$VM_STRESS_SECONDS" \
	VM_FUZZ_SECONDS="$VM_FUZZ_SECONDS" VM_ONLY="$VM_ONLY" \
	/bin/bash "$top/tests/vm/guest.sh"
echo "VM-DONE \$?"
echo "VM-DMESG-BEGIN"
/bin/busybox dmesg
echo "VM-DMESG-END"
poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1 >"$VM_WORK/initramfs.gz") ||
	die "cannot pack the initramfs"

# ------------------------------------------------------------- boot

log=$VM_WORK/serial.log
# One VM at a time on this machine (TCG needs every core it can get).
exec 8>/tmp/rbln-vm.lock
if ! flock -n 8; then
	say "waiting for another VM run to finish"
	flock 8
fi
say "booting $KIMG under QEMU TCG (log: $log)"
start=$(date +%s)
# One TCG thread for both vCPUs: with a thread per vCPU (QEMU 7.2's
# default) the guest's RFLAGS came back corrupted under the stress run
# twice in a row on 2026-11-29 (a kernel #DB warning showing EFLAGS with
# reserved bits 29-30 set, then a general protection fault in the
# stress program's check of a mapped buffer), with no change to the
# module, libnpu or the test since runs that passed.
timeout --foreground -k 10 "$VM_TIMEOUT" qemu-system-x86_64 \
	-accel tcg,thread=single -cpu max -smp 2,sockets=2,cores=1,threads=1 -m 3072 \
	-object memory-backend-ram,id=m0,size=1536M \
	-object memory-backend-ram,id=m1,size=1536M \
	-numa node,nodeid=0,cpus=0,memdev=m0 \
	-numa node,nodeid=1,cpus=1,memdev=m1 \
	-no-reboot -nodefaults -display none -monitor none -serial stdio \
	-kernel "$KIMG" -initrd "$VM_WORK/initramfs.gz" \
	-append "console=ttyS0 loglevel=4 panic=-1 oops=panic softlockup_panic=0 nokaslr rdinit=/init" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	</dev/null >"$log" 2>&1
qrc=$?
flock -u 8
say "VM ran $(( $(date +%s) - start )) s (qemu exit $qrc)"

# ------------------------------------------------------------- verdict

tr -d '\r' <"$log" >"$log.txt"
passed=$(grep -c '^VM-PASS: ' "$log.txt")
failed=$(grep -c '^VM-FAIL: ' "$log.txt")
grep -E '^VM-(PASS|FAIL|INFO): ' "$log.txt"

# One warning is the emulator's, not the kernel's: a #DB with its
# single-step bit in kernel mode, which the kernel never asks for
# (exc_debug_kernel() warns; its comment names QEMU's leaking of #DB into
# guests). Under TCG it came once in seven CI runs (2026-11-29), in mm code
# during an mmap() of the fuzzer, the interrupted EFLAGS with reserved bits
# set. Its trace, up to its end marker and at most 80 lines, is left out of
# the check below and shown as information.
awk -v out="$log.dbg" '
	/WARNING: .* at arch\/x86\/kernel\/traps\.c:[0-9]+ exc_debug_kernel/ {
		skip = 80; print > out
	}
	skip { skip--; if (/---\[ end trace/) skip = 0; next }
	{ print }
' "$log.txt" >"$log.chk"
if [ -s "$log.dbg" ]; then
	while IFS= read -r line; do
		echo "VM-INFO: left out, the emulator's #DB: $line"
	done <"$log.dbg"
fi

# Kernel problems anywhere in the console output or the final dmesg.
bad='(BUG:|WARNING:|Oops|general protection fault|Kernel panic|soft lockup|hard LOCKUP|rcu_sched self-detected stall|rcu: INFO|blocked for more than|hung_task|kmemleak|rbln: leak|UBSAN:|KASAN:|Call Trace:|refcount_t:|list_add corruption|list_del corruption|sleeping function called from invalid context|scheduling while atomic)'
if grep -Eq "$bad" "$log.chk"; then
	say "kernel log reports problems:"
	grep -En "$bad" "$log.chk" | head -n 20
	failed=$((failed + 1))
	echo "VM-FAIL: clean kernel log"
else
	passed=$((passed + 1))
	echo "VM-PASS: clean kernel log"
fi
if ! grep -q '^VM-DONE 0' "$log.txt"; then
	say "the guest did not run to the end (timeout ${VM_TIMEOUT}s, crash or script error)"
	failed=$((failed + 1))
	echo "VM-FAIL: guest ran to the end"
fi

if [ "$failed" -ne 0 ]; then
	say "guest log follows"
	echo "----------------------------------------------------------------"
	cat "$log.txt"
	echo "----------------------------------------------------------------"
fi
if [ "$failed" -eq 0 ] && [ "${auto_work:-0}" = 1 ]; then
	rm -rf "$VM_WORK"
else
	say "logs kept in $VM_WORK"
fi
echo "vm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
