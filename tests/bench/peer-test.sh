#!/usr/bin/env bash
# rbln-bench's peer: with --peer-llama-bench/--peer-batched-bench/--peer-model
# it runs them after its own rows, in the same run, and prints their figures
# and our ratios; without them it prints no peer figure. Stand-ins for
# llama.cpp's programs record their arguments and print known JSON lines
# (the format of llama-bench -o jsonl and llama-batched-bench
# --output-format jsonl), so the figures and the ratios can be checked.
#
#   peer-test.sh RBLN_BENCH MODELS_DIR
set -euo pipefail
bench=$1
models=$2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat >"$t/llama-bench" <<EOF
#!/bin/sh
echo "\$@" >"$t/lb.args"
echo "llama_model_load: loading" >&2
echo '{"n_prompt": 16, "n_gen": 0, "avg_ts": 100.5, "samples_ts": [ 98, 100.5, 103 ]}'
echo '{"n_prompt": 0, "n_gen": 4, "avg_ts": 20.25}'
EOF
# Three runs (as llama-bench's three repetitions), each with other figures:
# the best of each column counts, as for our rows.
cat >"$t/batched-bench" <<EOF
#!/bin/sh
echo "\$@" >>"$t/bb.args"
case \$(wc -l <"$t/bb.args") in
1) echo '{"n_kv_max": 832, "pp": 64, "tg": 4, "pl": 4, "speed_tg": 40.0}'
   echo '{"n_kv_max": 832, "pp": 64, "tg": 4, "pl": 8, "speed_tg": 80.0}' ;;
2) echo '{"n_kv_max": 832, "pp": 64, "tg": 4, "pl": 4, "speed_tg": 44.0}'
   echo '{"n_kv_max": 832, "pp": 64, "tg": 4, "pl": 8, "speed_tg": 70.0}' ;;
*) echo '{"n_kv_max": 832, "pp": 64, "tg": 4, "pl": 4, "speed_tg": 39.0}'
   echo '{"n_kv_max": 832, "pp": 64, "tg": 4, "pl": 8, "speed_tg": 81.0}' ;;
esac
EOF
printf '#!/bin/sh\nexit 3\n' >"$t/broken"
chmod +x "$t/llama-bench" "$t/batched-bench" "$t/broken"
: >"$t/m.gguf"
common=(--model "tiny=$models/tiny-llama3" --tp 1 --prompt-len 16 --decode-steps 4
	--work-dir "$t/w")

out=$("$bench" "${common[@]}" --peer-llama-bench "$t/llama-bench" \
	--peer-batched-bench "$t/batched-bench" --peer-model "$t/m.gguf" \
	--peer-threads 3 --peer-vs tiny 2>/dev/null) || fail "rbln-bench with a peer: exit $?"
printf '%s\n' "$out"
grep -Eq '^llama\.cpp +103\.0 +20\.2 +44\.0 +81\.0$' <<<"$out" || fail "peer row"
grep -q '; best of 3$' <<<"$out" || fail "the peer's header names its repetitions"
[ "$(wc -l <"$t/bb.args")" = 3 ] || fail "batched-bench ran $(wc -l <"$t/bb.args") times, not 3"
ours=$(grep -E '^tiny +1 ' <<<"$out") || fail "our row"
ratio=$(grep -E '^ours / llama\.cpp +1 ' <<<"$out") || fail "ratio row"
# The ratio of prefill is our prefill over 103, the best sample.
awk -v o="$(awk '{print $3}' <<<"$ours")" -v r="$(awk '{print $5 + 0}' <<<"$ratio")" \
	'BEGIN { d = o / 103 - r; exit !(d < 0.01 && d > -0.01) }' ||
	fail "prefill ratio $ratio for row $ours"
grep -qx -- "-m $t/m.gguf -t 3 -p 16 -n 4 -r 3 -o jsonl" "$t/lb.args" ||
	fail "llama-bench arguments: $(cat "$t/lb.args")"
grep -q -- "-npp 64 -ntg 4 -npl 4,8 --output-format jsonl" "$t/bb.args" ||
	fail "batched-bench arguments: $(cat "$t/bb.args")"

out=$("$bench" "${common[@]}" 2>/dev/null) || fail "rbln-bench without a peer: exit $?"
! grep -qi 'llama' <<<"$out" || fail "a peer figure without a peer"

out=$("$bench" "${common[@]}" --peer-llama-bench "$t/broken" --peer-model "$t/m.gguf" \
	2>/dev/null) || fail "rbln-bench with a failing peer: exit $?"
grep -q "^peer: error: $t/broken failed (exit status 3)" <<<"$out" || fail "failing peer"

rc=0
err=$("$bench" --peer-llama-bench "$t/llama-bench" 2>&1) || rc=$?
[ $rc = 2 ] && grep -q -- "--peer-model" <<<"$err" || fail "peer without a model: $rc $err"
rc=0
err=$("$bench" --peer-llama-bench "$t/none" --peer-model "$t/m.gguf" 2>&1) || rc=$?
[ $rc = 2 ] && grep -q -- "--peer-llama-bench $t/none: No such file" <<<"$err" ||
	fail "missing peer program: $rc $err"
# --quantize: each model measured each way in the same run, the peer
# compared with the float weights' row only.
out=$("$bench" "${common[@]}" --quantize none,w8a16 --peer-llama-bench "$t/llama-bench" \
	--peer-model "$t/m.gguf" --peer-vs tiny 2>/dev/null) || fail "rbln-bench --quantize: exit $?"
printf '%s\n' "$out"
grep -Eq '^tiny +1 +[0-9.]+ +[0-9.]+ ' <<<"$out" || fail "float row with --quantize"
grep -Eq '^tiny w8a16 +1 +[0-9.]+ +[0-9.]+ ' <<<"$out" || fail "w8a16 row"
[ "$(grep -c '^ours / llama\.cpp' <<<"$out")" = 1 ] || fail "w8a16 row compared with the peer"
grep -q '"quantize": "w8a16"' "$t/w/tiny-tp1-chunk512-w8a16/rbln_config.json" ||
	fail "w8a16 row not compiled with --quantize w8a16"
for bad in int8 none,none ""; do
	rc=0
	err=$("$bench" --quantize "$bad" 2>&1) || rc=$?
	[ $rc = 2 ] && grep -q -- "--quantize '$bad'" <<<"$err" || fail "--quantize '$bad': $rc $err"
done
# --matmul-precision: each model measured with float32 and bf16 activations
# in the same run (rows NAME bf16a), with each quantisation; the peer is
# compared with every float-weight row, float32 and bf16a (llama.cpp's bf16
# path rounds its activations to bf16 too), never with a w8a16 one.
out=$("$bench" "${common[@]}" --quantize none,w8a16 --matmul-precision float32,bf16 \
	--peer-llama-bench "$t/llama-bench" --peer-model "$t/m.gguf" --peer-vs tiny 2>/dev/null) ||
	fail "rbln-bench --matmul-precision: exit $?"
printf '%s\n' "$out"
for row in 'tiny' 'tiny bf16a' 'tiny w8a16' 'tiny w8a16 bf16a'; do
	[ "$(grep -Ec "^$row +1 +[0-9.]+ +[0-9.]+ " <<<"$out")" = 1 ] || fail "row '$row'"
done
[ "$(grep -Ec '^ours / llama\.cpp +1 ' <<<"$out")" = 1 ] || fail "float32 ratio row"
[ "$(grep -Ec '^ours bf16a / llama\.cpp +1 ' <<<"$out")" = 1 ] || fail "bf16a ratio row"
[ "$(grep -c '^ours.* / llama\.cpp' <<<"$out")" = 2 ] || fail "a w8a16 row compared with the peer"
ours=$(grep -E '^tiny bf16a +1 ' <<<"$out")
ratio=$(grep -E '^ours bf16a / llama\.cpp +1 ' <<<"$out")
# The bf16a row's prefill over the peer's 103 (the columns shift by one word).
awk -v o="$(awk '{print $4}' <<<"$ours")" -v r="$(awk '{print $6 + 0}' <<<"$ratio")" \
	'BEGIN { d = o / 103 - r; exit !(d < 0.01 && d > -0.01) }' ||
	fail "bf16a prefill ratio $ratio for row $ours"
grep -q '"matmul_precision": "bf16"' "$t/w/tiny-tp1-chunk512-bf16a/rbln_config.json" ||
	fail "bf16a row not compiled with --matmul-precision bf16"
grep -q '"matmul_precision": "bf16"' "$t/w/tiny-tp1-chunk512-w8a16-bf16a/rbln_config.json" ||
	fail "w8a16 bf16a row not compiled with --matmul-precision bf16"
grep -q '"matmul_precision": "float32"' "$t/w/tiny-tp1-chunk512/rbln_config.json" ||
	fail "float32 row not compiled with --matmul-precision float32"
for bad in bfloat16 bf16,bf16 float32,bf16,fp8 ""; do
	rc=0
	err=$("$bench" --matmul-precision "$bad" 2>&1) || rc=$?
	[ $rc = 2 ] && grep -q -- "--matmul-precision '$bad'" <<<"$err" ||
		fail "--matmul-precision '$bad': $rc $err"
done
echo "PASS: rbln-bench runs its peer in the same run, --quantize and --matmul-precision"
