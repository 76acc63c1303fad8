# SPDX-License-Identifier: GPL-2.0-only
#
# tests/vm/guest-limits.sh - what one client may take from rbln.ko, sourced
# by guest.sh (it uses its check, tap, make_links, unload and all_idle).
# Documentation/driver.md, "Limits and accounting", is what it checks:
#
#   - the mem_size rule: by default min(16 GiB, half of RAM / num_devices)
#     rounded down to MiB; an explicit value above that share is capped,
#     with a message naming both; one below it is taken as is;
#   - fdinfo's DRM client usage keys, max_jobs, max_queues and the host
#     budget (rbln-vm-limits);
#   - several hostile processes issuing random ioctls on every device for
#     VM_FUZZ_SECONDS with the module's default parameters (rbln-vm-fuzz):
#     nobody is killed, the OOM killer never runs, and afterwards the
#     devices are idle with no memory in use, nothing of the driver is left
#     (no job, queue, fence or buffer) and the module unloads.
#
# The module is not loaded when limits_main starts, and is not afterwards.

VM_FUZZ_SECONDS=${VM_FUZZ_SECONDS:-120}

# Device memory of rbln0 in bytes, per sysfs.
mem_total0() {
	cat /sys/bus/platform/drivers/rbln/rbln.0/mem_total
}

# The default the driver must derive: min(16 GiB, RAM / 2 / 8) in MiB.
expected_share() {
	local kb mib
	kb=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
	mib=$((kb * 1024 / 2 / 8 / 1048576))
	[ $mib -gt 16384 ] && mib=16384
	echo $((mib * 1048576))
}

t_mem_size_default() {
	local want got i
	want=$(expected_share)
	for i in $(seq 0 7); do
		got=$(cat "/sys/bus/platform/drivers/rbln/rbln.$i/mem_total")
		[ "$got" = "$want" ] || { echo "rbln$i mem_total $got, want $want"; return 1; }
	done
	[ "$(cat /sys/module/rbln/parameters/mem_size)" = "$want" ] ||
		{ echo "parameter mem_size $(cat /sys/module/rbln/parameters/mem_size), want $want"; return 1; }
	echo "mem_total $((want >> 20)) MiB on each of 8 devices"
}

t_mem_size_capped() {
	local want got
	want=$(expected_share)
	insmod "$KO" mem_size=64G || { echo "insmod mem_size=64G"; return 1; }
	got=$(mem_total0)
	dmesg | grep -q "rbln: mem_size=65536 MiB for each of 8 devices is more than the host can back.*capped to $((want >> 20)) MiB" ||
		{ dmesg | grep rbln | tail -n 5; unload; echo "no message naming the cap"; return 1; }
	unload
	[ "$got" = "$want" ] || { echo "mem_total $got, want $want"; return 1; }
}

t_mem_size_small() {
	local got
	insmod "$KO" mem_size=64M || { echo "insmod mem_size=64M"; return 1; }
	got=$(mem_total0)
	unload
	[ "$got" = $((64 << 20)) ] || { echo "mem_total $got"; return 1; }
}

t_bad_limits() {
	local p
	for p in max_jobs=0 max_queues=0 max_queues=100000 mem_size=100; do
		if insmod "$KO" $p 2>/dev/null; then
			unload
			echo "insmod $p succeeded"
			return 1
		fi
	done
}

# Jobs of closed files still run to their end: give them up to 2 minutes.
# READY with no device memory in use is not the end: finished jobs, their
# queues and fences are freed after it (they hold module references), so
# wait_idle also waits for debugfs "live" to reach zero.
t_idle_after_fuzz() {
	wait_idle 600
}

t_no_oom() {
	if dmesg | grep -E 'invoked oom-killer|Out of memory|oom_reaper'; then
		return 1
	fi
	return 0
}

limits_main() {
	local B=$BUILD_DIR/tests/vm
	check "insmod rbln.ko with default parameters" load_defaults || return 1
	check "mem_size defaults to min(16G, half of RAM / 8)" t_mem_size_default
	tap limits "$B/rbln-vm-limits" 0
	tap fuzz "$B/rbln-vm-fuzz" -s "$VM_FUZZ_SECONDS" -p 4
	check "devices idle and memory returned after the fuzz" t_idle_after_fuzz
	check "no OOM kill during the fuzz" t_no_oom
	check "rmmod rbln after the fuzz" unload
	check "mem_size above the host's share is capped with a message" t_mem_size_capped
	check "mem_size below the share is taken as is" t_mem_size_small
	check "out-of-range max_jobs, max_queues, mem_size refuse to load" t_bad_limits
}

load_defaults() {
	insmod "$KO" && make_links
}
