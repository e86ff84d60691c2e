#!/usr/bin/python3
"""A full-size synthetic Hviske/Cohere Transcribe package for benchmarks:
the real config.json and tokenizer.model (from the data folder), every
tensor of spec §1.5 at the real dimensions, random F16 weights scaled by
1/sqrt(fan_in) (speed does not depend on the values). About 4.1 GB; made on
demand under build/, never committed.

usage: make_hviske_full.py OUTDIR [--data DIR] [--dtype f16|bf16|f32]
"""
import argparse
import json
import math
import os
import shutil
import struct

import numpy as np


def tensors(cfg, vocab):
    """(name, shape, kind) for every tensor, in file order."""
    enc, dec = cfg["encoder"], cfg["transf_decoder"]["config_dict"]
    E, L, H, K = enc["d_model"], enc["n_layers"], enc["n_heads"], enc["conv_kernel_size"]
    F, C, M = E * enc["ff_expansion_factor"], enc["subsampling_conv_channels"], enc["feat_in"]
    D, Fd, DL, P = dec["hidden_size"], dec["inner_size"], dec["num_layers"], dec["max_sequence_length"]
    out = []

    def lin(name, o, i, bias=True, k=()):
        out.append((name + ".weight", (o, i) + tuple(k), "w"))
        if bias:
            out.append((name + ".bias", (o,), "b"))

    def norm(name, n):
        out.append((name + ".weight", (n,), "one"))
        out.append((name + ".bias", (n,), "b"))

    lin("encoder.pre_encode.conv.0", C, 1, k=(3, 3))
    for a, b in ((2, 3), (5, 6)):
        lin(f"encoder.pre_encode.conv.{a}", C, 1, k=(3, 3))
        lin(f"encoder.pre_encode.conv.{b}", C, C, k=(1, 1))
    lin("encoder.pre_encode.out", E, C * (M // 8))
    for i in range(L):
        p = f"encoder.layers.{i}."
        for ff in ("1", "2"):
            norm(p + "norm_feed_forward" + ff, E)
            lin(p + f"feed_forward{ff}.linear1", F, E)
            lin(p + f"feed_forward{ff}.linear2", E, F)
        norm(p + "norm_self_att", E)
        for n in ("q", "k", "v", "out"):
            lin(p + "self_attn.linear_" + n, E, E)
        lin(p + "self_attn.linear_pos", E, E, bias=False)
        out.append((p + "self_attn.pos_bias_u", (H, E // H), "b"))
        out.append((p + "self_attn.pos_bias_v", (H, E // H), "b"))
        norm(p + "norm_conv", E)
        lin(p + "conv.pointwise_conv1", 2 * E, E, k=(1,))
        lin(p + "conv.depthwise_conv", E, 1, k=(K,))
        norm(p + "conv.batch_norm", E)
        out.append((p + "conv.batch_norm.running_mean", (E,), "b"))
        out.append((p + "conv.batch_norm.running_var", (E,), "one"))
        lin(p + "conv.pointwise_conv2", E, E, k=(1,))
        norm(p + "norm_out", E)
    lin("encoder_decoder_proj", D, E)
    out.append(("transf_decoder._embedding.token_embedding.weight", (vocab, D), "w"))
    out.append(("transf_decoder._embedding.position_embedding.pos_enc", (P, D), "pos"))
    norm("transf_decoder._embedding.layer_norm", D)
    for j in range(DL):
        p = f"transf_decoder._decoder.layers.{j}."
        for n, sub in ((1, "first_sub_layer"), (2, "second_sub_layer")):
            norm(p + f"layer_norm_{n}", D)
            for net in ("query_net", "key_net", "value_net", "out_projection"):
                lin(p + f"{sub}.{net}", D, D)
        norm(p + "layer_norm_3", D)
        lin(p + "third_sub_layer.dense_in", Fd, D)
        lin(p + "third_sub_layer.dense_out", D, Fd)
    norm("transf_decoder._decoder.final_layer_norm", D)
    lin("log_softmax.mlp.layer0", vocab, D)
    return out


def values(shape, kind, noise):
    n = int(np.prod(shape))
    if kind == "one":
        return np.ones(n, np.float32)
    if kind == "pos":  # the fixed sinusoid table of spec §4.1
        p, d = shape
        w = np.exp(-math.log(10000.0) * np.arange(0, d, 2) / d)
        t = np.zeros((p, d))
        t[:, 0::2], t[:, 1::2] = np.sin(np.arange(p)[:, None] * w), np.cos(np.arange(p)[:, None] * w)
        return (t / math.sqrt(d)).astype(np.float32).ravel()
    scale = 0.02 if kind == "b" else 1 / math.sqrt(n / shape[0])
    start = (n * 7919) % (len(noise) - 1)
    reps = np.resize(np.roll(noise, -start), n)  # cycling one random block is enough for timing
    return (reps * scale).astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--data", default=os.environ.get("AUDIOC_DATA", os.path.join(here, "../../shared/data")))
    ap.add_argument("--dtype", default="f16", choices=("f16", "bf16", "f32"))
    a = ap.parse_args()
    base = os.path.join(a.data, "cohere_asr_base")
    os.makedirs(a.outdir, exist_ok=True)
    cfg = json.load(open(os.path.join(base, "config.json")))
    vocab = cfg["head"]["num_classes"]
    cfg["supported_languages"] = ["da", "en"]
    cfg["preprocessor"]["dither"] = 0.0
    json.dump(cfg, open(os.path.join(a.outdir, "config.json"), "w"), indent=2)
    for f in ("generation_config.json", "tokenizer.model"):
        shutil.copy(os.path.join(base, f), a.outdir)

    dt, size = {"f16": ("F16", 2), "bf16": ("BF16", 2), "f32": ("F32", 4)}[a.dtype]
    items = tensors(cfg, vocab)
    header, off = {}, 0
    for name, shape, _ in items:
        n = int(np.prod(shape)) * size
        header[name] = {"dtype": dt, "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    noise = np.random.default_rng(0).standard_normal(1 << 22).astype(np.float32)
    with open(os.path.join(a.outdir, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for name, shape, kind in items:
            v = values(shape, kind, noise)
            if a.dtype == "f16":
                f.write(v.astype("<f2").tobytes())
            elif a.dtype == "bf16":
                f.write((v.view("<u4") >> 16).astype("<u2").tobytes())
            else:
                f.write(v.astype("<f4").tobytes())
    print(f"{len(items)} tensors, {off / 1e9:.2f} GB of {dt} weights -> {a.outdir}")


if __name__ == "__main__":
    main()
