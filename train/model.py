#!/usr/bin/python3
"""Trainable, batched PyTorch cohere_asr (spec §2-§4) whose state_dict uses the upstream names.

`CohereAsr(dims).state_dict()` minus the training-only tensors (`aux_ctc.*`, see
EXPORT_SKIP) is exactly the tensor set of the real model.safetensors (§1.5), so export is a
dump. Batching: waveforms are zero-padded, every stage masks by the per-utterance valid
length exactly where the spec does, so a padded row computes what it would alone.
Training extras (not exported): dropout, SpecAugment, an auxiliary CTC head on the encoder,
masked BatchNorm statistics (padding must not leak into running_mean/var).
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ref", "hviske_asr"))
from cohere_ref import hann_symmetric, slaney_mel  # noqa: E402  (read-only reuse)

N_MELS, N_FFT, WIN, HOP, PREEMPH, LOG_GUARD = 128, 512, 400, 160, 0.97, 2.0 ** -24
EXPORT_SKIP = ("aux_ctc.",)

# The shipped size (4.86 M exported parameters: about 10 MB in F16). See train/README.md.
DEFAULT_DIMS = dict(d_model=144, n_layers=6, n_heads=4, ff_mult=4, conv_kernel=9, sub_channels=64,
                    dec_hidden=192, dec_layers=2, dec_heads=4, dec_inner=768, dec_max_len=192,
                    vocab=1024, dropout=0.0)


def conv_len(n):
    """Valid length after one 3x3 stride-2 pad-1 conv, elementwise on a LongTensor."""
    return torch.where(n > 0, (n - 1) // 2 + 1, torch.zeros_like(n))


def decoder_pos_enc(n, d):
    pos = np.arange(n, dtype=np.float64)[:, None]
    omega = np.exp(-math.log(10000.0) * np.arange(0, d, 2, dtype=np.float64) / d)
    pe = np.zeros((n, d))
    pe[:, 0::2] = np.sin(pos * omega)
    pe[:, 1::2] = np.cos(pos * omega)
    return torch.tensor(pe / math.sqrt(d), dtype=torch.float32)


class Featurizer(nn.Module):
    """§2 front end, batched, dither 0. Buffers fb/window are exported (the engine uses them)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("fb", torch.tensor(slaney_mel(N_MELS, N_FFT, 16000), dtype=torch.float32)[None])
        self.register_buffer("window", torch.tensor(hann_symmetric(WIN), dtype=torch.float32))

    @torch.no_grad()
    def forward(self, wav, lengths):
        """wav [B, L] float, lengths [B] -> feat [B, T, 128] (time-major), t_valid [B]."""
        B, L = wav.shape
        keep = (torch.arange(L)[None] < lengths[:, None]).float()
        y = torch.cat([wav[:, :1], wav[:, 1:] - PREEMPH * wav[:, :-1]], 1) * keep
        spec = torch.stft(y, n_fft=N_FFT, hop_length=HOP, win_length=WIN, window=self.window,
                          center=True, pad_mode="constant", return_complex=True)
        power = spec.real ** 2 + spec.imag ** 2                         # [B, 257, T]
        logm = torch.log(torch.matmul(self.fb[0], power) + LOG_GUARD)    # [B, 128, T]
        t_valid = lengths // HOP
        m = (torch.arange(logm.shape[2])[None] < t_valid[:, None]).float()[:, None]  # [B,1,T]
        n = t_valid.clamp(min=1).float()[:, None, None]
        mean = (logm * m).sum(2, keepdim=True) / n
        var = (((logm - mean) * m) ** 2).sum(2, keepdim=True) / (n - 1).clamp(min=1)
        std = torch.where(n > 1, var.sqrt(), torch.zeros_like(var)) + 1e-5
        feat = (logm - mean) / std * m
        return feat.transpose(1, 2).contiguous(), t_valid


def spec_augment(feat, t_valid, n_freq=2, f_width=20, n_time=2, t_frac=0.05):
    """Zero random mel bands and time spans (in place on a copy); training only."""
    feat = feat.clone()
    B, T, Fm = feat.shape
    for b in range(B):
        for _ in range(n_freq):
            w = int(torch.randint(0, f_width + 1, ()))
            f0 = int(torch.randint(0, Fm - w + 1, ()))
            feat[b, :, f0:f0 + w] = 0
        tv = int(t_valid[b])
        for _ in range(n_time):
            w = int(torch.randint(0, max(1, int(tv * t_frac)) + 1, ()))
            t0 = int(torch.randint(0, max(1, tv - w + 1), ()))
            feat[b, t0:t0 + w] = 0
    return feat


class PreEncode(nn.Module):
    """§3.1 dw_striding subsampling; conv indices 0,2,3,5,6 as upstream (1,4,7 are ReLUs)."""

    def __init__(self, c, e):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, c, 3, 2, 1), nn.ReLU(), nn.Conv2d(c, c, 3, 2, 1, groups=c),
                                  nn.Conv2d(c, c, 1), nn.ReLU(), nn.Conv2d(c, c, 3, 2, 1, groups=c),
                                  nn.Conv2d(c, c, 1), nn.ReLU())
        self.out = nn.Linear(c * (N_MELS // 8), e)

    @staticmethod
    def _mask(x, n):
        return x * (torch.arange(x.shape[2])[None] < n[:, None]).to(x.dtype)[:, None, :, None]

    def forward(self, feat, t_valid):
        c = self.conv
        x = self._mask(feat[:, None], t_valid)
        n1 = conv_len(t_valid)
        x = self._mask(F.relu(c[0](x)), n1)
        n2 = conv_len(n1)
        x = self._mask(F.relu(c[3](self._mask(c[2](x), n2))), n2)
        n3 = conv_len(n2)
        x = self._mask(F.relu(c[6](self._mask(c[5](x), n3))), n3)
        B, C, T, Fq = x.shape
        return self.out(x.permute(0, 2, 1, 3).reshape(B, T, C * Fq)), n3


class FeedForward(nn.Module):
    def __init__(self, d, inner, p):
        super().__init__()
        self.linear1, self.linear2, self.p = nn.Linear(d, inner), nn.Linear(inner, d), p

    def forward(self, x):
        return self.linear2(F.dropout(F.silu(self.linear1(x)), self.p, self.training))


class RelAttention(nn.Module):
    """§3.3 MHSA with relative positions (direct i-j indexing)."""

    def __init__(self, d, h, p):
        super().__init__()
        self.h, self.dk, self.p = h, d // h, p
        self.linear_q, self.linear_k, self.linear_v, self.linear_out = (nn.Linear(d, d) for _ in range(4))
        self.linear_pos = nn.Linear(d, d, bias=False)
        self.pos_bias_u = nn.Parameter(torch.zeros(h, d // h))
        self.pos_bias_v = nn.Parameter(torch.zeros(h, d // h))

    def forward(self, x, pe, valid):
        """x [B,T,d], pe [2T-1,d] (row k = distance T-1-k), valid [B,T] bool."""
        B, T, d = x.shape
        heads = lambda z: z.view(B, -1, self.h, self.dk).transpose(1, 2)  # noqa: E731
        q = self.linear_q(x).view(B, T, self.h, self.dk)
        k, v = heads(self.linear_k(x)), heads(self.linear_v(x))
        pp = self.linear_pos(pe).view(-1, self.h, self.dk).permute(1, 2, 0)     # [h, dk, 2T-1]
        ac = torch.matmul((q + self.pos_bias_u).transpose(1, 2), k.transpose(2, 3))
        bd = torch.matmul((q + self.pos_bias_v).transpose(1, 2), pp)           # [B,h,T,2T-1]
        idx = (T - 1 - torch.arange(T)[:, None] + torch.arange(T)[None])       # k = T-1-(i-j)
        bd = torch.gather(bd, 3, idx.expand(B, self.h, T, T))
        scores = (ac + bd) / math.sqrt(self.dk)
        pair = valid[:, None, :, None] & valid[:, None, None, :]
        scores = scores.masked_fill(~pair, -1e9)
        attn = torch.softmax(scores, -1) * pair                                 # padded queries -> 0
        attn = F.dropout(attn, self.p, self.training)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(B, T, d)
        return self.linear_out(out)


class MaskedBatchNorm1d(nn.BatchNorm1d):
    """BatchNorm whose training statistics use valid frames only (same names/buffers)."""

    def forward(self, x, valid):  # x [B, C, T], valid [B, T]
        if not self.training:
            return super().forward(x)
        m = valid[:, None].to(x.dtype)
        n = m.sum()
        mean = (x * m).sum((0, 2)) / n
        var = (((x - mean[None, :, None]) * m) ** 2).sum((0, 2)) / n
        with torch.no_grad():
            self.num_batches_tracked += 1
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)
            self.running_var.mul_(1 - self.momentum).add_(self.momentum * var * n / (n - 1))
        y = (x - mean[None, :, None]) / torch.sqrt(var[None, :, None] + self.eps)
        return y * self.weight[None, :, None] + self.bias[None, :, None]


class ConvModule(nn.Module):
    def __init__(self, d, k):
        super().__init__()
        self.pointwise_conv1 = nn.Conv1d(d, 2 * d, 1)
        self.depthwise_conv = nn.Conv1d(d, d, k, padding=k // 2, groups=d)
        self.batch_norm = MaskedBatchNorm1d(d, eps=1e-5)
        self.pointwise_conv2 = nn.Conv1d(d, d, 1)

    def forward(self, z, valid):
        a = F.glu(self.pointwise_conv1(z.transpose(1, 2)), dim=1)     # value * sigmoid(gate)
        a = a * valid[:, None].to(a.dtype)
        a = F.silu(self.batch_norm(self.depthwise_conv(a), valid))
        return self.pointwise_conv2(a).transpose(1, 2)


class ConformerLayer(nn.Module):
    def __init__(self, d, h, ff, k, p):
        super().__init__()
        self.norm_feed_forward1, self.feed_forward1 = nn.LayerNorm(d), FeedForward(d, ff, p)
        self.norm_self_att, self.self_attn = nn.LayerNorm(d), RelAttention(d, h, p)
        self.norm_conv, self.conv = nn.LayerNorm(d), ConvModule(d, k)
        self.norm_feed_forward2, self.feed_forward2 = nn.LayerNorm(d), FeedForward(d, ff, p)
        self.norm_out, self.p = nn.LayerNorm(d), p

    def forward(self, x, pe, valid):
        drop = lambda z: F.dropout(z, self.p, self.training)  # noqa: E731
        x = x + 0.5 * drop(self.feed_forward1(self.norm_feed_forward1(x)))
        x = x + drop(self.self_attn(self.norm_self_att(x), pe, valid))
        x = x + drop(self.conv(self.norm_conv(x), valid))
        x = x + 0.5 * drop(self.feed_forward2(self.norm_feed_forward2(x)))
        return self.norm_out(x)


def rel_pos_table(t, d):
    r = torch.arange(t - 1, -t, -1, dtype=torch.float64)[:, None]
    omega = torch.pow(10000.0, -torch.arange(0, d, 2, dtype=torch.float64) / d)
    pe = torch.zeros(2 * t - 1, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(r * omega), torch.cos(r * omega)
    return pe.float()


class Encoder(nn.Module):
    def __init__(s, dm):
        super().__init__()
        e = dm["d_model"]
        s.pre_encode = PreEncode(dm["sub_channels"], e)
        s.layers = nn.ModuleList(ConformerLayer(e, dm["n_heads"], e * dm["ff_mult"], dm["conv_kernel"],
                                                dm["dropout"]) for _ in range(dm["n_layers"]))

    def forward(self, feat, t_valid):
        x, n3 = self.pre_encode(feat, t_valid)
        valid = torch.arange(x.shape[1])[None] < n3[:, None]
        pe = rel_pos_table(x.shape[1], x.shape[2])
        for layer in self.layers:
            x = layer(x, pe, valid)
        return x, n3


class DecAttention(nn.Module):
    def __init__(self, d, h, p):
        super().__init__()
        self.h, self.p = h, p
        self.query_net, self.key_net, self.value_net, self.out_projection = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x, mem, bias, keep=None):
        B, T, d = x.shape
        heads = lambda z: z.view(B, -1, self.h, d // self.h).transpose(1, 2)  # noqa: E731
        q, k, v = heads(self.query_net(x)), heads(self.key_net(mem)), heads(self.value_net(mem))
        a = torch.softmax(torch.matmul(q, k.transpose(2, 3)) / math.sqrt(d // self.h) + bias, -1)
        if keep is not None:
            keep.append(a)                                                  # [B, H, T, Tm]
        a = F.dropout(a, self.p, self.training)
        return self.out_projection(torch.matmul(a, v).transpose(1, 2).reshape(B, T, d))


class DecFFN(nn.Module):
    def __init__(self, d, inner, p):
        super().__init__()
        self.dense_in, self.dense_out, self.p = nn.Linear(d, inner), nn.Linear(inner, d), p

    def forward(self, x):
        return self.dense_out(F.dropout(F.relu(self.dense_in(x)), self.p, self.training))


class DecoderLayer(nn.Module):
    def __init__(self, d, h, inner, p):
        super().__init__()
        self.layer_norm_1, self.first_sub_layer = nn.LayerNorm(d), DecAttention(d, h, p)
        self.layer_norm_2, self.second_sub_layer = nn.LayerNorm(d), DecAttention(d, h, p)
        self.layer_norm_3, self.third_sub_layer = nn.LayerNorm(d), DecFFN(d, inner, p)
        self.p = p

    def forward(self, h, mem, self_bias, cross_bias, keep=None):
        drop = lambda z: F.dropout(z, self.p, self.training)  # noqa: E731
        z = self.layer_norm_1(h)
        h = h + drop(self.first_sub_layer(z, z, self_bias))
        h = h + drop(self.second_sub_layer(self.layer_norm_2(h), mem, cross_bias, keep))
        return h + drop(self.third_sub_layer(self.layer_norm_3(h)))


class Embedding(nn.Module):
    def __init__(self, v, d, n):
        super().__init__()
        self.token_embedding = nn.Embedding(v, d)
        self.position_embedding = nn.Module()
        self.position_embedding.register_buffer("pos_enc", decoder_pos_enc(n, d))
        self.layer_norm = nn.LayerNorm(d)

    def forward(self, ids):
        return self.layer_norm(self.token_embedding(ids) + self.position_embedding.pos_enc[:ids.shape[1]])


class TransfDecoder(nn.Module):
    def __init__(self, dm):
        super().__init__()
        d = dm["dec_hidden"]
        self._embedding = Embedding(dm["vocab"], d, dm["dec_max_len"])
        self._decoder = nn.Module()
        self._decoder.layers = nn.ModuleList(DecoderLayer(d, dm["dec_heads"], dm["dec_inner"], dm["dropout"])
                                             for _ in range(dm["dec_layers"]))
        self._decoder.final_layer_norm = nn.LayerNorm(d)


class Head(nn.Module):
    def __init__(self, d, v):
        super().__init__()
        self.mlp = nn.Module()
        self.mlp.layer0 = nn.Linear(d, v)


class CohereAsr(nn.Module):
    def __init__(self, dims=None):
        super().__init__()
        self.dims = dm = dict(DEFAULT_DIMS, **(dims or {}))
        self.preprocessor = nn.Module()
        self.preprocessor.featurizer = Featurizer()
        self.encoder = Encoder(dm)
        self.encoder_decoder_proj = nn.Linear(dm["d_model"], dm["dec_hidden"])
        self.transf_decoder = TransfDecoder(dm)
        self.log_softmax = Head(dm["dec_hidden"], dm["vocab"])
        self.aux_ctc = nn.Linear(dm["d_model"], dm["vocab"])   # training only (blank = id 0)
        # Transformer init for the decoder side (upstream use_transformer_init), tied classifier.
        for name, p in self.named_parameters():
            if name.startswith(("transf_decoder", "log_softmax")) and p.dim() == 2:
                nn.init.normal_(p, 0.0, 0.02)
        self.log_softmax.mlp.layer0.weight = self.transf_decoder._embedding.token_embedding.weight

    def encode(self, feat, t_valid):
        x, n3 = self.encoder(feat, t_valid)
        return x, self.encoder_decoder_proj(x), n3

    def align_from(self):
        """The first decoder layer whose cross-attention gives word times (the engine's choice:
        the top half of the layers)."""
        return self.dims["dec_layers"] // 2

    def decode(self, ids, mem, n3, attn=None):
        """ids [B,S] -> log-probs [B,S,V] (teacher forcing / full-prefix recompute). ATTN, a list,
        receives the cross-attention weights of the aligning layers."""
        S, Tm = ids.shape[1], mem.shape[1]
        self_bias = torch.full((S, S), float("-inf")).triu(1)
        cross_bias = torch.zeros(ids.shape[0], 1, 1, Tm).masked_fill(
            (torch.arange(Tm)[None] >= n3.clamp(min=1)[:, None])[:, None, None], -1e9)
        h = self.transf_decoder._embedding(ids)
        for i, layer in enumerate(self.transf_decoder._decoder.layers):
            h = layer(h, mem, self_bias, cross_bias, attn if i >= self.align_from() else None)
        h = self.transf_decoder._decoder.final_layer_norm(h)
        return F.log_softmax(self.log_softmax.mlp.layer0(h), -1)

    def export_state(self):
        """The upstream tensor set: state_dict without the training-only tensors."""
        return {k: v for k, v in self.state_dict().items() if not k.startswith(EXPORT_SKIP)}

    @torch.no_grad()
    def memory(self, wav, lengths):
        """Waveforms [B, L] -> what the decoder attends to: (mem [B, T, dec_hidden], valid frames n3)."""
        feat, tv = self.preprocessor.featurizer(wav, lengths)
        _, mem, n3 = self.encode(feat, tv)
        return mem, n3

    @torch.no_grad()
    def greedy(self, wav, lengths, prompt, eos, max_new=64):
        """Batched greedy decoding (full recompute per step); returns lists of ids."""
        mem, n3 = self.memory(wav, lengths)
        B = wav.shape[0]
        ids = torch.tensor([prompt] * B)
        done = torch.zeros(B, dtype=torch.bool)
        out = [[] for _ in range(B)]
        for _ in range(max_new):
            nxt = self.decode(ids, mem, n3)[:, -1].argmax(-1)
            for b in range(B):
                if not done[b]:
                    if int(nxt[b]) == eos:
                        done[b] = True
                    else:
                        out[b].append(int(nxt[b]))
            if bool(done.all()):
                break
            ids = torch.cat([ids, nxt[:, None]], 1)
        return out


def n_params(state):
    return sum(v.numel() for k, v in state.items() if v.dtype.is_floating_point)
