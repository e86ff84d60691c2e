#!/usr/bin/python3
"""A full-size synthetic Hviske v6 package for the benchmark: the published
dimensions (docs/models/hviske_v6.md: encoder 32 x 1280, 20 heads, 56
rotary dims; decoder Qwen3-0.6B, 28 x 1024), BF16 as published, random
weights, the real Qwen2.5 tokenizer with Hviske's tokens; ~2.5 GB, written
tensor by tensor (never all in memory) under build/bench/.

  make_hviske_v6_full.py OUT
"""
import json
import os
import struct
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "ref", "hviske_v6"))
import make_tiny  # noqa: E402

FULL_WHISPER = {"d_model": 1280, "encoder_ffn_dim": 5120, "encoder_layers": 32, "encoder_attention_heads": 20,
                "encoder_rotary_dim": 56}
FULL_QWEN = {"hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16,
             "num_key_value_heads": 8, "head_dim": 128}


def shapes(cfg):
    """(name, shape, kind) of every tensor, kind: linear fan-in, 'bias', 'ln_w', 'ln_b', 'rms', 'qk', 'emb'."""
    w, q = cfg["whisper"], cfg["qwen"]
    E, M, Fe = w["d_model"], w["num_mel_bins"], w["encoder_ffn_dim"]
    D, V, Fd, hd = q["hidden_size"], q["vocab_size"], q["intermediate_size"], q["head_dim"]
    Hq, Hkv, S = q["num_attention_heads"], q["num_key_value_heads"], cfg["stack"]
    out = [("encoder.conv1.weight", (E, M, 3), M * 3), ("encoder.conv1.bias", (E,), "bias"),
           ("encoder.conv2.weight", (E, E, 3), E * 3), ("encoder.conv2.bias", (E,), "bias")]
    for i in range(w["encoder_layers"]):
        p = f"encoder.layers.{i}."
        out += [(p + "self_attn_layer_norm.weight", (E,), "ln_w"), (p + "self_attn_layer_norm.bias", (E,), "ln_b")]
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            out.append((p + f"self_attn.{n}.weight", (E, E), E))
            if n != "k_proj":
                out.append((p + f"self_attn.{n}.bias", (E,), "bias"))
        out += [(p + "final_layer_norm.weight", (E,), "ln_w"), (p + "final_layer_norm.bias", (E,), "ln_b"),
                (p + "fc1.weight", (Fe, E), E), (p + "fc1.bias", (Fe,), "bias"),
                (p + "fc2.weight", (E, Fe), Fe), (p + "fc2.bias", (E,), "bias")]
    out += [("encoder.layer_norm.weight", (E,), "ln_w"), ("encoder.layer_norm.bias", (E,), "ln_b"),
            ("norm.weight", (S * E,), "rms"), ("proj.weight", (D, S * E), S * E),
            ("llm.model.embed_tokens.weight", (V, D), "emb")]
    for j in range(q["num_hidden_layers"]):
        p = f"llm.model.layers.{j}."
        out += [(p + "input_layernorm.weight", (D,), "rms"),
                (p + "self_attn.q_proj.weight", (Hq * hd, D), D), (p + "self_attn.k_proj.weight", (Hkv * hd, D), D),
                (p + "self_attn.v_proj.weight", (Hkv * hd, D), D), (p + "self_attn.o_proj.weight", (D, Hq * hd), Hq * hd),
                (p + "self_attn.q_norm.weight", (hd,), "qk"), (p + "self_attn.k_norm.weight", (hd,), "qk"),
                (p + "post_attention_layernorm.weight", (D,), "rms"),
                (p + "mlp.gate_proj.weight", (Fd, D), D), (p + "mlp.up_proj.weight", (Fd, D), D),
                (p + "mlp.down_proj.weight", (D, Fd), Fd)]
    out.append(("llm.model.norm.weight", (D,), "rms"))
    return out


def values(name, shape, kind):
    rng = np.random.default_rng([0, zlib.crc32(name.encode())])
    x = rng.standard_normal(int(np.prod(shape)), dtype=np.float32)
    if kind == "bias":
        x *= 0.02
    elif kind in ("ln_w", "rms"):
        x = 1 + 0.1 * x
    elif kind == "ln_b":
        x *= 0.1
    elif kind == "qk":
        x = 3 + 0.1 * x
    elif kind == "emb":
        x *= 0.5
    else:
        x *= 1 / np.sqrt(kind)
    return x


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    cfg = make_tiny.config()
    cfg["whisper"].update(FULL_WHISPER)
    cfg["qwen"].update(FULL_QWEN)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    make_tiny.write_tokenizer(out)
    tensors = shapes(cfg)
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, shape, _ in tensors:
        n = 2 * int(np.prod(shape))
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = os.path.join(out, "model.safetensors.part")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for name, shape, kind in tensors:
            # the top half of each float32 (rounded toward zero: random weights need no better)
            f.write((values(name, shape, kind).view(np.uint32) >> 16).astype("<u2").tobytes())
    os.replace(tmp, os.path.join(out, "model.safetensors"))


if __name__ == "__main__":
    main()
