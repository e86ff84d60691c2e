#!/usr/bin/python3
"""Golden tensors for the reusable blocks of src/nn and the newer tensor
ops, from PyTorch written after the upstream modules: a Vocos ConvNeXt
block, Qwen2/Llama attention (GQA by repeated K/V, rotate-half RoPE) causal
and bidirectional, an adaptive RMSNorm with a per-row scale,
ConvTranspose1d and exact GELU. Writes OUT (safetensors, fixed seed)."""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "hviske_asr"))
import st_io  # noqa: E402

torch.manual_seed(1234)
t = {}


def r(*shape, scale=1.0):
    return torch.randn(*shape) * scale


# ConvNeXt block (Vocos): dwconv k7 p3 -> LN(eps 1e-6) -> pw1 -> GELU -> pw2 -> *gamma -> + x
T, C, I = 23, 16, 48
x = r(T, C)
dw_w, dw_b = r(C, 1, 7, scale=0.3), r(C, scale=0.1)
ln_w, ln_b = 1 + r(C, scale=0.05), r(C, scale=0.01)
pw1_w, pw1_b = r(I, C, scale=0.25), r(I, scale=0.1)
pw2_w, pw2_b = r(C, I, scale=0.15), r(C, scale=0.1)
gamma = torch.rand(C) * 0.7 + 0.3
h = F.conv1d(x.T.unsqueeze(0), dw_w, dw_b, padding=3, groups=C)[0].T
h = F.layer_norm(h, (C,), ln_w, ln_b, eps=1e-6)
h = F.linear(F.gelu(F.linear(h, pw1_w, pw1_b)), pw2_w, pw2_b)
t.update({"cnx.x": x, "cnx.dw_w": dw_w, "cnx.dw_b": dw_b, "cnx.ln_w": ln_w, "cnx.ln_b": ln_b,
          "cnx.pw1_w": pw1_w, "cnx.pw1_b": pw1_b, "cnx.pw2_w": pw2_w, "cnx.pw2_b": pw2_b,
          "cnx.gamma": gamma, "cnx.y": x + gamma * h})

# attention: 4 query heads, 2 KV heads of 8, q/k/v biases (Qwen2), o without
T, D, H, G, dk, theta = 11, 32, 4, 2, 8, 10000.0
x = r(T, D)
wq, bq = r(H * dk, D, scale=0.3), r(H * dk, scale=0.1)
wk, bk = r(G * dk, D, scale=0.3), r(G * dk, scale=0.1)
wv, bv = r(G * dk, D, scale=0.3), r(G * dk, scale=0.1)
wo = r(D, H * dk, scale=0.3)


def rotate_half(v):
    a, b = v[..., : v.shape[-1] // 2], v[..., v.shape[-1] // 2:]
    return torch.cat((-b, a), dim=-1)


def attention(pos, causal):
    inv_freq = 1.0 / (theta ** (torch.arange(0, dk, 2, dtype=torch.int64).float() / dk))
    freqs = pos.float()[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    q = F.linear(x, wq, bq).view(T, H, dk).transpose(0, 1)
    k = F.linear(x, wk, bk).view(T, G, dk).transpose(0, 1)
    v = F.linear(x, wv, bv).view(T, G, dk).transpose(0, 1)
    q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
    k, v = k.repeat_interleave(H // G, dim=0), v.repeat_interleave(H // G, dim=0)
    s = q @ k.transpose(1, 2) / dk ** 0.5
    if causal:
        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
    o = (s.softmax(-1) @ v).transpose(0, 1).reshape(T, H * dk)
    return F.linear(o, wo)


t.update({"attn.x": x, "attn.wq": wq, "attn.bq": bq, "attn.wk": wk, "attn.bk": bk, "attn.wv": wv, "attn.bv": bv,
          "attn.wo": wo, "attn.y_causal": attention(torch.arange(T), True),
          "attn.y_bidir": attention(torch.arange(T) + 5, False)})

# adaptive RMSNorm: x / sqrt(mean(x^2) + eps) * (W tau + b), the scale per row
x, g = r(7, 40), r(7, 40)
t.update({"rms.x": x, "rms.gamma": g, "rms.y": x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g})

# ConvTranspose1d, x [T][cin] time-major; weight [cin][cout][k] as torch stores it
for name, (cin, cout, k, s, p, op, d) in {"ct_a": (6, 5, 4, 2, 1, 0, 1), "ct_b": (3, 4, 5, 3, 2, 2, 1),
                                           "ct_c": (4, 3, 3, 2, 3, 1, 2)}.items():
    x, w, b = r(9, cin), r(cin, cout, k, scale=0.4), r(cout, scale=0.1)
    y = F.conv_transpose1d(x.T.unsqueeze(0), w, b, stride=s, padding=p, output_padding=op, dilation=d)[0].T
    t.update({f"{name}.x": x, f"{name}.w": w, f"{name}.b": b, f"{name}.y": y,
              f"{name}.shape": torch.tensor([cin, cout, k, s, p, op, d], dtype=torch.int64)})

x = torch.linspace(-8, 8, 1001)
t.update({"gelu.x": x, "gelu.y": F.gelu(x)})

st_io.save(sys.argv[1], {k: v.contiguous().numpy() for k, v in t.items()})
