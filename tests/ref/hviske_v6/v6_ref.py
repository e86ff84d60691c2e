#!/usr/bin/python3
"""The Hviske v6 reference (whisper_qwen), written from the model's
description (docs/models/hviske_v6.md) in torch + numpy, float32:

  log-mel  Whisper's, over the waveform zero-padded to whole seconds (>= 2 s)
  encoder  conv1/conv2 + GELU, pre-LN layers with partial NEOX rotary
           positions on q and k (no absolute table, no mask), final LayerNorm
  project  4 frames stacked, RMSNorm, Linear (no bias); the valid rows kept
  decoder  Qwen3 (RMSNorm on q and k per head, no biases, GQA, RoPE), the
           prompt [audio rows] [style tokens] <|im_start|>, head tied to
           the embedding; full recomputation or a K/V cache
  search   greedy or beam search as the port describes it (global top 2B,
           EOS from ranks < B counted in the length, early stop against the
           best candidate), the 4 style tokens banned

  v6_ref.py MODEL_DIR WAV_OR_F32 OUT_DIR [--beams B] [--teacher N]
writes mel.f32, enc.f32, tokens.f32 (projected audio rows), tf_logits.f32
and tf_ids.i32 (teacher forcing over N ids), greedy.i32, beam.i32 and
margins.txt.
"""
import argparse
import json
import math
import os
import sys
import wave

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hviske_asr"))
import st_io  # noqa: E402

RATE, N_FFT, HOP = 16000, 400, 160
LN_EPS, PROJ_EPS = 1e-5, 1e-6


class Model:
    def __init__(self, folder):
        with open(os.path.join(folder, "config.json")) as f:
            self.cfg = json.load(f)
        self.w = {k: torch.from_numpy(np.asarray(v, np.float32)) for k, v in
                  st_io.load(os.path.join(folder, "model.safetensors")).items()}
        c = self.cfg
        self.wc, self.qc = c["whisper"], c["qwen"]
        self.style = [c["style_tokens"][k] for k in ("<|cased|>", "<|nocase|>", "<|punc|>", "<|nopunc|>")]


# ---- front end ---------------------------------------------------------------

def mel_filters(n_mels, sr=RATE, n_fft=N_FFT, fmax=8000.0):
    """Slaney mel filterbank (librosa's default, Whisper's mel_filters), float64."""
    def hz_to_mel(f):
        f = np.asarray(f, np.float64)
        lin = f / (200.0 / 3)
        logstep = np.log(6.4) / 27.0
        return np.where(f >= 1000.0, 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / logstep, lin)

    def mel_to_hz(m):
        m = np.asarray(m, np.float64)
        logstep = np.log(6.4) / 27.0
        return np.where(m >= 15.0, 1000.0 * np.exp(logstep * (m - 15.0)), m * 200.0 / 3)

    fft_f = np.arange(n_fft // 2 + 1) * sr / n_fft
    pts = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(fmax), n_mels + 2))
    fdiff = np.diff(pts)
    ramps = pts[:, None] - fft_f[None, :]
    fb = np.zeros((n_mels, len(fft_f)))
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        fb[i] = np.maximum(0, np.minimum(lower, upper))
    fb *= (2.0 / (pts[2:n_mels + 2] - pts[:n_mels]))[:, None]
    return fb


def frames_of(L):
    valid = -(-L // HOP)
    return valid, max(200, -(-valid // 100) * 100)


def logmel(x, n_mels):
    """[n_mels][F] features of one chunk, and valid."""
    L = len(x)
    valid, F = frames_of(L)
    pad = np.zeros(F * HOP, np.float32)
    pad[:L] = x
    win = torch.hann_window(N_FFT, periodic=True)
    st = torch.stft(torch.from_numpy(pad), N_FFT, HOP, window=win, center=True, pad_mode="reflect",
                    return_complex=True)
    power = st[:, :-1].abs() ** 2
    fb = torch.from_numpy(mel_filters(n_mels).astype(np.float32))
    mel = fb @ power
    v = torch.log10(torch.clamp(mel, min=1e-10))
    v = torch.maximum(v, v.max() - 8.0)
    return ((v + 4.0) / 4.0).float(), valid


# ---- encoder and projector ---------------------------------------------------

def rope_neox(x, pos, dims, base):
    """x [T][H][dh]: rotate the pairs (i, i + dims/2) of the first DIMS channels."""
    half = dims // 2
    inv = 1.0 / (base ** (torch.arange(0, dims, 2, dtype=torch.float32) / dims))
    ang = pos[:, None].float() * inv[None, :]
    c, s = torch.cos(ang)[:, None, :], torch.sin(ang)[:, None, :]
    a, b = x[..., :half], x[..., half:dims]
    out = x.clone()
    out[..., :half] = a * c - b * s
    out[..., half:dims] = a * s + b * c
    return out


def encode(m, feat):
    """X [T][E] after the final LayerNorm."""
    w, c = m.w, m.wc
    E, H, R = c["d_model"], c["encoder_attention_heads"], c["encoder_rotary_dim"]
    dh = E // H
    gelu = torch.nn.functional.gelu
    x = gelu(torch.nn.functional.conv1d(feat[None], w["encoder.conv1.weight"], w["encoder.conv1.bias"], padding=1))
    x = gelu(torch.nn.functional.conv1d(x, w["encoder.conv2.weight"], w["encoder.conv2.bias"], stride=2, padding=1))
    x = x[0].T.contiguous()
    T = x.shape[0]
    pos = torch.arange(T)
    ln = torch.nn.functional.layer_norm
    for i in range(c["encoder_layers"]):
        p = f"encoder.layers.{i}."
        h = ln(x, (E,), w[p + "self_attn_layer_norm.weight"], w[p + "self_attn_layer_norm.bias"], LN_EPS)
        q = h @ w[p + "self_attn.q_proj.weight"].T + w[p + "self_attn.q_proj.bias"]
        k = h @ w[p + "self_attn.k_proj.weight"].T
        v = h @ w[p + "self_attn.v_proj.weight"].T + w[p + "self_attn.v_proj.bias"]
        q = rope_neox(q.view(T, H, dh), pos, R, m.cfg["rope_theta"])
        k = rope_neox(k.view(T, H, dh), pos, R, m.cfg["rope_theta"])
        v = v.view(T, H, dh)
        att = torch.einsum("qhd,khd->hqk", q, k) / math.sqrt(dh)
        a = torch.einsum("hqk,khd->qhd", att.softmax(-1), v).reshape(T, E)
        x = x + a @ w[p + "self_attn.out_proj.weight"].T + w[p + "self_attn.out_proj.bias"]
        h = ln(x, (E,), w[p + "final_layer_norm.weight"], w[p + "final_layer_norm.bias"], LN_EPS)
        h = gelu(h @ w[p + "fc1.weight"].T + w[p + "fc1.bias"])
        x = x + h @ w[p + "fc2.weight"].T + w[p + "fc2.bias"]
    return ln(x, (E,), w["encoder.layer_norm.weight"], w["encoder.layer_norm.bias"], LN_EPS)


def rmsnorm(x, g, eps):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * g


def project(m, X, valid):
    """The audio rows the decoder gets: [N_a][D]."""
    S = m.cfg["stack"]
    n_tok = X.shape[0] // S
    st = X[:n_tok * S].reshape(n_tok, S * X.shape[1])
    Y = rmsnorm(st, m.w["norm.weight"], PROJ_EPS) @ m.w["proj.weight"].T
    n_a = min(max(-(-(-(-valid // 2)) // S), 1), n_tok)
    return Y[:n_a]


# ---- decoder -----------------------------------------------------------------

class Decoder:
    """Qwen3 over input embeddings, with a K/V cache per sequence (a list of
    [layer] (K, V) tensors), optionally rounded to float16 as the port stores them."""

    def __init__(self, m, kv_f16=False):
        self.m, self.c, self.w, self.kv_f16 = m, m.qc, m.w, kv_f16
        self.E = self.w["llm.model.embed_tokens.weight"]

    def embed(self, ids):
        return self.E[torch.tensor(ids, dtype=torch.long)]

    def forward(self, x, pos0, cache):
        """Logits [n][V] of rows X [n][D] at positions pos0.. after CACHE (extended in place)."""
        c, w = self.c, self.w
        n, eps = x.shape[0], c["rms_norm_eps"]
        Hq, Hkv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        pos = torch.arange(pos0, pos0 + n)
        for j in range(c["num_hidden_layers"]):
            p = f"llm.model.layers.{j}."
            h = rmsnorm(x, w[p + "input_layernorm.weight"], eps)
            q = (h @ w[p + "self_attn.q_proj.weight"].T).view(n, Hq, hd)
            k = (h @ w[p + "self_attn.k_proj.weight"].T).view(n, Hkv, hd)
            v = (h @ w[p + "self_attn.v_proj.weight"].T).view(n, Hkv, hd)
            q = rmsnorm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rmsnorm(k, w[p + "self_attn.k_norm.weight"], eps)
            q = rope_neox(q, pos, hd, c["rope_theta"])
            k = rope_neox(k, pos, hd, c["rope_theta"])
            if self.kv_f16:
                k, v = k.half().float(), v.half().float()
            if len(cache) > j:
                K, V = torch.cat([cache[j][0], k]), torch.cat([cache[j][1], v])
                cache[j] = (K, V)
            else:
                K, V = k, v
                cache.append((K, V))
            K = K.repeat_interleave(Hq // Hkv, dim=1)
            V = V.repeat_interleave(Hq // Hkv, dim=1)
            att = torch.einsum("qhd,khd->hqk", q, K) / math.sqrt(hd)
            nk = K.shape[0]
            mask = torch.arange(nk)[None, :] > (torch.arange(n)[:, None] + (nk - n))
            att = att.masked_fill(mask[None], float("-inf"))
            a = torch.einsum("hqk,khd->qhd", att.softmax(-1), V).reshape(n, Hq * hd)
            x = x + a @ w[p + "self_attn.o_proj.weight"].T
            h = rmsnorm(x, w[p + "post_attention_layernorm.weight"], eps)
            g = torch.nn.functional.silu(h @ w[p + "mlp.gate_proj.weight"].T)
            x = x + (g * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
        return rmsnorm(x, w["llm.model.norm.weight"], eps) @ self.E.T


def prompt_rows(m, dec, audio, cased=None, punctuated=None):
    """The prompt's input rows: audio, the style tokens when both are given, <|im_start|>."""
    st = m.cfg["style_tokens"]
    ids = []
    if cased is not None and punctuated is not None:
        ids = [st["<|cased|>" if cased else "<|nocase|>"], st["<|punc|>" if punctuated else "<|nopunc|>"]]
    ids.append(m.cfg["bos_token_id"])
    return torch.cat([audio, dec.embed(ids)])


def log_softmax(row):
    r = row.double()
    return (r - r.max() - torch.log(torch.exp(r - r.max()).sum())).float()


def token_cap(L, max_tokens=440):
    return min(max_tokens, -(-L // 2000) + 12)


def greedy(m, dec, rows, cap):
    cache, eos = [], m.cfg["eos_token_id"]
    logits = dec.forward(rows, 0, cache)[-1]
    out, margins, pos = [], [], rows.shape[0]
    for _ in range(cap):
        lp = log_softmax(logits)
        lp[m.style] = float("-inf")
        top = torch.topk(lp, 2)
        margins.append(float(top.values[0] - top.values[1]))
        t = int(top.indices[0])
        if t == eos:
            break
        out.append(t)
        if len(out) == cap:
            break
        logits = dec.forward(dec.embed([t]), pos, cache)[-1]
        pos += 1
    return out, margins


def beam_search(m, dec, rows, cap, B=2, alpha=1.0):
    """The port's beam search (docs/models/hviske_v6.md)."""
    eos = m.cfg["eos_token_id"]
    cache0 = []
    logits = dec.forward(rows, 0, cache0)[-1]
    S = rows.shape[0]
    active = [([], 0.0, cache0, logits)]
    finished = []
    margins = []
    for step in range(cap):
        cands = []
        for bi, (toks, score, _, lg) in enumerate(active):
            lp = log_softmax(lg)
            lp[m.style] = float("-inf")
            top = torch.topk(lp, 2 * B)
            for v, t in zip(top.values.tolist(), top.indices.tolist()):
                cands.append((np.float32(score) + np.float32(v), bi, t))
        cands.sort(key=lambda c: -c[0])
        cands = cands[:2 * B]
        margins.append(float(cands[0][0] - cands[1][0]) if len(cands) > 1 else float("inf"))
        nxt = []
        for rank, (sc, bi, t) in enumerate(cands):
            if len(nxt) >= B:
                break
            if t == eos:
                if rank < B:
                    finished.append((sc / (step + 1) ** alpha, active[bi][0]))
                continue
            nxt.append((active[bi][0] + [t], sc, bi))
        finished.sort(key=lambda f: -f[0])
        finished = finished[:B]
        if not nxt:
            active = []
            break
        if len(finished) == B and finished[-1][0] >= cands[0][0] / (step + 1) ** alpha:
            active = []
            break
        if step + 1 == cap:
            active = [(toks, sc, None, None) for toks, sc, _ in nxt]
            break
        new = []
        for toks, sc, bi in nxt:
            cache = [(k.clone(), v.clone()) for k, v in active[bi][2]]
            lg = dec.forward(dec.embed([toks[-1]]), S + step, cache)[-1]
            new.append((toks, sc, cache, lg))
        active = new
    for toks, sc, _, _ in active:
        finished.append((sc / max(1, len(toks)) ** alpha, toks))
    best = max(finished, key=lambda f: f[0])
    return best[1], margins


def teacher_logits(m, dec, rows, ids):
    """Logits at the last prompt position and after each of IDS, by one full pass."""
    x = torch.cat([rows, dec.embed(ids)]) if ids else rows
    return dec.forward(x, 0, [])[rows.shape[0] - 1:]


def silence_chunks(x, max_len=448000, trigger=480000):
    """Chunk ends of long audio: librosa.effects.split's defaults (2048-sample
    centred frames every 512, voiced above the loudest frame's mean square
    minus 30 dB); the cuts are the middles of the gaps; a chunk grows to at
    most MAX_LEN samples. One chunk when the audio is at most TRIGGER."""
    L = len(x)
    if L <= trigger:
        return [L]
    sq = np.concatenate([[0.0], np.cumsum(x.astype(np.float64) ** 2)])
    frames = 1 + L // 512
    i = np.arange(frames)
    a, b = np.clip(i * 512 - 1024, 0, L), np.clip(i * 512 + 1024, 0, L)
    e = (sq[b] - sq[a]) / 2048
    thr = max(1e-10, e.max()) * 0.001
    act = np.maximum(1e-10, e) > thr
    intervals, k = [], 0
    while k < frames:
        if not act[k]:
            k += 1
            continue
        first = k
        while k < frames and act[k]:
            k += 1
        intervals.append((first * 512, min(L, k * 512)))
    cuts = [0] + [(intervals[j][1] + intervals[j + 1][0]) // 2 for j in range(len(intervals) - 1)] + [L]
    ends, start = [], 0
    for c in cuts[1:]:
        while c - start > max_len:
            fit = [v for v in cuts if start < v <= start + max_len]
            cut = max(fit) if fit else start + max_len
            ends.append(cut)
            start = cut
    if start < L:
        ends.append(L)
    return ends


def read_audio(path):
    if path.endswith(".f32"):
        return np.fromfile(path, "<f4")
    with wave.open(path) as f:
        assert f.getframerate() == RATE and f.getsampwidth() == 2, path
        x = np.frombuffer(f.readframes(f.getnframes()), "<i2").astype(np.float32) / 32768.0
        return x.reshape(-1, f.getnchannels()).mean(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("audio")
    ap.add_argument("out")
    ap.add_argument("--beams", type=int, default=2)
    ap.add_argument("--teacher", type=int, default=12)
    ap.add_argument("--kv-f16", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)
    m = Model(a.model)
    x = read_audio(a.audio)
    with torch.no_grad():
        feat, valid = logmel(x, m.wc["num_mel_bins"])
        X = encode(m, feat)
        Y = project(m, X, valid)
        dec = Decoder(m, a.kv_f16)
        rows = prompt_rows(m, dec, Y)
        cap = token_cap(len(x))
        g, gm = greedy(m, dec, rows, cap)
        b, bm = beam_search(m, dec, rows, cap, a.beams)
        rng = np.random.default_rng(len(x))
        tf = [int(t) for t in rng.integers(0, 151643, a.teacher)]
        tl = teacher_logits(m, dec, rows, tf)
    feat.T.contiguous().numpy().astype("<f4").tofile(os.path.join(a.out, "mel.f32"))
    X.numpy().astype("<f4").tofile(os.path.join(a.out, "enc.f32"))
    Y.numpy().astype("<f4").tofile(os.path.join(a.out, "tokens.f32"))
    tl.numpy().astype("<f4").tofile(os.path.join(a.out, "tf_logits.f32"))
    np.array(tf, "<i4").tofile(os.path.join(a.out, "tf_ids.i32"))
    np.array(g, "<i4").tofile(os.path.join(a.out, "greedy.i32"))
    np.array(b, "<i4").tofile(os.path.join(a.out, "beam.i32"))
    with open(os.path.join(a.out, "margins.txt"), "w") as f:
        f.write(f"greedy {min(gm) if gm else 0:.6g} beam {min(bm) if bm else 0:.6g} n_greedy {len(g)} n_beam {len(b)}\n")


if __name__ == "__main__":
    main()
