#!/usr/bin/python3
"""Write a cohere_asr package (config.json, generation_config.json, tokenizer.model,
model.safetensors) from a training checkpoint, and check its size.

usage: export.py CKPT.pt OUTDIR [--dtype f16|f32] [--max-mb 15]

The tensor set is model.export_state(): the upstream names and shapes of spec §1.5, plus
the two front-end tensors (fb, window) the engine prefers when present. config.json has
the full nested structure of the real one (tests/ref/hviske_asr/make_tiny.py make_config)
with our dimensions; dither 0 (training used none), max_audio_clip_s 35 / overlap 5 as
the real model (the decoder length limit caps tokens per chunk, not audio length).
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "ref", "hviske_asr"))
import model as M  # noqa: E402
import st_io  # noqa: E402
from make_tiny import make_config, make_generation_config  # noqa: E402
from cohere_ref import Tokenizer  # noqa: E402


def package_config(dims, vocab):
    c = make_config(vocab)
    e, d = dims["d_model"], dims["dec_hidden"]
    c["model_defaults"] = {"asr_enc_hidden": e, "lm_enc_hidden": d, "lm_dec_hidden": d}
    c["preprocessor"].update(dither=0.0, pad_to=0)
    c["encoder"].update(d_model=e, n_layers=dims["n_layers"], n_heads=dims["n_heads"],
                        ff_expansion_factor=dims["ff_mult"], conv_kernel_size=dims["conv_kernel"],
                        subsampling_conv_channels=dims["sub_channels"])
    c["transf_encoder"].update(hidden_size=d, inner_size=dims["dec_inner"], num_attention_heads=dims["dec_heads"])
    c["transf_decoder"]["config_dict"].update(
        max_sequence_length=dims["dec_max_len"], hidden_size=d, inner_size=dims["dec_inner"],
        num_layers=dims["dec_layers"], num_attention_heads=dims["dec_heads"], lm_dec_hidden=e)
    c["head"].update(hidden_size=d, num_classes=vocab)
    c.update(max_seq_len=dims["dec_max_len"], max_audio_clip_s=35, overlap_chunk_second=5,
             supported_languages=["da"], vocab_size=vocab)
    return c


def export(net, tok_path, outdir, dtype="f16", max_mb=15.0, meta=None):
    os.makedirs(outdir, exist_ok=True)
    tok = Tokenizer(tok_path)
    assert len(tok) == net.dims["vocab"], (len(tok), net.dims["vocab"])
    tensors = {}
    for k, v in net.export_state().items():
        a = v.detach().cpu().numpy()
        if a.dtype == np.float32 and dtype == "f16":
            a = a.astype(np.float16)
        tensors[k] = a
    st_io.save(os.path.join(outdir, "model.safetensors"), tensors, metadata=meta)
    with open(os.path.join(outdir, "config.json"), "w") as f:
        json.dump(package_config(net.dims, len(tok)), f, indent=2)
    with open(os.path.join(outdir, "generation_config.json"), "w") as f:
        json.dump(make_generation_config(tok), f, indent=2)
    shutil.copyfile(tok_path, os.path.join(outdir, "tokenizer.model"))
    size = sum(os.path.getsize(os.path.join(outdir, f)) for f in os.listdir(outdir))
    print(f"exported {outdir}: {len(tensors)} tensors, {M.n_params(net.export_state()) / 1e6:.2f} M params, "
          f"{dtype}, package {size / 1e6:.2f} MB")
    assert size <= max_mb * 1e6, f"package {size / 1e6:.2f} MB > {max_mb} MB"
    return size


def load_ckpt(path):
    ck = torch.load(path, map_location="cpu")
    net = M.CohereAsr(ck["dims"])
    net.load_state_dict(ck["model"])
    net.eval()
    return net, ck


def dims_of_config(c):
    """The model.DEFAULT_DIMS keys from a package config.json (inverse of package_config)."""
    e, dec = c["encoder"], c["transf_decoder"]["config_dict"]
    return dict(d_model=e["d_model"], n_layers=e["n_layers"], n_heads=e["n_heads"],
                ff_mult=e["ff_expansion_factor"], conv_kernel=e["conv_kernel_size"],
                sub_channels=e["subsampling_conv_channels"], dec_hidden=dec["hidden_size"],
                dec_layers=dec["num_layers"], dec_heads=dec["num_attention_heads"], dec_inner=dec["inner_size"],
                dec_max_len=dec["max_sequence_length"], vocab=c["head"]["num_classes"], dropout=0.0)


def load_package(pkg):
    """The PyTorch training model with a package's (possibly F16) weights, in f32, eval mode."""
    with open(os.path.join(pkg, "config.json")) as f:
        dims = dims_of_config(json.load(f))
    net = M.CohereAsr(dims)
    state = {k: torch.from_numpy(np.asarray(v, dtype=np.float32) if v.dtype.kind == "f" else v)
             for k, v in st_io.load(os.path.join(pkg, "model.safetensors")).items()}
    missing, unexpected = net.load_state_dict(state, strict=False)
    assert not unexpected and all(k.startswith(M.EXPORT_SKIP) for k in missing), (missing, unexpected)
    net.eval()
    return net


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ckpt")
    ap.add_argument("outdir")
    ap.add_argument("--dtype", choices=["f16", "f32"], default="f16")
    ap.add_argument("--max-mb", type=float, default=15.0)
    a = ap.parse_args()
    net, ck = load_ckpt(a.ckpt)
    export(net, ck["tokenizer"], a.outdir, a.dtype, a.max_mb,
           meta={"format": "pt", "source": "audio.c train/ (espeak-ng Danish)", "step": ck.get("step", 0)})


if __name__ == "__main__":
    main()
