"""A Vevo2 package folder (make_package.py) as one GGUF file in the ggml
audio runtime's layout (docs/models/vevo2_gguf.md), written by
tests/ref/gguf_np.py:

- every part's tensors under its namespace, "<prefix>/<name>": the
  tokenizers, the AR model, the FM, its Whisper stats, the vocoder and the
  Whisper encoder (Hugging Face's folder openai/whisper-medium);
- every other file of the folder embedded under its relative path (what
  the runtime skips: weights, *.pt, *.bin);
- the package description (audiocpp.model_spec.family "vevo2" and .json):
  a "gguf" source whose "files" map each file the loader reads to
  "model:<path>" and whose "tensors" map each part to {"prefix": P}.

usage: make_gguf.py PACKAGE OUT.gguf [--type orig|F32|F16|BF16|Q8_0|Q4_K|Q6_K]
                    [--renamed] [--drop PART] [--drop-file PATH]
orig keeps every tensor's source type (F32, F16, BF16); the others are
gguf_np.pick's rule. --renamed moves every namespace to "part.<n>" and every embedded file under
"pkg/", so only a reader of the description finds them; --drop leaves a
part's tensors out, --drop-file an embedded file (malformed packages)."""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hviske_asr"))
import gguf_np  # noqa: E402
import st_io  # noqa: E402

FM = "acoustic_modeling/fm_emilia101k_singnet7k_repa"
AR = "contentstyle_modeling/posttrained"
WHISPER = "openai/whisper-medium"
PARTS = {
    "content_style_tokenizer_weights": "tokenizer/contentstyle_fvq16384_12.5hz/model.safetensors",
    "prosody_tokenizer_weights": "tokenizer/prosody_fvq512_6.25hz/model.safetensors",
    "ar_weights": AR + "/model.safetensors",
    "fm_weights": FM + "/model.safetensors",
    "fm_whisper_stats": FM + "/whisper_stats.safetensors",
    "vocoder_weights_0": "vocoder/model.safetensors",
    "whisper_weights": WHISPER + "/model.safetensors",
}
FILES = {
    "fm_config": FM + "/config.json",
    "vocoder_config": "vocoder/config.json",
    "ar_config": AR + "/config.json",
    "ar_amphion_config": AR + "/amphion_config.json",
    "ar_generation_config": AR + "/generation_config.json",
    "ar_tokenizer_config": AR + "/tokenizer_config.json",
    "ar_tokenizer_json": AR + "/tokenizer.json",
    "whisper_config": WHISPER + "/config.json",
}
SKIP = (".safetensors", ".gguf", ".bin", ".pt", ".pth")


def make(pkg, out, kind="F32", renamed=False, drop=(), drop_files=()):
    prefix = {k: (f"part.{i}" if renamed else k) for i, k in enumerate(PARTS)}
    where = (lambda rel: "pkg/" + rel) if renamed else (lambda rel: rel)
    tensors, types = [], {}
    for key, rel in PARTS.items():
        if key in drop:
            continue
        t, dtypes, _ = st_io.load(os.path.join(pkg, rel), with_dtypes=True)
        for name, a in t.items():
            tensors.append((f"{prefix[key]}/{name}", a))
            if kind == "orig":  # every tensor in its source type, as the runtime's --type orig
                types[f"{prefix[key]}/{name}"] = dtypes[name]
    files = []
    for d, _, names in sorted(os.walk(pkg)):
        for n in sorted(names):
            rel = os.path.relpath(os.path.join(d, n), pkg)
            if not n.endswith(SKIP) and rel not in drop_files:
                files.append((where(rel), open(os.path.join(pkg, rel), "rb").read()))
    spec = {"schema_version": 1, "family": "vevo2",
            "sources": [{"format": "safetensors", "roots": {"model": "."},
                         "tensors": {k: {"source": "model:" + v} for k, v in PARTS.items()}},
                        {"format": "gguf", "roots": {"model": ".", "weights": "$gguf"},
                         "files": {k: "model:" + where(v) for k, v in FILES.items()},
                         "tensors": {k: {"source": "weights:", "prefix": prefix[k]} for k in PARTS}}]}
    gguf_np.write(out, tensors, files, kind, sources=[(prefix[k], v) for k, v in PARTS.items()],
                  spec=("vevo2", json.dumps(spec)), types=types)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pkg")
    ap.add_argument("out")
    ap.add_argument("--type", default="F32", choices=["orig", "F32", "F16", "BF16", "Q8_0", "Q4_K", "Q6_K"])
    ap.add_argument("--renamed", action="store_true")
    ap.add_argument("--drop", action="append", default=[])
    ap.add_argument("--drop-file", action="append", default=[])
    a = ap.parse_args()
    make(a.pkg, a.out, a.type, a.renamed, a.drop, a.drop_file)


if __name__ == "__main__":
    main()
