#!/usr/bin/env bash
# Builds the device model as a kernel module against the installed 6.12
# headers (one model, two homes: this is the kernel home's compiler and
# flags), then checks that the float code stayed in the FPU objects
# (rbln_model_ops_f32.o, rbln_model_kern_avx2.o, rbln_model_kern_base.o):
# every other object is built with -mno-sse and must not touch a vector
# register; the AVX2 variant has fused multiply-adds on ymm registers, the
# baseline none and no ymm at all. Without the 6.12 headers this FAILS:
# the kernel home is part of what is tested (tools/install-deps.sh
# --kernel installs them).
#
#   kbuild-check.sh SRCDIR   (the repository root)
set -euo pipefail

src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
kdir=${KDIR:-$(ls -d /usr/src/linux-headers-6.12*-amd64 2>/dev/null |
	sort -V | tail -n 1)}
if [ -z "$kdir" ] || [ ! -f "$kdir/Makefile" ]; then
	echo "FAIL: no 6.12 kernel headers (/usr/src/linux-headers-6.12*-amd64);"
	echo "      tools/install-deps.sh --kernel installs them"
	exit 1
fi

work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
mkdir -p "$work/model" "$work/uapi"
cp "$src"/driver/model/*.[ch] "$src"/driver/model/Kbuild.model "$work/model/"
cp "$src"/uapi/rbln_isa.h "$work/uapi/"

cat > "$work/Kbuild" <<'EOF'
RBLN_MODEL_DIR := model
include $(src)/model/Kbuild.model
obj-m := rbln_model_check.o
rbln_model_check-y := check.o $(rbln_model_objs)
ccflags-y += -I$(src)/model -I$(src)/uapi
EOF

# A caller of every entry point, so that modpost sees them all resolve.
cat > "$work/check.c" <<'EOF'
// SPDX-License-Identifier: GPL-2.0
#include <linux/module.h>
#include "rbln_model.h"

static int __init rbln_model_check_init(void)
{
	struct rbln_isa_stream_header hdr = {
		.magic = RBLN_ISA_MAGIC,
		.version_major = RBLN_ISA_VERSION_MAJOR,
		.size = sizeof(hdr),
	};
	struct rbln_model_diag diag;

	pr_info("%s %s\n", rbln_model_error_str(0), rbln_model_opcode_name(0));
	pr_info("%s %d\n", rbln_model_cpu_name(rbln_model_cpu()),
		rbln_model_cpu_parse("avx2"));
	if (rbln_model_set_cpu(RBLN_MODEL_CPU_AUTO))
		return -EINVAL;
	if (rbln_model_validate(&hdr, sizeof(hdr), NULL, 0, &diag))
		return -EINVAL;
	return rbln_model_execute(&hdr, sizeof(hdr), NULL, 0, NULL, &diag);
}
module_init(rbln_model_check_init);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("build check of the RBLN device model");
EOF

log="$work/build.log"
if ! make -C "$kdir" M="$work" W=1 modules >"$log" 2>&1; then
	cat "$log"
	echo "FAIL: kernel build of the model"
	exit 1
fi
if grep -E 'warning:|error:' "$log"; then
	echo "FAIL: the kernel build of the model has warnings"
	exit 1
fi
# Disassemble into a variable: grep -q on a pipe would end objdump early
# and pipefail would turn a match into a failure.
status=0
for obj in "$work"/model/*.o; do
	case "$obj" in
	*/rbln_model_ops_f32.o | */rbln_model_kern_avx2.o | */rbln_model_kern_avx512.o | \
	*/rbln_model_kern_base.o | */rbln_model_kern_dpbf16.o)
		continue ;;
	esac
	dis=$(objdump -d "$obj")
	if grep -qE '%[xyz]mm[0-9]' <<<"$dis"; then
		echo "FAIL: $(basename "$obj") uses vector registers"
		status=1
	fi
done
dis=$(objdump -d "$work/model/rbln_model_ops_f32.o")
if ! grep -q 'vaddps.*%ymm' <<<"$dis"; then
	echo "FAIL: rbln_model_ops_f32.o has no AVX2 variant"
	status=1
fi
if ! grep -q '[^v]addps.*%xmm' <<<"$dis"; then
	echo "FAIL: rbln_model_ops_f32.o has no SSE2 variant"
	status=1
fi
if grep -q 'ucomiss' <<<"$dis"; then
	echo "FAIL: rbln_model_ops_f32.o has scalar float compares"
	status=1
fi
dis=$(objdump -d "$work/model/rbln_model_kern_avx2.o")
if ! grep -q 'vfmadd[0-9]*ps.*%ymm' <<<"$dis"; then
	echo "FAIL: rbln_model_kern_avx2.o has no fused multiply-add on ymm"
	status=1
fi
dis=$(objdump -d "$work/model/rbln_model_kern_avx512.o")
if ! grep -q 'vfmadd[0-9]*ps.*%zmm' <<<"$dis"; then
	echo "FAIL: rbln_model_kern_avx512.o has no fused multiply-add on zmm"
	status=1
fi
dis=$(objdump -d "$work/model/rbln_model_kern_dpbf16.o")
if ! grep -q 'vdpbf16ps.*%zmm' <<<"$dis"; then
	echo "FAIL: rbln_model_kern_dpbf16.o has no bf16 dot product on zmm"
	status=1
fi
dis=$(objdump -d "$work/model/rbln_model_kern_base.o")
if grep -qE '%[yz]mm|vfmadd' <<<"$dis"; then
	echo "FAIL: rbln_model_kern_base.o uses AVX or FMA"
	status=1
fi
if ! grep -q 'mulps.*%xmm' <<<"$dis"; then
	echo "FAIL: rbln_model_kern_base.o has no SSE float code"
	status=1
fi
[ "$status" -eq 0 ] && echo "kernel build of the model: clean"
exit "$status"
