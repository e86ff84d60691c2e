#!/usr/bin/python3
"""Tiny random Hviske v6 packages (whisper_qwen) in the published layout:
config.json (root model_type "whisper_qwen" with "whisper" and "qwen"
sub-objects), tokenizer.json and tokenizer_config.json (the real Qwen2.5
byte-level BPE with Qwen3's and Hviske's added tokens), model.safetensors
with the published tensor names (docs/models/hviske_v6.md).

Dimensions are small (encoder width 64, 4 heads of 16 with 12 rotary dims,
2 layers; decoder width 48, 4 query and 2 KV heads of 16, 2 layers) but the
vocabulary is the real one (151936 rows). Values are drawn per tensor from
a generator seeded by (seed, crc32(name)) and rounded to BF16, so the BF16
and F32 files hold the same numbers.

  make_tiny.py OUT --seed S --dtype bf16|f32 [--lm-head] [--pos-table]
"""
import argparse
import json
import os
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REF, "hviske_asr"))
sys.path.insert(0, os.path.join(REF, "qwen2"))
sys.path.insert(0, os.path.join(REF, "vevo2"))
import st_io  # noqa: E402
from ar_ref import tokenizer_json  # noqa: E402

DATA = os.environ.get("AUDIOC_DATA") or os.path.join(REF, "..", "..", "..", "shared", "data")
QWEN_DIR = os.path.join(DATA, "qwen2.5_tokenizer")

STYLE = {"<|nocase|>": 151669, "<|cased|>": 151670, "<|nopunc|>": 151671, "<|punc|>": 151672}
QWEN3_ADDED = [(151665, "<tool_response>"), (151666, "</tool_response>"), (151667, "<think>"), (151668, "</think>")]
N_TOKENS = 151673

WHISPER = {"model_type": "whisper", "num_mel_bins": 128, "d_model": 64, "encoder_ffn_dim": 128, "encoder_layers": 2,
           "encoder_attention_heads": 4, "encoder_rotary_dim": 12, "max_source_positions": 1500,
           "activation_function": "gelu", "torch_dtype": "bfloat16"}
QWEN = {"model_type": "qwen3", "vocab_size": 151936, "hidden_size": 48, "intermediate_size": 96,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "max_position_embeddings": 32768, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "hidden_act": "silu",
        "attention_bias": False, "tie_word_embeddings": True, "torch_dtype": "bfloat16"}


def config():
    return {"model_type": "whisper_qwen", "architectures": ["WhisperQwenForConditionalGeneration"],
            "rope_theta": 10000.0, "stack": 4, "bos_token_id": 151644, "eos_token_id": 151645,
            "pad_token_id": 151643, "style_tokens": dict(STYLE), "whisper": dict(WHISPER), "qwen": dict(QWEN),
            "torch_dtype": "bfloat16"}


def bf16(x):
    return st_io.bf16_bits_to_f32(st_io.f32_to_bf16_bits(np.asarray(x, np.float32)))


def tensors(cfg, seed, lm_head=False, pos_table=False):
    """{name: float32 array (BF16-exact)} in the published names and shapes."""
    w, q = cfg["whisper"], cfg["qwen"]
    E, M, Fe, S = w["d_model"], w["num_mel_bins"], w["encoder_ffn_dim"], cfg["stack"]
    D, V, Fd, hd = q["hidden_size"], q["vocab_size"], q["intermediate_size"], q["head_dim"]
    Hq, Hkv = q["num_attention_heads"], q["num_key_value_heads"]
    out = {}

    def rng(name):
        return np.random.default_rng([seed, zlib.crc32(name.encode())])

    def linear(name, o, i, bias=True, gain=1.0, extra=()):
        shape = (o, i) + tuple(extra)
        fan_in = i * int(np.prod(extra)) if extra else i
        out[name + ".weight"] = rng(name + ".weight").normal(0, gain / np.sqrt(fan_in), shape)
        if bias:
            out[name + ".bias"] = rng(name + ".bias").normal(0, 0.02, (o,))

    def layernorm(name, n):
        out[name + ".weight"] = 1 + rng(name + ".weight").normal(0, 0.1, (n,))
        out[name + ".bias"] = rng(name + ".bias").normal(0, 0.1, (n,))

    def rmsnorm(name, n, centre=1.0):
        out[name] = centre + rng(name).normal(0, 0.1, (n,))

    linear("encoder.conv1", E, M, extra=(3,))
    linear("encoder.conv2", E, E, extra=(3,))
    for i in range(w["encoder_layers"]):
        p = f"encoder.layers.{i}."
        layernorm(p + "self_attn_layer_norm", E)
        linear(p + "self_attn.q_proj", E, E)
        linear(p + "self_attn.k_proj", E, E, bias=False)
        linear(p + "self_attn.v_proj", E, E)
        linear(p + "self_attn.out_proj", E, E)
        layernorm(p + "final_layer_norm", E)
        linear(p + "fc1", Fe, E)
        linear(p + "fc2", E, Fe)
    layernorm("encoder.layer_norm", E)
    rmsnorm("norm.weight", S * E)
    linear("proj", D, S * E, bias=False)
    emb = rng("llm.model.embed_tokens.weight").normal(0, 0.5, (V, D))
    emb[N_TOKENS:] = 0
    emb[cfg["eos_token_id"]] *= 2.2
    out["llm.model.embed_tokens.weight"] = emb
    for j in range(q["num_hidden_layers"]):
        p = f"llm.model.layers.{j}."
        rmsnorm(p + "input_layernorm.weight", D)
        linear(p + "self_attn.q_proj", Hq * hd, D, bias=False)
        linear(p + "self_attn.k_proj", Hkv * hd, D, bias=False)
        linear(p + "self_attn.v_proj", Hkv * hd, D, bias=False)
        linear(p + "self_attn.o_proj", D, Hq * hd, bias=False, gain=0.5)
        rmsnorm(p + "self_attn.q_norm.weight", hd, 3.0)
        rmsnorm(p + "self_attn.k_norm.weight", hd, 3.0)
        rmsnorm(p + "post_attention_layernorm.weight", D)
        linear(p + "mlp.gate_proj", Fd, D, bias=False)
        linear(p + "mlp.up_proj", Fd, D, bias=False)
        linear(p + "mlp.down_proj", D, Fd, bias=False, gain=5.0)
    rmsnorm("llm.model.norm.weight", D)
    out = {k: bf16(v) for k, v in out.items()}
    if lm_head:
        out["llm.lm_head.weight"] = out["llm.model.embed_tokens.weight"].copy()
    if pos_table:
        out["encoder.embed_positions.weight"] = bf16(rng("pos").normal(0, 1.0, (1500, E)))
    return out


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=1)


def added_tokens():
    """(id, content, special, normalized) of every added token: Qwen2.5's 22, Qwen3's 4, Hviske's 4."""
    with open(os.path.join(QWEN_DIR, "tokenizer_config.json"), encoding="utf-8") as f:
        dec = json.load(f)["added_tokens_decoder"]
    added = [(int(i), t["content"], t.get("special", False), t.get("normalized", False))
             for i, t in sorted(dec.items(), key=lambda kv: int(kv[0]))]
    added += [(i, c, False, False) for i, c in QWEN3_ADDED]
    added += sorted((i, c, True, False) for c, i in STYLE.items())
    return added


def write_tokenizer(out):
    with open(os.path.join(QWEN_DIR, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    with open(os.path.join(QWEN_DIR, "merges.txt"), encoding="utf-8") as f:
        merges = [ln.rstrip("\n") for ln in f if ln.strip() and not ln.startswith("#version")]
    added = added_tokens()
    write_json(os.path.join(out, "tokenizer.json"), tokenizer_json(vocab, merges, added))
    decoder = {str(i): {"content": c, "lstrip": False, "normalized": n, "rstrip": False, "single_word": False,
                        "special": s} for i, c, s, n in added}
    write_json(os.path.join(out, "tokenizer_config.json"),
               {"added_tokens_decoder": decoder, "bos_token": None, "eos_token": "<|im_end|>",
                "pad_token": "<|endoftext|>", "model_max_length": 32768, "tokenizer_class": "Qwen2Tokenizer"})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
    ap.add_argument("--lm-head", action="store_true", help="also store llm.lm_head.weight (a copy of the embedding)")
    ap.add_argument("--pos-table", action="store_true", help="also store an unused encoder.embed_positions.weight")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cfg = config()
    write_json(os.path.join(a.out, "config.json"), cfg)
    write_tokenizer(a.out)
    t = tensors(cfg, a.seed, a.lm_head, a.pos_table)
    kind = "BF16" if a.dtype == "bf16" else "F32"
    st_io.save(os.path.join(a.out, "model.safetensors"), {k: (kind, v) for k, v in t.items()},
               metadata={"format": "pt"})


if __name__ == "__main__":
    main()
