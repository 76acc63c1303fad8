#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""rbln-serve end to end, every endpoint, against the real engine.

One server serves a model repository laid out as the tutorials do:
  vllm_model  the RBLN tutorial's config.pbtxt, 1/model.json, the compiled
              tiny-llama3 inside the version directory (max_model_len 128,
              below the compiled 256, so the served limit is the one checked)
  ensemble    the TensorRT-LLM tutorial's tensor names and
              exclude_input_in_output, on the same compiled model
  llamav2     the Llama 2 tutorial's prompt/generated_text model with its
              dynamic batching, on tiny-llama2 given as a Hugging Face
              directory: rbln-serve compiles it on first load (flash
              attention, block_size 128)
Greedy outputs are checked against transformers' (reference.json), chat
prompts against the reference renderings' token counts.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servelib as sl  # noqa: E402

tap = sl.Tap()
MODELS = sl.models_dir(tap)
TL3 = os.path.join(MODELS, "tiny-llama3")
TL2 = os.path.join(MODELS, "tiny-llama2")
REF3 = json.load(open(os.path.join(TL3, "reference.json"), encoding="utf-8"))
REF2 = json.load(open(os.path.join(TL2, "reference.json"), encoding="utf-8"))

TRT_CONFIG = """name: "ensemble"
backend: "rbln"
max_batch_size: 0
input [
  { name: "text_input" data_type: TYPE_STRING dims: [ -1 ] },
  { name: "max_tokens" data_type: TYPE_INT32 dims: [ -1 ] },
  { name: "bad_words" data_type: TYPE_STRING dims: [ -1 ] optional: true },
  { name: "stop_words" data_type: TYPE_STRING dims: [ -1 ] optional: true },
  { name: "end_id" data_type: TYPE_INT32 dims: [ 1 ] optional: true },
  { name: "top_k" data_type: TYPE_INT32 dims: [ 1 ] optional: true },
  { name: "top_p" data_type: TYPE_FP32 dims: [ 1 ] optional: true },
  { name: "temperature" data_type: TYPE_FP32 dims: [ 1 ] optional: true },
  { name: "random_seed" data_type: TYPE_UINT64 dims: [ 1 ] optional: true },
  { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] optional: true }
]
output [
  { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] }
]
parameters: {
  key: "exclude_input_in_output"
  value: { string_value: "True" }
}
"""

# The Llama 2 tutorial's first model (its curl request sends shape [1]) ...
LLAMA2_CONFIG = """name: "llamav2"
backend: "python"
input [{name: "prompt" data_type: TYPE_STRING dims: [1]}]
output [{name: "generated_text" data_type: TYPE_STRING dims: [1]}]
instance_group [{kind: KIND_GPU}]
"""

# ... and its dynamic-batching configuration (batches of up to 8 prompts).
LLAMA2_DYN_CONFIG = """name: "llamav2_batched"
backend: "python"
max_batch_size: 8
input [
  {
    name: "prompt"
    data_type: TYPE_STRING
    dims: [ -1 ]
    allow_ragged_batch: true
  }
]
output [
  {
    name: "generated_text"
    data_type: TYPE_STRING
    dims: [ -1 ]
  }
]
instance_group [
  {
    kind: KIND_GPU
  }
]
dynamic_batching {
  preferred_batch_size: [ 2, 4, 8 ]
  max_queue_delay_microseconds: 300
}
"""


def make_repo(root):
    repo = os.path.join(root, "model_repository")
    compiled = os.path.join(repo, "vllm_model", "1", "tiny-llama3")
    os.makedirs(os.path.dirname(compiled))
    sl.compile_model(TL3, compiled, "--batch-size", "4", "--max-seq-len", "256",
                     "--decoder-batch-sizes", "4,2,1")
    sl.write(os.path.join(repo, "vllm_model", "config.pbtxt"), sl.RBLN_CONFIG_PBTXT)
    sl.write(os.path.join(repo, "vllm_model", "1", "model.json"),
             sl.model_json("tiny-llama3", max_num_seqs=4, max_num_batched_tokens=128,
                           max_model_len=128, block_size=256))
    sl.write(os.path.join(repo, "ensemble", "config.pbtxt"), TRT_CONFIG)
    sl.write(os.path.join(repo, "ensemble", "1", "model.json"),
             sl.model_json(compiled, max_num_seqs=4, max_model_len=256))
    sl.write(os.path.join(repo, "llamav2", "config.pbtxt"), LLAMA2_CONFIG)
    sl.write(os.path.join(repo, "llamav2", "1", "model.json"),
             sl.model_json(TL2, max_num_seqs=4, max_model_len=256, block_size=128))
    sl.write(os.path.join(repo, "llamav2_batched", "config.pbtxt"), LLAMA2_DYN_CONFIG)
    sl.write(os.path.join(repo, "llamav2_batched", "1", "model.json"),
             sl.model_json(TL2, max_num_seqs=4, max_model_len=256, block_size=128))
    return repo


def ref_entry(ref, prefix):
    for g in ref["generate"]:
        if g["prompt"] and g["prompt"].startswith(prefix):
            return g
    raise KeyError(prefix)


def error_of(body):
    return body.get("error") if isinstance(body, dict) else None


def check_server_endpoints(srv):
    st, b = srv.get_json("/v2")
    tap.ok(st == 200 and b.get("name") and "version" in b and isinstance(b.get("extensions"), list),
           "GET /v2: server metadata", (st, b))
    for path in ("/v2/health/live", "/v2/health/ready"):
        st, hd, data = srv.request("GET", path)
        tap.eq(st, 200, f"GET {path}")
    st, hd, data = srv.request("POST", "/v2/repository/index", b"{}")
    idx = sl.parse_json(data)
    names = sorted(m.get("name") for m in idx) if isinstance(idx, list) else idx
    tap.ok(st == 200 and names == ["ensemble", "llamav2", "llamav2_batched", "vllm_model"] and
           all(m.get("state") == "READY" for m in idx), "POST /v2/repository/index: four READY",
           (st, idx))
    st, b = srv.get_json("/v1/models")
    ids = sorted(m["id"] for m in b.get("data", []))
    tap.ok(st == 200 and b.get("object") == "list" and ids == ["ensemble", "llamav2", "llamav2_batched", "vllm_model"],
           "GET /v1/models lists every model", (st, b))


def check_model_endpoints(srv):
    st, b = srv.get_json("/v2/models/vllm_model")
    ins = [i["name"] for i in b.get("inputs", [])]
    outs = [o["name"] for o in b.get("outputs", [])]
    tap.ok(st == 200 and b.get("name") == "vllm_model" and ins[:2] == ["text_input", "stream"]
           and outs[0] == "text_output" and "sampling_parameters" in ins,
           "GET /v2/models/vllm_model: metadata from config.pbtxt (+ the vLLM backend's "
           "optional inputs)", b)
    st, b2 = srv.get_json("/v2/models/vllm_model/versions/1")
    tap.ok(st == 200 and b2.get("name") == "vllm_model", "GET .../versions/1", b2)
    st, b2 = srv.get_json("/v2/models/vllm_model/versions/2")
    tap.ok(st == 404 and error_of(b2), "GET .../versions/2: 404 with an error", (st, b2))
    for path in ("/v2/models/vllm_model/ready", "/v2/models/vllm_model/versions/1/ready",
                 "/v2/models/llamav2/ready", "/v2/models/ensemble/ready"):
        st, hd, data = srv.request("GET", path)
        tap.eq(st, 200, f"GET {path}")
    st, b = srv.get_json("/v2/models/llamav2_batched/config")
    tap.ok(st == 200 and b.get("name") == "llamav2_batched" and b.get("max_batch_size") == 8 and
           b.get("dynamic_batching", {}).get("preferred_batch_size") == [2, 4, 8],
           "GET /v2/models/llamav2_batched/config: the tutorial's dynamic batching", b)
    st, b = srv.get_json("/v2/models/nope")
    tap.ok(st == 404 and "nope" in (error_of(b) or ""), "unknown model: 404 naming it", (st, b))
    st, hd, data = srv.request("GET", "/v2/models/vllm_model/generate")
    tap.eq(st, 405, "GET on generate: 405")
    st, hd, data = srv.request("GET", "/v2/nothing/here")
    tap.eq(st, 404, "unknown route: 404")


def check_generate(srv):
    g = ref_entry(REF3, "import os\nimport sys")
    prompt, want = g["prompt"], g["greedy_text"]
    st, b = srv.post_json("/v2/models/vllm_model/generate", {
        "text_input": prompt, "stream": False, "parameters": {"max_tokens": 48, "temperature": 0,
                                             "ignore_eos": True}})
    tap.ok(st == 200 and b.get("text_output") == prompt + want,
           "generate: greedy 48 tokens equal transformers' (prompt prepended by default)",
           (st, b, prompt + want))
    st, b = srv.post_json("/v2/models/vllm_model/generate", {
        "text_input": prompt, "stream": False, "exclude_input_in_output": True, "return_finish_reason": True,
        "return_num_input_tokens": True, "return_num_output_tokens": True,
        "sampling_parameters": json.dumps({"max_tokens": 12, "temperature": 0.0})})
    tap.ok(st == 200 and want.startswith(b.get("text_output", "-")) and b.get("text_output") and
           b.get("finish_reason") == "length" and b.get("num_input_tokens") == len(g["input_ids"])
           and b.get("num_output_tokens") == 12,
           "generate: exclude_input_in_output, sampling_parameters as a JSON string, "
           "finish_reason/num_input_tokens/num_output_tokens", b)
    # stop strings: the output ends before the first match, reason stop
    stop = "os.path"
    cut = want[:want.index(stop)]
    st, b = srv.post_json("/v2/models/vllm_model/generate", {
        "text_input": prompt, "stream": False, "exclude_input_in_output": True, "return_finish_reason": True,
        "parameters": {"max_tokens": 40, "temperature": 0, "stop": [stop, "never-there"]}})
    tap.ok(st == 200 and b.get("text_output") == cut and b.get("finish_reason") == "stop",
           "generate: stop string ends the output before it", (b, cut))
    st, b = srv.post_json("/v2/models/vllm_model/generate", {
        "text_input": prompt, "stream": False, "exclude_input_in_output": True,
        "parameters": {"max_tokens": 40, "temperature": 0, "stop": [stop],
                       "include_stop_str_in_output": True}})
    tap.ok(st == 200 and b.get("text_output") == cut + stop,
           "generate: include_stop_str_in_output keeps it", b)
    # seeds: same seed same text; sampling differs from greedy somewhere
    outs = []
    for seed in (7, 7, 8):
        st, b = srv.post_json("/v2/models/vllm_model/generate", {
            "text_input": prompt, "stream": False, "exclude_input_in_output": True,
            "parameters": {"max_tokens": 24, "temperature": 1.5, "seed": seed}})
        outs.append(b.get("text_output"))
    tap.ok(outs[0] == outs[1] and outs[0] != outs[2], "generate: seed reproduces a sample",
           outs)
    # bad words: the first greedy word never appears again at its place
    first = want.split()[0]
    st, b = srv.post_json("/v2/models/vllm_model/generate", {
        "text_input": prompt, "stream": False, "exclude_input_in_output": True,
        "parameters": {"max_tokens": 6, "temperature": 0, "bad_words": [first]}})
    tap.ok(st == 200 and b.get("text_output") and first not in b.get("text_output", first),
           f"generate: bad_words {first!r} is never generated", (b, first))


def check_stream(srv):
    g = ref_entry(REF3, "The quick brown fox")
    prompt, want = g["prompt"], g["greedy_text"]
    st, hd, data, times = sl.stream_timed(srv, "/v2/models/vllm_model/generate_stream", {
        "text_input": prompt, "stream": True,
        "sampling_parameters": json.dumps({"temperature": 0.0, "max_tokens": 100,
                                           "ignore_eos": True})})
    ctype = hd.get("Content-Type", "")
    try:
        events = [json.loads(e) for e in sl.parse_sse(data)]
        framing = None
    except ValueError as e:
        events, framing = [], str(e)
    tap.ok(st == 200 and ctype.startswith("text/event-stream") and framing is None,
           "generate_stream: 200, text/event-stream, every event 'data: ...' + blank line",
           (st, ctype, framing, data[:300]))
    text = "".join(e.get("text_output", "") for e in events)
    g48 = sl.generate_text(srv, "vllm_model", prompt, max_tokens=48, ignore_eos=True)
    want = want.replace("<|end_of_text|>", "")  # a special token: not in the text
    tap.ok(text.startswith(want) and text.startswith(g48),
           "generate_stream: the events' concatenation is the greedy text (no prompt)",
           (text, want))
    tap.ok(len(times) >= 2 and times[-1] > times[0],
           "generate_stream: events arrive while the sequence runs (not all at the end)", times)
    tap.ok(all(e.get("model_name") == "vllm_model" for e in events),
           "generate_stream: every event names the model", events[:2])
    # without "stream": one event with the whole text, prompt not prepended when streaming
    st, hd, data = sl.generate_stream(srv, "vllm_model", {
        "text_input": prompt, "stream": False,
        "parameters": {"temperature": 0, "max_tokens": 5, "return_finish_reason": True}})
    try:
        events = [json.loads(e) for e in sl.parse_sse(data)]
    except ValueError:
        events = [data]
    tap.ok(st == 200 and len(events) == 1 and
           (prompt + want).startswith(events[0].get("text_output", "-")) and
           len(events[0]["text_output"]) > len(prompt) and
           events[0].get("finish_reason") == "length",
           "generate_stream with stream false: one event, the whole text, prompt prepended",
           events)
    # curl -N reads the same stream
    r = subprocess.run(["curl", "-sN", "-X", "POST",
                        f"http://127.0.0.1:{srv.http_port}/v2/models/vllm_model/generate_stream",
                        "-d", json.dumps({"text_input": prompt, "stream": True,
                                          "parameters": {"temperature": 0, "max_tokens": 6}})],
                       capture_output=True, text=True, timeout=60)
    try:
        ev = [json.loads(e) for e in sl.parse_sse(r.stdout)]
    except ValueError:
        ev = []
    # one event or several: a late reader gets the pieces coalesced (serving.md)
    tap.ok(r.returncode == 0 and len(ev) >= 1 and "".join(e["text_output"] for e in ev) and
           want.startswith("".join(e["text_output"] for e in ev)),
           "curl -N generate_stream: framed events with the greedy text", r.stdout[:400])


def check_trt(srv):
    # The TensorRT-LLM tutorial's request, byte for byte, through curl.
    body = ('{\n"text_input": "How do I count to nine in French?",\n"parameters": {\n'
            '"max_tokens": 100,\n"bad_words":[""],\n"stop_words":[""]\n}\n}')
    r = subprocess.run(["curl", "-s", "-w", "\n%{http_code}", "-X", "POST",
                        f"localhost:{srv.http_port}/v2/models/ensemble/generate", "-d", body],
                       capture_output=True, text=True, timeout=120)
    out, _, code = r.stdout.rpartition("\n")
    b = sl.parse_json(out.encode())
    text = b.get("text_output", "") if isinstance(b, dict) else ""
    tap.ok(code == "200" and text and not text.startswith("How do I count"),
           "TensorRT-LLM tutorial curl: 200, text_output without the input "
           "(config's exclude_input_in_output)", (code, out[:300]))
    # same compiled model: TensorRT-LLM's names give the vLLM backend's greedy text
    text = sl.generate_text(srv, "vllm_model", "How do I count to nine in French?",
                            max_tokens=100)
    st, b2 = srv.post_json("/v2/models/ensemble/generate", {
        "text_input": "How do I count to nine in French?", "max_tokens": 100,
        "temperature": 0.0, "bad_words": [""], "stop_words": [""]})
    tap.ok(st == 200 and b2.get("text_output") == text,
           "ensemble: TensorRT-LLM names at the top level, the same greedy text", (b2, text))
    if text.strip():
        word = text.split()[0] if text.split() else text[:3]
        st, b3 = srv.post_json("/v2/models/ensemble/generate", {
            "text_input": "How do I count to nine in French?", "max_tokens": 100,
            "temperature": 0.0, "stop_words": [word]})
        tap.ok(st == 200 and word not in b3.get("text_output", word) and
               text.startswith(b3.get("text_output", "-")),
               f"ensemble: stop_words {word!r} cuts the text", (b3, text))


def check_infer(srv):
    body = {"inputs": [{"name": "prompt", "shape": [1], "datatype": "BYTES", "data": ["Olá"]}]}
    st, b = srv.post_json("/v2/models/llamav2/infer", body)
    outs = b.get("outputs", [])
    tap.ok(st == 200 and len(outs) == 1 and outs[0].get("name") == "generated_text" and
           outs[0].get("datatype") == "BYTES" and len(outs[0].get("data", [])) == 1 and
           outs[0]["data"][0].startswith("Olá"),
           "Llama 2 tutorial infer: generated_text (BYTES), prompt prepended", b)
    texts = [["Onde fica o Uruguai?"], ["Quem é George Washington?"], ["Quem é Lionel Messi?"]]
    body = {"inputs": [{"name": "prompt", "shape": [3, 1], "datatype": "BYTES",
                        "data": [t[0] for t in texts]}],
            "outputs": [{"name": "generated_text"}],
            "parameters": {"max_tokens": 8, "temperature": 0}}
    st, b = srv.post_json("/v2/models/llamav2_batched/infer", body)
    outs = b.get("outputs", [{}])
    data = outs[0].get("data", [])
    tap.ok(st == 200 and outs[0].get("shape") == [3, 1] and len(data) == 3 and
           all(d.startswith(t[0]) for d, t in zip(data, texts)),
           "infer: the tutorial client's batch of three prompts, three answers in order", b)
    alone = []
    for t in texts:
        st, b1 = srv.post_json("/v2/models/llamav2/infer", {
            "inputs": [{"name": "prompt", "shape": [1], "datatype": "BYTES", "data": t}],
            "parameters": {"max_tokens": 8, "temperature": 0}})
        alone.append(b1.get("outputs", [{}])[0].get("data", [None])[0])
    tap.eq(alone, data, "infer: batched answers equal the prompts run alone (greedy)")
    st, b = srv.post_json("/v2/models/llamav2/infer", {
        "inputs": [{"name": "text", "shape": [1], "datatype": "BYTES", "data": ["x"]}]})
    tap.ok(st == 400 and "text" in (error_of(b) or ""), "infer: unknown input name: 400 naming it",
           (st, b))


def check_openai(srv):
    st, b = srv.post_json("/v1/completions", {"model": "vllm_model",
                                              "prompt": "def fibonacci(n):\n", "max_tokens": 7,
                                              "temperature": 0})
    ch = b.get("choices", [{}])
    u = b.get("usage", {})
    tap.ok(st == 200 and b.get("object") == "text_completion" and len(ch) == 1 and
           ch[0].get("finish_reason") == "length" and u.get("completion_tokens") == 7 and
           u.get("total_tokens") == u.get("prompt_tokens", 0) + 7,
           "/v1/completions: text, finish_reason length, usage", b)
    st, b2 = srv.post_json("/v1/completions", {"model": "vllm_model", "prompt": "def f(x):",
                                               "max_tokens": 4, "temperature": 0, "n": 2,
                                               "logprobs": 2, "echo": True})
    ch = b2.get("choices", [])
    lp = ch[0].get("logprobs", {}) if ch else {}
    tap.ok(st == 200 and len(ch) == 2 and ch[0]["text"].startswith("def f(x):") and
           len(lp.get("token_logprobs", [])) >= 4 and
           all(len(t) == 2 for t in lp.get("top_logprobs", [])[-4:]),
           "/v1/completions: n=2, echo, logprobs with 2 alternatives", b2)
    best = lp.get("top_logprobs", [{}])[-1]
    tap.ok(best and max(best.values()) == lp["token_logprobs"][-1] and
           all(v <= 0 for v in best.values()),
           "/v1/completions: greedy token is the most probable, log-probabilities <= 0", lp)
    # streaming with usage
    st, hd, data = srv.request("POST", "/v1/completions", json.dumps({
        "model": "vllm_model", "prompt": "import os", "max_tokens": 5, "temperature": 0,
        "stream": True, "stream_options": {"include_usage": True}}).encode())
    ev = sl.parse_sse(data)
    chunks = [json.loads(e) for e in ev[:-1]]
    tap.ok(st == 200 and ev and ev[-1] == "[DONE]" and chunks and
           chunks[-1].get("usage", {}).get("completion_tokens") == 5,
           "/v1/completions stream: chunks, a usage chunk, [DONE]", ev[-3:])
    # chat: the template is the model's; prompt tokens equal transformers' rendering
    for model, ref in (("vllm_model", REF3), ("llamav2", REF2)):
        c = ref["chat"][0]
        st, b = srv.post_json("/v1/chat/completions", {"model": model, "messages": c["messages"],
                                                        "max_tokens": 6, "temperature": 0})
        msg = b.get("choices", [{}])[0].get("message", {})
        tap.ok(st == 200 and b.get("object") == "chat.completion" and
               msg.get("role") == "assistant" and isinstance(msg.get("content"), str) and
               b.get("usage", {}).get("prompt_tokens") == len(c["ids"]),
               f"/v1/chat/completions ({model}): chat template rendered as transformers "
               f"({len(c['ids'])} prompt tokens)", b)
    st, hd, data = srv.request("POST", "/v1/chat/completions", json.dumps({
        "model": "llamav2", "messages": REF2["chat"][1]["messages"], "max_tokens": 6,
        "temperature": 0, "stream": True}).encode())
    ev = sl.parse_sse(data)
    chunks = [json.loads(e) for e in ev[:-1]]
    tap.ok(st == 200 and ev[-1] == "[DONE]" and
           chunks[0]["choices"][0]["delta"].get("role") == "assistant" and
           chunks[-1]["choices"][0].get("finish_reason") in ("stop", "length"),
           "/v1/chat/completions stream: role first, finish_reason last, [DONE]", ev[:2] + ev[-2:])
    st, b = srv.post_json("/v1/completions", {"model": "nope", "prompt": "x"})
    tap.ok(st == 404 and "nope" in json.dumps(b), "/v1/completions unknown model: 404", b)


def check_bad_inputs(srv):
    st, hd, data = srv.request("POST", "/v2/models/vllm_model/generate",
                               b'{"text_input": "x", "stream": false, ')
    b = sl.parse_json(data)
    tap.ok(st == 400 and error_of(b), "malformed JSON: 400 with an error", (st, data))
    cases = [
        ({"text_input": "x", "parameters": {"temperature": -1}}, "temperature"),
        ({"text_input": "x", "parameters": {"top_p": 1.5}}, "top_p"),
        ({"text_input": "x", "parameters": {"max_tokens": 0}}, "max_tokens"),
        ({"text_input": "x", "parameters": {"temprature": 0.5}}, "temprature"),
        ({"text_input": "x", "sampling_parameters": "{not json"}, "sampling_parameters"),
        ({"parameters": {"max_tokens": 3}}, "text_input"),
        ({"text_input": 5}, "text_input"),
        ({"text_input": "x", "stream": "yes"}, "stream"),
    ]
    for body, field in cases:
        body.setdefault("stream", False)
        st, b = srv.post_json("/v2/models/vllm_model/generate", body)
        tap.ok(st == 400 and field in (error_of(b) or ""), f"bad {field}: 400 naming the field",
               (st, b))
    # a prompt longer than the served max_model_len (128): 400 naming both numbers
    ids = [1000 + i for i in range(300)]
    st, b = srv.post_json("/v1/completions", {"model": "vllm_model", "prompt": ids,
                                              "max_tokens": 1})
    msg = json.dumps(b)
    tap.ok(st == 400 and "300" in msg and "128" in msg,
           "prompt of 300 tokens > max_model_len 128: 400 naming both", (st, b))
    long_text = "import os\n" * 80
    st, b = srv.post_json("/v2/models/vllm_model/generate", {"text_input": long_text,
                                                             "stream": False})
    err = error_of(b) or ""
    tap.ok(st == 400 and "128" in err and "max_model_len" in err and
           any(w.isdigit() and int(w) > 128 for w in err.replace(",", " ").split()),
           "long text prompt: 400 naming its length and max_model_len", (st, b))
    st, b = srv.post_json("/v1/completions", {"model": "vllm_model", "prompt": "x",
                                              "max_tokens": 500})
    tap.ok(st == 400 and "128" in json.dumps(b), "/v1 max_tokens beyond max_model_len: 400", b)
    st, b = srv.post_json("/v1/chat/completions", {"model": "vllm_model", "messages": "hi"})
    tap.ok(st == 400 and "messages" in json.dumps(b), "chat: messages not a list: 400 naming it", b)


def check_metrics(srv):
    m = srv.metrics()
    ok = True
    for fam in ("nv_inference_request_success", "nv_inference_request_failure",
                "nv_inference_count", "nv_inference_exec_count",
                "nv_inference_pending_request_count", "nv_inference_request_duration_us",
                "nv_inference_queue_duration_us", "vllm:num_requests_running",
                "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
                "vllm:prompt_tokens_total", "vllm:generation_tokens_total",
                "vllm:time_to_first_token_seconds_count", "vllm:time_per_output_token_seconds_count",
                "rbln:decoder_bucket_steps_total", "rbln:device_utilization"):
        if sl.metric_value(m, fam) is None:
            ok = tap.ok(False, f"/metrics has {fam}")
    if ok:
        tap.ok(True, "/metrics has the Triton and engine families")
    succ = sl.metric_value(m, "nv_inference_request_success", model="vllm_model")
    count = sl.metric_value(m, "nv_inference_count", model="vllm_model")
    execs = sl.metric_value(m, "nv_inference_exec_count", model="vllm_model")
    tap.ok(succ and succ >= 10 and count >= succ and execs > 0,
           "nv_inference_request_success/count/exec_count count the requests", (succ, count, execs))
    tap.ok(sl.metric_value(m, "vllm:kv_cache_usage_perc") == 0 and
           sl.metric_value(m, "vllm:num_requests_running") == 0 and
           sl.metric_value(m, "nv_inference_pending_request_count") == 0,
           "idle: no KV blocks in use, nothing running or pending")
    b4 = sl.metric_value(m, "rbln:decoder_bucket_steps_total", model="vllm_model", batch_size="4")
    b1 = sl.metric_value(m, "rbln:decoder_bucket_steps_total", model="vllm_model", batch_size="1")
    tap.ok(b1 and b1 > 0 and b4 is not None, "decoder bucket steps per compiled batch size",
           (b1, b4))
    fail400 = sl.metric_value(m, "nv_inference_request_failure", model="vllm_model")
    tap.ok(fail400 is not None, "request failures are counted", fail400)
    st, hd, data = sl.request(srv.metrics_port, "GET", "/nope")
    tap.eq(st, 404, "metrics port: other paths 404")


def check_stats_and_model_id(srv):
    """Triton's statistics extension and OpenAI's GET /v1/models/{id}."""
    st, b = srv.get_json("/v2/models/stats")
    names = sorted(m.get("name") for m in b.get("model_stats", []))
    tap.ok(st == 200 and names == ["ensemble", "llamav2", "llamav2_batched", "vllm_model"],
           "GET /v2/models/stats: every model", (st, b))
    st, b = srv.get_json("/v2/models/vllm_model/versions/1/stats")
    ms = (b.get("model_stats") or [{}])[0]
    inf = ms.get("inference_stats", {})
    m = srv.metrics()
    ok = sl.metric_value(m, "nv_inference_request_success", model="vllm_model")
    tap.ok(st == 200 and len(b["model_stats"]) == 1 and ms.get("name") == "vllm_model" and
           ms.get("version") == "1" and inf.get("success", {}).get("count") == ok and
           inf["success"]["ns"] > 0 and ms.get("inference_count", 0) >= ok > 0 and
           ms.get("execution_count", 0) > 0 and ms.get("last_inference", 0) > 1.7e12 and
           all(k in inf for k in ("fail", "queue", "compute_input", "compute_infer",
                                  "compute_output", "cache_hit", "cache_miss")),
           "GET /v2/models/vllm_model/versions/1/stats: Triton's fields, the /metrics counts",
           (st, b, ok))
    st, b = srv.get_json("/v2/models/nope/stats")
    tap.ok(st == 404 and error_of(b), "stats of an unknown model: 404", (st, b))
    st, b = srv.get_json("/v1/models/vllm_model")
    tap.ok(st == 200 and b.get("id") == "vllm_model" and b.get("object") == "model",
           "GET /v1/models/vllm_model: the model object", (st, b))
    st, b = srv.get_json("/v1/models/nope")
    err = b.get("error") if isinstance(b, dict) else None
    tap.ok(st == 404 and isinstance(err, dict) and "nope" in err.get("message", "") and
           err.get("type"), "GET /v1/models/nope: 404 with OpenAI's error object", (st, b))
    st, hd, data = srv.request("POST", "/v1/embeddings", b"{}")
    b = sl.parse_json(data)
    err = b.get("error") if isinstance(b, dict) else None
    tap.ok(st == 404 and isinstance(err, dict) and err.get("message") and "type" in err and
           "code" in err, "an unknown /v1 route: 404 with OpenAI's error object", (st, b))


def main():
    with sl.Harness(tap, "api") as h:
        root = h.root
        repo = make_repo(root)
        srv = h.start(["--model-repository", repo])
        tap.ok(srv.wait_line(r"^Started HTTPService at 127\.0\.0\.1:\d+$") and
               srv.wait_line(r"^Started Metrics Service at ") and
               srv.wait_line(rf"^Started GRPCInferenceService at 127\.0\.0\.1:{srv.grpc_port}$")
               and srv.grpc_port not in (None, 0, 8001),
               "startup prints the Started lines, gRPC's with the port it bound (--grpc-port 0)",
               srv.stdout())
        tap.ok(os.path.isfile(os.path.join(repo, "llamav2", "1", ".rbln-compiled")) or
               any("rbln_config.json" in f for _, _, fs in os.walk(
                   os.path.join(repo, "llamav2", "1", ".rbln-compiled")) for f in fs),
               "the Hugging Face model was compiled on first load into its version directory")
        check_server_endpoints(srv)
        check_model_endpoints(srv)
        check_generate(srv)
        check_stream(srv)
        check_trt(srv)
        check_infer(srv)
        check_openai(srv)
        check_bad_inputs(srv)
        check_metrics(srv)
        check_stats_and_model_id(srv)
        rc = h.stop()
        tap.eq(rc, 0, "SIGTERM when idle: exit status 0")
    tap.done()


if __name__ == "__main__":
    main()
