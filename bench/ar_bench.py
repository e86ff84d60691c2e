#!/usr/bin/python3
"""Qwen2 (Vevo2's AR model) speed on full-size synthetic packages
(bench/make_qwen2_full.py, BF16 as published and F16, made on demand under
build/bench/, ~1 GB each): prefill of a 200-token prompt (against OpenBLAS sgemm's time for the same
layer products: the prefill ratio) and ms per cached decoding step over 500
steps, on 1 and 2 threads, the step against the memory bandwidth: a step
reads every layer matrix and the tied head once. A shared machine's
bandwidth changes from second to second, so bench_ar times the steps in
blocks of 50 and reads 1 GB after each: the ratio is the median over the
blocks of (block ms/step) / (bytes per step / that bandwidth). The BF16
package also runs with --weights q8_0 (converted on load: 34 bytes per 32
values read per step). The prefill's layer products are also a fraction of
the roof of their arithmetic (f32 FMA for F16, bf16 dot, int8 dot),
measured by bench_ar right after them.

usage: bench/ar_bench.py [--build DIR] [--prompt N] [--steps N]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def sh(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True)


def step_bytes(cfg, per_value=2.0):
    """Weight bytes (PER_VALUE per value) one step reads: q/k/v/o, gate/up/down, the head."""
    D, F, L, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"], cfg["vocab_size"]
    hd = cfg.get("head_dim", D // cfg["num_attention_heads"])
    q, kv = cfg["num_attention_heads"] * hd, cfg["num_key_value_heads"] * hd
    return per_value * (L * (D * q + 2 * D * kv + q * D + 3 * D * F) + V * D)


def prefill_sgemm_ms(build, cfg, prompt):
    """OpenBLAS sgemm's time (ms) per thread count for the prefill's layer
    products over PROMPT rows (bench_matmul on the same shapes)."""
    D, F, L = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    hd = cfg.get("head_dim", D // cfg["num_attention_heads"])
    q, kv = cfg["num_attention_heads"] * hd, cfg["num_key_value_heads"] * hd
    shapes = {(q, D): 1, (kv, D): 2, (D, q): 1, (F, D): 2, (D, F): 1}   # (N, K): per layer
    args = [str(v) for (N, K) in shapes for v in (prompt, N, K)]
    out = sh(os.path.join(build, "bench_matmul"), "--f16", *args).stdout
    ms = {1: 0.0, 2: 0.0}
    for M, N, K, t, _, blas in re.findall(r"\| (\d+) \| (\d+) \| (\d+) \| (\d) \| ([\d.]+) \| ([\d.]+) \|", out):
        flops = 2.0 * int(M) * int(N) * int(K) * shapes[(int(N), int(K))] * L
        ms[int(t)] += flops / (float(blas) * 1e9) * 1e3
    return ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--prompt", type=int, default=200)
    ap.add_argument("--steps", type=int, default=500)
    a = ap.parse_args()
    work = os.path.join(a.build, "bench")
    print("| dtype | weights | threads | load (ms) | prefill (ms) | sgemm (ms) | prefill ratio | prefill of roof | "
          "ms/step | GB/s | bound (ms) | ratio | peak RSS (MB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for dtype, weights in (("bf16", "stored"), ("bf16", "q8_0"), ("f16", "stored")):
        model = os.path.join(work, f"qwen2_full_{dtype}")
        if not os.path.exists(os.path.join(model, "model.safetensors")):
            print(f"making the full-size {dtype} package (once) ...", file=sys.stderr)
            sh("/usr/bin/python3", os.path.join(HERE, "make_qwen2_full.py"), model, "--dtype", dtype)
        cfg = json.load(open(os.path.join(model, "config.json")))
        sgemm = prefill_sgemm_ms(a.build, cfg, a.prompt)
        per_value = 34 / 32 if weights == "q8_0" else 2.0
        for threads in (1, 2):
            out = sh(os.path.join(a.build, "bench_ar"), model, str(a.prompt), str(a.steps), str(threads), "50",
                     weights).stdout
            num = lambda pat: float(re.search(pat, out).group(1))  # noqa: E731
            load, pre = num(r"load ([\d.]+) ms"), num(r"tokens ([\d.]+) ms")
            step, rss = num(r"([\d.]+) ms/step"), num(r"peak RSS ([\d.]+) MB")
            blocks = [(float(ms), float(g)) for ms, g in re.findall(r" ([\d.]+)@([\d.]+)", out.split("blocks", 1)[1])]
            of_roof = num(r": ([\d.]+) of roof")
            ratio = statistics.median(ms / (step_bytes(cfg, per_value) / g / 1e6) for ms, g in blocks)
            gbs = statistics.median(g for _, g in blocks)
            print(f"| {dtype} | {weights} | {threads} | {load:.0f} | {pre:.0f} | {sgemm[threads]:.0f} | "
                  f"{sgemm[threads] / pre:.2f} | {of_roof:.2f} | {step:.2f} | {gbs:.1f} | "
                  f"{step_bytes(cfg, per_value) / gbs / 1e6:.1f} | {ratio:.2f} | {rss:.0f} |", flush=True)
    print(f"\nweights read per step: {step_bytes(cfg) / 1e6:.0f} MB at 16 bits, {step_bytes(cfg, 34 / 32) / 1e6:.0f} MB "
          "at Q8_0; GB/s and bound: the blocks' median bandwidth; ratio: the blocks' median")


if __name__ == "__main__":
    main()
