#!/usr/bin/python3
"""Tiny random Qwen2ForCausalLM checkpoints in the published Hugging Face
layout: config.json, generation_config.json and model.safetensors with the
HF tensor names (spec vevo2.md §4.7, §7.2). Fixed seeds.

usage: make_checkpoints.py OUT_DIR

Writes OUT_DIR/<variant>/ for each variant:
  f32           tied head, F32
  bf16          the same weights stored as BF16 (as published)
  f16_untied    lm_head.weight of its own, F16
  f32_headdim   untied, head_dim 24 given in config.json (not hidden/heads)
Initialisation as spec §7.2: Linear N(0, 1/sqrt(fan_in)), embeddings
N(0, 1/sqrt(hidden)), biases N(0, 0.01), RMSNorm weights 1 + N(0, 0.05).
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hviske_asr"))
import st_io  # noqa: E402

VOCAB = 300
EOS, PAD = 297, 296

BASE = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2,
    "max_position_embeddings": 128, "vocab_size": VOCAB, "rope_theta": 1000000.0, "rms_norm_eps": 1e-6,
    "tie_word_embeddings": True, "hidden_act": "silu", "use_sliding_window": False, "bos_token_id": PAD,
    "eos_token_id": EOS, "torch_dtype": "float32",
}
GENERATION = {"do_sample": True, "top_k": 25, "top_p": 0.8, "temperature": 1.0, "repetition_penalty": 1.1,
              "eos_token_id": [EOS, PAD], "pad_token_id": PAD, "bos_token_id": PAD}


def weights(cfg, seed):
    rng = np.random.default_rng(seed)
    D, F, H, KV = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim", D // H)
    f32 = np.float32

    def linear(out, inp):
        return (rng.standard_normal((out, inp)) / np.sqrt(inp)).astype(f32)

    def bias(n):
        return (rng.standard_normal(n) * 0.01).astype(f32)

    def norm(n):
        return (1 + rng.standard_normal(n) * 0.05).astype(f32)

    V = cfg["vocab_size"]
    t = {"model.embed_tokens.weight": (rng.standard_normal((V, D)) / np.sqrt(D)).astype(f32)}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = norm(D)
        t[p + "self_attn.q_proj.weight"] = linear(H * hd, D)
        t[p + "self_attn.q_proj.bias"] = bias(H * hd)
        t[p + "self_attn.k_proj.weight"] = linear(KV * hd, D)
        t[p + "self_attn.k_proj.bias"] = bias(KV * hd)
        t[p + "self_attn.v_proj.weight"] = linear(KV * hd, D)
        t[p + "self_attn.v_proj.bias"] = bias(KV * hd)
        t[p + "self_attn.o_proj.weight"] = linear(D, H * hd)
        t[p + "post_attention_layernorm.weight"] = norm(D)
        t[p + "mlp.gate_proj.weight"] = linear(F, D)
        t[p + "mlp.up_proj.weight"] = linear(F, D)
        t[p + "mlp.down_proj.weight"] = linear(D, F)
    t["model.norm.weight"] = norm(D)
    if not cfg["tie_word_embeddings"]:
        t["lm_head.weight"] = linear(V, D)
    return t


def write(out, cfg, tensors, dtype, generation=GENERATION):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(dict(cfg, torch_dtype={"F32": "float32", "BF16": "bfloat16", "F16": "float16"}[dtype]), f, indent=2)
    with open(os.path.join(out, "generation_config.json"), "w") as f:
        json.dump(generation, f, indent=2)
    conv = {"F32": lambda a: a, "F16": lambda a: a.astype(np.float16), "BF16": lambda a: ("BF16", a)}[dtype]
    st_io.save(os.path.join(out, "model.safetensors"), {k: conv(v) for k, v in tensors.items()})


def main():
    out = sys.argv[1]
    tied = weights(BASE, 20261201)
    write(os.path.join(out, "f32"), BASE, tied, "F32")
    write(os.path.join(out, "bf16"), BASE, tied, "BF16")
    untied = dict(BASE, tie_word_embeddings=False)
    write(os.path.join(out, "f16_untied"), untied, weights(untied, 7), "F16")
    headdim = dict(untied, head_dim=24, num_hidden_layers=2)
    write(os.path.join(out, "f32_headdim"), headdim, weights(headdim, 11), "F32")


if __name__ == "__main__":
    main()
