#!/usr/bin/env bash
# A container given NPUs through rbln-cdi's spec, with a real container
# runtime (podman, reading the spec from /etc/cdi as every CDI runtime
# does): it sees exactly the devices it was given, and rbln-smi, rbln-demo
# and rbln-generate run inside it. The NPUs are libnpu's emulated ones (the
# host has no rbln.ko); the image is built offline from a root filesystem
# tarball (podman import) holding the tools and the libraries they link.
#
#   cdi-container.sh BUILD_DIR SOURCE_DIR        TAP output
#
# It runs in a private mount namespace, where the spec directory is a
# scratch one bound over /etc/cdi and podman's storage is scratch too, so
# the host's containers and specs are not touched. Debian 12's podman 4.3
# reads CDI specs up to cdiVersion 0.5.0, hence --cdi-version 0.5.0.
set -uo pipefail

if [ "${1:-}" != --inner ]; then
	[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2; exit 2; }
	command -v podman >/dev/null || { echo "1..1"; echo "not ok 1 - podman is installed (tools/install-deps.sh)"; exit 1; }
	exec unshare -m --propagation private bash "$0" --inner "$(cd "$1" && pwd)" "$(cd "$2" && pwd)"
fi
build=$2 src=$3
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
diag() { sed 's/^/#   /'; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pm=(podman --root "$tmp/storage" --runroot "$tmp/run" --storage-driver vfs
    --cgroup-manager cgroupfs --events-backend file)
# crun refuses hybrid cgroup hierarchies (v1 controllers plus a v2 mount at
# /sys/fs/cgroup/unified), as some sandboxes have: in this private mount
# namespace the v2 mount is not needed.
if mountpoint -q /sys/fs/cgroup/unified 2>/dev/null; then umount /sys/fs/cgroup/unified; fi
# The runtime's default limits (1M open files) exceed what a sandboxed
# root may set; the tools need few.
run=(run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

# The image: busybox, the tools, every library they link (as ldd finds them).
root=$tmp/rootfs
mkdir -p "$root/usr/bin" "$root/bin" "$root/tmp" "$root/usr/lib/x86_64-linux-gnu"
cp /bin/busybox "$root/bin/busybox" && ln -s busybox "$root/bin/sh" && ln -s busybox "$root/bin/env"
tools=("$build/tools/rbln-demo/rbln-demo" "$build/tools/rbln-smi/rbln-smi"
       "$build/engine/rbln-generate")
for t in "${tools[@]}"; do
	cp "$t" "$root/usr/bin/"
	ldd "$t" | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | while read -r lib; do
		case $lib in
		"$build"/*) cp -L "$lib" "$root/usr/lib/x86_64-linux-gnu/" ;;
		*) mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib" ;;
		esac
	done
done
tar -C "$root" -cf "$tmp/rootfs.tar" .
"${pm[@]}" import "$tmp/rootfs.tar" localhost/rbln-cdi-test:latest >"$tmp/import.log" 2>&1
ok $? "podman import of a root filesystem with the tools" || true
[ $failed -eq 0 ] || diag <"$tmp/import.log"

# The spec, where CDI runtimes look for it.
mkdir -p "$tmp/cdi" /etc/cdi && mount --bind "$tmp/cdi" /etc/cdi
RBLN_BACKEND=emul "$build/tools/rbln-cdi/rbln-cdi" generate --cdi-version 0.5.0 \
	--output /etc/cdi/rbln.yaml 2>"$tmp/cdi.log"
ok $? "rbln-cdi generate --output /etc/cdi/rbln.yaml"

img=localhost/rbln-cdi-test:latest
"${pm[@]}" "${run[@]}" --device rebellions.ai/npu=2 --device rebellions.ai/npu=5 "$img" \
	rbln-demo >"$tmp/two.log" 2>&1
rc=$?
grep -q 'backend: emul, 2 visible device(s)' "$tmp/two.log" &&
	grep -Eq '^0 +2 +RBLN' "$tmp/two.log" && grep -Eq '^1 +5 +RBLN' "$tmp/two.log" &&
	grep -q 'ok$' "$tmp/two.log"
ok $((rc | $?)) "--device npu=2 --device npu=5: rbln-demo sees exactly NPUs 2 and 5 and runs"
[ $rc -eq 0 ] && grep -q 'ok$' "$tmp/two.log" || diag <"$tmp/two.log"

"${pm[@]}" "${run[@]}" --device rebellions.ai/npu=all "$img" rbln-demo >"$tmp/all.log" 2>&1
rc=$?
grep -q 'backend: emul, 8 visible device(s)' "$tmp/all.log"
ok $((rc | $?)) "--device npu=all: rbln-demo sees all eight NPUs"

"${pm[@]}" "${run[@]}" --device rebellions.ai/npu=all "$img" rbln-smi >"$tmp/smi.log" 2>&1
rc=$?
[ "$(grep -c '| rbln[0-9]' "$tmp/smi.log")" = 8 ]
ok $((rc | $?)) "--device npu=all: rbln-smi lists the eight NPUs"
[ $rc -eq 0 ] || diag <"$tmp/smi.log"

"${pm[@]}" "${run[@]}" --device rebellions.ai/npu=1 --device rebellions.ai/npu=6 "$img" \
	rbln-smi -q index --format csv,noheader >"$tmp/smi2.log" 2>&1
[ "$(tr '\n' ' ' <"$tmp/smi2.log")" = "1 6 " ]
ok $? "--device npu=1 --device npu=6: rbln-smi lists NPUs 1 and 6 alone"

"${pm[@]}" "${run[@]}" --device rebellions.ai/npu=3 "$img" env >"$tmp/env.log" 2>&1
grep -qx 'RBLN_BACKEND=emul' "$tmp/env.log" && grep -qx 'RBLN_DEVICE_3=1' "$tmp/env.log" &&
	[ "$(grep -c '^RBLN_DEVICE_' "$tmp/env.log")" = 1 ]
ok $? "--device npu=3: the container's environment names that NPU alone"

"${pm[@]}" "${run[@]}" --device rebellions.ai/npu=9 "$img" true >"$tmp/bad.log" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q 'unresolvable CDI devices rebellions.ai/npu=9' "$tmp/bad.log"
ok $? "--device npu=9 (no such NPU) is refused by the runtime"

# A generate inside, on NPUs 4 and 6 (tensor parallel 2), against the same
# generate on the host on the same devices.
model=$tmp/model
"$build/engine/rbln-compile" "$src/engine/models/tiny-llama3" -o "$model" \
	--tensor-parallel-size 2 --batch-size 1 --max-seq-len 512 >"$tmp/compile.log" 2>&1
ok $? "rbln-compile tiny-llama3 for TP 2"
gen=(rbln-generate --model /model --prompt 'def fibonacci(n):' --max-tokens 24 --temperature 0)
"${pm[@]}" "${run[@]}" -v "$model:/model:ro" --device rebellions.ai/npu=4 \
	--device rebellions.ai/npu=6 "$img" "${gen[@]}" >"$tmp/in.txt" 2>"$tmp/in.err"
rc=$?
RBLN_BACKEND=emul RBLN_DEVICES=4,6 "$build/engine/rbln-generate" --model "$model" \
	"${gen[@]:3}" >"$tmp/host.txt" 2>"$tmp/host.err"
[ $rc -eq 0 ] && [ -s "$tmp/in.txt" ] && cmp -s "$tmp/in.txt" "$tmp/host.txt"
ok $? "rbln-generate in the container on NPUs 4 and 6 gives the host's text"
[ $rc -eq 0 ] || diag <"$tmp/in.err"
sed 's/^/# container: /' "$tmp/in.txt" | head -5

echo "1..$n"
[ $failed -eq 0 ]
