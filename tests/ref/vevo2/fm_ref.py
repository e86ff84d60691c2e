#!/usr/bin/python3
"""Vevo2's flow-matching transformer in PyTorch 1.13, written from spec
vevo2.md §4.9 (Amphion FlowMatchingTransformer + DiffLlama), and tiny
random checkpoints in the published package layout (§2, §7.2).

usage: fm_ref.py tiny ROOT [F32|F16|BF16] [seed]
       fm_ref.py golden FM_DIR OUT_DIR [seed]

golden writes, as raw little-endian arrays, for fixed random inputs:
  params.txt         N (ids), Tt (prompt frames), F, t, steps of each sampler run
  ids.i32 [N]        condition ids          cond.f32 [4N][hidden]
  x.f32 [4N][mel]    estimator input        v_cond.f32, v_zero.f32 [4N][mel] at t (cond, zero cond)
  prompt.f32 [Tt][mel]  noise.f32 [F][mel]  mel_<steps>.f32 [F][mel] sampler output
"""
import json
import math
import os
import shutil
import sys

import numpy as np
import torch
import torch.nn.functional as Fn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "hviske_asr"))
import st_io  # noqa: E402
sys.path.insert(0, HERE)
from vocoder_ref import read_relaxed_json, write_relaxed_json  # noqa: E402

FM_PATH = "acoustic_modeling/fm_emilia101k_singnet7k_repa"
TINY = {"hidden": 64, "heads": 4, "layers": 2, "mel": 128, "codebook": 64, "repa_dim": 32}
TINY_COCO = {"coco_type": "content_style", "downsample_rate": 4, "codebook_size": 64, "hidden_size": 32,
             "codebook_dim": 4, "encoder": {"vocos_dim": 16, "vocos_intermediate_dim": 32, "vocos_num_layers": 2},
             "whisper_dim": 64, "chromagram_dim": 24, "use_normed_whisper": True,
             "whisper_stats_path": "acoustic_modeling/fm_emilia101k_singnet7k_repa/whisper_stats.pt"}
PREPROCESS = {"sample_rate": 24000, "hop_size": 480, "n_fft": 1920, "win_size": 1920, "num_mels": 128,
              "fmin": 0, "fmax": 12000, "mel_mean": -4.92, "mel_var": 8.14}
RMS_EPS = 1e-6
COMMENT = "Vevo2 flow-matching transformer (random weights for tests)"
ROPE_THETA = 10000.0
CFG, RESCALE = 1.0, 0.75


# ---- files ---------------------------------------------------------------

def config(d, text=False):
    fmt = {"mel_dim": d["mel"], "hidden_size": d["hidden"], "num_layers": d["layers"], "num_heads": d["heads"],
           "cfg_scale": 0.2, "use_cond_code": True, "cond_codebook_size": d["codebook"], "cond_scale_factor": 4,
           "sigma": 1e-5, "time_scheduler": "cos", "repa": {"layer_index": 5, "output_dim": d["repa_dim"]}}
    pre = dict(PREPROCESS, num_mels=d["mel"])
    if text:
        fmt.update(use_text_as_condition=True, text_cond_codebook_size=512)
        pre["tokenizer_path"] = "tokenizer/g2p"
    coco = d.get("coco", dict(TINY_COCO, codebook_size=d["codebook"]))
    return {"model_type": "FlowMatchingTransformer", "preprocess": pre,
            "model": {"flow_matching_transformer": fmt, "cond_sample_rate": 16000, "coco": coco}}


def weights(d, seed):
    """Initialisation of spec §7.2: Linear/Conv N(0, 1/sqrt(fan_in)), biases
    N(0, 0.01), to_weight N(0, 0.02) + bias 1+N(0, 0.05)."""
    rng = np.random.default_rng(seed)
    D, M, W = d["hidden"], d["mel"], 4 * d["hidden"]
    f32 = np.float32

    def lin(out, inp, std=None):
        return (rng.standard_normal((out, inp), dtype=f32) * f32(std or 1 / math.sqrt(inp))).astype(f32)

    def bias(n, mean=0.0, std=0.01):
        return (mean + rng.standard_normal(n, dtype=f32) * f32(std)).astype(f32)

    # cond_emb N(0, 1) rather than 1/sqrt(hidden): the condition then moves the
    # estimator enough for the guidance to be tested
    t = {"cond_emb.weight": lin(d["codebook"], D, 1.0)}
    for i in (0, 2):
        t[f"resampling_layers.{i}.weight"] = (rng.standard_normal((D, D, 4), dtype=f32) / f32(math.sqrt(4 * D)))
        t[f"resampling_layers.{i}.bias"] = bias(D)

    def mlp(name, inp, out):
        t[name + ".0.weight"], t[name + ".0.bias"] = lin(W, inp), bias(W)
        t[name + ".2.weight"], t[name + ".2.bias"] = lin(out, W), bias(out)

    def ada(name):
        t[name + ".to_weight.weight"], t[name + ".to_weight.bias"] = lin(D, D, 0.02), bias(D, 1.0, 0.05)

    e = "diff_estimator."
    mlp(e + "mel_mlp", M, D)
    mlp(e + "cond_mlp", D, D)
    mlp(e + "diff_step_mlp", D, D)
    mlp(e + "mel_out_mlp", D, M)
    for i in range(d["layers"]):
        p = f"{e}layers.{i}."
        ada(p + "input_layernorm")
        ada(p + "post_attention_layernorm")
        for n in "qkvo":
            t[p + f"self_attn.{n}_proj.weight"] = lin(D, D)
        t[p + "mlp.gate_proj.weight"], t[p + "mlp.up_proj.weight"] = lin(W, D), lin(W, D)
        t[p + "mlp.down_proj.weight"] = lin(D, W)
    ada(e + "norm")
    mlp("repa_mlp_layer", D, d["repa_dim"])  # the REPA training head: present, unused
    return t


def write_tiny(root, seed=0, dtype="F32", dims=None):
    """The FM folder and its _text variant under ROOT at their package paths."""
    d = dict(TINY, **(dims or {}))
    folder = os.path.join(root, FM_PATH)
    os.makedirs(folder, exist_ok=True)
    write_relaxed_json(os.path.join(folder, "config.json"), config(d), COMMENT)
    t = weights(d, seed)
    if dtype == "F16":
        t = {k: v.astype(np.float16) for k, v in t.items()}
    elif dtype == "BF16":
        t = {k: ("BF16", v) for k, v in t.items()}
    st_io.save(os.path.join(folder, "model.safetensors"), t)
    text = folder + "_text"
    os.makedirs(text, exist_ok=True)
    write_relaxed_json(os.path.join(text, "config.json"), config(d, text=True), COMMENT)
    shutil.copyfile(os.path.join(folder, "model.safetensors"), os.path.join(text, "model.safetensors"))
    return folder


# ---- the model -----------------------------------------------------------

class FM:
    def __init__(self, folder):
        c = read_relaxed_json(os.path.join(folder, "config.json"))["model"]["flow_matching_transformer"]
        self.D, self.H, self.layers, self.M = c["hidden_size"], c["num_heads"], c["num_layers"], c["mel_dim"]
        raw = st_io.load(os.path.join(folder, "model.safetensors"))
        self.w = {k: torch.from_numpy(np.asarray(v, dtype=np.float32).copy()) for k, v in raw.items()}

    def lin(self, name, x, bias=True):
        return Fn.linear(x, self.w[name + ".weight"], self.w[name + ".bias"] if bias else None)

    def mlp(self, name, x):
        return self.lin(name + ".2", Fn.silu(self.lin(name + ".0", x)))

    def cond(self, ids):
        c = self.w["cond_emb.weight"][torch.as_tensor(ids, dtype=torch.long)].T[None]  # [1][D][N]
        for i in (0, 2):
            c = Fn.gelu(Fn.conv_transpose1d(c, self.w[f"resampling_layers.{i}.weight"],
                                            self.w[f"resampling_layers.{i}.bias"], stride=2, padding=1))
        return c[0].T.contiguous()

    def ada_norm(self, name, h, tau):
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + RMS_EPS)
        return self.lin(name + ".to_weight", tau) * h

    def attention(self, p, x):
        L, dk = x.shape[0], self.D // self.H
        q, k, v = (self.lin(p + f"self_attn.{n}_proj", x, bias=False).view(L, self.H, dk).transpose(0, 1)
                   for n in "qkv")
        inv = 1.0 / (ROPE_THETA ** (torch.arange(0, dk, 2).float() / dk))
        freqs = torch.outer(torch.arange(L).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()

        def rot(u):
            return torch.cat((-u[..., dk // 2:], u[..., :dk // 2]), dim=-1)

        q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
        a = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(dk), dim=-1)  # bidirectional: no mask
        o = (a @ v).transpose(0, 1).reshape(L, self.D)
        return self.lin(p + "self_attn.o_proj", o, bias=False)

    def estimate(self, x, t, c):
        e = "diff_estimator."
        half = self.D // 2
        f = torch.exp(torch.arange(half) * -(math.log(10000) / (half - 1)))
        a = torch.tensor([t], dtype=torch.float32)[:, None] * f[None, :]
        tau = self.mlp(e + "diff_step_mlp", torch.cat((a.sin(), a.cos()), dim=-1))[0]
        h = self.mlp(e + "mel_mlp", x) + self.mlp(e + "cond_mlp", c)
        for i in range(self.layers):
            p = f"{e}layers.{i}."
            h = h + self.attention(p, self.ada_norm(p + "input_layernorm", h, tau))
            m = self.ada_norm(p + "post_attention_layernorm", h, tau)
            g = Fn.silu(Fn.linear(m, self.w[p + "mlp.gate_proj.weight"])) * Fn.linear(m, self.w[p + "mlp.up_proj.weight"])
            h = h + Fn.linear(g, self.w[p + "mlp.down_proj.weight"])
        return self.mlp(e + "mel_out_mlp", self.ada_norm(e + "norm", h, tau))

    def sample(self, cond, prompt, noise, steps, cfg=CFG, rescale_cfg=RESCALE):
        """Amphion reverse_diffusion with the initial noise given."""
        h = 1.0 / steps
        P = prompt.shape[0]
        xt = noise.clone()
        for i in range(steps):
            t = (0 + (i + 0.5) * h)
            flow = self.estimate(torch.cat([prompt, xt], dim=0), t, cond)[P:]
            if cfg > 0:
                unc = self.estimate(xt, t, torch.zeros_like(cond)[: xt.shape[0]])
                pos_std = flow.std()
                flow_cfg = flow + cfg * (flow - unc)
                rescaled = flow_cfg * pos_std / flow_cfg.std()
                flow = rescale_cfg * rescaled + (1 - rescale_cfg) * flow_cfg
            xt = xt + flow * h
        return xt


# ---- golden files --------------------------------------------------------

def golden(folder, out, seed=1, n_ids=10, prompt_frames=13, t=0.37, steps=(32, 4)):
    os.makedirs(out, exist_ok=True)
    m = FM(folder)
    rng = np.random.default_rng(seed)
    codebook = m.w["cond_emb.weight"].shape[0]
    ids = rng.integers(0, codebook, n_ids).astype(np.int32)
    L = 4 * n_ids
    F = L - prompt_frames
    x = rng.standard_normal((L, m.M)).astype(np.float32)
    prompt = rng.standard_normal((prompt_frames, m.M)).astype(np.float32)
    noise = rng.standard_normal((F, m.M)).astype(np.float32)
    with torch.no_grad():
        cond = m.cond(ids)
        v_cond = m.estimate(torch.from_numpy(x), t, cond)
        v_zero = m.estimate(torch.from_numpy(x), t, torch.zeros_like(cond))
        mels = {s: m.sample(cond, torch.from_numpy(prompt), torch.from_numpy(noise), s) for s in steps}

    def dump(name, a):
        np.ascontiguousarray(a).astype("<f4" if a.dtype != np.int32 else "<i4").tofile(os.path.join(out, name))

    dump("ids.i32", ids)
    dump("cond.f32", cond.numpy())
    dump("x.f32", x)
    dump("v_cond.f32", v_cond.numpy())
    dump("v_zero.f32", v_zero.numpy())
    dump("prompt.f32", prompt)
    dump("noise.f32", noise)
    for s, mel in mels.items():
        dump(f"mel_{s}.f32", mel.numpy())
    with open(os.path.join(out, "params.txt"), "w") as f:
        f.write(f"{n_ids} {prompt_frames} {F} {t!r} " + " ".join(map(str, steps)) + "\n")


def main(argv):
    if len(argv) >= 3 and argv[1] == "tiny":
        write_tiny(argv[2], int(argv[4]) if len(argv) > 4 else 0, argv[3] if len(argv) > 3 else "F32")
    elif len(argv) >= 4 and argv[1] == "golden":
        golden(argv[2], argv[3], int(argv[4]) if len(argv) > 4 else 1)
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
