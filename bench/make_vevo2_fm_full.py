#!/usr/bin/python3
"""A full-size synthetic Vevo2 flow-matching package for benchmarks (spec
vevo2.md §2.1, §4.9: hidden 1024, 16 layers, 16 heads, mel 128, cond
codebook 16384, the REPA head present) at its package path under OUTDIR,
written by tests/ref/vevo2/fm_ref.py write_tiny with full dims; random
weights (speed does not depend on the values). About 0.73 GB in F16; made
on demand under build/, never committed.

usage: make_vevo2_fm_full.py OUTDIR [--dtype f16|bf16|f32]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ref", "vevo2"))
import fm_ref  # noqa: E402

COCO = {"coco_type": "content_style", "downsample_rate": 4, "codebook_size": 16384, "hidden_size": 1024,
        "codebook_dim": 8, "encoder": {"vocos_dim": 384, "vocos_intermediate_dim": 2048, "vocos_num_layers": 12},
        "whisper_dim": 1024, "chromagram_dim": 24, "use_normed_whisper": True,
        "whisper_stats_path": fm_ref.FM_PATH + "/whisper_stats.pt"}
FULL = {"hidden": 1024, "heads": 16, "layers": 16, "mel": 128, "codebook": 16384, "repa_dim": 1024, "coco": COCO}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--dtype", default="f16", choices=("f16", "bf16", "f32"))
    a = ap.parse_args()
    folder = fm_ref.write_tiny(a.outdir, seed=0, dtype=a.dtype.upper(), dims=FULL)
    print(f"{folder}: {os.path.getsize(os.path.join(folder, 'model.safetensors')) / 1e9:.2f} GB")


if __name__ == "__main__":
    main()
