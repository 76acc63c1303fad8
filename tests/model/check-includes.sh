#!/usr/bin/env bash
# The model is freestanding ("one device model, two homes"): its .c files
# include only the model's own headers and the uapi ISA header, never a
# libc or kernel header, which would build in one home and not the other.
# The headers themselves include nothing but each other (and rbln_model_os.h
# the home's headers): checked too.
#
#   check-includes.sh MODEL_DIR
set -euo pipefail
dir=${1:-$(dirname "$0")/../../driver/model}
allowed='^#include "(rbln_model\.h|rbln_model_os\.h|rbln_model_internal\.h|rbln_isa\.h)"$'
# The compute kernels' bodies, compiled once per CPU variant, are included
# by the variant files only.
kern='^#include "rbln_model_kern_(math|mm|nn|attn)\.h"$'
# The tile primitives, by the two AMX MATMULs only.
amx='^#include "rbln_model_kern_amx\.h"$'
status=0
n=0
for f in "$dir"/*.c; do
	n=$((n + 1))
	while IFS= read -r line; do
		case "$(basename "$f")" in
		rbln_model_kern_avx2.c | rbln_model_kern_avx512.c | rbln_model_kern_base.c)
			grep -qE "$kern" <<<"$line" && continue ;;
		rbln_model_kern_amx.c | rbln_model_kern_amx_decode.c)
			grep -qE "$amx" <<<"$line" && continue ;;
		esac
		if ! grep -qE "$allowed" <<<"$line"; then
			echo "FAIL: $(basename "$f"): $line"
			status=1
		fi
	done < <(grep -E '^[[:space:]]*#[[:space:]]*include' "$f")
done
for f in "$dir"/rbln_model_kern_*.h "$dir"/rbln_model_internal.h "$dir"/rbln_model.h; do
	while IFS= read -r line; do
		if ! grep -qE '^#include "(rbln_model[a-z_]*\.h|rbln_isa\.h)"$' <<<"$line"; then
			echo "FAIL: $(basename "$f"): $line"
			status=1
		fi
	done < <(grep -E '^[[:space:]]*#[[:space:]]*include' "$f")
done
[ "$n" -gt 0 ] || { echo "FAIL: no sources in $dir"; exit 1; }
[ "$status" -eq 0 ] && echo "$n model sources include only model and ISA headers"
exit "$status"
