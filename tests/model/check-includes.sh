#!/usr/bin/env bash
# The model is freestanding ("one device model, two homes"): its .c files
# include only the model's own headers and the uapi ISA header, never a
# libc or kernel header, which would build in one home and not the other.
#
#   check-includes.sh MODEL_DIR
set -euo pipefail
dir=${1:-$(dirname "$0")/../../driver/model}
allowed='^#include "(rbln_model\.h|rbln_model_os\.h|rbln_model_internal\.h|rbln_isa\.h)"$'
status=0
n=0
for f in "$dir"/*.c; do
	n=$((n + 1))
	while IFS= read -r line; do
		if ! grep -qE "$allowed" <<<"$line"; then
			echo "FAIL: $(basename "$f"): $line"
			status=1
		fi
	done < <(grep -E '^[[:space:]]*#[[:space:]]*include' "$f")
done
[ "$n" -gt 0 ] || { echo "FAIL: no sources in $dir"; exit 1; }
[ "$status" -eq 0 ] && echo "$n model sources include only model and ISA headers"
exit "$status"
