#!/bin/sh
# Builds the serving layer's libFuzzer targets (config.pbtxt reader, request
# bodies, raw bytes to the HTTP port, gRPC inference requests) with clang's
# libFuzzer, AddressSanitizer and UBSan, outside the source tree, and runs
# each for SECONDS (default 120) with its dictionary (TARGET.dict here) and
# seeds, printing the executions per second.
#
#   tests/serve/fuzz/run-fuzz.sh [SECONDS]
#
# Environment: as tests/fuzz/fuzzlib.sh says.
set -eu

seconds=${1:-120}
here=$(cd "$(dirname "$0")" && pwd)
fuzz_tag=serve
. "$here/../../fuzz/fuzzlib.sh"
export SERVE_FIXTURES_DIR="$src/tests/serve/fixtures"

# The gRPC messages, generated as the build does (engine/meson.build).
mkdir -p "$work/gen"
protoc-c --c_out="$work/gen" --proto_path="$src/engine/src/serve/grpc/proto" \
	grpc_service.proto model_config.proto

pkgs="json-c libpcre2-8 libmicrohttpd grpc libprotobuf-c nettle zlib"
cflags="-std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra $san \
	-I$src/engine/include -I$src/engine/src -I$work/gen $(pkg-config --cflags $pkgs)"
libs="$(pkg-config --libs $pkgs) -lpthread -lm"

echo "building in $work"
# The model-loading front end (engine_front_sources in engine/meson.build,
# with the rbln_config.json reader and the sampling parameters) and the
# serving layer; not the compiler or runtime, which need libnpu.
fuzz_sources util config weights tokenizer jinja chat serve
for f in "$work"/gen/*.pb-c.c; do
	fuzz_object "$f"
done
fuzz_targets pbtxt request http grpc

# Seeds: every configuration of the fixtures; the tutorials' request bodies.
i=0
for f in $(find "$SERVE_FIXTURES_DIR" -name '*.pbtxt' | sort); do
	cp "$f" "$work/corpus-pbtxt/seed$i"
	i=$((i + 1))
done
seed() { printf '%b' "$2" > "$work/corpus-request/$1"; }
seed trt '\000\001\000\000{"text_input": "How do I count to nine in French?", "parameters": {"max_tokens": 100, "bad_words":[""], "stop_words":[""]}}'
seed rbln '\001\000\000\000{"text_input": "[User]\\nWhat?\\n[Assistant]\\n", "stream": true, "sampling_parameters": "{\\"temperature\\": 0.0, \\"stop\\": [\\"[User]\\", \\"[System]\\"]}"}'
seed infer '\002\002\000\000{"inputs": [{"name": "prompt", "shape": [1, 1], "datatype": "BYTES", "data": ["Ol\303\241"]}], "outputs": [{"name": "generated_text"}]}'
printf '\002\002\136\000{"inputs":[{"name":"prompt","shape":[1,1],"datatype":"BYTES","parameters":{"binary_data_size":7}}]}\003\000\000\000Hi!' > "$work/corpus-request/infer-binary"
seed completions '\003\000\000\000{"model": "tiny", "prompt": ["import os", [4085, 474]], "max_tokens": 7, "n": 2, "logprobs": 2, "echo": true, "stop": "\\n"}'
seed chat '\004\000\000\000{"messages": [{"role": "system", "content": [{"type": "text", "text": "Be brief."}]}, {"role": "user", "content": "What is the first letter of English alphabets?"}], "temperature": 0, "top_logprobs": 2, "logprobs": true}'

# The hostile inputs of issue 12: NUL in text, bad UTF-8, a prompt past the
# byte bound of max_model_len, a key smuggled with \u0000.
seed nul '\000\000\000\000{"text_input": "a\\u0000b", "parameters": {"max_tokens": 1}}'
seed nul-key '\003\000\000\000{"prompt": "a", "max_tokens\\u0000x": 1}'
seed utf8 '\004\000\000\000{"messages": [{"role": "user", "content": "\377\376"}]}'
printf '\000\000\000\000{"text_input": "%s"}' "$(head -c 12000 /dev/zero | tr '\0' ' ')" \
	> "$work/corpus-request/spaces"
printf '\002\002\136\000{"inputs":[{"name":"prompt","shape":[1,1],"datatype":"BYTES","parameters":{"binary_data_size":7}}]}\003\000\000\000H\000!' \
	> "$work/corpus-request/infer-binary-nul"

# HTTP seeds: each route, the API key, framing that must be refused, %00,
# a slow or cut request, a TLS ClientHello.
hseed() { printf '%b' "$2" > "$work/corpus-http/$1"; }
key='Authorization: Bearer fuzz-key\r\n'
gen='{"text_input": "Hi", "parameters": {"max_tokens": 1}}'
chat='{"messages": [{"role": "user", "content": "a\\u0000b"}]}'
hseed live 'GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n'
hseed meta 'GET /v2/models/tiny HTTP/1.1\r\nHost: x\r\n'"$key"'\r\n'
hseed nokey 'GET /v2/models/tiny/config HTTP/1.1\r\nHost: x\r\n\r\n'
hseed nul-url 'GET /v2/models/tiny%00x/config HTTP/1.1\r\nHost: x\r\n'"$key"'\r\n'
hseed generate 'POST /v2/models/tiny/generate HTTP/1.1\r\nHost: x\r\n'"$key"'Content-Length: '"${#gen}"'\r\n\r\n'"$gen"
hseed chat 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n'"$key"'Content-Length: '"$((${#chat} - 1))"'\r\n\r\n'"$chat"
hseed two-cl 'POST /v1/completions HTTP/1.1\r\nHost: x\r\n'"$key"'Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}'
hseed cl-te 'POST /v1/completions HTTP/1.1\r\nHost: x\r\n'"$key"'Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'
hseed chunked 'POST /v2/models/tiny/infer HTTP/1.1\r\nHost: x\r\n'"$key"'Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'
hseed cut 'POST /v2/models/tiny/generate HTTP/1.1\r\nHost: x\r\n'"$key"'Content-Length: 1000\r\n\r\n{"text_input"'
hseed half 'POST /v2/models/tiny/generate HTTP/1.1\r\nHost: x\r\nX-Slow: a'
hseed tls '\026\003\001\002\000\001\000\001\374\003\003'
hseed pipelined 'GET /v2/health/ready HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: x\r\n'"$key"'\r\n'
# Compressed bodies (issue 11): whole, truncated, with trailing garbage, a
# trailer claiming 2 GB, deflate, an unknown coding; Accept-Encoding.
zseed() {	# name, Content-Encoding, body bytes on stdin
	body=$(mktemp)
	cat > "$body"
	{ printf 'POST /v2/models/tiny/generate HTTP/1.1\r\nHost: x\r\n%bContent-Encoding: %s\r\n' \
		"$key" "$2"
	  printf 'Accept-Encoding: gzip\r\nContent-Length: %s\r\n\r\n' "$(stat -c %s "$body")"
	  cat "$body"; } > "$work/corpus-http/$1"
	rm -f "$body"
}
gz=$(mktemp)
printf '%s' "$gen" | gzip -9 -c > "$gz"
zseed gzip gzip < "$gz"
head -c 20 "$gz" | zseed gzip-truncated gzip
{ cat "$gz"; printf 'garbage'; } | zseed gzip-trailing gzip
{ head -c $(($(stat -c %s "$gz") - 4)) "$gz"; printf '\000\000\000\200'; } | zseed gzip-2gb gzip
printf '%s' "$gen" | zseed plain-as-deflate deflate
printf '%s' "$gen" | zseed unknown br
rm -f "$gz"


# gRPC seeds: tritonclient-style requests (raw tensors), the first byte 1 for a
# stream; protoc-c encodes them from text format.
gseed() {
	{ printf '\001'; printf '%b' "$2" | protoc-c --encode=inference.ModelInferRequest \
		--proto_path="$src/engine/src/serve/grpc/proto" grpc_service.proto; } \
		> "$work/corpus-grpc/$1"
}
gseed tutorial 'model_name: "vllm_model" id: "req-0"
inputs { name: "text_input" datatype: "BYTES" shape: 1 }
inputs { name: "stream" datatype: "BOOL" shape: 1 }
inputs { name: "sampling_parameters" datatype: "BYTES" shape: 1 }
raw_input_contents: "\\005\\000\\000\\000Hello"
raw_input_contents: "\\001"
raw_input_contents: "\\022\\000\\000\\000{\\"temperature\\": 0}"
outputs { name: "text_output" }'
gseed typed 'model_name: "vllm_model"
parameters { key: "triton_enable_empty_final_response" value { bool_param: true } }
inputs { name: "text_input" datatype: "BYTES" shape: 1 contents { bytes_contents: "Hi" } }
inputs { name: "stream" datatype: "BOOL" shape: 1 contents { bool_contents: false } }
inputs { name: "exclude_input_in_output" datatype: "BOOL" shape: 1 contents { bool_contents: true } }'

fuzz_run "pbtxt request http grpc" -timeout=30 -max_len=16384
