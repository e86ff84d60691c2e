#!/usr/bin/python3
"""A whole Vevo2 package of random weights in the published layout (spec
vevo2.md §2, §7): every part's files written by its reference module, with
dims that fit each other (the AR folder with a tiny byte-level BPE
tokenizer, or the real Qwen2.5 vocabulary at full size), and the Whisper
encoder in the package
(whisper-medium/: medium.pt and the C++ port's form) and in Hugging Face's
form (openai/whisper-medium/).

  make_package.py ROOT [--dtype F32|F16|BF16] [--seed N] [--full] [--ar-only]
  make_package.py ROOT --bench

--full gives the real dimensions (spec §5; ~3 GB in F16) for the benchmark.
--bench makes the package bench/vevo2_bench.py and tests/precision.py
vevo2_full measure, once: full size, F16, the AR model BF16 as published
(~4.6 GB); the parts already under ROOT are kept.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ar_ref  # noqa: E402
import coco_ref  # noqa: E402
import fm_ref  # noqa: E402
import vocoder_ref  # noqa: E402
import whisper_ref  # noqa: E402

# the data folder beside the checkout (or AUDIOC_DATA)
DATA = os.environ.get("AUDIOC_DATA") or os.path.join(HERE, "..", "..", "..", "..", "shared", "data")
QWEN_TOKENIZER = os.path.join(DATA, "qwen2.5_tokenizer")
# the real dimensions of each part (spec §2.1, §4)
FULL = {
    "whisper": {"n_audio_state": 1024, "n_audio_head": 16, "n_audio_layer": 24},
    "coco": {name: {"codebook_size": cb, "hidden_size": 1024, "codebook_dim": 8, "whisper_dim": 1024,
                    "encoder": {"vocos_dim": 384, "vocos_intermediate_dim": 2048, "vocos_num_layers": 12},
                    "decoder": {"vocos_dim": 384, "vocos_intermediate_dim": 2048, "vocos_num_layers": 1}}
             for name, cb in (("coco_content_style", 16384), ("coco_style", 512))},
    "fm": {"hidden": 1024, "heads": 16, "layers": 16, "codebook": 16384, "repa_dim": 32},
    "vocoder": {"dim": 1024, "intermediate_dim": 4096, "num_layers": 30},
}


def write_ar(root, dtype, seed, full):
    """The AR model and its tokenizer: the §7.2 tiny one, or the real Qwen2.5 vocabulary at full size."""
    cocos = coco_ref.configs(root)
    ar_ref.write(root, seed + 5, dtype, cocos["coco_content_style"]["codebook_size"],
                 cocos["coco_style"]["codebook_size"], full, QWEN_TOKENIZER if full else None)


def make(root, dtype="F32", seed=0, full=False, whisper_forms=whisper_ref.FORMS):
    """Writes the package under ROOT; returns ROOT."""
    dims = FULL if full else {}
    whisper_ref.write_tiny(root, seed + 1, dtype, dims.get("whisper"), forms=whisper_forms)
    coco_ref.write_tiny(root, seed + 2, dtype, dims.get("coco"))
    # the FM config carries the content-style tokenizer's (model.coco), as upstream reads it
    coco = dict(coco_ref.TINY["coco_content_style"], **dims.get("coco", {}).get("coco_content_style", {}))
    coco["whisper_stats_path"] = whisper_ref.STATS_DIR + "/whisper_stats.pt"
    fm_ref.write_tiny(root, seed + 3, dtype, dict(dims.get("fm", {}), coco=coco))
    vocoder_ref.write_tiny(root, seed + 4, dtype, dims.get("vocoder"))
    write_ar(root, dtype, seed, full)
    return root


def make_bench(root):
    """The full-size package of the benchmarks under ROOT, each part made only when missing."""
    if not os.path.exists(os.path.join(root, "vocoder", "model.safetensors")):
        print("making the full-size F16 package (once, ~3.6 GB) ...", file=sys.stderr)
        make(root, "F16", 0, True, ("port",))
    if not os.path.exists(os.path.join(root, "contentstyle_modeling", "posttrained", "model.safetensors")):
        print("making the full-size BF16 AR model (once, ~1 GB) ...", file=sys.stderr)
        write_ar(root, "BF16", 0, True)
    return root


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--dtype", default="F32", choices=["F32", "F16", "BF16"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--ar-only", action="store_true", help="(re)write only the AR folder of a package")
    ap.add_argument("--bench", action="store_true", help="the benchmarks' full-size package, parts made when missing")
    a = ap.parse_args()
    if a.bench:
        return make_bench(a.root)
    if a.ar_only:
        return write_ar(a.root, a.dtype, a.seed, a.full)
    # OpenAI's medium.pt is F16 and the port's form F32 at full size would be 1.2 GB more: one form
    forms = ("port",) if a.full else whisper_ref.FORMS
    make(a.root, a.dtype, a.seed, a.full, forms)


if __name__ == "__main__":
    main()
