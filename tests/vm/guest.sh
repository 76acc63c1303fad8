#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tests/vm/guest.sh - the checks run inside the VM (see run.sh), in a chroot
# of the host's root shared read-only over 9p. The drm, drm_shmem_helper
# and gpu-sched modules are loaded; rbln.ko is at /tmp/rbln.ko.
#
# Every check prints one line "VM-PASS: name" or "VM-FAIL: name"; run.sh
# counts them. Environment: TOP (the source tree), BUILD_DIR (the Meson
# build), VM_CYCLES, VM_STRESS_SECONDS.
set -u

TOP=${TOP:?}
BUILD_DIR=${BUILD_DIR:?}
VM_CYCLES=${VM_CYCLES:-20}
VM_STRESS_SECONDS=${VM_STRESS_SECONDS:-20}
KO=/tmp/rbln.ko
NDEV=8
# Short job timeout so that hang detection is quick under TCG.
TIMEOUT_MS=1000
PARAMS="num_devices=$NDEV job_timeout_ms=$TIMEOUT_MS"
DBG=/sys/kernel/debug/accel

pass() { echo "VM-PASS: $*"; }
fail() { echo "VM-FAIL: $*"; }
info() { echo "VM-INFO: $*"; }
check() { # name, command...
	local name=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		pass "$name"
	else
		fail "$name (exit $rc)"
		printf '%s\n' "$out" | tail -n 40 | sed 's/^/    /'
	fi
	return $rc
}

# The logic of tools/udev/70-rbln.rules: /dev/rblnN -> accel/accelM for the
# accel nodes whose parent device is bound to the rbln driver, N its index.
make_links() {
	local node dev idx
	rm -f /dev/rbln[0-9]*
	for node in /sys/class/accel/accel*; do
		[ -e "$node" ] || continue
		dev=$(readlink -f "$node/device")
		[ "$(basename "$(readlink -f "$dev/driver")")" = rbln ] || continue
		idx=$(cat "$dev/index")
		mkdir -p /dev/accel
		ln -sf "accel/$(basename "$node")" "/dev/rbln$idx"
		chgrp render "/dev/accel/$(basename "$node")" 2>/dev/null
		chmod 0660 "/dev/accel/$(basename "$node")"
	done
}

load() { # extra params...
	insmod "$KO" $PARAMS "$@" && make_links
}

unload() {
	rm -f /dev/rbln[0-9]*
	rmmod rbln
}

count_nodes() {
	local n=0 node dev
	for node in /sys/class/accel/accel*; do
		[ -e "$node" ] || continue
		dev=$(readlink -f "$node/device")
		[ "$(basename "$(readlink -f "$dev/driver")")" = rbln ] && n=$((n + 1))
	done
	echo $n
}

t_nodes() {
	local n i
	n=$(count_nodes)
	[ "$n" -eq $NDEV ] || { echo "$n accel nodes"; return 1; }
	for i in $(seq 0 $((NDEV - 1))); do
		[ -c "/dev/rbln$i" ] || { echo "no /dev/rbln$i"; return 1; }
	done
	ls -l /dev/accel /dev/rbln*
}

t_sysfs() {
	local d f i=0 node
	for node in /dev/rbln[0-9]*; do
		d=/sys/class/accel/$(basename "$(readlink "$node")")/device
		for f in index status mem_used mem_total utilization busy_time \
			resets numa_node temperature power_draw isa_version name; do
			[ -r "$d/$f" ] || { echo "$d/$f missing"; return 1; }
		done
		[ "$(cat "$d/status")" = READY ] || { echo "$d status $(cat "$d/status")"; return 1; }
		[ "$(cat "$d/isa_version")" = 1.0 ] || return 1
		i=$((i + 1))
	done
	# Devices spread over the VM's two NUMA nodes.
	d=/sys/class/accel/$(basename "$(readlink /dev/rbln1)")/device
	[ "$(cat "$d/numa_node")" = 1 ] || { echo "rbln1 on node $(cat "$d/numa_node")"; return 1; }
	grep -H . /sys/class/accel/accel0/device/{index,status,mem_total,numa_node,temperature,power_draw,isa_version}
}

# The libnpu conformance suite, unchanged, against rbln.ko. Each TAP case
# counts as a check.
t_conformance() {
	local bin=$BUILD_DIR/tests/conformance/npu-conformance out rc
	[ -x "$bin" ] || { fail "conformance suite ($bin missing)"; return; }
	out=$(RBLN_BACKEND=kernel CMOCKA_MESSAGE_OUTPUT=TAP timeout 600 "$bin" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed -n 's/^ok [0-9]* - \(.*\)/VM-PASS: conformance: \1/p'
	printf '%s\n' "$out" | sed -n 's/^not ok [0-9]* - \(.*\)/VM-FAIL: conformance: \1/p'
	if [ $rc -ne 0 ]; then
		printf '%s\n' "$out" | grep -v '^ok ' | tail -n 60 | sed 's/^/    /'
	fi
	printf '%s\n' "$out" | grep -q '^1\.\.' || fail "conformance suite ran (exit $rc)"
}

main() {
	info "guest $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ {print $2}' /proc/meminfo) kB"
	check "insmod rbln.ko" load || return 1
	check "8 accel nodes with /dev/rbln0..7 links" t_nodes
	check "sysfs attributes" t_sysfs
	t_conformance
	check "rmmod rbln" unload
}

main
exit 0
