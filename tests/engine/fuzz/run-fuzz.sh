#!/bin/sh
# Builds the engine front-end fuzz targets with clang's libFuzzer plus
# AddressSanitizer and UBSan, outside the source tree, and runs each for
# SECONDS (default 120), printing the executions per second.
#
#   tests/engine/fuzz/run-fuzz.sh [SECONDS]
#
# Environment: as tests/fuzz/fuzzlib.sh says.
set -eu

seconds=${1:-120}
here=$(cd "$(dirname "$0")" && pwd)
fuzz_tag=engine
. "$here/../../fuzz/fuzzlib.sh"

cflags="-std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra $san \
	-I$src/engine/include -I$src/engine/src $(pkg-config --cflags json-c libpcre2-8 nettle)"
libs="$(pkg-config --libs json-c libpcre2-8 nettle) -lm"

echo "building in $work"
# Only the model-loading front end: the fuzzers exercise its parsers, and the
# runtime, compiler and server need libnpu and more.
fuzz_sources util config weights tokenizer jinja chat
fuzz_targets safetensors tokenizer jinja

seed() { printf '%b' "$2" > "$work/corpus-$1/$3"; }

# Seeds: a valid safetensors file, texts in both tokenizer modes, tokenizer
# pipelines that grow the text (mode 8), templates that reach the depth,
# nesting and step limits, integer powers with huge exponents and empty
# sequences repeated a huge number of times (each once a timeout the
# fuzzer found).
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
seed jinja '{{ 1 ** 9223372036854775807 }}{{ (-2) ** 63 }}{{ 3 ** 40 }}' pow
seed jinja '{{ z|unique * 9223372036854775807 }}{{ "" * 9223372036854775807 }}{{ "abcd" * 4611686018427387904 }}' repeat
seed jinja '{{ range(100000)|unique|list|length }}{{ range(0, 9223372036854775807, 4611686018427387904)|list }}{% set a = 1 %}{% set b = 2 %}{{ (["x" * 100] * 10)|join }}' budgets

seed jinja '{% for m in messages %}{{ loop.index }}{{ m.role|upper }}{{ m.content|trim|tojson }}{% endfor %}{% set ns = namespace(x=1) %}{{ ns.x }}' loop
seed jinja '{%- if n is odd -%}\n  {{ [1, 2][1:] ~ (n // 2) }}\n{% else %}{{ raise_exception("no") }}{% endif %}' ifs

fuzz_run "safetensors tokenizer jinja" -timeout=10
