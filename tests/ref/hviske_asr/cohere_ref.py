#!/usr/bin/python3
"""Independent PyTorch reference of the `cohere_asr` (Hviske / Cohere Transcribe) model.

Written from specs/hviske_asr.md (section numbers below refer to it). Everything
runs on one CPU thread in float64 by default (float32 on request), so the
golden tensors are as close to the exact math as the checkpoint allows.

Pieces: config reader, SentencePiece model-proto reader + detokenizer (§4.7),
prompt (§4.4), frontend (§2), encoder (§3), decoder (§4.1-4.3), greedy / beam /
sampling distribution (§4.5), long-audio splitter and joiner (§5), WAV reader.
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import st_io  # noqa: E402

torch.set_num_threads(1)

LN_EPS = 1e-5
BN_EPS = 1e-5
LOG_GUARD = 2.0 ** -24
PREEMPH = 0.97
ENC_MASK = -1e9      # encoder self-attention and decoder cross-attention mask value
PROMPT_PIECES = ["<|startofcontext|>", "<|startoftranscript|>", "<|emo:undefined|>",
                 None, None, None, "<|noitn|>", "<|notimestamp|>", "<|nodiarize|>"]


# ----------------------------------------------------------------------------------------------
# Config (§1.2, §1.3)
# ----------------------------------------------------------------------------------------------

class Config:
    """The keys the model needs, with the defaults for keys the real base config lacks."""

    def __init__(self, cfg, gen=None, n_pieces=None):
        def need(d, key, where):
            if key not in d:
                raise ValueError(f"config.json: missing key '{where}{key}'")
            return d[key]

        if cfg.get("model_type") != "cohere_asr":
            raise ValueError(f"config.json: model_type is {cfg.get('model_type')!r}, expected 'cohere_asr'")
        pre, enc, head = need(cfg, "preprocessor", ""), need(cfg, "encoder", ""), need(cfg, "head", "")
        dec = need(need(cfg, "transf_decoder", ""), "config_dict", "transf_decoder.")

        # vocab_size: top-level key (audio.cpp) else head.num_classes (upstream) else the tokenizer.
        vocab = cfg.get("vocab_size", head.get("num_classes", n_pieces))
        if vocab is None:
            raise ValueError("config.json: no vocab_size and no head.num_classes")
        if "vocab_size" in cfg and "num_classes" in head and cfg["vocab_size"] != head["num_classes"]:
            raise ValueError("config.json: vocab_size and head.num_classes disagree")
        self.vocab_size = int(vocab)
        self.max_audio_clip_s = float(need(cfg, "max_audio_clip_s", ""))
        self.overlap_chunk_second = float(need(cfg, "overlap_chunk_second", ""))
        self.min_energy_window_samples = int(cfg.get("min_energy_window_samples", 1600))
        self.supported_languages = list(need(cfg, "supported_languages", ""))

        self.sample_rate = int(need(pre, "sample_rate", "preprocessor."))
        self.n_mels = int(need(pre, "features", "preprocessor."))
        self.n_fft = int(need(pre, "n_fft", "preprocessor."))
        self.win_length = int(round(float(need(pre, "window_size", "preprocessor.")) * self.sample_rate))
        self.hop = int(round(float(need(pre, "window_stride", "preprocessor.")) * self.sample_rate))
        self.dither = float(pre.get("dither", 0.0))
        self.pad_to = int(pre.get("pad_to", 0))
        if pre.get("normalize", "per_feature") != "per_feature":
            raise ValueError("config.json: only preprocessor.normalize = per_feature is supported")

        self.feat_in = int(need(enc, "feat_in", "encoder."))
        self.d_model = int(need(enc, "d_model", "encoder."))
        self.n_layers = int(need(enc, "n_layers", "encoder."))
        self.n_heads = int(need(enc, "n_heads", "encoder."))
        self.ff_inner = self.d_model * int(need(enc, "ff_expansion_factor", "encoder."))
        self.conv_kernel = int(need(enc, "conv_kernel_size", "encoder."))
        self.sub_channels = int(need(enc, "subsampling_conv_channels", "encoder."))
        if int(need(enc, "subsampling_factor", "encoder.")) != 8:
            raise ValueError("config.json: encoder.subsampling_factor must be 8 (three stride-2 stages)")
        self.pos_emb_max_len = int(need(enc, "pos_emb_max_len", "encoder."))
        if enc.get("xscaling", False):
            raise ValueError("config.json: encoder.xscaling = true is not supported")

        self.dec_hidden = int(need(dec, "hidden_size", "transf_decoder.config_dict."))
        self.dec_inner = int(need(dec, "inner_size", "transf_decoder.config_dict."))
        self.dec_layers = int(need(dec, "num_layers", "transf_decoder.config_dict."))
        self.dec_heads = int(need(dec, "num_attention_heads", "transf_decoder.config_dict."))
        self.max_seq = int(need(dec, "max_sequence_length", "transf_decoder.config_dict."))
        self.head_log_softmax = bool(need(head, "log_softmax", "head."))

        gen = gen or {}
        self.eos_id = int(gen.get("eos_token_id", 3))
        self.decoder_start_id = gen.get("decoder_start_token_id")


def load_config(model_dir, n_pieces=None):
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    gen = None
    gpath = os.path.join(model_dir, "generation_config.json")
    if os.path.exists(gpath):
        with open(gpath, encoding="utf-8") as f:
            gen = json.load(f)
    return Config(cfg, gen, n_pieces)


# ----------------------------------------------------------------------------------------------
# SentencePiece model proto (§1.4) and detokenization (§4.7)
# ----------------------------------------------------------------------------------------------

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def _varint(buf, pos):
    val = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        val |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return val, pos


def _fields(buf):
    """Yield (field number, wire type, value) of one protobuf message."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            val, pos = _varint(buf, pos)
        elif wire == 1:
            val, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            n, pos = _varint(buf, pos)
            val, pos = buf[pos:pos + n], pos + n
        elif wire == 5:
            val, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"tokenizer.model: unsupported protobuf wire type {wire}")
        yield field, wire, val


class Tokenizer:
    """Piece table read straight from the ModelProto (no sentencepiece needed)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            blob = f.read()
        self.pieces, self.types = [], []
        for field, wire, val in _fields(blob):
            if field != 1 or wire != 2:
                continue  # trainer / normalizer specs are not needed for decoding
            piece, ptype = "", NORMAL  # absent type = NORMAL
            for f2, w2, v2 in _fields(val):
                if f2 == 1 and w2 == 2:
                    piece = v2.decode("utf-8")
                elif f2 == 3 and w2 == 0:
                    ptype = v2
            self.pieces.append(piece)
            self.types.append(ptype)
        self.ids = {}
        for i, p in enumerate(self.pieces):
            self.ids.setdefault(p, i)

    def __len__(self):
        return len(self.pieces)

    def piece_id(self, piece):
        if piece not in self.ids:
            raise KeyError(f"tokenizer.model: no piece {piece!r}")
        return self.ids[piece]

    def prompt(self, language="da", punctuation=True, leading_space=True):
        """§4.4: 10 ids (leading '▁' from the dummy prefix) by default, 9 without it."""
        names = list(PROMPT_PIECES)
        names[3] = names[4] = f"<|{language}|>"
        names[5] = "<|pnc|>" if punctuation else "<|nopnc|>"
        ids = [self.piece_id(n) for n in names]
        return ([self.piece_id("\u2581")] if leading_space else []) + ids

    def decode_raw(self, ids):
        """SentencePiece decoding of the kept ids, before the final strip (like DecodeIds)."""
        out, run, first = [], bytearray(), True
        for i in ids:
            if not 0 <= i < len(self.pieces):
                raise ValueError(f"token id {i} outside the vocabulary")
            t = self.types[i]
            if t == BYTE:
                run.append(int(self.pieces[i][3:5], 16))  # "<0xAB>"
                first = False
            elif t == NORMAL:
                if run:
                    out.append(utf8_replace(bytes(run)))
                    run = bytearray()
                piece = self.pieces[i]
                if first and piece.startswith("\u2581"):
                    piece = piece[1:]  # add_dummy_prefix: the first word start has no space
                first = False
                out.append(piece)
            # UNKNOWN / CONTROL / USER_DEFINED / UNUSED: dropped (upstream skip_special_tokens)
        if run:
            out.append(utf8_replace(bytes(run)))
        return "".join(out).replace("\u2581", " ")

    def decode(self, ids):
        return self.decode_raw(ids).strip()


def utf8_replace(b):
    """Bytes -> str the SentencePiece way: each byte not part of a valid character is U+FFFD."""
    out, i, n = [], 0, len(b)
    while i < n:
        c = b[i]
        size, cp = 0, -1
        if c < 0x80:
            size, cp = 1, c
        elif (c & 0xE0) == 0xC0 and i + 1 < n and (b[i + 1] & 0xC0) == 0x80:
            size, cp = 2, ((c & 0x1F) << 6) | (b[i + 1] & 0x3F)
            cp = cp if cp >= 0x80 else -1
        elif (c & 0xF0) == 0xE0 and i + 2 < n and all((x & 0xC0) == 0x80 for x in b[i + 1:i + 3]):
            size, cp = 3, ((c & 0x0F) << 12) | ((b[i + 1] & 0x3F) << 6) | (b[i + 2] & 0x3F)
            cp = cp if cp >= 0x800 and not 0xD800 <= cp < 0xE000 else -1
        elif (c & 0xF8) == 0xF0 and i + 3 < n and all((x & 0xC0) == 0x80 for x in b[i + 1:i + 4]):
            size, cp = 4, (((c & 0x07) << 18) | ((b[i + 1] & 0x3F) << 12)
                           | ((b[i + 2] & 0x3F) << 6) | (b[i + 3] & 0x3F))
            cp = cp if 0x10000 <= cp <= 0x10FFFF else -1
        if cp < 0:
            out.append("\ufffd")
            i += 1
        else:
            out.append(chr(cp))
            i += size
    return "".join(out)


# ----------------------------------------------------------------------------------------------
# Weights
# ----------------------------------------------------------------------------------------------

def load_weights(model_dir, dtype=torch.float64):
    """model.safetensors -> {name: torch tensor in `dtype`} (I64 kept as int64) + file dtypes."""
    arrays, dtypes, _ = st_io.load(os.path.join(model_dir, "model.safetensors"), with_dtypes=True)
    w = {}
    for k, a in arrays.items():
        t = torch.from_numpy(np.ascontiguousarray(a))
        w[k] = t if dtypes[k] == "I64" else t.to(dtype)
    return w, dtypes


# ----------------------------------------------------------------------------------------------
# Frontend (§2)
# ----------------------------------------------------------------------------------------------

def hann_symmetric(n):
    k = np.arange(n, dtype=np.float64)
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * k / (n - 1))


def _hz_to_mel(f):
    f = np.asarray(f, dtype=np.float64)
    f_sp, min_log_hz, min_log_mel, logstep = 200.0 / 3, 1000.0, 15.0, math.log(6.4) / 27.0
    return np.where(f >= min_log_hz, min_log_mel + np.log(np.maximum(f, 1e-300) / min_log_hz) / logstep, f / f_sp)


def _mel_to_hz(m):
    m = np.asarray(m, dtype=np.float64)
    f_sp, min_log_hz, min_log_mel, logstep = 200.0 / 3, 1000.0, 15.0, math.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)


def slaney_mel(n_mels=128, n_fft=512, sr=16000, fmin=0.0, fmax=None):
    """librosa-style Slaney mel matrix [n_mels, n_fft//2+1] in float64 (§2 step 5)."""
    fmax = sr / 2.0 if fmax is None else fmax
    fft_f = np.linspace(0.0, sr / 2.0, n_fft // 2 + 1)
    mel_f = _mel_to_hz(np.linspace(_hz_to_mel(fmin), _hz_to_mel(fmax), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = mel_f[:, None] - fft_f[None, :]
    lower = -ramps[:-2] / fdiff[:-1, None]
    upper = ramps[2:] / fdiff[1:, None]
    fb = np.maximum(0.0, np.minimum(lower, upper))
    return fb * (2.0 / (mel_f[2:] - mel_f[:-2]))[:, None]


def conv_len(n):
    """Valid length after one 3x3 stride-2 pad-1 conv (0 stays 0)."""
    return 0 if n <= 0 else (n + 2 - 3) // 2 + 1


def frontend(wave, cfg, fb=None, window=None, dtype=torch.float64):
    """Waveform (float array, 16 kHz) -> (feat [n_mels, T_feat], T_valid). Dither is off."""
    x = torch.as_tensor(np.asarray(wave, dtype=np.float64)).to(dtype)
    L = x.shape[0]
    if L < cfg.hop:
        raise ValueError(f"audio has {L} samples; at least {cfg.hop} (one 10 ms frame) are needed")
    if cfg.dither != 0.0:
        print("cohere_ref: dither is ignored (reference runs with dither 0)", file=sys.stderr)
    y = torch.cat([x[:1], x[1:] - PREEMPH * x[:-1]])
    win = torch.as_tensor(hann_symmetric(cfg.win_length) if window is None else window).to(dtype).reshape(-1)
    # torch.stft centers the 400-sample window inside the 512 frame (56 zeros either side).
    spec = torch.stft(y, n_fft=cfg.n_fft, hop_length=cfg.hop, win_length=cfg.win_length, window=win,
                      center=True, pad_mode="constant", return_complex=True)
    power = spec.real ** 2 + spec.imag ** 2                      # [257, T_stft]
    mel = torch.as_tensor(slaney_mel(cfg.n_mels, cfg.n_fft, cfg.sample_rate) if fb is None else fb)
    mel = mel.to(dtype).reshape(cfg.n_mels, cfg.n_fft // 2 + 1)
    logm = torch.log(mel @ power + LOG_GUARD)                    # [128, T_stft]
    t_stft = logm.shape[1]
    assert t_stft == 1 + L // cfg.hop
    t_valid = L // cfg.hop                                       # last STFT frame counts as padding
    v = logm[:, :t_valid]
    mean = v.mean(dim=1, keepdim=True)
    if t_valid > 1:
        std = torch.sqrt(((v - mean) ** 2).sum(dim=1, keepdim=True) / (t_valid - 1)) + 1e-5
    else:
        std = torch.full_like(mean, 1e-5)
    feat = torch.zeros_like(logm)
    feat[:, :t_valid] = (v - mean) / std
    if cfg.pad_to > 0 and t_stft % cfg.pad_to:
        feat = F.pad(feat, (0, cfg.pad_to - t_stft % cfg.pad_to))
    return feat, t_valid


# ----------------------------------------------------------------------------------------------
# Encoder (§3)
# ----------------------------------------------------------------------------------------------

def _mask_time(x, n):
    """Zero every time step >= n of x [B, C, T, F]."""
    keep = (torch.arange(x.shape[2]) < n).to(x.dtype)
    return x * keep[None, None, :, None]


def subsampling(feat, t_valid, w, cfg):
    """§3.1: feat [n_mels, T_feat] -> (X0 [T3, d_model], T3_valid)."""
    p = "encoder.pre_encode."
    c = cfg.sub_channels
    x = feat.t()[None, None]                                     # [1, 1, T, F]: time is height
    n0 = t_valid
    x = _mask_time(x, n0)
    x = F.conv2d(x, w[p + "conv.0.weight"], w[p + "conv.0.bias"], stride=2, padding=1)
    n1 = conv_len(n0)
    x = _mask_time(F.relu(x), n1)
    x = F.conv2d(x, w[p + "conv.2.weight"], w[p + "conv.2.bias"], stride=2, padding=1, groups=c)
    n2 = conv_len(n1)
    x = _mask_time(x, n2)
    x = F.conv2d(x, w[p + "conv.3.weight"], w[p + "conv.3.bias"])
    x = _mask_time(F.relu(x), n2)
    x = F.conv2d(x, w[p + "conv.5.weight"], w[p + "conv.5.bias"], stride=2, padding=1, groups=c)
    n3 = conv_len(n2)
    x = _mask_time(x, n3)
    x = F.conv2d(x, w[p + "conv.6.weight"], w[p + "conv.6.bias"])
    x = _mask_time(F.relu(x), n3)
    _, ch, t3, f3 = x.shape
    x = x[0].transpose(0, 1).reshape(t3, ch * f3)               # feature index = c*F3 + f
    return F.linear(x, w[p + "out.weight"], w[p + "out.bias"]), n3


def rel_pos_table(t, d, dtype):
    """§3.2: R [2T-1, d], row k is the relative distance r = (T-1) - k."""
    r = torch.arange(t - 1, -t, -1, dtype=torch.float64)[:, None]
    omega = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * -(math.log(10000.0) / d))
    pe = torch.zeros(2 * t - 1, d, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(r * omega)
    pe[:, 1::2] = torch.cos(r * omega)
    return pe.to(dtype)


def rel_shift(x):
    """The usual pad-reshape trick: x [H, T, 2T-1] -> [H, T, 2T-1] aligned so column j is i-j."""
    h, t, p = x.shape
    x = F.pad(x, (1, 0)).view(h, p + 1, t)[:, 1:].reshape(h, t, p)
    return x


def rel_attention(x, pe, w, p, n_heads, n_valid, use_rel_shift=False):
    """§3.3 MHSA_rel on x [T, d]; pe = rel_pos_table(T). Padded query rows give linear_out.bias."""
    t, d = x.shape
    dk = d // n_heads

    def heads(z):
        return z.view(-1, n_heads, dk).transpose(0, 1)          # [H, T, dk]

    q = heads(F.linear(x, w[p + "linear_q.weight"], w[p + "linear_q.bias"]))
    k = heads(F.linear(x, w[p + "linear_k.weight"], w[p + "linear_k.bias"]))
    v = heads(F.linear(x, w[p + "linear_v.weight"], w[p + "linear_v.bias"]))
    pp = heads(F.linear(pe, w[p + "linear_pos.weight"]))       # [H, 2T-1, dk]
    u, vb = w[p + "pos_bias_u"][:, None, :], w[p + "pos_bias_v"][:, None, :]
    ac = (q + u) @ k.transpose(1, 2)                             # content term [H, T, T]
    bd_full = (q + vb) @ pp.transpose(1, 2)                      # position term [H, T, 2T-1]
    if use_rel_shift:
        bd = rel_shift(bd_full)[:, :, :t]
    else:
        i = torch.arange(t)[:, None]
        j = torch.arange(t)[None, :]
        idx = (t - 1) - (i - j)                                  # row of R for distance i - j
        bd = torch.gather(bd_full, 2, idx.expand(n_heads, t, t))
    scores = (ac + bd) / math.sqrt(dk)
    valid = torch.arange(t) < n_valid
    masked = ~(valid[:, None] & valid[None, :])
    scores = scores.masked_fill(masked, ENC_MASK)
    attn = torch.softmax(scores, dim=-1).masked_fill(masked, 0.0)
    ctx = (attn @ v).transpose(0, 1).reshape(t, d)
    return F.linear(ctx, w[p + "linear_out.weight"], w[p + "linear_out.bias"])


def _ln(x, w, p):
    return F.layer_norm(x, x.shape[-1:], w[p + ".weight"], w[p + ".bias"], LN_EPS)


def _ffn(x, w, p):
    return F.linear(F.silu(F.linear(x, w[p + ".linear1.weight"], w[p + ".linear1.bias"])),
                    w[p + ".linear2.weight"], w[p + ".linear2.bias"])


def conv_module(z, w, p, n_valid, kernel):
    """§3.3 ConvModule on z [T, d]."""
    t, d = z.shape
    a = F.linear(z, w[p + "pointwise_conv1.weight"][:, :, 0], w[p + "pointwise_conv1.bias"])
    g = a[:, :d] * torch.sigmoid(a[:, d:])                       # GLU: value first, gate second
    g = g * (torch.arange(t) < n_valid).to(g.dtype)[:, None]
    y = F.conv1d(g.t()[None], w[p + "depthwise_conv.weight"], w[p + "depthwise_conv.bias"],
                 padding=(kernel - 1) // 2, groups=d)[0].t()
    bn = p + "batch_norm."
    y = (y - w[bn + "running_mean"]) / torch.sqrt(w[bn + "running_var"] + BN_EPS) * w[bn + "weight"] + w[bn + "bias"]
    y = F.silu(y)
    return F.linear(y, w[p + "pointwise_conv2.weight"][:, :, 0], w[p + "pointwise_conv2.bias"])


def conformer_layer(x, pe, w, i, cfg, n_valid, use_rel_shift=False):
    p = f"encoder.layers.{i}."
    x = x + 0.5 * _ffn(_ln(x, w, p + "norm_feed_forward1"), w, p + "feed_forward1")
    x = x + rel_attention(_ln(x, w, p + "norm_self_att"), pe, w, p + "self_attn.", cfg.n_heads, n_valid,
                          use_rel_shift)
    x = x + conv_module(_ln(x, w, p + "norm_conv"), w, p + "conv.", n_valid, cfg.conv_kernel)
    x = x + 0.5 * _ffn(_ln(x, w, p + "norm_feed_forward2"), w, p + "feed_forward2")
    return _ln(x, w, p + "norm_out")


def encode(feat, t_valid, w, cfg, use_rel_shift=False, keep=None):
    """feat -> (enc_proj [T3, D], T3_valid). `keep` (a dict) collects the stage outputs."""
    x, n3 = subsampling(feat, t_valid, w, cfg)
    if keep is not None:
        keep["subsampling"] = x
    t3 = x.shape[0]
    if t3 > cfg.pos_emb_max_len:
        raise ValueError(f"{t3} encoder frames exceed pos_emb_max_len {cfg.pos_emb_max_len}")
    pe = rel_pos_table(t3, cfg.d_model, x.dtype)
    for i in range(cfg.n_layers):
        x = conformer_layer(x, pe, w, i, cfg, n3, use_rel_shift)
        if keep is not None:
            keep[f"layer_{i}"] = x
    if "encoder_decoder_proj.weight" not in w:
        raise ValueError("model.safetensors: tensor 'encoder_decoder_proj.weight' is missing")
    enc = F.linear(x, w["encoder_decoder_proj.weight"], w["encoder_decoder_proj.bias"])
    if keep is not None:
        keep["encoder_proj"] = enc
    return enc, n3


# ----------------------------------------------------------------------------------------------
# Decoder (§4.1-4.3)
# ----------------------------------------------------------------------------------------------

class Decoder:
    """Runs the whole prefix every call (no KV cache: simple and hard to get wrong)."""

    def __init__(self, w, cfg, enc, n_valid):
        self.w, self.cfg = w, cfg
        self.h = cfg.dec_heads
        self.dk = cfg.dec_hidden // cfg.dec_heads
        # Upstream clamps the encoder length for the cross mask to >= 1.
        n_valid = max(1, n_valid)
        t = enc.shape[0]
        self.cross_bias = torch.where(torch.arange(t) < n_valid, 0.0, ENC_MASK).to(enc.dtype)
        self.cross_kv = []                                       # computed once per utterance
        for j in range(cfg.dec_layers):
            p = f"transf_decoder._decoder.layers.{j}.second_sub_layer."
            k = F.linear(enc, w[p + "key_net.weight"], w[p + "key_net.bias"])
            v = F.linear(enc, w[p + "value_net.weight"], w[p + "value_net.bias"])
            self.cross_kv.append((self._heads(k), self._heads(v)))

    def _heads(self, z):
        return z.view(-1, self.h, self.dk).transpose(0, 1)

    def _attend(self, q, k, v, bias, p):
        scores = (q @ k.transpose(1, 2)) / math.sqrt(self.dk) + bias
        ctx = (torch.softmax(scores, dim=-1) @ v).transpose(0, 1).reshape(q.shape[1], -1)
        return F.linear(ctx, self.w[p + "out_projection.weight"], self.w[p + "out_projection.bias"])

    def head_output(self, ids):
        """Head output (log-probs when head.log_softmax) for the position after `ids` -> [V]."""
        w, cfg = self.w, self.cfg
        n = len(ids)
        if n > cfg.max_seq:
            raise ValueError(f"decoder prefix of {n} tokens exceeds max_sequence_length {cfg.max_seq}")
        e = "transf_decoder._embedding."
        ids_t = torch.tensor(ids, dtype=torch.long)
        h = w[e + "token_embedding.weight"][ids_t] + w[e + "position_embedding.pos_enc"][:n]
        h = _ln(h, w, e + "layer_norm")
        causal = torch.triu(torch.full((n, n), float("-inf"), dtype=h.dtype), diagonal=1)
        for j in range(cfg.dec_layers):
            p = f"transf_decoder._decoder.layers.{j}."
            z = _ln(h, w, p + "layer_norm_1")
            s = p + "first_sub_layer."
            q = self._heads(F.linear(z, w[s + "query_net.weight"], w[s + "query_net.bias"]))
            k = self._heads(F.linear(z, w[s + "key_net.weight"], w[s + "key_net.bias"]))
            v = self._heads(F.linear(z, w[s + "value_net.weight"], w[s + "value_net.bias"]))
            h = h + self._attend(q, k, v, causal, s)
            z = _ln(h, w, p + "layer_norm_2")
            s = p + "second_sub_layer."
            q = self._heads(F.linear(z, w[s + "query_net.weight"], w[s + "query_net.bias"]))
            k, v = self.cross_kv[j]
            h = h + self._attend(q, k, v, self.cross_bias, s)
            z = _ln(h, w, p + "layer_norm_3")
            s = p + "third_sub_layer."
            h = h + F.linear(F.relu(F.linear(z, w[s + "dense_in.weight"], w[s + "dense_in.bias"])),
                             w[s + "dense_out.weight"], w[s + "dense_out.bias"])
        out = _ln(h[-1], w, "transf_decoder._decoder.final_layer_norm")
        logits = F.linear(out, w["log_softmax.mlp.layer0.weight"], w["log_softmax.mlp.layer0.bias"])
        return torch.log_softmax(logits, dim=-1) if cfg.head_log_softmax else logits

    def logprobs(self, ids):
        out = self.head_output(ids)
        return out if self.cfg.head_log_softmax else torch.log_softmax(out, dim=-1)


# ----------------------------------------------------------------------------------------------
# Decoding (§4.5)
# ----------------------------------------------------------------------------------------------

def ranked(values, k):
    """Indices of the k best values; ties -> lower id (as audio.cpp's better_log_prob)."""
    v = np.asarray(values, dtype=np.float64)
    order = np.lexsort((np.arange(v.shape[0]), -v))
    return order[:k]


def greedy(dec, prompt, max_new_tokens, eos):
    """Returns (ids, per-step top-1 margins logp1 - logp2, per-step chosen logp)."""
    ids, margins, chosen = [], [], []
    for _ in range(max_new_tokens):
        lp = dec.logprobs(list(prompt) + ids).numpy()
        top = ranked(lp, 2)
        margins.append(float(lp[top[0]] - lp[top[1]]))
        chosen.append(float(lp[top[0]]))
        tok = int(top[0])
        if tok == eos:
            break
        ids.append(tok)
    return ids, margins, chosen


def _norm_score(score, length, alpha):
    return score / (max(1, length) ** alpha)


def beam_search(dec, prompt, max_new_tokens, eos, beams, alpha=1.0):
    """§4.5 item 4. Returns a dict with ids, raw/normalized score and `min_gap`: the smallest
    score difference behind any decision that shapes the result (which candidates become
    active, whether an EOS ranks < B, pruning of finished hypotheses, the early stop and the
    final pick) -- a test can skip the comparison when that gap is tiny."""
    if beams < 1 or alpha <= 0:
        raise ValueError("beam search needs beams >= 1 and length_penalty > 0")
    active = [([], 0.0)]                                         # (tokens, raw score)
    finished = []                                                # (tokens, raw score, length)
    gaps = []

    def by_norm(f):
        return (-_norm_score(f[1], f[2], alpha), -f[1])

    for step in range(max_new_tokens):
        if not active:
            break
        cands = []                                               # (score, token, parent)
        for b, (toks, score) in enumerate(active):
            lp = dec.logprobs(list(prompt) + toks).numpy()
            for tok in ranked(lp, 2 * beams):
                cands.append((score + float(lp[tok]), int(tok), b))
        cands.sort(key=lambda c: (-c[0], c[1], c[2]))            # ties -> lower token, then parent
        last = step + 1 >= max_new_tokens
        nxt, non_eos = [], []
        for rank, (score, tok, b) in enumerate(cands):
            ptoks = active[b][0]
            length = len(ptoks) + 1                              # EOS counts in the length
            if tok == eos:
                if rank < beams:
                    finished.append((list(ptoks), score, length))
                if len(cands) > beams:                           # rank < B boundary decided it
                    gaps.append(abs(score - cands[beams - 1 if rank >= beams else beams][0]))
                continue
            non_eos.append(score)
            if last:
                finished.append((ptoks + [tok], score, length))
                continue
            if len(nxt) < beams:
                nxt.append((ptoks + [tok], score))
        if not last and len(non_eos) > beams:                    # last active vs first left out
            gaps.append(non_eos[beams - 1] - non_eos[beams])
        active = nxt
        if len(finished) > beams:
            finished.sort(key=by_norm)
            gaps.append(_norm_score(finished[beams - 1][1], finished[beams - 1][2], alpha)
                        - _norm_score(finished[beams][1], finished[beams][2], alpha))
            finished = finished[:beams]
        if len(finished) >= beams and active:
            worst = min(_norm_score(f[1], f[2], alpha) for f in finished)
            best_active = max(s for _, s in active)
            longest = max(1, max(len(t) for t, _ in active))
            attainable = _norm_score(best_active, longest, alpha)
            gaps.append(abs(worst - attainable))
            if worst >= attainable:
                active = []
                break
    if not finished:
        finished = [(t, s, len(t)) for t, s in active]
    finished.sort(key=by_norm)
    if len(finished) > 1:
        gaps.append(_norm_score(finished[0][1], finished[0][2], alpha)
                    - _norm_score(finished[1][1], finished[1][2], alpha))
    toks, score, length = finished[0]
    return {"ids": toks, "score": score, "length": length,
            "normalized_score": _norm_score(score, length, alpha),
            "min_gap": min(gaps) if gaps else math.inf, "n_finished": len(finished)}


def sampling_distribution(head_out, temperature=1.0, top_k=50, top_p=1.0):
    """§4.5 item 3: the probability of each of the V tokens being sampled (zeros where cut)."""
    if not temperature > 0 or not 0 < top_p <= 1 or top_k < 0:
        raise ValueError("sampling needs temperature > 0, 0 < top_p <= 1, top_k >= 0")
    x = np.asarray(head_out, dtype=np.float64)
    v = x.shape[0]
    keep = ranked(x, top_k if top_k > 0 else v)                  # sorted: best first
    z = x[keep] / temperature
    p = np.exp(z - z.max())
    p /= p.sum()
    if top_p < 1.0:
        cum = np.cumsum(p)
        n = int(np.searchsorted(cum >= top_p, True)) + 1 if (cum >= top_p).any() else len(p)
        n = max(1, min(n, len(p)))
        keep, p = keep[:n], p[:n] / p[:n].sum()
    full = np.zeros(v, dtype=np.float64)
    full[keep] = p
    return full


def max_new_tokens_for(cfg, prompt_len, requested=None):
    """Default 256, limited so prompt + new tokens fit max_sequence_length (§4.5)."""
    limit = cfg.max_seq - prompt_len
    if requested is None:
        return min(256, limit)
    if requested < 1 or requested > limit:
        raise ValueError(f"max_new_tokens {requested} must be in [1, {limit}] (prompt {prompt_len}, "
                         f"max_sequence_length {cfg.max_seq})")
    return requested


# ----------------------------------------------------------------------------------------------
# Long audio (§5)
# ----------------------------------------------------------------------------------------------

def _round_half_up(x):
    return int(math.floor(x + 0.5))


def split_audio(x, cfg):
    """[start, end) sample spans; a single span when the clip is short enough."""
    x = np.asarray(x, dtype=np.float64)
    total, sr = x.shape[0], cfg.sample_rate
    if total / sr <= cfg.max_audio_clip_s - cfg.overlap_chunk_second:
        return [(0, total)]
    chunk = max(1, _round_half_up(cfg.max_audio_clip_s * sr))
    context = max(1, _round_half_up(cfg.overlap_chunk_second * sr))
    win = cfg.min_energy_window_samples
    spans, idx = [], 0
    while idx < total:
        if idx + chunk >= total:
            spans.append((idx, total))
            break
        s, e = max(idx, idx + chunk - context), min(idx + chunk, total)
        if e - s <= win:
            split = (s + e) // 2
        else:
            best, split = math.inf, s
            for o in range(0, e - s - win, win):
                energy = math.sqrt(float(np.mean(x[s + o:s + o + win] ** 2)))
                if energy < best:                                # strict: the first minimum wins
                    best, split = energy, s + o
        split = max(idx + 1, min(split, total))
        spans.append((idx, split))
        idx = split
    return spans


def join_texts(texts, language):
    parts = [t.strip() for t in texts if t and t.strip()]
    return ("" if language in ("ja", "zh") else " ").join(parts)


# ----------------------------------------------------------------------------------------------
# WAV input
# ----------------------------------------------------------------------------------------------

def read_wav(path, expect_rate=16000):
    """16-bit PCM or 32-bit float WAV -> mono float64 array (channels averaged)."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 12 or blob[:4] != b"RIFF" or blob[8:12] != b"WAVE":
        raise ValueError(f"{path}: not a RIFF/WAVE file")
    fmt = data = None
    pos = 12
    while pos + 8 <= len(blob):
        cid, size = blob[pos:pos + 4], struct.unpack("<I", blob[pos + 4:pos + 8])[0]
        if cid == b"fmt ":
            fmt = blob[pos + 8:pos + 8 + size]
        elif cid == b"data":
            data = blob[pos + 8:pos + 8 + size]
        pos += 8 + size + (size & 1)
    if fmt is None or data is None or len(fmt) < 16:
        raise ValueError(f"{path}: missing 'fmt ' or 'data' chunk")
    tag, ch, rate, _, _, bits = struct.unpack("<HHIIHH", fmt[:16])
    if tag == 0xFFFE and len(fmt) >= 26:
        tag = struct.unpack("<H", fmt[24:26])[0]             # WAVE_FORMAT_EXTENSIBLE subformat
    if rate != expect_rate:
        raise ValueError(f"{path}: sample rate {rate} Hz, expected {expect_rate} Hz (resample first)")
    if tag == 1 and bits == 16:
        x = np.frombuffer(data[:len(data) // 2 * 2], dtype="<i2").astype(np.float64) / 32768.0
    elif tag == 3 and bits == 32:
        x = np.frombuffer(data[:len(data) // 4 * 4], dtype="<f4").astype(np.float64)
    else:
        raise ValueError(f"{path}: format tag {tag} with {bits} bits; need 16-bit PCM or 32-bit float")
    x = x[:len(x) // ch * ch].reshape(-1, ch)
    return x.mean(axis=1) if ch > 1 else x[:, 0]


# ----------------------------------------------------------------------------------------------
# Model bundle
# ----------------------------------------------------------------------------------------------

class Model:
    """config + tokenizer + weights of one package folder."""

    def __init__(self, model_dir, dtype=torch.float64):
        self.tok = Tokenizer(os.path.join(model_dir, "tokenizer.model"))
        self.cfg = load_config(model_dir, len(self.tok))
        self.w, self.file_dtypes = load_weights(model_dir, dtype)
        self.dtype = dtype
        emb = self.w["transf_decoder._embedding.token_embedding.weight"]
        if emb.shape[0] != self.cfg.vocab_size:
            raise ValueError(f"token_embedding has {emb.shape[0]} rows, config vocab_size {self.cfg.vocab_size}")
        self.fb = self.w.get("preprocessor.featurizer.fb")
        self.window = self.w.get("preprocessor.featurizer.window")

    def features(self, wave):
        return frontend(wave, self.cfg, self.fb, self.window, self.dtype)

    def encode(self, wave, keep=None, use_rel_shift=False):
        feat, t_valid = self.features(wave)
        if keep is not None:
            keep["features"] = feat
        enc, n3 = encode(feat, t_valid, self.w, self.cfg, use_rel_shift, keep)
        return enc, t_valid, n3

    def decoder(self, enc, n3):
        return Decoder(self.w, self.cfg, enc, n3)
