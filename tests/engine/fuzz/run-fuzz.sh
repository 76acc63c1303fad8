#!/bin/sh
# Builds the engine front-end fuzz targets with clang's libFuzzer plus
# AddressSanitizer and UBSan, outside the source tree, and runs each for
# SECONDS (default 120), printing the executions per second.
#
#   tests/engine/fuzz/run-fuzz.sh [SECONDS]
#
# Environment: RBLN_FUZZ_DIR (build and corpus directory, default a new
# temporary directory), RBLN_MODELS_DIR (reference models, default
# engine/models in the tree), CC (default clang).
set -eu

seconds=${1:-120}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
work=${RBLN_FUZZ_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/rbln-engine-fuzz.XXXXXX")}
models=${RBLN_MODELS_DIR:-$src/engine/models}
cc=${CC:-clang}
export RBLN_MODELS_DIR="$models"

case "$work" in
"$src"/*) echo "run-fuzz.sh: RBLN_FUZZ_DIR must be outside the source tree" >&2; exit 2 ;;
esac
[ -d "$models/tiny-llama3" ] || { echo "run-fuzz.sh: no models at $models" >&2; exit 1; }
mkdir -p "$work/obj"

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
cflags="-std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra $san \
	-I$src/engine/include -I$src/engine/src $(pkg-config --cflags json-c libpcre2-8 nettle)"
libs="$(pkg-config --libs json-c libpcre2-8 nettle) -lm"

echo "building in $work"
objs=""
# Only the model-loading front end: the fuzzers exercise its parsers, and the
# runtime, compiler and server need libnpu and more.
for f in $(find "$src/engine/src/util" "$src/engine/src/config" "$src/engine/src/weights" \
		"$src/engine/src/tokenizer" "$src/engine/src/jinja" "$src/engine/src/chat" \
		-name '*.c' | sort); do
	o="$work/obj/$(echo "${f#$src/}" | tr / _).o"
	$cc $cflags -fsanitize=fuzzer-no-link -c "$f" -o "$o"
	objs="$objs $o"
done

seed() { printf '%b' "$2" > "$work/corpus-$1/$3"; }

for t in safetensors tokenizer jinja; do
	$cc $cflags -fsanitize=fuzzer "$here/fuzz_$t.c" $objs $libs -o "$work/fuzz_$t"
	mkdir -p "$work/corpus-$t"
done

# Seeds: a valid safetensors file, texts in both tokenizer modes, tokenizer
# pipelines that grow the text (mode 8), templates that reach the depth,
# nesting and step limits.
h='{"__metadata__":{"format":"pt"},"a":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[3],"data_offsets":[8,14]}}'
printf '%b' "\\0$(printf '%03o' ${#h})\\0\\0\\0\\0\\0\\0\\0" | head -c 8 > "$work/corpus-safetensors/valid"
printf '%s' "$h" >> "$work/corpus-safetensors/valid"
head -c 14 /dev/zero >> "$work/corpus-safetensors/valid"
seed tokenizer '\000Hello world, I'"'"'m here: 1234 \360\237\246\231 \352\260\200\n\n  x' text3
seed tokenizer '\001  leading and trailing <s> [INST] hi\r\n' text2
seed tokenizer '\002<|begin_of_text|>literal special?' special3
seed tokenizer '\005\001\002\003\004\377\377\200\000' ids2
seed tokenizer '\010"normalizer": {"type": "Sequence", "normalizers": [{"type": "Replace", "pattern": {"String": "a"}, "content": "aa"}, {"type": "Replace", "pattern": {"String": "a"}, "content": "aa"}, {"type": "Replace", "pattern": {"String": "a"}, "content": "aa"}, {"type": "Replace", "pattern": {"String": "a"}, "content": "aa"}, {"type": "Replace", "pattern": {"String": "a"}, "content": "aa"}]}\000aaaa' replace-chain
seed tokenizer '\010"normalizer": {"type": "Prepend", "prepend": "\\u2581"}, "pre_tokenizer": {"type": "Metaspace", "replacement": "\\u2581", "prepend_scheme": "first", "split": true}\000a b  a' metaspace
seed tokenizer '\010"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+"}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "use_regex": false}]}\000a  \n\n  b   ' split-bytelevel
cp "$models/tiny-llama2/chat_template.jinja" "$work/corpus-jinja/llama2"
seed jinja '{% set ns = namespace() %}{% set ns.me = ns %}{% set ns.l = [ns] %}{{ ns }}{{ ns.l|tojson }}' namespace-self
seed jinja '{{ 1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1|string|trim|lower|upper|trim|length }}{{ d.a.b.c.d.e }}{{ ((((((((1)))))))) }}' chains
seed jinja '{% if 1 %}{% for x in [1] %}{% if 2 %}{% elif 3 %}{% else %}{% endif %}{% endfor %}{% endif %}' nesting
seed jinja '{% macro m(n) %}{{ [[m(n - 1) if n else 0]] }}{% endmacro %}{{ m(50) }}' macro-depth
seed jinja '{{ range(100000)|unique|list|length }}{{ range(0, 9223372036854775807, 4611686018427387904)|list }}{% set a = 1 %}{% set b = 2 %}{{ (["x" * 100] * 10)|join }}' budgets

seed jinja '{% for m in messages %}{{ loop.index }}{{ m.role|upper }}{{ m.content|trim|tojson }}{% endfor %}{% set ns = namespace(x=1) %}{{ ns.x }}' loop
seed jinja '{%- if n is odd -%}\n  {{ [1, 2][1:] ~ (n // 2) }}\n{% else %}{{ raise_exception("no") }}{% endif %}' ifs

summary=""
for t in safetensors tokenizer jinja; do
	echo "== fuzz_$t for ${seconds}s"
	log="$work/fuzz_$t.log"
	dict=""
	[ -f "$here/$t.dict" ] && dict="-dict=$here/$t.dict"
	(cd "$work" && ./fuzz_$t -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		$dict -print_final_stats=1 "corpus-$t" > "$log" 2>&1) || {
		tail -40 "$log"
		echo "fuzz_$t FAILED; log and crash input in $work" >&2
		exit 1
	}
	rate=$(grep -o 'exec/s: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
	summary="$summary
fuzz_$t: $runs runs in ${seconds}s, $rate exec/s"
done
echo "$summary"
