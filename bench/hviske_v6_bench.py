#!/usr/bin/python3
"""Hviske v6 speed and memory on a full-size synthetic BF16 package
(bench/make_hviske_v6_full.py, made on demand under build/bench/, ~2.5 GB):
one 28 s or 30 s chunk of noise (the content does not change the work of
the encoder; the random decoder is held to --max-new-tokens steps), 1 and 2
threads, greedy and 2 beams, the matrices as stored (BF16) or held in
Q8_0 (--weights q8_0: the decoder, its tied head and the projector; the
encoder keeps 16 bits by its rule). From `audioc --timings`: front end, encoder
(with the projector), prefill, ms per decode step, the whole request, and
the peak RSS (MiB) against the weights as held (held_mib); the decode step
against the bytes it reads (the decoder's matrices and the tied head, once
per step for all beams, and each beam's f32 K/V cache at the mean position
of the steps), and as a fraction of the read bandwidth; the
encoder (30 s: 1500 positions, its 16-bit products: bf16 dot) and the
prefill's layer products (the audio rows and bos: bf16 dot, or int8 dot for
Q8_0) as fractions of their arithmetic's roof. Roofs and bandwidth:
bench_roof, run right after each request. Each row carries the machine's
1-minute load average when it ran (the machine may be shared).

usage: bench/hviske_v6_bench.py [--build DIR] [--seconds S] [--tokens N] [--threads 1,2] [--beams 1,2]
                                [--weights stored,q8_0]
"""
import argparse
import json
import os
import re
import struct
import subprocess
import sys
import wave

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STEP_VALUES = 28 * (2 * 1024 * 2048 + 2 * 1024 * 1024 + 3 * 1024 * 3072) + 151936 * 1024
BYTES_PER_VALUE = {"stored": 2.0, "bf16": 2.0, "f16": 2.0, "f32": 4.0, "q8_0": 34 / 32}


def held_mib(path, weights):
    """The weights as the model holds them after loading (MiB): vectors in
    f32; matrices as stored, or under q8_0 the encoder's in 16 bits (its
    rule) and the rest in Q8_0. The encoder's are used in place from the
    file's pages, the converted ones' pages released, so each counts once."""
    with open(path, "rb") as f:
        header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
    total = 0
    for name, t in header.items():
        if name == "__metadata__":
            continue
        n = int(np.prod(t["shape"]))
        if len(t["shape"]) < 2:
            total += 4 * n
        elif weights == "q8_0" and not name.startswith("encoder.") and n // t["shape"][0] % 32 == 0:
            total += n * 34 // 32
        else:
            total += n * BYTES_PER_VALUE[t["dtype"].lower()]
    return total / 2**20


def encoder_flops(cfg, frames):
    """multiply-adds x 2 of the convolutions, the layers (products and attention) and the projector over
    FRAMES mel frames"""
    w, q = cfg["whisper"], cfg["qwen"]
    E, Fe, M, T = w["d_model"], w["encoder_ffn_dim"], w["num_mel_bins"], frames // 2
    convs = 2 * frames * M * 3 * E + 2 * T * E * 3 * E
    layer = 8 * T * E * E + 4 * T * E * Fe + 4 * T * T * E
    return convs + w["encoder_layers"] * layer + 2 * (T // cfg["stack"]) * cfg["stack"] * E * q["hidden_size"]


def prefill_flops(cfg, rows):
    """multiply-adds x 2 of the decoder's layer products over ROWS prompt rows"""
    q = cfg["qwen"]
    D, F, hd = q["hidden_size"], q["intermediate_size"], q["head_dim"]
    qd, kv = q["num_attention_heads"] * hd, q["num_key_value_heads"] * hd
    return 2 * rows * q["num_hidden_layers"] * (D * (qd + 2 * kv) + qd * D + 3 * D * F)


def kv_bytes(cfg, rows, tokens, beams):
    """bytes of f32 K/V cache one decoding step reads: every beam's keys and values of all layers at the mean
    position of TOKENS steps after ROWS prompt rows"""
    q = cfg["qwen"]
    width = q["num_key_value_heads"] * q["head_dim"]
    return beams * q["num_hidden_layers"] * 2 * width * 4 * (rows + tokens / 2)


def roofs(build, threads):
    """{kind: G/s} and read GB/s of THREADS threads, from bench_roof"""
    out = subprocess.run([os.path.join(build, "bench_roof"), "256"], capture_output=True, text=True,
                         check=True).stdout
    row = re.search(rf"^\| {threads} \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|", out, re.M)
    return {"f32": float(row.group(1)), "bf16": float(row.group(2)), "int8": float(row.group(3))}, float(row.group(4))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--beams", default="1,2")
    ap.add_argument("--weights", default="stored,q8_0")
    a = ap.parse_args()
    work = os.path.join(a.build, "bench")
    model = os.path.join(work, "hviske_v6_full")
    if not os.path.exists(os.path.join(model, "model.safetensors")):
        print("making the full-size package (once) ...", file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(HERE, "make_hviske_v6_full.py"), model], check=True)
    wav = os.path.join(work, f"noise_{a.seconds:g}s.wav")
    x = np.random.default_rng(1).normal(0, 0.05, int(a.seconds * 16000))
    with wave.open(wav, "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes((x * 32767).astype("<i2").tobytes())
    st = os.path.join(model, "model.safetensors")
    held = {wt: held_mib(st, wt) for wt in a.weights.split(",")}
    print(f"weights held (MiB): {', '.join(f'{wt} {v:.1f}' for wt, v in held.items())}; "
          f"file {os.path.getsize(st) / 2**20:.1f}")
    cfg = json.load(open(os.path.join(model, "config.json")))
    frames = max(200, -(-int(a.seconds * 100) // 100) * 100)
    enc = encoder_flops(cfg, frames)
    rows = (frames // 2) // cfg["stack"] + 1
    pre = prefill_flops(cfg, rows)
    print("| weights | threads | beams | front end ms | encoder ms | encoder of roof | prefill ms | prefill of roof | "
          "ms/step | GB/s per step | of read | total s | peak RSS MiB | over held | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    runs = [(wt, t, b) for wt in a.weights.split(",") for t in a.threads.split(",") for b in a.beams.split(",")]
    for wt, t, b in runs:
        load = os.getloadavg()[0]
        p = subprocess.run([os.path.join(a.build, "audioc"), "transcribe", "-m", model, "--no-vad", "--timings",
                            "--weights", wt, "-t", t, "-b", b, "--max-new-tokens", str(a.tokens), wav],
                           capture_output=True, text=True)
        if p.returncode:
            sys.exit(p.stderr)
        err = p.stderr
        f = lambda k: float(re.search(k + r" ([0-9.]+) ms", err).group(1))  # noqa: E731
        step = float(re.search(r"\(([0-9.]+) ms/token\)", err).group(1))
        total = float(re.search(r"total ([0-9.]+) ms", err).group(1)) / 1000
        rss = float(re.search(r"peak RSS ([0-9.]+) MB", err).group(1))
        roof, read = roofs(a.build, t)
        load = (load + os.getloadavg()[0]) / 2
        gbs = (STEP_VALUES * BYTES_PER_VALUE[wt] + kv_bytes(cfg, rows, a.tokens, int(b))) / step / 1e6
        enc_roof = enc / (f("encoder") / 1e3) / 1e9 / roof["bf16"]
        pre_roof = pre / (f("prefill") / 1e3) / 1e9 / roof["int8" if wt == "q8_0" else "bf16"]
        print(f"| {wt} | {t} | {b} | {f('front end'):.0f} | {f('encoder'):.0f} | {enc_roof:.2f} | {f('prefill'):.0f} | "
              f"{pre_roof:.2f} | {step:.1f} | {gbs:.1f} | {gbs / read:.2f} | {total:.1f} | {rss:.0f} | "
              f"{100 * (rss / held[wt] - 1):+.1f} % | {load:.1f} |",
              flush=True)


if __name__ == "__main__":
    main()
