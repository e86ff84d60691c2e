#!/usr/bin/python3
"""A full-size synthetic Qwen2 package for benchmarks: Vevo2's AR model
(spec vevo2.md §2.1, §4.7: hidden 896, 24 layers, 14 query / 2 KV heads,
SwiGLU 4864, vocab 168 565, tied head) in the Hugging Face layout of
tests/ref/qwen2/make_checkpoints.py, random weights (speed does not depend
on the values). About 1.02 GB; made on demand under build/, never committed.

usage: make_qwen2_full.py OUTDIR [--dtype bf16|f16|f32]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ref", "qwen2"))
import make_checkpoints  # noqa: E402

FULL = dict(make_checkpoints.BASE, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
            num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768, vocab_size=168565,
            bos_token_id=151643, eos_token_id=151645)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--dtype", default="bf16", choices=("bf16", "f16", "f32"))
    a = ap.parse_args()
    make_checkpoints.write(a.outdir, FULL, make_checkpoints.weights(FULL, 0), a.dtype.upper())
    print(f"{a.outdir}: {os.path.getsize(os.path.join(a.outdir, 'model.safetensors')) / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
