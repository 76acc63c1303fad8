#!/usr/bin/env python3
"""Write a bf16 GGUF of a Llama shape with random weights, for llama.cpp's benchmarks.

rbln-bench --peer-model needs llama.cpp's view of the model it measures: the same
shape (a config.json such as engine/bench/llama-3.2-1b-shape's), weights of no
meaning. Plain Python, no numpy or gguf-py: this writes GGUF version 3 itself.

The weights are bfloat16 of magnitude 2^-7 to 2^-5 with a random sign and
mantissa: never zero, never subnormal (subnormal products slow some CPUs, which
would make the peer look slower than its real models run). Norm weights are 1.
The vocabulary is llama.cpp's "none" tokenizer with vocab_size dummy tokens:
llama-bench and llama-batched-bench only draw random token ids.

Usage: dummy-gguf.py CONFIG.json OUT.gguf
"""
import json
import os
import struct
import sys

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3
ALIGN = 32
TYPE_F32, TYPE_BF16 = 0, 30
KV_U32, KV_F32, KV_STRING = 4, 6, 8

# High byte of a bfloat16 of exponent 2^-7 or 2^-6 (the low byte's top bit),
# either sign: 0x3c or 0xbc.
HIGH_BYTE = bytes((0x3C | (b & 0x80)) for b in range(256))


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, kind, value):
    out = gguf_string(key) + struct.pack("<I", kind)
    if kind == KV_U32:
        return out + struct.pack("<I", value)
    if kind == KV_F32:
        return out + struct.pack("<f", value)
    return out + gguf_string(value)


def tensors_of(cfg):
    """(name, ggml dims innermost first, type) in llama.cpp's llama names."""
    d, ff = cfg["hidden_size"], cfg["intermediate_size"]
    hd = cfg.get("head_dim", d // cfg["num_attention_heads"])
    q, kvd = cfg["num_attention_heads"] * hd, cfg["num_key_value_heads"] * hd
    out = [("token_embd.weight", (d, cfg["vocab_size"]), TYPE_BF16)]
    for i in range(cfg["num_hidden_layers"]):
        p = "blk.%d." % i
        out += [
            (p + "attn_norm.weight", (d,), TYPE_F32),
            (p + "attn_q.weight", (d, q), TYPE_BF16),
            (p + "attn_k.weight", (d, kvd), TYPE_BF16),
            (p + "attn_v.weight", (d, kvd), TYPE_BF16),
            (p + "attn_output.weight", (q, d), TYPE_BF16),
            (p + "ffn_norm.weight", (d,), TYPE_F32),
            (p + "ffn_gate.weight", (d, ff), TYPE_BF16),
            (p + "ffn_up.weight", (d, ff), TYPE_BF16),
            (p + "ffn_down.weight", (ff, d), TYPE_BF16),
        ]
    out.append(("output_norm.weight", (d,), TYPE_F32))
    if not cfg.get("tie_word_embeddings", False):
        out.append(("output.weight", (d, cfg["vocab_size"]), TYPE_BF16))
    return out


def nbytes(dims, kind):
    n = 1
    for x in dims:
        n *= x
    return n * (4 if kind == TYPE_F32 else 2)


def pad(n):
    return (ALIGN - n % ALIGN) % ALIGN


def metadata(cfg):
    hd = cfg.get("head_dim", cfg["hidden_size"] // cfg["num_attention_heads"])
    return [
        kv("general.architecture", KV_STRING, "llama"),
        kv("general.name", KV_STRING, "dummy"),
        kv("general.alignment", KV_U32, ALIGN),
        kv("llama.context_length", KV_U32, cfg["max_position_embeddings"]),
        kv("llama.embedding_length", KV_U32, cfg["hidden_size"]),
        kv("llama.block_count", KV_U32, cfg["num_hidden_layers"]),
        kv("llama.feed_forward_length", KV_U32, cfg["intermediate_size"]),
        kv("llama.attention.head_count", KV_U32, cfg["num_attention_heads"]),
        kv("llama.attention.head_count_kv", KV_U32, cfg["num_key_value_heads"]),
        kv("llama.attention.key_length", KV_U32, hd),
        kv("llama.attention.value_length", KV_U32, hd),
        kv("llama.rope.dimension_count", KV_U32, hd),
        kv("llama.rope.freq_base", KV_F32, cfg.get("rope_theta", 10000.0)),
        kv("llama.attention.layer_norm_rms_epsilon", KV_F32,
           cfg.get("rms_norm_eps", 1e-5)),
        kv("llama.vocab_size", KV_U32, cfg["vocab_size"]),
        kv("tokenizer.ggml.model", KV_STRING, "none"),
    ]


def write_data(f, dims, kind):
    n = nbytes(dims, kind)
    if kind == TYPE_F32:
        f.write(struct.pack("<f", 1.0) * (n // 4))
        return
    chunk = 1 << 24
    while n:
        b = bytearray(os.urandom(min(chunk, n)))
        b[1::2] = bytes(b[1::2]).translate(HIGH_BYTE)
        f.write(b)
        n -= len(b)


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: dummy-gguf.py CONFIG.json OUT.gguf")
    with open(argv[1]) as f:
        cfg = json.load(f)
    tensors = tensors_of(cfg)
    kvs = metadata(cfg)
    head = GGUF_MAGIC + struct.pack("<IQQ", GGUF_VERSION, len(tensors), len(kvs))
    head += b"".join(kvs)
    offset = 0
    for name, dims, kind in tensors:
        head += gguf_string(name) + struct.pack("<I", len(dims))
        head += b"".join(struct.pack("<Q", x) for x in dims)
        head += struct.pack("<IQ", kind, offset)
        offset += nbytes(dims, kind)
        offset += pad(offset)
    with open(argv[2], "wb") as f:
        f.write(head + b"\0" * pad(len(head)))
        for name, dims, kind in tensors:
            write_data(f, dims, kind)
            f.write(b"\0" * pad(nbytes(dims, kind)))
    print("%s: %d tensors, %d bytes" % (argv[2], len(tensors), os.path.getsize(argv[2])))


if __name__ == "__main__":
    main(sys.argv)
