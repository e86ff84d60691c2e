#!/usr/bin/python3
"""Vevo2's vocoder (Amphion Vocos, spec vevo2.md §4.11) in PyTorch, and tiny
random vocoder packages at their published paths (§2):
vocoder/config.json (Amphion-style: a // comment, trailing commas),
vocoder/model.safetensors, and dummy model_1/model_2.safetensors (the GAN
discriminators, unused).

Also the pieces the Coco reference shares: the Vocos backbone, the
initialisation of §7.2 and the relaxed JSON of Amphion's configs.

usage: vocoder_ref.py write ROOT [--dtype F32|F16|BF16] [--dims DIM,INTERMEDIATE,LAYERS] [--seed N]
       vocoder_ref.py run ROOT MEL.f32 FRAMES OUT.f32     (mel [F][128] -> wav [F*480], raw little-endian)
"""
import argparse
import json
import os
import re
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hviske_asr"))
import st_io  # noqa: E402

LN_EPS = 1e-6
PREPROCESS = {"sample_rate": 24000, "hop_size": 480, "n_fft": 1920, "win_size": 1920, "num_mels": 128,
              "fmin": 0, "fmax": 12000, "mel_mean": -4.92, "mel_var": 8.14}
TINY = {"dim": 32, "intermediate_dim": 64, "num_layers": 2}


# ---------------------------------------------------------------------------------------------
# Amphion's JSON5-like configs
# ---------------------------------------------------------------------------------------------

def write_relaxed_json(path, obj, comment):
    """JSON with a // comment line and a trailing comma, as Amphion writes its configs."""
    text = json.dumps(obj, indent=4)
    text = "{\n    // " + comment + text[1:].rstrip()[:-1].rstrip() + ",\n}\n"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def read_relaxed_json(path):
    with open(path) as f:
        text = f.read()
    text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", text))


# ---------------------------------------------------------------------------------------------
# initialisation (§7.2) and file writing
# ---------------------------------------------------------------------------------------------

class Init:
    """Seeded tensors as spec §7.2 draws them (f32)."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def normal(self, shape, std, mean=0.0):
        return (mean + std * self.rng.standard_normal(shape, dtype=np.float32)).astype(np.float32)

    def weight(self, *shape):
        """Linear [out, in] / Conv1d [out, in, k]: N(0, 1/sqrt(fan_in))."""
        return self.normal(shape, 1.0 / np.sqrt(np.prod(shape[1:])))

    def bias(self, n):
        return self.normal((n,), 0.01)

    def norm(self, n):
        return self.normal((n,), 0.05, 1.0), self.normal((n,), 0.01)

    def uniform(self, shape, lo, hi):
        return self.rng.uniform(lo, hi, shape).astype(np.float32)


def backbone_tensors(init, prefix, cin, dim, inter, layers):
    t = {prefix + "embed.weight": init.weight(dim, cin, 7), prefix + "embed.bias": init.bias(dim)}
    t[prefix + "norm.weight"], t[prefix + "norm.bias"] = init.norm(dim)
    for i in range(layers):
        p = f"{prefix}convnext.{i}."
        t[p + "dwconv.weight"], t[p + "dwconv.bias"] = init.weight(dim, 1, 7), init.bias(dim)
        t[p + "norm.weight"], t[p + "norm.bias"] = init.norm(dim)
        t[p + "pwconv1.weight"], t[p + "pwconv1.bias"] = init.weight(inter, dim), init.bias(inter)
        t[p + "pwconv2.weight"], t[p + "pwconv2.bias"] = init.weight(dim, inter), init.bias(dim)
        t[p + "gamma"] = init.uniform((dim,), 0.3, 1.0)
    t[prefix + "final_layer_norm.weight"], t[prefix + "final_layer_norm.bias"] = init.norm(dim)
    return t


def save(path, tensors, dtype):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    st_io.save(path, {k: (dtype, v) for k, v in tensors.items()})


def periodic_hann(n):
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float32)


def write_tiny(root, seed=0, dtype="F32", dims=None):
    """vocoder/{config.json, model.safetensors, model_1/model_2.safetensors} under ROOT.
    DIMS overrides TINY's keys (e.g. the real 1024/4096/30 for a benchmark package)."""
    v = dict(TINY, **(dims or {}))
    n_fft, hop, mels = PREPROCESS["n_fft"], PREPROCESS["hop_size"], PREPROCESS["num_mels"]
    vocos = {"input_channels": mels, "dim": v["dim"], "intermediate_dim": v["intermediate_dim"],
             "num_layers": v["num_layers"], "n_fft": n_fft, "hop_size": hop, "padding": "same"}
    cfg = {"model_type": "Vocoder", "preprocess": PREPROCESS,
           "model": {"vocos": vocos, "period_gan": {"max_downsample_channels": 1024}}}
    folder = os.path.join(root, "vocoder")
    write_relaxed_json(os.path.join(folder, "config.json"), cfg, "Vevo2 vocoder, tiny random weights for tests")
    init = Init(seed)
    t = backbone_tensors(init, "backbone.", mels, v["dim"], v["intermediate_dim"], v["num_layers"])
    t["head.out.weight"] = init.normal((n_fft + 2, v["dim"]), 0.1 / np.sqrt(v["dim"]))
    t["head.out.bias"] = init.bias(n_fft + 2)
    t["head.istft.window"] = periodic_hann(n_fft)
    save(os.path.join(folder, "model.safetensors"), t, dtype)
    for i in (1, 2):  # the discriminators: not read
        save(os.path.join(folder, f"model_{i}.safetensors"), {"dummy.weight": init.weight(4, 4)}, dtype)
    return folder


# ---------------------------------------------------------------------------------------------
# the reference forward
# ---------------------------------------------------------------------------------------------

def tensor(w, name):
    return torch.from_numpy(np.ascontiguousarray(w[name], dtype=np.float32))


def vocos_backbone(w, prefix, x, layers):
    """x [B, C, T] -> [B, T, dim]: Amphion's VocosBackbone (no adaptive norm)."""
    x = F.conv1d(x, tensor(w, prefix + "embed.weight"), tensor(w, prefix + "embed.bias"), padding=3)
    dim = x.shape[1]

    def ln(y, name):
        return F.layer_norm(y, (dim,), tensor(w, name + ".weight"), tensor(w, name + ".bias"), eps=LN_EPS)

    x = ln(x.transpose(1, 2), prefix + "norm").transpose(1, 2)
    for i in range(layers):
        p = f"{prefix}convnext.{i}."
        y = F.conv1d(x, tensor(w, p + "dwconv.weight"), tensor(w, p + "dwconv.bias"), padding=3, groups=dim)
        y = ln(y.transpose(1, 2), p + "norm")
        y = F.linear(y, tensor(w, p + "pwconv1.weight"), tensor(w, p + "pwconv1.bias"))
        y = F.gelu(y)
        y = F.linear(y, tensor(w, p + "pwconv2.weight"), tensor(w, p + "pwconv2.bias"))
        y = tensor(w, p + "gamma") * y
        x = x + y.transpose(1, 2)
    return ln(x.transpose(1, 2), prefix + "final_layer_norm")


def istft_same(spec, window, n_fft, hop):
    """Vocos ISTFT, padding "same": spec [B, n_fft/2+1, T] complex -> [B, T*hop]."""
    T, win = spec.shape[-1], window.shape[0]
    pad = (win - hop) // 2
    frames = torch.fft.irfft(spec, n_fft, dim=1, norm="backward") * window[None, :, None]
    size = (T - 1) * hop + win
    y = F.fold(frames, output_size=(1, size), kernel_size=(1, win), stride=(1, hop))[:, 0, 0, pad:-pad]
    sq = window.square().expand(1, T, -1).transpose(1, 2)
    env = F.fold(sq, output_size=(1, size), kernel_size=(1, win), stride=(1, hop)).squeeze()[pad:-pad]
    assert (env > 1e-11).all()
    return y / env


def vocoder(folder, mel):
    """mel [F][num_mels] (numpy) -> wav [F*hop] (numpy f32), the weights as stored in FOLDER."""
    cfg = read_relaxed_json(os.path.join(folder, "config.json"))["model"]["vocos"]
    w = st_io.load(os.path.join(folder, "model.safetensors"))
    with torch.no_grad():
        x = vocos_backbone(w, "backbone.", torch.from_numpy(np.asarray(mel, np.float32).T[None].copy()),
                           cfg["num_layers"])
        y = F.linear(x, tensor(w, "head.out.weight"), tensor(w, "head.out.bias")).transpose(1, 2)
        mag, phase = y.chunk(2, dim=1)
        mag = torch.clip(torch.exp(mag), max=1e2)
        spec = mag * (torch.cos(phase) + 1j * torch.sin(phase))
        wav = istft_same(spec, tensor(w, "head.istft.window"), cfg["n_fft"], cfg["hop_size"])
    return wav[0].numpy().astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    wr = sub.add_parser("write")
    wr.add_argument("root")
    wr.add_argument("--dtype", default="F32", choices=["F32", "F16", "BF16"])
    wr.add_argument("--dims", help="DIM,INTERMEDIATE,LAYERS")
    wr.add_argument("--seed", type=int, default=0)
    rn = sub.add_parser("run")
    rn.add_argument("root")
    rn.add_argument("mel")
    rn.add_argument("frames", type=int)
    rn.add_argument("out")
    a = ap.parse_args()
    if a.cmd == "write":
        dims = None
        if a.dims:
            d, i, n = (int(s) for s in a.dims.split(","))
            dims = {"dim": d, "intermediate_dim": i, "num_layers": n}
        print(write_tiny(a.root, a.seed, a.dtype, dims))
    else:
        mel = np.fromfile(a.mel, dtype="<f4").reshape(a.frames, -1)
        vocoder(os.path.join(a.root, "vocoder"), mel).astype("<f4").tofile(a.out)


if __name__ == "__main__":
    main()
